/**
 * The SQL of redirects. A redirect is found through its application -> environment -> project,
 * so another organization's is not. Every write rewrites the application's Traefik file in the
 * same transaction, under the application's lock: a refused file leaves the rows as they were.
 */
import type { Selectable, Updateable } from "kysely";
import { lockApplication } from "../applications/repository.ts";
import type { ServiceContext } from "../context.ts";
import { newId } from "../crypto/ids.ts";
import type { Db } from "../db/database.ts";
import { ownedBy } from "../db/owned.ts";
import type { RedirectTable } from "../db/schema.ts";
import { syncApplicationProxyWith } from "../proxy/sync.ts";

export type Redirect = Selectable<RedirectTable>;

export function findRedirect(
  db: Db,
  organizationId: string,
  redirectId: string,
): Promise<Redirect | undefined> {
  return ownedBy(
    db
      .selectFrom("redirects")
      .innerJoin("applications", "applications.applicationId", "redirects.applicationId"),
    "applications.environmentId",
    organizationId,
  )
    .selectAll("redirects")
    .where("redirects.redirectId", "=", redirectId)
    .executeTakeFirst();
}

/** An application's redirects, in the order their middlewares apply. */
export function listApplicationRedirects(db: Db, applicationId: string): Promise<Redirect[]> {
  return db
    .selectFrom("redirects")
    .selectAll()
    .where("applicationId", "=", applicationId)
    .orderBy("uniqueConfigKey", "asc")
    .execute();
}

/** Runs `change` and rewrites the application's Traefik file in one transaction. */
async function changeRedirects(
  ctx: ServiceContext,
  applicationId: string,
  change: (trx: Db) => Promise<unknown>,
): Promise<void> {
  await ctx.db.transaction().execute(async (trx) => {
    await lockApplication(trx, applicationId);
    await change(trx);
    await syncApplicationProxyWith(ctx, trx, applicationId);
  });
}

/** Adds a redirect to an application already found in the caller's organization. */
export function insertRedirect(
  ctx: ServiceContext,
  values: Pick<Redirect, "applicationId" | "regex" | "replacement" | "permanent">,
): Promise<void> {
  return changeRedirects(ctx, values.applicationId, (trx) =>
    trx
      .insertInto("redirects")
      .values({ redirectId: newId(), ...values })
      .execute(),
  );
}

export function updateRedirect(
  ctx: ServiceContext,
  redirect: Pick<Redirect, "redirectId" | "applicationId">,
  patch: Updateable<RedirectTable>,
): Promise<void> {
  return changeRedirects(ctx, redirect.applicationId, (trx) =>
    trx.updateTable("redirects").set(patch).where("redirectId", "=", redirect.redirectId).execute(),
  );
}

export function deleteRedirect(
  ctx: ServiceContext,
  redirect: Pick<Redirect, "redirectId" | "applicationId">,
): Promise<void> {
  return changeRedirects(ctx, redirect.applicationId, (trx) =>
    trx.deleteFrom("redirects").where("redirectId", "=", redirect.redirectId).execute(),
  );
}
