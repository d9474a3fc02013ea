import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createUserDirectly } from "../projects/test-support.ts";
import { type Session, startTestPlatform, type TestPlatform } from "../testing/harness.ts";
import { insertServer } from "../testing/servers.ts";

describe("port", () => {
  let platform: TestPlatform;
  let owner: Session;
  let stranger: Session;
  let applicationId: string;
  const as = (session: Session) => ({ token: session.token });

  beforeAll(async () => {
    platform = await startTestPlatform({ PORT: "3999" }, { agents: { localAgent: false } });
    owner = await platform.registerOwner();
    stranger = await createUserDirectly(platform, { email: "stranger@example.com" });
    const project = await platform.mutate("project.create", { name: "Shop" }, as(owner));
    const application = await platform.mutate(
      "application.create",
      { name: "Web", environmentId: project.body.environment.environmentId },
      as(owner),
    );
    applicationId = application.body.applicationId;
  });
  afterAll(() => platform?.close());

  it("creates a port (host mode and tcp by default), reads, updates and deletes it", async () => {
    const created = await platform.mutate(
      "port.create",
      { applicationId, publishedPort: 18080, targetPort: 80 },
      as(owner),
    );
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    expect(created.body).toMatchObject({
      applicationId,
      publishedPort: 18080,
      targetPort: 80,
      protocol: "tcp",
      publishMode: "host",
    });
    const { portId } = created.body;

    const one = await platform.query("port.one", { portId }, as(owner));
    expect(one.body).toMatchObject({ portId, publishedPort: 18080 });

    const updated = await platform.mutate(
      "port.update",
      { portId, targetPort: 3000, publishMode: "ingress" },
      as(owner),
    );
    expect(updated.status).toBe(200);
    expect(updated.body).toMatchObject({
      portId,
      publishedPort: 18080,
      targetPort: 3000,
      publishMode: "ingress",
    });

    const deleted = await platform.mutate("port.delete", { portId }, as(owner));
    expect(deleted.status).toBe(200);
    expect((await platform.query("port.one", { portId }, as(owner))).status).toBe(404);
  });

  it("refuses the same published port and protocol twice (409), allows it for udp", async () => {
    const first = await platform.mutate(
      "port.create",
      { applicationId, publishedPort: 9000, targetPort: 80 },
      as(owner),
    );
    expect(first.status).toBe(200);
    const again = await platform.mutate(
      "port.create",
      { applicationId, publishedPort: 9000, targetPort: 81 },
      as(owner),
    );
    expect(again.status).toBe(409);
    expect(again.body.error.data.fields).toEqual(["publishedPort"]);
    const udp = await platform.mutate(
      "port.create",
      { applicationId, publishedPort: 9000, targetPort: 81, protocol: "udp" },
      as(owner),
    );
    expect(udp.status).toBe(200);
    const clash = await platform.mutate(
      "port.update",
      { portId: udp.body.portId, protocol: "tcp" },
      as(owner),
    );
    expect(clash.status).toBe(409);
  });

  it.each([
    [{ publishedPort: 0, targetPort: 80 }, "publishedPort"],
    [{ publishedPort: 65536, targetPort: 80 }, "publishedPort"],
    [{ publishedPort: 8081, targetPort: -1 }, "targetPort"],
    [{ publishedPort: 8081, targetPort: 1.5 }, "targetPort"],
    [{ publishedPort: 8081, targetPort: 80, protocol: "sctp" }, "protocol"],
    [{ publishedPort: 8081, targetPort: 80, publishMode: "global" }, "publishMode"],
  ])("refuses %j with a 400 naming %s", async (fields, field) => {
    const response = await platform.mutate("port.create", { applicationId, ...fields }, as(owner));
    expect(response.status).toBe(400);
    expect(response.body.error.data.fields).toContain(field);
  });

  it("refuses reserved host ports with a 400 naming publishedPort, on create and update", async () => {
    for (const publishedPort of [22, 80, 443, 2377, 7946, 4789, 8080, 4222, 5432]) {
      const created = await platform.mutate(
        "port.create",
        { applicationId, publishedPort, targetPort: 80 },
        as(owner),
      );
      expect(created.status, String(publishedPort)).toBe(400);
      expect(created.body.error.data.fields).toEqual(["publishedPort"]);
    }
    const port = await platform.mutateOk(
      "port.create",
      { applicationId, publishedPort: 18443, targetPort: 80 },
      as(owner),
    );
    const updated = await platform.mutate(
      "port.update",
      { portId: port.portId, publishedPort: 22 },
      as(owner),
    );
    expect(updated.status).toBe(400);
    expect(updated.body.error.data.fields).toEqual(["publishedPort"]);
    expect((await platform.query("port.one", { portId: port.portId }, as(owner))).body.publishedPort).toBe(
      18443,
    );
    await platform.mutateOk("port.delete", { portId: port.portId }, as(owner));
  });

  it("refuses a port another application publishes on the same server (409), in any organization", async () => {
    const taken = await platform.mutateOk(
      "port.create",
      { applicationId, publishedPort: 18500, targetPort: 80 },
      as(owner),
    );
    const project = await platform.mutateOk("project.create", { name: "Other" }, as(stranger));
    const other = await platform.mutateOk(
      "application.create",
      { name: "Other", environmentId: project.environment.environmentId },
      as(stranger),
    );
    const clash = await platform.mutate(
      "port.create",
      { applicationId: other.applicationId, publishedPort: 18500, targetPort: 80 },
      as(stranger),
    );
    expect(clash.status).toBe(409);
    expect(clash.body.error.data.fields).toEqual(["publishedPort"]);
    const udp = await platform.mutateOk(
      "port.create",
      { applicationId: other.applicationId, publishedPort: 18500, targetPort: 80, protocol: "udp" },
      as(stranger),
    );
    const moved = await platform.mutate("port.update", { portId: udp.portId, protocol: "tcp" }, as(stranger));
    expect(moved.status).toBe(409);

    // The same port on another server is free.
    const serverId = await insertServer(platform.ctx.db, stranger.user.organizationId, { name: "box" });
    await platform.ctx.db
      .updateTable("applications")
      .set({ serverId })
      .where("applicationId", "=", other.applicationId)
      .execute();
    const elsewhere = await platform.mutate(
      "port.create",
      { applicationId: other.applicationId, publishedPort: 18500, targetPort: 80 },
      as(stranger),
    );
    expect(elsewhere.status, JSON.stringify(elsewhere.body)).toBe(200);
    await platform.mutateOk("port.delete", { portId: taken.portId }, as(owner));
  });

  it("gives a free port to one of two requests that claim it at once, the other is a 409", async () => {
    const project = await platform.mutateOk("project.create", { name: "Race" }, as(owner));
    const applications = await Promise.all(
      ["One", "Two"].map((name) =>
        platform.mutateOk(
          "application.create",
          { name, environmentId: project.environment.environmentId },
          as(owner),
        ),
      ),
    );
    for (let round = 0; round < 5; round++) {
      const publishedPort = 18600 + round;
      const answers = await Promise.all(
        applications.map(({ applicationId }) =>
          platform.mutate("port.create", { applicationId, publishedPort, targetPort: 80 }, as(owner)),
        ),
      );
      expect(answers.map((answer) => answer.status).sort()).toEqual([200, 409]);
    }
  });

  it("hides another organization's application and ports (404)", async () => {
    const port = await platform.mutate(
      "port.create",
      { applicationId, publishedPort: 7000, targetPort: 80 },
      as(owner),
    );
    const { portId } = port.body;
    const create = await platform.mutate(
      "port.create",
      { applicationId, publishedPort: 7001, targetPort: 80 },
      as(stranger),
    );
    expect(create.status).toBe(404);
    expect((await platform.query("port.one", { portId }, as(stranger))).status).toBe(404);
    expect((await platform.mutate("port.update", { portId, targetPort: 1 }, as(stranger))).status).toBe(404);
    expect((await platform.mutate("port.delete", { portId }, as(stranger))).status).toBe(404);
    expect((await platform.query("port.one", { portId }, as(owner))).body.targetPort).toBe(80);
  });

  /** Stores a monitoring configuration whose agent metrics port is `port`, as setupMonitoring does. */
  async function monitorOn(serverId: string, organizationId: string, port: number) {
    const config = {
      server: {
        refreshRate: 60,
        port,
        token: "metrics-token",
        urlCallback: "http://127.0.0.1:1/callback",
        retentionDays: 2,
        cronJob: "0 0 * * *",
        thresholds: { cpu: 0, memory: 0 },
      },
      containers: { refreshRate: 60 },
    };
    const configSealed = platform.ctx.secrets.encrypt(JSON.stringify(config), {
      table: "monitoring_configs",
      rowId: serverId,
      organizationId,
    });
    await platform.ctx.db
      .insertInto("monitoringConfigs")
      .values({ serverId, organizationId, configSealed, updatedAt: new Date().toISOString() })
      .execute();
  }

  it("reserves the control plane's PORT, 3000 and this machine's metrics port (issue 22 finding 3)", async () => {
    await monitorOn("local", owner.user.organizationId, 4510);
    for (const publishedPort of [3999, 3000, 4510]) {
      const created = await platform.mutate(
        "port.create",
        { applicationId, publishedPort, targetPort: 80 },
        as(owner),
      );
      expect(created.status, String(publishedPort)).toBe(400);
      expect(created.body.error.data.fields).toEqual(["publishedPort"]);
      expect(created.body.error.message).toContain(`${publishedPort} is reserved for`);
    }
    const port = await platform.mutateOk(
      "port.create",
      { applicationId, publishedPort: 18444, targetPort: 80 },
      as(owner),
    );
    const updated = await platform.mutate(
      "port.update",
      { portId: port.portId, publishedPort: 3999 },
      as(owner),
    );
    expect(updated.status).toBe(400);
    expect(updated.body.error.data.fields).toEqual(["publishedPort"]);
    await platform.mutateOk("port.delete", { portId: port.portId }, as(owner));
  });

  it("reserves each server's own metrics port, and the control plane's ports on a server at this machine's address", async () => {
    const organizationId = owner.user.organizationId;
    const project = await platform.mutateOk("project.create", { name: "Servers" }, as(owner));
    const environmentId = project.environment.environmentId;
    const onServer = async (ipAddress: string) => {
      const serverId = await insertServer(platform.ctx.db, organizationId, { ipAddress });
      const application = await platform.mutateOk(
        "application.create",
        { name: `on ${ipAddress}`, environmentId, serverId },
        as(owner),
      );
      return { serverId, applicationId: application.applicationId as string };
    };
    const publish = (target: { applicationId: string }, publishedPort: number) =>
      platform.mutate(
        "port.create",
        { applicationId: target.applicationId, publishedPort, targetPort: 80 },
        as(owner),
      );

    const remote = await onServer("203.0.113.77");
    await monitorOn(remote.serverId, organizationId, 4600);
    expect((await publish(remote, 4600)).status).toBe(400);
    // Another server's ports are its own: this machine's PORT and metrics port are free there.
    for (const free of [3999, 3000, 4510])
      expect((await publish(remote, free)).status, String(free)).toBe(200);

    const sameMachine = await onServer("127.0.0.1");
    for (const reserved of [3999, 3000]) {
      const answer = await publish(sameMachine, reserved);
      expect(answer.status, String(reserved)).toBe(400);
      expect(answer.body.error.data.fields).toEqual(["publishedPort"]);
    }
    expect((await publish(sameMachine, 4600)).status).toBe(200);
  });

  it("a member granted an application may call port.create on it, not on another application", async () => {
    const project = await platform.mutateOk("project.create", { name: "Grants" }, as(owner));
    const environmentId = project.environment.environmentId;
    const granted = await platform.mutateOk(
      "application.create",
      { name: "granted", environmentId },
      as(owner),
    );
    const other = await platform.mutateOk("application.create", { name: "other", environmentId }, as(owner));
    const member = await createUserDirectly(platform, {
      email: "port-member@example.com",
      organizationId: owner.user.organizationId,
    });
    await platform.mutateOk(
      "user.assignPermissions",
      { id: member.user.userId, accessedServices: [granted.applicationId] },
      as(owner),
    );
    const created = await platform.mutate(
      "port.create",
      { applicationId: granted.applicationId, publishedPort: 18500, targetPort: 80 },
      as(member),
    );
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    expect(created.body).toMatchObject({ applicationId: granted.applicationId, publishedPort: 18500 });
    const reserved = await platform.mutate(
      "port.create",
      { applicationId: granted.applicationId, publishedPort: 3999, targetPort: 80 },
      as(member),
    );
    expect(reserved.status).toBe(400);
    expect(reserved.body.error.data.fields).toEqual(["publishedPort"]);
    const hidden = await platform.mutate(
      "port.create",
      { applicationId: other.applicationId, publishedPort: 18501, targetPort: 80 },
      as(member),
    );
    expect(hidden.status).toBe(404);
    const rows = await platform.ctx.db
      .selectFrom("ports")
      .select("publishedPort")
      .where("applicationId", "=", other.applicationId)
      .execute();
    expect(rows).toEqual([]);
  });
});
