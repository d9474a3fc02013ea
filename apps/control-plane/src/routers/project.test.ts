import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createUserDirectly } from "../projects/test-support.ts";
import { type Session, startTestPlatform, type TestPlatform } from "../testing/harness.ts";

const emptyServices = {
  applications: [],
  postgres: [],
  mysql: [],
  mariadb: [],
  mongo: [],
  redis: [],
  libsql: [],
  compose: [],
};

describe("project", () => {
  let platform: TestPlatform;
  let owner: Session;
  let other: Session;
  let users = 0;
  const as = (session: Session) => ({ token: session.token });
  const newOrganization = () => createUserDirectly(platform, { email: `org${++users}@example.com` });
  const member = (flags: { canCreateProjects?: boolean; canDeleteProjects?: boolean }) =>
    createUserDirectly(platform, {
      email: `member${++users}@example.com`,
      organizationId: owner.user.organizationId,
      role: "member",
      ...flags,
    });
  const create = async (input: Record<string, unknown>, session = owner) => {
    const response = await platform.mutate("project.create", input, as(session));
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    return response.body as { project: any; environment: any };
  };
  const environmentCount = async (projectId: string) =>
    (
      await platform.ctx.db
        .selectFrom("environments")
        .select("environmentId")
        .where("projectId", "=", projectId)
        .execute()
    ).length;

  beforeAll(async () => {
    platform = await startTestPlatform();
    owner = await platform.registerOwner();
    other = await newOrganization();
  });
  afterAll(() => platform.close());

  describe("create", () => {
    it("returns the project and its default production environment", async () => {
      const { project, environment } = await create({
        name: "  Shop  ",
        description: "The web shop",
        env: "NODE_ENV=production\n# comment\nLOG_LEVEL=info",
      });
      expect(project).toEqual({
        projectId: expect.any(String),
        organizationId: owner.user.organizationId,
        name: "Shop",
        description: "The web shop",
        env: "NODE_ENV=production\n# comment\nLOG_LEVEL=info",
        createdAt: expect.any(String),
      });
      expect(environment).toMatchObject({
        projectId: project.projectId,
        name: "production",
        isDefault: true,
        env: "",
      });
      expect(await environmentCount(project.projectId)).toBe(1);
    });

    it("defaults description to null and env to empty", async () => {
      const { project } = await create({ name: "Bare" });
      expect(project).toMatchObject({ description: null, env: "" });
    });

    it("refuses a missing name and a bad env line, naming the field and the line", async () => {
      const missing = await platform.mutate("project.create", { description: "x" }, as(owner));
      expect(missing.status).toBe(400);
      expect(missing.body.error.data.fields).toEqual(["name"]);

      const badEnv = await platform.mutate(
        "project.create",
        { name: "X", env: "A=1\n\nnot a pair" },
        as(owner),
      );
      expect(badEnv.status).toBe(400);
      expect(badEnv.body.error.data.fields).toEqual(["env"]);
      expect(badEnv.body.error.message).toContain("line 3");

      const tooLong = await platform.mutate("project.create", { name: "x".repeat(101) }, as(owner));
      expect(tooLong.status).toBe(400);
      expect(tooLong.body.error.data.fields).toEqual(["name"]);
    });

    it("refuses NUL characters with a 400 instead of a database error", async () => {
      const response = await platform.mutate("project.create", { name: "a\u0000b" }, as(owner));
      expect(response.status).toBe(400);
      expect(response.body.error.data.fields).toEqual(["name"]);
      const nested = await platform.mutate(
        "project.duplicate",
        { sourceEnvironmentId: "x", name: "y", selectedServices: [{ id: "\u0000", type: "redis" }] },
        as(owner),
      );
      expect(nested.status).toBe(400);
      expect(nested.body.error.data.fields).toEqual(["selectedServices.0.id"]);
    });
  });

  describe("one and all", () => {
    it("nests environments (default first) with their service lists", async () => {
      const { project, environment } = await create({ name: "Nested" });
      const staging = await platform.mutate(
        "environment.create",
        { projectId: project.projectId, name: "staging" },
        as(owner),
      );
      expect(staging.status).toBe(200);

      const one = await platform.query("project.one", { projectId: project.projectId }, as(owner));
      expect(one.status).toBe(200);
      expect(one.body).toMatchObject({ projectId: project.projectId, name: "Nested" });
      expect(one.body.environments).toEqual([
        { ...environment, ...emptyServices },
        { ...staging.body, ...emptyServices },
      ]);
    });

    it("lists only the caller's organization's projects, each with environments and services", async () => {
      const mine = await create({ name: "Listed" });
      const theirs = await create({ name: "Foreign" }, other);

      const all = await platform.query("project.all", {}, as(owner));
      expect(all.status).toBe(200);
      const ids = all.body.map((p: any) => p.projectId);
      expect(ids).toContain(mine.project.projectId);
      expect(ids).not.toContain(theirs.project.projectId);
      expect(all.body.every((p: any) => p.organizationId === owner.user.organizationId)).toBe(true);
      const listed = all.body.find((p: any) => p.projectId === mine.project.projectId);
      expect(listed.environments).toEqual([{ ...mine.environment, ...emptyServices }]);

      const theirAll = await platform.query("project.all", {}, as(other));
      expect(theirAll.body.map((p: any) => p.projectId)).toEqual([theirs.project.projectId]);
    });

    it("answers 404 for an unknown project and 400 without projectId", async () => {
      expect((await platform.query("project.one", { projectId: "nope" }, as(owner))).status).toBe(404);
      const missing = await platform.query("project.one", {}, as(owner));
      expect(missing.status).toBe(400);
      expect(missing.body.error.data.fields).toEqual(["projectId"]);
    });

    it("requires authentication", async () => {
      expect((await platform.query("project.all")).status).toBe(401);
    });
  });

  describe("update", () => {
    it("changes only the fields sent and returns the project", async () => {
      const { project } = await create({ name: "Before", description: "old", env: "A=1" });
      const renamed = await platform.mutate(
        "project.update",
        { projectId: project.projectId, name: "After" },
        as(owner),
      );
      expect(renamed.status).toBe(200);
      expect(renamed.body).toEqual({ ...project, name: "After" });

      const changed = await platform.mutate(
        "project.update",
        { projectId: project.projectId, description: null, env: "A=2\nB=3" },
        as(owner),
      );
      expect(changed.body).toEqual({ ...project, name: "After", description: null, env: "A=2\nB=3" });

      const nothing = await platform.mutate("project.update", { projectId: project.projectId }, as(owner));
      expect(nothing.body).toEqual(changed.body);
    });

    it("validates env and names the line", async () => {
      const { project } = await create({ name: "Env" });
      const response = await platform.mutate(
        "project.update",
        { projectId: project.projectId, env: "OK=1\n9LIVES=x" },
        as(owner),
      );
      expect(response.status).toBe(400);
      expect(response.body.error.data.fields).toEqual(["env"]);
      expect(response.body.error.message).toContain("line 2");
    });
  });

  describe("remove", () => {
    it("deletes the project and cascades to its environments", async () => {
      const { project } = await create({ name: "Doomed" });
      await platform.mutate("environment.create", { projectId: project.projectId, name: "dev" }, as(owner));
      expect(await environmentCount(project.projectId)).toBe(2);

      const removed = await platform.mutate("project.remove", { projectId: project.projectId }, as(owner));
      expect(removed.status).toBe(200);
      expect(removed.body).toEqual({ success: true });
      expect(await environmentCount(project.projectId)).toBe(0);
      expect((await platform.query("project.one", { projectId: project.projectId }, as(owner))).status).toBe(
        404,
      );
      expect(
        (await platform.mutate("project.remove", { projectId: project.projectId }, as(owner))).status,
      ).toBe(404);
    });
  });

  describe("duplicate", () => {
    it("copies an environment into a new project (project and environment variables copied)", async () => {
      const { project } = await create({ name: "Origin", env: "PROJECT_VAR=1" });
      const staging = await platform.mutate(
        "environment.create",
        { projectId: project.projectId, name: "staging", description: "pre-prod", env: "ENV_VAR=2" },
        as(owner),
      );

      const copy = await platform.mutate(
        "project.duplicate",
        { sourceEnvironmentId: staging.body.environmentId, name: "Origin copy", description: "copied" },
        as(owner),
      );
      expect(copy.status, JSON.stringify(copy.body)).toBe(200);
      expect(copy.body.project).toMatchObject({
        name: "Origin copy",
        description: "copied",
        env: "PROJECT_VAR=1",
      });
      expect(copy.body.project.projectId).not.toBe(project.projectId);
      expect(copy.body).toMatchObject({
        projectId: copy.body.project.projectId,
        name: "production",
        isDefault: true,
        env: "ENV_VAR=2",
        ...emptyServices,
      });

      const one = await platform.query("project.one", { projectId: copy.body.project.projectId }, as(owner));
      expect(one.body.environments.map((e: any) => e.environmentId)).toEqual([copy.body.environmentId]);
      // The source is untouched.
      expect(await environmentCount(project.projectId)).toBe(2);
    });

    it("copies an environment into a new environment of the same project", async () => {
      const { project, environment } = await create({ name: "Same" });
      await platform.mutate(
        "environment.update",
        { environmentId: environment.environmentId, env: "A=1" },
        as(owner),
      );
      const copy = await platform.mutate(
        "project.duplicate",
        { sourceEnvironmentId: environment.environmentId, name: "preview", duplicateInSameProject: true },
        as(owner),
      );
      expect(copy.status, JSON.stringify(copy.body)).toBe(200);
      expect(copy.body).toMatchObject({
        projectId: project.projectId,
        name: "preview",
        env: "A=1",
        isDefault: false,
        description: "Production environment",
        project: { projectId: project.projectId },
      });
      expect(await environmentCount(project.projectId)).toBe(2);

      const again = await platform.mutate(
        "project.duplicate",
        { sourceEnvironmentId: environment.environmentId, name: "preview", duplicateInSameProject: true },
        as(owner),
      );
      expect(again.status).toBe(409);
      expect(again.body.error.data.fields).toEqual(["name"]);
      expect(await environmentCount(project.projectId)).toBe(2);
    });

    it("validates selectedServices and refuses services that are not in the source environment", async () => {
      const { environment } = await create({ name: "Pick" });
      const badType = await platform.mutate(
        "project.duplicate",
        {
          sourceEnvironmentId: environment.environmentId,
          name: "x",
          selectedServices: [{ id: "s1", type: "nginx" }],
        },
        as(owner),
      );
      expect(badType.status).toBe(400);
      expect(badType.body.error.data.fields).toEqual(["selectedServices.0.type"]);

      const badShape = await platform.mutate(
        "project.duplicate",
        { sourceEnvironmentId: environment.environmentId, name: "x", selectedServices: [{ type: "redis" }] },
        as(owner),
      );
      expect(badShape.status).toBe(400);
      expect(badShape.body.error.data.fields).toEqual(["selectedServices.0.id"]);

      const before = (await platform.query("project.all", {}, as(owner))).body.length;
      const unknown = await platform.mutate(
        "project.duplicate",
        {
          sourceEnvironmentId: environment.environmentId,
          name: "x",
          selectedServices: [{ id: "no-such-app", type: "application" }],
        },
        as(owner),
      );
      expect(unknown.status).toBe(400);
      expect(unknown.body.error.data.fields).toEqual(["selectedServices.0"]);
      // The new project was rolled back with the failed copy.
      expect((await platform.query("project.all", {}, as(owner))).body.length).toBe(before);

      const skipped = await platform.mutate(
        "project.duplicate",
        {
          sourceEnvironmentId: environment.environmentId,
          name: "x",
          includeServices: false,
          selectedServices: [{ id: "no-such-app", type: "application" }],
        },
        as(owner),
      );
      expect(skipped.status).toBe(200);
    });

    it("answers 404 for an unknown source environment", async () => {
      const response = await platform.mutate(
        "project.duplicate",
        { sourceEnvironmentId: "missing", name: "x" },
        as(owner),
      );
      expect(response.status).toBe(404);
    });
  });

  describe("search", () => {
    let searcher: Session;
    beforeAll(async () => {
      searcher = await newOrganization();
      const projects = [
        { name: "Billing API", description: "invoices and payments" },
        { name: "Frontend", description: "customer web app, talks to billing" },
        { name: "100% uptime", description: "status page" },
        { name: "100 percent", description: "not a wildcard" },
        { name: "snake_case", description: null },
        { name: "snakeXcase", description: null },
      ];
      for (const project of projects) await create(project, searcher);
      // Same words in another organization must never show up.
      await create({ name: "Billing API", description: "foreign" }, other);
    });
    const search = (input: Record<string, unknown>) => platform.query("project.search", input, as(searcher));
    const names = (body: any) => body.items.map((p: any) => p.name).sort();

    it("matches q against name or description, case-insensitively", async () => {
      const response = await search({ q: "BILLING" });
      expect(response.status).toBe(200);
      expect(names(response.body)).toEqual(["Billing API", "Frontend"]);
      expect(response.body.total).toBe(2);
      expect(response.body.items.every((p: any) => p.organizationId === searcher.user.organizationId)).toBe(
        true,
      );
    });

    it("matches name and description partially and combines filters", async () => {
      expect(names((await search({ name: "front" })).body)).toEqual(["Frontend"]);
      expect(names((await search({ description: "PAYMENT" })).body)).toEqual(["Billing API"]);
      expect(names((await search({ name: "api", description: "web" })).body)).toEqual([]);
      expect((await search({ q: "   " })).body.total).toBe(6);
    });

    it("matches % and _ literally", async () => {
      expect(names((await search({ q: "100%" })).body)).toEqual(["100% uptime"]);
      expect(names((await search({ name: "e_c" })).body)).toEqual(["snake_case"]);
      expect(names((await search({ q: "%" })).body)).toEqual(["100% uptime"]);
      expect((await search({ q: "\\" })).body.total).toBe(0);
    });

    it("bounds limit to 1..100 and offset to >= 0, naming the field", async () => {
      for (const limit of [0, 101, 2.5, "ten"]) {
        const response = await search({ limit });
        expect(response.status, String(limit)).toBe(400);
        expect(response.body.error.data.fields).toEqual(["limit"]);
      }
      const negative = await search({ offset: -1 });
      expect(negative.status).toBe(400);
      expect(negative.body.error.data.fields).toEqual(["offset"]);
      expect((await search({ limit: 1 })).status).toBe(200);
      expect((await search({ limit: 100 })).status).toBe(200);
    });

    it("pages with a default limit of 20 and an offset", async () => {
      const pager = await newOrganization();
      for (let i = 0; i < 25; i++) await create({ name: `Project ${i}` }, pager);
      const first = await platform.query("project.search", {}, as(pager));
      expect(first.status).toBe(200);
      expect(first.body.items).toHaveLength(20);
      expect(first.body.total).toBe(25);
      const rest = await platform.query("project.search", { offset: 20 }, as(pager));
      expect(rest.body.items).toHaveLength(5);
      expect(rest.body.total).toBe(25);
      const seen = [...first.body.items, ...rest.body.items].map((p: any) => p.projectId);
      expect(new Set(seen).size).toBe(25);
      const page = await platform.query("project.search", { limit: 10, offset: 10 }, as(pager));
      expect(page.body.items.map((p: any) => p.projectId)).toEqual(seen.slice(10, 20));
      const beyond = await platform.query("project.search", { offset: 100 }, as(pager));
      expect(beyond.body).toEqual({ items: [], total: 25 });
    });

    it("answers the tRPC forms (superjson either way): ?input= with a {json} wrapper, and a plain ?input=", async () => {
      const input = encodeURIComponent(JSON.stringify({ json: { q: "billing", limit: 1 } }));
      const wrapped = await platform.request(`/api/trpc/project.search?input=${input}`, as(searcher));
      expect(wrapped.status).toBe(200);
      expect(wrapped.body.result.data.json.total).toBe(2);
      expect(wrapped.body.result.data.json.items).toHaveLength(1);

      const plain = encodeURIComponent(JSON.stringify({ q: "uptime" }));
      const bare = await platform.request(`/api/trpc/project.search?input=${plain}`, as(searcher));
      expect(bare.status).toBe(200);
      expect(bare.body.result.data.json.items.map((p: any) => p.name)).toEqual(["100% uptime"]);

      const badLimit = encodeURIComponent(JSON.stringify({ json: { limit: 101 } }));
      const refused = await platform.request(`/api/trpc/project.search?input=${badLimit}`, as(searcher));
      expect(refused.status).toBe(400);
      expect(refused.body.error.json.data.fields).toEqual(["limit"]);

      const query = await platform.request("/api/project.search?q=%25&limit=5", as(searcher));
      expect(query.status).toBe(200);
      expect(query.body.items.map((p: any) => p.name)).toEqual(["100% uptime"]);
    });

    it("accepts tRPC-wrapped mutations", async () => {
      const response = await platform.request("/api/trpc/project.create", {
        method: "POST",
        body: JSON.stringify({ json: { name: "Via tRPC" } }),
        ...as(searcher),
      });
      expect(response.status).toBe(200);
      expect(response.body.result.data.json.environment.name).toBe("production");
    });
  });

  describe("allForPermissions and homeStats", () => {
    it("count and list (overview.services) what the caller's grants show; allForPermissions lists every project for administrators", async () => {
      const boss = await newOrganization();
      const organizationId = boss.user.organizationId;
      const ok = async (name: string, input: Record<string, unknown>, session = boss) => {
        const call = name.endsWith("homeStats") ? platform.query : platform.mutate;
        const response = await call.call(platform, name, input, as(session));
        expect(response.status, `${name}: ${JSON.stringify(response.body)}`).toBe(200);
        return response.body as any;
      };
      const first = await ok("project.create", { name: "First" });
      const second = await ok("project.create", { name: "Second" });
      const envA = first.environment.environmentId as string;
      await ok("environment.create", { projectId: second.project.projectId, name: "staging" });
      const app = await ok("application.create", {
        name: "web",
        appName: `hs-web-${users}`,
        environmentId: envA,
      });
      const pg = await ok("postgres.create", {
        name: "db",
        appName: `hs-pg-${users}`,
        environmentId: envA,
        databasePassword: "s3cret-Pass",
        databaseName: "app",
        databaseUser: "app",
      });
      const cache = await ok("redis.create", {
        name: "cache",
        appName: `hs-redis-${users}`,
        environmentId: envA,
        databasePassword: "s3cret-Pass",
      });
      await ok("postgres.changeStatus", { postgresId: pg.postgresId, applicationStatus: "done" });
      await ok("redis.changeStatus", { redisId: cache.redisId, applicationStatus: "error" });

      expect(await ok("project.homeStats", {})).toEqual({
        projects: 2,
        environments: 3,
        applications: 1,
        compose: 0,
        databases: 2,
        services: 3,
        status: { running: 1, error: 1, idle: 1 },
      });

      // overview.services: the same services, flat, with their place and latest deployment.
      const deployedAt = "2026-01-02T03:04:05.000Z";
      await platform.ctx.db
        .insertInto("deployments")
        .values({
          deploymentId: `hs-dep-${users}`,
          applicationId: app.applicationId,
          targetKind: "application",
          targetId: app.applicationId,
          kind: "deploy",
          title: "earlier",
          status: "done",
          createdAt: deployedAt,
        })
        .execute();
      const services = (await platform.query("overview.services", {}, as(boss))).body;
      expect(services).toHaveLength(3);
      expect(services).toContainEqual({
        id: app.applicationId,
        type: "application",
        name: "web",
        appName: app.appName,
        status: "idle",
        createdAt: expect.any(String),
        serverId: null,
        serverName: null,
        projectId: first.project.projectId,
        projectName: "First",
        environmentId: envA,
        environmentName: "production",
        icon: null,
        lastDeployAt: deployedAt,
      });
      expect(services).toContainEqual(
        expect.objectContaining({ id: pg.postgresId, type: "postgres", status: "done", lastDeployAt: null }),
      );

      const listed = await platform.query("project.allForPermissions", {}, as(boss));
      expect(listed.status, JSON.stringify(listed.body)).toBe(200);
      expect(listed.body.map((project: { name: string }) => project.name)).toEqual(["Second", "First"]);
      const firstEnvironment = listed.body[1].environments[0];
      expect(firstEnvironment).toMatchObject({ environmentId: envA, name: "production", isDefault: true });
      expect(firstEnvironment.applications).toEqual([
        expect.objectContaining({ applicationId: app.applicationId }),
      ]);
      expect(firstEnvironment.postgres).toEqual([
        expect.objectContaining({ postgresId: pg.postgresId, applicationStatus: "done" }),
      ]);
      expect(JSON.stringify(listed.body)).not.toContain("s3cret-Pass");

      // A member granted one project, its environment and the postgres service only.
      const granted = await createUserDirectly(platform, {
        email: `granted${++users}@example.com`,
        organizationId,
        role: "member",
      });
      await ok("user.assignPermissions", {
        id: granted.user.id,
        accessedProjects: [first.project.projectId],
        accessedEnvironments: [envA],
        accessedServices: [pg.postgresId],
      });
      expect(await ok("project.homeStats", {}, granted)).toEqual({
        projects: 1,
        environments: 1,
        applications: 0,
        compose: 0,
        databases: 1,
        services: 1,
        status: { running: 1, error: 0, idle: 0 },
      });
      expect((await platform.query("project.allForPermissions", {}, as(granted))).status).toBe(403);
      const grantedServices = (await platform.query("overview.services", {}, as(granted))).body;
      expect(grantedServices.map((service: { id: string }) => service.id)).toEqual([pg.postgresId]);
      expect((await platform.query("overview.services", {}, as(other))).body).toEqual([]);
      // Another organization sees none of it.
      const theirs = (await platform.query("project.allForPermissions", {}, as(other))).body;
      expect(JSON.stringify(theirs)).not.toContain(first.project.projectId);
      expect((await platform.query("project.homeStats", {}, as(other))).body.services).toBe(0);
    });
  });

  describe("onboardingStatus and completeOnboarding", () => {
    it("report the steps the caller has taken and remember, per member, that they dismissed them", async () => {
      const boss = await newOrganization();
      const status = async (session = boss) => {
        const response = await platform.query("project.onboardingStatus", {}, as(session));
        expect(response.status, JSON.stringify(response.body)).toBe(200);
        return response.body;
      };
      expect(await status()).toEqual({
        completed: false,
        completedAt: null,
        steps: { createProject: false, createService: false, deployService: false },
      });
      const created = await platform.mutate("project.create", { name: "Getting started" }, as(boss));
      const environmentId = created.body.environment.environmentId;
      expect((await status()).steps).toEqual({
        createProject: true,
        createService: false,
        deployService: false,
      });
      const pg = await platform.mutate(
        "postgres.create",
        {
          name: "db",
          appName: `ob-pg-${users}`,
          environmentId,
          databasePassword: "s3cret-Pass",
          databaseName: "app",
          databaseUser: "app",
        },
        as(boss),
      );
      expect(pg.status, JSON.stringify(pg.body)).toBe(200);
      expect((await status()).steps.createService).toBe(true);
      await platform.mutate(
        "postgres.changeStatus",
        { postgresId: pg.body.postgresId, applicationStatus: "done" },
        as(boss),
      );
      expect((await status()).steps.deployService).toBe(true);

      const refused = await platform.mutate("project.completeOnboarding", { force: true }, as(boss));
      expect(refused.status).toBe(400);
      expect((await status()).completed).toBe(false);
      expect((await platform.mutate("project.completeOnboarding", {}, as(boss))).status).toBe(200);
      const done = await status();
      expect(done.completed).toBe(true);
      expect(Date.parse(done.completedAt)).not.toBeNaN();
      // Dismissing again keeps the first time; another member and another organization are untouched.
      await platform.mutate("project.completeOnboarding", {}, as(boss));
      expect((await status()).completedAt).toBe(done.completedAt);
      const colleague = await createUserDirectly(platform, {
        email: `onboarding${++users}@example.com`,
        organizationId: boss.user.organizationId,
        role: "admin",
      });
      expect((await status(colleague)).completed).toBe(false);
      expect((await status(await newOrganization())).completed).toBe(false);
    });
  });

  describe("permissions", () => {
    it("lets a member create projects only with canCreateProjects", async () => {
      const denied = await member({ canCreateProjects: false });
      const response = await platform.mutate("project.create", { name: "Nope" }, as(denied));
      expect(response.status).toBe(403);
      expect(response.body.error.code).toBe("FORBIDDEN");

      const allowed = await member({ canCreateProjects: true });
      expect((await platform.mutate("project.create", { name: "Yes" }, as(allowed))).status).toBe(200);
    });

    it("requires canCreateProjects to duplicate into a new project, not into the same project", async () => {
      const { environment } = await create({ name: "Shared" });
      const denied = await member({ canCreateProjects: false });
      const newProject = await platform.mutate(
        "project.duplicate",
        { sourceEnvironmentId: environment.environmentId, name: "Mine now" },
        as(denied),
      );
      expect(newProject.status).toBe(403);
      const sameProject = await platform.mutate(
        "project.duplicate",
        { sourceEnvironmentId: environment.environmentId, name: "qa", duplicateInSameProject: true },
        as(denied),
      );
      expect(sameProject.status).toBe(200);
    });

    it("lets a member remove projects only with canDeleteProjects", async () => {
      const { project } = await create({ name: "Guarded" });
      const denied = await member({ canDeleteProjects: false });
      const refused = await platform.mutate("project.remove", { projectId: project.projectId }, as(denied));
      expect(refused.status).toBe(403);
      expect(await environmentCount(project.projectId)).toBe(1);

      const allowed = await member({ canDeleteProjects: true });
      expect(
        (await platform.mutate("project.remove", { projectId: project.projectId }, as(allowed))).status,
      ).toBe(200);
    });

    it("always lets administrators create and remove projects", async () => {
      const admin = await createUserDirectly(platform, {
        email: `admin${++users}@example.com`,
        organizationId: owner.user.organizationId,
        role: "admin",
        canCreateProjects: false,
        canDeleteProjects: false,
      });
      const { project } = await create({ name: "By admin" }, admin);
      expect(
        (await platform.mutate("project.remove", { projectId: project.projectId }, as(admin))).status,
      ).toBe(200);
    });

    it("lets any member read and update projects", async () => {
      const { project } = await create({ name: "Open" });
      const plain = await member({});
      expect((await platform.query("project.one", { projectId: project.projectId }, as(plain))).status).toBe(
        200,
      );
      const updated = await platform.mutate(
        "project.update",
        { projectId: project.projectId, description: "by member" },
        as(plain),
      );
      expect(updated.status).toBe(200);
    });
  });

  describe("another organization's project", () => {
    it("is a 404 for every procedure, and is left untouched", async () => {
      const { project, environment } = await create({ name: "Private", env: "SECRET=1" });
      const attempts = [
        platform.query("project.one", { projectId: project.projectId }, as(other)),
        platform.mutate("project.update", { projectId: project.projectId, name: "Mine" }, as(other)),
        platform.mutate("project.remove", { projectId: project.projectId }, as(other)),
        platform.mutate(
          "project.duplicate",
          { sourceEnvironmentId: environment.environmentId, name: "Stolen" },
          as(other),
        ),
        platform.mutate(
          "project.duplicate",
          { sourceEnvironmentId: environment.environmentId, name: "stolen", duplicateInSameProject: true },
          as(other),
        ),
      ];
      for (const response of await Promise.all(attempts)) {
        expect(response.status, JSON.stringify(response.body)).toBe(404);
        expect(response.body.error.code).toBe("NOT_FOUND");
        expect(JSON.stringify(response.body)).not.toContain("SECRET");
      }
      const after = await platform.query("project.one", { projectId: project.projectId }, as(owner));
      expect(after.body).toMatchObject({ name: "Private", env: "SECRET=1" });
      expect(after.body.environments).toHaveLength(1);
      const search = await platform.query("project.search", { q: "Private" }, as(other));
      expect(search.body).toEqual({ items: [], total: 0 });
    });
  });
});
