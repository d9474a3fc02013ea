/**
 * auth: register, login, logout (spec section 5 leaves the login flow open; see
 * docs/decisions.md). Registration is open only while no user exists, or with the secret token
 * of a pending invitation; closed registration answers alike for taken and free emails. The
 * first registration from another machine needs the set-up token printed at start
 * (auth/setup-token.ts).
 */
import { z } from "zod";
import type { SessionCookies } from "../auth/cookie-session.ts";
import { loginSucceeded, takeLoginAttempt } from "../auth/login-throttle.ts";
import { hashPassword, verifyPassword } from "../auth/password.ts";
import { registerUser } from "../auth/registration.ts";
import { issueSession, revokeSession } from "../auth/session.ts";
import type { ServiceContext } from "../context.ts";
import { displayNameSchema } from "../display-name.ts";
import { ApiError, badRequest } from "../errors.ts";
import { defineRouter, mutation, success, successSchema } from "../procedure.ts";
import { invitationTokenSchema } from "../users/invitations.ts";
import { findLoginOrganization, findUserByEmail } from "../users/repository.ts";
import { emailSchema, getUserView, passwordSchema, userSchema } from "../users/user-view.ts";

const sessionSchema = z.object({ token: z.string(), expiresAt: z.string(), user: userSchema });

/** A new session's token, also set as the dashboard's cookies (auth/cookie-session.ts). */
async function startSession(
  ctx: ServiceContext,
  userId: string,
  organizationId: string,
  cookies: SessionCookies | undefined,
) {
  const { token, expiresAt, sessionId } = await issueSession(ctx, userId, organizationId);
  cookies?.start({ token, sessionId, expiresAt });
  return { token, expiresAt, user: await getUserView(ctx.db, organizationId, userId) };
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
    handler: async ({ ctx, input, sessionCookies, fromLoopback }) => {
      const passwordHash = await hashPassword(input.password);
      const { userId, organizationId } = await registerUser(
        ctx,
        {
          email: input.email,
          name: input.name,
          passwordHash,
          invitationId: input.invitationId,
          token: input.token,
          setupToken: input.setupToken,
        },
        fromLoopback,
      );
      return startSession(ctx, userId, organizationId, sessionCookies);
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
    handler: async ({ ctx, input, clientAddress, sessionCookies }) => {
      await takeLoginAttempt(ctx, input.email, clientAddress);
      const user = await findUserByEmail(ctx.db, input.email);
      const valid = await verifyPassword(input.password, user?.passwordHash ?? (await dummyHash));
      if (!user || !valid) throw new ApiError("UNAUTHORIZED", "Invalid email or password");
      await loginSucceeded(ctx, input.email, clientAddress);
      const organizationId = await findLoginOrganization(ctx.db, user.userId, input.organizationId);
      if (!organizationId) {
        throw new ApiError(
          "UNAUTHORIZED",
          input.organizationId ? "Not a member of this organization" : "This user belongs to no organization",
        );
      }
      return startSession(ctx, user.userId, organizationId, sessionCookies);
    },
  }),

  logout: mutation({
    summary: "Revoke the session token (or session cookie) used for this request, and clear the cookie",
    access: "member",
    input: z.object({}).optional(),
    output: successSchema,
    handler: async ({ ctx, caller, sessionCookies }) => {
      if (caller.credential.kind !== "session") {
        throw badRequest("logout ends a session; delete an API key with user.deleteApiKey");
      }
      await revokeSession(ctx, caller.credential.sessionId);
      sessionCookies?.end();
      return success;
    },
  }),
});
