/**
 * Scheduled jobs (issue 32 item 3, Dokploy's `schedule` router): who may reach a schedule, and
 * what a schedule's fields may hold. A schedule belongs to its organization: an application's or
 * a compose stack's is reached by whoever may see that service (another organization's, or an
 * ungranted one, is a 404); a server's or this machine's (`server`, `dokploy-server`: a shell on
 * the host) by instance administrators only (403 for everyone else, 404 first for another
 * organization's server). Dokploy's CVE-2026-45632 came from a schedule reaching a container by
 * a name the caller chose; here the container is found by the agent from the service's own
 * row (never from input) and must carry the organization's ownership labels.
 */
import { Cron } from "croner";
import { z } from "zod";
import { findCompose } from "../compose/repository.ts";
import type { Caller, ServiceContext } from "../context.ts";
import { ownedService } from "../db/owned.ts";
import type { Schedule, ScheduleType } from "../db/schema.ts";
import { displayName } from "../display-name.ts";
import { ApiError, badRequest, forbidden, notFound } from "../errors.ts";
import { isInstanceAdmin } from "../organizations/instance.ts";
import { requireApplicationAccess, requireServiceAccess } from "../projects/permissions.ts";
import { findServer } from "../servers/repository.ts";

export const scheduleTypes = ["application", "compose", "server", "dokploy-server"] as const;
export const shellTypes = ["bash", "sh"] as const;
const idSchema = z.string().min(1).max(100);

/** A compose service's name as Compose allows it: no shell metacharacters, no spaces. */
const SERVICE_NAME = /^[a-zA-Z0-9][a-zA-Z0-9_.-]{0,62}$/;
/** An IANA zone name's characters (the agent checks the same). */
const TIMEZONE = /^[A-Za-z][A-Za-z0-9_+-]*(\/[A-Za-z0-9_+-]+)*$/;

const fields = {
  name: displayName(),
  cronExpression: z.string().min(1).max(200),
  command: z.string().min(1).max(65_536),
  shellType: z.enum(shellTypes),
  serviceName: z.string().max(200).nullable(),
  applicationId: idSchema.nullable(),
  composeId: idSchema.nullable(),
  serverId: idSchema.nullable(),
  enabled: z.boolean(),
  script: z.string().max(65_536).nullable(),
  timezone: z.string().max(100).nullable(),
  description: z.string().max(2000).nullable(),
};

/** Dokploy's inputs carry the schedule's organizationId: it must be the caller's (else a 400). */
const organizationClaim = idSchema.optional();

export function checkOrganizationClaim(claimed: string | undefined, organizationId: string): void {
  if (claimed !== undefined && claimed !== organizationId) {
    throw notFound("Organization");
  }
}

export const createScheduleInput = z.object({
  ...fields,
  scheduleType: z.enum(scheduleTypes).default("application"),
  shellType: fields.shellType.default("bash"),
  serviceName: fields.serviceName.optional(),
  applicationId: fields.applicationId.optional(),
  composeId: fields.composeId.optional(),
  serverId: fields.serverId.optional(),
  enabled: fields.enabled.default(true),
  script: fields.script.optional(),
  timezone: fields.timezone.optional(),
  description: fields.description.optional(),
  organizationId: organizationClaim,
});

export const updateScheduleInput = z.object({
  scheduleId: idSchema,
  ...Object.fromEntries(Object.entries(fields).map(([key, schema]) => [key, schema.optional()])),
  scheduleType: z.enum(scheduleTypes).optional(),
  organizationId: organizationClaim,
}) as unknown as z.ZodObject<
  {
    scheduleId: typeof idSchema;
    scheduleType: z.ZodOptional<z.ZodEnum<{ [K in ScheduleType]: K }>>;
    organizationId: typeof organizationClaim;
  } & {
    [K in keyof typeof fields]: z.ZodOptional<(typeof fields)[K]>;
  }
>;

export const scheduleIdInput = z.object({ scheduleId: idSchema });

export const scheduleSchema = z.object({
  scheduleId: z.string(),
  name: z.string(),
  cronExpression: z.string(),
  appName: z.string(),
  serviceName: z.string().nullable(),
  shellType: z.enum(shellTypes),
  scheduleType: z.enum(scheduleTypes),
  command: z.string(),
  script: z.string().nullable(),
  applicationId: z.string().nullable(),
  composeId: z.string().nullable(),
  serverId: z.string().nullable(),
  organizationId: z.string(),
  userId: z.string().nullable(),
  enabled: z.boolean(),
  timezone: z.string().nullable(),
  description: z.string().nullable(),
  createdAt: z.string(),
  /** When the schedule next fires (null: disabled). Ours. */
  nextRunAt: z.string().nullable(),
});

const isHostType = (type: ScheduleType) => type === "server" || type === "dokploy-server";

/** Host schedules (a shell on a server): instance administrators only, never on the cloud edition. */
export async function requireHostScheduleAccess(ctx: ServiceContext, caller: Caller): Promise<void> {
  if (ctx.config.edition === "cloud") {
    throw forbidden("Server schedules are not available on the cloud edition");
  }
  if (!(await isInstanceAdmin(ctx.db, caller))) {
    throw forbidden("Only instance administrators manage schedules that run on a server (scheduleType)");
  }
}

const notFoundNaming = (what: string, field: string) =>
  new ApiError("NOT_FOUND", `${what} not found (${field})`, { fields: [field] });

/**
 * The ids a schedule input names, each the caller's to see (404 otherwise), before anything
 * else is looked at.
 */
export async function requireNamedIds(
  ctx: ServiceContext,
  caller: Caller,
  input: { applicationId?: string | null; composeId?: string | null; serverId?: string | null },
): Promise<void> {
  if (input.applicationId) {
    if (!(await ownedService(ctx.db, caller, "application", input.applicationId))) {
      throw notFoundNaming("Application", "applicationId");
    }
    await requireApplicationAccess(ctx.db, caller, input.applicationId);
  }
  if (input.composeId) {
    const stack = await findCompose(ctx.db, caller.organizationId, input.composeId);
    if (!stack) throw notFoundNaming("Compose", "composeId");
    await requireServiceAccess(
      ctx.db,
      caller,
      { serviceId: stack.composeId, environmentId: stack.environmentId, projectId: stack.projectId },
      "Compose",
    );
  }
  if (input.serverId && !(await findServer(ctx.db, caller.organizationId, input.serverId))) {
    throw notFoundNaming("Server", "serverId");
  }
}

/** The schedule when the caller may reach it: 404 for another organization's or an unseen service's. */
export async function loadSchedule(
  ctx: ServiceContext,
  caller: Caller,
  scheduleId: string,
): Promise<Schedule> {
  const schedule = await ctx.db
    .selectFrom("schedules")
    .selectAll()
    .where("scheduleId", "=", scheduleId)
    .where("organizationId", "=", caller.organizationId)
    .executeTakeFirst();
  if (!schedule) throw notFound("Schedule");
  try {
    await requireNamedIds(ctx, caller, {
      applicationId: schedule.applicationId,
      composeId: schedule.composeId,
    });
  } catch (error) {
    if (error instanceof ApiError && error.code === "NOT_FOUND") throw notFound("Schedule");
    throw error;
  }
  if (isHostType(schedule.scheduleType)) await requireHostScheduleAccess(ctx, caller);
  return schedule;
}

/** A cron expression croner understands (5 or 6 fields, or a nickname such as @daily). */
export function checkCronExpression(expression: string): void {
  try {
    new Cron(expression, { paused: true }).stop();
  } catch (error) {
    throw badRequest(`cronExpression: ${(error as Error).message}`, { fields: ["cronExpression"] });
  }
}

/** An IANA time zone this Node knows; null or "" = UTC. */
export function checkTimezone(timezone: string | null | undefined): void {
  if (!timezone) return;
  let known = TIMEZONE.test(timezone);
  if (known) {
    try {
      new Intl.DateTimeFormat("en-US", { timeZone: timezone });
    } catch {
      known = false;
    }
  }
  if (!known)
    throw badRequest("timezone must be an IANA time zone such as Europe/Paris", { fields: ["timezone"] });
}

/** What a schedule of `type` needs and refuses (400 naming the field). */
export function checkShape(
  type: ScheduleType,
  values: {
    applicationId?: string | null;
    composeId?: string | null;
    serverId?: string | null;
    serviceName?: string | null;
    script?: string | null;
  },
): void {
  const need = (field: keyof typeof values, what: string) => {
    if (!values[field]) throw badRequest(`${field} is required for ${what}`, { fields: [field] });
  };
  const refuse = (field: keyof typeof values) => {
    if (values[field]) {
      throw badRequest(`${field} does not belong to a schedule of scheduleType ${type}`, { fields: [field] });
    }
  };
  if (type === "application") {
    need("applicationId", "scheduleType application");
    refuse("composeId");
    refuse("serverId");
    refuse("serviceName");
    refuse("script");
  } else if (type === "compose") {
    need("composeId", "scheduleType compose");
    need("serviceName", "scheduleType compose (the service whose container runs the command)");
    refuse("applicationId");
    refuse("serverId");
    refuse("script");
  } else {
    if (type === "server") need("serverId", "scheduleType server");
    else refuse("serverId");
    refuse("applicationId");
    refuse("composeId");
    refuse("serviceName");
  }
  if (values.serviceName && !SERVICE_NAME.test(values.serviceName)) {
    throw badRequest(
      "serviceName must be a compose service name (letters, digits, '.', '_' and '-'; no spaces or shell characters)",
      { fields: ["serviceName"] },
    );
  }
}

export { isHostType };
