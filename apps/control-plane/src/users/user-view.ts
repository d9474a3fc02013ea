/** The user as the API shows it (spec 2.10): never the password hash. */
import { z } from "zod";
import type { Db } from "../db/database.ts";
import { notFound } from "../errors.ts";

export const roleSchema = z.enum(["owner", "admin", "member"]);

export const userSchema = z.object({
  id: z.string(),
  userId: z.string(),
  /** The membership's id in this organization (organization.updateMemberRole takes it). */
  memberId: z.string(),
  email: z.string(),
  name: z.string(),
  /** Dokploy's profile names (user.update), "" when not given. */
  firstName: z.string(),
  lastName: z.string(),
  image: z.string().nullable(),
  role: roleSchema,
  organizationId: z.string(),
  canCreateProjects: z.boolean(),
  canDeleteProjects: z.boolean(),
  canAccessAuditLog: z.boolean(),
  // Dokploy's member permissions (user.assignPermissions); a null list is not restricted.
  canCreateServices: z.boolean(),
  canDeleteServices: z.boolean(),
  canCreateEnvironments: z.boolean(),
  canDeleteEnvironments: z.boolean(),
  canAccessToDocker: z.boolean(),
  canAccessToTraefikFiles: z.boolean(),
  canAccessToAPI: z.boolean(),
  canAccessToSSHKeys: z.boolean(),
  canAccessToGitProviders: z.boolean(),
  accessedProjects: z.array(z.string()).nullable(),
  accessedEnvironments: z.array(z.string()).nullable(),
  accessedServices: z.array(z.string()).nullable(),
  accessedServers: z.array(z.string()).nullable(),
  accessedGitProviders: z.array(z.string()).nullable(),
  createdAt: z.string(),
  /** Whether the user signs in with a second factor (auth/two-factor.ts), as Dokploy's user row says. */
  twoFactorEnabled: z.boolean(),
});
export type UserView = z.infer<typeof userSchema>;

export const emailSchema = z
  .string()
  .trim()
  .toLowerCase()
  .pipe(z.email({ message: "must be a valid email address" }));
export const passwordSchema = z.string().min(8, "must be at least 8 characters").max(256);

/** Selects users of one organization with their membership (toUserView shapes a row). */
export function selectUserViews(db: Db, organizationId: string) {
  return db
    .selectFrom("members")
    .innerJoin("users", "users.userId", "members.userId")
    .select([
      "users.userId as id",
      "users.userId",
      "members.memberId",
      "users.email",
      "users.name",
      "users.firstName",
      "users.lastName",
      "users.image",
      "members.role",
      "members.organizationId",
      "members.canCreateProjects",
      "members.canDeleteProjects",
      "members.canAccessAuditLog",
      "members.canCreateServices",
      "members.canDeleteServices",
      "members.canCreateEnvironments",
      "members.canDeleteEnvironments",
      "members.canAccessToDocker",
      "members.canAccessToTraefikFiles",
      "members.canAccessToApi",
      "members.canAccessToSshKeys",
      "members.canAccessToGitProviders",
      "members.accessedProjects",
      "members.accessedEnvironments",
      "members.accessedServices",
      "members.accessedServers",
      "members.accessedGitProviders",
      "users.createdAt",
      (eb) =>
        eb
          .exists(
            eb
              .selectFrom("userTwoFactor")
              .select("userTwoFactor.userId")
              .whereRef("userTwoFactor.userId", "=", "users.userId")
              .where("userTwoFactor.enabledAt", "is not", null),
          )
          .$castTo<boolean>()
          .as("twoFactorEnabled"),
    ])
    .where("members.organizationId", "=", organizationId);
}

type UserRow = Awaited<ReturnType<ReturnType<typeof selectUserViews>["executeTakeFirstOrThrow"]>>;

/** A selected row as userSchema names it (Dokploy's spelling of the API and SSH flags). */
export function toUserView({ canAccessToApi, canAccessToSshKeys, ...row }: UserRow): UserView {
  return { ...row, canAccessToAPI: canAccessToApi, canAccessToSSHKeys: canAccessToSshKeys };
}

/** The organization's users, in the order they joined. */
export async function listUserViews(db: Db, organizationId: string): Promise<UserView[]> {
  const users = await selectUserViews(db, organizationId)
    .orderBy("members.createdAt", "asc")
    .orderBy("users.userId", "asc")
    .execute();
  return users.map(toUserView);
}

export async function getUserView(db: Db, organizationId: string, userId: string): Promise<UserView> {
  const user = await selectUserViews(db, organizationId)
    .where("users.userId", "=", userId)
    .executeTakeFirst();
  if (!user) throw notFound("User");
  return toUserView(user);
}
