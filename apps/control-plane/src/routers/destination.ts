/**
 * destination (Dokploy's router; issue 26): S3-compatible buckets backups are written to.
 * Administrators write and test them (as Dokploy: destinations belong with the organization's
 * settings), members read them. The secret access key is write-only: sealed at rest and in no
 * response. Another organization's destination is a 404. testConnection writes a probe
 * object, reads it back and deletes it.
 */
import { probeStorage, StorageProbeError } from "@platform/object-storage";
import { z } from "zod";
import {
  checkEndpointProbe,
  createDestinationInput,
  deleteDestination,
  destinationIdInput,
  destinationSchema,
  findDestination,
  insertDestination,
  listDestinations,
  storageOf,
  testConnectionInput,
  toDestinationView,
  updateDestination,
  updateDestinationInput,
} from "../backups/destinations.ts";
import { ApiError, badRequest, notFound } from "../errors.ts";
import { defineRouter, mutation, noInput, query, success, successSchema } from "../procedure.ts";

/**
 * What a failed test may say: the S3 error code when the server answered as S3 does
 * (NoSuchBucket, InvalidAccessKeyId, SignatureDoesNotMatch, AccessDenied…), else only "could
 * not be reached" (refused, reset, timed out, TLS: a port's state is not told).
 */
export function storageFailureCategory(error: StorageProbeError): string {
  const cause = error.cause as { $metadata?: { httpStatusCode?: number }; name?: string; Code?: string };
  if (cause?.$metadata?.httpStatusCode && (cause.Code || cause.name)) {
    const code = String(cause.Code ?? cause.name);
    return /^[A-Za-z]{2,64}$/.test(code) ? code : `HTTP ${cause.$metadata.httpStatusCode}`;
  }
  if (error.step === "read the probe object back" && !(cause instanceof Error && "code" in cause)) {
    return "the object read back differs";
  }
  return "could not be reached";
}

export const destinationRouter = defineRouter("destination", {
  create: mutation({
    summary: "Store an S3-compatible destination (the secret access key is encrypted and never shown again)",
    access: "admin",
    input: createDestinationInput,
    output: destinationSchema,
    handler: async ({ ctx, caller, input }) =>
      toDestinationView(await insertDestination(ctx, caller.organizationId, input)),
  }),

  all: query({
    summary: "The organization's destinations, newest first (without secrets)",
    access: "member",
    input: noInput,
    output: z.array(destinationSchema),
    handler: async ({ ctx, caller }) =>
      (await listDestinations(ctx.db, caller.organizationId)).map(toDestinationView),
  }),

  one: query({
    summary: "One destination (without its secret access key)",
    access: "member",
    input: destinationIdInput,
    output: destinationSchema,
    handler: async ({ ctx, caller, input }) => {
      const row = await findDestination(ctx.db, caller.organizationId, input.destinationId);
      if (!row) throw notFound("Destination");
      return toDestinationView(row);
    },
  }),

  update: mutation({
    summary: "Change a destination; an absent secretAccessKey keeps the stored one",
    access: "admin",
    input: updateDestinationInput,
    output: successSchema,
    handler: async ({ ctx, caller, input }) => {
      const { destinationId, ...fields } = input;
      if (!(await updateDestination(ctx, caller.organizationId, destinationId, fields))) {
        throw notFound("Destination");
      }
      return success;
    },
  }),

  remove: mutation({
    summary: "Delete a destination and the backups that write to it (the stored files stay in the bucket)",
    access: "admin",
    input: destinationIdInput,
    output: successSchema,
    handler: async ({ ctx, caller, input }) => {
      if (!(await deleteDestination(ctx.db, caller.organizationId, input.destinationId))) {
        throw notFound("Destination");
      }
      await ctx.backups.reschedule();
      return success;
    },
  }),

  testConnection: mutation({
    summary: "Write, read back and delete a probe object in the bucket (nothing is stored)",
    access: "admin",
    input: testConnectionInput,
    output: successSchema,
    handler: async ({ ctx, caller, input }) => {
      const { destinationId, ...fields } = input;
      let secretAccessKey = fields.secretAccessKey;
      if (destinationId !== undefined) {
        const stored = await findDestination(ctx.db, caller.organizationId, destinationId);
        if (!stored) throw notFound("Destination");
        secretAccessKey ??= (await storageOf(ctx, stored)).secretAccessKey;
      }
      if (secretAccessKey === undefined) {
        throw badRequest("secretAccessKey is required without a destinationId", {
          fields: ["secretAccessKey"],
        });
      }
      await checkEndpointProbe(ctx, caller.organizationId, fields);
      try {
        await probeStorage({ ...fields, secretAccessKey });
      } catch (error) {
        if (!(error instanceof StorageProbeError)) throw error;
        const category = storageFailureCategory(error);
        ctx.logger.info({ destinationId, step: error.step, category }, "destination test failed");
        throw new ApiError("BAD_REQUEST", `Destination test failed: could not ${error.step}: ${category}`, {
          category,
        });
      }
      return success;
    },
  }),
});
