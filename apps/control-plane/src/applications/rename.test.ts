/**
 * Tenancy of an application's name on a shared server (issue 10, findings 2, 5 and 9), against
 * the real local agent, Docker Engine and proxy files: a service the platform did not create is
 * never taken over through appName, renaming leaves no Traefik file behind and is refused once
 * deployed, reserved and never-valid names are 400s, and a stored bad name can still be deleted.
 */
import { createForeignService, dockerCli, TEST_IMAGE, uniqueName } from "@platform/agent/testing/docker.ts";
import { applicationOwner, ownershipLabels } from "@platform/ownership";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { newId } from "../crypto/ids.ts";
import {
  createApplication,
  dynamicFile,
  type ProxyTestPlatform,
  readIfExists,
  startProxyTestPlatform,
} from "../proxy/test-support.ts";

let test: ProxyTestPlatform;
const as = () => ({ token: test.owner.token });
const foreign = uniqueName("foreign-svc").toLowerCase();

beforeAll(async () => {
  test = await startProxyTestPlatform();
  // A Swarm service the platform never created (no labels), as another tenant or an operator has.
  await createForeignService(foreign);
}, 60_000);

afterAll(async () => {
  await dockerCli(["service", "rm", foreign]).catch(() => {});
  await test?.close();
});

const update = (applicationId: string, input: Record<string, unknown>) =>
  test.platform.mutate("application.update", { applicationId, ...input }, as());
const appNameOf = async (applicationId: string) =>
  (
    await test.platform.ctx.db
      .selectFrom("applications")
      .select("appName")
      .where("applicationId", "=", applicationId)
      .executeTakeFirstOrThrow()
  ).appName;
const replicasOf = async (name: string) =>
  Number(await dockerCli(["service", "inspect", name, "--format", "{{.Spec.Mode.Replicated.Replicas}}"]));

describe("finding 2: appName cannot take over a foreign service", () => {
  it("refuses reserved and never-valid appNames (400 naming appName, nothing changed)", async () => {
    const app = await createApplication(test);
    for (const appName of [
      "platform-traefik",
      "Platform-control-plane",
      "..",
      "-rf",
      "--help",
      ".env",
      "a..b",
    ]) {
      const response = await update(app.applicationId, { appName });
      expect(response.status, appName).toBe(400);
      expect(response.body.error.data.fields, appName).toEqual(["appName"]);
      const created = await test.platform.mutate(
        "application.create",
        { name: "Web", environmentId: test.environmentId, appName },
        as(),
      );
      expect(created.status, appName).toBe(400);
    }
    expect(await appNameOf(app.applicationId)).toBe(app.appName);
  });

  it("never generates a reserved appName from a display name", async () => {
    const created = await test.platform.mutateOk(
      "application.create",
      { name: "Platform Traefik", environmentId: test.environmentId },
      as(),
    );
    expect(created.appName).toMatch(/^app-platform-traefik-[a-z0-9]{6}$/);
  });

  it("stop, reload and start of an application named like a foreign service are 409s; delete leaves it", async () => {
    const app = await createApplication(test);
    expect((await update(app.applicationId, { appName: foreign })).status).toBe(200);
    for (const procedure of ["application.stop", "application.reload", "application.start"]) {
      // Only application.reload takes appName (as in Dokploy); strict inputs refuse it elsewhere.
      const input =
        procedure === "application.reload"
          ? { applicationId: app.applicationId, appName: foreign }
          : { applicationId: app.applicationId };
      const response = await test.platform.mutate(procedure, input, as());
      expect(response.status, `${procedure} ${JSON.stringify(response.body)}`).toBe(409);
      expect(response.body.error.message).toContain(foreign);
    }
    expect(await replicasOf(foreign)).toBe(1);
    const deleted = await test.platform.mutate(
      "application.delete",
      { applicationId: app.applicationId },
      as(),
    );
    expect(deleted.status, JSON.stringify(deleted.body)).toBe(200);
    expect(await replicasOf(foreign)).toBe(1);
  });
});

describe("finding 5: renaming leaves no Traefik file behind", () => {
  it("moves the file of an application with a domain, and deletion removes it", async () => {
    const app = await createApplication(test);
    const domain = await test.platform.mutate(
      "domain.create",
      {
        domainType: "application",
        applicationId: app.applicationId,
        host: "moved.example.com",
        certificateType: "none",
      },
      as(),
    );
    expect(domain.status, JSON.stringify(domain.body)).toBe(200);
    expect(await readIfExists(dynamicFile(test, `${app.appName}.yml`))).toContain("moved.example.com");
    const renamed = `renamed-${app.appName}`.slice(0, 60);
    expect((await update(app.applicationId, { appName: renamed })).status).toBe(200);
    expect(await readIfExists(dynamicFile(test, `${app.appName}.yml`))).toBeUndefined();
    expect(await readIfExists(dynamicFile(test, `${renamed}.yml`))).toContain("moved.example.com");
    await test.platform.mutateOk("application.delete", { applicationId: app.applicationId }, as());
    expect(await readIfExists(dynamicFile(test, `${renamed}.yml`))).toBeUndefined();
  });

  it("removes a file written by updateTraefikConfig (no domain) on rename", async () => {
    const app = await createApplication(test);
    const yaml = `http:\n  routers:\n    ${app.appName}-custom:\n      rule: Host(\`custom.example.com\`)\n      service: ${app.appName}-custom\n  services:\n    ${app.appName}-custom:\n      loadBalancer:\n        servers:\n          - url: http://${app.appName}:80\n`;
    const written = await test.platform.mutate(
      "application.updateTraefikConfig",
      { applicationId: app.applicationId, traefikConfig: yaml },
      as(),
    );
    expect(written.status, JSON.stringify(written.body)).toBe(200);
    expect(await readIfExists(dynamicFile(test, `${app.appName}.yml`))).toBeDefined();
    expect((await update(app.applicationId, { appName: `moved-${app.appName}`.slice(0, 60) })).status).toBe(
      200,
    );
    expect(await readIfExists(dynamicFile(test, `${app.appName}.yml`))).toBeUndefined();
  });

  it("refuses a rename once the application was deployed (409 naming appName)", async () => {
    const app = await createApplication(test);
    await test.platform.ctx.db
      .insertInto("deployments")
      .values({
        deploymentId: newId(),
        targetKind: "application",
        targetId: app.applicationId,
        applicationId: app.applicationId,
        kind: "deploy",
        title: "Deployed before",
        description: null,
        serverId: null,
        status: "done",
        errorMessage: null,
        commitHash: null,
        archivePath: null,
        archiveFormat: null,
      } as never)
      .execute();
    const response = await update(app.applicationId, { appName: `other-${app.appName}`.slice(0, 60) });
    expect(response.status, JSON.stringify(response.body)).toBe(409);
    expect(response.body.error.data.fields).toEqual(["appName"]);
    expect(await appNameOf(app.applicationId)).toBe(app.appName);
    // Other fields still change.
    expect((await update(app.applicationId, { description: "still editable" })).status).toBe(200);
  });
});

describe("finding 9: a stored bad appName can still be deleted", () => {
  const storeName = (applicationId: string, appName: string) =>
    test.platform.ctx.db
      .updateTable("applications")
      .set({ appName })
      .where("applicationId", "=", applicationId)
      .execute();

  it("application.delete of '..' and of 'platform-control-plane' succeeds and touches nothing else", async () => {
    for (const name of ["..", "platform-control-plane"]) {
      const app = await createApplication(test);
      await storeName(app.applicationId, name);
      const deleted = await test.platform.mutate(
        "application.delete",
        { applicationId: app.applicationId },
        as(),
      );
      expect(deleted.status, `${name} ${JSON.stringify(deleted.body)}`).toBe(200);
    }
  });

  it("application.delete of a name valid only under the older rule removes its service (issue 22, finding 9)", async () => {
    const app = await createApplication(test);
    const name = uniqueName("platform-old").toLowerCase();
    await storeName(app.applicationId, name);
    const owner = applicationOwner(test.owner.user.organizationId, app.applicationId);
    const labels = Object.entries(ownershipLabels(owner)).flatMap(([key, value]) => [
      "--label",
      `${key}=${value}`,
    ]);
    await dockerCli(["service", "create", "--detach", "--name", name, ...labels, TEST_IMAGE, "sleep", "600"]);
    try {
      const deleted = await test.platform.mutate(
        "application.delete",
        { applicationId: app.applicationId },
        as(),
      );
      expect(deleted.status, JSON.stringify(deleted.body)).toBe(200);
      expect(await dockerCli(["service", "ls", "--quiet", "--filter", `name=${name}`])).toBe("");
    } finally {
      await dockerCli(["service", "rm", name]).catch(() => {});
    }
  }, 60_000);

  it("project.remove with a stored bad name removes the whole project", async () => {
    const project = await test.platform.mutateOk("project.create", { name: "Legacy" }, as());
    const environmentId: string = project.environment.environmentId;
    const good = await createApplication(test, test.owner, environmentId);
    const bad = await createApplication(test, test.owner, environmentId);
    await test.platform.mutateOk(
      "domain.create",
      {
        domainType: "application",
        applicationId: good.applicationId,
        host: "legacy.example.com",
        certificateType: "none",
      },
      as(),
    );
    await storeName(bad.applicationId, "--help");
    const removed = await test.platform.mutate(
      "project.remove",
      { projectId: project.project.projectId },
      as(),
    );
    expect(removed.status, JSON.stringify(removed.body)).toBe(200);
    expect(await readIfExists(dynamicFile(test, `${good.appName}.yml`))).toBeUndefined();
    const left = await test.platform.ctx.db
      .selectFrom("applications")
      .select("applicationId")
      .where("applicationId", "in", [good.applicationId, bad.applicationId])
      .execute();
    expect(left).toEqual([]);
  });
});

describe("this machine belongs to the instance organization", () => {
  it("another organization's application without a server cannot deploy, run or route here (400 naming serverId)", async () => {
    const app = await createApplication(test, test.stranger, test.strangerEnvironmentId);
    const stranger = { token: test.stranger.token };
    for (const [procedure, input] of [
      ["application.deploy", { applicationId: app.applicationId }],
      ["application.stop", { applicationId: app.applicationId }],
      ["application.reload", { applicationId: app.applicationId, appName: app.appName }],
      [
        "domain.create",
        {
          domainType: "application",
          applicationId: app.applicationId,
          host: "stranger.example.com",
          certificateType: "none",
        },
      ],
    ] as const) {
      const response = await test.platform.mutate(procedure, input, stranger);
      expect(response.status, `${procedure} ${JSON.stringify(response.body)}`).toBe(400);
      expect(response.body.error.data.fields, procedure).toEqual(["serverId"]);
    }
    expect(await readIfExists(dynamicFile(test, `${app.appName}.yml`))).toBeUndefined();
    const deployments = await test.platform.ctx.db
      .selectFrom("deployments")
      .select("deploymentId")
      .where("applicationId", "=", app.applicationId)
      .execute();
    expect(deployments).toEqual([]);
  });
});
