/**
 * Resolves the caller of a request from `Authorization: Bearer <session JWT | API key>` or
 * `x-api-key`. Credentials in the query string are refused, never read.
 */
import type { Caller, ServiceContext } from "../context.ts";
import { ApiError, unauthorized } from "../errors.ts";
import { useApiKey } from "./api-key.ts";
import { sessionIdOfToken } from "./session.ts";

const QUERY_CREDENTIAL_NAMES = ["apikey", "api_key", "api-key", "x-api-key", "token", "access_token", "key"];

export async function authenticate(
  services: ServiceContext,
  headers: { authorization?: string | undefined; apiKey?: string | undefined },
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
  const presented = headers.apiKey?.trim() || bearer;
  if (!presented) throw unauthorized();

  if (!headers.apiKey && presented.split(".").length === 3) return sessionCaller(services, presented);
  const key = await useApiKey(services, presented);
  return membership(services, key.userId, key.organizationId, { kind: "apiKey", apiKeyId: key.apiKeyId });
}

/** What a caller's membership and user row contribute to Caller. */
const callerColumns = [
  "members.role",
  "members.canCreateProjects",
  "members.canDeleteProjects",
  "members.canAccessAuditLog",
  "users.email",
] as const;

/** The caller of a live session and its membership, in one query (it runs on every request). */
async function sessionCaller(services: ServiceContext, token: string): Promise<Caller> {
  const sessionId = await sessionIdOfToken(services, token);
  if (!sessionId) throw unauthorized("Invalid or expired session");
  const row = await services.db
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
  if (!row || new Date(row.expiresAt) <= services.now()) throw unauthorized("Invalid or expired session");
  const { userId, activeOrganizationId, expiresAt: _expiresAt, role, email, ...permissions } = row;
  if (role === null || email === null) throw unauthorized("Not a member of this organization");
  return {
    userId,
    organizationId: activeOrganizationId,
    credential: { kind: "session", sessionId },
    role,
    email,
    canCreateProjects: permissions.canCreateProjects ?? false,
    canDeleteProjects: permissions.canDeleteProjects ?? false,
    canAccessAuditLog: permissions.canAccessAuditLog ?? false,
  };
}

async function membership(
  services: ServiceContext,
  userId: string,
  organizationId: string,
  credential: Caller["credential"],
): Promise<Caller> {
  const row = await services.db
    .selectFrom("members")
    .innerJoin("users", "users.userId", "members.userId")
    .select(callerColumns)
    .where("members.userId", "=", userId)
    .where("members.organizationId", "=", organizationId)
    .executeTakeFirst();
  if (!row) throw unauthorized("Not a member of this organization");
  return { userId, organizationId, credential, ...row };
}
