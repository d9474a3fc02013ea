import { Secret, TOTP } from "otpauth";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type Session, startTestPlatform, type TestPlatform } from "../testing/harness.ts";
import {
  RECOVERY_CODE_COUNT,
  TWO_FACTOR_CHALLENGE_ATTEMPTS,
  TWO_FACTOR_CHALLENGE_SECONDS,
} from "./two-factor.ts";

const PASSWORD = "correct-horse-battery";

describe("two-factor sign-in", () => {
  let platform: TestPlatform;
  let owner: Session;
  // The platform's clock, moved one TOTP step (30 s) at a time so each test has fresh codes.
  let offsetMs = 0;
  const tick = () => {
    offsetMs += 30_000;
  };
  const codeOf = (secret: string, stepsFromNow = 0) =>
    TOTP.generate({
      secret: Secret.fromBase32(secret),
      timestamp: platform.ctx.now().getTime() + stepsFromNow * 30_000,
    });

  beforeAll(async () => {
    platform = await startTestPlatform();
    platform.ctx.now = () => new Date(Date.now() + offsetMs);
    owner = await platform.registerOwner("owner@example.com", PASSWORD);
    await platform.addMember(owner, "member", "member@example.com");
  });
  afterAll(() => platform.close());
  // Each test starts with an empty login throttle (the in-process client address is shared).
  beforeEach(async () => {
    tick();
    await platform.ctx.db.deleteFrom("loginThrottle").execute();
  });

  const login = (email: string, password = PASSWORD) => platform.mutate("auth.login", { email, password });
  const freshSession = async (email: string) => {
    const r = await login(email);
    expect(r.status).toBe(200);
    expect(r.body.token).toEqual(expect.any(String));
    return r.body.token as string;
  };

  /** Enrols the user of `token` and confirms it; answers the secret and recovery codes. */
  const enrol = async (token: string) => {
    const started = await platform.mutateOk("auth.twoFactorEnable", { password: PASSWORD }, { token });
    const confirmed = await platform.mutate(
      "auth.twoFactorConfirm",
      { code: codeOf(started.secret) },
      { token },
    );
    expect(confirmed.status).toBe(200);
    return started as { secret: string; totpURI: string; backupCodes: string[] };
  };

  let ownerSecret = "";
  let ownerCodes: string[] = [];

  it("enrols only from a session with the password, and asks for nothing until the first code confirms it", async () => {
    const token = await freshSession("owner@example.com");
    const wrong = await platform.mutate("auth.twoFactorEnable", { password: "not-the-password" }, { token });
    expect(wrong.status).toBe(400);
    expect(wrong.body.error.data.fields).toEqual(["password"]);

    const key = await platform.mutateOk(
      "user.createApiKey",
      {
        name: "ci",
        organizationId: owner.user.organizationId,
        metadata: { organizationId: owner.user.organizationId },
      },
      { token },
    );
    const byKey = await platform.mutate("auth.twoFactorEnable", { password: PASSWORD }, { apiKey: key.key });
    expect(byKey.status).toBe(400);
    expect(await platform.ctx.db.selectFrom("userTwoFactor").selectAll().execute()).toEqual([]);

    const started = await platform.mutateOk("auth.twoFactorEnable", { password: PASSWORD }, { token });
    expect(started.secret).toMatch(/^[A-Z2-7]{32}$/);
    expect(started.totpURI).toContain(`secret=${started.secret}`);
    expect(started.totpURI).toMatch(/^otpauth:\/\/totp\/Platform:owner%40example\.com\?/);
    expect(started.backupCodes).toHaveLength(RECOVERY_CODE_COUNT);
    expect(new Set(started.backupCodes).size).toBe(RECOVERY_CODE_COUNT);

    // Sealed and hashed at rest.
    const row = await platform.ctx.db.selectFrom("userTwoFactor").selectAll().executeTakeFirstOrThrow();
    expect(row.secretSealed).not.toContain(started.secret);
    expect(row.enabledAt).toBeNull();
    const stored = JSON.stringify(
      await platform.ctx.db.selectFrom("twoFactorRecoveryCodes").selectAll().execute(),
    );
    for (const code of started.backupCodes) expect(stored).not.toContain(code);

    // Pending: the password alone still signs in, and the profile says it is off.
    await freshSession("owner@example.com");
    expect((await platform.query("user.get", {}, { token })).body.twoFactorEnabled).toBe(false);

    const badCode = await platform.mutate(
      "auth.twoFactorConfirm",
      { code: codeOf(started.secret, 5) },
      { token },
    );
    expect(badCode.status).toBe(400);
    expect(badCode.body.error.data.fields).toEqual(["code"]);
    const confirmed = await platform.mutate(
      "auth.twoFactorConfirm",
      { code: codeOf(started.secret) },
      { token },
    );
    expect(confirmed.status).toBe(200);
    expect((await platform.query("user.get", {}, { token })).body.twoFactorEnabled).toBe(true);
    const members = await platform.query("user.all", {}, { token });
    expect(
      members.body.find((u: { email: string }) => u.email === "owner@example.com").twoFactorEnabled,
    ).toBe(true);
    expect(
      members.body.find((u: { email: string }) => u.email === "member@example.com").twoFactorEnabled,
    ).toBe(false);

    // The secret is never answered again: enrolling anew is refused while enabled.
    const again = await platform.mutate("auth.twoFactorEnable", { password: PASSWORD }, { token });
    expect(again.status).toBe(409);
    expect(JSON.stringify(again.body)).not.toContain(started.secret);
    const confirmAgain = await platform.mutate(
      "auth.twoFactorConfirm",
      { code: codeOf(started.secret, 1) },
      { token },
    );
    expect(confirmAgain.status).toBe(409);

    // API keys are unaffected.
    expect((await platform.query("user.get", {}, { apiKey: key.key })).status).toBe(200);
    ownerSecret = started.secret;
    ownerCodes = started.backupCodes;
  });

  it("a TOTP-enabled account cannot sign in with the password alone; the challenge authorizes nothing", async () => {
    const sessionsBefore = await platform.ctx.db.selectFrom("sessions").select("sessionId").execute();
    const first = await login("owner@example.com");
    expect(first.status).toBe(200);
    expect(first.body).toEqual({
      twoFactorRequired: true,
      challengeToken: expect.any(String),
      expiresAt: expect.any(String),
    });
    expect(first.headers.get("set-cookie")).toBeNull();
    expect(await platform.ctx.db.selectFrom("sessions").select("sessionId").execute()).toHaveLength(
      sessionsBefore.length,
    );
    const challengeToken = first.body.challengeToken;
    expect((await platform.query("user.get", {}, { token: challengeToken })).status).toBe(401);
    expect((await platform.query("user.get", {}, { apiKey: challengeToken })).status).toBe(401);
    expect((await platform.query("project.all", {}, { token: challengeToken })).status).toBe(401);

    // A wrong password still answers no challenge.
    expect((await login("owner@example.com", "wrong-password")).status).toBe(401);

    const wrong = await platform.mutate("auth.twoFactorVerifyTotp", {
      challengeToken,
      code: codeOf(ownerSecret, 5),
    });
    expect(wrong.status).toBe(401);
    const ok = await platform.mutate("auth.twoFactorVerifyTotp", {
      challengeToken,
      code: codeOf(ownerSecret),
    });
    expect(ok.status).toBe(200);
    expect(ok.body.user.email).toBe("owner@example.com");
    expect((await platform.query("user.get", {}, { token: ok.body.token })).status).toBe(200);
    expect(ok.headers.get("set-cookie")).toContain("platform_session=");

    // The challenge is spent.
    const spent = await platform.mutate("auth.twoFactorVerifyTotp", {
      challengeToken,
      code: codeOf(ownerSecret, 1),
    });
    expect(spent.status).toBe(401);
  });

  it("refuses a TOTP code used before (same step), even on a new challenge; the next step's code works", async () => {
    const code = codeOf(ownerSecret);
    const a = (await login("owner@example.com")).body.challengeToken;
    expect((await platform.mutate("auth.twoFactorVerifyTotp", { challengeToken: a, code })).status).toBe(200);
    const b = (await login("owner@example.com")).body.challengeToken;
    const replay = await platform.mutate("auth.twoFactorVerifyTotp", { challengeToken: b, code });
    expect(replay.status).toBe(401);
    // An older step's code (inside the window) is refused too once a later one was used.
    const older = await platform.mutate("auth.twoFactorVerifyTotp", {
      challengeToken: b,
      code: codeOf(ownerSecret, -1),
    });
    expect(older.status).toBe(401);
    tick();
    const next = await platform.mutate("auth.twoFactorVerifyTotp", {
      challengeToken: b,
      code: codeOf(ownerSecret),
    });
    expect(next.status).toBe(200);
  });

  it("one code sent on two challenges at once signs in once (TOTP and recovery code)", async () => {
    const race = async (procedure: string, code: string) => {
      const [a, b] = await Promise.all([login("owner@example.com"), login("owner@example.com")]);
      const answers = await Promise.all(
        [a, b].map((r) => platform.mutate(procedure, { challengeToken: r.body.challengeToken, code })),
      );
      return answers.map((r) => r.status).sort();
    };
    expect(await race("auth.twoFactorVerifyTotp", codeOf(ownerSecret))).toEqual([200, 401]);
    await platform.ctx.db.deleteFrom("loginThrottle").execute();
    expect(await race("auth.twoFactorVerifyBackupCode", ownerCodes[9]!)).toEqual([200, 401]);
  });

  it("a recovery code works once, typed in any case and with or without its dash", async () => {
    const [code] = ownerCodes;
    const a = (await login("owner@example.com")).body.challengeToken;
    const typed = code!.toUpperCase().replace("-", " ");
    const used = await platform.mutate("auth.twoFactorVerifyBackupCode", { challengeToken: a, code: typed });
    expect(used.status).toBe(200);
    expect((await platform.query("user.get", {}, { token: used.body.token })).status).toBe(200);

    const b = (await login("owner@example.com")).body.challengeToken;
    const twice = await platform.mutate("auth.twoFactorVerifyBackupCode", { challengeToken: b, code });
    expect(twice.status).toBe(401);
    const other = await platform.mutate("auth.twoFactorVerifyBackupCode", {
      challengeToken: b,
      code: ownerCodes[1],
    });
    expect(other.status).toBe(200);
  });

  it("a challenge allows a few codes, then expires; both mean signing in again", async () => {
    const challengeToken = (await login("owner@example.com")).body.challengeToken;
    for (let i = 0; i < TWO_FACTOR_CHALLENGE_ATTEMPTS; i++) {
      await platform.ctx.db.deleteFrom("loginThrottle").execute();
      const r = await platform.mutate("auth.twoFactorVerifyTotp", {
        challengeToken,
        code: codeOf(ownerSecret, 7),
      });
      expect(r.status).toBe(401);
    }
    const right = await platform.mutate("auth.twoFactorVerifyTotp", {
      challengeToken,
      code: codeOf(ownerSecret),
    });
    expect(right.status).toBe(401);
    expect(right.body.error.message).toMatch(/sign in again/);

    await platform.ctx.db.deleteFrom("loginThrottle").execute();
    const late = (await login("owner@example.com")).body.challengeToken;
    offsetMs += (TWO_FACTOR_CHALLENGE_SECONDS + 30) * 1000;
    const expired = await platform.mutate("auth.twoFactorVerifyTotp", {
      challengeToken: late,
      code: codeOf(ownerSecret),
    });
    expect(expired.status).toBe(401);
    const made = await platform.mutate("auth.twoFactorVerifyTotp", {
      challengeToken: "2fa_made-up",
      code: "123456",
    });
    expect(made.status).toBe(401);
  });

  it("guessing codes is throttled like passwords, across challenges (429)", async () => {
    let status = 0;
    let attempts = 0;
    while (attempts < 20) {
      const r = await login("owner@example.com");
      if (r.status === 429) {
        status = 429;
        break;
      }
      const challengeToken = r.body.challengeToken;
      for (let i = 0; i < TWO_FACTOR_CHALLENGE_ATTEMPTS && status === 0; i++) {
        attempts++;
        const guess = await platform.mutate("auth.twoFactorVerifyTotp", { challengeToken, code: "000000" });
        if (guess.status === 429) status = 429;
        else expect(guess.status).toBe(401);
      }
      if (status) break;
    }
    expect(status).toBe(429);
    // Within the free attempts of the pair (a login counts one, each code one).
    expect(attempts).toBeLessThanOrEqual(6);
  });

  it("a right password with another organization does not give the code guesser its attempts back", async () => {
    const challengeToken = (await login("owner@example.com")).body.challengeToken;
    for (let i = 0; i < 3; i++) {
      const guess = await platform.mutate("auth.twoFactorVerifyTotp", { challengeToken, code: "000000" });
      expect(guess.status).toBe(401);
    }
    const elsewhere = await platform.mutate("auth.login", {
      email: "owner@example.com",
      password: PASSWORD,
      organizationId: "not-an-organization-of-the-owner",
    });
    expect(elsewhere.status).toBe(401);
    const next = await platform.mutate("auth.twoFactorVerifyTotp", {
      challengeToken,
      code: codeOf(ownerSecret),
    });
    expect(next.status).toBe(429);
  });

  it("another user's codes, challenge and enrolment are out of reach", async () => {
    const token = await freshSession("member@example.com");
    // The member has no enrolment: the owner's code confirms nothing, and nothing of the owner's changes.
    const confirm = await platform.mutate("auth.twoFactorConfirm", { code: codeOf(ownerSecret) }, { token });
    expect(confirm.status).toBe(400);
    expect((await platform.mutate("auth.twoFactorDisable", { password: PASSWORD }, { token })).status).toBe(
      400,
    );
    expect(
      (await platform.mutate("auth.twoFactorGenerateBackupCodes", { password: PASSWORD }, { token })).status,
    ).toBe(400);
    const ownerRow = await platform.ctx.db
      .selectFrom("userTwoFactor")
      .selectAll()
      .where("userId", "=", owner.user.userId)
      .executeTakeFirstOrThrow();
    expect(ownerRow.enabledAt).not.toBeNull();

    const memberEnrolment = await enrol(token);
    tick();
    const challengeToken = (await login("member@example.com")).body.challengeToken;
    // The owner's recovery code and TOTP code do not finish the member's sign-in.
    const ownerRecovery = await platform.mutate("auth.twoFactorVerifyBackupCode", {
      challengeToken,
      code: ownerCodes[2],
    });
    expect(ownerRecovery.status).toBe(401);
    const ownerTotp = await platform.mutate("auth.twoFactorVerifyTotp", {
      challengeToken,
      code: codeOf(ownerSecret),
    });
    expect(ownerTotp.status).toBe(401);
    const own = await platform.mutate("auth.twoFactorVerifyTotp", {
      challengeToken,
      code: codeOf(memberEnrolment.secret),
    });
    expect(own.status).toBe(200);
    expect(own.body.user.email).toBe("member@example.com");
    // The owner's recovery code still works for the owner.
    const ownerChallenge = (await login("owner@example.com")).body.challengeToken;
    expect(
      (
        await platform.mutate("auth.twoFactorVerifyBackupCode", {
          challengeToken: ownerChallenge,
          code: ownerCodes[2],
        })
      ).status,
    ).toBe(200);
  });

  it("new recovery codes replace the old; disabling needs the password and brings back password-only sign-in", async () => {
    const challengeToken = (await login("owner@example.com")).body.challengeToken;
    const token = (
      await platform.mutateOk("auth.twoFactorVerifyTotp", { challengeToken, code: codeOf(ownerSecret) }, {})
    ).token as string;
    const renewed = await platform.mutateOk(
      "auth.twoFactorGenerateBackupCodes",
      { password: PASSWORD },
      { token },
    );
    expect(renewed.backupCodes).toHaveLength(RECOVERY_CODE_COUNT);
    const c1 = (await login("owner@example.com")).body.challengeToken;
    expect(
      (await platform.mutate("auth.twoFactorVerifyBackupCode", { challengeToken: c1, code: ownerCodes[3] }))
        .status,
    ).toBe(401);
    expect(
      (
        await platform.mutate("auth.twoFactorVerifyBackupCode", {
          challengeToken: c1,
          code: renewed.backupCodes[0],
        })
      ).status,
    ).toBe(200);

    const wrong = await platform.mutate("auth.twoFactorDisable", { password: "wrong-password" }, { token });
    expect(wrong.status).toBe(400);
    expect((await login("owner@example.com")).body.twoFactorRequired).toBe(true);
    expect((await platform.mutate("auth.twoFactorDisable", { password: PASSWORD }, { token })).status).toBe(
      200,
    );
    const plain = await login("owner@example.com");
    expect(plain.body.token).toEqual(expect.any(String));
    expect(
      await platform.ctx.db
        .selectFrom("twoFactorRecoveryCodes")
        .select("userId")
        .where("userId", "=", owner.user.userId)
        .execute(),
    ).toEqual([]);
    // A challenge handed out before disabling is gone with it.
    const stale = await platform.mutate("auth.twoFactorVerifyBackupCode", {
      challengeToken: c1,
      code: renewed.backupCodes[1],
    });
    expect(stale.status).toBe(401);
  });
});
