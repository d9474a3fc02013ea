/**
 * user.getBackups: the control plane's own backups (databaseType web-server, Dokploy's web
 * server backups) whose destination belongs to the organization, oldest first.
 */
import type { Db } from "../db/database.ts";

export function listWebServerBackups(db: Db, organizationId: string) {
  return db
    .selectFrom("backups")
    .innerJoin("destinations", "destinations.destinationId", "backups.destinationId")
    .selectAll("backups")
    .select("destinations.organizationId")
    .where("destinations.organizationId", "=", organizationId)
    .where("backups.databaseType", "=", "web-server")
    .orderBy("backups.createdAt", "asc")
    .orderBy("backups.backupId", "asc")
    .execute();
}
