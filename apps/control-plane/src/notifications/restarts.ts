/**
 * platformRestart (spec 6.1): a control plane that starts after an unclean stop (killed, crashed,
 * the machine lost power) records one for the instance organization; so does a server whose
 * agent is heard again after a silence (its machine or agent restarted), for the server's
 * organization. A clean stop marks the instance as stopped, so a deliberate restart is quiet.
 */
import type { ServiceContext } from "../context.ts";
import { recordEvent } from "../deployments/events.ts";
import { instanceOrganizationId } from "../organizations/instance.ts";

export { instanceIdOf } from "../config.ts";

/** Marks the instance as running; records platformRestart when its last run did not stop cleanly. */
export async function markStarted(ctx: ServiceContext, instanceId: string): Promise<boolean> {
  return ctx.db.transaction().execute(async (trx) => {
    const previous = await trx
      .selectFrom("controlPlaneRuns")
      .select("running")
      .where("instanceId", "=", instanceId)
      .forUpdate()
      .executeTakeFirst();
    await trx
      .insertInto("controlPlaneRuns")
      .values({ instanceId, running: true, startedAt: ctx.now().toISOString() })
      .onConflict((c) =>
        c.column("instanceId").doUpdateSet({ running: true, startedAt: ctx.now().toISOString() }),
      )
      .execute();
    if (!previous?.running) return false;
    const organizationId = await instanceOrganizationId(trx);
    if (!organizationId) return false;
    await recordEvent(
      trx,
      {
        organizationId,
        kind: "platformRestart",
        applicationId: null,
        payload: {
          applicationName: "Control plane",
          status: "alert",
          message: `The control plane ${instanceId} restarted after an unclean stop`,
        },
      },
      ctx.now(),
    );
    return true;
  });
}

export async function markStopped(ctx: ServiceContext, instanceId: string): Promise<void> {
  await ctx.db
    .updateTable("controlPlaneRuns")
    .set({ running: false })
    .where("instanceId", "=", instanceId)
    .execute()
    .catch(() => {});
}

/**
 * Records platformRestart for a server whose agent is heard again after a silence; the first
 * heartbeat of each server after this control plane started is not one (the agent did not stop).
 */
export function recordAgentRestarts(ctx: ServiceContext): void {
  const seen = new Set<string>();
  ctx.agents.onAgentBack((serverId) => {
    if (!seen.has(serverId)) {
      seen.add(serverId);
      return;
    }
    void (async () => {
      const server = await ctx.db
        .selectFrom("servers")
        .select(["organizationId", "name"])
        .where("serverId", "=", serverId)
        .executeTakeFirst();
      if (!server) return;
      await recordEvent(
        ctx.db,
        {
          organizationId: server.organizationId,
          kind: "platformRestart",
          applicationId: null,
          payload: {
            applicationName: server.name,
            status: "alert",
            message: `The agent of server ${server.name} is back after a silence (the server or its agent restarted)`,
            serverId,
          },
        },
        ctx.now(),
      );
    })().catch((error) => ctx.logger.warn({ err: error, serverId }, "platformRestart was not recorded"));
  });
}
