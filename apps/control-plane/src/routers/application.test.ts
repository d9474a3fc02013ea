import { organizationNetworkName } from "@platform/ownership";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LOCAL_SERVER_ID } from "../agents/hub.ts";
import { openApplicationSecret } from "../applications/views.ts";
import { newId } from "../crypto/ids.ts";
import { createUserDirectly } from "../projects/test-support.ts";
import { type Session, startTestPlatform, type TestPlatform } from "../testing/harness.ts";
import { insertServer as insertServerRow } from "../testing/servers.ts";

describe("application", () => {
  let platform: TestPlatform;
  let owner: Session;
  let other: Session;
  let environmentId: string;
  let projectId: string;
  let otherEnvironmentId: string;
  let users = 0;
  const as = (session: Session) => ({ token: session.token });

  const newProject = async (session: Session, name = "Shop") => {
    const response = await platform.mutate("project.create", { name }, as(session));
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    return response.body as { project: { projectId: string }; environment: { environmentId: string } };
  };
  const create = async (input: Record<string, unknown> = {}, session = owner) => {
    const response = await platform.mutate(
      "application.create",
      { name: "Web", environmentId, ...input },
      as(session),
    );
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    return response.body as Record<string, any>;
  };
  const one = async (applicationId: string, session = owner) => {
    const response = await platform.query("application.one", { applicationId }, as(session));
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    return response.body as Record<string, any>;
  };
  const row = (applicationId: string) =>
    platform.ctx.db
      .selectFrom("applications")
      .selectAll()
      .where("applicationId", "=", applicationId)
      .executeTakeFirst();
  const insertServer = (organizationId: string) =>
    insertServerRow(platform.ctx.db, organizationId, { ipAddress: "10.0.0.9" });
  const insertSshKey = async (organizationId: string) => {
    const sshKeyId = newId();
    await platform.ctx.db
      .insertInto("sshKeys")
      .values({
        sshKeyId,
        organizationId,
        name: "deploy",
        description: null,
        publicKey: "ssh-ed25519 AAAA test",
        privateKeySealed: "v1:1:x:y",
        lastUsedAt: null,
      })
      .execute();
    return sshKeyId;
  };

  beforeAll(async () => {
    platform = await startTestPlatform();
    owner = await platform.registerOwner();
    other = await createUserDirectly(platform, { email: "other-org@example.com" });
    const created = await newProject(owner);
    environmentId = created.environment.environmentId;
    projectId = created.project.projectId;
    otherEnvironmentId = (await newProject(other, "Theirs")).environment.environmentId;
  });
  afterAll(() => platform.close());

  describe("create", () => {
    it("starts idle with Dokploy's defaults and a generated appName", async () => {
      const app = await create({ name: "My Web Shop!", description: "front" });
      expect(app).toMatchObject({
        applicationId: expect.any(String),
        name: "My Web Shop!",
        description: "front",
        environmentId,
        serverId: null,
        applicationStatus: "idle",
        sourceType: "github",
        buildType: "nixpacks",
        buildPath: "/",
        triggerType: "push",
        env: null,
        buildArgs: null,
        memoryLimit: null,
        cpuLimit: null,
        replicas: 1,
        autoDeploy: true,
        createEnvFile: true,
        refreshToken: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
        createdAt: expect.any(String),
      });
      expect(app.appName).toMatch(/^my-web-shop-[a-z0-9]{6}$/);
      expect(app).not.toHaveProperty("password");
      expect(app).not.toHaveProperty("buildSecrets");
      const second = await create({ name: "My Web Shop!" });
      expect(second.appName).not.toBe(app.appName);
      expect(second.refreshToken).not.toBe(app.refreshToken);
      expect((await create({ name: "***" })).appName).toMatch(/^app-[a-z0-9]{6}$/);
    });

    it("takes Dokploy's sourceType up front and refuses an unknown one", async () => {
      const app = await create({ sourceType: "docker" });
      expect((await one(app.applicationId)).sourceType).toBe("docker");
      const bad = await platform.mutate(
        "application.create",
        { name: "Web", environmentId, sourceType: "ftp" },
        as(owner),
      );
      expect(bad.status).toBe(400);
      expect(bad.body.error.data.fields).toEqual(["sourceType"]);
    });

    it("keeps a given appName and refuses one already taken, in any organization (409)", async () => {
      const app = await create({ appName: "shop-api" });
      expect(app.appName).toBe("shop-api");
      const taken = await platform.mutate(
        "application.create",
        { name: "Theirs", environmentId: otherEnvironmentId, appName: "shop-api" },
        as(other),
      );
      expect(taken.status).toBe(409);
      expect(taken.body.error.data.fields).toEqual(["appName"]);
      const count = await platform.ctx.db
        .selectFrom("applications")
        .select("applicationId")
        .where("environmentId", "=", otherEnvironmentId)
        .execute();
      expect(count).toHaveLength(0);
    });

    it("refuses bad names with a 400 naming the field", async () => {
      for (const [input, field] of [
        [{ appName: "web;rm -rf /" }, "appName"],
        [{ appName: "$(touch /tmp/x)" }, "appName"],
        [{ appName: "../etc" }, "appName"],
        [{ appName: "a".repeat(64) }, "appName"],
        [{ appName: ".." }, "appName"],
        [{ appName: "-rf" }, "appName"],
        [{ appName: "--help" }, "appName"],
        [{ appName: "platform-traefik" }, "appName"],
        [{ name: "" }, "name"],
        [{ name: "x".repeat(101) }, "name"],
      ] as const) {
        const response = await platform.mutate(
          "application.create",
          { name: "Web", environmentId, ...input },
          as(owner),
        );
        expect(response.status, JSON.stringify(input)).toBe(400);
        expect(response.body.error.data.fields).toEqual([field]);
      }
    });

    it("places the application on a server of the organization only", async () => {
      const serverId = await insertServer(owner.user.organizationId);
      const app = await create({ serverId });
      expect(app.serverId).toBe(serverId);
      const theirServer = await insertServer(other.user.organizationId);
      const refused = await platform.mutate(
        "application.create",
        { name: "Web", environmentId, serverId: theirServer },
        as(owner),
      );
      expect(refused.status).toBe(404);
      expect(refused.body.error.message).toBe("Server not found");

      // The server now carries one application: server.all counts it, server.remove refuses.
      const servers = await platform.query("server.all", {}, as(owner));
      expect(servers.body.find((s: any) => s.serverId === serverId)?.totalSum).toBe(1);
      const removal = await platform.mutate("server.remove", { serverId }, as(owner));
      expect(removal.status).toBeGreaterThanOrEqual(400);
      expect(
        await platform.ctx.db
          .selectFrom("servers")
          .select("serverId")
          .where("serverId", "=", serverId)
          .executeTakeFirst(),
      ).toBeDefined();
      // The database refuses too, whatever the caller.
      await expect(
        platform.ctx.db.deleteFrom("servers").where("serverId", "=", serverId).execute(),
      ).rejects.toThrow();
    });

    it("refuses another organization's environment (404) and creates nothing", async () => {
      const response = await platform.mutate(
        "application.create",
        { name: "Sneaky", environmentId: otherEnvironmentId },
        as(owner),
      );
      expect(response.status).toBe(404);
      expect(response.body.error.message).toBe("Environment not found");
    });
  });

  it("requires serverId on the cloud edition", async () => {
    const cloud = await startTestPlatform({ PLATFORM_EDITION: "cloud" });
    try {
      const session = await cloud.registerOwner();
      const project = await cloud.mutate("project.create", { name: "P" }, as(session));
      const response = await cloud.mutate(
        "application.create",
        { name: "Web", environmentId: project.body.environment.environmentId },
        as(session),
      );
      expect(response.status).toBe(400);
      expect(response.body.error.data.fields).toEqual(["serverId"]);
    } finally {
      await cloud.close();
    }
  });

  describe("one", () => {
    it("shows the application with its environment, project, deployments, routing and provider access", async () => {
      const app = await create({ name: "Detail" });
      const detail = await one(app.applicationId);
      expect(detail).toEqual({
        ...app,
        environment: { environmentId, name: "production", project: { projectId, name: "Shop" } },
        deployments: [],
        domains: [],
        ports: [],
        redirects: [],
        security: [],
        hasGitProviderAccess: true,
        unauthorizedProvider: null,
      });
    });

    it("is a 404 for another organization's application and for unknown ids", async () => {
      const app = await create();
      for (const session of [other]) {
        const response = await platform.query(
          "application.one",
          { applicationId: app.applicationId },
          as(session),
        );
        expect(response.status).toBe(404);
        expect(response.body.error.message).toBe("Application not found");
      }
      expect((await platform.query("application.one", { applicationId: "nope" }, as(owner))).status).toBe(
        404,
      );
    });
  });

  describe("update", () => {
    it("refuses a changed applicationStatus (the platform's observation), so a deployed app cannot pose as new", async () => {
      const app = await create();
      const refused = await platform.mutate(
        "application.update",
        { applicationId: app.applicationId, applicationStatus: "done" },
        as(owner),
      );
      expect(refused.status).toBe(400);
      expect(refused.body.error.data.fields).toEqual(["applicationStatus"]);
      expect((await one(app.applicationId)).applicationStatus).toBe("idle");
    });

    it("applies Dokploy's full field set; write-only secrets are sealed and never shown", async () => {
      const app = await create();
      // networkIds name the organization's networks (networks/attach.test.ts deploys onto one).
      const networkId = newId();
      await platform.ctx.db
        .insertInto("networks")
        .values({
          networkId,
          organizationId: owner.user.organizationId,
          serverId: null,
          name: "shop-backend",
          dockerName: organizationNetworkName(owner.user.organizationId, "shop-backend"),
          driver: "overlay",
          dockerId: null,
          createdAt: new Date().toISOString(),
        })
        .execute();
      const fields = {
        sourceType: "git",
        buildType: "dockerfile",
        repository: "shop",
        owner: "acme",
        branch: "release/1",
        buildPath: "/apps/web",
        triggerType: "tag",
        watchPaths: ["apps/web/**"],
        enableSubmodules: true,
        gitlabProjectId: 42,
        gitlabOwner: "group/sub",
        gitlabBranch: "main",
        giteaOwner: "me",
        bitbucketRepositorySlug: "shop-slug",
        customGitUrl: "https://git.example.com/acme/shop.git",
        customGitBranch: "main",
        customGitBuildPath: "/",
        dockerImage: "nginx:1.27",
        username: "bot",
        registryUrl: "https://Registry.Example.com:5000/",
        dockerfile: "docker/Dockerfile.prod",
        dockerContextPath: "docker",
        dockerBuildStage: "runtime",
        publishDirectory: "dist",
        isStaticSpa: true,
        herokuVersion: "24",
        railpackVersion: "0.15.4",
        buildArgs: "NODE_VERSION=20",
        createEnvFile: false,
        placementSwarm: {
          Constraints: ["node.role==manager"],
          Preferences: [{ Spread: { SpreadDescriptor: "node.labels.zone" } }],
          MaxReplicas: 2,
          Platforms: [{ Architecture: "amd64", OS: "linux" }],
        },
        updateConfigSwarm: { Parallelism: 2, Delay: 1e9, FailureAction: "rollback", Order: "start-first" },
        rollbackConfigSwarm: { Parallelism: 1, Order: "stop-first" },
        modeSwarm: { Replicated: { Replicas: 2 } },
        labelsSwarm: { team: "shop" },
        networkSwarm: [{ Target: "shop-net", Aliases: ["web"] }],
        stopGracePeriodSwarm: 10e9,
        endpointSpecSwarm: { Mode: "vip" },
        ulimitsSwarm: [{ Name: "nofile", Soft: 1024, Hard: 2048 }],
        previewCertificateType: "letsencrypt",
        previewCustomCertResolver: "myresolver",
        rollbackActive: true,
        buildArchitecture: "host",
        buildxBuilder: null,
        networkIds: [networkId],
        detachDokployNetwork: false,
        dropBuildPath: "app",
        title: "Shop",
        subtitle: "Storefront",
        enabled: true,
        icon: "data:image/png;base64,AAAA",
        // Sent back unchanged (as a Dokploy client returning the whole object does) it is fine.
        applicationStatus: "idle",
      };
      const response = await platform.mutate(
        "application.update",
        {
          applicationId: app.applicationId,
          ...fields,
          password: "registry-secret-1",
          buildSecrets: "TOKEN=build-secret-1",
          previewBuildSecrets: "TOKEN=preview-secret-1",
        },
        as(owner),
      );
      expect(response.status, JSON.stringify(response.body)).toBe(200);
      const shown = await one(app.applicationId);
      expect(shown).toMatchObject({ ...fields, registryUrl: "registry.example.com:5000" });
      const text = JSON.stringify(shown);
      for (const secret of ["registry-secret-1", "build-secret-1", "preview-secret-1"]) {
        expect(text).not.toContain(secret);
      }
      const stored = await row(app.applicationId);
      expect(stored?.passwordSealed).toBeTruthy();
      expect(stored?.previewBuildSecretsSealed).toBeTruthy();
      expect(
        openApplicationSecret(
          platform.ctx.secrets,
          "previewBuildSecrets",
          { applicationId: app.applicationId, organizationId: owner.user.organizationId },
          stored!.previewBuildSecretsSealed,
        ),
      ).toBe("TOKEN=preview-secret-1");

      const cleared = await platform.mutate(
        "application.update",
        {
          applicationId: app.applicationId,
          placementSwarm: null,
          previewBuildSecrets: null,
          labelsSwarm: null,
        },
        as(owner),
      );
      expect(cleared.status).toBe(200);
      expect(await one(app.applicationId)).toMatchObject({ placementSwarm: null, labelsSwarm: null });
      expect((await row(app.applicationId))?.previewBuildSecretsSealed).toBeNull();
    });

    it("moves to another environment of the organization with environmentId; others are 404", async () => {
      const app = await create();
      const target = await newProject(owner, "Target project");
      const moved = await platform.mutate(
        "application.update",
        { applicationId: app.applicationId, environmentId: target.environment.environmentId },
        as(owner),
      );
      expect(moved.status, JSON.stringify(moved.body)).toBe(200);
      expect((await one(app.applicationId)).environmentId).toBe(target.environment.environmentId);
      const stolen = await platform.mutate(
        "application.update",
        { applicationId: app.applicationId, environmentId: otherEnvironmentId, name: "Moved away" },
        as(owner),
      );
      expect(stolen.status).toBe(404);
      expect(await one(app.applicationId)).toMatchObject({
        environmentId: target.environment.environmentId,
        name: "Web",
      });
      const otherServer = await insertServer(other.user.organizationId);
      const buildServer = await platform.mutate(
        "application.update",
        { applicationId: app.applicationId, buildServerId: otherServer },
        as(owner),
      );
      expect(buildServer.status).toBe(404);
      expect((await one(app.applicationId)).buildServerId).toBeNull();
    });

    it("buildServerId must be a build server; multi-architecture fields need buildx on the building server (400 naming them, nothing stored)", async () => {
      const app = await create();
      const deployServer = await insertServer(owner.user.organizationId);
      const notBuild = await platform.mutate(
        "application.update",
        { applicationId: app.applicationId, buildServerId: deployServer, name: "Renamed" },
        as(owner),
      );
      expect(notBuild.status).toBe(400);
      expect(notBuild.body.error.data.fields).toEqual(["buildServerId"]);
      expect(await one(app.applicationId)).toMatchObject({ buildServerId: null, name: "Web" });
      const buildServer = await insertServerRow(platform.ctx.db, owner.user.organizationId, {
        serverType: "build",
      });
      // A build server pushes to the build registry, which the application's server pulls from.
      const noRegistry = await platform.mutate(
        "application.update",
        { applicationId: app.applicationId, buildServerId: buildServer },
        as(owner),
      );
      expect(noRegistry.status).toBe(400);
      expect(noRegistry.body.error.data.fields).toEqual(["buildServerId"]);
      expect(noRegistry.body.error.message).toContain("buildRegistryId");
      const registry = await platform.mutateOk(
        "registry.create",
        { registryName: "Builds", registryUrl: "registry.example.com", username: "u", password: "p" },
        as(owner),
      );
      const accepted = await platform.mutate(
        "application.update",
        {
          applicationId: app.applicationId,
          buildServerId: buildServer,
          buildRegistryId: registry.registryId,
        },
        as(owner),
      );
      expect(accepted.status, JSON.stringify(accepted.body)).toBe(200);
      // Clearing the registry while the build server stays is refused, naming the registry.
      const cleared = await platform.mutate(
        "application.update",
        { applicationId: app.applicationId, buildRegistryId: null },
        as(owner),
      );
      expect(cleared.status).toBe(400);
      expect(cleared.body.error.data.fields).toEqual(["buildRegistryId"]);
      expect(await one(app.applicationId)).toMatchObject({
        buildServerId: buildServer,
        buildRegistryId: registry.registryId,
      });
      await platform.mutateOk(
        "application.update",
        { applicationId: app.applicationId, buildServerId: null, buildRegistryId: null },
        as(owner),
      );

      // The local agent builds this application; buildx is not installed on this machine.
      const validation = await platform.ctx.agents.client.validateServer(LOCAL_SERVER_ID);
      expect(validation.buildx?.enabled, "this test expects a docker CLI without buildx").toBe(false);
      for (const [field, value] of [
        ["buildArchitecture", "arm64"],
        ["buildArchitecture", "multi"],
        ["buildxBuilder", "builder1"],
      ] as const) {
        const refused = await platform.mutate(
          "application.update",
          { applicationId: app.applicationId, [field]: value },
          as(owner),
        );
        expect(refused.status, field).toBe(400);
        expect(refused.body.error.data.fields).toEqual([field]);
        expect(refused.body.error.message).toContain("buildx");
      }
      expect(await one(app.applicationId)).toMatchObject({ buildArchitecture: "host", buildxBuilder: null });
      // host (the default) needs nothing.
      await platform.mutateOk(
        "application.update",
        { applicationId: app.applicationId, buildArchitecture: "host" },
        as(owner),
      );
    });

    it("changes the given fields, clears with null and leaves the rest", async () => {
      const app = await create({ description: "keep me" });
      const response = await platform.mutate(
        "application.update",
        {
          applicationId: app.applicationId,
          name: "Renamed",
          env: "NODE_ENV=production\nPORT=3000",
          memoryLimit: "512m",
          memoryReservation: "256m",
          cpuLimit: "1.5",
          cpuReservation: "0.5",
          command: "node server.js",
          args: ["--port", "3000"],
          autoDeploy: false,
          cleanCache: true,
          replicas: 3,
          healthCheckSwarm: {
            Test: ["CMD", "wget", "-qO-", "http://localhost:3000"],
            Interval: 5e9,
            Retries: 3,
          },
          restartPolicySwarm: { Condition: "on-failure", MaxAttempts: 5 },
          previewLabels: ["preview"],
        },
        as(owner),
      );
      expect(response.status, JSON.stringify(response.body)).toBe(200);
      expect(response.body).toEqual({ success: true });
      const updated = await one(app.applicationId);
      expect(updated).toMatchObject({
        name: "Renamed",
        description: "keep me",
        env: "NODE_ENV=production\nPORT=3000",
        memoryLimit: "512m",
        cpuLimit: "1.5",
        args: ["--port", "3000"],
        autoDeploy: false,
        cleanCache: true,
        replicas: 3,
        healthCheckSwarm: {
          Test: ["CMD", "wget", "-qO-", "http://localhost:3000"],
          Interval: 5e9,
          Retries: 3,
        },
        restartPolicySwarm: { Condition: "on-failure", MaxAttempts: 5 },
        previewLabels: ["preview"],
      });
      await platform.mutate(
        "application.update",
        { applicationId: app.applicationId, description: null, memoryLimit: "", cpuLimit: null, args: null },
        as(owner),
      );
      expect(await one(app.applicationId)).toMatchObject({
        description: null,
        memoryLimit: null,
        cpuLimit: null,
        args: null,
        memoryReservation: "256m",
      });
    });

    it("renames appName unless another application holds it (409)", async () => {
      const app = await create();
      const ok = await platform.mutate(
        "application.update",
        { applicationId: app.applicationId, appName: "renamed-app" },
        as(owner),
      );
      expect(ok.status).toBe(200);
      await create({ appName: "holder-app" });
      const taken = await platform.mutate(
        "application.update",
        { applicationId: app.applicationId, appName: "holder-app" },
        as(owner),
      );
      expect(taken.status).toBe(409);
      expect((await one(app.applicationId)).appName).toBe("renamed-app");
    });

    it("is a 404 for another organization's application and changes nothing", async () => {
      const app = await create();
      const response = await platform.mutate(
        "application.update",
        { applicationId: app.applicationId, name: "Mine" },
        as(other),
      );
      expect(response.status).toBe(404);
      expect((await one(app.applicationId)).name).toBe("Web");
    });
  });

  describe("bad input", () => {
    let app: Record<string, any>;
    beforeAll(async () => {
      app = await create({ name: "Target" });
    });

    const cases: Array<[string, Record<string, unknown>, string]> = [
      ["application.update", { appName: "a b" }, "appName"],
      ["application.update", { appName: "x|y" }, "appName"],
      ["application.update", { env: "GOOD=1\nBAD KEY=2" }, "env"],
      ["application.update", { env: "FOO\nBAR=1" }, "env"],
      ["application.update", { memoryLimit: "lots" }, "memoryLimit"],
      ["application.update", { memoryLimit: "99999999999999999999g" }, "memoryLimit"],
      ["application.update", { memoryReservation: "9223372036854775808" }, "memoryReservation"],
      ["application.saveDockerProvider", { registryUrl: "http://169.254.169.254" }, "registryUrl"],
      ["application.saveDockerProvider", { registryUrl: "ftp://registry.example.com" }, "registryUrl"],
      ["application.saveDockerProvider", { registryUrl: "user@registry.example.com" }, "registryUrl"],
      ["application.update", { memoryReservation: "-1g" }, "memoryReservation"],
      ["application.update", { cpuLimit: "two" }, "cpuLimit"],
      ["application.update", { cpuReservation: "0" }, "cpuReservation"],
      ["application.update", { replicas: 0 }, "replicas"],
      ["application.update", { command: "run\u0000x" }, "command"],
      ["application.update", { args: ["ok", "bad\u0000"] }, "args.1"],
      ["application.update", { healthCheckSwarm: { Test: ["CMD"], Evil: 1 } }, "healthCheckSwarm.Evil"],
      [
        "application.update",
        { restartPolicySwarm: { Condition: "sometimes" } },
        "restartPolicySwarm.Condition",
      ],
      ["application.update", { previewPort: 70000 }, "previewPort"],
      ["application.update", { previewWildcard: "evil.com/$(id)" }, "previewWildcard"],
      [
        "application.saveGithubProvider",
        { githubId: "gh1", owner: "org", enableSubmodules: false, branch: "--upload-pack=touch /tmp/x" },
        "branch",
      ],
      [
        "application.saveGithubProvider",
        { githubId: "gh1", owner: "org", enableSubmodules: false, branch: "main;id" },
        "branch",
      ],
      [
        "application.saveGithubProvider",
        { githubId: "gh1", owner: "org", enableSubmodules: false, branch: "a..b" },
        "branch",
      ],
      [
        "application.saveGithubProvider",
        { githubId: "gh1", owner: "org", enableSubmodules: false, buildPath: "../../etc" },
        "buildPath",
      ],
      [
        "application.saveGithubProvider",
        { githubId: "gh1", owner: "org;id", enableSubmodules: false },
        "owner",
      ],
      [
        "application.saveGithubProvider",
        { githubId: "gh1", owner: "org", repository: "../x", enableSubmodules: false },
        "repository",
      ],
      [
        "application.saveGithubProvider",
        { githubId: "gh1", owner: "org", enableSubmodules: false, watchPaths: ["src/**", "a\u0000"] },
        "watchPaths.1",
      ],
      [
        "application.saveGithubProvider",
        { githubId: "gh1", owner: "org", enableSubmodules: false, triggerType: "pull" },
        "triggerType",
      ],
      [
        "application.saveGitlabProvider",
        {
          gitlabId: "gl",
          gitlabProjectId: 1,
          gitlabOwner: "g",
          gitlabRepository: "r",
          gitlabBranch: "-x",
          gitlabBuildPath: "/",
          gitlabPathNamespace: "g/r",
          enableSubmodules: false,
        },
        "gitlabBranch",
      ],
      [
        "application.saveGitlabProvider",
        {
          gitlabId: "gl",
          gitlabProjectId: 1,
          gitlabOwner: "g",
          gitlabRepository: "r",
          gitlabBranch: "main",
          gitlabBuildPath: "/",
          gitlabPathNamespace: "g/../r",
          enableSubmodules: false,
        },
        "gitlabPathNamespace",
      ],
      [
        "application.saveBitbucketProvider",
        {
          bitbucketId: "bb",
          bitbucketOwner: "o",
          bitbucketRepository: "r",
          bitbucketBranch: "main",
          bitbucketBuildPath: "a/../../b",
          enableSubmodules: false,
        },
        "bitbucketBuildPath",
      ],
      [
        "application.saveGiteaProvider",
        {
          giteaId: "gt",
          giteaOwner: "o",
          giteaRepository: "r",
          giteaBranch: "ma in",
          giteaBuildPath: "/",
          enableSubmodules: false,
        },
        "giteaBranch",
      ],
      [
        "application.saveGitProvider",
        { enableSubmodules: false, customGitUrl: "ext::sh -c touch% /tmp/pwned" },
        "customGitUrl",
      ],
      [
        "application.saveGitProvider",
        { enableSubmodules: false, customGitUrl: "--upload-pack=touch /tmp/pwned" },
        "customGitUrl",
      ],
      [
        "application.saveGitProvider",
        { enableSubmodules: false, customGitUrl: "file:///etc" },
        "customGitUrl",
      ],
      [
        "application.saveGitProvider",
        { enableSubmodules: false, customGitUrl: "-oProxyCommand=id" },
        "customGitUrl",
      ],
      [
        "application.saveGitProvider",
        { enableSubmodules: false, customGitUrl: "http://169.254.169.254/latest" },
        "customGitUrl",
      ],
      [
        "application.saveGitProvider",
        { enableSubmodules: false, customGitUrl: "http://127.0.0.1:8080/repo.git" },
        "customGitUrl",
      ],
      [
        "application.saveGitProvider",
        { enableSubmodules: false, customGitUrl: "http://localhost/repo.git" },
        "customGitUrl",
      ],
      [
        "application.saveGitProvider",
        { enableSubmodules: false, customGitUrl: "git@[::1]:repo.git" },
        "customGitUrl",
      ],
      [
        "application.saveGitProvider",
        { enableSubmodules: false, customGitBranch: "main`id`" },
        "customGitBranch",
      ],
      [
        "application.saveGitProvider",
        { enableSubmodules: false, customGitBuildPath: "../.." },
        "customGitBuildPath",
      ],
      ["application.saveDockerProvider", { dockerImage: "nginx; touch /tmp/x" }, "dockerImage"],
      ["application.saveDockerProvider", { dockerImage: "--help" }, "dockerImage"],
      // Another service's built or kept image on the shared engine.
      ["application.saveDockerProvider", { dockerImage: "platform/shop-web:d1" }, "dockerImage"],
      ["application.saveDockerProvider", { dockerImage: "platform-rollback/shop-web:d1" }, "dockerImage"],
      // Any image of the shared engine by ID or ID prefix (issue 37 finding 4).
      ["application.saveDockerProvider", { dockerImage: `sha256:${"ab".repeat(32)}` }, "dockerImage"],
      ["application.saveDockerProvider", { dockerImage: "6963" }, "dockerImage"],
      ["application.saveDockerProvider", { dockerImage: "nginx", registryUrl: "ghcr.io; id" }, "registryUrl"],
      ["application.saveDockerProvider", { dockerImage: "nginx", username: "a\nb" }, "username"],
      [
        "application.saveBuildType",
        { buildType: "dockerfile", dockerContextPath: "../", dockerBuildStage: null },
        "dockerContextPath",
      ],
      [
        "application.saveBuildType",
        { buildType: "dockerfile", dockerContextPath: ".", dockerBuildStage: "x;y" },
        "dockerBuildStage",
      ],
      [
        "application.saveBuildType",
        {
          buildType: "dockerfile",
          dockerContextPath: ".",
          dockerBuildStage: null,
          dockerfile: "../../etc/passwd",
        },
        "dockerfile",
      ],
      [
        "application.saveBuildType",
        {
          buildType: "dockerfile",
          dockerContextPath: ".",
          dockerBuildStage: null,
          dockerfile: "Docker\u0000file",
        },
        "dockerfile",
      ],
      [
        "application.saveBuildType",
        { buildType: "static", dockerContextPath: null, dockerBuildStage: null, publishDirectory: "../dist" },
        "publishDirectory",
      ],
      [
        "application.saveBuildType",
        { buildType: "shell", dockerContextPath: null, dockerBuildStage: null },
        "buildType",
      ],
      [
        "application.saveBuildType",
        {
          buildType: "heroku_buildpacks",
          dockerContextPath: null,
          dockerBuildStage: null,
          herokuVersion: "24 && id",
        },
        "herokuVersion",
      ],
      ["application.saveEnvironment", { createEnvFile: true, env: "A=1\nB C=2" }, "env"],
      ["application.saveEnvironment", { createEnvFile: true, buildArgs: "KEY\nWITH_NEWLINE=1" }, "buildArgs"],
      ["application.saveEnvironment", { createEnvFile: true, buildSecrets: "$(id)=1" }, "buildSecrets"],
      ["application.saveEnvironment", { env: "A=1" }, "createEnvFile"],
      ["application.move", { targetEnvironmentId: "" }, "targetEnvironmentId"],
      ["application.update", { sourceType: "svn" }, "sourceType"],
      ["application.update", { buildType: "shell" }, "buildType"],
      ["application.update", { branch: "main;id" }, "branch"],
      ["application.update", { owner: "org;id" }, "owner"],
      ["application.update", { buildPath: "../../etc" }, "buildPath"],
      ["application.update", { gitlabPathNamespace: "a/../b" }, "gitlabPathNamespace"],
      ["application.update", { customGitUrl: "ext::sh -c touch% /tmp/pwned" }, "customGitUrl"],
      ["application.update", { customGitUrl: "http://127.0.0.1/x.git" }, "customGitUrl"],
      ["application.update", { dockerImage: "nginx; rm -rf /" }, "dockerImage"],
      ["application.update", { dockerfile: "../Dockerfile" }, "dockerfile"],
      ["application.update", { registryUrl: "http://169.254.169.254" }, "registryUrl"],
      ["application.update", { buildArgs: "A\nB C=1" }, "buildArgs"],
      ["application.update", { watchPaths: ["ok", "a\u0000"] }, "watchPaths.1"],
      [
        "application.update",
        { placementSwarm: { Constraints: ["node.role==manager"], Evil: 1 } },
        "placementSwarm.Evil",
      ],
      [
        "application.update",
        { updateConfigSwarm: { Parallelism: 1, Order: "random" } },
        "updateConfigSwarm.Order",
      ],
      ["application.update", { modeSwarm: { Global: {}, Replicated: { Replicas: 1 } } }, "modeSwarm"],
      [
        "application.update",
        { labelsSwarm: { "platform.appName": "other" } },
        "labelsSwarm.platform.appName",
      ],
      ["application.update", { networkSwarm: [{ Target: "net;id" }] }, "networkSwarm.0.Target"],
      ["application.update", { endpointSpecSwarm: { Mode: "magic" } }, "endpointSpecSwarm.Mode"],
      [
        "application.update",
        { ulimitsSwarm: [{ Name: "no file", Soft: 1, Hard: 1 }] },
        "ulimitsSwarm.0.Name",
      ],
      ["application.update", { stopGracePeriodSwarm: -1 }, "stopGracePeriodSwarm"],
      ["application.update", { buildArchitecture: "sparc" }, "buildArchitecture"],
      ["application.update", { previewCustomCertResolver: "x`) || Host(`y" }, "previewCustomCertResolver"],
      ["application.update", { title: "a\u0000b" }, "title"],
      ["application.update", { createdAt: "2020-01-01T00:00:00.000Z" }, "createdAt"],
      ["application.update", { refreshToken: "guessable" }, "refreshToken"],
    ];

    it.each(cases)(
      "%s refuses %j with a 400 naming %s and changes nothing",
      async (procedure, input, field) => {
        const before = await row(app.applicationId);
        const response = await platform.mutate(
          procedure,
          { applicationId: app.applicationId, ...input },
          as(owner),
        );
        expect(response.status, JSON.stringify(response.body)).toBe(400);
        expect(response.body.error.code).toBe("BAD_REQUEST");
        expect(response.body.error.data.fields).toContain(field);
        expect(await row(app.applicationId)).toEqual(before);
      },
    );
  });

  describe("sources", () => {
    // The provider connections the sources name (save*Provider refuses another organization's, 404).
    beforeAll(async () => {
      const rows = [
        ["github", "gh-conn-1"],
        ["gitlab", "gl1"],
        ["bitbucket", "bb1"],
        ["gitea", "gt1"],
      ] as const;
      for (const [providerType, providerId] of rows) {
        await platform.ctx.db
          .insertInto("gitProviders")
          .values({
            gitProviderId: `gp-${providerId}`,
            providerId,
            providerType,
            name: providerId,
            organizationId: owner.user.organizationId,
            userId: null,
            secretsSealed: null,
          })
          .execute();
      }
    });

    it("saves a GitHub source", async () => {
      const app = await create();
      const response = await platform.mutate(
        "application.saveGithubProvider",
        {
          applicationId: app.applicationId,
          githubId: "gh-conn-1",
          owner: "acme",
          repository: "shop",
          branch: "release/2.0",
          buildPath: "/apps/web",
          watchPaths: ["apps/web/**", "!**/*.md"],
          triggerType: "tag",
          enableSubmodules: true,
        },
        as(owner),
      );
      expect(response.body).toEqual({ success: true });
      expect(await one(app.applicationId)).toMatchObject({
        sourceType: "github",
        githubId: "gh-conn-1",
        owner: "acme",
        repository: "shop",
        branch: "release/2.0",
        buildPath: "/apps/web",
        watchPaths: ["apps/web/**", "!**/*.md"],
        triggerType: "tag",
        enableSubmodules: true,
      });
    });

    it("keeps enableSubmodules when a save*Provider call leaves it out (optional in Dokploy)", async () => {
      const app = await create();
      const save = (input: Record<string, unknown>) =>
        platform.mutate(
          "application.saveGithubProvider",
          { applicationId: app.applicationId, githubId: "gh-conn-1", owner: "acme", ...input },
          as(owner),
        );
      expect((await save({})).status).toBe(200);
      expect((await one(app.applicationId)).enableSubmodules).toBe(false);
      expect((await save({ enableSubmodules: true })).status).toBe(200);
      expect((await save({ branch: "main" })).status).toBe(200);
      expect(await one(app.applicationId)).toMatchObject({ enableSubmodules: true, branch: "main" });
      const git = await platform.mutate(
        "application.saveGitProvider",
        { applicationId: app.applicationId, customGitUrl: "https://example.com/a.git" },
        as(owner),
      );
      expect(git.status, JSON.stringify(git.body)).toBe(200);
      expect((await one(app.applicationId)).enableSubmodules).toBe(true);
    });

    it("saves GitLab, Bitbucket and Gitea sources with their own fields", async () => {
      const app = await create();
      const id = app.applicationId;
      const gitlab = await platform.mutate(
        "application.saveGitlabProvider",
        {
          applicationId: id,
          gitlabId: "gl1",
          gitlabProjectId: 42,
          gitlabOwner: "group/sub",
          gitlabRepository: "api",
          gitlabBranch: "main",
          gitlabBuildPath: "/",
          gitlabPathNamespace: "group/sub/api",
          enableSubmodules: false,
        },
        as(owner),
      );
      expect(gitlab.status, JSON.stringify(gitlab.body)).toBe(200);
      expect(await one(id)).toMatchObject({
        sourceType: "gitlab",
        gitlabProjectId: 42,
        gitlabPathNamespace: "group/sub/api",
        gitlabOwner: "group/sub",
      });

      const bitbucket = await platform.mutate(
        "application.saveBitbucketProvider",
        {
          applicationId: id,
          bitbucketId: "bb1",
          bitbucketOwner: "team",
          bitbucketRepository: "Site",
          bitbucketRepositorySlug: "site",
          bitbucketBranch: "dev",
          bitbucketBuildPath: "web",
          enableSubmodules: false,
          watchPaths: null,
        },
        as(owner),
      );
      expect(bitbucket.status, JSON.stringify(bitbucket.body)).toBe(200);
      expect(await one(id)).toMatchObject({
        sourceType: "bitbucket",
        bitbucketRepositorySlug: "site",
        bitbucketBranch: "dev",
        bitbucketBuildPath: "web",
      });

      const gitea = await platform.mutate(
        "application.saveGiteaProvider",
        {
          applicationId: id,
          giteaId: "gt1",
          giteaOwner: "me",
          giteaRepository: "blog",
          giteaBranch: "main",
          giteaBuildPath: "/",
          enableSubmodules: true,
        },
        as(owner),
      );
      expect(gitea.status, JSON.stringify(gitea.body)).toBe(200);
      expect(await one(id)).toMatchObject({
        sourceType: "gitea",
        giteaOwner: "me",
        giteaRepository: "blog",
        enableSubmodules: true,
      });
    });

    it("saves a custom Git source with an SSH key of the organization only", async () => {
      const app = await create();
      const sshKeyId = await insertSshKey(owner.user.organizationId);
      const response = await platform.mutate(
        "application.saveGitProvider",
        {
          applicationId: app.applicationId,
          customGitUrl: "git@gitea.lan:team/app.git",
          customGitBranch: "main",
          customGitBuildPath: "/",
          customGitSSHKeyId: sshKeyId,
          enableSubmodules: false,
        },
        as(owner),
      );
      expect(response.status, JSON.stringify(response.body)).toBe(200);
      expect(await one(app.applicationId)).toMatchObject({
        sourceType: "git",
        customGitUrl: "git@gitea.lan:team/app.git",
        customGitSSHKeyId: sshKeyId,
      });

      const privateLan = await platform.mutate(
        "application.saveGitProvider",
        {
          applicationId: app.applicationId,
          customGitUrl: "http://192.168.1.20:3000/team/app.git",
          enableSubmodules: false,
        },
        as(owner),
      );
      // A LAN address needs PLATFORM_OUTBOUND_ALLOW to cover it (issue 10, finding 10).
      expect(privateLan.status).toBe(400);
      expect(privateLan.body.error.data.fields).toEqual(["customGitUrl"]);

      const theirKey = await insertSshKey(other.user.organizationId);
      const refused = await platform.mutate(
        "application.saveGitProvider",
        {
          applicationId: app.applicationId,
          customGitUrl: "git@evil.example:x.git",
          customGitSSHKeyId: theirKey,
          enableSubmodules: false,
        },
        as(owner),
      );
      expect(refused.status).toBe(404);
      expect(await one(app.applicationId)).toMatchObject({
        customGitUrl: "git@gitea.lan:team/app.git",
        customGitSSHKeyId: sshKeyId,
      });
    });

    it("disconnects the Git source back to defaults", async () => {
      const app = await create();
      await platform.mutate(
        "application.saveGithubProvider",
        {
          applicationId: app.applicationId,
          githubId: "gh",
          owner: "acme",
          repository: "r",
          branch: "main",
          buildPath: "/x",
          watchPaths: ["a"],
          enableSubmodules: true,
        },
        as(owner),
      );
      const response = await platform.mutate(
        "application.disconnectGitProvider",
        { applicationId: app.applicationId },
        as(owner),
      );
      expect(response.body).toEqual({ success: true });
      expect(await one(app.applicationId)).toMatchObject({
        sourceType: "github",
        githubId: null,
        owner: null,
        repository: null,
        branch: null,
        buildPath: "/",
        watchPaths: null,
        enableSubmodules: false,
        customGitUrl: null,
      });
    });

    it("seals the registry password, never shows it, keeps it when absent and clears it with null", async () => {
      const app = await create();
      const password = "registry-pass-Zq81!";
      const response = await platform.mutate(
        "application.saveDockerProvider",
        {
          applicationId: app.applicationId,
          dockerImage: "registry.example.com:5000/team/app:1.2",
          username: "bot",
          password,
          registryUrl: "registry.example.com:5000",
        },
        as(owner),
      );
      expect(response.status, JSON.stringify(response.body)).toBe(200);
      const stored = (await row(app.applicationId))!;
      expect(stored.passwordSealed).toMatch(/^v1:/);
      expect(stored.passwordSealed).not.toContain(password);
      const owned = { applicationId: app.applicationId, organizationId: owner.user.organizationId };
      expect(openApplicationSecret(platform.ctx.secrets, "password", owned, stored.passwordSealed)).toBe(
        password,
      );

      const detail = await one(app.applicationId);
      expect(detail).toMatchObject({
        sourceType: "docker",
        dockerImage: "registry.example.com:5000/team/app:1.2",
        username: "bot",
      });
      expect(JSON.stringify(detail)).not.toContain(password);
      const search = await platform.query("application.search", { dockerImage: "team/app" }, as(owner));
      expect(search.body.total).toBe(1);
      expect(JSON.stringify(search.body)).not.toContain(password);
      expect(platform.logLines.join("\n")).not.toContain(password);

      await platform.mutate(
        "application.saveDockerProvider",
        { applicationId: app.applicationId, dockerImage: "nginx:1.27" },
        as(owner),
      );
      expect((await row(app.applicationId))!.passwordSealed).toBe(stored.passwordSealed);
      await platform.mutate(
        "application.saveDockerProvider",
        { applicationId: app.applicationId, dockerImage: "nginx:1.27", password: null },
        as(owner),
      );
      expect((await row(app.applicationId))!.passwordSealed).toBeNull();
    });
  });

  it("saves the build type", async () => {
    const app = await create();
    const response = await platform.mutate(
      "application.saveBuildType",
      {
        applicationId: app.applicationId,
        buildType: "dockerfile",
        dockerfile: "docker/Dockerfile.prod",
        dockerContextPath: "./docker",
        dockerBuildStage: "runtime",
      },
      as(owner),
    );
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    expect(await one(app.applicationId)).toMatchObject({
      buildType: "dockerfile",
      dockerfile: "docker/Dockerfile.prod",
      dockerContextPath: "./docker",
      dockerBuildStage: "runtime",
    });
    await platform.mutate(
      "application.saveBuildType",
      {
        applicationId: app.applicationId,
        buildType: "static",
        dockerContextPath: "",
        dockerBuildStage: "",
        publishDirectory: "dist",
        isStaticSpa: true,
      },
      as(owner),
    );
    expect(await one(app.applicationId)).toMatchObject({
      buildType: "static",
      publishDirectory: "dist",
      isStaticSpa: true,
      dockerBuildStage: null,
    });
  });

  it("saves variables and seals build secrets", async () => {
    const app = await create();
    const secret = "BUILD_TOKEN=s3cr3t-build-value";
    const response = await platform.mutate(
      "application.saveEnvironment",
      {
        applicationId: app.applicationId,
        createEnvFile: false,
        env: "A=1",
        buildArgs: "NODE_VERSION=20",
        buildSecrets: secret,
      },
      as(owner),
    );
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    const detail = await one(app.applicationId);
    expect(detail).toMatchObject({ createEnvFile: false, env: "A=1", buildArgs: "NODE_VERSION=20" });
    expect(JSON.stringify(detail)).not.toContain("s3cr3t-build-value");
    const stored = (await row(app.applicationId))!;
    const owned = { applicationId: app.applicationId, organizationId: owner.user.organizationId };
    expect(
      openApplicationSecret(platform.ctx.secrets, "buildSecrets", owned, stored.buildSecretsSealed),
    ).toBe(secret);
    // A seal copied to another application does not open there.
    expect(() =>
      openApplicationSecret(
        platform.ctx.secrets,
        "buildSecrets",
        { ...owned, applicationId: "other" },
        stored.buildSecretsSealed,
      ),
    ).toThrow();
    await platform.mutate(
      "application.saveEnvironment",
      { applicationId: app.applicationId, createEnvFile: true, buildSecrets: "" },
      as(owner),
    );
    expect((await row(app.applicationId))!.buildSecretsSealed).toBeNull();
  });

  it("marks the application running and rotates its refresh token", async () => {
    const app = await create();
    expect(
      (await platform.mutate("application.markRunning", { applicationId: app.applicationId }, as(owner)))
        .body,
    ).toEqual({ success: true });
    expect((await one(app.applicationId)).applicationStatus).toBe("running");
    expect(
      (await platform.mutate("application.refreshToken", { applicationId: app.applicationId }, as(owner)))
        .body,
    ).toEqual({ success: true });
    const rotated = (await one(app.applicationId)).refreshToken;
    expect(rotated).not.toBe(app.refreshToken);
    expect(rotated).toMatch(/^[A-Za-z0-9_-]{43}$/);
    for (const procedure of ["application.markRunning", "application.refreshToken"]) {
      expect((await platform.mutate(procedure, { applicationId: app.applicationId }, as(other))).status).toBe(
        404,
      );
    }
    expect((await one(app.applicationId)).refreshToken).toBe(rotated);
  });

  it("moves the application to another environment of the organization only", async () => {
    const app = await create();
    const staging = await platform.mutate("environment.create", { projectId, name: "staging" }, as(owner));
    expect(staging.status, JSON.stringify(staging.body)).toBe(200);
    const moved = await platform.mutate(
      "application.move",
      { applicationId: app.applicationId, targetEnvironmentId: staging.body.environmentId },
      as(owner),
    );
    expect(moved.status, JSON.stringify(moved.body)).toBe(200);
    expect(moved.body).toMatchObject({
      applicationId: app.applicationId,
      environmentId: staging.body.environmentId,
    });
    const refused = await platform.mutate(
      "application.move",
      { applicationId: app.applicationId, targetEnvironmentId: otherEnvironmentId },
      as(owner),
    );
    expect(refused.status).toBe(404);
    expect((await one(app.applicationId)).environment.name).toBe("staging");
    const theirs = await platform.mutate(
      "application.move",
      { applicationId: app.applicationId, targetEnvironmentId: otherEnvironmentId },
      as(other),
    );
    expect(theirs.status).toBe(404);
  });

  describe("search", () => {
    it("filters the organization's applications and pages through them", async () => {
      const project = await newProject(owner, "Search");
      const env = project.environment.environmentId;
      for (const name of ["Alpha api", "Beta api", "Gamma worker"]) {
        await create({ name, environmentId: env, description: `${name} service` });
      }
      await platform.mutate(
        "application.create",
        { name: "Alpha api", environmentId: otherEnvironmentId },
        as(other),
      );

      const byProject = await platform.query(
        "application.search",
        { projectId: project.project.projectId },
        as(owner),
      );
      expect(byProject.body.total).toBe(3);
      expect(byProject.body.items.map((i: any) => i.name)).toEqual(["Gamma worker", "Beta api", "Alpha api"]);
      expect(byProject.body.items[0]).toMatchObject({
        projectId: project.project.projectId,
        environmentId: env,
        applicationStatus: "idle",
      });

      const q = await platform.query("application.search", { q: "API", environmentId: env }, as(owner));
      expect(q.body.total).toBe(2);
      const page = await platform.query(
        "application.search",
        { projectId: project.project.projectId, limit: 1, offset: 1 },
        as(owner),
      );
      expect(page.body).toMatchObject({ total: 3, items: [{ name: "Beta api" }] });
      const literal = await platform.query("application.search", { name: "%" }, as(owner));
      expect(literal.body.total).toBe(0);
      const theirs = await platform.query("application.search", { name: "Alpha" }, as(other));
      expect(theirs.body.total).toBe(1);

      for (const limit of [0, 101]) {
        const response = await platform.query("application.search", { limit }, as(owner));
        expect(response.status).toBe(400);
        expect(response.body.error.data.fields).toEqual(["limit"]);
      }
      expect((await platform.query("application.search", { offset: -1 }, as(owner))).status).toBe(400);
      const defaults = await platform.query("application.search", {}, as(owner));
      expect(defaults.body.items.length).toBeLessThanOrEqual(20);
      expect(defaults.body.total).toBeGreaterThan(20);
    });
  });

  describe("delete and member permissions", () => {
    it("lets members create and change applications, and delete them only with canDeleteProjects", async () => {
      const member = await createUserDirectly(platform, {
        email: `member${++users}@example.com`,
        organizationId: owner.user.organizationId,
        role: "member",
      });
      const app = await create({ name: "Member app" }, member);
      expect(
        (
          await platform.mutate(
            "application.update",
            { applicationId: app.applicationId, replicas: 2 },
            as(member),
          )
        ).status,
      ).toBe(200);
      expect((await one(app.applicationId, member)).replicas).toBe(2);
      const refused = await platform.mutate(
        "application.delete",
        { applicationId: app.applicationId },
        as(member),
      );
      expect(refused.status).toBe(403);
      expect(refused.body.error.message).toBe(
        "You do not have permission to delete services (canDeleteServices or canDeleteProjects)",
      );
      expect(await row(app.applicationId)).toBeDefined();

      const deleter = await createUserDirectly(platform, {
        email: `member${++users}@example.com`,
        organizationId: owner.user.organizationId,
        role: "member",
        canDeleteProjects: true,
      });
      const deleted = await platform.mutate(
        "application.delete",
        { applicationId: app.applicationId },
        as(deleter),
      );
      expect(deleted.status).toBe(200);
      expect(deleted.body).toEqual({
        applicationId: app.applicationId,
        name: "Member app",
        appName: app.appName,
      });
      expect(await row(app.applicationId)).toBeUndefined();
      expect(
        (await platform.mutate("application.delete", { applicationId: app.applicationId }, as(owner))).status,
      ).toBe(404);
    });

    it("is a 404 to delete another organization's application", async () => {
      const app = await create();
      expect(
        (await platform.mutate("application.delete", { applicationId: app.applicationId }, as(other))).status,
      ).toBe(404);
      expect(await row(app.applicationId)).toBeDefined();
    });
  });

  describe("inside projects", () => {
    it("shows applications in project.one, project.all and environment.one", async () => {
      const project = await newProject(owner, "Listed");
      const app = await create({ name: "Listed app", environmentId: project.environment.environmentId });
      const summary = {
        applicationId: app.applicationId,
        name: "Listed app",
        appName: app.appName,
        description: null,
        serverId: null,
        createdAt: app.createdAt,
        applicationStatus: "idle",
      };
      const detail = await platform.query("project.one", { projectId: project.project.projectId }, as(owner));
      expect(detail.body.environments[0].applications).toEqual([summary]);
      const all = await platform.query("project.all", {}, as(owner));
      const listed = all.body.find((p: any) => p.projectId === project.project.projectId);
      expect(listed.environments[0].applications).toEqual([summary]);
      const environment = await platform.query(
        "environment.one",
        { environmentId: project.environment.environmentId },
        as(owner),
      );
      expect(environment.body.applications).toEqual([summary]);
    });

    it("duplicates applications with their settings and resealed secrets", async () => {
      const project = await newProject(owner, "Original");
      const source = await create({ name: "Copied", environmentId: project.environment.environmentId });
      const skipped = await create({ name: "Skipped", environmentId: project.environment.environmentId });
      await platform.mutate(
        "application.update",
        { applicationId: source.applicationId, args: ["--a"], replicas: 2 },
        as(owner),
      );
      await platform.mutate(
        "application.saveDockerProvider",
        { applicationId: source.applicationId, dockerImage: "nginx", password: "dup-pass" },
        as(owner),
      );

      const same = await platform.mutate(
        "project.duplicate",
        {
          sourceEnvironmentId: project.environment.environmentId,
          name: "staging",
          duplicateInSameProject: true,
          selectedServices: [{ id: source.applicationId, type: "application" }],
        },
        as(owner),
      );
      expect(same.status, JSON.stringify(same.body)).toBe(200);
      expect(same.body.applications).toHaveLength(1);
      const copyId = same.body.applications[0].applicationId;
      const copy = await one(copyId);
      expect(copy).toMatchObject({
        name: "Copied (copy)",
        sourceType: "docker",
        dockerImage: "nginx",
        args: ["--a"],
        replicas: 2,
        applicationStatus: "idle",
      });
      expect(copy.appName).not.toBe(source.appName);
      expect(copy.appName).toMatch(/^copied-[a-z0-9]{6}$/);
      expect(copy.refreshToken).not.toBe(source.refreshToken);
      const sealed = (await row(copyId))!.passwordSealed;
      const owned = { applicationId: copyId, organizationId: owner.user.organizationId };
      expect(openApplicationSecret(platform.ctx.secrets, "password", owned, sealed)).toBe("dup-pass");

      const newProjectCopy = await platform.mutate(
        "project.duplicate",
        { sourceEnvironmentId: project.environment.environmentId, name: "Copy project" },
        as(owner),
      );
      expect(newProjectCopy.body.applications.map((a: any) => a.name).sort()).toEqual(["Copied", "Skipped"]);
      const none = await platform.mutate(
        "project.duplicate",
        { sourceEnvironmentId: project.environment.environmentId, name: "Empty", includeServices: false },
        as(owner),
      );
      expect(none.body.applications).toEqual([]);
      expect(skipped.applicationId).toBeDefined();
    });

    it("removes applications with their environment and their project", async () => {
      const project = await newProject(owner, "Doomed");
      const staging = await platform.mutate(
        "environment.create",
        { projectId: project.project.projectId, name: "staging" },
        as(owner),
      );
      const inStaging = await create({ environmentId: staging.body.environmentId });
      const inProduction = await create({ environmentId: project.environment.environmentId });
      expect(
        (
          await platform.mutate(
            "environment.remove",
            { environmentId: staging.body.environmentId },
            as(owner),
          )
        ).status,
      ).toBe(200);
      expect(await row(inStaging.applicationId)).toBeUndefined();
      expect(await row(inProduction.applicationId)).toBeDefined();
      expect(
        (await platform.mutate("project.remove", { projectId: project.project.projectId }, as(owner))).status,
      ).toBe(200);
      expect(await row(inProduction.applicationId)).toBeUndefined();
    });
  });
});
