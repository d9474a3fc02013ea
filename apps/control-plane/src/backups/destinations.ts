/**
 * Destinations (Dokploy's destination): S3-compatible buckets of an organization. The secret
 * access key is sealed with the SecretBox bound to its row and organization and opened only to
 * reach the bucket (storageOf). Every endpoint goes through the outbound guard before anything
 * is sent to it: the own-address rule too for a connection test (a probe must not tell the
 * platform's own ports apart), the guard alone before a backup, a listing or a restore.
 */
import type { ObjectStorage } from "@platform/agent-protocol";
import { z } from "zod";
import type { Caller, ServiceContext } from "../context.ts";
import { newId } from "../crypto/ids.ts";
import type { SecretContext } from "../crypto/secret-box.ts";
import type { Db } from "../db/database.ts";
import type { Destination } from "../db/schema.ts";
import { displayNameSchema } from "../display-name.ts";
import { ApiError } from "../errors.ts";
import { checkOutboundHost, OutboundRefusedError } from "../outbound/guard.ts";
import { checkUserTarget } from "../outbound/own-addresses.ts";

export const idSchema = z.string().min(1).max(100);

/** "" (AWS's endpoint for the region) or an http(s) URL of a host and optional port. */
export const endpointSchema = z
  .string()
  .trim()
  .max(512)
  .superRefine((value, context) => {
    if (value === "") return;
    let url: URL;
    try {
      url = new URL(value);
    } catch {
      context.addIssue({ code: "custom", message: "must be an http(s) URL such as https://s3.example.com" });
      return;
    }
    if (url.protocol !== "http:" && url.protocol !== "https:") {
      context.addIssue({ code: "custom", message: "must use http:// or https://" });
    } else if (
      url.username ||
      url.password ||
      url.search ||
      url.hash ||
      (url.pathname !== "/" && url.pathname !== "")
    ) {
      context.addIssue({
        code: "custom",
        message: "must be only a scheme, a host and a port (no path, user or query)",
      });
    }
  })
  .transform((value) => (value === "" ? "" : new URL(value).origin));

/** S3's bucket naming rules. */
const bucketSchema = z
  .string()
  .trim()
  .regex(
    /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/,
    "must be an S3 bucket name (3-63 lower-case letters, digits, '.' and '-')",
  );
const regionSchema = z
  .string()
  .trim()
  .max(64)
  .regex(/^[a-z0-9-]*$/, "must be a region name such as us-east-1 (lower-case letters, digits and '-')");
const accessKeySchema = z
  .string()
  .min(1, "must not be empty")
  .max(256)
  .regex(/^[^\s\p{Cc}]+$/u, "must not contain whitespace or control characters");
const secretKeySchema = z
  .string()
  .min(1, "must not be empty")
  .max(1024)
  .regex(/^[^\s\p{Cc}]+$/u, "must not contain whitespace or control characters");
/** A label (AWS, Cloudflare, Minio, …): every destination is reached through the S3 API. */
const providerSchema = z
  .string()
  .trim()
  .max(100)
  .regex(/^[\w .()-]*$/, "must be a provider name such as AWS or Minio");

export const createDestinationInput = z.object({
  name: displayNameSchema,
  provider: providerSchema,
  accessKey: accessKeySchema,
  secretAccessKey: secretKeySchema,
  bucket: bucketSchema,
  region: regionSchema,
  endpoint: endpointSchema,
});

export const updateDestinationInput = z.object({
  destinationId: idSchema,
  name: displayNameSchema.optional(),
  provider: providerSchema.optional(),
  accessKey: accessKeySchema.optional(),
  secretAccessKey: secretKeySchema.optional(),
  bucket: bucketSchema.optional(),
  region: regionSchema.optional(),
  endpoint: endpointSchema.optional(),
});

/** The create fields and an optional stored destination, whose secret a missing one stands for. */
export const testConnectionInput = createDestinationInput.extend({
  destinationId: idSchema.optional(),
  secretAccessKey: secretKeySchema.optional(),
});

export const destinationIdInput = z.object({ destinationId: idSchema });

/** A destination as every response shows it: never the secret access key. */
export const destinationSchema = z.object({
  destinationId: z.string(),
  name: z.string(),
  provider: z.string(),
  accessKey: z.string(),
  bucket: z.string(),
  region: z.string(),
  endpoint: z.string(),
  organizationId: z.string(),
  createdAt: z.string(),
});

export type DestinationFields = z.infer<typeof createDestinationInput>;

const sealContext = (row: { destinationId: string; organizationId: string }): SecretContext => ({
  table: "destinations",
  rowId: row.destinationId,
  organizationId: row.organizationId,
});

export function toDestinationView(row: Destination): z.infer<typeof destinationSchema> {
  const { secretAccessKeySealed: _sealed, ...view } = row;
  return view;
}

export async function insertDestination(
  ctx: ServiceContext,
  organizationId: string,
  fields: DestinationFields,
): Promise<Destination> {
  const destinationId = newId();
  const { secretAccessKey, ...rest } = fields;
  return ctx.db
    .insertInto("destinations")
    .values({
      ...rest,
      destinationId,
      organizationId,
      secretAccessKeySealed: ctx.secrets.encrypt(
        secretAccessKey,
        sealContext({ destinationId, organizationId }),
      ),
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export function findDestination(
  db: Db,
  organizationId: string,
  destinationId: string,
): Promise<Destination | undefined> {
  return db
    .selectFrom("destinations")
    .selectAll()
    .where("destinationId", "=", destinationId)
    .where("organizationId", "=", organizationId)
    .executeTakeFirst();
}

export function listDestinations(db: Db, organizationId: string): Promise<Destination[]> {
  return db
    .selectFrom("destinations")
    .selectAll()
    .where("organizationId", "=", organizationId)
    .orderBy("createdAt", "desc")
    .orderBy("destinationId", "desc")
    .execute();
}

export async function updateDestination(
  ctx: ServiceContext,
  organizationId: string,
  destinationId: string,
  fields: Partial<DestinationFields>,
): Promise<Destination | undefined> {
  const { secretAccessKey, ...rest } = fields;
  const patch: Partial<Omit<Destination, "destinationId" | "organizationId" | "createdAt">> = { ...rest };
  if (secretAccessKey !== undefined) {
    patch.secretAccessKeySealed = ctx.secrets.encrypt(
      secretAccessKey,
      sealContext({ destinationId, organizationId }),
    );
  }
  if (Object.keys(patch).length === 0) return findDestination(ctx.db, organizationId, destinationId);
  return ctx.db
    .updateTable("destinations")
    .set(patch)
    .where("destinationId", "=", destinationId)
    .where("organizationId", "=", organizationId)
    .returningAll()
    .executeTakeFirst();
}

/** Deletes the destination and (foreign keys) its backups; false when there is none. */
export async function deleteDestination(
  db: Db,
  organizationId: string,
  destinationId: string,
): Promise<boolean> {
  const deleted = await db
    .deleteFrom("destinations")
    .where("destinationId", "=", destinationId)
    .where("organizationId", "=", organizationId)
    .executeTakeFirst();
  return deleted.numDeletedRows > 0n;
}

/** The host and port a destination's requests go to. */
export function endpointTarget(storage: { endpoint: string; region: string }): {
  host: string;
  port: number;
} {
  if (!storage.endpoint) return { host: `s3.${storage.region || "us-east-1"}.amazonaws.com`, port: 443 };
  const url = new URL(storage.endpoint);
  const port = url.port ? Number(url.port) : url.protocol === "https:" ? 443 : 80;
  return { host: url.hostname.replace(/^\[|\]$/g, ""), port };
}

/** A refused endpoint as a 400 naming `endpoint`. */
function refused(error: unknown): never {
  if (error instanceof OutboundRefusedError) {
    throw new ApiError("BAD_REQUEST", `endpoint is not allowed: ${error.message}`, { fields: ["endpoint"] });
  }
  throw error;
}

/** Before a connection test: the guard and the own-address rule. */
export async function checkEndpointProbe(
  ctx: ServiceContext,
  organizationId: string,
  storage: { endpoint: string; region: string },
): Promise<void> {
  await checkUserTarget(ctx, organizationId, endpointTarget(storage)).catch(refused);
}

/**
 * The destination's bucket with its secret opened, for the agent or this process; throws a 400
 * naming `endpoint` when the outbound guard refuses its host.
 */
export async function storageOf(ctx: ServiceContext, destination: Destination): Promise<ObjectStorage> {
  await checkOutboundHost(endpointTarget(destination).host, ctx.config.outboundAllow).catch(refused);
  return {
    endpoint: destination.endpoint,
    region: destination.region,
    bucket: destination.bucket,
    accessKey: destination.accessKey,
    secretAccessKey: ctx.secrets.decrypt(destination.secretAccessKeySealed, sealContext(destination)),
  };
}

/** The organization's destination named in an input, or a 404 naming destinationId. */
export async function requireDestination(
  ctx: ServiceContext,
  caller: Caller,
  destinationId: string,
): Promise<Destination> {
  const destination = await findDestination(ctx.db, caller.organizationId, destinationId);
  if (!destination) {
    throw new ApiError("NOT_FOUND", "Destination not found (destinationId)", { fields: ["destinationId"] });
  }
  return destination;
}
