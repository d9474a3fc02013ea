/**
 * Test support for project and environment tests: users made straight in the database
 * (a member with chosen permission flags, or the owner of a second organization), then
 * logged in through auth.login. Independent of organization.inviteMember.
 */
import { hashPassword } from "../auth/password.ts";
import { newId } from "../crypto/ids.ts";
import type { Role } from "../db/schema.ts";
import type { Session, TestPlatform } from "../testing/harness.ts";

const PASSWORD = "correct-horse-battery";
let counter = 0;

export interface DirectUser {
  email: string;
  /** Join this organization; absent: a new organization owned by the user. */
  organizationId?: string;
  role?: Role;
  canCreateProjects?: boolean;
  canDeleteProjects?: boolean;
}

/** Creates a user (and organization when none is given), and returns a logged-in session. */
export async function createUserDirectly(platform: TestPlatform, user: DirectUser): Promise<Session> {
  const db = platform.ctx.db;
  const userId = newId();
  await db
    .insertInto("users")
    .values({
      userId,
      email: user.email,
      name: `User ${++counter}`,
      image: null,
      passwordHash: await hashPassword(PASSWORD),
    })
    .execute();
  let organizationId = user.organizationId;
  let role = user.role ?? "member";
  if (!organizationId) {
    organizationId = newId();
    role = "owner";
    await db
      .insertInto("organizations")
      .values({ organizationId, name: `${user.email}'s organization`, ownerId: userId })
      .execute();
  }
  const privileged = role !== "member";
  await db
    .insertInto("members")
    .values({
      memberId: newId(),
      organizationId,
      userId,
      role,
      canCreateProjects: user.canCreateProjects ?? privileged,
      canDeleteProjects: user.canDeleteProjects ?? privileged,
      canAccessAuditLog: privileged,
    })
    .execute();
  const login = await platform.mutate("auth.login", {
    email: user.email,
    password: PASSWORD,
    organizationId,
  });
  if (login.status !== 200) throw new Error(`login failed: ${JSON.stringify(login.body)}`);
  return login.body as Session;
}
