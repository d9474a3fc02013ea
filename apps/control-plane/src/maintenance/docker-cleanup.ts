/**
 * Docker cleanup of a server (settings.cleanUnusedImages, cleanUnusedVolumes,
 * cleanStoppedContainers, cleanDockerBuilder, cleanAll) through its agent. Organizations share
 * Docker engines, so what a cleanup may remove follows the organization that owns the server:
 * the instance organization's servers (this machine among them) are cleaned whole, as Dokploy
 * does, except the platform's own objects; any other organization's cleanup removes only the
 * objects labelled with its id (ownership.ts), and never the build cache, which has no owner.
 */
import type { DockerCleanupResult } from "@platform/agent-protocol";
import { z } from "zod";
import { callAgent } from "../agents/errors.ts";
import { LOCAL_SERVER_ID } from "../agents/hub.ts";
import type { ServiceContext } from "../context.ts";
import { forbidden } from "../errors.ts";
import { isInstanceOrganization } from "../organizations/instance.ts";

export type CleanupKind = "containers" | "images" | "volumes" | "buildCache";

/** What each procedure removes; cleanAll is Docker's system prune with volumes and the build cache. */
export const CLEANUP_KINDS = {
  cleanUnusedImages: ["images"],
  cleanUnusedVolumes: ["volumes"],
  cleanStoppedContainers: ["containers"],
  cleanDockerBuilder: ["buildCache"],
  cleanAll: ["containers", "images", "volumes", "buildCache"],
  // Dokploy's `docker system prune --volumes` then `docker builder prune --all`: the same objects.
  cleanDockerPrune: ["containers", "images", "volumes", "buildCache"],
} as const satisfies Record<string, readonly CleanupKind[]>;

/** Prunes of a large engine take a while (image layers, volume sizes). */
const CLEANUP_TIMEOUT_MS = 5 * 60_000;

export const cleanupReportSchema = z.object({
  success: z.literal(true),
  /** Every byte freed, build cache included. */
  reclaimedBytes: z.number().int().nonnegative(),
  containersDeleted: z.number().int().nonnegative(),
  imagesDeleted: z.number().int().nonnegative(),
  volumesDeleted: z.number().int().nonnegative(),
  buildCacheReclaimedBytes: z.number().int().nonnegative(),
  /** `server`: every unused object of the engine; `organization`: only the caller's own. */
  scope: z.enum(["server", "organization"]),
});
export type CleanupReport = z.infer<typeof cleanupReportSchema>;

/**
 * Cleans `serverId` (already checked to be one the organization may act on) for
 * `organizationId`. The build cache of a shared engine is refused (403) to other organizations;
 * in cleanAll it is left out for them.
 */
export async function cleanServer(
  ctx: Pick<ServiceContext, "db" | "agents" | "logger">,
  organizationId: string,
  serverId: string,
  kinds: readonly CleanupKind[],
): Promise<CleanupReport> {
  const wholeServer = serverId === LOCAL_SERVER_ID || (await isInstanceOrganization(ctx.db, organizationId));
  let wanted = kinds;
  if (!wholeServer) {
    wanted = kinds.filter((kind) => kind !== "buildCache");
    if (wanted.length === 0) {
      throw forbidden(
        "The build cache is shared by every organization on the Docker engine and has no owner: " +
          "only the instance administrator clears it",
      );
    }
  }
  const result: DockerCleanupResult = await callAgent(
    serverId,
    () =>
      ctx.agents.client.cleanDocker(
        serverId,
        {
          containers: wanted.includes("containers"),
          images: wanted.includes("images"),
          volumes: wanted.includes("volumes"),
          buildCache: wanted.includes("buildCache"),
          ...(wholeServer ? { wholeEngine: true } : { organizationId }),
        },
        CLEANUP_TIMEOUT_MS,
      ),
    ctx.logger,
  );
  return { success: true, ...result, scope: wholeServer ? "server" : "organization" };
}
