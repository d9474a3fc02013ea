/**
 * Events kept for later notification delivery (spec 6.1): appDeploy when a deployment
 * succeeded, appBuildError when it failed. The payload is the `data` of a custom channel's
 * body: {applicationName, status, message}.
 */
import { newId } from "../crypto/ids.ts";
import type { Db } from "../db/database.ts";
import type { EventKind } from "../db/schema.ts";

export interface NewEvent {
  organizationId: string;
  kind: EventKind;
  applicationId: string | null;
  payload: { applicationName: string; status: string; message: string; [key: string]: string };
}

export async function recordEvent(db: Db, event: NewEvent, now: Date): Promise<void> {
  await db
    .insertInto("events")
    .values({
      eventId: newId(),
      organizationId: event.organizationId,
      kind: event.kind,
      applicationId: event.applicationId,
      payload: JSON.stringify(event.payload),
      createdAt: now.toISOString(),
    })
    .execute();
}
