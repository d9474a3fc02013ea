/**
 * overview.domains and overview.backups (issue 41): the domains and the backup run history of
 * the services the caller's grants show, never another organization's; the control plane's own
 * backup runs only for instance administrators. Runs are recorded as the run code records them
 * (a deployment with its backup_runs row), without running a real backup.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { newId } from "../crypto/ids.ts";
import { insertDeployment } from "../deployments/repository.ts";
import { type Session, startTestPlatform, type TestPlatform } from "../testing/harness.ts";
import { createOtherOrganization } from "../users/test-support.ts";

let platform: TestPlatform;
let owner: Session;
let other: Session & { organizationId: string };
const as = (session: Session) => ({ token: session.token });

async function ok(name: string, input: Record<string, unknown>, session: Session) {
  const response = await platform.mutate(name, input, as(session));
  expect(response.status, `${name}: ${JSON.stringify(response.body)}`).toBe(200);
  return response.body as any;
}

/** A project with an application, a postgres and a compose stack, each with what overview shows. */
async function makeServices(session: Session, label: string) {
  const project = await ok("project.create", { name: `${label} overview` }, session);
  const environmentId = project.environment.environmentId as string;
  const app = await ok(
    "application.create",
    { name: "web", appName: `ov-${label}-web`, environmentId },
    session,
  );
  const stack = await ok(
    "compose.create",
    {
      name: "stack",
      appName: `ov-${label}-stack`,
      environmentId,
      description: "",
      composeFile: "services:\n  web:\n    image: busybox\n",
    },
    session,
  );
  const pg = await ok(
    "postgres.create",
    {
      name: "db",
      appName: `ov-${label}-pg`,
      environmentId,
      databasePassword: "s3cret-Pass",
      databaseName: "app",
      databaseUser: "app",
    },
    session,
  );
  // Written straight to the database: through the API a domain rewrites proxy files through an
  // agent, and the other organization has no server of its own here.
  const domain = async (host: string, owner: { applicationId?: string; composeId?: string }) =>
    platform.ctx.db
      .insertInto("domains")
      .values({
        domainId: newId(),
        host,
        port: owner.composeId ? 8080 : 3000,
        certificateType: "none",
        customCertResolver: null,
        certificate: null,
        certificateKeySealed: null,
        domainType: owner.composeId ? "compose" : "application",
        applicationId: owner.applicationId ?? null,
        composeId: owner.composeId ?? null,
        serviceName: owner.composeId ? "web" : null,
        internalPath: null,
      })
      .returning("domainId")
      .executeTakeFirstOrThrow();
  const appDomain = await domain(`${label}-web.example.com`, { applicationId: app.applicationId });
  const stackDomain = await domain(`${label}-stack.example.com`, { composeId: stack.composeId });
  const destination = await ok(
    "destination.create",
    {
      name: `${label} bucket`,
      provider: "Minio",
      accessKey: "access-key",
      secretAccessKey: `${label}-secret`,
      bucket: "overview",
      region: "us-east-1",
      endpoint: "https://s3.example.com",
    },
    session,
  );
  const backup = await ok(
    "backup.create",
    {
      schedule: "0 3 * * *",
      prefix: "db",
      destinationId: destination.destinationId,
      database: "app",
      databaseType: "postgres",
      postgresId: pg.postgresId,
    },
    session,
  );
  await ok(
    "mounts.create",
    {
      type: "volume",
      volumeName: `ov-${label}-data`,
      mountPath: "/data",
      serviceType: "application",
      serviceId: app.applicationId,
    },
    session,
  );
  const volumeBackup = await ok(
    "volumeBackups.create",
    {
      name: "nightly",
      volumeName: `ov-${label}-data`,
      prefix: "volume",
      cronExpression: "0 3 * * *",
      applicationId: app.applicationId,
      destinationId: destination.destinationId,
    },
    session,
  );
  // One run of each, as backups/runs.ts and volume-backups/ record them.
  const backupRun = await insertDeployment(platform.ctx.db, {
    target: { kind: "database", id: pg.postgresId },
    kind: "backup",
    title: "Backup",
    description: null,
    errorMessage: null,
    commitHash: null,
    commitMessage: null,
    imageName: null,
    serverId: null,
    startedAt: null,
    completedAt: null,
    backupRun: { backupId: backup.backupId, backupDestinationId: destination.destinationId },
  } as never);
  const volumeRun = await insertDeployment(platform.ctx.db, {
    target: { kind: "application", id: app.applicationId },
    kind: "volumeBackup",
    title: "Volume backup",
    description: null,
    errorMessage: null,
    commitHash: null,
    commitMessage: null,
    imageName: null,
    serverId: null,
    startedAt: null,
    completedAt: null,
    backupRun: {
      volumeBackupId: volumeBackup.volumeBackupId,
      backupDestinationId: destination.destinationId,
    },
  } as never);
  return {
    project,
    environmentId,
    app,
    stack,
    pg,
    appDomain,
    stackDomain,
    destination,
    backupRun,
    volumeRun,
  };
}

let ours: Awaited<ReturnType<typeof makeServices>>;
let theirs: Awaited<ReturnType<typeof makeServices>>;

beforeAll(async () => {
  platform = await startTestPlatform();
  owner = await platform.registerOwner();
  other = await createOtherOrganization(platform);
  ours = await makeServices(owner, "ours");
  theirs = await makeServices(other, "theirs");
}, 120_000);

afterAll(() => platform?.close());

describe("overview.domains", () => {
  it("lists the domains of the organization's applications and stacks with their place, not another organization's", async () => {
    const r = await platform.query("overview.domains", {}, as(owner));
    expect(r.status).toBe(200);
    expect(r.body).toEqual([
      expect.objectContaining({
        domainId: ours.appDomain.domainId,
        host: "ours-web.example.com",
        domainType: "application",
        enabled: true,
        serviceOwnerId: ours.app.applicationId,
        serviceOwnerType: "application",
        serviceName: "web",
        projectId: ours.project.project.projectId,
        projectName: "ours overview",
        environmentId: ours.environmentId,
      }),
      expect.objectContaining({
        domainId: ours.stackDomain.domainId,
        host: "ours-stack.example.com",
        port: 8080,
        serviceOwnerId: ours.stack.composeId,
        serviceOwnerType: "compose",
      }),
    ]);
    const text = JSON.stringify(r.body);
    for (const id of [
      theirs.appDomain.domainId,
      theirs.app.applicationId,
      theirs.project.project.projectId,
    ]) {
      expect(text).not.toContain(id);
    }
    const mine = await platform.query("overview.domains", {}, as(other));
    expect(mine.body.map((d: any) => d.domainId)).toEqual([
      theirs.appDomain.domainId,
      theirs.stackDomain.domainId,
    ]);
  });

  it("shows a member only the domains of the services they were granted", async () => {
    const member = await platform.addMember(owner, "member");
    await ok(
      "user.assignPermissions",
      {
        id: member.user.id,
        accessedProjects: [ours.project.project.projectId],
        accessedEnvironments: [ours.environmentId],
        accessedServices: [ours.stack.composeId],
      },
      owner,
    );
    const r = await platform.query("overview.domains", {}, as(member));
    expect(r.body.map((d: any) => d.domainId)).toEqual([ours.stackDomain.domainId]);
    await ok("user.assignPermissions", { id: member.user.id, accessedServices: [] }, owner);
    expect((await platform.query("overview.domains", {}, as(member))).body).toEqual([]);
    expect((await platform.query("overview.domains")).status).toBe(401);
  });
});

describe("overview.backups", () => {
  it("lists the runs of the organization's backups and volume backups, newest first, with their service", async () => {
    const r = await platform.query("overview.backups", {}, as(owner));
    expect(r.status).toBe(200);
    expect(r.body).toEqual([
      expect.objectContaining({
        deploymentId: ours.volumeRun.deploymentId,
        kind: "volumeBackup",
        destinationId: ours.destination.destinationId,
        destinationName: "ours bucket",
        databaseType: null,
        serviceType: "application",
        serviceOwnerId: ours.app.applicationId,
        serviceOwnerType: "application",
        serviceName: "web",
        projectId: ours.project.project.projectId,
      }),
      expect.objectContaining({
        deploymentId: ours.backupRun.deploymentId,
        kind: "backup",
        databaseType: "postgres",
        backupType: "database",
        serviceOwnerId: ours.pg.postgresId,
        serviceOwnerType: "postgres",
        serviceName: "db",
        environmentId: ours.environmentId,
      }),
    ]);
    const text = JSON.stringify(r.body);
    expect(text).not.toContain(theirs.backupRun.deploymentId);
    expect(text).not.toContain(theirs.volumeRun.deploymentId);
    expect(text).not.toContain("ours-secret");
    const mine = await platform.query("overview.backups", {}, as(other));
    expect(mine.body.map((b: any) => b.deploymentId).sort()).toEqual(
      [theirs.backupRun.deploymentId, theirs.volumeRun.deploymentId].sort(),
    );
  });

  it("shows a member only the runs of the services they were granted", async () => {
    const member = await platform.addMember(owner, "member");
    await ok(
      "user.assignPermissions",
      {
        id: member.user.id,
        accessedProjects: [ours.project.project.projectId],
        accessedEnvironments: [ours.environmentId],
        accessedServices: [ours.pg.postgresId],
      },
      owner,
    );
    const r = await platform.query("overview.backups", {}, as(member));
    expect(r.body.map((b: any) => b.deploymentId)).toEqual([ours.backupRun.deploymentId]);
    expect((await platform.query("overview.backups")).status).toBe(401);
  });

  it("shows the control plane's own backup runs to instance administrators only", async () => {
    const backup = await ok(
      "backup.create",
      {
        schedule: "0 3 * * *",
        prefix: "control-plane",
        destinationId: ours.destination.destinationId,
        database: "",
        databaseType: "web-server",
      },
      owner,
    );
    const run = await insertDeployment(platform.ctx.db, {
      target: { kind: "webServer", id: backup.backupId },
      kind: "backup",
      title: "Web server backup",
      description: null,
      errorMessage: null,
      commitHash: null,
      commitMessage: null,
      imageName: null,
      serverId: null,
      startedAt: null,
      completedAt: null,
      backupRun: { backupId: backup.backupId, backupDestinationId: ours.destination.destinationId },
    } as never);
    const r = await platform.query("overview.backups", {}, as(owner));
    expect(r.body[0]).toMatchObject({
      deploymentId: run.deploymentId,
      kind: "backup",
      databaseType: "web-server",
      serviceOwnerId: null,
      serviceOwnerType: "web-server",
      serviceName: "Control plane",
    });
    const member = await platform.addMember(owner, "member");
    const theirView = await platform.query("overview.backups", {}, as(member));
    expect(theirView.body.map((b: any) => b.deploymentId)).not.toContain(run.deploymentId);
    expect(theirView.body.length).toBe(2);
  });
});
