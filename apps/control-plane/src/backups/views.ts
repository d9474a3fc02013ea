/** A backup as the API answers it: its database's id under its kind's key, credentials masked. */
import type { z } from "zod";
import type { ServiceContext } from "../context.ts";
import { type backupSchema, idKeyOf, kindIdKeys, lastRuns, type OwnedBackup } from "./backups.ts";
import { maskedCredentials } from "./compose-credentials.ts";
import { findDestination, toDestinationView } from "./destinations.ts";
import { WEB_SERVER } from "./web-server-runs.ts";

export async function toBackupView(
  ctx: ServiceContext,
  backup: OwnedBackup,
): Promise<z.infer<typeof backupSchema>> {
  const destination = await findDestination(ctx.db, backup.organizationId, backup.destinationId);
  const ids = Object.fromEntries(kindIdKeys.map((key) => [key, null])) as Record<
    (typeof kindIdKeys)[number],
    string | null
  >;
  if (backup.databaseType !== WEB_SERVER && backup.databaseId) {
    ids[idKeyOf(backup.databaseType)] = backup.databaseId;
  }
  const { organizationId: _organization, databaseId: _database, metadata, ...fields } = backup;
  return {
    ...fields,
    ...ids,
    metadata: maskedCredentials(metadata as Record<string, unknown> | null),
    destination: toDestinationView(destination!),
    ...(await lastRuns(ctx.db, backup.backupId)),
  };
}
