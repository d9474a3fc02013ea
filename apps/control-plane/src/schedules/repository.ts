/**
 * The SQL of scheduled jobs. Lists are of one organization; a schedule reached by id is first
 * loaded for the caller (schedules.ts, loadSchedule), and the writes here take its id.
 */
import type { Db } from "../db/database.ts";
import type { NewSchedule, Schedule, ScheduleType, ScheduleUpdate } from "../db/schema.ts";

export function insertSchedule(db: Db, values: NewSchedule): Promise<Schedule> {
  return db.insertInto("schedules").values(values).returningAll().executeTakeFirstOrThrow();
}

export function updateSchedule(db: Db, scheduleId: string, patch: ScheduleUpdate): Promise<Schedule> {
  return db
    .updateTable("schedules")
    .set(patch)
    .where("scheduleId", "=", scheduleId)
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** Deletes the schedule (its runs go with it). */
export async function deleteSchedule(db: Db, scheduleId: string): Promise<void> {
  await db.deleteFrom("schedules").where("scheduleId", "=", scheduleId).execute();
}

/** Whether a run of the schedule is running now. */
export async function hasRunningScheduleRun(db: Db, scheduleId: string): Promise<boolean> {
  const row = await db
    .selectFrom("deployments")
    .select("deploymentId")
    .where("scheduleId", "=", scheduleId)
    .where("status", "=", "running")
    .executeTakeFirst();
  return row !== undefined;
}

/** One application's, compose stack's or server's schedules. */
export type ScheduleListTarget = { column: "applicationId" | "composeId" | "serverId"; id: string };

/**
 * The organization's schedules of `scheduleType`, oldest first: of one application, compose
 * stack or server (`target`), or, for dokploy-server, all of them.
 */
export function listSchedules(
  db: Db,
  organizationId: string,
  scheduleType: ScheduleType,
  target?: ScheduleListTarget,
): Promise<Schedule[]> {
  let query = db
    .selectFrom("schedules")
    .selectAll()
    .where("organizationId", "=", organizationId)
    .where("scheduleType", "=", scheduleType);
  if (target) query = query.where(target.column, "=", target.id);
  return query.orderBy("createdAt").orderBy("scheduleId").execute();
}

/** What the schedule runs in or on: its application, compose stack or server (null when none). */
export async function findScheduleTargets(
  db: Db,
  schedule: Pick<Schedule, "applicationId" | "composeId" | "serverId">,
) {
  const application = schedule.applicationId
    ? ((await db
        .selectFrom("applications")
        .select(["applicationId", "appName", "name", "serverId"])
        .where("applicationId", "=", schedule.applicationId)
        .executeTakeFirst()) ?? null)
    : null;
  const compose = schedule.composeId
    ? ((await db
        .selectFrom("compose")
        .select(["composeId", "appName", "name", "serverId"])
        .where("composeId", "=", schedule.composeId)
        .executeTakeFirst()) ?? null)
    : null;
  const server = schedule.serverId
    ? ((await db
        .selectFrom("servers")
        .select(["serverId", "name"])
        .where("serverId", "=", schedule.serverId)
        .executeTakeFirst()) ?? null)
    : null;
  return { application, compose, server };
}
