/**
 * Inputs and answers of the database procedures (spec 2.9 and 4.14), built per kind from the
 * kind's facts: which fields it has and which of them create requires.
 */
import { z } from "zod";
import { idSchema } from "../applications/schemas.ts";
import {
  appNameSchema,
  cpuSchema,
  dockerImageSchema,
  memorySchema,
  plainTextSchema,
  swarmUpdateFields,
} from "../applications/validation.ts";
import { backupSchema } from "../backups/backups.ts";
import { envSchema } from "../env-vars.ts";
import { networkIdsSchema } from "../networks/index.ts";
import { descriptionSchema, nameSchema } from "../projects/schemas.ts";
import { type DatabaseKind, databaseKindFacts } from "./kinds.ts";
import { swarmDetailFields } from "./swarm.ts";

/** Spec 2.9's password pattern (postgres, mongo and mysql; applied to every kind here). */
export const DATABASE_PASSWORD_PATTERN = /^[a-zA-Z0-9@#%^&*()_+\-=[\]{}|;:,.<>?~]*$/;

export const databasePasswordSchema = z
  .string()
  .min(1, "must not be empty")
  .max(256)
  .regex(DATABASE_PASSWORD_PATTERN, "may only hold letters, digits and @#%^&*()_+-=[]{}|;:,.<>?~");

/**
 * Database and user names reach the image's init scripts and the connection URL: a letter,
 * digit or underscore first, then those, dots and dashes (63 characters, the longest name
 * PostgreSQL keeps).
 */
const identifierSchema = z
  .string()
  .trim()
  .min(1, "must not be empty")
  .max(63)
  .regex(/^[A-Za-z0-9_][A-Za-z0-9_.-]*$/, "may only hold letters, digits, _ . and - (not first)");

/** A clearable text field: "" clears it like null. */
const clearable = <T extends z.ZodType>(schema: T) =>
  z.union([z.literal("").transform(() => null), schema]).nullish();

const statusSchema = z.enum(["idle", "running", "done", "error"]);

/** libsql: sqld's role; a replica needs its primary's URL (sqld's SQLD_PRIMARY_URL). */
export const sqldNodeSchema = z.enum(["primary", "replica"]);
export const sqldPrimaryUrlSchema = z
  .string()
  .trim()
  .max(2048)
  .regex(
    /^(https?|libsql):\/\/[^\s/?#@]+(:\d+)?(\/[^\s]*)?$/,
    "must be an http(s):// or libsql:// URL of the primary",
  );

/** Dokploy's rule: sqldPrimaryUrl with a replica, and only with a replica. */
function checkSqldPrimaryUrl(
  value: { sqldNode?: string | undefined; sqldPrimaryUrl?: string | null | undefined },
  ctx: z.RefinementCtx,
) {
  if (value.sqldNode === "replica" && !value.sqldPrimaryUrl) {
    ctx.addIssue({
      code: "custom",
      path: ["sqldPrimaryUrl"],
      message: "is required when sqldNode is replica",
    });
  }
  if (value.sqldNode === "primary" && value.sqldPrimaryUrl) {
    ctx.addIssue({
      code: "custom",
      path: ["sqldPrimaryUrl"],
      message: "is only taken when sqldNode is replica",
    });
  }
}

export const externalPortSchema = z.number().int().min(1).max(65535).nullable();

/**
 * `<kind>.saveExternalPorts` (libsql): the HTTP port and the kind's extra ports, each published
 * on the server or (null) not; at least one must be given (Dokploy's rule).
 */
export function externalPortsInputOf(kind: DatabaseKind) {
  const extras = databaseKindFacts[kind].extraPorts ?? [];
  return idInputOf(kind)
    .extend({
      externalPort: externalPortSchema.optional(),
      ...Object.fromEntries(extras.map((extra) => [extra.field, externalPortSchema.optional()])),
    })
    .superRefine((value, ctx) => {
      // Dokploy refuses all of them null (none given is refused by the router, after the 404).
      const fields = ["externalPort", ...extras.map((extra) => extra.field)];
      if (fields.every((field) => (value as Record<string, unknown>)[field] === null)) {
        ctx.addIssue({
          code: "custom",
          path: ["externalPort"],
          message: `${fields.join(", ")} must not all be null`,
        });
      }
    });
}

/** `<kind>.create`: name*, appName*, environmentId*, and the kind's fields. */
export function createInputOf(kind: DatabaseKind) {
  const { fields } = databaseKindFacts[kind];
  return z
    .object({
      name: nameSchema,
      appName: appNameSchema,
      environmentId: idSchema,
      description: descriptionSchema,
      dockerImage: clearable(dockerImageSchema),
      serverId: clearable(idSchema),
      databasePassword: databasePasswordSchema,
      ...(fields.databaseName ? { databaseName: identifierSchema } : {}),
      ...(fields.databaseUser ? { databaseUser: identifierSchema } : {}),
      ...(fields.databaseRootPassword === "required" ? { databaseRootPassword: databasePasswordSchema } : {}),
      ...(fields.databaseRootPassword === "optional"
        ? { databaseRootPassword: databasePasswordSchema.optional() }
        : {}),
      ...(fields.replicaSets ? { replicaSets: z.boolean().default(false) } : {}),
      ...(fields.sqld
        ? {
            sqldNode: sqldNodeSchema,
            sqldPrimaryUrl: clearable(sqldPrimaryUrlSchema),
            enableNamespaces: z.boolean().default(false),
          }
        : {}),
    })
    .superRefine((value, ctx) => {
      if (fields.sqld) checkSqldPrimaryUrl(value as Parameters<typeof checkSqldPrimaryUrl>[0], ctx);
    });
}

export const idInputOf = (kind: DatabaseKind) =>
  z.object({ [databaseKindFacts[kind].idKey]: idSchema }) as z.ZodObject<Record<string, typeof idSchema>>;

/** `<kind>.update`: the spec's fields plus those Dokploy's update also takes. */
export function updateInputOf(kind: DatabaseKind) {
  const { fields } = databaseKindFacts[kind];
  return idInputOf(kind).extend({
    name: nameSchema.optional(),
    description: descriptionSchema,
    dockerImage: clearable(dockerImageSchema),
    databasePassword: databasePasswordSchema.optional(),
    // databaseUser and the passwords are changed in the running database first (credentials.ts);
    // databaseName is stored for the next deploy (the images create it only on an empty volume).
    ...(fields.databaseName ? { databaseName: identifierSchema.optional() } : {}),
    ...(fields.databaseUser ? { databaseUser: identifierSchema.optional() } : {}),
    ...(fields.databaseRootPassword ? { databaseRootPassword: databasePasswordSchema.optional() } : {}),
    ...(fields.replicaSets ? { replicaSets: z.boolean().optional() } : {}),
    ...(fields.sqld
      ? {
          sqldNode: sqldNodeSchema.optional(),
          sqldPrimaryUrl: clearable(sqldPrimaryUrlSchema),
          enableNamespaces: z.boolean().optional(),
        }
      : {}),
    memoryLimit: clearable(memorySchema),
    memoryReservation: clearable(memorySchema),
    cpuLimit: clearable(cpuSchema),
    cpuReservation: clearable(cpuSchema),
    command: clearable(plainTextSchema(4096)),
    args: z.array(plainTextSchema(4096)).max(100).nullish(),
    env: envSchema.nullish(),
    ...swarmUpdateFields,
    /** Ids of the organization's overlay networks on the service's server (networks/ checkNetworkIds). */
    networkIds: networkIdsSchema.optional(),
  });
}

/** What every answer about a service shows (no secret). */
export function summarySchemaOf(kind: DatabaseKind) {
  const { fields, idKey } = databaseKindFacts[kind];
  return z.object({
    [idKey]: z.string(),
    name: z.string(),
    appName: z.string(),
    description: z.string().nullable(),
    dockerImage: z.string(),
    environmentId: z.string(),
    serverId: z.string().nullable(),
    applicationStatus: statusSchema,
    externalPort: z.number().int().nullable(),
    ...(fields.databaseName ? { databaseName: z.string().nullable() } : {}),
    ...(fields.databaseUser ? { databaseUser: z.string().nullable() } : {}),
    ...(fields.replicaSets ? { replicaSets: z.boolean() } : {}),
    ...(fields.sqld
      ? { sqldNode: sqldNodeSchema, sqldPrimaryUrl: z.string().nullable(), enableNamespaces: z.boolean() }
      : {}),
    ...Object.fromEntries(
      (databaseKindFacts[kind].extraPorts ?? []).map((extra) => [extra.field, z.number().int().nullable()]),
    ),
    memoryLimit: z.string().nullable(),
    memoryReservation: z.string().nullable(),
    cpuLimit: z.string().nullable(),
    cpuReservation: z.string().nullable(),
    env: z.string().nullable(),
    command: z.string().nullable(),
    args: z.array(z.string()).nullable(),
    createdAt: z.string(),
  });
}

/** `<kind>.one`: the summary, its place, and (to callers with access to it) secrets and URLs. */
export function detailSchemaOf(kind: DatabaseKind) {
  const { fields } = databaseKindFacts[kind];
  return summarySchemaOf(kind).extend({
    databasePassword: z.string(),
    ...(fields.databaseRootPassword ? { databaseRootPassword: z.string().nullable() } : {}),
    /** Why reconciliation set the status to error (null: a deployment or start/stop set it). */
    applicationStatusMessage: z.string().nullable(),
    ...swarmDetailFields,
    internalConnectionUrl: z.string(),
    externalConnectionUrl: z.string().nullable(),
    environment: z.object({
      environmentId: z.string(),
      name: z.string(),
      project: z.object({ projectId: z.string(), name: z.string() }),
    }),
    /** The service's backups, each as backup.one answers it (Dokploy's `one` carries them too). */
    backups: z.array(backupSchema),
  });
}

/**
 * `<kind>.changePassword`: the user's password (`password`), or with mysql and mariadb root's
 * (`type: "root"`), changed inside the running database as `update` does (credentials.ts).
 */
export function changePasswordInputOf(kind: DatabaseKind) {
  return idInputOf(kind).extend({
    password: databasePasswordSchema,
    ...(databaseKindFacts[kind].fields.databaseRootPassword
      ? { type: z.enum(["user", "root"]).default("user") }
      : {}),
  });
}

/** `<kind>.changeStatus`: the status set by hand (the next deployment or observation replaces it). */
export const changeStatusInputOf = (kind: DatabaseKind) =>
  idInputOf(kind).extend({ applicationStatus: statusSchema });

/** `<kind>.move`: to another environment of the organization the caller may see. */
export const moveInputOf = (kind: DatabaseKind) => idInputOf(kind).extend({ targetEnvironmentId: idSchema });

const searchText = z.string().max(200).optional();

/** `<kind>.search` (Dokploy's filters and paging). */
export const databaseSearchInput = z
  .object({
    q: searchText,
    name: searchText,
    appName: searchText,
    description: searchText,
    projectId: idSchema.optional(),
    environmentId: idSchema.optional(),
    limit: z.number().int().min(1).max(100).default(20),
    offset: z.number().int().min(0).default(0),
  })
  .prefault({});

/** One hit of `<kind>.search`: `<kind>Id` and what a list shows. */
export function searchItemSchemaOf(kind: DatabaseKind) {
  return z.object({
    [databaseKindFacts[kind].idKey]: z.string(),
    name: z.string(),
    appName: z.string(),
    description: z.string().nullable(),
    environmentId: z.string(),
    projectId: z.string(),
    serverId: z.string().nullable(),
    applicationStatus: statusSchema,
    createdAt: z.string(),
  });
}
