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
    platform = await startTestPlatform({}, { agents: { localAgent: false } });
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
    const serverId = await insertServer(platform.services.db, stranger.user.organizationId, { name: "box" });
    await platform.services.db
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
});
