/**
 * A tenant's compose file runs on the shared Docker engine: compose.create, compose.update and
 * getConvertedCompose refuse what would widen it (issue 23 item 6) with a 400 naming the service
 * and key (the Docker socket, a host path, another organization's volume or network, ...), and
 * store nothing; the instance organization is refused none of it. mounts.create/one/update/remove
 * with serviceType compose keep a stack's file mounts (issue 27 item 3). The rules
 * themselves are tested case by case in @platform/compose-config (tenancy.test.ts); this proves
 * the control plane hands every organization but the instance's to them.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { type Session, startTestPlatform, type TestPlatform } from "../testing/harness.ts";
import { insertServer } from "../testing/servers.ts";

let platform: TestPlatform;
let owner: Session;
let tenant: Session;
let ownerEnvironmentId: string;
let tenantEnvironmentId: string;
let tenantOrganizationId: string;

const file = (extra: string) => `services:
  web:
    image: platform-test/busybox:latest
${extra}`;

/**
 * Keys the allowlist refuses (issue 37), one of each finding: a lifecycle hook, a provider
 * service, an image by ID, and an unbounded resource. [what, service lines, refused path]
 */
const ALLOWLIST_REFUSALS: [string, string, string][] = [
  [
    "a post_start hook",
    "    post_start:\n      - command: id\n        privileged: true\n",
    "services.web.post_start",
  ],
  [
    "a provider service",
    "    provider:\n      type: model\n      options: {model: ai/smollm2}\n",
    "services.web.provider",
  ],
  ["an image by ID", `    image: sha256:${"ab".repeat(32)}\n`, "services.web.image"],
  ["an unlimited pids_limit", "    pids_limit: -1\n", "services.web.pids_limit"],
];
/** A tenant file with one service `web` made of `lines` (which may name its own image). */
const tenantFile = (lines: string) =>
  lines.includes("image:") ? `services:\n  web:\n${lines}` : file(lines);

/** The remote catalogue (Dokploy's layout) with a template per refused key, served on 127.0.0.1. */
const catalogue: Record<string, string> = {
  "/meta.json": JSON.stringify(
    ALLOWLIST_REFUSALS.map((_refusal, index) => ({
      id: `refused-${index}`,
      name: `Refused ${index}`,
      version: "1",
      description: "",
      logo: "x.svg",
      links: {},
      tags: [],
    })),
  ),
};
ALLOWLIST_REFUSALS.forEach(([, lines], index) => {
  catalogue[`/blueprints/refused-${index}/docker-compose.yml`] = tenantFile(lines);
  catalogue[`/blueprints/refused-${index}/template.toml`] =
    `[variables]\nmain_domain = "\${domain}"\n\n[[config.domains]]\nserviceName = "web"\nport = 80\nhost = "\${main_domain}"\n`;
});
let catalogueServer: Server | undefined;

beforeAll(async () => {
  catalogueServer = createServer((request, response) => {
    const body = catalogue[request.url ?? ""];
    response.writeHead(body === undefined ? 404 : 200).end(body ?? "not found");
  });
  await new Promise<void>((resolve) => catalogueServer!.listen(0, "127.0.0.1", resolve));
  const { port } = catalogueServer.address() as AddressInfo;
  platform = await startTestPlatform({
    PLATFORM_TEMPLATES_URL: `http://127.0.0.1:${port}`,
    PLATFORM_OUTBOUND_ALLOW: "127.0.0.1/32",
  });
  owner = await platform.registerOwner();
  const ownerProject = await platform.mutateOk("project.create", { name: "Instance" }, owner);
  ownerEnvironmentId = ownerProject.environment.environmentId;
  tenant = await platform.addMember(owner, "member");
  const created = await platform.mutateOk("organization.create", { name: "Tenant" }, tenant);
  tenantOrganizationId = created.id;
  await platform.mutateOk("organization.setActive", { organizationId: created.id }, tenant);
  const project = await platform.mutateOk("project.create", { name: "Tenant project" }, tenant);
  tenantEnvironmentId = project.environment.environmentId;
});

afterAll(async () => {
  await platform?.close();
  catalogueServer?.close();
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

describe("keys the tenant allowlist refuses (issue 37)", () => {
  const appName = () => `tenant-${Math.random().toString(36).slice(2, 10)}`;
  const storedNames = async () =>
    (await platform.ctx.db.selectFrom("compose").select("appName").execute()).map((row) => row.appName);

  it.each(ALLOWLIST_REFUSALS)(
    "compose.create refuses %s with a 400 naming its path, storing nothing",
    async (_what, lines, where) => {
      const name = appName();
      const refused = await platform.mutate(
        "compose.create",
        {
          name: "t",
          appName: name,
          environmentId: tenantEnvironmentId,
          composeType: "stack",
          composeFile: tenantFile(lines),
        },
        tenant,
      );
      expect(refused.status, JSON.stringify(refused.body)).toBe(400);
      expect(refused.body.error.data.fields).toContain(where);
      expect(refused.body.error.data.fields).toContain("composeFile");
      expect(await storedNames()).not.toContain(name);
    },
  );

  it.each(ALLOWLIST_REFUSALS)(
    "compose.update refuses %s with a 400 naming its path, keeping the stored file",
    async (_what, lines, where) => {
      const { composeId } = await platform.mutateOk(
        "compose.create",
        {
          name: "t",
          appName: appName(),
          environmentId: tenantEnvironmentId,
          composeType: "docker-compose",
          composeFile: file(""),
        },
        tenant,
      );
      const refused = await platform.mutate(
        "compose.update",
        { composeId, composeFile: tenantFile(lines) },
        tenant,
      );
      expect(refused.status, JSON.stringify(refused.body)).toBe(400);
      expect(refused.body.error.data.fields).toContain(where);
      const stored = await platform.ctx.db
        .selectFrom("compose")
        .select("composeFile")
        .where("composeId", "=", composeId)
        .executeTakeFirstOrThrow();
      expect(stored.composeFile).toBe(file(""));
    },
  );

  it.each(ALLOWLIST_REFUSALS.map((refusal, index) => [...refusal, index] as const))(
    "compose.deployTemplate refuses a template with %s with a 400 naming its path, storing nothing",
    async (_what, _lines, where, index) => {
      const serverId = await insertServer(platform.ctx.db, tenantOrganizationId, {
        name: `node-${index}`,
      });
      const refused = await platform.mutate(
        "compose.deployTemplate",
        { environmentId: tenantEnvironmentId, id: `refused-${index}`, serverId },
        tenant,
      );
      expect(refused.status, JSON.stringify(refused.body)).toBe(400);
      expect(refused.body.error.data.fields).toContain(where);
      const stored = await platform.ctx.db
        .selectFrom("compose")
        .select("composeId")
        .where("name", "=", `refused-${index}`)
        .execute();
      expect(stored).toEqual([]);
    },
  );

  it("the instance organization may still use them", async () => {
    const { composeId } = await platform.mutateOk(
      "compose.create",
      {
        name: "i",
        appName: `instance-${Math.random().toString(36).slice(2, 10)}`,
        environmentId: ownerEnvironmentId,
        composeType: "docker-compose",
        composeFile: file(
          "    pids_limit: -1\n    post_start:\n      - command: id\n        privileged: true\n",
        ),
      },
      owner,
    );
    const converted = await platform.query("compose.getConvertedCompose", { composeId }, owner);
    expect(converted.status, JSON.stringify(converted.body)).toBe(200);
    expect(converted.body).toContain("post_start");
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
    const mounts = await platform.ctx.db
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
    const copied = await platform.ctx.db
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
    const mounts = await platform.ctx.db
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
