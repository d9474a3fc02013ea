/**
 * The events of a backup's outcome (spec 6.1): databaseBackup, written by backup and verify runs
 * (backups/runs.ts) in the transaction that settles them, and volumeBackup, for volume backups
 * to write the same way once they exist. The outbox delivers them to the channels whose toggle
 * for the kind is on, as every other event.
 */
import type { Db } from "../db/database.ts";
import { recordEvent } from "../deployments/events.ts";

export interface BackupOutcome {
  kind: "databaseBackup" | "volumeBackup" | "platformBackup";
  organizationId: string;
  /** The backed-up service's name (`applicationName` of the notice). */
  serviceName: string;
  /** The service's project, environment and id (DeploymentTarget.eventService). */
  eventService?: Record<string, string> | undefined;
  ok: boolean;
  message: string;
  /** Further fields of `data` (backupId, backupFile, ...). */
  details?: Record<string, string>;
}

export function recordBackupEvent(db: Db, outcome: BackupOutcome, now: Date): Promise<void> {
  return recordEvent(
    db,
    {
      organizationId: outcome.organizationId,
      kind: outcome.kind,
      applicationId: null,
      payload: {
        ...outcome.eventService,
        ...outcome.details,
        applicationName: outcome.serviceName,
        status: outcome.ok ? "success" : "error",
        message: outcome.message,
      },
    },
    now,
  );
}
