/**
 * Two-factor sign-in (issue 41 item 8): TOTP (RFC 6238, SHA-1, 6 digits, 30 s, the otpauth
 * library) with recovery codes.
 * - Enrolment: auth.twoFactorEnable (password again) creates a secret, sealed at rest with the
 *   SecretBox and answered only then, and ten recovery codes (stored as SHA-256, each spent
 *   once); the enrolment takes effect with auth.twoFactorConfirm's first valid code. Until then
 *   sign-in asks for nothing more.
 * - Sign-in: once enabled, auth.login's right password answers a challenge token instead of a
 *   session: the half-signed-in state. It is no credential (neither a session JWT nor an API
 *   key, so authenticate() refuses it), lives TWO_FACTOR_CHALLENGE_SECONDS, allows
 *   TWO_FACTOR_CHALLENGE_ATTEMPTS codes and is spent by the one that succeeds; every code also
 *   counts as a login attempt of the account (auth/login-throttle.ts).
 * - A TOTP code is accepted one step either side of now and only for a step after the last one
 *   accepted (no replay, also across concurrent requests: a conditional update decides).
 * API keys are not affected: they are credentials of their own, created from a signed-in session.
 */
import { randomBytes } from "node:crypto";
import { Secret, TOTP } from "otpauth";
import type { ServiceContext } from "../context.ts";
import { newId, randomToken, sha256Hex } from "../crypto/ids.ts";
import type { Db } from "../db/database.ts";
import { ApiError, badRequest, conflict } from "../errors.ts";

export const TWO_FACTOR_ISSUER = "Platform";
export const TWO_FACTOR_CHALLENGE_SECONDS = 5 * 60;
export const TWO_FACTOR_CHALLENGE_ATTEMPTS = 5;
export const RECOVERY_CODE_COUNT = 10;
const TOTP_SETTINGS = { algorithm: "SHA1", digits: 6, period: 30 } as const;

/** The secret's SecretBox binding: a user belongs to no one organization. */
const sealContext = (userId: string) => ({ table: "user_two_factor", rowId: userId, organizationId: "" });

const RECOVERY_ALPHABET = "abcdefghjkmnpqrstuvwxyz23456789";

/** A recovery code as shown: two groups of five characters (about 49 bits). */
function newRecoveryCode(): string {
  const bytes = randomBytes(10);
  const chars = Array.from(bytes, (b) => RECOVERY_ALPHABET[b % RECOVERY_ALPHABET.length]).join("");
  return `${chars.slice(0, 5)}-${chars.slice(5)}`;
}

/** Case, spaces and dashes do not matter when a recovery code is typed back. */
export function normalizeRecoveryCode(code: string): string {
  return code.toLowerCase().replace(/[\s-]/g, "");
}

const recoveryCodeHash = (code: string) => sha256Hex(`recovery:${normalizeRecoveryCode(code)}`);

export async function isTwoFactorEnabled(db: Db, userId: string): Promise<boolean> {
  const row = await db
    .selectFrom("userTwoFactor")
    .select("userId")
    .where("userId", "=", userId)
    .where("enabledAt", "is not", null)
    .executeTakeFirst();
  return row !== undefined;
}

async function replaceRecoveryCodes(db: Db, userId: string): Promise<string[]> {
  const codes = Array.from({ length: RECOVERY_CODE_COUNT }, newRecoveryCode);
  await db.deleteFrom("twoFactorRecoveryCodes").where("userId", "=", userId).execute();
  await db
    .insertInto("twoFactorRecoveryCodes")
    .values(
      codes.map((code) => ({ codeId: newId(), userId, codeHash: recoveryCodeHash(code), usedAt: null })),
    )
    .execute();
  return codes;
}

/**
 * Starts (or restarts) an enrolment: a new secret and new recovery codes, answered once.
 * Refused while two-factor sign-in is enabled (disable it first).
 */
export async function startEnrolment(
  ctx: ServiceContext,
  userId: string,
  email: string,
): Promise<{ secret: string; totpURI: string; backupCodes: string[] }> {
  const secret = new Secret({ size: 20 });
  const sealed = ctx.secrets.encrypt(secret.base32, sealContext(userId));
  const backupCodes = await ctx.db.transaction().execute(async (trx) => {
    const started = await trx
      .insertInto("userTwoFactor")
      .values({ userId, secretSealed: sealed, enabledAt: null, lastUsedStep: null })
      .onConflict((oc) =>
        oc
          .column("userId")
          .doUpdateSet({ secretSealed: sealed, lastUsedStep: null })
          .where("userTwoFactor.enabledAt", "is", null),
      )
      .returning("userId")
      .executeTakeFirst();
    if (!started) {
      throw conflict("Two-factor sign-in is already enabled: disable it first to enrol again");
    }
    return replaceRecoveryCodes(trx, userId);
  });
  const totp = new TOTP({ issuer: TWO_FACTOR_ISSUER, label: email, secret, ...TOTP_SETTINGS });
  return { secret: secret.base32, totpURI: totp.toString(), backupCodes };
}

/**
 * Checks a TOTP code against the user's secret (the enabled one, or the pending enrolment's
 * when `pending`) and spends its time step. False for a wrong code or a replayed step.
 */
async function spendTotpCode(
  ctx: ServiceContext,
  userId: string,
  code: string,
  pending: boolean,
): Promise<boolean> {
  const row = await ctx.db
    .selectFrom("userTwoFactor")
    .select(["secretSealed", "lastUsedStep"])
    .where("userId", "=", userId)
    .where("enabledAt", pending ? "is" : "is not", null)
    .executeTakeFirst();
  if (!row) return false;
  const secret = Secret.fromBase32(ctx.secrets.decrypt(row.secretSealed, sealContext(userId)));
  const timestamp = ctx.now().getTime();
  const delta = TOTP.validate({ token: code, secret, timestamp, window: 1, ...TOTP_SETTINGS });
  if (delta === null) return false;
  const step = TOTP.counter({ period: TOTP_SETTINGS.period, timestamp }) + delta;
  const spent = await ctx.db
    .updateTable("userTwoFactor")
    .set(pending ? { lastUsedStep: step, enabledAt: ctx.now().toISOString() } : { lastUsedStep: step })
    .where("userId", "=", userId)
    .where("enabledAt", pending ? "is" : "is not", null)
    .where((eb) => eb.or([eb("lastUsedStep", "is", null), eb("lastUsedStep", "<", step)]))
    .returning("userId")
    .executeTakeFirst();
  return spent !== undefined;
}

/** Enables two-factor sign-in with the pending enrolment's first valid code. */
export async function confirmEnrolment(ctx: ServiceContext, userId: string, code: string): Promise<void> {
  const pending = await ctx.db
    .selectFrom("userTwoFactor")
    .select("enabledAt")
    .where("userId", "=", userId)
    .executeTakeFirst();
  if (!pending) throw badRequest("No two-factor enrolment was started: call auth.twoFactorEnable first");
  if (pending.enabledAt !== null) throw conflict("Two-factor sign-in is already enabled");
  if (!(await spendTotpCode(ctx, userId, code, true))) {
    throw badRequest("code is not the authenticator's current code", { fields: ["code"] });
  }
}

/** Removes the secret and the recovery codes; open challenges end with them. */
export async function disableTwoFactor(ctx: ServiceContext, userId: string): Promise<void> {
  await ctx.db.transaction().execute(async (trx) => {
    const removed = await trx.deleteFrom("userTwoFactor").where("userId", "=", userId).executeTakeFirst();
    if (removed.numDeletedRows === 0n) throw badRequest("Two-factor sign-in is not enabled");
    await trx.deleteFrom("twoFactorRecoveryCodes").where("userId", "=", userId).execute();
    await trx.deleteFrom("twoFactorChallenges").where("userId", "=", userId).execute();
  });
}

/** New recovery codes in place of the old ones (all of which stop working). */
export async function regenerateRecoveryCodes(ctx: ServiceContext, userId: string): Promise<string[]> {
  if (!(await isTwoFactorEnabled(ctx.db, userId))) throw badRequest("Two-factor sign-in is not enabled");
  return ctx.db.transaction().execute((trx) => replaceRecoveryCodes(trx, userId));
}

/** How many of the user's recovery codes are still unspent. */
export async function remainingRecoveryCodes(db: Db, userId: string): Promise<number> {
  const row = await db
    .selectFrom("twoFactorRecoveryCodes")
    .select((eb) => eb.fn.countAll<string>().as("count"))
    .where("userId", "=", userId)
    .where("usedAt", "is", null)
    .executeTakeFirstOrThrow();
  return Number(row.count);
}

/** The half-signed-in state after the right password: a token worth one second factor. */
export async function createChallenge(
  ctx: ServiceContext,
  userId: string,
  organizationId: string,
): Promise<{ challengeToken: string; expiresAt: string }> {
  const challengeToken = `2fa_${randomToken(32)}`;
  const expiresAt = new Date(ctx.now().getTime() + TWO_FACTOR_CHALLENGE_SECONDS * 1000).toISOString();
  await ctx.db
    .insertInto("twoFactorChallenges")
    .values({
      challengeId: newId(),
      tokenHash: sha256Hex(challengeToken),
      userId,
      organizationId,
      expiresAt,
      usedAt: null,
    })
    .execute();
  // Now and then, forget ended challenges.
  if (Math.random() < 0.05) {
    await ctx.db.deleteFrom("twoFactorChallenges").where("expiresAt", "<", ctx.now().toISOString()).execute();
  }
  return { challengeToken, expiresAt };
}

const challengeOver = () =>
  new ApiError("UNAUTHORIZED", "The two-factor challenge is unknown, spent or expired: sign in again");

export interface OpenChallenge {
  challengeId: string;
  userId: string;
  organizationId: string;
  email: string;
}

/**
 * Counts one attempt against a live challenge and answers it; 401 when the token names no live
 * challenge (unknown, spent, expired, or out of attempts).
 */
export async function takeChallengeAttempt(ctx: ServiceContext, token: string): Promise<OpenChallenge> {
  const row = await ctx.db
    .updateTable("twoFactorChallenges")
    .set((eb) => ({ attempts: eb("attempts", "+", 1) }))
    .where("tokenHash", "=", sha256Hex(token))
    .where("usedAt", "is", null)
    .where("expiresAt", ">", ctx.now().toISOString())
    .where("attempts", "<", TWO_FACTOR_CHALLENGE_ATTEMPTS)
    .returning(["challengeId", "userId", "organizationId"])
    .executeTakeFirst();
  if (!row) throw challengeOver();
  const user = await ctx.db
    .selectFrom("users")
    .select("email")
    .where("userId", "=", row.userId)
    .executeTakeFirst();
  if (!user) throw challengeOver();
  return { ...row, email: user.email };
}

/** Spends the challenge (once: a concurrent success on the same challenge gets a 401). */
export async function completeChallenge(ctx: ServiceContext, challengeId: string): Promise<void> {
  const spent = await ctx.db
    .updateTable("twoFactorChallenges")
    .set({ usedAt: ctx.now().toISOString() })
    .where("challengeId", "=", challengeId)
    .where("usedAt", "is", null)
    .returning("challengeId")
    .executeTakeFirst();
  if (!spent) throw challengeOver();
}

/** A sign-in TOTP code of an enabled user (replay-safe). */
export function verifyTotpCode(ctx: ServiceContext, userId: string, code: string): Promise<boolean> {
  return spendTotpCode(ctx, userId, code, false);
}

/** Spends one of the user's recovery codes; false when it is wrong or already spent. */
export async function useRecoveryCode(ctx: ServiceContext, userId: string, code: string): Promise<boolean> {
  if (!(await isTwoFactorEnabled(ctx.db, userId))) return false;
  const spent = await ctx.db
    .updateTable("twoFactorRecoveryCodes")
    .set({ usedAt: ctx.now().toISOString() })
    .where("userId", "=", userId)
    .where("codeHash", "=", recoveryCodeHash(code))
    .where("usedAt", "is", null)
    .returning("codeId")
    .executeTakeFirst();
  return spent !== undefined;
}
