/**
 * The daily Docker cleanup (settings.updateDockerCleanup): one croner job per server whose flag
 * is on (servers.enable_docker_cleanup; this machine's in the web server settings row). The
 * flags are rows, so at every start the jobs are made again from them and a restart of the
 * control plane loses no schedule. Each run cleans the server as cleanAll does for the
 * server's organization (maintenance/docker-cleanup.ts) and records a dockerCleanup event
 * (spec 6.1) for notification delivery, whether it succeeded or failed.
 */
import { Cron } from "croner";
import { LOCAL_SERVER_ID } from "../agents/hub.ts";
import type { ServiceContext } from "../context.ts";
import { claimTick, tickOf } from "../db/cron-ticks.ts";
import { recordEvent } from "../deployments/events.ts";
import { instanceOrganizationId } from "../organizations/instance.ts";
import { CLEANUP_KINDS, cleanServer } from "./docker-cleanup.ts";

/**
 * Stores the daily cleanup flag of `serverId` (this machine's, or a server already found in
 * `organizationId`) and schedules or unschedules its job.
 */
export async function setDockerCleanup(
  ctx: Pick<ServiceContext, "db" | "dockerCleanup">,
  organizationId: string,
  serverId: string,
  enabled: boolean,
): Promise<void> {
  if (serverId === LOCAL_SERVER_ID) {
    await ctx.db
      .updateTable("webServerSettings")
      .set({ enableDockerCleanup: enabled, updatedAt: new Date().toISOString() })
      .where("id", "=", 1)
      .execute();
  } else {
    await ctx.db
      .updateTable("servers")
      .set({ enableDockerCleanup: enabled })
      .where("serverId", "=", serverId)
      .where("organizationId", "=", organizationId)
      .execute();
  }
  ctx.dockerCleanup.set(serverId, enabled);
}

/** Every day at midnight (server time of the control plane), as Dokploy schedules it. */
export const DAILY_CLEANUP_PATTERN = "0 0 * * *";

type CleanupContext = Pick<ServiceContext, "db" | "agents" | "logger" | "now">;

export class DockerCleanupSchedule {
  private readonly jobs = new Map<string, Cron>();
  private readonly running = new Set<Promise<void>>();

  constructor(
    private readonly ctx: CleanupContext,
    private readonly pattern = DAILY_CLEANUP_PATTERN,
    /** This control plane's instance id: of several on one database, one claims each tick. */
    private readonly owner = "",
  ) {}

  /** Makes the jobs again from the flags (changed through another control plane). */
  async reload(): Promise<void> {
    for (const job of this.jobs.values()) job.stop();
    this.jobs.clear();
    await this.start().catch((error) =>
      this.ctx.logger.warn({ err: error }, "the daily Docker cleanups were not rescheduled"),
    );
  }

  /** Schedules every server whose flag is on. */
  async start(): Promise<void> {
    const { db } = this.ctx;
    const settings = await db
      .selectFrom("webServerSettings")
      .select("enableDockerCleanup")
      .executeTakeFirst();
    if (settings?.enableDockerCleanup) this.set(LOCAL_SERVER_ID, true);
    const servers = await db
      .selectFrom("servers")
      .select("serverId")
      .where("enableDockerCleanup", "=", true)
      .execute();
    for (const { serverId } of servers) this.set(serverId, true);
  }

  /** Turns the job of `serverId` on or off (the flag itself is the caller's to store). */
  set(serverId: string, enabled: boolean): void {
    this.jobs.get(serverId)?.stop();
    this.jobs.delete(serverId);
    if (!enabled) return;
    const job = new Cron(this.pattern, { protect: true }, () => {
      const run: Promise<void> = this.claim(serverId)
        .then(async (mine) => {
          if (mine) await this.run(serverId);
        })
        .finally(() => this.running.delete(run));
      this.running.add(run);
      return run;
    });
    this.jobs.set(serverId, job);
  }

  /** Whether this control plane runs this tick of the server's cleanup (db/cron-ticks.ts). */
  private async claim(serverId: string): Promise<boolean> {
    const { db, logger, now } = this.ctx;
    return claimTick(db, `docker cleanup:${serverId}`, tickOf(now()), this.owner).catch((error) => {
      logger.error({ err: error, serverId }, "Docker cleanup tick not claimed: not run");
      return false;
    });
  }

  /** When the job of `serverId` runs next; null when it has none. */
  nextRun(serverId: string): Date | null {
    return this.jobs.get(serverId)?.nextRun() ?? null;
  }

  /** One scheduled cleanup of `serverId`; failures become an event with status error, never a throw. */
  async run(serverId: string): Promise<void> {
    const { db, logger } = this.ctx;
    const organizationId =
      serverId === LOCAL_SERVER_ID
        ? await instanceOrganizationId(db)
        : (
            await db
              .selectFrom("servers")
              .select("organizationId")
              .where("serverId", "=", serverId)
              .executeTakeFirst()
          )?.organizationId;
    if (!organizationId) {
      this.set(serverId, false);
      return;
    }
    const where = serverId === LOCAL_SERVER_ID ? "this machine" : `server ${serverId}`;
    let payload: { applicationName: string; status: string; message: string };
    try {
      const report = await cleanServer(this.ctx, organizationId, serverId, CLEANUP_KINDS.cleanAll);
      payload = {
        applicationName: "",
        status: "success",
        message:
          `Docker cleanup of ${where}: ${report.reclaimedBytes} bytes reclaimed ` +
          `(${report.containersDeleted} containers, ${report.imagesDeleted} images, ${report.volumesDeleted} volumes)`,
      };
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      logger.warn({ serverId, reason }, "the scheduled Docker cleanup failed");
      payload = {
        applicationName: "",
        status: "error",
        message: `Docker cleanup of ${where} failed: ${reason}`,
      };
    }
    await recordEvent(
      db,
      { organizationId, kind: "dockerCleanup", applicationId: null, payload },
      this.ctx.now(),
    ).catch((error) => logger.warn({ err: error, serverId }, "the dockerCleanup event was not recorded"));
  }

  /** Stops every job and waits for runs in progress. */
  async close(): Promise<void> {
    for (const job of this.jobs.values()) job.stop();
    this.jobs.clear();
    await Promise.allSettled([...this.running]);
  }
}
