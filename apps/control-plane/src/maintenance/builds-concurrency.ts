/**
 * settings.updateBuildsConcurrency (this machine) and server.updateBuildsConcurrency (a server of
 * the caller's organization): how many deployments build on that server at once. The queue reads
 * the stored number whenever a deployment is to start (deployments/build-slots.ts); a change
 * wakes the deployments this control plane has waiting for that server.
 */
import { z } from "zod";
import { LOCAL_SERVER_ID } from "../agents/hub.ts";
import type { ServiceContext } from "../context.ts";
import { MAX_BUILDS_CONCURRENCY, MIN_BUILDS_CONCURRENCY } from "../deployments/build-slots.ts";

export const buildsConcurrencySchema = z
  .number()
  .int()
  .min(MIN_BUILDS_CONCURRENCY)
  .max(MAX_BUILDS_CONCURRENCY);

/** Stores the limit of `serverId` (this machine's, or a server already found in `organizationId`). */
export async function setBuildsConcurrency(
  ctx: Pick<ServiceContext, "db" | "deployments">,
  organizationId: string,
  serverId: string,
  buildsConcurrency: number,
): Promise<void> {
  if (serverId === LOCAL_SERVER_ID) {
    await ctx.db
      .updateTable("webServerSettings")
      .set({ buildsConcurrency, updatedAt: new Date().toISOString() })
      .where("id", "=", 1)
      .execute();
  } else {
    await ctx.db
      .updateTable("servers")
      .set({ buildsConcurrency })
      .where("serverId", "=", serverId)
      .where("organizationId", "=", organizationId)
      .execute();
  }
  ctx.deployments.worker.buildSlots.wake(serverId);
}
