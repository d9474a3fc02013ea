/**
 * Events of spec 6.1, written into the notification outbox (notifications/outbox.ts) in the
 * transaction of the change that causes them: appDeploy when a deployment succeeded,
 * appBuildError when it failed, serverThreshold, dockerCleanup, platformRestart and the backup
 * events. The payload is the `data` of a channel's notice: {applicationName, status, message}
 * and, for an event of a service, its project, environment and service and a link to its
 * deployments (its id read here; the outbox writes the link, with PLATFORM_URL). Read in the same transaction, so every emitter gets them alike.
 */
import { newId } from "../crypto/ids.ts";
import type { Db } from "../db/database.ts";
import { withOwner } from "../db/owned.ts";
import type { EventKind } from "../db/schema.ts";

export interface NewEvent {
  organizationId: string;
  kind: EventKind;
  applicationId: string | null;
  payload: { applicationName: string; status: string; message: string; [key: string]: string };
}

/** The project, environment and last settled deployment of the event's service, if any. */
async function serviceContext(db: Db, event: NewEvent): Promise<Record<string, string>> {
  const databaseId = event.payload.databaseId;
  const serviceId = event.applicationId ?? databaseId;
  if (!serviceId) return {};
  const located = [
    "projects.projectId",
    "projects.name as projectName",
    "environments.environmentId",
    "environments.name as environmentName",
  ] as const;
  const row = event.applicationId
    ? await withOwner(db.selectFrom("applications"), "applications.environmentId")
        .select(["applications.name as serviceName", ...located])
        .where("applications.applicationId", "=", serviceId)
        .executeTakeFirst()
    : await withOwner(db.selectFrom("databaseServices"), "databaseServices.environmentId")
        .select(["databaseServices.name as serviceName", ...located])
        .where("databaseServices.databaseId", "=", serviceId)
        .executeTakeFirst();
  if (!row) return {};
  const context: Record<string, string> = {
    projectId: row.projectId,
    projectName: row.projectName,
    environmentId: row.environmentId,
    environmentName: row.environmentName,
    serviceId,
    serviceName: row.serviceName,
    serviceType: event.applicationId ? "application" : (event.payload.type ?? "database"),
  };
  if (event.kind === "appDeploy" || event.kind === "appBuildError") {
    const deployment = await db
      .selectFrom("deployments")
      .select("deploymentId")
      .where(event.applicationId ? "applicationId" : "databaseId", "=", serviceId)
      .where("completedAt", "is not", null)
      .orderBy("completedAt", "desc")
      .limit(1)
      .executeTakeFirst();
    if (deployment) context.deploymentId = deployment.deploymentId;
  }
  return context;
}

export async function recordEvent(db: Db, event: NewEvent, now: Date): Promise<void> {
  const context = await serviceContext(db, event);
  await db
    .insertInto("events")
    .values({
      eventId: newId(),
      organizationId: event.organizationId,
      kind: event.kind,
      applicationId: event.applicationId,
      // The emitter's own fields win; applicationName, status and message are always its own.
      payload: JSON.stringify({ ...context, ...event.payload }),
      createdAt: now.toISOString(),
    })
    .execute();
}
