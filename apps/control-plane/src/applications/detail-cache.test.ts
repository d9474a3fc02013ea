/**
 * The cached application.one answers across control planes: two instances on one database. Each
 * test first has the answer cached on both, then writes through one instance (or straight to the
 * database, as the deployment worker does) and reads through both: the write must be in the very
 * next answer. Also: every table the answer reads empties the cache, secrets stay out of the
 * cached bytes, and the caller's access is checked before cached bytes are served.
 */
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createUserDirectly } from "../projects/test-support.ts";
import { readUntilHeld } from "../testing/caches.ts";
import { type Session, startTestPlatformPair, type TestPlatform } from "../testing/harness.ts";
import { APPLICATION_DETAIL_TABLES } from "./detail-cache.ts";

describe("application detail cache", () => {
  let a: TestPlatform;
  let b: TestPlatform;
  let owner: Session;
  let closePair: () => Promise<void>;
  let applicationId: string;
  let projectId: string;
  let environmentId: string;

  beforeAll(async () => {
    ({ a, b, close: closePair } = await startTestPlatformPair());
    owner = await a.registerOwner();
    const created = await a.mutateOk("project.create", { name: "details" }, { token: owner.token });
    projectId = created.project.projectId;
    environmentId = created.environment.environmentId;
    const application = await a.mutateOk(
      "application.create",
      { name: "web", environmentId },
      { token: owner.token },
    );
    applicationId = application.applicationId;
  });
  afterAll(async () => await closePair?.());

  /** application.one through `platform`, as `session` (the owner by default). */
  async function one(platform: TestPlatform, session: Session = owner) {
    const response = await platform.query("application.one", { applicationId }, { token: session.token });
    expect(response.status).toBe(200);
    return response.body as Record<string, any>;
  }

  /** Reads application.one on both instances until each holds the answer; returns it. */
  async function cachedOnBoth() {
    for (const platform of [a, b]) {
      await readUntilHeld(
        () => platform.ctx.applicationDetails.holds(applicationId),
        () => one(platform),
      );
      expect(platform.ctx.applicationDetails.holds(applicationId)).toBe(true);
    }
    const [fromA, fromB] = [await one(a), await one(b)];
    expect(fromB).toEqual(fromA);
    return fromA;
  }

  it("answers a hit with the same bytes a read of the database gives, secrets left out", async () => {
    await a.mutateOk(
      "application.saveDockerProvider",
      { applicationId, dockerImage: "nginx:1", username: "deployer", password: "registry-secret-1" },
      { token: owner.token },
    );
    await a.mutateOk(
      "security.create",
      { applicationId, username: "guard", password: "basic-auth-secret-2" },
      { token: owner.token },
    );
    const missed = await a.request(`/api/application.one?applicationId=${applicationId}`, {
      token: owner.token,
    });
    await readUntilHeld(
      () => a.ctx.applicationDetails.holds(applicationId),
      () => a.request(`/api/application.one?applicationId=${applicationId}`, { token: owner.token }),
    );
    const hit = await a.request(`/api/application.one?applicationId=${applicationId}`, {
      token: owner.token,
    });
    expect(a.ctx.applicationDetails.holds(applicationId)).toBe(true);
    expect(hit.status).toBe(200);
    expect(JSON.stringify(hit.body)).toBe(JSON.stringify(missed.body));
    expect(hit.headers.get("content-type")).toBe(missed.headers.get("content-type"));
    const bytes = JSON.stringify(hit.body);
    expect(hit.body.security.map((s: { username: string }) => s.username)).toEqual(["guard"]);
    for (const secret of ["registry-secret-1", "basic-auth-secret-2", "passwordSealed"]) {
      expect(bytes).not.toContain(secret);
    }
  });

  it("every table the answer reads empties the cache of both instances, even a write changing no row", async () => {
    for (const [index, table] of APPLICATION_DETAIL_TABLES.entries()) {
      await cachedOnBoth();
      const writer = index % 2 === 0 ? a : b;
      // A statement trigger fires for a statement that touches no row: this proves the wiring.
      await sql`delete from ${sql.table(table)} where false`.execute(writer.ctx.db);
      for (const platform of [a, b]) {
        await expect
          .poll(() => platform.ctx.applicationDetails.holds(applicationId), { timeout: 5000 })
          .toBe(false);
      }
    }
  });

  it("a rename and an env change through one instance are in the next answer of either", async () => {
    await cachedOnBoth();
    await b.mutateOk("application.update", { applicationId, name: "renamed" }, { token: owner.token });
    for (const platform of [a, b]) expect((await one(platform)).name).toBe("renamed");
    await cachedOnBoth();
    await a.mutateOk(
      "application.saveEnvironment",
      { applicationId, env: "GREETING=hello", buildArgs: "", createEnvFile: true },
      { token: owner.token },
    );
    for (const platform of [b, a]) expect((await one(platform)).env).toBe("GREETING=hello");
  });

  it("a project and environment rename are in the next answer of either", async () => {
    await cachedOnBoth();
    await a.mutateOk("project.update", { projectId, name: "details renamed" }, { token: owner.token });
    for (const platform of [b, a]) {
      expect((await one(platform)).environment.project.name).toBe("details renamed");
    }
    await cachedOnBoth();
    await sql`update environments set name = 'stage' where environment_id = ${environmentId}`.execute(
      b.ctx.db,
    );
    for (const platform of [a, b]) expect((await one(platform)).environment.name).toBe("stage");
  });

  it("a deployment and its status written straight to the database (as the worker does) are in the next answer", async () => {
    await cachedOnBoth();
    const deploymentId = `dep-${applicationId}`;
    await sql`insert into deployments (deployment_id, application_id, target_kind, target_id, kind, title)
      values (${deploymentId}, ${applicationId}, 'application', ${applicationId}, 'deploy', 'cache test')`.execute(
      a.ctx.db,
    );
    for (const platform of [b, a]) {
      const deployments = (await one(platform)).deployments as { deploymentId: string; status: string }[];
      expect(deployments.map((d) => [d.deploymentId, d.status])).toEqual([[deploymentId, "idle"]]);
    }
    await cachedOnBoth();
    await sql`update deployments set status = 'done' where deployment_id = ${deploymentId}`.execute(b.ctx.db);
    for (const platform of [a, b]) {
      expect((await one(platform)).deployments.map((d: { status: string }) => d.status)).toEqual(["done"]);
    }
    await cachedOnBoth();
    await sql`update applications set application_status = 'running' where application_id = ${applicationId}`.execute(
      a.ctx.db,
    );
    for (const platform of [b, a]) expect((await one(platform)).applicationStatus).toBe("running");
  });

  it("a domain, a port and a credential added or changed through one instance are in the next answer of either", async () => {
    await cachedOnBoth();
    const domain = await b.mutateOk(
      "domain.create",
      { domainType: "application", applicationId, host: "cached.example.com", port: 8080 },
      { token: owner.token },
    );
    for (const platform of [a, b]) {
      expect((await one(platform)).domains.map((d: { host: string }) => d.host)).toEqual([
        "cached.example.com",
      ]);
    }
    await cachedOnBoth();
    await a.mutateOk(
      "domain.update",
      { domainId: domain.domainId, host: "moved.example.com" },
      { token: owner.token },
    );
    for (const platform of [b, a]) {
      expect((await one(platform)).domains.map((d: { host: string }) => d.host)).toEqual([
        "moved.example.com",
      ]);
    }
    await cachedOnBoth();
    await b.mutateOk(
      "port.create",
      { applicationId, publishedPort: 18_080, targetPort: 80 },
      { token: owner.token },
    );
    for (const platform of [a, b]) {
      expect((await one(platform)).ports.map((p: { publishedPort: number }) => p.publishedPort)).toEqual([
        18_080,
      ]);
    }
    await cachedOnBoth();
    await a.mutateOk(
      "security.create",
      { applicationId, username: "second", password: "another-secret-3" },
      { token: owner.token },
    );
    for (const platform of [b, a]) {
      const usernames = (await one(platform)).security.map((s: { username: string }) => s.username);
      expect(usernames.sort()).toEqual(["guard", "second"]);
    }
  });

  it("checks each caller's access before serving the cached answer", async () => {
    await cachedOnBoth();
    const member = await a.addMember(owner, "member");
    const grant = (accessedServices: string[]) =>
      b.mutateOk(
        "user.assignPermissions",
        {
          id: member.user.id,
          accessedProjects: [projectId],
          accessedEnvironments: [environmentId],
          accessedServices,
        },
        { token: owner.token },
      );
    await grant([applicationId]);
    for (const platform of [a, b]) expect((await one(platform, member)).applicationId).toBe(applicationId);
    await grant([]);
    for (const platform of [a, b]) {
      expect(platform.ctx.applicationDetails.holds(applicationId)).toBe(true);
      const refused = await platform.query("application.one", { applicationId }, { token: member.token });
      expect(refused.status).toBe(404);
    }
    const stranger = await createUserDirectly(a, { email: "stranger@example.com" });
    for (const platform of [a, b]) {
      expect(platform.ctx.applicationDetails.holds(applicationId)).toBe(true);
      const foreign = await platform.query("application.one", { applicationId }, { token: stranger.token });
      expect(foreign.status).toBe(404);
    }
  });
});
