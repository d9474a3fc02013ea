/**
 * Session tokens: a JWT (HS256, jose) naming a session row. Logout revokes the row, so a
 * token stops working before it expires.
 */
import { jwtVerify, SignJWT } from "jose";
import type { ServiceContext } from "../context.ts";
import { newId } from "../crypto/ids.ts";

const ISSUER = "platform";

export async function issueSession(
  services: ServiceContext,
  userId: string,
  organizationId: string,
): Promise<{ token: string; expiresAt: string; sessionId: string }> {
  const sessionId = newId();
  const expiresAt = new Date(services.now().getTime() + services.config.sessionTtlSeconds * 1000);
  await services.db
    .insertInto("sessions")
    .values({ sessionId, userId, activeOrganizationId: organizationId, expiresAt: expiresAt.toISOString() })
    .execute();
  const token = await new SignJWT({ sid: sessionId })
    .setProtectedHeader({ alg: "HS256" })
    .setSubject(userId)
    .setIssuer(ISSUER)
    .setIssuedAt()
    .setExpirationTime(Math.floor(expiresAt.getTime() / 1000))
    .sign(services.sessionSigningKey);
  return { token, expiresAt: expiresAt.toISOString(), sessionId };
}

/** The live session a token names, or null when the token is bad, expired or revoked. */
export async function verifySessionToken(services: ServiceContext, token: string) {
  let sessionId: unknown;
  try {
    const { payload } = await jwtVerify(token, services.sessionSigningKey, {
      issuer: ISSUER,
      algorithms: ["HS256"],
      currentDate: services.now(),
    });
    sessionId = payload.sid;
  } catch {
    return null;
  }
  if (typeof sessionId !== "string") return null;
  const session = await services.db
    .selectFrom("sessions")
    .selectAll()
    .where("sessionId", "=", sessionId)
    .where("revokedAt", "is", null)
    .executeTakeFirst();
  if (!session || new Date(session.expiresAt) <= services.now()) return null;
  return session;
}

export async function revokeSession(services: ServiceContext, sessionId: string): Promise<void> {
  await services.db
    .updateTable("sessions")
    .set({ revokedAt: services.now().toISOString() })
    .where("sessionId", "=", sessionId)
    .execute();
}
