/**
 * Images of the engine (dockerImage.*) and its disk usage (dockerDiskUsage.*), within the
 * caller's scope. Images the platform builds carry their owner's labels; an image pulled for a
 * service (a docker-source application, a database, a stack) carries none. So an image is a
 * tenant's when it is labelled for the tenant's organization or when a container labelled for
 * it runs (or ran) from it; with includeUnmanaged (an administrator of the engine's owner) also
 * every image labelled for no organization. Images labelled for another organization, and the
 * platform's own, are never in a scope. An image outside the scope is NOT_FOUND.
 *
 * An image is removed only when no container outside the scope uses it: another organization's
 * container keeps it (FAILED_PRECONDITION), whatever `force` says.
 */
import type {
  ContainerScope,
  DiskUsage,
  DiskUsageCommand,
  DiskUsageItem,
  Image,
  ImageConfig,
  ImageList,
  ImageRemoved,
  InspectImageCommand,
  ListImagesCommand,
  RemoveImageCommand,
} from "@platform/agent-protocol";
import { isImageReference } from "@platform/names";
import { isInContainerScope, isPlatformInternal, ORGANIZATION_LABEL } from "@platform/ownership";
import type Docker from "dockerode";
import { HELPER_IMAGE } from "../backup/volume.ts";
import { CommandError } from "../command-error.ts";
import { engineMessage, engineStatus, systemDiskUsage } from "./engine.ts";
import { requireScope } from "./volumes.ts";

const IMAGE_ID_PATTERN = /^(sha256:)?[a-f0-9]{12,64}$/;

interface ImageFacts {
  id: string;
  labels: Record<string, string>;
  repoTags: string[];
}

interface ContainerFacts {
  imageId: string;
  labels: Record<string, string>;
  names: string[];
}

function isInternalImage(image: ImageFacts): boolean {
  return isPlatformInternal(image.labels) || image.repoTags.includes(HELPER_IMAGE);
}

/** Whether the image is within the scope, given the engine's containers. */
function imageInScope(image: ImageFacts, containers: ContainerFacts[], scope: ContainerScope): boolean {
  if (isInternalImage(image)) return false;
  const organization = image.labels[ORGANIZATION_LABEL];
  if (organization !== undefined) return organization === scope.organizationId;
  if (scope.includeUnmanaged) return true;
  return containers.some(
    (container) =>
      container.imageId === image.id && container.labels[ORGANIZATION_LABEL] === scope.organizationId,
  );
}

async function engineContainers(docker: Docker): Promise<ContainerFacts[]> {
  const infos = await docker.listContainers({ all: true });
  return infos.map((info) => ({
    imageId: info.ImageID ?? "",
    labels: info.Labels ?? {},
    names: (info.Names ?? []).map((name) => name.replace(/^\//, "")),
  }));
}

function checkReference(reference: string, what: string): string {
  if (
    !reference ||
    reference.length > 512 ||
    (!IMAGE_ID_PATTERN.test(reference) && !isImageReference(reference))
  ) {
    throw new CommandError("INVALID_ARGUMENT", `${what}: must be an image id or reference`);
  }
  return reference;
}

function notFound(reference: string): CommandError {
  // The engine's words for a missing image.
  return new CommandError("NOT_FOUND", `No such image: ${reference}`);
}

async function inspectInScope(docker: Docker, reference: string, scope: ContainerScope) {
  let info: Docker.ImageInspectInfo;
  try {
    info = await docker.getImage(reference).inspect();
  } catch (error) {
    if (engineStatus(error) === 404) throw notFound(reference);
    throw error;
  }
  const image: ImageFacts = {
    id: info.Id,
    labels: (info.Config?.Labels ?? {}) as Record<string, string>,
    repoTags: info.RepoTags ?? [],
  };
  const containers = await engineContainers(docker);
  if (!imageInScope(image, containers, scope)) throw notFound(reference);
  return { info, image, containers };
}

export async function listImages(docker: Docker, command: ListImagesCommand): Promise<ImageList> {
  const scope = requireScope(command.scope);
  const [infos, containers] = await Promise.all([
    docker.listImages({ all: false }),
    engineContainers(docker),
  ]);
  const images: Image[] = [];
  for (const info of infos) {
    const facts: ImageFacts = { id: info.Id, labels: info.Labels ?? {}, repoTags: info.RepoTags ?? [] };
    if (!imageInScope(facts, containers, scope)) continue;
    images.push({
      id: info.Id,
      repoTags: (info.RepoTags ?? []).filter((tag) => tag !== "<none>:<none>"),
      repoDigests: (info.RepoDigests ?? []).filter((digest) => digest !== "<none>@<none>"),
      createdUnix: info.Created ?? 0,
      sizeBytes: info.Size ?? 0,
      labels: info.Labels ?? {},
      containers: containers.filter((container) => container.imageId === info.Id).length,
    });
  }
  return { images };
}

export async function inspectImage(docker: Docker, command: InspectImageCommand): Promise<ImageConfig> {
  const scope = requireScope(command.scope);
  const reference = checkReference(command.imageRef, "imageRef");
  const { info } = await inspectInScope(docker, reference, scope);
  return { inspectJson: JSON.stringify(info) };
}

export async function removeImage(docker: Docker, command: RemoveImageCommand): Promise<ImageRemoved> {
  const scope = requireScope(command.scope);
  const reference = checkReference(command.reference, "reference");
  const { image, containers } = await inspectInScope(docker, reference, scope);
  const foreign = containers.filter(
    (container) =>
      container.imageId === image.id && !isInContainerScope(container.labels, container.names, scope),
  );
  if (foreign.length > 0) {
    throw new CommandError(
      "FAILED_PRECONDITION",
      "the image is used by containers that are not yours: it is kept",
    );
  }
  // A tag names the image checked above only while it is not moved: remove by id unless the
  // caller named one of the image's tags (then only that tag goes when the image has others).
  const target = image.repoTags.includes(reference) ? reference : image.id;
  try {
    const answer = (await docker.getImage(target).remove({ force: command.force })) as
      | { Untagged?: string; Deleted?: string }[]
      | undefined;
    return {
      untagged: (answer ?? []).flatMap((item) => (item.Untagged ? [item.Untagged] : [])),
      deleted: (answer ?? []).flatMap((item) => (item.Deleted ? [item.Deleted] : [])),
    };
  } catch (error) {
    if (engineStatus(error) === 409) {
      throw new CommandError("FAILED_PRECONDITION", `the image is in use: ${engineMessage(error)}`);
    }
    if (engineStatus(error) === 404) throw notFound(reference);
    throw error;
  }
}

// ---- disk usage ------------------------------------------------------------------------------

interface DfImage {
  Id: string;
  Size?: number;
  Containers?: number;
  Labels?: Record<string, string> | null;
  RepoTags?: string[] | null;
}
interface DfContainer {
  Id: string;
  Names?: string[];
  Labels?: Record<string, string> | null;
  SizeRw?: number;
  State?: string;
  ImageID?: string;
}
interface DfVolume {
  Name: string;
  Labels?: Record<string, string> | null;
  UsageData?: { Size?: number; RefCount?: number } | null;
}
interface DfBuildCache {
  ID: string;
  Type?: string;
  Description?: string;
  Size?: number;
  CreatedAt?: string;
  LastUsedAt?: string | null;
  UsageCount?: number;
  Shared?: boolean;
  InUse?: boolean;
}

function item(type: string, rows: { size: number; active: boolean; reclaimable: number }[]): DiskUsageItem {
  return {
    type,
    totalCount: rows.length,
    active: rows.filter((row) => row.active).length,
    sizeBytes: rows.reduce((sum, row) => sum + Math.max(row.size, 0), 0),
    reclaimableBytes: rows.reduce((sum, row) => sum + Math.max(row.reclaimable, 0), 0),
  };
}

const time = (value: string | null | undefined) => (value ? Date.parse(value) || 0 : 0);

export async function diskUsage(docker: Docker, command: DiskUsageCommand): Promise<DiskUsage> {
  const scope = requireScope(command.scope);
  const df = (await systemDiskUsage(docker)) as {
    Images?: DfImage[] | null;
    Containers?: DfContainer[] | null;
    Volumes?: DfVolume[] | null;
    BuildCache?: DfBuildCache[] | null;
  };
  const allContainers = df.Containers ?? [];
  const containerFacts: ContainerFacts[] = allContainers.map((container) => ({
    imageId: container.ImageID ?? "",
    labels: container.Labels ?? {},
    names: (container.Names ?? []).map((name) => name.replace(/^\//, "")),
  }));
  const images = (df.Images ?? []).filter((image) =>
    imageInScope(
      { id: image.Id, labels: image.Labels ?? {}, repoTags: image.RepoTags ?? [] },
      containerFacts,
      scope,
    ),
  );
  const containers = allContainers.filter((container, index) =>
    isInContainerScope(container.Labels ?? {}, containerFacts[index]?.names ?? [], scope),
  );
  const volumes = (df.Volumes ?? []).filter((volume) =>
    isInContainerScope(volume.Labels ?? {}, [volume.Name], scope),
  );
  const items = [
    item(
      "Images",
      images.map((image) => ({
        size: image.Size ?? 0,
        active: (image.Containers ?? 0) > 0,
        reclaimable: (image.Containers ?? 0) > 0 ? 0 : (image.Size ?? 0),
      })),
    ),
    item(
      "Containers",
      containers.map((container) => ({
        size: container.SizeRw ?? 0,
        active: container.State === "running",
        reclaimable: container.State === "running" ? 0 : (container.SizeRw ?? 0),
      })),
    ),
    item(
      "Local Volumes",
      volumes.map((volume) => ({
        size: volume.UsageData?.Size ?? 0,
        active: (volume.UsageData?.RefCount ?? 0) > 0,
        reclaimable: (volume.UsageData?.RefCount ?? 0) > 0 ? 0 : (volume.UsageData?.Size ?? 0),
      })),
    ),
  ];
  // The build cache carries no owner: only an administrator of the engine sees it.
  const cache = scope.includeUnmanaged ? (df.BuildCache ?? []) : [];
  if (scope.includeUnmanaged) {
    items.push(
      item(
        "Build Cache",
        cache.map((record) => ({
          size: record.Size ?? 0,
          active: record.InUse === true,
          reclaimable: record.InUse || record.Shared ? 0 : (record.Size ?? 0),
        })),
      ),
    );
  }
  return {
    items,
    buildCache: command.buildCache
      ? cache.map((record) => ({
          id: record.ID,
          type: record.Type ?? "",
          description: record.Description ?? "",
          sizeBytes: record.Size ?? 0,
          createdUnixMs: time(record.CreatedAt),
          lastUsedUnixMs: time(record.LastUsedAt),
          usageCount: record.UsageCount ?? 0,
          shared: record.Shared === true,
          inUse: record.InUse === true,
        }))
      : [],
  };
}
