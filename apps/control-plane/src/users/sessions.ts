/**
 * A user's own sign-in sessions as the API shows them (user.listSessions, user.session,
 * user.revokeSession). A session's token is a JWT naming the row (auth/session.ts): it is
 * answered once, by auth.login, and never stored nor shown here; a session is named by its id.
 */
import { z } from "zod";
import type { Db } from "../db/database.ts";

export const sessionSchema = z.object({
  id: z.string(),
  userId: z.string(),
  activeOrganizationId: z.string(),
  createdAt: z.string(),
  expiresAt: z.string(),
  /** Whether this is the session the request came with. */
  current: z.boolean(),
});
export type SessionView = z.infer<typeof sessionSchema>;

function toView(
  row: {
    sessionId: string;
    userId: string;
    activeOrganizationId: string;
    createdAt: unknown;
    expiresAt: string;
  },
  currentSessionId: string | null,
): SessionView {
  return {
    id: row.sessionId,
    userId: row.userId,
    activeOrganizationId: row.activeOrganizationId,
    createdAt: new Date(row.createdAt as string).toISOString(),
    expiresAt: new Date(row.expiresAt).toISOString(),
    current: row.sessionId === currentSessionId,
  };
}

function liveSessions(db: Db, userId: string, nowIso: string) {
  return db
    .selectFrom("sessions")
    .select(["sessionId", "userId", "activeOrganizationId", "createdAt", "expiresAt"])
    .where("userId", "=", userId)
    .where("revokedAt", "is", null)
    .where("expiresAt", ">", nowIso);
}

/** The user's sessions that still work (not revoked, not expired), newest first. */
export async function listLiveSessions(
  db: Db,
  userId: string,
  currentSessionId: string | null,
  nowIso: string,
): Promise<SessionView[]> {
  const rows = await liveSessions(db, userId, nowIso)
    .orderBy("createdAt", "desc")
    .orderBy("sessionId", "asc")
    .execute();
  return rows.map((row) => toView(row, currentSessionId));
}

/** One live session of the user, or undefined (another user's session is never found). */
export async function findLiveSession(
  db: Db,
  userId: string,
  sessionId: string,
  nowIso: string,
): Promise<SessionView | undefined> {
  const row = await liveSessions(db, userId, nowIso).where("sessionId", "=", sessionId).executeTakeFirst();
  return row ? toView(row, sessionId) : undefined;
}

/** Revokes one live session of the user; false when the user has no such live session. */
export async function revokeOwnSession(
  db: Db,
  userId: string,
  sessionId: string,
  nowIso: string,
): Promise<boolean> {
  const result = await db
    .updateTable("sessions")
    .set({ revokedAt: nowIso })
    .where("sessionId", "=", sessionId)
    .where("userId", "=", userId)
    .where("revokedAt", "is", null)
    .where("expiresAt", ">", nowIso)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}
