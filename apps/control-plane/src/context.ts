/**
 * The service context, built once at start and handed to every procedure: configuration,
 * database, logger and the crypto helpers. Tests build their own with a fresh database.
 */

import type { Logger } from "pino";
import type { AgentHub } from "./agents/hub.ts";
import type { ApplicationDetailCache } from "./applications/detail-cache.ts";
import type { CallerCache } from "./auth/caller-cache.ts";
import type { SessionCookies } from "./auth/cookie-session.ts";
import type { BackupSchedule } from "./backups/schedule.ts";
import type { Config } from "./config.ts";
import type { SecretBox } from "./crypto/secret-box.ts";
import type { Db } from "./db/database.ts";
import type { Role } from "./db/schema.ts";
import type { DeploymentQueue } from "./deployments/queue.ts";
import type { DockerCleanupSchedule } from "./maintenance/cleanup-schedule.ts";
import type { LogCleanupSchedule } from "./maintenance/log-cleanup.ts";
import type { NotificationOutbox } from "./notifications/outbox.ts";
import type { ProjectTreeCache } from "./projects/tree-cache.ts";
import type { ScheduleCron } from "./schedules/cron.ts";

export interface ServiceContext {
  config: Config;
  db: Db;
  databaseKind: "postgres" | "embedded";
  logger: Logger;
  secrets: SecretBox;
  /** Callers of recently seen credentials, emptied by every change on any instance (auth/caller-cache.ts). */
  callers: CallerCache;
  /** Each organization's project tree, emptied by every write to it on any instance (projects/tree-cache.ts). */
  projectTrees: ProjectTreeCache;
  /** application.one's answers, emptied by every write they read on any instance (applications/detail-cache.ts). */
  applicationDetails: ApplicationDetailCache;
  /** HMAC key for session JWTs, derived from the master secret. */
  sessionSigningKey: Uint8Array;
  /** The agents of the servers (and of this machine, LOCAL_SERVER_ID). */
  agents: AgentHub;
  /** The deployment queue and its worker (live logs, aborting running deployments). */
  deployments: DeploymentQueue;
  /** The daily Docker cleanup jobs (settings.updateDockerCleanup). */
  dockerCleanup: DockerCleanupSchedule;
  /** The scheduled cleanup of this machine's proxy access log (settings.updateLogCleanup). */
  logCleanup: LogCleanupSchedule;
  /** The notification outbox's dispatcher (notifications/outbox.ts). */
  notifications: NotificationOutbox;
  /** The scheduled database backups (backups/schedule.ts). */
  backups: BackupSchedule;
  /** The scheduled jobs (schedules/cron.ts). */
  schedules: ScheduleCron;
  now(): Date;
}

/** The parts of the platform a member reaches only when granted (user.assignPermissions). */
export type Feature = "docker" | "traefikFiles" | "api" | "sshKeys" | "gitProviders";

/** Who is calling, resolved from a session token or an API key, within one organization. */
export interface Caller {
  userId: string;
  email: string;
  organizationId: string;
  role: Role;
  canCreateProjects: boolean;
  canDeleteProjects: boolean;
  canAccessAuditLog: boolean;
  /** Dokploy's canAccessTo* flags of the membership; they bind members only (projects/permissions.ts). */
  features: Record<Feature, boolean>;
  credential: { kind: "session"; sessionId: string } | { kind: "apiKey"; apiKeyId: string };
}

export interface RequestContext {
  ctx: ServiceContext;
  requestId: string;
  logger: Logger;
  /** The authenticated caller; null only inside public procedures. */
  caller: Caller | null;
  /** The client's address (auth/client-address.ts); null for in-process requests. */
  clientAddress: string | null;
  /** Whether the request comes from this machine, not through a proxy (auth/client-address.ts). */
  fromLoopback: boolean;
  /** The dashboard's session cookies on this request's answer (auth/cookie-session.ts); absent in-process. */
  sessionCookies?: SessionCookies;
}
