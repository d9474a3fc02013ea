/** The user as the API shows it (spec 2.10): never the password hash. */
import { z } from "zod";
import type { Db } from "../db/database.ts";
import { notFound } from "../errors.ts";

export const roleSchema = z.enum(["owner", "admin", "member"]);

export const userSchema = z.object({
  id: z.string(),
  userId: z.string(),
  email: z.string(),
  name: z.string(),
  image: z.string().nullable(),
  role: roleSchema,
  organizationId: z.string(),
  canCreateProjects: z.boolean(),
  canDeleteProjects: z.boolean(),
  canAccessAuditLog: z.boolean(),
  createdAt: z.string(),
});
export type UserView = z.infer<typeof userSchema>;

export const emailSchema = z
  .string()
  .trim()
  .toLowerCase()
  .pipe(z.email({ message: "must be a valid email address" }));
export const passwordSchema = z.string().min(8, "must be at least 8 characters").max(256);

/** Selects users of one organization with their membership, shaped as userSchema. */
export function selectUserViews(db: Db, organizationId: string) {
  return db
    .selectFrom("members")
    .innerJoin("users", "users.userId", "members.userId")
    .select([
      "users.userId as id",
      "users.userId",
      "users.email",
      "users.name",
      "users.image",
      "members.role",
      "members.organizationId",
      "members.canCreateProjects",
      "members.canDeleteProjects",
      "members.canAccessAuditLog",
      "users.createdAt",
    ])
    .where("members.organizationId", "=", organizationId);
}

export async function getUserView(db: Db, organizationId: string, userId: string): Promise<UserView> {
  const user = await selectUserViews(db, organizationId)
    .where("users.userId", "=", userId)
    .executeTakeFirst();
  if (!user) throw notFound("User");
  return user;
}
