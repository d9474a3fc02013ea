/**
 * Test support: a second organization with its own owner, written straight to the database
 * (registration is closed after the first user), then logged in through auth.login.
 */
import { hashPassword } from "../auth/password.ts";
import { newId } from "../crypto/ids.ts";
import type { Session, TestPlatform } from "../testing/harness.ts";

export const TEST_PASSWORD = "correct-horse-battery";

export async function createOtherOrganization(
  platform: TestPlatform,
  email = "other-owner@example.com",
  name = "Other organization",
): Promise<Session & { organizationId: string }> {
  const db = platform.ctx.db;
  const userId = newId();
  const organizationId = newId();
  await db
    .insertInto("users")
    .values({
      userId,
      email,
      name: "Other owner",
      image: null,
      passwordHash: await hashPassword(TEST_PASSWORD),
    })
    .execute();
  await db.insertInto("organizations").values({ organizationId, name, ownerId: userId }).execute();
  await db
    .insertInto("members")
    .values({
      memberId: newId(),
      organizationId,
      userId,
      role: "owner",
      canCreateProjects: true,
      canDeleteProjects: true,
      canAccessAuditLog: true,
    })
    .execute();
  return { ...(await login(platform, email)), organizationId };
}

/** Logs in with the test password, optionally into a given organization. */
export async function login(
  platform: TestPlatform,
  email: string,
  organizationId?: string,
): Promise<Session> {
  const response = await platform.mutate("auth.login", { email, password: TEST_PASSWORD, organizationId });
  if (response.status !== 200) throw new Error(`login failed: ${JSON.stringify(response.body)}`);
  return response.body as Session;
}
