/**
 * The caller cache across control planes: two instances on one database. Each credential is first seen, and
 * cached, on both; then a change made through one instance must hold on the very next request
 * through either.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Session, startTestPlatformPair, type TestPlatform } from "../testing/harness.ts";
import { apiKeyHash } from "./api-key.ts";

describe("caller cache", () => {
  let a: TestPlatform;
  let b: TestPlatform;
  let owner: Session;
  let closePair: () => Promise<void>;

  beforeAll(async () => {
    ({ a, b, close: closePair } = await startTestPlatformPair());
    owner = await a.registerOwner();
  });
  afterAll(async () => await closePair?.());

  const both = () => [a, b] as const;

  async function createKey(extra: Record<string, unknown> = {}) {
    const organizationId = owner.user.organizationId;
    return await a.mutateOk<{ id: string; key: string }>(
      "user.createApiKey",
      { name: "cache", metadata: { organizationId }, ...extra },
      { token: owner.token },
    );
  }

  /** Uses a credential on both instances until each holds it. */
  async function seeOnBoth(call: (platform: TestPlatform) => Promise<{ status: number }>, cacheKey: string) {
    for (const platform of both()) {
      expect((await call(platform)).status).toBe(200);
      expect((await call(platform)).status).toBe(200);
      expect(await platform.ctx.callers.lookup(cacheKey)).toBeDefined();
    }
  }

  it("a deleted API key fails on the next request through either instance", async () => {
    const { id, key } = await createKey();
    await seeOnBoth((p) => p.query("project.all", {}, { apiKey: key }), `apiKey:${apiKeyHash(key)}`);

    await a.mutateOk("user.deleteApiKey", { apiKeyId: id }, { token: owner.token });
    expect((await b.query("project.all", {}, { apiKey: key })).status).toBe(401);
    expect((await a.query("project.all", {}, { apiKey: key })).status).toBe(401);
  });

  it("a logged-out session fails on the next request through either instance", async () => {
    const member = await a.addMember(owner, "member");
    await seeOnBoth(
      (p) => p.query("project.all", {}, { token: member.token }),
      `session:${apiKeyHash(member.token)}`,
    );

    await b.mutateOk("auth.logout", {}, { token: member.token });
    expect((await a.query("project.all", {}, { token: member.token })).status).toBe(401);
    expect((await b.query("project.all", {}, { token: member.token })).status).toBe(401);
  });

  it("a role change holds on the next request through either instance", async () => {
    const admin = await a.addMember(owner, "admin");
    await seeOnBoth(
      (p) => p.query("user.all", {}, { token: admin.token }),
      `session:${apiKeyHash(admin.token)}`,
    );

    await a.mutateOk(
      "user.assignPermissions",
      { id: admin.user.userId, role: "member" },
      { token: owner.token },
    );
    expect((await b.query("user.all", {}, { token: admin.token })).status).toBe(403);
    expect((await a.query("user.all", {}, { token: admin.token })).status).toBe(403);

    await b.mutateOk(
      "user.assignPermissions",
      { id: admin.user.userId, role: "admin" },
      { token: owner.token },
    );
    expect((await a.query("user.all", {}, { token: admin.token })).status).toBe(200);
    expect((await b.query("user.all", {}, { token: admin.token })).status).toBe(200);
  });

  it("a removed member fails on the next request through either instance", async () => {
    const member = await a.addMember(owner, "member");
    await seeOnBoth(
      (p) => p.query("project.all", {}, { token: member.token }),
      `session:${apiKeyHash(member.token)}`,
    );

    await b.mutateOk("user.remove", { userId: member.user.userId }, { token: owner.token });
    expect((await a.query("project.all", {}, { token: member.token })).status).toBe(401);
    expect((await b.query("project.all", {}, { token: member.token })).status).toBe(401);
  });

  it("an expired key fails on the next request although it is cached", async () => {
    const { key } = await createKey({ expiresIn: 3600 });
    await seeOnBoth((p) => p.query("project.all", {}, { apiKey: key }), `apiKey:${apiKeyHash(key)}`);
    const realNow = a.ctx.now;
    a.ctx.now = () => new Date(Date.now() + 2 * 3600_000);
    try {
      const expired = await a.query("project.all", {}, { apiKey: key });
      expect(expired.status).toBe(401);
      expect(expired.body.error.message).toBe("API key expired");
    } finally {
      a.ctx.now = realNow;
    }
  });

  it("an expired session fails on the next request although it is cached", async () => {
    const member = await a.addMember(owner, "member");
    await seeOnBoth(
      (p) => p.query("project.all", {}, { token: member.token }),
      `session:${apiKeyHash(member.token)}`,
    );
    const realNow = a.ctx.now;
    a.ctx.now = () => new Date(Date.now() + (a.ctx.config.sessionTtlSeconds + 60) * 1000);
    try {
      expect((await a.query("project.all", {}, { token: member.token })).status).toBe(401);
    } finally {
      a.ctx.now = realNow;
    }
  });

  it("a key with a usage budget is never cached: both instances spend from the same budget", async () => {
    const { key } = await createKey({ remaining: 3 });
    const statuses: number[] = [];
    for (const platform of [a, b, a, b])
      statuses.push((await platform.query("project.all", {}, { apiKey: key })).status);
    expect(statuses).toEqual([200, 200, 200, 429]);
    for (const platform of both()) {
      expect(await platform.ctx.callers.lookup(`apiKey:${apiKeyHash(key)}`)).toBeUndefined();
    }
  });

  it("a write through one instance is read by the next request through the other", async () => {
    const as = { token: owner.token };
    const { project } = await a.mutateOk("project.create", { name: "Seen by both" }, as);
    const all = await b.query("project.all", {}, as);
    expect(all.body.map((p: { projectId: string }) => p.projectId)).toContain(project.projectId);
    await b.mutateOk("project.update", { projectId: project.projectId, name: "Renamed on b" }, as);
    expect((await a.query("project.one", { projectId: project.projectId }, as)).body.name).toBe(
      "Renamed on b",
    );
    await b.mutateOk("project.remove", { projectId: project.projectId }, as);
    expect((await a.query("project.one", { projectId: project.projectId }, as)).status).toBe(404);
  });
});
