/**
 * Resolves the caller of a request from `Authorization: Bearer <session JWT | API key>` or
 * `x-api-key`. Credentials in the query string are refused, never read.
 */
import type { Caller, ServiceContext } from "../context.ts";
import { ApiError, unauthorized } from "../errors.ts";
import { useApiKey } from "./api-key.ts";
import { verifySessionToken } from "./session.ts";

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

  if (!headers.apiKey && presented.split(".").length === 3) {
    const session = await verifySessionToken(services, presented);
    if (!session) throw unauthorized("Invalid or expired session");
    return membership(services, session.userId, session.activeOrganizationId, {
      kind: "session",
      sessionId: session.sessionId,
    });
  }
  const key = await useApiKey(services, presented);
  return membership(services, key.userId, key.organizationId, { kind: "apiKey", apiKeyId: key.apiKeyId });
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
    .select([
      "members.role",
      "members.canCreateProjects",
      "members.canDeleteProjects",
      "members.canAccessAuditLog",
      "users.email",
    ])
    .where("members.userId", "=", userId)
    .where("members.organizationId", "=", organizationId)
    .executeTakeFirst();
  if (!row) throw unauthorized("Not a member of this organization");
  return { userId, organizationId, credential, ...row };
}
