/** API keys end to end: created once through user.createApiKey, then used, limited, expired, deleted. */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Session, startTestPlatform, type TestPlatform } from "../testing/harness.ts";
import { createOtherOrganization } from "../users/test-support.ts";

describe("API keys", () => {
  let platform: TestPlatform;
  let owner: Session;
  let member: Session;
  let other: Session & { organizationId: string };
  const issuedKeys: string[] = [];
  const as = (session: Session) => ({ token: session.token });

  async function createKey(session: Session, extra: Record<string, unknown> = {}, organizationId?: string) {
    const orgId = organizationId ?? session.user.organizationId;
    const r = await platform.mutate(
      "user.createApiKey",
      { name: "deploy", organizationId: orgId, metadata: { organizationId: orgId }, ...extra },
      as(session),
    );
    if (r.status !== 200) throw new Error(`createApiKey failed: ${JSON.stringify(r.body)}`);
    issuedKeys.push(r.body.key);
    return r.body as {
      id: string;
      name: string;
      key: string;
      prefix: string | null;
      createdAt: string;
      expiresAt: string | null;
    };
  }

  beforeAll(async () => {
    platform = await startTestPlatform();
    owner = await platform.registerOwner();
    member = await platform.addMember(owner, "member");
    other = await createOtherOrganization(platform);
  });
  afterAll(() => platform.close());

  it("returns the key once, with its id, name, prefix and dates; user.get lists it without the key", async () => {
    const created = await createKey(member, { name: "ci", prefix: "plat" });
    expect(Object.keys(created).sort()).toEqual(["createdAt", "expiresAt", "id", "key", "name", "prefix"]);
    expect(created).toMatchObject({ name: "ci", prefix: "plat", expiresAt: null });
    expect(created.key).toMatch(/^plat_[A-Za-z0-9_-]{43}$/);

    const me = await platform.query("user.get", {}, as(member));
    expect(me.body.apiKeys).toEqual([
      {
        id: created.id,
        name: "ci",
        prefix: "plat",
        start: created.key.slice(0, 10),
        organizationId: member.user.organizationId,
        createdAt: created.createdAt,
        expiresAt: null,
      },
    ]);
    const text = JSON.stringify(me.body);
    expect(text).not.toContain(created.key);
    expect(text).not.toMatch(/keyHash|key_hash/);
    const row = await platform.ctx.db
      .selectFrom("apiKeys")
      .select("keyHash")
      .where("apiKeyId", "=", created.id)
      .executeTakeFirstOrThrow();
    expect(text).not.toContain(row.keyHash);
    expect(row.keyHash).not.toContain(created.key);
  });

  it("authenticates as x-api-key and as Bearer, acting in the key's organization with the user's role", async () => {
    const { key } = await createKey(member);
    const viaHeader = await platform.query("user.get", {}, { apiKey: key });
    expect(viaHeader.status).toBe(200);
    expect(viaHeader.body).toMatchObject({ id: member.user.id, role: "member" });
    const viaBearer = await platform.query("user.get", {}, { token: key });
    expect(viaBearer.status).toBe(200);
    expect(viaBearer.body.id).toBe(member.user.id);
    expect((await platform.query("user.all", {}, { apiKey: key })).status).toBe(403);
  });

  it("is refused in the query string", async () => {
    const { key } = await createKey(member);
    for (const name of ["apiKey", "api_key", "token"]) {
      const r = await platform.request(`/api/user.get?${name}=${encodeURIComponent(key)}`, { method: "GET" });
      expect(r.status).toBe(401);
      expect(r.body.error.message).toMatch(/query string/);
    }
    // Even next to a valid header: the request is refused, not half-read.
    const both = await platform.request(`/api/user.get?apiKey=${encodeURIComponent(key)}`, {
      method: "GET",
      apiKey: key,
    });
    expect(both.status).toBe(401);
  });

  it("stops working once deleted; only its owner can delete it", async () => {
    const created = await createKey(member);
    const byOwner = await platform.mutate("user.deleteApiKey", { apiKeyId: created.id }, as(owner));
    expect(byOwner.status).toBe(404);
    const byOther = await platform.mutate("user.deleteApiKey", { apiKeyId: created.id }, as(other));
    expect(byOther.status).toBe(404);
    expect((await platform.query("user.get", {}, { apiKey: created.key })).status).toBe(200);

    const r = await platform.mutate("user.deleteApiKey", { apiKeyId: created.id }, as(member));
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ success: true });
    const after = await platform.query("user.get", {}, { apiKey: created.key });
    expect(after.status).toBe(401);
    expect((await platform.mutate("user.deleteApiKey", { apiKeyId: created.id }, as(member))).status).toBe(
      404,
    );
    const missing = await platform.mutate("user.deleteApiKey", {}, as(member));
    expect(missing.status).toBe(400);
    expect(missing.body.error.data.fields).toEqual(["apiKeyId"]);
  });

  it("can delete itself", async () => {
    const created = await createKey(member);
    expect(
      (await platform.mutate("user.deleteApiKey", { apiKeyId: created.id }, { apiKey: created.key })).status,
    ).toBe(200);
    expect((await platform.query("user.get", {}, { apiKey: created.key })).status).toBe(401);
  });

  it("expires: expiresIn sets expiresAt, and a key past it is 401", async () => {
    const before = Date.now();
    const created = await createKey(member, { expiresIn: 3600 });
    const expiresAt = new Date(created.expiresAt!).getTime();
    expect(expiresAt).toBeGreaterThanOrEqual(before + 3600_000 - 1000);
    expect(expiresAt).toBeLessThanOrEqual(Date.now() + 3600_000 + 1000);
    expect((await platform.query("user.get", {}, { apiKey: created.key })).status).toBe(200);

    await platform.ctx.db
      .updateTable("apiKeys")
      .set({ expiresAt: new Date(Date.now() - 1000).toISOString() })
      .where("apiKeyId", "=", created.id)
      .execute();
    const r = await platform.query("user.get", {}, { apiKey: created.key });
    expect(r.status).toBe(401);
    expect(r.body.error.message).toMatch(/expired/);
  });

  it("rate limits: rateLimitMax 3 per 60 s makes the 4th request 429 with Retry-After", async () => {
    const { key } = await createKey(member, {
      rateLimitEnabled: true,
      rateLimitMax: 3,
      rateLimitTimeWindow: 60,
    });
    for (let i = 0; i < 3; i++) {
      expect((await platform.query("user.get", {}, { apiKey: key })).status).toBe(200);
    }
    const limited = await platform.query("user.get", {}, { apiKey: key });
    expect(limited.status).toBe(429);
    expect(limited.body.error.code).toBe("TOO_MANY_REQUESTS");
    const retryAfter = Number(limited.headers.get("retry-after"));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(20);
    // The limit is per key: the member's session is unaffected.
    expect((await platform.query("user.get", {}, as(member))).status).toBe(200);
  });

  it("counts usage: remaining 2 makes the third request 429", async () => {
    const { key } = await createKey(member, { remaining: 2 });
    expect((await platform.query("user.get", {}, { apiKey: key })).status).toBe(200);
    expect((await platform.query("user.get", {}, { token: key })).status).toBe(200);
    const r = await platform.query("user.get", {}, { apiKey: key });
    expect(r.status).toBe(429);
    expect(r.body.error.code).toBe("TOO_MANY_REQUESTS");
  });

  it("is 401 once its user is no longer a member of the key's organization, after its limits are checked", async () => {
    const leaving = await platform.addMember(owner, "member", "key-of-a-leaver@example.com");
    const created = await createKey(leaving, { remaining: 2 });
    expect((await platform.query("user.get", {}, { apiKey: created.key })).status).toBe(200);
    const membership = await platform.ctx.db
      .selectFrom("members")
      .selectAll()
      .where("userId", "=", leaving.user.id)
      .executeTakeFirstOrThrow();
    await platform.ctx.db.deleteFrom("members").where("memberId", "=", membership.memberId).execute();
    try {
      const refused = await platform.query("user.get", {}, { apiKey: created.key });
      expect(refused.status).toBe(401);
      expect(refused.body.error.message).toBe("Not a member of this organization");
      // The usage budget is spent before the membership is checked: the last use went.
      const over = await platform.query("user.get", {}, { apiKey: created.key });
      expect(over.status).toBe(429);
    } finally {
      await platform.ctx.db.insertInto("members").values(membership).execute();
    }
  });

  it("starts a refilled budget full when remaining is not given", async () => {
    const created = await createKey(member, { refillAmount: 5, refillInterval: 3600 });
    const row = await platform.ctx.db
      .selectFrom("apiKeys")
      .select(["remaining", "refillAmount", "refillIntervalMs"])
      .where("apiKeyId", "=", created.id)
      .executeTakeFirstOrThrow();
    expect(row).toEqual({ remaining: 5, refillAmount: 5, refillIntervalMs: 3_600_000 });
  });

  it("is 400 naming each invalid field", async () => {
    const orgId = member.user.organizationId;
    const bad = await platform.mutate(
      "user.createApiKey",
      {
        name: "",
        organizationId: orgId,
        metadata: {},
        prefix: "bad prefix!",
        expiresIn: -5,
        rateLimitMax: 0,
        rateLimitTimeWindow: 10 ** 9,
      },
      as(member),
    );
    expect(bad.status).toBe(400);
    expect(bad.body.error.data.fields).toEqual(
      expect.arrayContaining([
        "name",
        "metadata.organizationId",
        "prefix",
        "expiresIn",
        "rateLimitMax",
        "rateLimitTimeWindow",
      ]),
    );
    const noOrg = await platform.mutate("user.createApiKey", { name: "x" }, as(member));
    expect(noOrg.body.error.data.fields).toEqual(["metadata"]);

    const mismatch = await platform.mutate(
      "user.createApiKey",
      { name: "x", organizationId: orgId, metadata: { organizationId: other.organizationId } },
      as(member),
    );
    expect(mismatch.status).toBe(400);
    expect(mismatch.body.error.data.fields).toEqual(["metadata.organizationId"]);

    const halfRefill = await platform.mutate(
      "user.createApiKey",
      { name: "x", organizationId: orgId, metadata: { organizationId: orgId }, refillAmount: 10 },
      as(member),
    );
    expect(halfRefill.status).toBe(400);
    expect(halfRefill.body.error.data.fields).toEqual(["refillInterval"]);
  });

  it("is 404 for an organization the caller does not belong to, and 401 without credentials", async () => {
    const r = await platform.mutate(
      "user.createApiKey",
      { name: "x", organizationId: other.organizationId, metadata: { organizationId: other.organizationId } },
      as(member),
    );
    expect(r.status).toBe(404);
    const anonymous = await platform.mutate("user.createApiKey", {
      name: "x",
      organizationId: owner.user.organizationId,
      metadata: { organizationId: owner.user.organizationId },
    });
    expect(anonymous.status).toBe(401);
  });

  it("can be made from a session for another organization of the caller, not from an API key", async () => {
    // The owner of the other organization joins ours as a member.
    const invite = await platform.mutate(
      "organization.inviteMember",
      { email: other.user.email, role: "member" },
      as(owner),
    );
    await platform.mutate(
      "organization.acceptInvitation",
      { invitationId: invite.body.invitationId, token: invite.body.token },
      as(other),
    );

    const created = await createKey(other, {}, owner.user.organizationId);
    const acting = await platform.query("user.get", {}, { apiKey: created.key });
    expect(acting.body).toMatchObject({ organizationId: owner.user.organizationId, role: "member" });

    const fromKey = await platform.mutate(
      "user.createApiKey",
      { name: "x", organizationId: other.organizationId, metadata: { organizationId: other.organizationId } },
      { apiKey: created.key },
    );
    expect(fromKey.status).toBe(403);
    expect(fromKey.body.error.data.fields).toEqual(["organizationId"]);
  });

  it("never writes a key to the logs", () => {
    expect(issuedKeys.length).toBeGreaterThan(5);
    const logs = platform.logLines.join("\n");
    for (const key of issuedKeys) expect(logs).not.toContain(key);
  });
});
