/**
 * Changes to a member of an organization that take more than one statement: removing them
 * (user.remove) and setting their role, flags and grants (user.assignPermissions).
 */
import type { Caller } from "../context.ts";
import { newId } from "../crypto/ids.ts";
import type { Db } from "../db/database.ts";
import { conflict, forbidden, notFound } from "../errors.ts";
import { type GrantChanges, setMemberGrants } from "../projects/permissions.ts";
import { addMember } from "./invitations.ts";
import {
  findMembership,
  findUserByEmail,
  insertUser,
  lockMemberById,
  lockUsersForRegistration,
  type MembershipChanges,
  removeFromOrganization,
  setMemberRole,
  updateMembership,
} from "./repository.ts";

/**
 * Removes `userId` from the caller's organization. The rules are checked inside the transaction
 * that removes: the owner stays, administrators do not remove themselves, and only the owner
 * removes administrators. Another organization's user is a 404.
 */
export async function removeMember(
  db: Db,
  caller: Pick<Caller, "organizationId" | "userId" | "role">,
  userId: string,
): Promise<void> {
  await db.transaction().execute(async (trx) => {
    const target = await findMembership(trx, caller.organizationId, userId);
    if (!target) throw notFound("User");
    if (target.role === "owner") throw forbidden("The organization owner cannot be removed");
    if (target.userId === caller.userId) throw forbidden("Administrators cannot remove themselves");
    if (target.role === "admin" && caller.role !== "owner") {
      throw forbidden("Only the organization owner can remove administrators");
    }
    await removeFromOrganization(trx, caller.organizationId, target.userId);
  });
}

/** Sets a member's role and flags and their project, environment and service grants together. */
export async function updateMemberPermissions(
  db: Db,
  organizationId: string,
  userId: string,
  changes: MembershipChanges,
  grants: GrantChanges,
): Promise<void> {
  await db.transaction().execute(async (trx) => {
    await updateMembership(trx, organizationId, userId, changes);
    await setMemberGrants(trx, organizationId, userId, grants);
  });
}

/**
 * organization.updateMemberRole: the rules are checked inside the transaction that writes. A
 * member of another organization is a 404; nobody changes their own role; the owner's role is
 * not transferable (to or from: role owner is refused by the input); only the owner changes an
 * administrator's.
 */
export async function changeMemberRole(
  db: Db,
  caller: Pick<Caller, "organizationId" | "userId" | "role">,
  memberId: string,
  role: "admin" | "member",
): Promise<void> {
  await db.transaction().execute(async (trx) => {
    const target = await lockMemberById(trx, caller.organizationId, memberId);
    if (!target) throw notFound("Member");
    if (target.userId === caller.userId) throw forbidden("You cannot change your own role");
    if (target.role === "owner") throw forbidden("The owner role is not transferable");
    if (target.role === "admin" && caller.role !== "owner") {
      throw forbidden("Only the organization owner can change an administrator's role");
    }
    await setMemberRole(trx, target.memberId, role);
  });
}

/**
 * A new user with a password, made a member of `organizationId` (user.createUserWithCredentials);
 * answers the user's id. In the registration lock, so it cannot race auth.register for an email;
 * an email that has an account already is a 409 naming `email` (the user joins through an
 * invitation instead).
 */
export async function createMemberWithPassword(
  db: Db,
  organizationId: string,
  user: { email: string; name: string; passwordHash: string },
): Promise<string> {
  return db.transaction().execute(async (trx) => {
    await lockUsersForRegistration(trx);
    if (await findUserByEmail(trx, user.email)) {
      throw conflict(
        "A user with this email already exists: invite them instead (organization.inviteMember)",
        {
          fields: ["email"],
        },
      );
    }
    const userId = newId();
    await insertUser(trx, { userId, ...user });
    await addMember(trx, organizationId, userId, "member");
    return userId;
  });
}
