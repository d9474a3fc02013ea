/**
 * Secret vaults (vaultProvider.*, issue 41 item 7) against a local stand-in speaking HashiCorp
 * Vault's KV v2 read API on 127.0.0.1 (allowed through PLATFORM_OUTBOUND_ALLOW, as other suites
 * allow their stand-ins): the token sealed and masked, tenancy, connection tests, secret names,
 * and an application deployed on the real Docker Engine whose container sees the vault's value,
 * which no table and no log holds. A refused token fails the deploy saying so.
 */

import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { jetstreamManager } from "@nats-io/jetstream";
import { connect } from "@nats-io/transport-node";
import {
  dockerCli,
  removeDeployedApps,
  requireDocker,
  TEST_IMAGE,
  uniqueName,
} from "@platform/agent/testing/docker.ts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createUserDirectly } from "../projects/test-support.ts";
import { type Session, startTestPlatform, type TestPlatform } from "../testing/harness.ts";

const run = promisify(execFile);
const NATS_URL = "nats://127.0.0.1:4222";
const DEPLOY_WAIT_MS = 180_000;
const suffix = randomBytes(4).toString("hex");
const queueNames = { stream: `TEST_VAULT_${suffix}`, subjectPrefix: `test.vault.${suffix}` };

const TOKEN = `hvs.${randomBytes(12).toString("hex")}`;
const SECRET_VALUE = `vault-value-${randomBytes(12).toString("hex")}`;
const OTHER_VALUE = `other-value-${randomBytes(12).toString("hex")}`;

/** The stand-in's secrets: mount "kv", path -> fields. */
const store: Record<string, Record<string, unknown>> = {
  "myapp/prod": { DB_PASSWORD: SECRET_VALUE, PORT: 5432 },
  "shared/keys": { API_KEY: OTHER_VALUE },
};
const seen: { path: string; token: string | undefined }[] = [];

function startVault(): Promise<Server> {
  const server = createServer((request, response) => {
    const url = new URL(request.url ?? "/", "http://vault");
    const token = request.headers["x-vault-token"] as string | undefined;
    seen.push({ path: url.pathname, token });
    const answer = (status: number, body: unknown) => {
      response.writeHead(status, { "content-type": "application/json" });
      response.end(JSON.stringify(body));
    };
    if (request.method !== "GET") return answer(405, { errors: [] });
    if (token !== TOKEN) return answer(403, { errors: ["permission denied"] });
    if (url.pathname === "/v1/auth/token/lookup-self") return answer(200, { data: { id: "token" } });
    const data = /^\/v1\/kv\/data\/(.+)$/.exec(url.pathname);
    if (data) {
      const fields = store[decodeURIComponent(data[1]!)];
      if (!fields) return answer(404, { errors: [] });
      return answer(200, { data: { data: fields, metadata: { version: 1 } } });
    }
    const list = /^\/v1\/kv\/metadata\/?(.*)$/.exec(url.pathname);
    if (list && url.searchParams.get("list") === "true") {
      const folder = decodeURIComponent(list[1] ?? "").replace(/\/?$/, list[1] ? "/" : "");
      const keys = new Set<string>();
      for (const key of Object.keys(store)) {
        if (!key.startsWith(folder)) continue;
        const rest = key.slice(folder.length);
        keys.add(rest.includes("/") ? `${rest.split("/")[0]}/` : rest);
      }
      if (keys.size === 0) return answer(404, { errors: [] });
      return answer(200, { data: { keys: [...keys].sort() } });
    }
    answer(404, { errors: [] });
  });
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve(server)));
}

let platform: TestPlatform;
let vault: Server;
let vaultUrl: string;
let owner: Session;
let member: Session;
let victim: Session;
let projectId: string;
let environmentId: string;
let mainDirectory: string;
const services: string[] = [];

const as = (session: Session) => ({ token: session.token });
const ok = (name: string, input: Record<string, unknown>, session = owner) =>
  platform.mutateOk(name, input, as(session));
const hashicorp = (token = TOKEN) => ({ providerType: "hashicorp", url: vaultUrl, token, mount: "kv" });

/** Every row of every table that contains one of `needles`, as JSON text (the attack suite's check). */
async function rowsNaming(needles: string[]): Promise<string[]> {
  const db = platform.ctx.db;
  const tables = await db
    .selectFrom("information_schema.tables" as never)
    .select("table_name" as never)
    .where("table_schema" as never, "=", "public" as never)
    .execute();
  const rows: string[] = [];
  for (const { tableName } of tables as Array<{ tableName: string }>) {
    for (const row of await db
      .selectFrom(tableName as never)
      .selectAll()
      .execute()) {
      const text = JSON.stringify(row);
      if (needles.some((needle) => text.includes(needle))) rows.push(`${tableName} ${text}`);
    }
  }
  return rows;
}

beforeAll(async () => {
  await requireDocker();
  vault = await startVault();
  vaultUrl = `http://127.0.0.1:${(vault.address() as AddressInfo).port}`;
  mainDirectory = await mkdtemp(path.join(tmpdir(), "vault-deploy-"));
  platform = await startTestPlatform(
    { NATS_URL, PLATFORM_OUTBOUND_ALLOW: "127.0.0.1/32" },
    { agents: { localAgent: { mainDirectory } }, deployments: queueNames },
  );
  owner = await platform.registerOwner();
  member = await platform.addMember(owner, "member", "vault-member@example.com");
  const project = await ok("project.create", { name: "Vaulted" });
  projectId = project.project.projectId;
  environmentId = project.environment.environmentId;
  victim = await createUserDirectly(platform, { email: "vault-victim@example.com" });
}, 120_000);

afterAll(async () => {
  await platform?.close();
  await removeDeployedApps(services);
  await new Promise((resolve) => vault?.close(resolve));
  if (mainDirectory) await rm(mainDirectory, { recursive: true, force: true });
  const connection = await connect({ servers: NATS_URL });
  await (await jetstreamManager(connection)).streams.delete(queueNames.stream).catch(() => {});
  await connection.close();
}, 120_000);

describe("vault providers", () => {
  it("keeps the token sealed and answers it masked; the mask on update keeps it", async () => {
    const created = await ok("vaultProvider.create", {
      name: "sealed-vault",
      config: hashicorp(),
      assignments: [{ projectId, environmentIds: [environmentId] }],
    });
    expect(created).toMatchObject({
      name: "sealed-vault",
      providerType: "hashicorp",
      config: { providerType: "hashicorp", url: vaultUrl, token: "********", mount: "kv" },
      assignments: [{ projectId, environmentIds: [environmentId] }],
    });
    expect(
      JSON.stringify(
        (await platform.query("vaultProvider.one", { vaultProviderId: created.vaultProviderId }, as(owner)))
          .body,
      ),
    ).not.toContain(TOKEN);
    const all = await platform.query("vaultProvider.all", undefined, as(member));
    expect(all.status).toBe(200);
    expect(JSON.stringify(all.body)).not.toContain(TOKEN);
    expect(await rowsNaming([TOKEN])).toEqual([]);

    const updated = await ok("vaultProvider.update", {
      vaultProviderId: created.vaultProviderId,
      name: "sealed-vault-2",
      config: { ...hashicorp(), token: "********" },
      assignments: [{ projectId, environmentIds: [] }],
    });
    expect(updated).toMatchObject({
      name: "sealed-vault-2",
      assignments: [{ projectId, environmentIds: [] }],
    });
    // The stored token still opens the vault.
    seen.length = 0;
    expect(await ok("vaultProvider.testConnection", { vaultProviderId: created.vaultProviderId })).toEqual({
      success: true,
    });
    expect(seen).toEqual([{ path: "/v1/auth/token/lookup-self", token: TOKEN }]);
    // A name is unique in the organization.
    const taken = await platform.mutate(
      "vaultProvider.create",
      { name: "sealed-vault-2", config: hashicorp(), assignments: [] },
      as(owner),
    );
    expect(taken.status).toBe(409);
    await ok("vaultProvider.remove", { vaultProviderId: created.vaultProviderId });
    expect(
      (await platform.query("vaultProvider.one", { vaultProviderId: created.vaultProviderId }, as(owner)))
        .status,
    ).toBe(404);
  });

  it("refuses provider types not served, the mask without a stored token, and members' writes", async () => {
    const other = await platform.mutate(
      "vaultProvider.create",
      { name: "doppler", config: { providerType: "doppler", serviceToken: "x" }, assignments: [] },
      as(owner),
    );
    expect(other.status).toBe(400);
    expect(JSON.stringify(other.body)).toContain("providerType");
    const masked = await platform.mutate(
      "vaultProvider.create",
      { name: "masked", config: { ...hashicorp(), token: "********" }, assignments: [] },
      as(owner),
    );
    expect(masked.status).toBe(400);
    expect(JSON.stringify(masked.body)).toContain("config.token");
    const byMember = await platform.mutate(
      "vaultProvider.create",
      { name: "members", config: hashicorp(), assignments: [] },
      as(member),
    );
    expect(byMember.status).toBe(403);
  });

  it("tests a connection: a wrong token is a 400 saying the vault refused it", async () => {
    expect(await ok("vaultProvider.testConnection", { config: hashicorp() })).toEqual({ success: true });
    const wrong = await platform.mutate(
      "vaultProvider.testConnection",
      { config: hashicorp("hvs.wrong") },
      as(owner),
    );
    expect(wrong.status).toBe(400);
    expect(wrong.body.error.message).toContain("refused the token");
    expect(JSON.stringify(wrong.body)).not.toContain("hvs.wrong");
    // A private address outside PLATFORM_OUTBOUND_ALLOW is never reached (the outbound guard).
    const inside = await platform.mutate(
      "vaultProvider.testConnection",
      { config: { ...hashicorp(), url: "http://10.255.255.1:8200" } },
      as(owner),
    );
    expect(inside.status).toBe(400);
    expect(inside.body.error.message).toContain("10.255.255.1:8200 may not be reached");
  });

  it("lists path:field names for a project it is enabled for, and refuses another", async () => {
    const provider = await ok("vaultProvider.create", {
      name: "names",
      config: hashicorp(),
      assignments: [{ projectId, environmentIds: [] }],
    });
    const names = await platform.query(
      "vaultProvider.listSecretNames",
      { vaultProviderId: provider.vaultProviderId, projectId },
      as(owner),
    );
    expect(names.status).toBe(200);
    expect([...names.body].sort()).toEqual([
      "myapp/prod:DB_PASSWORD",
      "myapp/prod:PORT",
      "shared/keys:API_KEY",
    ]);
    const elsewhere = await ok("project.create", { name: "Not enabled" });
    const refused = await platform.query(
      "vaultProvider.listSecretNames",
      { vaultProviderId: provider.vaultProviderId, projectId: elsewhere.project.projectId },
      as(owner),
    );
    expect(refused.status).toBe(403);
    await ok("vaultProvider.remove", { vaultProviderId: provider.vaultProviderId });
  });

  it("answers 404 for another organization's provider and changes nothing of it", async () => {
    const victimProject = await platform.mutateOk("project.create", { name: "Theirs" }, as(victim));
    const theirs = await platform.mutateOk(
      "vaultProvider.create",
      {
        name: "their-vault",
        config: hashicorp(),
        assignments: [{ projectId: victimProject.project.projectId, environmentIds: [] }],
      },
      as(victim),
    );
    const id = theirs.vaultProviderId;
    const before = await rowsNaming([id]);
    for (const [name, input] of [
      ["vaultProvider.one", { vaultProviderId: id }],
      ["vaultProvider.listSecretNames", { vaultProviderId: id, projectId }],
    ] as const) {
      expect((await platform.query(name, input, as(owner))).status, name).toBe(404);
    }
    for (const [name, input] of [
      ["vaultProvider.update", { vaultProviderId: id, name: "stolen", config: hashicorp(), assignments: [] }],
      ["vaultProvider.testConnection", { vaultProviderId: id }],
      ["vaultProvider.remove", { vaultProviderId: id }],
    ] as const) {
      expect((await platform.mutate(name, input, as(owner))).status, name).toBe(404);
    }
    // Their project in our provider's assignments is a 404 too.
    const assigned = await platform.mutate(
      "vaultProvider.create",
      {
        name: "their-project",
        config: hashicorp(),
        assignments: [{ projectId: victimProject.project.projectId }],
      },
      as(owner),
    );
    expect(assigned.status).toBe(404);
    const all = await platform.query("vaultProvider.all", undefined, as(owner));
    expect(JSON.stringify(all.body)).not.toContain(id);
    expect(await rowsNaming([id])).toEqual(before);
  });
});

describe("deploying with vault references", () => {
  async function vaultedApp(env: string) {
    const appName = uniqueName("vault-app");
    services.push(appName);
    const app = await ok("application.create", { name: "vaulted", environmentId, appName });
    await ok("application.saveDockerProvider", { applicationId: app.applicationId, dockerImage: TEST_IMAGE });
    await ok("application.update", { applicationId: app.applicationId, command: "sleep 3600" });
    await ok("application.saveEnvironment", { applicationId: app.applicationId, env, createEnvFile: false });
    return app as { applicationId: string; appName: string };
  }

  it(
    "hands the vault's value to the container and to no table or log; the log names the keys read",
    async () => {
      await ok("vaultProvider.create", {
        name: "prod-vault",
        config: hashicorp(),
        assignments: [{ projectId, environmentIds: [environmentId] }],
      });
      const app = await vaultedApp(
        [
          "DB_PASSWORD=${{vault.prod-vault.myapp/prod:DB_PASSWORD}}",
          "DB_URL=postgres://app:${{vault.prod-vault.myapp/prod:DB_PASSWORD}}@db:${{vault.prod-vault.myapp/prod:PORT}}/app",
          "API_KEY=${{ vault.prod-vault.shared/keys:API_KEY }}",
          "PLAIN=visible",
        ].join("\n"),
      );
      seen.length = 0;
      const { deploymentId } = await ok("application.deploy", { applicationId: app.applicationId });
      const row = await platform.waitForDeployment(deploymentId, DEPLOY_WAIT_MS);
      expect(row.status, row.errorMessage ?? "").toBe("done");
      // Each secret path read once, with the token.
      expect(seen.map((request) => request.path).sort()).toEqual([
        "/v1/kv/data/myapp/prod",
        "/v1/kv/data/shared/keys",
      ]);
      expect(seen.every((request) => request.token === TOKEN)).toBe(true);

      const container = (
        await dockerCli(["ps", "-q", "--filter", `label=com.docker.swarm.service.name=${app.appName}`])
      )
        .split("\n")
        .filter(Boolean)[0]!;
      expect(container).toBeTruthy();
      const env = await dockerCli(["exec", container, "env"]);
      expect(env).toContain(`DB_PASSWORD=${SECRET_VALUE}`);
      expect(env).toContain(`DB_URL=postgres://app:${SECRET_VALUE}@db:5432/app`);
      expect(env).toContain(`API_KEY=${OTHER_VALUE}`);
      expect(env).toContain("PLAIN=visible");

      expect(row.logs).toContain("Read DB_PASSWORD, DB_URL, API_KEY from the vault provider prod-vault");
      expect(await rowsNaming([SECRET_VALUE, OTHER_VALUE, TOKEN])).toEqual([]);
      // What the application stores is the reference.
      const one = await platform.query("application.one", { applicationId: app.applicationId }, as(owner));
      expect(one.body.env).toContain("${{vault.prod-vault.myapp/prod:DB_PASSWORD}}");
    },
    DEPLOY_WAIT_MS,
  );

  it(
    "a build argument read from the vault reaches the Dockerfile's build and no table or log",
    async () => {
      await ok("vaultProvider.create", {
        name: "build-vault",
        config: hashicorp(),
        assignments: [{ projectId, environmentIds: [environmentId] }],
      });
      const app = await vaultedApp("PLAIN=visible");
      const context = await mkdtemp(path.join(tmpdir(), "vault-build-"));
      await writeFile(
        path.join(context, "Dockerfile"),
        `FROM ${TEST_IMAGE}\nARG BAKED_KEY\nRUN echo "$BAKED_KEY" > /baked.txt\nCMD ["sleep", "3600"]\n`,
      );
      const tarball = (await run("tar", ["-cz", "-C", context, "Dockerfile"], { encoding: "buffer" })).stdout;
      await rm(context, { recursive: true, force: true });
      await ok("application.saveBuildType", {
        applicationId: app.applicationId,
        buildType: "dockerfile",
        dockerfile: "Dockerfile",
        dockerContextPath: ".",
        dockerBuildStage: "",
      });
      await ok("application.saveEnvironment", {
        applicationId: app.applicationId,
        createEnvFile: false,
        env: "PLAIN=visible",
        buildArgs: "BAKED_KEY=${{vault.build-vault.shared/keys:API_KEY}}",
      });
      const form = new FormData();
      form.set("applicationId", app.applicationId);
      form.set("zip", new Blob([new Uint8Array(tarball)]), "code.tar.gz");
      const dropped = await platform.app.request("/api/application.dropDeployment", {
        method: "POST",
        body: form,
        headers: { authorization: `Bearer ${owner.token}` },
      });
      expect(dropped.status, await dropped.clone().text()).toBe(200);
      const { deploymentId } = (await dropped.json()) as { deploymentId: string };
      const row = await platform.waitForDeployment(deploymentId, DEPLOY_WAIT_MS);
      expect(row.status, `${row.errorMessage}\n${row.logs}`).toBe("done");
      expect(row.logs).toContain("Read BAKED_KEY from the vault provider build-vault");
      const container = (
        await dockerCli(["ps", "-q", "--filter", `label=com.docker.swarm.service.name=${app.appName}`])
      )
        .split("\n")
        .filter(Boolean)[0]!;
      expect((await dockerCli(["exec", container, "cat", "/baked.txt"])).trim()).toBe(OTHER_VALUE);
      expect(row.logs).not.toContain(OTHER_VALUE);
      expect(await rowsNaming([OTHER_VALUE, TOKEN])).toEqual([]);
      const one = await platform.query("application.one", { applicationId: app.applicationId }, as(owner));
      expect(one.body.buildArgs).toBe("BAKED_KEY=${{vault.build-vault.shared/keys:API_KEY}}");
    },
    DEPLOY_WAIT_MS,
  );

  it(
    "a refused token fails the deploy with a clear message; an unknown or unassigned provider names the reference",
    async () => {
      await ok("vaultProvider.create", {
        name: "stale-vault",
        config: hashicorp("hvs.revoked"),
        assignments: [{ projectId, environmentIds: [] }],
      });
      const app = await vaultedApp("DB_PASSWORD=${{vault.stale-vault.myapp/prod:DB_PASSWORD}}");
      const first = await ok("application.deploy", { applicationId: app.applicationId });
      const failed = await platform.waitForDeployment(first.deploymentId, DEPLOY_WAIT_MS);
      expect(failed.status).toBe("error");
      expect(failed.errorMessage).toContain(
        "The variable DB_PASSWORD refers to ${{vault.stale-vault.myapp/prod:DB_PASSWORD}}: HashiCorp Vault refused the token",
      );
      expect(`${failed.logs}${failed.errorMessage}`).not.toContain("hvs.revoked");

      await ok("application.saveEnvironment", {
        applicationId: app.applicationId,
        createEnvFile: false,
        env: "DB_PASSWORD=${{vault.nowhere.myapp/prod:DB_PASSWORD}}",
      });
      const second = await ok("application.deploy", { applicationId: app.applicationId });
      const unknown = await platform.waitForDeployment(second.deploymentId, DEPLOY_WAIT_MS);
      expect(unknown.status).toBe("error");
      expect(unknown.errorMessage).toContain("there is no vault provider named nowhere");

      const elsewhere = await ok("vaultProvider.create", {
        name: "elsewhere-vault",
        config: hashicorp(),
        assignments: [],
      });
      await ok("application.saveEnvironment", {
        applicationId: app.applicationId,
        createEnvFile: false,
        env: "DB_PASSWORD=${{vault.elsewhere-vault.myapp/prod:DB_PASSWORD}}",
      });
      const third = await ok("application.deploy", { applicationId: app.applicationId });
      const unassigned = await platform.waitForDeployment(third.deploymentId, DEPLOY_WAIT_MS);
      expect(unassigned.status).toBe("error");
      expect(unassigned.errorMessage).toContain("is not enabled for this project or environment");
      expect(elsewhere.vaultProviderId).toBeTruthy();
      expect(await rowsNaming([SECRET_VALUE])).toEqual([]);
    },
    DEPLOY_WAIT_MS,
  );
});
