/**
 * SQL for invitations: create, list, cancel, accept. An invitation is pending until accepted
 * or canceled; a pending one past its expiry is shown as `expired` and can no longer be used.
 * It is accepted only with its secret token, answered once to the inviting administrator and
 * kept as a SHA-256. The invited email must match too (as in Dokploy), but it never accepts an
 * invitation by itself.
 */

import { z } from "zod";
import { newId, randomToken, sha256Hex } from "../crypto/ids.ts";
import type { Db } from "../db/database.ts";
import type { Invitation, Role } from "../db/schema.ts";
import { conflict, notFound } from "../errors.ts";
import { findMembership } from "./repository.ts";

export const INVITATION_TTL_MS = 7 * 24 * 3600 * 1000;

/** The secret that accepts an invitation (Dokploy's invitation link carries it as `token`). */
export const invitationTokenSchema = z.string().min(1).max(256);

export type InvitationDisplayStatus = Invitation["status"] | "expired";

/** The status a client sees: a pending invitation past its expiry is `expired`. */
export function displayStatus(invitation: Pick<Invitation, "status" | "expiresAt">, now: Date) {
  if (invitation.status === "pending" && new Date(invitation.expiresAt) <= now) return "expired" as const;
  return invitation.status;
}

/** A new pending invitation and its secret token (the only time the token exists in clear). */
export async function createInvitation(
  db: Db,
  values: { organizationId: string; email: string; role: Role; inviterId: string; expiresAt: string },
): Promise<{ invitation: Invitation; token: string }> {
  const token = randomToken(32);
  const invitation = await db
    .insertInto("invitations")
    .values({ invitationId: newId(), status: "pending", tokenHash: sha256Hex(token), ...values })
    .returningAll()
    .executeTakeFirstOrThrow();
  return { invitation, token };
}

/** Whether the organization already has a member with this email. */
export async function isMemberEmail(db: Db, organizationId: string, email: string): Promise<boolean> {
  const row = await db
    .selectFrom("members")
    .innerJoin("users", "users.userId", "members.userId")
    .select("members.memberId")
    .where("members.organizationId", "=", organizationId)
    .where("users.email", "=", email)
    .executeTakeFirst();
  return row !== undefined;
}

export async function hasLivePendingInvitation(
  db: Db,
  organizationId: string,
  email: string,
  nowIso: string,
): Promise<boolean> {
  const row = await db
    .selectFrom("invitations")
    .select("invitationId")
    .where("organizationId", "=", organizationId)
    .where("email", "=", email)
    .where("status", "=", "pending")
    .where("expiresAt", ">", nowIso)
    .executeTakeFirst();
  return row !== undefined;
}

export function listInvitations(db: Db, organizationId: string) {
  return db
    .selectFrom("invitations")
    .selectAll()
    .where("organizationId", "=", organizationId)
    .orderBy("createdAt", "desc")
    .orderBy("invitationId", "asc")
    .execute();
}

export function findInvitation(db: Db, organizationId: string, invitationId: string) {
  return db
    .selectFrom("invitations")
    .selectAll()
    .where("organizationId", "=", organizationId)
    .where("invitationId", "=", invitationId)
    .executeTakeFirst();
}

export async function setInvitationStatus(
  db: Db,
  invitationId: string,
  status: Invitation["status"],
): Promise<void> {
  await db.updateTable("invitations").set({ status }).where("invitationId", "=", invitationId).execute();
}

/**
 * Gives the invitation a new secret token, kept only once `send` (the mail carrying it) has
 * succeeded: both run in one transaction, so a failed send leaves the old token working.
 */
export async function replaceInvitationToken(
  db: Db,
  invitation: Pick<Invitation, "organizationId" | "invitationId">,
  token: string,
  send: () => Promise<void>,
): Promise<void> {
  await db.transaction().execute(async (trx) => {
    await trx
      .updateTable("invitations")
      .set({ tokenHash: sha256Hex(token) })
      .where("organizationId", "=", invitation.organizationId)
      .where("invitationId", "=", invitation.invitationId)
      .execute();
    await send();
  });
}

/** The pending, unexpired invitation of a secret token (as a list), with its organization. */
export async function pendingInvitationsByToken(db: Db, token: string, nowIso: string) {
  const rows = await db
    .selectFrom("invitations")
    .innerJoin("organizations", "organizations.organizationId", "invitations.organizationId")
    .select([
      "invitations.invitationId",
      "invitations.email",
      "invitations.role",
      "invitations.status",
      "invitations.expiresAt",
      "organizations.organizationId",
      "organizations.name as organizationName",
      "organizations.createdAt as organizationCreatedAt",
    ])
    .where("invitations.tokenHash", "=", sha256Hex(token))
    .where("invitations.status", "=", "pending")
    .where("invitations.expiresAt", ">", nowIso)
    .orderBy("invitations.createdAt", "desc")
    .orderBy("invitations.invitationId", "asc")
    .execute();
  return rows.map((row) => ({
    id: row.invitationId,
    email: row.email,
    role: row.role,
    status: row.status,
    expiresAt: row.expiresAt,
    organization: {
      id: row.organizationId,
      name: row.organizationName,
      createdAt: row.organizationCreatedAt,
    },
  }));
}

/**
 * The pending, unexpired invitation for `email` that a secret token accepts, locked for update;
 * when the client also names the invitation, it must be that one.
 */
export function findPendingInvitationByToken(
  trx: Db,
  accept: { token: string; email: string; invitationId?: string | undefined },
  nowIso: string,
) {
  const { token, email, invitationId } = accept;
  let query = trx
    .selectFrom("invitations")
    .selectAll()
    .where("tokenHash", "=", sha256Hex(token))
    .where("email", "=", email)
    .where("status", "=", "pending")
    .where("expiresAt", ">", nowIso);
  if (invitationId !== undefined) query = query.where("invitationId", "=", invitationId);
  return query.forUpdate().executeTakeFirst();
}

export async function addMember(trx: Db, organizationId: string, userId: string, role: Role): Promise<void> {
  await trx.insertInto("members").values({ memberId: newId(), organizationId, userId, role }).execute();
}

/** Makes `userId` a member with the invitation's role and marks the invitation accepted. */
export async function joinByInvitation(trx: Db, invitation: Invitation, userId: string): Promise<void> {
  await addMember(trx, invitation.organizationId, userId, invitation.role);
  await setInvitationStatus(trx, invitation.invitationId, "accepted");
}

/**
 * An existing user joins the organization of the pending invitation `accept` names, in one
 * transaction holding the invitation's lock; answers that organization's id. 404 without such an
 * invitation, 409 naming invitationId when the user is a member already.
 */
export function acceptInvitation(
  db: Db,
  accept: { token: string; email: string; invitationId?: string | undefined },
  userId: string,
  nowIso: string,
): Promise<string> {
  return db.transaction().execute(async (trx) => {
    const invitation = await findPendingInvitationByToken(trx, accept, nowIso);
    if (!invitation) throw notFound("Pending invitation");
    if (await findMembership(trx, invitation.organizationId, userId)) {
      throw conflict("You are already a member of this organization", { fields: ["invitationId"] });
    }
    await joinByInvitation(trx, invitation, userId);
    return invitation.organizationId;
  });
}

/**
 * The invitation a secret token names, whatever its status, with whether it has expired and
 * whether its email already has an account (Dokploy's getUserByToken: the invitation page picks
 * sign-in or registration by it); undefined without one. Found by the token only.
 */
export async function invitationByToken(db: Db, token: string, now: Date) {
  const invitation = await db
    .selectFrom("invitations")
    .select(["invitationId", "email", "status", "role", "inviterId", "expiresAt"])
    .where("tokenHash", "=", sha256Hex(token))
    .executeTakeFirst();
  if (!invitation) return undefined;
  const account = await db
    .selectFrom("users")
    .select("userId")
    .where("email", "=", invitation.email)
    .executeTakeFirst();
  return {
    id: invitation.invitationId,
    email: invitation.email,
    status: invitation.status,
    role: invitation.role,
    inviterId: invitation.inviterId,
    isExpired: new Date(invitation.expiresAt) <= now,
    userAlreadyExists: account !== undefined,
  };
}
