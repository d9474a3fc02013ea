/**
 * SQL for users, memberships, organizations, sessions and API key listings. Plain functions
 * taking the database (or a transaction) first; routers hold the rules, this file the queries.
 */
import { sql } from "kysely";
import type { Db } from "../db/database.ts";
import type { Role } from "../db/schema.ts";

export function findMembership(db: Db, organizationId: string, userId: string) {
  return db
    .selectFrom("members")
    .select(["memberId", "role", "userId", "organizationId"])
    .where("organizationId", "=", organizationId)
    .where("userId", "=", userId)
    .executeTakeFirst();
}

export async function countMemberships(db: Db, userId: string): Promise<number> {
  const row = await db
    .selectFrom("members")
    .select((eb) => eb.fn.countAll<number>().as("count"))
    .where("userId", "=", userId)
    .executeTakeFirstOrThrow();
  return Number(row.count);
}

export function findUserCredentials(db: Db, userId: string) {
  return db
    .selectFrom("users")
    .select(["userId", "email", "passwordHash"])
    .where("userId", "=", userId)
    .executeTakeFirst();
}

export function findUserByEmail(db: Db, email: string) {
  return db
    .selectFrom("users")
    .select(["userId", "passwordHash"])
    .where("email", "=", email)
    .executeTakeFirst();
}

export async function anyUserExists(db: Db): Promise<boolean> {
  return (await db.selectFrom("users").select("userId").limit(1).executeTakeFirst()) !== undefined;
}

/** Serializes registrations until the transaction ends, so only one can become the first owner. */
export async function lockUsersForRegistration(trx: Db): Promise<void> {
  await sql`lock table users in share row exclusive mode`.execute(trx);
}

export async function insertUser(
  db: Db,
  user: { userId: string; email: string; name: string; passwordHash: string },
): Promise<void> {
  await db
    .insertInto("users")
    .values({ ...user, image: null })
    .execute();
}

/**
 * The organization a login opens: `organizationId` when given and the user is a member of it,
 * else the user's own organization, else the oldest membership.
 */
export async function findLoginOrganization(
  db: Db,
  userId: string,
  organizationId?: string | undefined,
): Promise<string | undefined> {
  let memberships = db
    .selectFrom("members")
    .innerJoin("organizations", "organizations.organizationId", "members.organizationId")
    .select("members.organizationId")
    .where("members.userId", "=", userId);
  if (organizationId) memberships = memberships.where("members.organizationId", "=", organizationId);
  // The default organization (organization.setDefault) first, then one the user owns, then the oldest.
  const membership = await memberships
    .orderBy("members.isDefault", "desc")
    .orderBy(sql`organizations.owner_id = ${userId}`, "desc")
    .orderBy("members.createdAt", "asc")
    .executeTakeFirst();
  return membership?.organizationId;
}

/** Whether another user already has this (normalized) email. */
export async function emailTakenByOther(db: Db, email: string, userId: string): Promise<boolean> {
  const row = await db
    .selectFrom("users")
    .select("userId")
    .where("email", "=", email)
    .where("userId", "<>", userId)
    .executeTakeFirst();
  return row !== undefined;
}

/** The user's email change awaiting confirmation (user.update), if any. */
export function findPendingEmailRequest(db: Db, userId: string) {
  return db
    .selectFrom("users")
    .select(["pendingEmail", "pendingEmailTokenHash", "pendingEmailExpiresAt"])
    .where("userId", "=", userId)
    .executeTakeFirst();
}

/** Stores the hash of the token the confirmation mail carries and its expiry (null: none sent). */
export async function setPendingEmailToken(
  db: Db,
  userId: string,
  token: { hash: string; expiresAt: string } | null,
): Promise<void> {
  await db
    .updateTable("users")
    .set({ pendingEmailTokenHash: token?.hash ?? null, pendingEmailExpiresAt: token?.expiresAt ?? null })
    .where("userId", "=", userId)
    .execute();
}

/** Applies the pending email whose confirmation token hashes to `tokenHash`, and forgets the request. */
export async function confirmPendingEmail(
  db: Db,
  userId: string,
  email: string,
  tokenHash: string,
): Promise<void> {
  await db
    .updateTable("users")
    .set({ email, pendingEmail: null, pendingEmailTokenHash: null, pendingEmailExpiresAt: null })
    .where("userId", "=", userId)
    .where("pendingEmailTokenHash", "=", tokenHash)
    .execute();
}

/** Sets a user's email (an instance administrator's change) and drops any pending one. */
export async function changeUserEmail(db: Db, userId: string, email: string): Promise<void> {
  await db.updateTable("users").set({ email, pendingEmail: null }).where("userId", "=", userId).execute();
}

export interface UserChanges {
  name?: string | undefined;
  firstName?: string | undefined;
  lastName?: string | undefined;
  pendingEmail?: string | undefined;
  image?: string | null | undefined;
  passwordHash?: string | undefined;
}

export async function updateUser(db: Db, userId: string, changes: UserChanges): Promise<void> {
  const values = Object.fromEntries(Object.entries(changes).filter(([, value]) => value !== undefined));
  if (Object.keys(values).length === 0) return;
  await db.updateTable("users").set(values).where("userId", "=", userId).execute();
}

/** Revokes every live session of a user except one (the one changing the password). */
export async function revokeOtherSessions(
  db: Db,
  userId: string,
  keepSessionId: string | null,
  nowIso: string,
): Promise<void> {
  let query = db
    .updateTable("sessions")
    .set({ revokedAt: nowIso })
    .where("userId", "=", userId)
    .where("revokedAt", "is", null);
  if (keepSessionId) query = query.where("sessionId", "<>", keepSessionId);
  await query.execute();
}

export interface MembershipChanges {
  role?: Role | undefined;
  canCreateProjects?: boolean | undefined;
  canDeleteProjects?: boolean | undefined;
  canAccessAuditLog?: boolean | undefined;
}

export async function updateMembership(
  db: Db,
  organizationId: string,
  userId: string,
  changes: MembershipChanges,
): Promise<void> {
  const values = Object.fromEntries(Object.entries(changes).filter(([, value]) => value !== undefined));
  if (Object.keys(values).length === 0) return;
  await db
    .updateTable("members")
    .set(values)
    .where("organizationId", "=", organizationId)
    .where("userId", "=", userId)
    .execute();
}

/**
 * Removes a user from one organization: the membership, the user's API keys and sessions of
 * that organization, and the user row itself when no membership is left. Run in a transaction.
 */
export async function removeFromOrganization(
  trx: Db,
  organizationId: string,
  userId: string,
): Promise<{ userDeleted: boolean }> {
  await trx
    .deleteFrom("members")
    .where("organizationId", "=", organizationId)
    .where("userId", "=", userId)
    .execute();
  await trx
    .deleteFrom("apiKeys")
    .where("organizationId", "=", organizationId)
    .where("userId", "=", userId)
    .execute();
  await trx
    .deleteFrom("sessions")
    .where("activeOrganizationId", "=", organizationId)
    .where("userId", "=", userId)
    .execute();
  if ((await countMemberships(trx, userId)) > 0) return { userDeleted: false };
  // Cascades to the user's remaining sessions, keys and the invitations they sent.
  await trx.deleteFrom("users").where("userId", "=", userId).execute();
  return { userDeleted: true };
}

/** A user's API keys as the API lists them: never the key or its hash. */
export function listApiKeys(db: Db, userId: string) {
  return db
    .selectFrom("apiKeys")
    .select(["apiKeyId as id", "name", "prefix", "start", "organizationId", "createdAt", "expiresAt"])
    .where("userId", "=", userId)
    .orderBy("createdAt", "asc")
    .orderBy("apiKeyId", "asc")
    .execute();
}

/** Deletes one of the user's own keys; false when no such key belongs to the user. */
export async function deleteOwnApiKey(db: Db, userId: string, apiKeyId: string): Promise<boolean> {
  const deleted = await db
    .deleteFrom("apiKeys")
    .where("apiKeyId", "=", apiKeyId)
    .where("userId", "=", userId)
    .returning("apiKeyId")
    .executeTakeFirst();
  return deleted !== undefined;
}

/** The organizations a user belongs to, with the user's role in each. */
export function selectOrganizationsOf(db: Db, userId: string) {
  return db
    .selectFrom("members")
    .innerJoin("organizations", "organizations.organizationId", "members.organizationId")
    .select([
      "organizations.organizationId as id",
      "organizations.name",
      "organizations.ownerId",
      "organizations.createdAt",
      "members.role",
    ])
    .where("members.userId", "=", userId);
}

export function listOrganizationsOf(db: Db, userId: string) {
  return selectOrganizationsOf(db, userId)
    .orderBy("members.createdAt", "asc")
    .orderBy("organizations.organizationId", "asc")
    .execute();
}

export function findOrganizationOf(db: Db, userId: string, organizationId: string) {
  return selectOrganizationsOf(db, userId)
    .where("organizations.organizationId", "=", organizationId)
    .executeTakeFirst();
}

/** Makes `organizationId` the user's default organization (the only one), in one statement. */
export async function setDefaultOrganization(db: Db, userId: string, organizationId: string): Promise<void> {
  await db
    .updateTable("members")
    .set({ isDefault: sql<boolean>`organization_id = ${organizationId}` })
    .where("userId", "=", userId)
    .execute();
}

/** A membership of the organization by its memberId, locked for the caller's transaction. */
export function lockMemberById(trx: Db, organizationId: string, memberId: string) {
  return trx
    .selectFrom("members")
    .select(["memberId", "userId", "role"])
    .where("memberId", "=", memberId)
    .where("organizationId", "=", organizationId)
    .forUpdate()
    .executeTakeFirst();
}

export async function setMemberRole(db: Db, memberId: string, role: Role): Promise<void> {
  await db.updateTable("members").set({ role }).where("memberId", "=", memberId).execute();
}

export async function renameOrganization(db: Db, organizationId: string, name: string): Promise<void> {
  await db.updateTable("organizations").set({ name }).where("organizationId", "=", organizationId).execute();
}

export async function setSessionOrganization(
  db: Db,
  sessionId: string,
  organizationId: string,
): Promise<void> {
  await db
    .updateTable("sessions")
    .set({ activeOrganizationId: organizationId })
    .where("sessionId", "=", sessionId)
    .execute();
}
