/**
 * Docker cleanup (settings.clean*): prunes stopped containers, unused images (dangling or not)
 * and unused volumes through the Engine's prune endpoints, and the build cache, and adds up
 * what Docker reports as freed. The label filters decide whose objects go: one organization's
 * (platform.managed=true and platform.organization=<id>), or, for the instance administrator's
 * whole-engine cleanup, everything unused except the platform's own (platform.internal).
 * Only unused objects are touched: Docker's prune never removes a running container or an
 * image or volume a container still uses. Images kept for rollbacks (platform-rollback/...) stay.
 */
import {
  type CleanDockerCommand,
  type DockerCleanupResult,
  ROLLBACK_IMAGE_REPOSITORY_PREFIX,
} from "@platform/agent-protocol";
import { INTERNAL_LABEL, MANAGED_LABEL, ORGANIZATION_LABEL } from "@platform/ownership";
import type Docker from "dockerode";
import { CommandError } from "../command-error.ts";
import { engineMessage } from "./engine.ts";

type Filters = Record<string, string[]>;

/** The label filters of a cleanup; throws INVALID_ARGUMENT when the scope is not exactly one. */
export function cleanupFilters(command: CleanDockerCommand): Filters {
  const organizationId = command.organizationId ?? "";
  if (command.wholeEngine && organizationId) {
    throw new CommandError(
      "INVALID_ARGUMENT",
      "a cleanup is for one organization or the whole engine, not both",
    );
  }
  // One `label!` value only: Docker excludes an object when it carries every value listed.
  if (command.wholeEngine) return { "label!": [INTERNAL_LABEL] };
  if (!/^[a-zA-Z0-9_-]{1,64}$/.test(organizationId)) {
    throw new CommandError("INVALID_ARGUMENT", "a cleanup needs the organization whose objects it removes");
  }
  if (command.buildCache) {
    throw new CommandError(
      "INVALID_ARGUMENT",
      "the build cache has no owner: only a whole-engine cleanup clears it",
    );
  }
  return { label: [`${MANAGED_LABEL}=true`, `${ORGANIZATION_LABEL}=${organizationId}`] };
}

/** API 1.42 made volume prune skip named volumes unless `all=true` (older engines refuse that filter). */
async function volumeFilters(docker: Docker, filters: Filters): Promise<Filters> {
  const { ApiVersion } = await docker.version();
  const [major = 0, minor = 0] = String(ApiVersion).split(".").map(Number);
  return major > 1 || minor >= 42 ? { ...filters, all: ["true"] } : filters;
}

/** Prunes the whole build cache (unused entries too); answers the bytes freed. */
export async function pruneBuildCache(docker: Docker): Promise<number> {
  // dockerode's pruneBuilder sends no query: `all` (unused cache too, not only dangling) is set here.
  const result = await new Promise<{ SpaceReclaimed?: number }>((resolve, reject) =>
    docker.modem.dial(
      {
        path: "/build/prune?",
        method: "POST",
        options: { all: true },
        statusCodes: { 200: true, 500: "server error" },
      },
      (error: unknown, data: unknown) =>
        error ? reject(error) : resolve((data ?? {}) as { SpaceReclaimed?: number }),
    ),
  );
  return result.SpaceReclaimed ?? 0;
}

/** Images tagged platform-rollback/...: kept for their rollback until the control plane untags them. */
async function keptRollbackImageIds(docker: Docker): Promise<Set<string>> {
  const images = await docker.listImages();
  return new Set(
    images
      .filter((image) => image.RepoTags?.some((tag) => tag.startsWith(ROLLBACK_IMAGE_REPOSITORY_PREFIX)))
      .map((image) => image.Id),
  );
}

/**
 * What an image prune does (every image no container uses goes, whatever its tags), leaving the
 * kept rollback images alone: Docker's prune filters cannot name tags. The bytes are the images'
 * sizes (layers shared with a kept image are counted though they stay).
 */
async function removeUnusedImages(
  docker: Docker,
  filters: Filters,
  kept: Set<string>,
): Promise<{ count: number; bytes: number }> {
  // The image list takes `label` filters only: `label!` (key or key=value) is applied here.
  const { "label!": excluded = [], ...listFilters } = filters;
  const carries = (labels: Record<string, string> | null | undefined, filter: string) => {
    const [key, value] = filter.split("=", 2) as [string, string | undefined];
    return labels?.[key] !== undefined && (value === undefined || labels[key] === value);
  };
  const candidates = (await docker.listImages({ filters: JSON.stringify(listFilters) })).filter(
    (image) => excluded.length === 0 || !excluded.every((filter) => carries(image.Labels, filter)),
  );
  const used = new Set((await docker.listContainers({ all: true })).map((container) => container.ImageID));
  let count = 0;
  let bytes = 0;
  for (const image of candidates) {
    if (used.has(image.Id) || kept.has(image.Id)) continue;
    try {
      await docker.getImage(image.Id).remove({ force: true });
      count++;
      bytes += image.Size ?? 0;
    } catch {
      // Used meanwhile, or the parent of another image: prune leaves these too.
    }
  }
  return { count, bytes };
}

export async function cleanDocker(docker: Docker, command: CleanDockerCommand): Promise<DockerCleanupResult> {
  const filters = cleanupFilters(command);
  const result: DockerCleanupResult = {
    reclaimedBytes: 0,
    containersDeleted: 0,
    imagesDeleted: 0,
    volumesDeleted: 0,
    buildCacheReclaimedBytes: 0,
  };
  try {
    // Containers first: an image or volume only becomes unused once its stopped containers are gone.
    if (command.containers) {
      const pruned = await docker.pruneContainers({ filters: JSON.stringify(filters) });
      result.containersDeleted = pruned.ContainersDeleted?.length ?? 0;
      result.reclaimedBytes += pruned.SpaceReclaimed ?? 0;
    }
    if (command.images) {
      const kept = await keptRollbackImageIds(docker);
      if (kept.size === 0) {
        const pruned = await docker.pruneImages({
          filters: JSON.stringify({ ...filters, dangling: ["false"] }),
        });
        result.imagesDeleted = pruned.ImagesDeleted?.length ?? 0;
        result.reclaimedBytes += pruned.SpaceReclaimed ?? 0;
      } else {
        const removed = await removeUnusedImages(docker, filters, kept);
        result.imagesDeleted = removed.count;
        result.reclaimedBytes += removed.bytes;
      }
    }
    if (command.volumes) {
      const pruned = await docker.pruneVolumes({
        filters: JSON.stringify(await volumeFilters(docker, filters)),
      });
      result.volumesDeleted = pruned.VolumesDeleted?.length ?? 0;
      result.reclaimedBytes += pruned.SpaceReclaimed ?? 0;
    }
    if (command.buildCache) {
      result.buildCacheReclaimedBytes = await pruneBuildCache(docker);
      result.reclaimedBytes += result.buildCacheReclaimedBytes;
    }
  } catch (error) {
    throw new CommandError("FAILED", `the Docker cleanup failed: ${engineMessage(error)}`);
  }
  return result;
}
