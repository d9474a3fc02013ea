/**
 * security (spec 2.2, 4.7, 5.5): HTTP Basic credentials protecting an application. The password
 * is hashed (APR1) when saved and never stored or shown; every change rewrites the application's
 * Traefik file in the same transaction (the basicAuth middleware comes with the first credential
 * and goes with the last).
 */
import { hashPassword } from "@platform/traefik-config";
import { z } from "zod";
import { findApplication, lockApplication } from "../applications/repository.ts";
import type { Caller, ServiceContext } from "../context.ts";
import { newId } from "../crypto/ids.ts";
import type { Db } from "../db/database.ts";
import { findSecurity, SECURITY_USERNAME_CONSTRAINT } from "../domains/repository.ts";
import {
  createSecurityInput,
  securityIdInput,
  securitySchema,
  toSecurityView,
  updateSecurityInput,
} from "../domains/schemas.ts";
import { conflict, notFound } from "../errors.ts";
import { defineRouter, mutation, query, success, successSchema } from "../procedure.ts";
import { requireApplicationAccess } from "../projects/permissions.ts";
import { isUniqueViolation } from "../projects/repository.ts";
import { syncApplicationProxyWith } from "../proxy/sync.ts";

async function loadSecurity(services: ServiceContext, caller: Caller, securityId: string) {
  const security = await findSecurity(services.db, caller.organizationId, securityId);
  if (!security) throw notFound("Security");
  await requireApplicationAccess(services.db, caller, security.applicationId, "Security");
  return security;
}

/** Runs `change` and the proxy sync in one transaction; a taken username is a 409 naming it. */
async function changeCredentials(
  services: ServiceContext,
  applicationId: string,
  username: string | undefined,
  change: (trx: Db) => Promise<unknown>,
): Promise<void> {
  try {
    await services.db.transaction().execute(async (trx) => {
      await lockApplication(trx, applicationId);
      await change(trx);
      await syncApplicationProxyWith(services, trx, applicationId);
    });
  } catch (error) {
    if (isUniqueViolation(error, SECURITY_USERNAME_CONSTRAINT)) {
      throw conflict(`The username "${username}" already has a credential for this application`, {
        fields: ["username"],
      });
    }
    throw error;
  }
}

export const securityRouter = defineRouter("security", {
  create: mutation({
    summary: "Protect an application with one more HTTP Basic credential",
    access: "member",
    input: createSecurityInput,
    // Dokploy answers true here (update and delete answer the row / success).
    output: z.boolean(),
    handler: async ({ services, caller, input }) => {
      const application = await findApplication(services.db, caller.organizationId, input.applicationId);
      if (!application) throw notFound("Application");
      await requireApplicationAccess(services.db, caller, application.applicationId);
      await changeCredentials(services, application.applicationId, input.username, (trx) =>
        trx
          .insertInto("security")
          .values({
            securityId: newId(),
            applicationId: application.applicationId,
            username: input.username,
            passwordHash: hashPassword(input.password),
          })
          .execute(),
      );
      return true as const;
    },
  }),

  one: query({
    summary: 'One credential; the password is never shown (always "")',
    access: "member",
    input: securityIdInput,
    output: securitySchema,
    handler: async ({ services, caller, input }) =>
      toSecurityView(await loadSecurity(services, caller, input.securityId)),
  }),

  update: mutation({
    summary: "Change a credential's username or password",
    access: "member",
    input: updateSecurityInput,
    output: successSchema,
    handler: async ({ services, caller, input }) => {
      const security = await loadSecurity(services, caller, input.securityId);
      const patch = {
        ...(input.username !== undefined ? { username: input.username } : {}),
        ...(input.password !== undefined ? { passwordHash: hashPassword(input.password) } : {}),
      };
      if (Object.keys(patch).length === 0) return success;
      await changeCredentials(services, security.applicationId, input.username, (trx) =>
        trx.updateTable("security").set(patch).where("securityId", "=", security.securityId).execute(),
      );
      return success;
    },
  }),

  delete: mutation({
    summary: "Remove a credential; without credentials left the application is public again",
    access: "member",
    input: securityIdInput,
    output: successSchema,
    handler: async ({ services, caller, input }) => {
      const security = await loadSecurity(services, caller, input.securityId);
      await changeCredentials(services, security.applicationId, undefined, (trx) =>
        trx.deleteFrom("security").where("securityId", "=", security.securityId).execute(),
      );
      return success;
    },
  }),
});
