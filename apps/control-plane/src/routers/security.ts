/**
 * security (spec 2.2, 4.7, 5.5): HTTP Basic credentials protecting an application. The password
 * is hashed (APR1) when saved and never stored or shown; every change rewrites the application's
 * Traefik file in the same transaction (the basicAuth middleware comes with the first credential
 * and goes with the last).
 */
import { hashPassword } from "@platform/traefik-config";
import { z } from "zod";
import { findApplication } from "../applications/repository.ts";
import type { Caller, ServiceContext } from "../context.ts";
import { deleteCredential, insertCredential, updateCredential } from "../domains/credentials.ts";
import { findSecurity } from "../domains/repository.ts";
import {
  createSecurityInput,
  securityIdInput,
  securitySchema,
  toSecurityView,
  updateSecurityInput,
} from "../domains/schemas.ts";
import { notFound } from "../errors.ts";
import { defineRouter, mutation, query, success, successSchema } from "../procedure.ts";
import { requireApplicationAccess } from "../projects/permissions.ts";

async function loadSecurity(ctx: ServiceContext, caller: Caller, securityId: string) {
  const security = await findSecurity(ctx.db, caller.organizationId, securityId);
  if (!security) throw notFound("Security");
  await requireApplicationAccess(ctx.db, caller, security.applicationId, "Security");
  return security;
}

export const securityRouter = defineRouter("security", {
  create: mutation({
    summary: "Protect an application with one more HTTP Basic credential",
    access: "member",
    input: createSecurityInput,
    // Dokploy answers true here (update and delete answer the row / success).
    output: z.boolean(),
    handler: async ({ ctx, caller, input }) => {
      const application = await findApplication(ctx.db, caller.organizationId, input.applicationId);
      if (!application) throw notFound("Application");
      await requireApplicationAccess(ctx.db, caller, application.applicationId);
      await insertCredential(ctx, {
        applicationId: application.applicationId,
        username: input.username,
        passwordHash: hashPassword(input.password),
      });
      return true as const;
    },
  }),

  one: query({
    summary: 'One credential; the password is never shown (always "")',
    access: "member",
    input: securityIdInput,
    output: securitySchema,
    handler: async ({ ctx, caller, input }) =>
      toSecurityView(await loadSecurity(ctx, caller, input.securityId)),
  }),

  update: mutation({
    summary: "Change a credential's username or password",
    access: "member",
    input: updateSecurityInput,
    output: successSchema,
    handler: async ({ ctx, caller, input }) => {
      const security = await loadSecurity(ctx, caller, input.securityId);
      const patch = {
        ...(input.username !== undefined ? { username: input.username } : {}),
        ...(input.password !== undefined ? { passwordHash: hashPassword(input.password) } : {}),
      };
      if (Object.keys(patch).length === 0) return success;
      await updateCredential(ctx, security, patch);
      return success;
    },
  }),

  delete: mutation({
    summary: "Remove a credential; without credentials left the application is public again",
    access: "member",
    input: securityIdInput,
    output: successSchema,
    handler: async ({ ctx, caller, input }) => {
      const security = await loadSecurity(ctx, caller, input.securityId);
      await deleteCredential(ctx, security);
      return success;
    },
  }),
});
