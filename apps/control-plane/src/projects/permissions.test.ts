/**
 * Dokploy's member permissions through the API: user.assignPermissions sets the lists and flags,
 * and project.*, environment.* and application.* show and act on what is granted only.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Caller } from "../context.ts";
import { type Session, startTestPlatform, type TestPlatform } from "../testing/harness.ts";
import { visibleServiceIds } from "./permissions.ts";
import { createUserDirectly } from "./test-support.ts";

describe("member permissions (user.assignPermissions)", () => {
  let platform: TestPlatform;
  let owner: Session;
  let member: Session;
  let stranger: Session;
  const as = (session: Session) => ({ token: session.token });
  const ids = {} as Record<
    | "projectA"
    | "projectB"
    | "envA1"
    | "envA2"
    | "envB"
    | "appA1x"
    | "appA1y"
    | "appA2"
    | "appB"
    | "strangerProject",
    string
  >;

  const ok = async (response: Promise<{ status: number; body: any }>) => {
    const answer = await response;
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    return answer.body;
  };
  const newProject = (name: string, session = owner) =>
    ok(platform.mutate("project.create", { name }, as(session)));
  const newApp = (environmentId: string, name: string, session = owner) =>
    ok(platform.mutate("application.create", { name, environmentId }, as(session))).then(
      (app) => app.applicationId as string,
    );
  const assign = (input: Record<string, unknown>) =>
    platform.mutate("user.assignPermissions", { id: member.user.id, ...input }, as(owner));

  beforeAll(async () => {
    platform = await startTestPlatform();
    owner = await platform.registerOwner();
    member = await createUserDirectly(platform, {
      email: "restricted@example.com",
      organizationId: owner.user.organizationId,
      role: "member",
    });
    stranger = await createUserDirectly(platform, { email: "stranger@example.com" });
    const a = await newProject("A");
    ids.projectA = a.project.projectId;
    ids.envA1 = a.environment.environmentId;
    ids.envA2 = (
      await ok(platform.mutate("environment.create", { projectId: ids.projectA, name: "staging" }, as(owner)))
    ).environmentId;
    const b = await newProject("B");
    ids.projectB = b.project.projectId;
    ids.envB = b.environment.environmentId;
    ids.appA1x = await newApp(ids.envA1, "x");
    ids.appA1y = await newApp(ids.envA1, "y");
    ids.appA2 = await newApp(ids.envA2, "z");
    ids.appB = await newApp(ids.envB, "b");
    ids.strangerProject = (await newProject("Theirs", stranger)).project.projectId;
  });
  afterAll(() => platform.close());

  it("a member without lists sees every project of the organization (not restricted)", async () => {
    const all = await ok(platform.query("project.all", {}, as(member)));
    expect(all.map((project: any) => project.name).sort()).toEqual(["A", "B"]);
  });

  it("refuses ids outside the organization with a 400 naming the field, and changes nothing", async () => {
    const refused = await assign({ accessedProjects: [ids.projectA, ids.strangerProject] });
    expect(refused.status).toBe(400);
    expect(refused.body.error.data.fields).toEqual(["accessedProjects"]);
    const services = await assign({ accessedServices: ["no-such-app"], canCreateServices: false });
    expect(services.body.error.data.fields).toEqual(["accessedServices"]);
    expect((await platform.query("project.all", {}, as(member))).body).toHaveLength(2);
    expect(
      (await platform.mutate("application.create", { name: "n", environmentId: ids.envA1 }, as(member)))
        .status,
    ).toBe(200);
  });

  it("shows and acts on the granted projects, environments and services only (404 otherwise)", async () => {
    await ok(
      assign({
        accessedProjects: [ids.projectA],
        accessedEnvironments: [ids.envA1],
        accessedServices: [ids.appA1x],
      }),
    );
    const stored = await platform.ctx.db
      .selectFrom("members")
      .selectAll()
      .where("userId", "=", member.user.id)
      .executeTakeFirstOrThrow();
    expect(stored).toMatchObject({
      accessedProjects: [ids.projectA],
      accessedEnvironments: [ids.envA1],
      accessedServices: [ids.appA1x],
      canCreateServices: true,
    });
    const all = await ok(platform.query("project.all", {}, as(member)));
    expect(all).toHaveLength(1);
    expect(all[0].environments.map((e: any) => e.environmentId)).toEqual([ids.envA1]);
    expect(all[0].environments[0].applications.map((a: any) => a.applicationId)).toEqual([ids.appA1x]);
    const one = await ok(platform.query("project.one", { projectId: ids.projectA }, as(member)));
    expect(one.environments.map((e: any) => e.environmentId)).toEqual([ids.envA1]);
    const byProject = await ok(
      platform.query("environment.byProjectId", { projectId: ids.projectA }, as(member)),
    );
    expect(byProject.map((e: any) => e.environmentId)).toEqual([ids.envA1]);
    const env = await ok(platform.query("environment.one", { environmentId: ids.envA1 }, as(member)));
    expect(env.applications.map((a: any) => a.applicationId)).toEqual([ids.appA1x]);
    expect(
      (await ok(platform.query("project.search", {}, as(member)))).items.map((p: any) => p.name),
    ).toEqual(["A"]);
    const search = await ok(platform.query("application.search", {}, as(member)));
    expect(search.items.map((a: any) => a.applicationId)).toEqual([ids.appA1x]);
    expect(search.total).toBe(1);
    await ok(platform.query("application.one", { applicationId: ids.appA1x }, as(member)));

    const hidden: Array<[string, Record<string, unknown>]> = [
      ["project.one", { projectId: ids.projectB }],
      ["environment.one", { environmentId: ids.envA2 }],
      ["environment.byProjectId", { projectId: ids.projectB }],
      ["application.one", { applicationId: ids.appA1y }],
      ["application.one", { applicationId: ids.appA2 }],
      ["application.one", { applicationId: ids.appB }],
      ["deployment.all", { applicationId: ids.appA1y }],
      ["domain.byApplicationId", { applicationId: ids.appA1y }],
    ];
    for (const [procedure, input] of hidden) {
      expect((await platform.query(procedure, input, as(member))).status, procedure).toBe(404);
    }
    const changes: Array<[string, Record<string, unknown>]> = [
      ["project.update", { projectId: ids.projectB, name: "Mine" }],
      ["environment.update", { environmentId: ids.envA2, name: "mine" }],
      ["application.update", { applicationId: ids.appA1y, name: "Mine" }],
      ["application.update", { applicationId: ids.appA1x, environmentId: ids.envA2 }],
      ["application.move", { applicationId: ids.appA1x, targetEnvironmentId: ids.envB }],
      ["application.deploy", { applicationId: ids.appB }],
      ["application.create", { name: "sneaky", environmentId: ids.envA2 }],
      ["port.create", { applicationId: ids.appA1y, publishedPort: 18080, targetPort: 80 }],
      ["security.create", { applicationId: ids.appA1y, username: "u", password: "password1" }],
      ["domain.create", { applicationId: ids.appA1y, host: "hidden.example.com" }],
    ];
    for (const [procedure, input] of changes) {
      expect((await platform.mutate(procedure, input, as(member))).status, procedure).toBe(404);
    }
    const y = await ok(platform.query("application.one", { applicationId: ids.appA1y }, as(owner)));
    expect(y.name).toBe("y");
    const x = await ok(platform.query("application.one", { applicationId: ids.appA1x }, as(owner)));
    expect(x.environmentId).toBe(ids.envA1);
  });

  it("creates services only with canCreateServices, and keeps seeing what it created", async () => {
    await ok(assign({ canCreateServices: false }));
    const refused = await platform.mutate(
      "application.create",
      { name: "new", environmentId: ids.envA1 },
      as(member),
    );
    expect(refused.status).toBe(403);
    expect(refused.body.error.message).toMatch(/canCreateServices/);
    await ok(assign({ canCreateServices: true }));
    const created = await newApp(ids.envA1, "new", member);
    await ok(platform.query("application.one", { applicationId: created }, as(member)));
  });

  it("deletes services only with canDeleteServices (or canDeleteProjects)", async () => {
    const app = await newApp(ids.envA1, "doomed", member);
    const refused = await platform.mutate("application.delete", { applicationId: app }, as(member));
    expect(refused.status).toBe(403);
    expect(refused.body.error.message).toMatch(/canDeleteServices/);
    await ok(assign({ canDeleteServices: true }));
    await ok(platform.mutate("application.delete", { applicationId: app }, as(member)));
    await ok(assign({ canDeleteServices: false }));
  });

  it("creates and removes environments only with canCreateEnvironments / canDeleteEnvironments", async () => {
    await ok(assign({ canCreateEnvironments: false }));
    const refused = await platform.mutate(
      "environment.create",
      { projectId: ids.projectA, name: "qa" },
      as(member),
    );
    expect(refused.status).toBe(403);
    await ok(assign({ canCreateEnvironments: true }));
    const qa = await ok(
      platform.mutate("environment.create", { projectId: ids.projectA, name: "qa" }, as(member)),
    );
    await ok(platform.query("environment.one", { environmentId: qa.environmentId }, as(member)));
    const remove = () =>
      platform.mutate("environment.remove", { environmentId: qa.environmentId }, as(member));
    expect((await remove()).status).toBe(403);
    await ok(assign({ canDeleteEnvironments: true }));
    await ok(remove());
    expect(
      (await platform.mutate("environment.create", { projectId: ids.projectB, name: "qa" }, as(member)))
        .status,
    ).toBe(404);
  });

  it("user.one and user.all show the member's permissions as assigned", async () => {
    await ok(
      assign({
        accessedProjects: [ids.projectA],
        accessedEnvironments: null,
        accessedServices: null,
        canAccessToDocker: true,
        canAccessToAPI: false,
      }),
    );
    const shown = await ok(platform.query("user.one", { userId: member.user.userId }, as(owner)));
    expect(shown).toMatchObject({
      accessedProjects: [ids.projectA],
      accessedEnvironments: null,
      canAccessToDocker: true,
      canAccessToAPI: false,
      canAccessToSSHKeys: false,
    });
    const listed = await ok(platform.query("user.all", {}, as(owner)));
    expect(listed.find((user: any) => user.userId === member.user.userId)).toEqual(shown);
    await ok(assign({ accessedProjects: null, canAccessToDocker: false, canAccessToAPI: true }));
  });

  it("deployment lists show a restricted member only the deployments of granted services", async () => {
    for (const applicationId of [ids.appA1x, ids.appB]) {
      await platform.ctx.db
        .insertInto("deployments")
        .values({
          deploymentId: `dep-${applicationId}`,
          applicationId,
          targetKind: "application",
          targetId: applicationId,
          kind: "deploy",
          title: "listed",
          description: null,
          errorMessage: null,
          commitHash: null,
          commitMessage: null,
          imageName: null,
          archivePath: null,
          archiveFormat: null,
          serverId: null,
        })
        .execute();
    }
    const listed = async () => {
      const centralized = await ok(platform.query("deployment.allCentralized", {}, as(member)));
      const queue = await ok(platform.query("deployment.queueList", {}, as(member)));
      return {
        centralized: centralized.map((d: any) => d.applicationId).sort(),
        queue: queue.map((job: any) => job.deploymentId).sort(),
      };
    };
    await ok(assign({ accessedProjects: null, accessedEnvironments: null, accessedServices: null }));
    expect(await listed()).toEqual({
      centralized: [ids.appA1x, ids.appB].sort(),
      queue: [`dep-${ids.appA1x}`, `dep-${ids.appB}`].sort(),
    });
    await ok(
      assign({ accessedProjects: [ids.projectA], accessedEnvironments: null, accessedServices: null }),
    );
    expect(await listed()).toEqual({ centralized: [ids.appA1x], queue: [`dep-${ids.appA1x}`] });
    // The live log and the upload deploy reach only granted services too.
    const logOf = (applicationId: string) =>
      platform.request(`/api/deployment.logs?deploymentId=dep-${applicationId}`, as(member));
    expect((await logOf(ids.appB)).status).toBe(404);
    const upload = new FormData();
    upload.set("applicationId", ids.appB);
    upload.set("zip", new Blob([new Uint8Array([0x50, 0x4b, 0x03, 0x04])]), "app.zip");
    const dropped = await platform.app.request("/api/application.dropDeployment", {
      method: "POST",
      body: upload,
      headers: { authorization: `Bearer ${member.token}` },
    });
    expect(dropped.status).toBe(404);
    await ok(assign({ accessedProjects: null }));
  });

  it("canAccessTo* flags gate docker.*, cluster.getNodes, Traefik files, API keys and SSH keys for members", async () => {
    const organizationId = owner.user.organizationId;
    const apiKey = () =>
      platform.mutate("user.createApiKey", { name: "member key", metadata: { organizationId } }, as(member));
    const checks: Array<[string, () => Promise<{ status: number; body: any }>]> = [
      ["canAccessToDocker", () => platform.query("docker.getContainers", {}, as(member))],
      // The nodes show host names, engines and the Swarm's TLS trust root: docker.*'s rule.
      ["canAccessToDocker", () => platform.query("cluster.getNodes", {}, as(member))],
      [
        "canAccessToTraefikFiles",
        () => platform.query("application.readTraefikConfig", { applicationId: ids.appA1x }, as(member)),
      ],
      ["canAccessToSSHKeys", () => platform.query("sshKey.all", {}, as(member))],
      ["canAccessToAPI", apiKey],
      ["canAccessToGitProviders", () => platform.query("gitProvider.getAll", {}, as(member))],
      ["canCreateProjects", () => platform.mutate("project.create", { name: "by member" }, as(member))],
    ];
    await ok(assign({ canAccessToAPI: false }));
    for (const [flag, call] of checks) {
      const refused = await call();
      expect(refused.status, flag).toBe(403);
      expect(refused.body.error.message).toContain(flag);
    }
    await ok(
      assign({
        canAccessToSSHKeys: true,
        canAccessToAPI: true,
        canAccessToDocker: true,
        canAccessToGitProviders: true,
        canCreateProjects: true,
      }),
    );
    expect((await platform.query("sshKey.all", {}, as(member))).status).toBe(200);
    expect((await apiKey()).status).toBe(200);
    expect((await platform.query("cluster.getNodes", {}, as(member))).status).toBe(200);
    expect((await platform.query("gitProvider.getAll", {}, as(member))).status).toBe(200);
    const project = await ok(platform.mutate("project.create", { name: "by member" }, as(member)));
    await ok(platform.mutate("project.remove", { projectId: project.project.projectId }, as(owner)));
    await ok(assign({ canAccessToDocker: false, canAccessToGitProviders: false, canCreateProjects: false }));
  });

  it("visibleServiceIds (what docker.* filters containers by) follows the three lists; null when not restricted", async () => {
    const db = platform.ctx.db;
    const caller = {
      userId: member.user.userId,
      organizationId: owner.user.organizationId,
      role: "member",
    } as Caller;
    const visible = async () => {
      const set = await visibleServiceIds(db, caller);
      return set === null ? null : [...set];
    };
    await ok(assign({ accessedProjects: null, accessedEnvironments: null, accessedServices: null }));
    expect(await visible()).toBeNull();
    await ok(assign({ accessedServices: [ids.appA1x, ids.appB] }));
    expect((await visible())?.sort()).toEqual([ids.appA1x, ids.appB].sort());
    await ok(assign({ accessedProjects: [ids.projectA], accessedServices: null }));
    expect(await visible()).toEqual(expect.arrayContaining([ids.appA1x, ids.appA1y, ids.appA2]));
    expect(await visible()).not.toContain(ids.appB);
    await ok(assign({ accessedEnvironments: [ids.envA2] }));
    expect(await visible()).toContain(ids.appA2);
    expect(await visible()).not.toContain(ids.appA1x);
    expect(await visibleServiceIds(db, { ...caller, role: "admin" })).toBeNull();
  });

  it("null lists lift the restriction; administrators are never restricted", async () => {
    await ok(assign({ accessedProjects: null, accessedEnvironments: null, accessedServices: null }));
    expect((await ok(platform.query("project.all", {}, as(member)))).map((p: any) => p.name).sort()).toEqual([
      "A",
      "B",
    ]);
    await ok(assign({ accessedProjects: [] }));
    expect(await ok(platform.query("project.all", {}, as(member)))).toEqual([]);
    expect((await ok(platform.query("application.search", {}, as(member)))).items).toEqual([]);
    await ok(assign({ role: "admin" }));
    expect(await ok(platform.query("project.all", {}, as(member)))).toHaveLength(2);
  });
});
