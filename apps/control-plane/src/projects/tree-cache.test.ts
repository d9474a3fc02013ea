/**
 * The cached project trees across control planes: two instances on one database. Each test first has the tree
 * cached on both, then writes through one instance (or straight to the database, as the
 * deployment worker does) and reads through both: the write must be in the very next answer.
 */
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { serviceKindHooks } from "../projects/workload-kinds.ts";
import { readUntilHeld } from "../testing/caches.ts";
import { type Session, startTestPlatformPair, type TestPlatform } from "../testing/harness.ts";

describe("project tree cache", () => {
  let a: TestPlatform;
  let b: TestPlatform;
  let owner: Session;
  let closePair: () => Promise<void>;

  beforeAll(async () => {
    ({ a, b, close: closePair } = await startTestPlatformPair());
    owner = await a.registerOwner();
  });
  afterAll(async () => await closePair?.());

  const organizationId = () => owner.user.organizationId;

  /** project.all through `platform`, as the owner. */
  async function all(platform: TestPlatform) {
    const response = await platform.query("project.all", {}, { token: owner.token });
    expect(response.status).toBe(200);
    return response.body as { projectId: string; name: string; environments: any[]; projectTags: any[] }[];
  }

  /** Reads project.all on both instances until each holds the tree; returns its answer. */
  async function cachedOnBoth() {
    for (const platform of [a, b]) {
      await readUntilHeld(
        () => platform.ctx.projectTrees.holds(organizationId()),
        () => all(platform),
      );
      expect(platform.ctx.projectTrees.holds(organizationId())).toBe(true);
    }
    const [fromA, fromB] = [await all(a), await all(b)];
    expect(fromB).toEqual(fromA);
    return fromA;
  }

  it("answers a hit with the same bytes a read of the database gives", async () => {
    await a.mutateOk("project.create", { name: "bytes" }, { token: owner.token });
    const missed = await a.request("/api/project.all", { token: owner.token });
    const hit = await a.request("/api/project.all", { token: owner.token });
    expect(a.ctx.projectTrees.holds(organizationId())).toBe(true);
    expect(JSON.stringify(hit.body)).toBe(JSON.stringify(missed.body));
    expect(hit.headers.get("content-type")).toBe(missed.headers.get("content-type"));
  });

  it("a project created, renamed and removed through one instance is in the next answer of either", async () => {
    await cachedOnBoth();
    const { project } = await b.mutateOk("project.create", { name: "fresh" }, { token: owner.token });
    for (const platform of [a, b]) {
      expect((await all(platform)).some((p) => p.projectId === project.projectId)).toBe(true);
    }
    await cachedOnBoth();
    await a.mutateOk(
      "project.update",
      { projectId: project.projectId, name: "renamed" },
      { token: owner.token },
    );
    for (const platform of [b, a]) {
      expect((await all(platform)).find((p) => p.projectId === project.projectId)?.name).toBe("renamed");
      const one = await platform.query(
        "project.one",
        { projectId: project.projectId },
        { token: owner.token },
      );
      expect(one.body.name).toBe("renamed");
    }
    await cachedOnBoth();
    await b.mutateOk("project.remove", { projectId: project.projectId }, { token: owner.token });
    for (const platform of [a, b]) {
      expect((await all(platform)).some((p) => p.projectId === project.projectId)).toBe(false);
      const one = await platform.query(
        "project.one",
        { projectId: project.projectId },
        { token: owner.token },
      );
      expect(one.status).toBe(404);
    }
  });

  it("an environment and an application added through one instance are in the next answer of either", async () => {
    const { project, environment } = await a.mutateOk(
      "project.create",
      { name: "services" },
      { token: owner.token },
    );
    await cachedOnBoth();
    const created = await b.mutateOk(
      "environment.create",
      { projectId: project.projectId, name: "staging" },
      { token: owner.token },
    );
    for (const platform of [a, b]) {
      const tree = (await all(platform)).find((p) => p.projectId === project.projectId);
      expect(tree?.environments.map((e) => e.environmentId)).toContain(created.environmentId);
    }
    await cachedOnBoth();
    const application = await a.mutateOk(
      "application.create",
      { name: "web", environmentId: environment.environmentId },
      { token: owner.token },
    );
    for (const platform of [b, a]) {
      const tree = (await all(platform)).find((p) => p.projectId === project.projectId);
      const production = tree?.environments.find((e) => e.environmentId === environment.environmentId);
      expect(production?.applications.map((s: { applicationId: string }) => s.applicationId)).toEqual([
        application.applicationId,
      ]);
    }
  });

  it("a status written straight to the database (as the deployment worker does) is in the next answer", async () => {
    const { environment } = await a.mutateOk("project.create", { name: "status" }, { token: owner.token });
    const application = await a.mutateOk(
      "application.create",
      { name: "api", environmentId: environment.environmentId },
      { token: owner.token },
    );
    await cachedOnBoth();
    await sql`update applications set application_status = 'running' where application_id = ${application.applicationId}`.execute(
      a.ctx.db,
    );
    for (const platform of [b, a]) {
      const statuses = (await all(platform))
        .flatMap((p) => p.environments)
        .flatMap((e) => e.applications)
        .filter((s: { applicationId: string }) => s.applicationId === application.applicationId)
        .map((s: { applicationStatus: string }) => s.applicationStatus);
      expect(statuses).toEqual(["running"]);
    }
  });

  it("a tag assigned, recoloured, taken off and removed through one instance is in the next answer of either", async () => {
    const { project } = await a.mutateOk("project.create", { name: "tags" }, { token: owner.token });
    const tag = await b.mutateOk("tag.create", { name: "cached", color: "#111111" }, { token: owner.token });
    const tagsOf = async (platform: TestPlatform) =>
      (await all(platform))
        .find((p) => p.projectId === project.projectId)
        ?.projectTags.map((t: { tagId: string; tag: { color: string } }) => `${t.tagId} ${t.tag.color}`);
    await cachedOnBoth();
    await b.mutateOk(
      "tag.assignToProject",
      { projectId: project.projectId, tagId: tag.tagId },
      { token: owner.token },
    );
    for (const platform of [a, b]) expect(await tagsOf(platform)).toEqual([`${tag.tagId} #111111`]);
    await cachedOnBoth();
    await a.mutateOk("tag.update", { tagId: tag.tagId, color: "#222222" }, { token: owner.token });
    for (const platform of [b, a]) expect(await tagsOf(platform)).toEqual([`${tag.tagId} #222222`]);
    await cachedOnBoth();
    await b.mutateOk(
      "tag.removeFromProject",
      { projectId: project.projectId, tagId: tag.tagId },
      { token: owner.token },
    );
    for (const platform of [a, b]) expect(await tagsOf(platform)).toEqual([]);
    await a.mutateOk(
      "tag.bulkAssign",
      { projectId: project.projectId, tagIds: [tag.tagId] },
      { token: owner.token },
    );
    await cachedOnBoth();
    // Removing the tag deletes its assignments by cascade: that too is in the next answer.
    await a.mutateOk("tag.remove", { tagId: tag.tagId }, { token: owner.token });
    for (const platform of [b, a]) expect(await tagsOf(platform)).toEqual([]);
  });

  it("keeps nothing while a service kind's summary table sends no notification", async () => {
    const original = serviceKindHooks.application;
    if (!original) throw new Error("the application kind is registered");
    serviceKindHooks.application = { ...original, summaryTable: "a_table_without_trigger" };
    try {
      await all(a);
      await all(a);
      expect(a.ctx.projectTrees.holds(organizationId())).toBe(false);
    } finally {
      serviceKindHooks.application = original;
    }
    await all(a);
    expect(a.ctx.projectTrees.holds(organizationId())).toBe(true);
  });

  it("a member with project grants sees only those projects from the cached tree", async () => {
    const { project } = await a.mutateOk("project.create", { name: "granted" }, { token: owner.token });
    await cachedOnBoth();
    const member = await a.addMember(owner, "member");
    await a.mutateOk(
      "user.assignPermissions",
      {
        id: member.user.id,
        accessedProjects: [project.projectId],
        accessedEnvironments: [],
        accessedServices: [],
      },
      { token: owner.token },
    );
    for (const platform of [a, b]) {
      const seen = await platform.query("project.all", {}, { token: member.token });
      expect(seen.status).toBe(200);
      expect((seen.body as { projectId: string }[]).map((p) => p.projectId)).toEqual([project.projectId]);
    }
  });
});
