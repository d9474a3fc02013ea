/**
 * auth: register, login, logout (spec section 5 leaves the login flow open; see
 * docs/decisions.md). Registration is open only while no user exists, or with the secret token
 * of a pending invitation; closed registration answers alike for taken and free emails. The
 * first registration from another machine needs the set-up token printed at start
 * (auth/setup-token.ts).
 */
import { sql } from "kysely";
import { z } from "zod";
import type { SessionCookies } from "../auth/cookie-session.ts";
import { loginSucceeded, takeLoginAttempt } from "../auth/login-throttle.ts";
import { hashPassword, verifyPassword } from "../auth/password.ts";
import { issueSession, revokeSession } from "../auth/session.ts";
import { requireSetupToken, spendSetupTokens } from "../auth/setup-token.ts";
import type { ServiceContext } from "../context.ts";
import { newId } from "../crypto/ids.ts";
import type { Db } from "../db/database.ts";
import { displayNameSchema } from "../display-name.ts";
import { ApiError, badRequest, conflict, forbidden } from "../errors.ts";
import { defineRouter, mutation, success, successSchema } from "../procedure.ts";
import {
  addMember,
  findPendingInvitationByToken,
  invitationTokenSchema,
  setInvitationStatus,
} from "../users/invitations.ts";
import { emailSchema, getUserView, passwordSchema, userSchema } from "../users/user-view.ts";

const sessionSchema = z.object({ token: z.string(), expiresAt: z.string(), user: userSchema });

/** A new session's token, also set as the dashboard's cookies (auth/cookie-session.ts). */
async function startSession(
  services: ServiceContext,
  userId: string,
  organizationId: string,
  cookies: SessionCookies | undefined,
) {
  const { token, expiresAt, sessionId } = await issueSession(services, userId, organizationId);
  cookies?.start({ token, sessionId, expiresAt });
  return { token, expiresAt, user: await getUserView(services.db, organizationId, userId) };
}

async function insertUser(
  trx: Db,
  userId: string,
  user: { email: string; name: string },
  passwordHash: string,
): Promise<void> {
  await trx
    .insertInto("users")
    .values({ userId, email: user.email, name: user.name, image: null, passwordHash })
    .execute();
}

// Compared against when the email is unknown, so both failures take the same time.
const dummyHash = hashPassword("not-a-real-password");

export const authRouter = defineRouter("auth", {
  register: mutation({
    summary: "Create the first user and organization, or accept an invitation",
    access: "public",
    input: z.object({
      email: emailSchema,
      password: passwordSchema,
      name: displayNameSchema,
      invitationId: z.string().min(1).max(64).optional(),
      /** The invitation's secret token, from organization.inviteMember. */
      token: invitationTokenSchema.optional(),
      /**
       * The set-up token the control plane printed at start: needed for the first registration
       * when it does not come from this machine (not in Dokploy's input).
       */
      setupToken: z.string().min(1).max(256).optional(),
    }),
    output: sessionSchema,
    handler: async ({ services, input, sessionCookies, fromLoopback }) => {
      const passwordHash = await hashPassword(input.password);
      const { userId, organizationId } = await services.db.transaction().execute(async (trx) => {
        // Serializes concurrent registrations so only one can become the first owner.
        await sql`lock table users in share row exclusive mode`.execute(trx);
        const anyUser = await trx.selectFrom("users").select("userId").limit(1).executeTakeFirst();
        const userId = newId();

        if (!anyUser) {
          if (input.invitationId || input.token)
            throw badRequest("No invitation can exist before the first user", {
              fields: [input.token ? "token" : "invitationId"],
            });
          if (!fromLoopback) await requireSetupToken(trx, input.setupToken);
          await spendSetupTokens(trx);
          const organizationId = newId();
          await insertUser(trx, userId, input, passwordHash);
          await trx
            .insertInto("organizations")
            .values({ organizationId, name: `${input.name}'s organization`, ownerId: userId })
            .execute();
          await trx
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
          return { userId, organizationId };
        }

        // Nothing here depends on whether the email is taken: no one learns which accounts exist.
        if (input.token === undefined) {
          if (input.invitationId !== undefined) {
            throw badRequest(
              "token is required: the invitation's secret token from the inviting administrator",
              {
                fields: ["token"],
              },
            );
          }
          throw forbidden(
            "Registration is closed: ask an administrator of an organization for an invitation",
          );
        }
        const invitation = await findPendingInvitationByToken(
          trx,
          { token: input.token, email: input.email, invitationId: input.invitationId },
          services.now().toISOString(),
        );
        if (!invitation) {
          throw new ApiError("NOT_FOUND", "No pending invitation with this token for this email", {
            fields: ["token"],
          });
        }
        const taken = await trx
          .selectFrom("users")
          .select("userId")
          .where("email", "=", input.email)
          .executeTakeFirst();
        if (taken) {
          throw conflict(
            "A user with this email already exists: log in and use organization.acceptInvitation",
            {
              fields: ["email"],
            },
          );
        }
        await insertUser(trx, userId, input, passwordHash);
        await addMember(trx, invitation.organizationId, userId, invitation.role);
        await setInvitationStatus(trx, invitation.invitationId, "accepted");
        return { userId, organizationId: invitation.organizationId };
      });
      return startSession(services, userId, organizationId, sessionCookies);
    },
  }),

  login: mutation({
    summary:
      "Exchange email and password for a session token; throttled per account and client address pair with exponential backoff, and per client address (429)",
    access: "public",
    input: z.object({
      email: emailSchema,
      password: z.string().min(1).max(256),
      organizationId: z.string().min(1).optional(),
    }),
    output: sessionSchema,
    handler: async ({ services, input, clientAddress, sessionCookies }) => {
      await takeLoginAttempt(services, input.email, clientAddress);
      const user = await services.db
        .selectFrom("users")
        .select(["userId", "passwordHash"])
        .where("email", "=", input.email)
        .executeTakeFirst();
      const valid = await verifyPassword(input.password, user?.passwordHash ?? (await dummyHash));
      if (!user || !valid) throw new ApiError("UNAUTHORIZED", "Invalid email or password");
      await loginSucceeded(services, input.email, clientAddress);
      let memberships = services.db
        .selectFrom("members")
        .innerJoin("organizations", "organizations.organizationId", "members.organizationId")
        .select("members.organizationId")
        .where("members.userId", "=", user.userId);
      if (input.organizationId)
        memberships = memberships.where("members.organizationId", "=", input.organizationId);
      // The user's own organization first, then the oldest membership.
      const membership = await memberships
        .orderBy(sql`organizations.owner_id = ${user.userId}`, "desc")
        .orderBy("members.createdAt", "asc")
        .executeTakeFirst();
      if (!membership) {
        throw new ApiError(
          "UNAUTHORIZED",
          input.organizationId ? "Not a member of this organization" : "This user belongs to no organization",
        );
      }
      return startSession(services, user.userId, membership.organizationId, sessionCookies);
    },
  }),

  logout: mutation({
    summary: "Revoke the session token (or session cookie) used for this request, and clear the cookie",
    access: "member",
    input: z.object({}).optional(),
    output: successSchema,
    handler: async ({ services, caller, sessionCookies }) => {
      if (caller.credential.kind !== "session") {
        throw badRequest("logout ends a session; delete an API key with user.deleteApiKey");
      }
      await revokeSession(services, caller.credential.sessionId);
      sessionCookies?.end();
      return success;
    },
  }),
});
