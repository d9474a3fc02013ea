/**
 * The instance administrator's organization: the first organization of the instance, made by
 * the first registration. It owns the control plane's own machine (LOCAL_SERVER_ID), that
 * machine's proxy and every instance-wide setting; other organizations deploy on servers they
 * add. Its owner and administrators are the instance administrators.
 *
 * @example
 *   if (!(await isInstanceAdmin(ctx.db, caller))) throw forbidden("…instance administrator");
 */
import type { Caller } from "../context.ts";
import type { Db } from "../db/database.ts";

/** The first organization never changes (it cannot be deleted), so it is read once per database. */
const cache = new WeakMap<Db, string>();

export async function instanceOrganizationId(db: Db): Promise<string | null> {
  const cached = cache.get(db);
  if (cached) return cached;
  const first = await db
    .selectFrom("organizations")
    .select("organizationId")
    .orderBy("createdAt")
    .orderBy("organizationId")
    .limit(1)
    .executeTakeFirst();
  if (first) cache.set(db, first.organizationId);
  return first?.organizationId ?? null;
}

export async function isInstanceOrganization(db: Db, organizationId: string): Promise<boolean> {
  return (await instanceOrganizationId(db)) === organizationId;
}

/** The owner or an administrator of the instance organization. */
export async function isInstanceAdmin(
  db: Db,
  caller: Pick<Caller, "organizationId" | "role">,
): Promise<boolean> {
  return caller.role !== "member" && (await isInstanceOrganization(db, caller.organizationId));
}
