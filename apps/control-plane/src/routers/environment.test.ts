import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createUserDirectly } from "../projects/test-support.ts";
import { type Session, startTestPlatform, type TestPlatform } from "../testing/harness.ts";

describe("environment", () => {
  let platform: TestPlatform;
  let owner: Session;
  let other: Session;
  let users = 0;
  const as = (session: Session) => ({ token: session.token });
  const newProject = async (name = "App", session = owner) => {
    const response = await platform.mutate("project.create", { name, env: "FROM_PROJECT=1" }, as(session));
    expect(response.status).toBe(200);
    return response.body as { project: any; environment: any };
  };
  const createEnvironment = (input: Record<string, unknown>, session = owner) =>
    platform.mutate("environment.create", input, as(session));
  const member = (flags: { canDeleteProjects?: boolean }) =>
    createUserDirectly(platform, {
      email: `member${++users}@example.com`,
      organizationId: owner.user.organizationId,
      role: "member",
      ...flags,
    });

  beforeAll(async () => {
    platform = await startTestPlatform();
    owner = await platform.registerOwner();
    other = await createUserDirectly(platform, { email: "other-org@example.com" });
  });
  afterAll(() => platform.close());

  it("creates an environment in a project and shows it with its project and services", async () => {
    const { project } = await newProject();
    const created = await createEnvironment({
      projectId: project.projectId,
      name: " staging ",
      description: "pre-production",
      env: "A=1",
    });
    expect(created.status).toBe(200);
    expect(created.body).toEqual({
      environmentId: expect.any(String),
      projectId: project.projectId,
      name: "staging",
      description: "pre-production",
      env: "A=1",
      isDefault: false,
      createdAt: expect.any(String),
    });

    const one = await platform.query(
      "environment.one",
      { environmentId: created.body.environmentId },
      as(owner),
    );
    expect(one.status).toBe(200);
    expect(one.body).toEqual({
      ...created.body,
      project,
      applications: [],
      postgres: [],
      mysql: [],
      mariadb: [],
      mongo: [],
      redis: [],
      libsql: [],
      compose: [],
    });
  });

  it("lists a project's environments, default first", async () => {
    const { project, environment } = await newProject();
    await createEnvironment({ projectId: project.projectId, name: "b-env" });
    await createEnvironment({ projectId: project.projectId, name: "a-env" });
    const list = await platform.query("environment.byProjectId", { projectId: project.projectId }, as(owner));
    expect(list.status).toBe(200);
    expect(list.body.map((e: any) => e.name)).toEqual(["production", "b-env", "a-env"]);
    expect(list.body[0].environmentId).toBe(environment.environmentId);
    expect(list.body.every((e: any) => e.project.projectId === project.projectId)).toBe(true);
  });

  it("refuses a duplicate name in the same project with 409 naming the field, but allows it elsewhere", async () => {
    const { project } = await newProject();
    expect((await createEnvironment({ projectId: project.projectId, name: "qa" })).status).toBe(200);
    const duplicate = await createEnvironment({ projectId: project.projectId, name: "qa" });
    expect(duplicate.status).toBe(409);
    expect(duplicate.body.error).toMatchObject({ code: "CONFLICT", data: { fields: ["name"] } });
    const production = await createEnvironment({ projectId: project.projectId, name: "production" });
    expect(production.status).toBe(409);

    const { project: second } = await newProject("Second");
    expect((await createEnvironment({ projectId: second.projectId, name: "qa" })).status).toBe(200);
  });

  it("bounds names to 1..100 characters and validates env lines", async () => {
    const { project } = await newProject();
    for (const name of ["", "   ", "x".repeat(101)]) {
      const response = await createEnvironment({ projectId: project.projectId, name });
      expect(response.status, JSON.stringify(name)).toBe(400);
      expect(response.body.error.data.fields).toEqual(["name"]);
    }
    expect((await createEnvironment({ projectId: project.projectId, name: "x".repeat(100) })).status).toBe(
      200,
    );

    const badEnv = await createEnvironment({
      projectId: project.projectId,
      name: "env",
      env: "GOOD=1\n-BAD=2",
    });
    expect(badEnv.status).toBe(400);
    expect(badEnv.body.error.data.fields).toEqual(["env"]);
    expect(badEnv.body.error.message).toContain("line 2");
  });

  it("updates name, description and env; renaming into a taken name is 409", async () => {
    const { project } = await newProject();
    const env = (await createEnvironment({ projectId: project.projectId, name: "dev" })).body;
    await createEnvironment({ projectId: project.projectId, name: "taken" });

    const updated = await platform.mutate(
      "environment.update",
      { environmentId: env.environmentId, name: "development", description: "for devs", env: "DEBUG=1" },
      as(owner),
    );
    expect(updated.status).toBe(200);
    expect(updated.body).toEqual({ ...env, name: "development", description: "for devs", env: "DEBUG=1" });

    const clash = await platform.mutate(
      "environment.update",
      { environmentId: env.environmentId, name: "taken" },
      as(owner),
    );
    expect(clash.status).toBe(409);
    expect(clash.body.error.data.fields).toEqual(["name"]);

    const badEnv = await platform.mutate(
      "environment.update",
      { environmentId: env.environmentId, env: "\n\nno-equals" },
      as(owner),
    );
    expect(badEnv.status).toBe(400);
    expect(badEnv.body.error.message).toContain("line 3");
  });

  it("keeps the default environment's name but lets its description and env change", async () => {
    const { environment } = await newProject();
    const rename = await platform.mutate(
      "environment.update",
      { environmentId: environment.environmentId, name: "prod" },
      as(owner),
    );
    expect(rename.status).toBe(400);
    expect(rename.body.error.data.fields).toEqual(["name"]);

    const same = await platform.mutate(
      "environment.update",
      { environmentId: environment.environmentId, name: "production", env: "X=1" },
      as(owner),
    );
    expect(same.status).toBe(200);
    expect(same.body).toMatchObject({ name: "production", env: "X=1", isDefault: true });
  });

  it("removes an environment but refuses the default one with a 400", async () => {
    const { project, environment } = await newProject();
    const env = (await createEnvironment({ projectId: project.projectId, name: "temp" })).body;

    const removed = await platform.mutate(
      "environment.remove",
      { environmentId: env.environmentId },
      as(owner),
    );
    expect(removed.status).toBe(200);
    expect(removed.body).toEqual({ success: true });
    const row = await platform.ctx.db
      .selectFrom("environments")
      .select("environmentId")
      .where("environmentId", "=", env.environmentId)
      .executeTakeFirst();
    expect(row).toBeUndefined();
    expect(
      (await platform.query("environment.one", { environmentId: env.environmentId }, as(owner))).status,
    ).toBe(404);

    const refused = await platform.mutate(
      "environment.remove",
      { environmentId: environment.environmentId },
      as(owner),
    );
    expect(refused.status).toBe(400);
    expect(refused.body.error.message).toMatch(/default environment/);
    expect(refused.body.error.data.fields).toEqual(["environmentId"]);
  });

  it("lets members remove environments only with canDeleteProjects, and create them freely", async () => {
    const { project } = await newProject();
    const plain = await member({ canDeleteProjects: false });
    const created = await createEnvironment({ projectId: project.projectId, name: "member-made" }, plain);
    expect(created.status).toBe(200);
    const refused = await platform.mutate(
      "environment.remove",
      { environmentId: created.body.environmentId },
      as(plain),
    );
    expect(refused.status).toBe(403);

    const deleter = await member({ canDeleteProjects: true });
    const removed = await platform.mutate(
      "environment.remove",
      { environmentId: created.body.environmentId },
      as(deleter),
    );
    expect(removed.status).toBe(200);
  });

  it("answers 404 for unknown ids", async () => {
    expect((await platform.query("environment.one", { environmentId: "nope" }, as(owner))).status).toBe(404);
    expect((await platform.query("environment.byProjectId", { projectId: "nope" }, as(owner))).status).toBe(
      404,
    );
    expect((await createEnvironment({ projectId: "nope", name: "x" })).status).toBe(404);
  });

  it("hides another organization's environments and projects behind 404", async () => {
    const { project, environment } = await newProject("Private");
    const staging = (
      await createEnvironment({ projectId: project.projectId, name: "staging", env: "SECRET=1" })
    ).body;
    const attempts = [
      platform.query("environment.one", { environmentId: staging.environmentId }, as(other)),
      platform.query("environment.byProjectId", { projectId: project.projectId }, as(other)),
      createEnvironment({ projectId: project.projectId, name: "intruder" }, other),
      platform.mutate(
        "environment.update",
        { environmentId: staging.environmentId, env: "SECRET=2" },
        as(other),
      ),
      platform.mutate("environment.remove", { environmentId: staging.environmentId }, as(other)),
      platform.mutate("environment.remove", { environmentId: environment.environmentId }, as(other)),
    ];
    for (const response of await Promise.all(attempts)) {
      expect(response.status, JSON.stringify(response.body)).toBe(404);
      expect(JSON.stringify(response.body)).not.toContain("SECRET");
    }
    const list = await platform.query("environment.byProjectId", { projectId: project.projectId }, as(owner));
    expect(list.body.map((e: any) => [e.name, e.env])).toEqual([
      ["production", ""],
      ["staging", "SECRET=1"],
    ]);
  });

  it("duplicate copies an environment, its variables and its services into the same project", async () => {
    const { project, environment } = await newProject("Dup source");
    await platform.mutateOk(
      "environment.update",
      { environmentId: environment.environmentId, env: "COPIED=yes" },
      as(owner),
    );
    const db = await platform.mutateOk(
      "redis.create",
      {
        name: "cache",
        appName: `dup-cache-${++users}`,
        environmentId: environment.environmentId,
        databasePassword: "s3cret-Pass",
      },
      as(owner),
    );
    const copy = await platform.mutate(
      "environment.duplicate",
      { environmentId: environment.environmentId, name: "copy", description: "the copy" },
      as(owner),
    );
    expect(copy.status, JSON.stringify(copy.body)).toBe(200);
    expect(copy.body).toMatchObject({
      projectId: project.projectId,
      name: "copy",
      description: "the copy",
      env: "COPIED=yes",
      isDefault: false,
      project: { projectId: project.projectId },
    });
    expect(copy.body.redis).toHaveLength(1);
    expect(copy.body.redis[0]).toMatchObject({ name: "cache (copy)" });
    expect(copy.body.redis[0].redisId).not.toBe(db.redisId);
    // The name is unique in the project: a second copy of that name is a 409.
    const again = await platform.mutate(
      "environment.duplicate",
      { environmentId: environment.environmentId, name: "copy" },
      as(owner),
    );
    expect(again.status).toBe(409);
    expect(again.body.error.data.fields).toEqual(["name"]);
    // Another organization's environment is a 404, and nothing is made.
    const theirs = await newProject("Theirs", other);
    const foreign = await platform.mutate(
      "environment.duplicate",
      { environmentId: theirs.environment.environmentId, name: "stolen" },
      as(owner),
    );
    expect(foreign.status).toBe(404);
    const names = (
      await platform.query("environment.byProjectId", { projectId: theirs.project.projectId }, as(other))
    ).body.map((e: { name: string }) => e.name);
    expect(names).toEqual(["production"]);
  });

  it("search matches name and description, filters by project, pages, and shows a member its granted environments only", async () => {
    const { project, environment } = await newProject("Searchable");
    const tag = `srch${++users}`;
    const staging = (
      await createEnvironment({ projectId: project.projectId, name: `Staging ${tag}`, description: "pre" })
    ).body;
    const qa = (
      await createEnvironment({ projectId: project.projectId, name: "qa", description: `the ${tag} checks` })
    ).body;
    const byQ = (await platform.query("environment.search", { q: tag.toUpperCase() }, as(owner))).body;
    expect(byQ.total).toBe(2);
    expect(byQ.items.map((e: { environmentId: string }) => e.environmentId)).toEqual([
      qa.environmentId,
      staging.environmentId,
    ]);
    const byName = (await platform.query("environment.search", { name: `staging ${tag}` }, as(owner))).body;
    expect(byName.items.map((e: { environmentId: string }) => e.environmentId)).toEqual([
      staging.environmentId,
    ]);
    const byProject = (
      await platform.query(
        "environment.search",
        { projectId: project.projectId, limit: 2, offset: 1 },
        as(owner),
      )
    ).body;
    expect(byProject.total).toBe(3);
    expect(byProject.items.map((e: { environmentId: string }) => e.environmentId)).toEqual([
      staging.environmentId,
      environment.environmentId,
    ]);
    expect((await platform.query("environment.search", { q: tag }, as(other))).body).toEqual({
      items: [],
      total: 0,
    });
    const limited = await member({});
    await platform.mutateOk(
      "user.assignPermissions",
      {
        id: limited.user.id,
        accessedProjects: [project.projectId],
        accessedEnvironments: [qa.environmentId],
      },
      as(owner),
    );
    const granted = (await platform.query("environment.search", { q: tag }, as(limited))).body;
    expect(granted).toEqual({
      items: [expect.objectContaining({ environmentId: qa.environmentId })],
      total: 1,
    });
    const bad = await platform.query("environment.search", { limit: 101 }, as(owner));
    expect(bad.status).toBe(400);
    expect(JSON.stringify(bad.body)).toContain("limit");
  });

  it("serves environment.one over the tRPC prefix with ?input=", async () => {
    const { environment } = await newProject();
    const input = encodeURIComponent(JSON.stringify({ json: { environmentId: environment.environmentId } }));
    const response = await platform.request(`/api/trpc/environment.one?input=${input}`, as(owner));
    expect(response.status).toBe(200);
    expect(response.body.result.data.json).toMatchObject({
      environmentId: environment.environmentId,
      isDefault: true,
    });
  });
});
