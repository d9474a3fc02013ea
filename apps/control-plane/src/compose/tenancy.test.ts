/**
 * A tenant's compose file runs on the shared Docker engine: compose.create, compose.update and
 * getConvertedCompose refuse what would widen it (issue 23 item 6) with a 400 naming the service
 * and key (the Docker socket, a host path, another organization's volume or network, ...), and
 * store nothing; the instance organization is refused none of it. mounts.create/one/update/remove
 * with serviceType compose keep a stack's file mounts (issue 27 item 3). The rules
 * themselves are tested case by case in @platform/compose-config (tenancy.test.ts); this proves
 * the control plane hands every organization but the instance's to them.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { type Session, startTestPlatform, type TestPlatform } from "../testing/harness.ts";

let platform: TestPlatform;
let owner: Session;
let tenant: Session;
let ownerEnvironmentId: string;
let tenantEnvironmentId: string;

const file = (extra: string) => `services:
  web:
    image: platform-test/busybox:latest
${extra}`;

beforeAll(async () => {
  platform = await startTestPlatform();
  owner = await platform.registerOwner();
  const ownerProject = await platform.mutateOk("project.create", { name: "Instance" }, owner);
  ownerEnvironmentId = ownerProject.environment.environmentId;
  tenant = await platform.addMember(owner, "member");
  const created = await platform.mutateOk("organization.create", { name: "Tenant" }, tenant);
  await platform.mutateOk("organization.setActive", { organizationId: created.id }, tenant);
  const project = await platform.mutateOk("project.create", { name: "Tenant project" }, tenant);
  tenantEnvironmentId = project.environment.environmentId;
});

afterAll(async () => {
  await platform?.close();
});

describe("a tenant's compose file", () => {
  it.each([
    ["privileged", "    privileged: true\n", "services.web.privileged"],
    [
      "the Docker socket",
      "    volumes:\n      - /var/run/docker.sock:/var/run/docker.sock\n",
      "services.web.volumes",
    ],
    ["a host path", "    volumes:\n      - /home:/h\n", "services.web.volumes"],
    [
      "another organization's volume",
      "    volumes:\n      - theirs:/d\nvolumes:\n  theirs:\n    external: true\n",
      "volumes.theirs",
    ],
    ["host networking", "    network_mode: host\n", "services.web.network_mode"],
    ["cap_add", "    cap_add: [SYS_ADMIN]\n", "services.web.cap_add"],
    ["a reserved port", '    ports:\n      - "443:8080"\n', "services.web.ports"],
    [
      "another organization's network",
      "    networks: [theirs]\nnetworks:\n  theirs:\n    external: true\n",
      "networks.theirs",
    ],
  ])("refuses %s at create with a 400 naming it, and stores nothing", async (_what, extra, where) => {
    const appName = `tenant-${Math.random().toString(36).slice(2, 10)}`;
    const refused = await platform.mutate(
      "compose.create",
      {
        name: "t",
        appName,
        environmentId: tenantEnvironmentId,
        composeType: "stack",
        composeFile: file(extra),
      },
      tenant,
    );
    expect(refused.status, JSON.stringify(refused.body)).toBe(400);
    expect(JSON.stringify(refused.body)).toContain(where);
    // Nothing stored: the appName is free again.
    await platform.mutateOk(
      "compose.create",
      { name: "t", appName, environmentId: tenantEnvironmentId, composeType: "stack", composeFile: file("") },
      tenant,
    );
  });

  it("refuses a widening update and keeps the stored file", async () => {
    const appName = `tenant-${Math.random().toString(36).slice(2, 10)}`;
    const { composeId } = await platform.mutateOk(
      "compose.create",
      { name: "t", appName, environmentId: tenantEnvironmentId, composeType: "stack", composeFile: file("") },
      tenant,
    );
    const refused = await platform.mutate(
      "compose.update",
      { composeId, composeFile: file("    privileged: true\n") },
      tenant,
    );
    expect(refused.status, JSON.stringify(refused.body)).toBe(400);
    expect(JSON.stringify(refused.body)).toContain("services.web.privileged");
    const converted = await platform.query("compose.getConvertedCompose", { composeId }, tenant);
    expect(converted.status).toBe(200);
    expect(converted.body).not.toContain("privileged");
  });

  it("gets a converted file whose every $ is $$: nothing in it expands from the agent's environment", async () => {
    // Compose interpolates the file it reads with the agent's environment: `$${HOME}` must reach
    // it escaped, or the build context is the agent's home and the image the default's.
    const { composeId } = await platform.mutateOk(
      "compose.create",
      {
        name: "t",
        appName: `tenant-${Math.random().toString(36).slice(2, 10)}`,
        environmentId: tenantEnvironmentId,
        composeType: "docker-compose",
        composeFile: `services:
  web:
    image: "$\${X:-platform/foo:1}"
    build:
      context: "$\${HOME}"
    environment:
      FOO: "a$$b"
`,
      },
      tenant,
    );
    const converted = await platform.query("compose.getConvertedCompose", { composeId }, tenant);
    expect(converted.status, JSON.stringify(converted.body)).toBe(200);
    const text = converted.body as string;
    expect(text.replaceAll("$$", "")).not.toContain("$");
    const web = parse(text).services.web;
    expect(web.build.context).toBe("$${HOME}");
    expect(web.image).toBe("$${X:-platform/foo:1}");
    expect(web.environment.FOO).toBe("a$$b");
  });

  it("is not refused for the instance organization", async () => {
    const { composeId } = await platform.mutateOk(
      "compose.create",
      {
        name: "i",
        appName: `instance-${Math.random().toString(36).slice(2, 10)}`,
        environmentId: ownerEnvironmentId,
        composeType: "stack",
        composeFile: file("    privileged: true\n"),
      },
      owner,
    );
    const converted = await platform.query("compose.getConvertedCompose", { composeId }, owner);
    expect(converted.status).toBe(200);
    expect(converted.body).toContain("privileged: true");
  });
});

describe("compose.deployTemplate", () => {
  it("stores the template's file mounts and domain, copies the mounts with project.duplicate, and is a 404 for another organization's environment or an unknown template", async () => {
    const stack = await platform.mutateOk(
      "compose.deployTemplate",
      { environmentId: ownerEnvironmentId, id: "prometheus" },
      owner,
    );
    expect(stack.appName).toMatch(/^instance-prometheus-[a-z0-9]{6}$/);
    expect(stack.env).toMatch(/^RETENTION=15d$/m);
    const mounts = await platform.services.db
      .selectFrom("mounts")
      .selectAll()
      .where("composeId", "=", stack.composeId)
      .execute();
    expect(mounts).toMatchObject([
      { type: "file", filePath: "prometheus/prometheus.yml", serviceType: "compose" },
    ]);
    expect(mounts[0]!.content).toContain("scrape_interval");
    const domains = await platform.query("domain.byComposeId", { composeId: stack.composeId }, owner);
    expect(domains.body).toMatchObject([{ serviceName: "prometheus", port: 9090 }]);

    await platform.mutateOk(
      "project.duplicate",
      { sourceEnvironmentId: ownerEnvironmentId, name: "Copy", duplicateInSameProject: true },
      owner,
    );
    const copied = await platform.services.db
      .selectFrom("mounts")
      .innerJoin("compose", "compose.composeId", "mounts.composeId")
      .select(["mounts.content", "compose.composeId"])
      .where("compose.composeId", "!=", stack.composeId)
      .where("mounts.filePath", "=", "prometheus/prometheus.yml")
      .execute();
    expect(copied).toHaveLength(1);
    expect(copied[0]!.content).toBe(mounts[0]!.content);
    for (const composeId of [stack.composeId, copied[0]!.composeId]) {
      await platform.mutateOk("compose.delete", { composeId }, owner);
    }

    const foreign = await platform.mutate(
      "compose.deployTemplate",
      { environmentId: ownerEnvironmentId, id: "prometheus" },
      tenant,
    );
    expect(foreign.status).toBe(404);
    const unknown = await platform.mutate(
      "compose.deployTemplate",
      { environmentId: ownerEnvironmentId, id: "no-such-template" },
      owner,
    );
    expect(unknown.status).toBe(404);
  });

  it("is a 400 naming serverId for a tenant without a server, storing nothing", async () => {
    const refused = await platform.mutate(
      "compose.deployTemplate",
      { environmentId: tenantEnvironmentId, id: "prometheus" },
      tenant,
    );
    expect(refused.status, JSON.stringify(refused.body)).toBe(400);
    expect(refused.body.error.data.fields).toEqual(["serverId"]);
    expect(JSON.stringify((await platform.query("project.all", {}, tenant)).body)).not.toContain(
      "prometheus",
    );
  });
});

describe("mounts of a compose stack", () => {
  it("creates, reads, updates and removes a stack's file mount; refuses what a stack's mount cannot be", async () => {
    const { composeId } = await platform.mutateOk(
      "compose.create",
      {
        name: "m",
        appName: `mounts-${Math.random().toString(36).slice(2, 10)}`,
        environmentId: tenantEnvironmentId,
        composeType: "stack",
        composeFile: file("    volumes:\n      - ../files/conf/app.conf:/etc/app.conf\n"),
      },
      tenant,
    );
    const create = (input: Record<string, unknown>, session = tenant) =>
      platform.mutate("mounts.create", { serviceType: "compose", serviceId: composeId, ...input }, session);
    // Dokploy's client sends mountPath "/" for a stack's file mount: stored as none.
    const created = await create({
      type: "file",
      filePath: "./conf/app.conf",
      content: "a=1",
      mountPath: "/",
    });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    expect(created.body).toMatchObject({
      type: "file",
      filePath: "conf/app.conf",
      content: "a=1",
      mountPath: "",
      serviceType: "compose",
      serviceId: composeId,
      composeId,
      applicationId: null,
    });
    const { mountId } = created.body;
    expect((await platform.query("mounts.one", { mountId }, tenant)).body).toMatchObject({ content: "a=1" });
    const updated = await platform.mutateOk("mounts.update", { mountId, content: "a=2" }, tenant);
    expect(updated).toMatchObject({ content: "a=2", filePath: "conf/app.conf" });

    // Each refusal is a 400 naming the field, and stores nothing.
    const refusals: [Record<string, unknown>, string][] = [
      [{ type: "volume", volumeName: "data", mountPath: "/data" }, "type"],
      [{ type: "bind", hostPath: "/var/run/docker.sock", mountPath: "/s" }, "type"],
      [{ type: "file", filePath: "other.conf", content: "x", mountPath: "/etc/other.conf" }, "mountPath"],
      [{ type: "file", content: "x" }, "filePath"],
      [{ type: "file", filePath: "../../etc/passwd", content: "x" }, "filePath"],
      [{ type: "file", filePath: "other.conf" }, "content"],
    ];
    for (const [input, field] of refusals) {
      const refused = await create(input);
      expect(refused.status, JSON.stringify(refused.body)).toBe(400);
      expect(refused.body.error.data.fields).toEqual([field]);
    }
    const toVolume = await platform.mutate(
      "mounts.update",
      { mountId, type: "volume", volumeName: "d" },
      tenant,
    );
    expect(toVolume.status).toBe(400);
    expect(toVolume.body.error.data.fields).toEqual(["type"]);
    // One mount per filePath of a stack.
    const twice = await create({ type: "file", filePath: "conf/app.conf", content: "b" });
    expect(twice.status).toBe(409);
    const mounts = await platform.services.db
      .selectFrom("mounts")
      .selectAll()
      .where("composeId", "=", composeId)
      .execute();
    expect(mounts).toMatchObject([{ mountId, content: "a=2" }]);

    // Another organization's stack and mount are 404s.
    expect((await create({ type: "file", filePath: "x", content: "x" }, owner)).status).toBe(404);
    expect((await platform.query("mounts.one", { mountId }, owner)).status).toBe(404);
    expect((await platform.mutate("mounts.remove", { mountId }, owner)).status).toBe(404);

    expect(await platform.mutateOk("mounts.remove", { mountId }, tenant)).toMatchObject({ mountId });
    expect((await platform.query("mounts.one", { mountId }, tenant)).status).toBe(404);
  });
});
