/**
 * Renaming an application (a new appName) or moving it to another server. Swarm cannot rename a
 * service, and a service left under the old name would keep running unowned by any row, so both
 * are refused (409 naming the field) once the application may have a service: it was deployed
 * (a deployment row exists) or its status is not idle. Before that, its Traefik file moves with
 * it (proxy/sync.ts moveApplicationProxy). A stored name the shared rule refuses (from before
 * the rule) never had a service of its own, so it can always be renamed away.
 */
import { isValidAppName } from "@platform/names";
import type { Db } from "../db/database.ts";
import type { Application } from "../db/schema.ts";
import { conflict } from "../errors.ts";

export async function checkRenamable(
  db: Db,
  application: Pick<Application, "applicationId" | "appName" | "serverId" | "applicationStatus">,
  change: { appName?: string | undefined; serverId?: string | null | undefined },
): Promise<void> {
  const fields: string[] = [];
  if (change.appName !== undefined && change.appName !== application.appName) fields.push("appName");
  if (change.serverId !== undefined && change.serverId !== application.serverId) fields.push("serverId");
  if (fields.length === 0 || !isValidAppName(application.appName)) return;
  const deployed =
    application.applicationStatus !== "idle" ||
    (await db
      .selectFrom("deployments")
      .select("deploymentId")
      .where("applicationId", "=", application.applicationId)
      .limit(1)
      .executeTakeFirst()) !== undefined;
  if (deployed) {
    throw conflict(
      `The application has been deployed as "${application.appName}": its ${fields.join(" and ")} cannot change (a Swarm service cannot be renamed or moved); duplicate it to run under another name`,
      { fields },
    );
  }
}
