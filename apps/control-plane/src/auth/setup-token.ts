/**
 * The set-up token of an unclaimed instance (issue 37 finding 11): the control plane listens on
 * every interface, and the first user to register owns the instance. So while no user exists,
 * each start stores the SHA-256 of a set-up token (the installer's PLATFORM_SETUP_TOKEN, or a
 * random one) in the database, where every control plane on it finds it, and prints the token
 * to its own console. auth.register then needs one of these tokens (`setupToken`) for the first
 * registration from another machine; one from this machine (loopback, not through a proxy:
 * auth/client-address.ts fromLoopback) needs none, as the README's curl walk-through shows.
 * The first registration deletes every token, whichever way it came.
 */
import type { ServiceContext } from "../context.ts";
import { randomToken, sha256Hex } from "../crypto/ids.ts";
import type { Db } from "../db/database.ts";
import { ApiError } from "../errors.ts";

/**
 * At start: the set-up token this control plane prints, stored by its hash, when no user exists
 * yet; null once the instance is claimed.
 */
export async function issueSetupToken(ctx: ServiceContext): Promise<string | null> {
  const anyUser = await ctx.db.selectFrom("users").select("userId").limit(1).executeTakeFirst();
  if (anyUser) return null;
  const token = ctx.config.setupToken ?? randomToken();
  await ctx.db
    .insertInto("setupTokens")
    .values({ tokenHash: sha256Hex(token), createdAt: ctx.now().toISOString() })
    .onConflict((oc) => oc.column("tokenHash").doNothing())
    .execute();
  return token;
}

/** Refuses the first registration from another machine without a set-up token printed at start. */
export async function requireSetupToken(trx: Db, token: string | undefined): Promise<void> {
  const found =
    token !== undefined &&
    (await trx
      .selectFrom("setupTokens")
      .select("tokenHash")
      .where("tokenHash", "=", sha256Hex(token))
      .executeTakeFirst());
  if (!found) {
    throw new ApiError(
      "FORBIDDEN",
      `${token === undefined ? "setupToken is required" : "setupToken is not this instance's set-up token"}: the first account registered from another machine needs the set-up token the control plane printed when it started ("Set-up token: …"; deploy/install.sh prints it at its end)`,
      { fields: ["setupToken"] },
    );
  }
}

/** The instance is claimed: no set-up token is good any more. */
export async function spendSetupTokens(trx: Db): Promise<void> {
  await trx.deleteFrom("setupTokens").execute();
}
