/**
 * tag.*: an organization's tags, assigned to its projects and carried by project.all and
 * project.one. Tenancy (another organization's tag or project is a 404 and changes nothing),
 * names unique per organization, and who may do what.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Session, startTestPlatform, type TestPlatform } from "../testing/harness.ts";
import { createOtherOrganization } from "../users/test-support.ts";

describe("tag", () => {
  let platform: TestPlatform;
  let owner: Session;
  let admin: Session;
  let member: Session;
  let other: Session & { organizationId: string };
  const as = (session: Session) => ({ token: session.token });
  async function queryOk(name: string, input: Record<string, unknown>, auth: { token: string }) {
    const response = await platform.query(name, input, auth);
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    return response.body;
  }

  beforeAll(async () => {
    platform = await startTestPlatform();
    owner = await platform.registerOwner();
    admin = await platform.addMember(owner, "admin");
    member = await platform.addMember(owner, "member");
    other = await createOtherOrganization(platform);
  });
  afterAll(() => platform.close());

  async function project(name: string, session: Session = owner): Promise<string> {
    const created = await platform.mutateOk("project.create", { name }, as(session));
    return created.project.projectId;
  }

  async function tagsOnAll(projectId: string, session: Session = owner) {
    const all = await platform.query("project.all", {}, as(session));
    expect(all.status).toBe(200);
    const found = all.body.find((p: { projectId: string }) => p.projectId === projectId);
    return found?.projectTags as { id: string; projectId: string; tagId: string; tag: any }[] | undefined;
  }

  it("create answers the tag with its tagId; name and color are stored as sent", async () => {
    const tag = await platform.mutateOk("tag.create", { name: "frontend", color: "#3b82f6" }, as(admin));
    expect(tag).toEqual({
      tagId: expect.any(String),
      name: "frontend",
      color: "#3b82f6",
      createdAt: expect.any(String),
      organizationId: owner.user.organizationId,
    });
    const plain = await platform.mutateOk("tag.create", { name: "plain" }, as(owner));
    expect(plain.color).toBeNull();
    expect(await queryOk("tag.one", { tagId: tag.tagId }, as(member))).toEqual(tag);
    const names = (await queryOk("tag.all", {}, as(member))).map((t: { name: string }) => t.name);
    expect(names).toEqual([...names].sort());
    expect(names).toEqual(expect.arrayContaining(["frontend", "plain"]));
  });

  it("names are unique per organization: a second one is a 409 naming name, another organization may reuse it", async () => {
    await platform.mutateOk("tag.create", { name: "unique-one" }, as(owner));
    const again = await platform.mutate("tag.create", { name: "unique-one" }, as(owner));
    expect(again.status).toBe(409);
    expect(again.body.error.data.fields).toEqual(["name"]);
    const elsewhere = await platform.mutate("tag.create", { name: "unique-one" }, as(other));
    expect(elsewhere.status).toBe(200);
    const second = await platform.mutateOk("tag.create", { name: "unique-two" }, as(owner));
    const renamed = await platform.mutate(
      "tag.update",
      { tagId: second.tagId, name: "unique-one" },
      as(owner),
    );
    expect(renamed.status).toBe(409);
    expect(renamed.body.error.data.fields).toEqual(["name"]);
  });

  it("refuses a color that is not a hex colour and unknown keys (400 naming the field)", async () => {
    const bad = await platform.mutate("tag.create", { name: "bad colour", color: "red;}" }, as(owner));
    expect(bad.status).toBe(400);
    expect(JSON.stringify(bad.body)).toContain("color");
    const extra = await platform.mutate(
      "tag.create",
      { name: "x", organizationId: other.organizationId },
      as(owner),
    );
    expect(extra.status).toBe(400);
    expect(JSON.stringify(extra.body)).toContain("organizationId");
  });

  it("members read tags but only owners and admins create, update and remove them", async () => {
    const tag = await platform.mutateOk("tag.create", { name: "guarded" }, as(owner));
    expect((await platform.mutate("tag.create", { name: "by member" }, as(member))).status).toBe(403);
    expect((await platform.mutate("tag.update", { tagId: tag.tagId, name: "x" }, as(member))).status).toBe(
      403,
    );
    expect((await platform.mutate("tag.remove", { tagId: tag.tagId }, as(member))).status).toBe(403);
    expect((await queryOk("tag.one", { tagId: tag.tagId }, as(owner))).name).toBe("guarded");
  });

  it("assignToProject puts the tag on project.all and project.one; update and remove show in the next answer", async () => {
    const projectId = await project("tagged");
    const tag = await platform.mutateOk("tag.create", { name: "api", color: "#fff" }, as(owner));
    const before = await tagsOnAll(projectId);
    expect(before).toEqual([]);
    const assigned = await platform.mutateOk(
      "tag.assignToProject",
      { projectId, tagId: tag.tagId },
      as(owner),
    );
    expect(assigned).toEqual({ id: expect.any(String), projectId, tagId: tag.tagId });
    expect(await tagsOnAll(projectId)).toEqual([{ ...assigned, tag }]);
    const one = await queryOk("project.one", { projectId }, as(owner));
    expect(one.projectTags).toEqual([{ ...assigned, tag }]);

    const twice = await platform.mutate("tag.assignToProject", { projectId, tagId: tag.tagId }, as(owner));
    expect(twice.status).toBe(409);

    const updated = await platform.mutateOk("tag.update", { tagId: tag.tagId, color: "#000000" }, as(admin));
    expect(updated).toEqual({ ...tag, color: "#000000" });
    expect((await tagsOnAll(projectId))?.[0]?.tag.color).toBe("#000000");

    await platform.mutateOk("tag.removeFromProject", { projectId, tagId: tag.tagId }, as(owner));
    expect(await tagsOnAll(projectId)).toEqual([]);

    await platform.mutateOk("tag.assignToProject", { projectId, tagId: tag.tagId }, as(owner));
    await platform.mutateOk("tag.remove", { tagId: tag.tagId }, as(owner));
    expect(await tagsOnAll(projectId)).toEqual([]);
    expect((await platform.query("tag.one", { tagId: tag.tagId }, as(owner))).status).toBe(404);
  });

  it("bulkAssign replaces the project's tags, by name, and an unknown tag changes nothing", async () => {
    const projectId = await project("bulk");
    const [b, a, c] = await Promise.all(
      ["bulk-b", "bulk-a", "bulk-c"].map((name) => platform.mutateOk("tag.create", { name }, as(owner))),
    );
    await platform.mutateOk("tag.bulkAssign", { projectId, tagIds: [b.tagId, a.tagId, b.tagId] }, as(owner));
    expect((await tagsOnAll(projectId))?.map((t) => t.tag.name)).toEqual(["bulk-a", "bulk-b"]);
    const foreign = await platform.mutateOk("tag.create", { name: "theirs-bulk" }, as(other));
    const refused = await platform.mutate(
      "tag.bulkAssign",
      { projectId, tagIds: [c.tagId, foreign.tagId] },
      as(owner),
    );
    expect(refused.status).toBe(404);
    expect((await tagsOnAll(projectId))?.map((t) => t.tag.name)).toEqual(["bulk-a", "bulk-b"]);
    await platform.mutateOk("tag.bulkAssign", { projectId, tagIds: [c.tagId] }, as(owner));
    expect((await tagsOnAll(projectId))?.map((t) => t.tag.name)).toEqual(["bulk-c"]);
    await platform.mutateOk("tag.bulkAssign", { projectId, tagIds: [] }, as(owner));
    expect(await tagsOnAll(projectId)).toEqual([]);
  });

  it("another organization's tag or project is a 404 to every procedure and changes nothing", async () => {
    const mine = await platform.mutateOk("tag.create", { name: "mine" }, as(owner));
    const projectId = await project("mine");
    const theirs = await platform.mutateOk("tag.create", { name: "theirs" }, as(other));
    const theirProject = await project("theirs", other);
    await platform.mutateOk(
      "tag.assignToProject",
      { projectId: theirProject, tagId: theirs.tagId },
      as(other),
    );

    const calls: [string, Record<string, unknown>][] = [
      ["tag.update", { tagId: theirs.tagId, name: "taken over" }],
      ["tag.remove", { tagId: theirs.tagId }],
      ["tag.assignToProject", { projectId, tagId: theirs.tagId }],
      ["tag.assignToProject", { projectId: theirProject, tagId: mine.tagId }],
      ["tag.removeFromProject", { projectId: theirProject, tagId: theirs.tagId }],
      ["tag.bulkAssign", { projectId: theirProject, tagIds: [] }],
      ["tag.bulkAssign", { projectId, tagIds: [theirs.tagId] }],
    ];
    for (const [procedure, input] of calls) {
      const response = await platform.mutate(procedure, input, as(owner));
      expect(response.status, `${procedure} ${JSON.stringify(input)}`).toBe(404);
    }
    expect((await platform.query("tag.one", { tagId: theirs.tagId }, as(owner))).status).toBe(404);
    expect((await queryOk("tag.all", {}, as(owner))).map((t: { tagId: string }) => t.tagId)).not.toContain(
      theirs.tagId,
    );
    expect(await queryOk("tag.one", { tagId: theirs.tagId }, as(other))).toEqual(theirs);
    expect((await tagsOnAll(theirProject, other))?.map((t) => t.tagId)).toEqual([theirs.tagId]);
    expect(await tagsOnAll(projectId)).toEqual([]);
  });

  it("a member assigns tags only to the projects it was granted", async () => {
    const granted = await project("granted");
    const hidden = await project("hidden");
    const tag = await platform.mutateOk("tag.create", { name: "member-tag" }, as(owner));
    const assigned = await platform.mutate(
      "user.assignPermissions",
      { id: member.user.userId, accessedProjects: [granted] },
      as(owner),
    );
    expect(assigned.status, JSON.stringify(assigned.body)).toBe(200);
    await platform.mutateOk("tag.assignToProject", { projectId: granted, tagId: tag.tagId }, as(member));
    for (const procedure of ["tag.assignToProject", "tag.removeFromProject"]) {
      const refused = await platform.mutate(procedure, { projectId: hidden, tagId: tag.tagId }, as(member));
      expect(refused.status).toBe(404);
    }
    const bulk = await platform.mutate(
      "tag.bulkAssign",
      { projectId: hidden, tagIds: [tag.tagId] },
      as(member),
    );
    expect(bulk.status).toBe(404);
    expect(await tagsOnAll(hidden)).toEqual([]);
    expect((await tagsOnAll(granted, member))?.map((t) => t.tagId)).toEqual([tag.tagId]);
  });
});
