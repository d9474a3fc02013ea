/**
 * schedule (Dokploy's router; issue 32 item 3): scheduled jobs, a cron command (its shell and
 * time zone) run in an application's or a compose service's container, or on a server
 * (instance administrators only). Every run is a deployment of the schedule (schedules/runs.ts),
 * listed with the schedule and by deployment.allByType {type: schedule}. Who may reach what is
 * schedules/schedules.ts: another organization's ids are a 404, a host schedule is a 403 for
 * anyone but an instance administrator.
 */
import { z } from "zod";
import type { Caller, ServiceContext } from "../context.ts";
import { newId } from "../crypto/ids.ts";
import type { Schedule } from "../db/schema.ts";
import { listTargetDeployments, toDeploymentView } from "../deployments/repository.ts";
import { deploymentSchema } from "../deployments/schemas.ts";
import { badRequest } from "../errors.ts";
import { defineRouter, mutation, query, success, successSchema } from "../procedure.ts";
import {
  deleteSchedule,
  findScheduleTargets,
  hasRunningScheduleRun,
  insertSchedule,
  listSchedules,
  type ScheduleListTarget,
  updateSchedule,
} from "../schedules/repository.ts";
import { startScheduleRun, waitForScheduleRun } from "../schedules/runs.ts";
import {
  checkCronExpression,
  checkOrganizationClaim,
  checkShape,
  checkTimezone,
  createScheduleInput,
  isHostType,
  loadSchedule,
  requireHostScheduleAccess,
  requireNamedIds,
  scheduleIdInput,
  scheduleSchema,
  scheduleTypes,
  updateScheduleInput,
} from "../schedules/schedules.ts";

const toView = (ctx: ServiceContext, row: Schedule): z.input<typeof scheduleSchema> => ({
  ...row,
  nextRunAt: ctx.schedules.nextRun(row.scheduleId)?.toISOString() ?? null,
});

const listItemSchema = scheduleSchema.extend({
  application: z
    .object({
      applicationId: z.string(),
      appName: z.string(),
      name: z.string(),
      serverId: z.string().nullable(),
    })
    .nullable(),
  compose: z
    .object({ composeId: z.string(), appName: z.string(), name: z.string(), serverId: z.string().nullable() })
    .nullable(),
  server: z.object({ serverId: z.string(), name: z.string() }).nullable(),
  /** The schedule's runs, newest first. */
  deployments: z.array(deploymentSchema),
});

async function toListItem(ctx: ServiceContext, row: Schedule): Promise<z.input<typeof listItemSchema>> {
  const targets = await findScheduleTargets(ctx.db, row);
  const deployments = (await listTargetDeployments(ctx.db, row.scheduleId)).map(toDeploymentView);
  return { ...toView(ctx, row), ...targets, deployments };
}

async function listScheduleItems(
  ctx: ServiceContext,
  caller: Caller,
  input: { id: string; scheduleType: (typeof scheduleTypes)[number] },
) {
  let target: ScheduleListTarget | undefined;
  if (input.scheduleType === "application") {
    await requireNamedIds(ctx, caller, { applicationId: input.id });
    target = { column: "applicationId", id: input.id };
  } else if (input.scheduleType === "compose") {
    await requireNamedIds(ctx, caller, { composeId: input.id });
    target = { column: "composeId", id: input.id };
  } else if (input.scheduleType === "server") {
    await requireNamedIds(ctx, caller, { serverId: input.id });
    await requireHostScheduleAccess(ctx, caller);
    target = { column: "serverId", id: input.id };
  } else {
    // dokploy-server: this machine's schedules of the caller's organization (`id` names nothing).
    await requireHostScheduleAccess(ctx, caller);
  }
  const rows = await listSchedules(ctx.db, caller.organizationId, input.scheduleType, target);
  return Promise.all(rows.map((row) => toListItem(ctx, row)));
}

export const scheduleRouter = defineRouter("schedule", {
  create: mutation({
    summary:
      "Create a scheduled job: a cron command (shell, time zone) in an application's or a compose service's container, or on a server (instance administrators)",
    access: "member",
    input: createScheduleInput,
    output: scheduleSchema,
    handler: async ({ ctx, caller, input }) => {
      checkOrganizationClaim(input.organizationId, caller.organizationId);
      await requireNamedIds(ctx, caller, input);
      if (isHostType(input.scheduleType)) await requireHostScheduleAccess(ctx, caller);
      checkShape(input.scheduleType, input);
      checkCronExpression(input.cronExpression);
      checkTimezone(input.timezone);
      const scheduleId = newId();
      const row = await insertSchedule(ctx.db, {
        scheduleId,
        name: input.name,
        cronExpression: input.cronExpression,
        appName: `schedule-${scheduleId
          .toLowerCase()
          .replace(/[^a-z0-9]/g, "")
          .slice(0, 20)}`,
        serviceName: input.serviceName || null,
        shellType: input.shellType,
        scheduleType: input.scheduleType,
        command: input.command,
        script: input.script ?? null,
        applicationId: input.applicationId || null,
        composeId: input.composeId || null,
        serverId: input.serverId || null,
        organizationId: caller.organizationId,
        userId: caller.userId,
        enabled: input.enabled,
        timezone: input.timezone || null,
        description: input.description || null,
      });
      await ctx.schedules.reschedule();
      return toView(ctx, row);
    },
  }),

  update: mutation({
    summary:
      "Change a scheduled job's name, cron expression, time zone, command, shell, service or enabled flag",
    access: "member",
    input: updateScheduleInput,
    output: scheduleSchema,
    handler: async ({ ctx, caller, input }) => {
      checkOrganizationClaim(input.organizationId, caller.organizationId);
      await requireNamedIds(ctx, caller, input);
      const schedule = await loadSchedule(ctx, caller, input.scheduleId);
      // A schedule stays where it was made: another target is a new schedule.
      for (const field of ["scheduleType", "applicationId", "composeId", "serverId"] as const) {
        const value = input[field];
        if (value !== undefined && (value || null) !== schedule[field]) {
          throw badRequest(`${field} cannot change (delete the schedule and create another)`, {
            fields: [field],
          });
        }
      }
      const serviceName = input.serviceName === undefined ? schedule.serviceName : input.serviceName || null;
      const script = input.script === undefined ? schedule.script : input.script;
      checkShape(schedule.scheduleType, { ...schedule, serviceName, script });
      if (input.cronExpression !== undefined) checkCronExpression(input.cronExpression);
      checkTimezone(input.timezone);
      const patch = {
        ...(input.name !== undefined ? { name: input.name } : {}),
        ...(input.cronExpression !== undefined ? { cronExpression: input.cronExpression } : {}),
        ...(input.command !== undefined ? { command: input.command } : {}),
        ...(input.shellType !== undefined ? { shellType: input.shellType } : {}),
        ...(input.serviceName !== undefined ? { serviceName } : {}),
        ...(input.enabled !== undefined ? { enabled: input.enabled } : {}),
        ...(input.script !== undefined ? { script: input.script } : {}),
        ...(input.timezone !== undefined ? { timezone: input.timezone || null } : {}),
        ...(input.description !== undefined ? { description: input.description || null } : {}),
      };
      const row =
        Object.keys(patch).length > 0 ? await updateSchedule(ctx.db, schedule.scheduleId, patch) : schedule;
      await ctx.schedules.reschedule();
      return toView(ctx, row);
    },
  }),

  delete: mutation({
    summary: "Delete a scheduled job and its runs",
    access: "member",
    input: scheduleIdInput,
    output: successSchema,
    handler: async ({ ctx, caller, input }) => {
      const schedule = await loadSchedule(ctx, caller, input.scheduleId);
      if (await hasRunningScheduleRun(ctx.db, schedule.scheduleId)) {
        throw badRequest("A run of the schedule is running: kill it first (deployment.killProcess)", {
          fields: ["scheduleId"],
        });
      }
      await deleteSchedule(ctx.db, schedule.scheduleId);
      await ctx.schedules.reschedule();
      return success;
    },
  }),

  list: query({
    summary:
      "The scheduled jobs of an application, a compose stack, a server or this machine, with their runs",
    access: "member",
    input: z.object({ id: z.string().min(1).max(100), scheduleType: z.enum(scheduleTypes) }),
    output: z.array(listItemSchema),
    handler: ({ ctx, caller, input }) => listScheduleItems(ctx, caller, input),
  }),

  one: query({
    summary: "One scheduled job, with its service or server and its runs",
    access: "member",
    input: scheduleIdInput,
    output: listItemSchema,
    handler: async ({ ctx, caller, input }) =>
      toListItem(ctx, await loadSchedule(ctx, caller, input.scheduleId)),
  }),

  runManually: mutation({
    summary:
      "Run a scheduled job now (a deployment of the schedule); answers when it ended, or after 30 s with its status",
    access: "member",
    input: z.object({ scheduleId: z.string().min(1).max(100) }),
    output: z.object({
      status: z.enum(["idle", "running", "done", "error"]),
      deploymentId: z.string(),
      logPath: z.string(),
      errorMessage: z.string().nullable(),
    }),
    handler: async ({ ctx, caller, input }) => {
      const schedule = await loadSchedule(ctx, caller, input.scheduleId);
      const { deploymentId, logPath } = await startScheduleRun(ctx, schedule);
      const row = await waitForScheduleRun(ctx, deploymentId);
      return { status: row.status, deploymentId, logPath, errorMessage: row.errorMessage };
    },
  }),
});
