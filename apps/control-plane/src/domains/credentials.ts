/**
 * Writes of an application's HTTP Basic credentials (the security router). Each runs with the
 * rewrite of the application's Traefik file in one transaction, under the application's lock (the
 * basicAuth middleware comes with the first credential and goes with the last); a username the
 * application already has is a 409 naming `username`.
 */
import type { Updateable } from "kysely";
import { lockApplication } from "../applications/repository.ts";
import type { ServiceContext } from "../context.ts";
import { newId } from "../crypto/ids.ts";
import type { Db } from "../db/database.ts";
import type { SecurityTable } from "../db/schema.ts";
import { conflict } from "../errors.ts";
import { isUniqueViolation } from "../projects/repository.ts";
import { syncApplicationProxyWith } from "../proxy/sync.ts";
import { SECURITY_USERNAME_CONSTRAINT, type Security } from "./repository.ts";

/** Runs `change` and the proxy sync in one transaction; a taken username is a 409 naming it. */
async function changeCredentials(
  ctx: ServiceContext,
  applicationId: string,
  username: string | undefined,
  change: (trx: Db) => Promise<unknown>,
): Promise<void> {
  try {
    await ctx.db.transaction().execute(async (trx) => {
      await lockApplication(trx, applicationId);
      await change(trx);
      await syncApplicationProxyWith(ctx, trx, applicationId);
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

/** Adds a credential to an application already found in the caller's organization. */
export function insertCredential(
  ctx: ServiceContext,
  values: Pick<Security, "applicationId" | "username" | "passwordHash">,
): Promise<void> {
  return changeCredentials(ctx, values.applicationId, values.username, (trx) =>
    trx
      .insertInto("security")
      .values({ securityId: newId(), ...values })
      .execute(),
  );
}

export function updateCredential(
  ctx: ServiceContext,
  security: Pick<Security, "securityId" | "applicationId">,
  patch: Updateable<SecurityTable>,
): Promise<void> {
  return changeCredentials(ctx, security.applicationId, patch.username, (trx) =>
    trx.updateTable("security").set(patch).where("securityId", "=", security.securityId).execute(),
  );
}

export function deleteCredential(
  ctx: ServiceContext,
  security: Pick<Security, "securityId" | "applicationId">,
): Promise<void> {
  return changeCredentials(ctx, security.applicationId, undefined, (trx) =>
    trx.deleteFrom("security").where("securityId", "=", security.securityId).execute(),
  );
}
