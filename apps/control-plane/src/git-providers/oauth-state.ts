/**
 * The OAuth `state` of the GitLab and Gitea authorizations (issue 37 finding 5). The provider's id
 * is public to every member (application.one shows it), so it cannot be the state: a state is
 * random (256 bits), minted by `<kind>.startAuthorization` for the member who asked, bound to that
 * provider and organization, valid for ten minutes and for one callback; only its sha256 is
 * stored. The callback takes it (DELETE … RETURNING, so with two control planes one state still
 * works once) and checks that its member may still use Git providers before the provider is
 * contacted.
 */
import type { Caller, ServiceContext } from "../context.ts";
import { randomToken, sha256Hex } from "../crypto/ids.ts";
import { badRequest, forbidden } from "../errors.ts";
import { privileged } from "../projects/permissions.ts";
import type { ProviderRecord } from "./repository.ts";

export const OAUTH_STATE_TTL_MS = 10 * 60 * 1000;

type OAuthKind = "gitlab" | "gitea";

/** A new state for `caller`'s authorization of `provider` (expired states are dropped meanwhile). */
export async function mintOAuthState(
  ctx: ServiceContext,
  caller: Caller,
  provider: ProviderRecord,
): Promise<{ state: string; expiresAt: string }> {
  const state = randomToken(32);
  const now = ctx.now();
  const expiresAt = new Date(now.getTime() + OAUTH_STATE_TTL_MS).toISOString();
  await ctx.db.transaction().execute(async (trx) => {
    await trx.deleteFrom("oauthStates").where("expiresAt", "<=", now.toISOString()).execute();
    await trx
      .insertInto("oauthStates")
      .values({
        stateHash: sha256Hex(state),
        kind: provider.row.providerType as OAuthKind,
        providerId: provider.row.providerId,
        organizationId: provider.row.organizationId,
        userId: caller.userId,
        expiresAt,
      })
      .execute();
  });
  return { state, expiresAt };
}

const REFUSED =
  "The callback's state is unknown, expired or already used: start the authorization again from the Git providers page";

/**
 * Takes a state presented to the `kind` callback and answers the provider and organization it was
 * minted for. Unknown, expired or used is a 400; a member who no longer reaches Git providers in
 * that organization is a 403. Taken means gone: a second callback with it is refused.
 */
export async function takeOAuthState(
  ctx: ServiceContext,
  kind: OAuthKind,
  state: string,
): Promise<{ providerId: string; organizationId: string }> {
  const taken = await ctx.db
    .deleteFrom("oauthStates")
    .where("stateHash", "=", sha256Hex(state))
    .where("kind", "=", kind)
    .returning(["providerId", "organizationId", "userId", "expiresAt"])
    .executeTakeFirst();
  if (!taken || Date.parse(taken.expiresAt) <= ctx.now().getTime()) {
    throw badRequest(REFUSED, { fields: ["state"] });
  }
  const member = await ctx.db
    .selectFrom("members")
    .select(["role", "canAccessToGitProviders"])
    .where("organizationId", "=", taken.organizationId)
    .where("userId", "=", taken.userId)
    .executeTakeFirst();
  if (!member || !(privileged(member) || member.canAccessToGitProviders)) {
    throw forbidden("The member who started this authorization no longer has access to Git providers");
  }
  return { providerId: taken.providerId, organizationId: taken.organizationId };
}
