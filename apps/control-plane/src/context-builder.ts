/**
 * Builds the service context from the configuration: opens and migrates the database, loads
 * (or creates once) the master secret, and sets up the logger.
 */
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import pino, { type Logger } from "pino";
import { type AgentHubOptions, startAgentHub } from "./agents/agent-hub.ts";
import {
  APPLICATION_DETAIL_CHANNEL,
  ApplicationDetailCache,
  tablesNotifyingApplicationDetails,
} from "./applications/detail-cache.ts";
import { CALLER_CHANNEL, CallerCache } from "./auth/caller-cache.ts";
import { BackupSchedule } from "./backups/schedule.ts";
import type { Config } from "./config.ts";
import type { ServiceContext } from "./context.ts";
import { randomToken } from "./crypto/ids.ts";
import { deriveKey, SecretBox } from "./crypto/secret-box.ts";
import { type DatabaseTarget, migrateToLatest, openDatabase } from "./db/database.ts";
import { createDeploymentQueue, type DeploymentQueueOptions } from "./deployments/queue.ts";
import { Reconciler } from "./deployments/reconcile.ts";
import { registerFeatures } from "./features.ts";
import { DAILY_CLEANUP_PATTERN, DockerCleanupSchedule } from "./maintenance/cleanup-schedule.ts";
import { LogCleanupSchedule } from "./maintenance/log-cleanup.ts";
import { recordThresholdEvents } from "./monitoring/monitoring-config.ts";
import { NotificationOutbox, type OutboxOptions } from "./notifications/outbox.ts";
import { instanceIdOf, markStarted, markStopped, recordAgentRestarts } from "./notifications/restarts.ts";
import { PROJECT_TREE_CHANNEL, ProjectTreeCache, tablesNotifyingTrees } from "./projects/tree-cache.ts";
import { installLocalProxy } from "./proxy/proxy-service.ts";
import { ScheduleCron } from "./schedules/cron.ts";

/** Field names whose values never reach a log line. */
export const REDACTED_LOG_PATHS = [
  "password",
  "*.password",
  "token",
  "*.token",
  "key",
  "*.key",
  "authorization",
  "*.authorization",
  "headers.authorization",
  'headers["x-api-key"]',
  "secret",
  "*.secret",
  // S3's error answers name the access key id the request was signed with (err.AWSAccessKeyId).
  "*.AWSAccessKeyId",
];

export function createLogger(level: Config["logLevel"]): Logger {
  return pino({ level, redact: { paths: REDACTED_LOG_PATHS, censor: "[redacted]" } });
}

/** PLATFORM_SECRET_KEY, or a key generated on first start and kept in the data directory. */
export function resolveMasterSecret(config: Config): string {
  if (config.secretKey) return config.secretKey;
  const file = path.resolve(config.dataDir, "secret.key");
  if (existsSync(file)) return readFileSync(file, "utf8").trim();
  mkdirSync(config.dataDir, { recursive: true });
  const secret = randomToken(32);
  writeFileSync(file, `${secret}\n`, { mode: 0o600, flag: "wx" });
  chmodSync(file, 0o600);
  return secret;
}

export interface RunningContext {
  ctx: ServiceContext;
  close(): Promise<void>;
}

export async function buildServiceContext(
  config: Config,
  options: {
    logger?: Logger;
    database?: DatabaseTarget;
    agents?: AgentHubOptions;
    deployments?: DeploymentQueueOptions;
    notifications?: OutboxOptions;
  } = {},
): Promise<RunningContext> {
  registerFeatures();
  const logger = options.logger ?? createLogger(config.logLevel);
  const target: DatabaseTarget =
    options.database ??
    (config.databaseUrl
      ? { kind: "postgres", url: config.databaseUrl }
      : { kind: "embedded", dataDir: config.dataDir });
  const database = await openDatabase(target, {
    onConnectionError: (error) =>
      logger.warn({ err: error }, "database connection lost; the next query opens a new one"),
  });
  try {
    await migrateToLatest(database.db);
  } catch (error) {
    await database.close();
    throw error;
  }
  const masterSecret = resolveMasterSecret(config);
  const now = () => new Date();
  // Reads ctx.now at each hit, so a test that moves the clock moves the cache's too.
  const callers = new CallerCache(() => ctx.now());
  const projectTrees = new ProjectTreeCache();
  const applicationDetails = new ApplicationDetailCache();
  try {
    callers.attach(await database.listen(CALLER_CHANNEL, () => callers.invalidate()));
    projectTrees.attach(
      await database.listen(PROJECT_TREE_CHANNEL, () => projectTrees.invalidate()),
      await tablesNotifyingTrees(database.db),
    );
    applicationDetails.attach(
      await database.listen(APPLICATION_DETAIL_CHANNEL, () => applicationDetails.invalidate()),
      await tablesNotifyingApplicationDetails(database.db),
    );
  } catch (error) {
    await database.close();
    throw error;
  }
  let agents: ServiceContext["agents"];
  try {
    agents = await startAgentHub(config, { db: database.db, logger, now }, options.agents);
  } catch (error) {
    await database.close();
    throw error;
  }
  const instanceId = instanceIdOf(config);
  const ctx: ServiceContext = {
    config,
    db: database.db,
    databaseKind: database.kind,
    logger,
    secrets: new SecretBox(masterSecret),
    callers,
    projectTrees,
    applicationDetails,
    sessionSigningKey: new Uint8Array(deriveKey(masterSecret, "platform/session-jwt/v1")),
    agents,
    deployments: createDeploymentQueue(config, options.deployments),
    dockerCleanup: new DockerCleanupSchedule(
      { db: database.db, agents, logger, now },
      DAILY_CLEANUP_PATTERN,
      instanceId,
    ),
    logCleanup: new LogCleanupSchedule({ db: database.db, agents, logger, now }, instanceId),
    notifications: undefined as unknown as NotificationOutbox,
    backups: new BackupSchedule(),
    schedules: new ScheduleCron(),
    now,
  };
  ctx.notifications = new NotificationOutbox(ctx, instanceId, options.notifications);
  try {
    await ctx.deployments.start(ctx);
  } catch (error) {
    await agents.close();
    await database.close();
    throw error;
  }
  const reconciler = new Reconciler(ctx);
  reconciler.start();
  await ctx.dockerCleanup
    .start()
    .catch((error) => logger.warn({ err: error }, "the daily Docker cleanups were not scheduled"));
  await ctx.logCleanup
    .start()
    .catch((error) => logger.warn({ err: error }, "the access log cleanup was not scheduled"));
  await ctx.backups
    .start(ctx, instanceId)
    .catch((error) => logger.warn({ err: error }, "the scheduled backups were not scheduled"));
  await ctx.schedules
    .start(ctx, instanceId)
    .catch((error) => logger.warn({ err: error }, "the scheduled jobs were not scheduled"));
  // A change made through any control plane on the database reschedules every one's croner jobs.
  const cronChanges = await database
    .listen(CRON_CHANNEL, () => {
      // Also called when the listener reconnects, possibly while the database is still away.
      const failed = (error: unknown) =>
        logger.warn({ err: error }, "rescheduling after a change made on another control plane failed");
      ctx.backups.reschedule().catch(failed);
      ctx.schedules.reschedule().catch(failed);
      ctx.dockerCleanup.reload().catch(failed);
      ctx.logCleanup.reload().catch(failed);
    })
    .catch((error) => {
      logger.warn({ err: error }, "changes of schedules made on other control planes will not be followed");
      return undefined;
    });
  agents.onAgentBack((serverId) => void reconciler.reconcile(serverId).catch(() => {}));
  recordThresholdEvents(ctx);
  recordAgentRestarts(ctx);
  await markStarted(ctx, instanceId).catch((error) =>
    logger.warn({ err: error }, "the start of this control plane was not recorded"),
  );
  await ctx.notifications.start();
  const localProxy =
    config.installLocalProxy && config.edition === "self-hosted" && options.agents?.localAgent !== false
      ? installLocalProxy(ctx)
      : Promise.resolve();
  return {
    ctx,
    close: async () => {
      // Running deployments are stopped first: stopping them needs the agents.
      await reconciler.close();
      await ctx.notifications.close();
      await ctx.dockerCleanup.close();
      await ctx.logCleanup.close();
      await cronChanges?.close();
      ctx.backups.close();
      ctx.schedules.close();
      await ctx.deployments.close();
      await localProxy;
      // With NATS away a drain never ends: the stop is bounded (the deployments are stored).
      await untilOrAfter(agents.close(), AGENTS_CLOSE_WAIT_MS);
      await markStopped(ctx, instanceId);
      await database.close();
    },
  };
}

/** The NOTIFY channel of changes to what croner schedules (migration 20261201-50-ha). */
const CRON_CHANNEL = "platform_cron";

/** How long a stop waits for the agents' NATS connection to close before it goes on. */
const AGENTS_CLOSE_WAIT_MS = 3000;

/** Waits for `promise`, at most `ms` (a failure is logged by whoever owns it, not here). */
async function untilOrAfter(promise: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    promise.catch(() => {}),
    new Promise((resolve) => {
      timer = setTimeout(resolve, ms);
    }),
  ]);
  clearTimeout(timer);
}
