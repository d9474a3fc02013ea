/**
 * Session tokens: a JWT (HS256, jose) naming a session row. Logout revokes the row, so a
 * token stops working before it expires.
 */
import { jwtVerify, SignJWT } from "jose";
import type { ServiceContext } from "../context.ts";
import { newId } from "../crypto/ids.ts";

const ISSUER = "platform";

export async function issueSession(
  ctx: ServiceContext,
  userId: string,
  organizationId: string,
): Promise<{ token: string; expiresAt: string; sessionId: string }> {
  const sessionId = newId();
  const expiresAt = new Date(ctx.now().getTime() + ctx.config.sessionTtlSeconds * 1000);
  await ctx.db
    .insertInto("sessions")
    .values({ sessionId, userId, activeOrganizationId: organizationId, expiresAt: expiresAt.toISOString() })
    .execute();
  const token = await new SignJWT({ sid: sessionId })
    .setProtectedHeader({ alg: "HS256" })
    .setSubject(userId)
    .setIssuer(ISSUER)
    .setIssuedAt()
    .setExpirationTime(Math.floor(expiresAt.getTime() / 1000))
    .sign(ctx.sessionSigningKey);
  return { token, expiresAt: expiresAt.toISOString(), sessionId };
}

/**
 * The session id a token names when its signature, issuer and expiry hold, else null. The
 * caller still checks the session row (revoked, expired) in its own query.
 */
export async function sessionIdOfToken(ctx: ServiceContext, token: string): Promise<string | null> {
  try {
    const { payload } = await jwtVerify(token, ctx.sessionSigningKey, {
      issuer: ISSUER,
      algorithms: ["HS256"],
      currentDate: ctx.now(),
    });
    return typeof payload.sid === "string" ? payload.sid : null;
  } catch {
    return null;
  }
}

export async function revokeSession(ctx: ServiceContext, sessionId: string): Promise<void> {
  await ctx.db
    .updateTable("sessions")
    .set({ revokedAt: ctx.now().toISOString() })
    .where("sessionId", "=", sessionId)
    .execute();
}
