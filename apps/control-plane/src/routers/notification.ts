/**
 * notification (spec 2.11, 4.11): the organization's channels, one create<Kind>, update<Kind>
 * and test<Kind> per kind (notifications/kinds.ts), getAll and delete, and deliveries (ours:
 * each delivery's attempts and outcome). Administrators create, update, test, delete and read
 * deliveries; members read the list, without secrets. Every URL goes through the outbound guard
 * at create, update and test (400 naming the field). Another organization's channel is a 404.
 */
import { z } from "zod";
import { idSchema } from "../applications/schemas.ts";
import type { ServiceContext } from "../context.ts";
import { displayNameSchema } from "../display-name.ts";
import { badRequest, notFound } from "../errors.ts";
import { recordServerThreshold, serverOfMonitoringToken } from "../monitoring/monitoring-config.ts";
import { deliveryAsApiError } from "../notifications/http.ts";
import {
  checkKindUrls,
  KIND_NAMES,
  kindDef,
  type Notice,
  type NotificationKind,
} from "../notifications/kinds.ts";
import {
  type ChannelInput,
  channelFields,
  channelView,
  deleteChannel,
  EVENT_TOGGLES,
  findChannel,
  insertChannel,
  listChannels,
  listDeliveries,
  type Toggles,
  updateChannel,
} from "../notifications/repository.ts";
import {
  type AnyProcedure,
  defineRouter,
  mutation,
  noInput,
  query,
  success,
  successSchema,
} from "../procedure.ts";
import { existingProjectIds, existingServiceIds } from "../projects/repository.ts";

const name = displayNameSchema;
const limitIds = z.array(idSchema).max(200).nullish();

const toggleShape = Object.fromEntries(EVENT_TOGGLES.map((t) => [t, z.boolean().default(false)])) as Record<
  (typeof EVENT_TOGGLES)[number],
  z.ZodDefault<z.ZodBoolean>
>;
const togglePatch = Object.fromEntries(EVENT_TOGGLES.map((t) => [t, z.boolean().optional()])) as Record<
  (typeof EVENT_TOGGLES)[number],
  z.ZodOptional<z.ZodBoolean>
>;

/**
 * Dokploy's names of two toggles: dokployRestart is our platformRestart (a control plane copy
 * starting after an unclean stop, an agent heard again), dokployBackup our platformBackup (the
 * control plane's own backups). Either name sets the toggle; both, disagreeing, is a 400.
 */
const DOKPLOY_TOGGLE_NAMES = { dokployRestart: "platformRestart", dokployBackup: "platformBackup" } as const;
const dokployToggleShape = { dokployRestart: z.boolean().optional(), dokployBackup: z.boolean().optional() };

function applyDokployToggleNames(fields: Record<string, unknown>, explicit: (ours: string) => boolean): void {
  for (const [dokploy, ours] of Object.entries(DOKPLOY_TOGGLE_NAMES)) {
    const value = fields[dokploy];
    delete fields[dokploy];
    if (value === undefined) continue;
    if (explicit(ours) && fields[ours] !== value) {
      throw badRequest(`Invalid input: ${dokploy}: disagrees with ${ours} (the same toggle)`, {
        fields: [dokploy],
      });
    }
    fields[ours] = value;
  }
}

/** Dokploy's update<Kind> carries the channel's organizationId: it must be the caller's. */
function checkOrganizationClaim(claimed: unknown, organizationId: string): void {
  if (claimed !== undefined && claimed !== organizationId) {
    throw notFound("Organization");
  }
}

const channelSchema = z
  .object({
    notificationId: z.string(),
    name: z.string(),
    notificationType: z.string(),
    ...Object.fromEntries(EVENT_TOGGLES.map((t) => [t, z.boolean()])),
    createdAt: z.string(),
    organizationId: z.string(),
    projectIds: z.array(z.string()).nullable(),
    serviceIds: z.array(z.string()).nullable(),
    redacted: z.array(z.string()),
  })
  .catchall(z.unknown());

const deliverySchema = z.object({
  eventId: z.string(),
  notificationId: z.string(),
  event: z.string(),
  status: z.enum(["pending", "delivered", "abandoned"]),
  attempts: z.number(),
  lastError: z.string().nullable(),
  nextAttemptAt: z.string(),
  updatedAt: z.string(),
  createdAt: z.string(),
});

/** Cross-field rules (Pushover) and the project/service limits: 400 naming the field, 404 for foreign ids. */
async function checkChannel(
  ctx: ServiceContext,
  organizationId: string,
  kind: NotificationKind,
  input: ChannelInput,
): Promise<void> {
  const problem = kindDef(kind).refine?.(input.fields);
  if (problem) throw badRequest(`Invalid input: ${problem[0]}: ${problem[1]}`, { fields: [problem[0]] });
  if (input.projectIds?.length) {
    const found = await existingProjectIds(ctx.db, organizationId, input.projectIds);
    if (found.size !== new Set(input.projectIds).size) throw notFound("Project");
  }
  if (input.serviceIds?.length) {
    const found = await existingServiceIds(ctx.db, organizationId, input.serviceIds);
    if (found.size !== new Set(input.serviceIds).size) throw notFound("Service");
  }
  await checkKindUrls(kind, input.fields, { ctx, organizationId }).catch(deliveryAsApiError);
}

const testNotice = (): Notice => ({
  event: "test",
  timestamp: new Date().toISOString(),
  title: "Test notification",
  data: {
    applicationName: "Platform",
    status: "success",
    message: "This channel works: a test from the platform.",
  },
});

function pickFields(kind: NotificationKind, input: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.keys(kindDef(kind).shape).map((key) => [key, input[key]]));
}

function kindProcedures(kind: NotificationKind): Record<string, AnyProcedure> {
  const def = kindDef(kind);
  const subId = `${kind}Id`;
  const createInput = z.object({
    name,
    ...toggleShape,
    ...dokployToggleShape,
    ...def.shape,
    projectIds: limitIds,
    serviceIds: limitIds,
  });
  const patchShape = Object.fromEntries(
    Object.entries(def.shape).map(([key, field]) => [key, (field as z.ZodType).optional()]),
  );
  const updateInput = z.object({
    notificationId: idSchema,
    [subId]: idSchema.optional(),
    organizationId: idSchema.optional(),
    name: name.optional(),
    ...togglePatch,
    ...dokployToggleShape,
    ...patchShape,
    projectIds: limitIds,
    serviceIds: limitIds,
  });
  const testProcedure = testKindProcedure(kind);
  return {
    [`create${def.suffix}`]: mutation({
      summary: `Create a ${def.suffix} channel (its secrets are sealed and never shown again)`,
      access: "admin",
      input: createInput,
      output: channelSchema,
      handler: async ({ ctx, caller, input }) => {
        const fields = { ...input } as Record<string, unknown>;
        // A toggle left out defaults to false, so only a `true` of ours can disagree.
        applyDokployToggleNames(fields, (ours) => fields[ours] === true);
        const channel: ChannelInput = {
          name: input.name,
          toggles: Object.fromEntries(EVENT_TOGGLES.map((t) => [t, fields[t] === true])) as Toggles,
          fields: pickFields(kind, fields),
          projectIds: input.projectIds?.length ? input.projectIds : null,
          serviceIds: input.serviceIds?.length ? input.serviceIds : null,
        };
        await checkChannel(ctx, caller.organizationId, kind, channel);
        return channelView(await insertChannel(ctx, caller.organizationId, kind, channel));
      },
    }),
    [`update${def.suffix}`]: mutation({
      summary: `Change a ${def.suffix} channel; an absent field (a secret too) keeps its stored value`,
      access: "admin",
      input: updateInput,
      output: successSchema,
      handler: async ({ ctx, caller, input }) => {
        const fields = { ...input } as Record<string, unknown>;
        checkOrganizationClaim(fields.organizationId, caller.organizationId);
        applyDokployToggleNames(fields, (ours) => fields[ours] !== undefined);
        const row = await findChannel(ctx.db, caller.organizationId, input.notificationId as string, kind);
        if (!row || (fields[subId] !== undefined && fields[subId] !== row.notificationId)) {
          throw notFound("Notification");
        }
        const stored = channelFields(ctx, row);
        const patch = Object.fromEntries(
          Object.entries(pickFields(kind, fields)).filter(([, value]) => value !== undefined),
        );
        const channel: ChannelInput = {
          name: (input.name as string | undefined) ?? row.name,
          toggles: Object.fromEntries(
            EVENT_TOGGLES.map((t) => [t, (fields[t] as boolean | undefined) ?? row[t]]),
          ) as Toggles,
          fields: { ...stored, ...patch },
          projectIds:
            input.projectIds === undefined
              ? row.projectIds
              : input.projectIds?.length
                ? (input.projectIds as string[])
                : null,
          serviceIds:
            input.serviceIds === undefined
              ? row.serviceIds
              : input.serviceIds?.length
                ? (input.serviceIds as string[])
                : null,
        };
        // Only what changed is checked against the guard again (a stored URL was checked at create).
        await checkChannel(ctx, caller.organizationId, kind, { ...channel, fields: patch });
        const problem = def.refine?.(channel.fields);
        if (problem)
          throw badRequest(`Invalid input: ${problem[0]}: ${problem[1]}`, { fields: [problem[0]] });
        await updateChannel(ctx, row, channel);
        return success;
      },
    }),
    [`test${def.suffix}`]: testProcedure,
    // Dokploy's name for the same test (its dashboard calls test<Kind>Connection).
    [`test${def.suffix}Connection`]: testProcedure,
  };
}

function testKindProcedure(kind: NotificationKind): AnyProcedure {
  const def = kindDef(kind);
  const testInput = z.object(def.shape);
  return mutation({
    summary: `Send a test notice through ${def.suffix} fields (nothing is stored); a failure names what went wrong, never the receiver's answer`,
    access: "admin",
    input: testInput,
    output: successSchema,
    handler: async ({ ctx, caller, input }) => {
      const fields = input as Record<string, unknown>;
      const problem = def.refine?.(fields);
      if (problem) throw badRequest(`Invalid input: ${problem[0]}: ${problem[1]}`, { fields: [problem[0]] });
      await checkKindUrls(kind, fields, { ctx, organizationId: caller.organizationId }).catch(
        deliveryAsApiError,
      );
      await def
        .send(fields, testNotice(), { ctx, organizationId: caller.organizationId })
        .catch(deliveryAsApiError);
      return success;
    },
  });
}

const findOneInput = z.object({ notificationId: idSchema });

const removeProcedure = mutation({
  summary: "Delete a channel and its pending deliveries",
  access: "admin",
  input: findOneInput,
  output: successSchema,
  handler: async ({ ctx, caller, input }) => {
    if (!(await deleteChannel(ctx.db, caller.organizationId, input.notificationId))) {
      throw notFound("Notification");
    }
    return success;
  },
});

/** The organization's channels as getAll and all answer them. */
const channelList = async (ctx: ServiceContext, organizationId: string) =>
  (await listChannels(ctx.db, organizationId)).map(channelView);

/** The kinds that send mail: the channels user.sendInvitation may send an invitation through. */
const MAIL_KINDS = new Set<string>(["email", "resend"]);

export const notificationRouter = defineRouter("notification", {
  ...Object.assign({}, ...KIND_NAMES.map(kindProcedures)),

  getAll: query({
    summary: "The organization's channels, newest first (secrets are never answered: `redacted` names them)",
    access: "member",
    input: noInput,
    output: z.array(channelSchema),
    handler: ({ ctx, caller }) => channelList(ctx, caller.organizationId),
  }),

  all: query({
    summary: "The organization's channels, newest first, as getAll answers them (Dokploy's name)",
    access: "admin",
    input: noInput,
    output: z.array(channelSchema),
    handler: ({ ctx, caller }) => channelList(ctx, caller.organizationId),
  }),

  one: query({
    summary: "One channel of the organization, without its secrets (`redacted` names them)",
    access: "member",
    input: findOneInput,
    output: channelSchema,
    handler: async ({ ctx, caller, input }) => {
      const row = await findChannel(ctx.db, caller.organizationId, input.notificationId);
      if (!row) throw notFound("Notification");
      return channelView(row);
    },
  }),

  getEmailProviders: query({
    summary:
      "The organization's Email and Resend channels, the ones user.sendInvitation can send through (without their secrets)",
    access: "admin",
    input: noInput,
    output: z.array(channelSchema),
    handler: async ({ ctx, caller }) =>
      (await listChannels(ctx.db, caller.organizationId))
        .filter((row) => MAIL_KINDS.has(row.kind))
        .map(channelView),
  }),

  receiveNotification: mutation({
    summary:
      "A monitoring threshold alert posted by a server's metrics sender with the server's monitoring token: recorded as a serverThreshold event of the server's organization (a token no server holds is a 400)",
    access: "public",
    input: z.object({
      ServerType: z.enum(["Dokploy", "Remote"]).default("Dokploy"),
      Type: z.enum(["Memory", "CPU"]),
      Value: z.number().finite(),
      Threshold: z.number().finite(),
      Message: z.string().max(2048),
      Timestamp: z.string().max(64),
      Token: z.string().min(1).max(512),
    }),
    output: successSchema,
    handler: async ({ ctx, input }) => {
      const serverId = await serverOfMonitoringToken(
        ctx,
        input.Token,
        input.ServerType === "Dokploy" ? "local" : "remote",
      );
      if (!serverId) throw badRequest("Token not found", { fields: ["Token"] });
      const at = Date.parse(input.Timestamp);
      await recordServerThreshold(
        ctx,
        serverId,
        {
          type: input.Type,
          value: input.Value.toFixed(2),
          threshold: String(input.Threshold),
          message: input.Message,
        },
        Number.isNaN(at) ? ctx.now() : new Date(at),
      );
      return success;
    },
  }),

  // Dokploy's name for delete.
  remove: removeProcedure,

  delete: removeProcedure,

  deliveries: query({
    summary:
      "Each delivery of an event to a channel, newest first: status (pending, delivered, abandoned), attempts and the last failure (ours)",
    access: "admin",
    input: z
      .object({ notificationId: idSchema.optional(), limit: z.number().int().min(1).max(500).default(100) })
      .prefault({}),
    output: z.array(deliverySchema),
    handler: async ({ ctx, caller, input }) => {
      if (input.notificationId) {
        const channel = await findChannel(ctx.db, caller.organizationId, input.notificationId);
        if (!channel) throw notFound("Notification");
      }
      return listDeliveries(ctx.db, caller.organizationId, input);
    },
  }),
});
