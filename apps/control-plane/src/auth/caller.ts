/**
 * Resolves the caller of a request from `Authorization: Bearer <session JWT | API key>`,
 * `x-api-key`, or else the dashboard's session cookie (auth/cookie-session.ts: then a mutation
 * must carry the session's CSRF token). Credentials in the query string are refused, never read. A credential seen
 * recently is answered from the caller cache (auth/caller-cache.ts), which every change to
 * sessions, keys, memberships and users empties on every control plane.
 */
import type { Caller, ServiceContext } from "../context.ts";
import { ApiError, unauthorized } from "../errors.ts";
import { apiKeyHash, spendsOnUse, useApiKey } from "./api-key.ts";
import { checkCsrf, type RequestCredentials } from "./cookie-session.ts";
import { sessionIdOfToken } from "./session.ts";
import { sessionRateLimiterOf } from "./session-rate-limit.ts";

const QUERY_CREDENTIAL_NAMES = ["apikey", "api_key", "api-key", "x-api-key", "token", "access_token", "key"];

export async function authenticate(
  ctx: ServiceContext,
  headers: RequestCredentials,
  queryNames: Iterable<string>,
): Promise<Caller> {
  for (const name of queryNames) {
    if (QUERY_CREDENTIAL_NAMES.includes(name.toLowerCase())) {
      throw new ApiError(
        "UNAUTHORIZED",
        "Credentials in the query string are not accepted; send Authorization: Bearer <token> or x-api-key",
      );
    }
  }
  const bearer = headers.authorization?.match(/^Bearer\s+(\S+)\s*$/i)?.[1];
  const fromHeader = headers.apiKey?.trim() || bearer;
  const presented = fromHeader || headers.sessionCookie;
  if (!presented) throw unauthorized();
  const fromCookie = !fromHeader;

  const isSession = (fromCookie || !headers.apiKey) && presented.split(".").length === 3;
  if (fromCookie && !isSession) throw unauthorized("Invalid or expired session");
  const hash = apiKeyHash(presented);
  const cacheKey = `${isSession ? "session" : "apiKey"}:${hash}`;
  const cached = await ctx.callers.lookup(cacheKey);
  if (cached) return await limited(ctx, csrfChecked(ctx, cached, fromCookie, headers));

  const generation = ctx.callers.begin();
  const found = isSession ? await sessionCaller(ctx, presented) : await apiKeyCaller(ctx, hash);
  if (found.cacheable) ctx.callers.store(cacheKey, generation, found.caller, found.expiresAt);
  return await limited(ctx, csrfChecked(ctx, found.caller, fromCookie, headers));
}

/** A cookie session's mutation carries the session's CSRF token (never asked of headers' credentials). */
function csrfChecked(
  ctx: ServiceContext,
  caller: Caller,
  fromCookie: boolean,
  headers: RequestCredentials,
): Caller {
  if (fromCookie && headers.unsafe && caller.credential.kind === "session") {
    checkCsrf(ctx, caller.credential.sessionId, headers.csrfToken);
  }
  return caller;
}

/** A session's request spends a token of its bucket (API keys spend theirs in useApiKey). */
async function limited(ctx: ServiceContext, caller: Caller): Promise<Caller> {
  if (caller.credential.kind === "session") {
    await sessionRateLimiterOf(ctx.config)?.take(ctx.db, caller.credential.sessionId);
  }
  return caller;
}

interface FoundCaller {
  caller: Caller;
  /** When the credential expires (null: never). */
  expiresAt: string | null;
  /** False when each request must go to the database (an API key that spends a budget). */
  cacheable: boolean;
}

/** What a caller's membership and user row contribute to Caller. */
const callerColumns = [
  "members.role",
  "members.canCreateProjects",
  "members.canDeleteProjects",
  "members.canAccessAuditLog",
  "members.canAccessToDocker",
  "members.canAccessToTraefikFiles",
  "members.canAccessToApi",
  "members.canAccessToSshKeys",
  "members.canAccessToGitProviders",
  "users.email",
] as const;

/** The caller of a live session and its membership, in one query (it runs on every request). */
async function sessionCaller(ctx: ServiceContext, token: string): Promise<FoundCaller> {
  const sessionId = await sessionIdOfToken(ctx, token);
  if (!sessionId) throw unauthorized("Invalid or expired session");
  const row = await ctx.db
    .selectFrom("sessions")
    .leftJoin("members", (join) =>
      join
        .onRef("members.userId", "=", "sessions.userId")
        .onRef("members.organizationId", "=", "sessions.activeOrganizationId"),
    )
    .leftJoin("users", "users.userId", "members.userId")
    .select(["sessions.userId", "sessions.activeOrganizationId", "sessions.expiresAt", ...callerColumns])
    .where("sessions.sessionId", "=", sessionId)
    .where("sessions.revokedAt", "is", null)
    .executeTakeFirst();
  if (!row || new Date(row.expiresAt) <= ctx.now()) throw unauthorized("Invalid or expired session");
  return {
    caller: memberCaller(row.userId, row.activeOrganizationId, { kind: "session", sessionId }, row),
    // The token's own expiry is the row's, rounded down to the second (session.ts): the earlier.
    expiresAt: new Date(Math.floor(Date.parse(row.expiresAt) / 1000) * 1000).toISOString(),
    cacheable: true,
  };
}

/**
 * The caller of an API key and its membership, read in one query (it runs on every request).
 * The key's expiry, usage and rate limit are checked (and spent) before the membership.
 */
async function apiKeyCaller(ctx: ServiceContext, keyHash: string): Promise<FoundCaller> {
  const row = await ctx.db
    .selectFrom("apiKeys")
    .leftJoin("members", (join) =>
      join
        .onRef("members.userId", "=", "apiKeys.userId")
        .onRef("members.organizationId", "=", "apiKeys.organizationId"),
    )
    .leftJoin("users", "users.userId", "members.userId")
    .selectAll("apiKeys")
    .select(callerColumns)
    .where("apiKeys.keyHash", "=", keyHash)
    .executeTakeFirst();
  const key = await useApiKey(ctx, row);
  return {
    caller: memberCaller(key.userId, key.organizationId, { kind: "apiKey", apiKeyId: key.apiKeyId }, key),
    expiresAt: key.expiresAt,
    cacheable: !spendsOnUse(key),
  };
}

/** The Caller of a credential from its left-joined callerColumns (null: no longer a member). */
function memberCaller(
  userId: string,
  organizationId: string,
  credential: Caller["credential"],
  member: {
    role: Caller["role"] | null;
    email: string | null;
    canCreateProjects: boolean | null;
    canDeleteProjects: boolean | null;
    canAccessAuditLog: boolean | null;
    canAccessToDocker: boolean | null;
    canAccessToTraefikFiles: boolean | null;
    canAccessToApi: boolean | null;
    canAccessToSshKeys: boolean | null;
    canAccessToGitProviders: boolean | null;
  },
): Caller {
  const { role, email } = member;
  if (role === null || email === null) throw unauthorized("Not a member of this organization");
  return {
    userId,
    organizationId,
    credential,
    role,
    email,
    canCreateProjects: member.canCreateProjects ?? false,
    canDeleteProjects: member.canDeleteProjects ?? false,
    canAccessAuditLog: member.canAccessAuditLog ?? false,
    features: {
      docker: member.canAccessToDocker ?? false,
      traefikFiles: member.canAccessToTraefikFiles ?? false,
      api: member.canAccessToApi ?? false,
      sshKeys: member.canAccessToSshKeys ?? false,
      gitProviders: member.canAccessToGitProviders ?? false,
    },
  };
}
