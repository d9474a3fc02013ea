/**
 * auth: register, login, logout (spec section 5 leaves the login flow open; see
 * docs/decisions.md). Registration is open only while no user exists, or with the secret token
 * of a pending invitation; closed registration answers alike for taken and free emails. The
 * first registration from another machine needs the set-up token printed at start
 * (auth/setup-token.ts). Two-factor sign-in (auth/two-factor.ts): once a user enabled it,
 * auth.login's right password answers a challenge token, exchanged for the session by
 * auth.twoFactorVerifyTotp or auth.twoFactorVerifyBackupCode; the twoFactor* procedures of a
 * signed-in session enrol, confirm, disable and renew recovery codes. Dokploy has these only as
 * better-auth routes (/api/auth/two-factor/*), so the names are ours (docs/decisions.md).
 */
import { z } from "zod";
import type { SessionCookies } from "../auth/cookie-session.ts";
import { loginSucceeded, takeLoginAttempt } from "../auth/login-throttle.ts";
import { hashPassword, verifyPassword } from "../auth/password.ts";
import { registerUser } from "../auth/registration.ts";
import { issueSession, revokeSession } from "../auth/session.ts";
import {
  completeChallenge,
  confirmEnrolment,
  createChallenge,
  disableTwoFactor,
  isTwoFactorEnabled,
  type OpenChallenge,
  regenerateRecoveryCodes,
  startEnrolment,
  takeChallengeAttempt,
  useRecoveryCode,
  verifyTotpCode,
} from "../auth/two-factor.ts";
import type { Caller, ServiceContext } from "../context.ts";
import { displayNameSchema } from "../display-name.ts";
import { ApiError, badRequest } from "../errors.ts";
import { defineRouter, mutation, success, successSchema } from "../procedure.ts";
import { invitationTokenSchema } from "../users/invitations.ts";
import { findLoginOrganization, findUserByEmail, findUserCredentials } from "../users/repository.ts";
import { emailSchema, getUserView, passwordSchema, userSchema } from "../users/user-view.ts";

const sessionSchema = z.object({ token: z.string(), expiresAt: z.string(), user: userSchema });

/** auth.login's answer when the account asks for a second factor: no session yet. */
const challengeSchema = z.object({
  twoFactorRequired: z.literal(true),
  /** Exchanged, with a code, by auth.twoFactorVerifyTotp or auth.twoFactorVerifyBackupCode. */
  challengeToken: z.string(),
  expiresAt: z.string(),
});

const totpCodeSchema = z
  .string()
  .trim()
  .regex(/^\d{6}$/, "a TOTP code is 6 digits");
const challengeTokenSchema = z.string().min(1).max(128);
const currentPasswordSchema = z.string().min(1).max(256);

/**
 * Two-factor settings change from a signed-in session and with the password again: a stolen API
 * key or an unattended session cannot turn the second factor off. Wrong passwords count as login
 * attempts (auth/login-throttle.ts).
 */
async function checkPasswordAgain(
  ctx: ServiceContext,
  caller: Caller,
  password: string,
  clientAddress: string | null,
): Promise<void> {
  if (caller.credential.kind !== "session") {
    throw badRequest("Two-factor sign-in is changed from a signed-in session, not with an API key");
  }
  await takeLoginAttempt(ctx, caller.email, clientAddress);
  const user = await findUserCredentials(ctx.db, caller.userId);
  if (!user || !(await verifyPassword(password, user.passwordHash))) {
    throw badRequest("password is incorrect", { fields: ["password"] });
  }
  await loginSucceeded(ctx, caller.email, clientAddress);
}

/** The second factor of a challenge: a wrong code counts against the challenge and the account. */
async function secondFactor(
  ctx: ServiceContext,
  challengeToken: string,
  clientAddress: string | null,
  cookies: SessionCookies | undefined,
  check: (challenge: OpenChallenge) => Promise<boolean>,
) {
  const challenge = await takeChallengeAttempt(ctx, challengeToken);
  await takeLoginAttempt(ctx, challenge.email, clientAddress);
  if (!(await check(challenge))) throw new ApiError("UNAUTHORIZED", "Invalid two-factor code");
  await completeChallenge(ctx, challenge.challengeId);
  await loginSucceeded(ctx, challenge.email, clientAddress);
  return startSession(ctx, challenge.userId, challenge.organizationId, cookies);
}

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
      "Exchange email and password for a session token, or for a two-factor challenge when the account has two-factor sign-in enabled; throttled per account and client address pair with exponential backoff, and per client address (429)",
    access: "public",
    input: z.object({
      email: emailSchema,
      password: z.string().min(1).max(256),
      organizationId: z.string().min(1).optional(),
    }),
    output: z.union([sessionSchema, challengeSchema]),
    handler: async ({ ctx, input, clientAddress, sessionCookies }) => {
      await takeLoginAttempt(ctx, input.email, clientAddress);
      const user = await findUserByEmail(ctx.db, input.email);
      const valid = await verifyPassword(input.password, user?.passwordHash ?? (await dummyHash));
      if (!user || !valid) throw new ApiError("UNAUTHORIZED", "Invalid email or password");
      // The password alone is not a sign-in of an account with a second factor: the throttle
      // forgets this pair's attempts only once the code is right too (also when this login fails
      // for its organization, or guessing codes could reset the count between challenges).
      const twoFactor = await isTwoFactorEnabled(ctx.db, user.userId);
      const organizationId = await findLoginOrganization(ctx.db, user.userId, input.organizationId);
      if (!organizationId) {
        if (!twoFactor) await loginSucceeded(ctx, input.email, clientAddress);
        throw new ApiError(
          "UNAUTHORIZED",
          input.organizationId ? "Not a member of this organization" : "This user belongs to no organization",
        );
      }
      if (twoFactor) {
        return {
          twoFactorRequired: true as const,
          ...(await createChallenge(ctx, user.userId, organizationId)),
        };
      }
      await loginSucceeded(ctx, input.email, clientAddress);
      return startSession(ctx, user.userId, organizationId, sessionCookies);
    },
  }),

  twoFactorVerifyTotp: mutation({
    summary:
      "Finish a two-factor sign-in: exchange auth.login's challenge token and the authenticator's current code for a session (each code is accepted once; throttled like passwords)",
    access: "public",
    input: z.object({ challengeToken: challengeTokenSchema, code: totpCodeSchema }),
    output: sessionSchema,
    handler: ({ ctx, input, clientAddress, sessionCookies }) =>
      secondFactor(ctx, input.challengeToken, clientAddress, sessionCookies, (challenge) =>
        verifyTotpCode(ctx, challenge.userId, input.code),
      ),
  }),

  twoFactorVerifyBackupCode: mutation({
    summary:
      "Finish a two-factor sign-in with one of the recovery codes instead of a TOTP code; a recovery code works once",
    access: "public",
    input: z.object({ challengeToken: challengeTokenSchema, code: z.string().trim().min(1).max(64) }),
    output: sessionSchema,
    handler: ({ ctx, input, clientAddress, sessionCookies }) =>
      secondFactor(ctx, input.challengeToken, clientAddress, sessionCookies, (challenge) =>
        useRecoveryCode(ctx, challenge.userId, input.code),
      ),
  }),

  twoFactorEnable: mutation({
    summary:
      "Start enrolling in two-factor sign-in (password again, from a session): answers the TOTP secret, its otpauth:// URI and ten recovery codes, once; sign-in asks for a code after auth.twoFactorConfirm",
    access: "member",
    input: z.object({ password: currentPasswordSchema }),
    output: z.object({ secret: z.string(), totpURI: z.string(), backupCodes: z.array(z.string()) }),
    handler: async ({ ctx, caller, input, clientAddress }) => {
      await checkPasswordAgain(ctx, caller, input.password, clientAddress);
      return startEnrolment(ctx, caller.userId, caller.email);
    },
  }),

  twoFactorConfirm: mutation({
    summary:
      "Enable two-factor sign-in with the authenticator's first code for the enrolment auth.twoFactorEnable started",
    access: "member",
    input: z.object({ code: totpCodeSchema }),
    output: successSchema,
    handler: async ({ ctx, caller, input }) => {
      if (caller.credential.kind !== "session") {
        throw badRequest("Two-factor sign-in is changed from a signed-in session, not with an API key");
      }
      await confirmEnrolment(ctx, caller.userId, input.code);
      return success;
    },
  }),

  twoFactorDisable: mutation({
    summary:
      "Turn two-factor sign-in off (password again, from a session): the secret and recovery codes are deleted",
    access: "member",
    input: z.object({ password: currentPasswordSchema }),
    output: successSchema,
    handler: async ({ ctx, caller, input, clientAddress }) => {
      await checkPasswordAgain(ctx, caller, input.password, clientAddress);
      await disableTwoFactor(ctx, caller.userId);
      return success;
    },
  }),

  twoFactorGenerateBackupCodes: mutation({
    summary:
      "Replace the recovery codes with ten new ones (password again, from a session); the old ones stop working",
    access: "member",
    input: z.object({ password: currentPasswordSchema }),
    output: z.object({ backupCodes: z.array(z.string()) }),
    handler: async ({ ctx, caller, input, clientAddress }) => {
      await checkPasswordAgain(ctx, caller, input.password, clientAddress);
      return { backupCodes: await regenerateRecoveryCodes(ctx, caller.userId) };
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
