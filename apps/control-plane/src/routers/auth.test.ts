import type { AddressInfo } from "node:net";
import { serve } from "@hono/node-server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { issueSetupToken } from "../auth/setup-token.ts";
import { startTestPlatform, type TestPlatform } from "../testing/harness.ts";

describe("auth", () => {
  let platform: TestPlatform;
  beforeAll(async () => {
    platform = await startTestPlatform();
  });
  afterAll(() => platform.close());

  it("registers the first user as owner of a new organization, then closes registration", async () => {
    const first = await platform.mutate("auth.register", {
      email: "Owner@Example.com",
      password: "correct-horse-battery",
      name: "Owner",
    });
    expect(first.status).toBe(200);
    expect(first.body.user).toMatchObject({ email: "owner@example.com", role: "owner" });
    expect(first.body.token).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+$/);
    expect(JSON.stringify(first.body)).not.toContain("correct-horse-battery");
    expect(JSON.stringify(first.body)).not.toContain("scrypt");

    const second = await platform.mutate("auth.register", {
      email: "stranger@example.com",
      password: "correct-horse-battery",
      name: "Stranger",
    });
    expect(second.status).toBe(403);
    expect(second.body.error.code).toBe("FORBIDDEN");
  });

  it("finding 7: closed registration answers alike for taken and free emails", async () => {
    const attempt = (email: string, extra: Record<string, unknown> = {}) =>
      platform.mutate("auth.register", { email, password: "another-password-1", name: "Probe", ...extra });
    const taken = await attempt("owner@example.com");
    const free = await attempt("free-address@example.com");
    expect(taken.status).toBe(403);
    expect(free.status).toBe(taken.status);
    expect(free.body).toEqual(taken.body);
    const takenWithId = await attempt("owner@example.com", { invitationId: "made-up" });
    const freeWithId = await attempt("free-address@example.com", { invitationId: "made-up" });
    expect(takenWithId.status).toBe(400);
    expect(freeWithId.body).toEqual(takenWithId.body);
    const takenWithToken = await attempt("owner@example.com", { token: "made-up" });
    const freeWithToken = await attempt("free-address@example.com", { token: "made-up" });
    expect(takenWithToken.status).toBe(404);
    expect(freeWithToken.body).toEqual(takenWithToken.body);
    expect(
      await platform.ctx.db
        .selectFrom("users")
        .select("userId")
        .where("email", "=", "free-address@example.com")
        .execute(),
    ).toEqual([]);
  });

  it("logs in with the right password only, with one message for both failures", async () => {
    const ok = await platform.mutate("auth.login", {
      email: "owner@example.com",
      password: "correct-horse-battery",
    });
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ token: expect.any(String), expiresAt: expect.any(String) });

    const wrong = await platform.mutate("auth.login", {
      email: "owner@example.com",
      password: "wrong-password",
    });
    const unknown = await platform.mutate("auth.login", {
      email: "nobody@example.com",
      password: "wrong-password",
    });
    expect(wrong.status).toBe(401);
    expect(unknown.status).toBe(401);
    expect(wrong.body.error.message).toBe(unknown.body.error.message);
  });

  it("revokes a session on logout", async () => {
    const { body } = await platform.mutate("auth.login", {
      email: "owner@example.com",
      password: "correct-horse-battery",
    });
    expect((await platform.mutate("auth.logout", {}, { token: body.token })).status).toBe(200);
    const after = await platform.mutate("auth.logout", {}, { token: body.token });
    expect(after.status).toBe(401);
  });

  it("refuses a session whose row has expired, and one of a user no longer in its organization", async () => {
    const login = async () =>
      (await platform.mutate("auth.login", { email: "owner@example.com", password: "correct-horse-battery" }))
        .body as { token: string; user: { userId: string; organizationId: string } };
    const sessionOf = async (token: string) =>
      platform.ctx.db
        .selectFrom("sessions")
        .select("sessionId")
        .where("userId", "=", (await platform.query("user.get", {}, { token })).body.userId)
        .orderBy("createdAt", "desc")
        .executeTakeFirstOrThrow();

    const expiring = await login();
    const { sessionId } = await sessionOf(expiring.token);
    await platform.ctx.db
      .updateTable("sessions")
      .set({ expiresAt: new Date(Date.now() - 1000).toISOString() })
      .where("sessionId", "=", sessionId)
      .execute();
    const expired = await platform.query("user.get", {}, { token: expiring.token });
    expect(expired.status).toBe(401);
    expect(expired.body.error.message).toBe("Invalid or expired session");

    const orphan = await login();
    const member = await platform.ctx.db
      .selectFrom("members")
      .selectAll()
      .where("userId", "=", orphan.user.userId)
      .executeTakeFirstOrThrow();
    await platform.ctx.db.deleteFrom("members").where("userId", "=", orphan.user.userId).execute();
    try {
      const refused = await platform.query("user.get", {}, { token: orphan.token });
      expect(refused.status).toBe(401);
      expect(refused.body.error.message).toBe("Not a member of this organization");
    } finally {
      await platform.ctx.db.insertInto("members").values(member).execute();
    }
    expect((await platform.query("user.get", {}, { token: orphan.token })).status).toBe(200);
  });

  it("refuses a forged or tampered session token", async () => {
    const { body } = await platform.mutate("auth.login", {
      email: "owner@example.com",
      password: "correct-horse-battery",
    });
    const [header, payload] = body.token.split(".");
    const forged = `${header}.${payload}.${"A".repeat(43)}`;
    expect((await platform.mutate("auth.logout", {}, { token: forged })).status).toBe(401);
  });

  it("registers with an invitation's token, only for its email while it is pending and unexpired", async () => {
    const owner = await platform.mutate("auth.login", {
      email: "owner@example.com",
      password: "correct-horse-battery",
    });
    const invite = await platform.mutate(
      "organization.inviteMember",
      { email: "invited@example.com", role: "admin" },
      { token: owner.body.token },
    );
    expect(invite.status).toBe(200);
    const { invitationId, token } = invite.body;
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const register = (email: string, secret: string | null = token) =>
      platform.mutate("auth.register", {
        email,
        password: "correct-horse-battery",
        name: "Invited",
        invitationId,
        ...(secret === null ? {} : { token: secret }),
      });
    const noInvitation = {
      code: "NOT_FOUND",
      message: "No pending invitation with this token for this email",
      data: { fields: ["token"] },
    };

    // Finding 3: the id (which user.getInvitations shows) is not enough; the token is.
    const withoutToken = await register("invited@example.com", null);
    expect(withoutToken.status).toBe(400);
    expect(withoutToken.body.error.data.fields).toEqual(["token"]);
    const wrongToken = await register("invited@example.com", `${token.slice(0, -2)}AA`);
    expect(wrongToken.status).toBe(404);
    expect(wrongToken.body.error).toMatchObject(noInvitation);

    const otherEmail = await register("someone-else@example.com");
    expect(otherEmail.status).toBe(404);
    expect(otherEmail.body.error).toMatchObject(noInvitation);

    const setExpiry = (expiresAt: Date) =>
      platform.ctx.db
        .updateTable("invitations")
        .set({ expiresAt: expiresAt.toISOString() })
        .where("invitationId", "=", invitationId)
        .execute();
    await setExpiry(new Date(Date.now() - 1000));
    const expired = await register("invited@example.com");
    expect(expired.status).toBe(404);
    expect(expired.body.error).toMatchObject(noInvitation);

    await setExpiry(new Date(Date.now() + 3600_000));
    const joined = await register("invited@example.com");
    expect(joined.status).toBe(200);
    expect(joined.body.user).toMatchObject({
      email: "invited@example.com",
      role: "admin",
      organizationId: owner.body.user.organizationId,
    });
    const invitation = await platform.ctx.db
      .selectFrom("invitations")
      .select("status")
      .where("invitationId", "=", invitationId)
      .executeTakeFirstOrThrow();
    expect(invitation.status).toBe("accepted");

    const used = await register("another@example.com");
    expect(used.status).toBe(404);
    expect(used.body.error).toMatchObject(noInvitation);
  });

  it("keeps passwords out of the logs", () => {
    expect(platform.logLines.join("\n")).not.toContain("correct-horse-battery");
  });

  it("rejects a short password and a bad email naming both fields", async () => {
    const response = await platform.mutate("auth.register", {
      email: "not-an-email",
      password: "short",
      name: "X",
    });
    expect(response.status).toBe(400);
    expect(response.body.error.data.fields).toEqual(expect.arrayContaining(["email", "password"]));
  });
});

/**
 * Issue 37 finding 11: an instance nobody has claimed is not anyone's who reaches its port. The
 * first registration from another machine needs the set-up token printed at start; one from
 * this machine needs none. Remote clients are simulated at the app level (the Node server's
 * socket address), and over a real HTTP server on 127.0.0.1 behind a "trusted proxy" there.
 */
describe("auth.register on an unclaimed instance (set-up token)", () => {
  const owner = { email: "owner@example.com", password: "correct-horse-battery", name: "Owner" };
  const REMOTE = "198.51.100.7";

  /** POST auth.register as the Node server would hand it over from a socket at `address`. */
  async function registerFrom(platform: TestPlatform, address: string, input: Record<string, unknown>) {
    const response = await platform.app.request(
      "/api/auth.register",
      { method: "POST", body: JSON.stringify(input), headers: { "content-type": "application/json" } },
      { incoming: { socket: { remoteAddress: address } } },
    );
    return { status: response.status, body: (await response.json()) as any };
  }
  const users = (platform: TestPlatform) => platform.ctx.db.selectFrom("users").select("email").execute();
  const storedTokens = (platform: TestPlatform) =>
    platform.ctx.db.selectFrom("setupTokens").select("tokenHash").execute();

  it("from another machine: refused without the token or with a wrong one, then the token claims it once", async () => {
    const platform = await startTestPlatform();
    try {
      const token = await issueSetupToken(platform.ctx);
      expect(token).toMatch(/^[\w-]{43}$/);
      const missing = await registerFrom(platform, REMOTE, owner);
      expect(missing.status).toBe(403);
      expect(missing.body.error.data.fields).toEqual(["setupToken"]);
      expect(missing.body.error.message).toMatch(/^setupToken is required/);
      const wrong = await registerFrom(platform, REMOTE, { ...owner, setupToken: "not-the-token" });
      expect(wrong.status).toBe(403);
      expect(wrong.body.error.data.fields).toEqual(["setupToken"]);
      // A forwarded header from an untrusted peer does not make it this machine.
      const forged = await platform.app.request(
        "/api/auth.register",
        {
          method: "POST",
          body: JSON.stringify(owner),
          headers: { "content-type": "application/json", "x-forwarded-for": "127.0.0.1" },
        },
        { incoming: { socket: { remoteAddress: REMOTE } } },
      );
      expect(forged.status).toBe(403);
      expect(await users(platform)).toEqual([]);
      expect(await storedTokens(platform)).toHaveLength(1);

      const claimed = await registerFrom(platform, REMOTE, { ...owner, setupToken: token });
      expect(claimed.status, JSON.stringify(claimed.body)).toBe(200);
      expect(claimed.body.user).toMatchObject({ email: owner.email, role: "owner" });
      // Consumed: the instance is claimed and the token is gone.
      expect(await storedTokens(platform)).toEqual([]);
      const again = await registerFrom(platform, REMOTE, {
        ...owner,
        email: "second@example.com",
        setupToken: token,
      });
      expect(again.status).toBe(403);
      expect((await users(platform)).map((user) => user.email)).toEqual([owner.email]);
      // A later start prints no token.
      expect(await issueSetupToken(platform.ctx)).toBeNull();
      expect(await storedTokens(platform)).toEqual([]);
    } finally {
      await platform.close();
    }
  });

  it("from this machine (loopback): needs no token, and spends the printed one", async () => {
    const platform = await startTestPlatform();
    try {
      await issueSetupToken(platform.ctx);
      const registered = await registerFrom(platform, "127.0.0.1", owner);
      expect(registered.status, JSON.stringify(registered.body)).toBe(200);
      expect(await storedTokens(platform)).toEqual([]);
    } finally {
      await platform.close();
    }
  });

  it("through a trusted proxy on 127.0.0.1 (real HTTP): forwarded for anyone, even 127.0.0.1, it needs the token", async () => {
    const platform = await startTestPlatform({ PLATFORM_TRUSTED_PROXIES: "127.0.0.1" });
    const server = serve({ fetch: platform.app.fetch, port: 0, hostname: "127.0.0.1" });
    try {
      await new Promise((resolve) => server.once("listening", resolve));
      const { port } = server.address() as AddressInfo;
      const token = await issueSetupToken(platform.ctx);
      const post = (forwardedFor: string | undefined, input: Record<string, unknown>) =>
        fetch(`http://127.0.0.1:${port}/api/auth.register`, {
          method: "POST",
          body: JSON.stringify(input),
          headers: {
            "content-type": "application/json",
            ...(forwardedFor ? { "x-forwarded-for": forwardedFor } : {}),
          },
        });
      expect((await post(REMOTE, owner)).status).toBe(403);
      expect((await post("127.0.0.1", owner)).status).toBe(403);
      expect((await post(undefined, owner)).status).toBe(403);
      expect(await users(platform)).toEqual([]);
      expect((await post(REMOTE, { ...owner, setupToken: token })).status).toBe(200);
    } finally {
      server.close();
      await platform.close();
    }
  });

  it("takes the installer's token (PLATFORM_SETUP_TOKEN), the same for every control plane on the database", async () => {
    const chosen = "installer-chosen-setup-token-0123456789";
    const platform = await startTestPlatform({ PLATFORM_SETUP_TOKEN: chosen });
    try {
      expect(await issueSetupToken(platform.ctx)).toBe(chosen);
      expect(await issueSetupToken(platform.ctx)).toBe(chosen);
      expect(await storedTokens(platform)).toHaveLength(1);
      const claimed = await registerFrom(platform, REMOTE, { ...owner, setupToken: chosen });
      expect(claimed.status, JSON.stringify(claimed.body)).toBe(200);
    } finally {
      await platform.close();
    }
    await expect(startTestPlatform({ PLATFORM_SETUP_TOKEN: "short" })).rejects.toThrow(
      /PLATFORM_SETUP_TOKEN/,
    );
  });
});
