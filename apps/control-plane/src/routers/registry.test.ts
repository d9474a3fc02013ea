/**
 * registry.* (spec 2.1, 4.6) on a real database, with testRegistry going through the embedded
 * agent to the real Docker Engine and real registries (scripts/start-test-registry.sh): the
 * password is sealed and never returned nor logged, addresses are normalized and hostile ones
 * refused, members read while administrators write, another organization's registry is a 404
 * (also as an application's reference), and removing a registry clears applications' references.
 */

import { createServer as createHttpServer, request as httpRequest } from "node:http";
import { type AddressInfo, createServer, type Socket } from "node:net";
import { requireDocker } from "@platform/agent/testing/docker.ts";
import { startTestRegistries, type TestRegistries } from "@platform/agent/testing/registry.ts";
import { NatsAgentTransport } from "@platform/agent-protocol";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LOCAL_SERVER_ID } from "../agents/hub.ts";
import { listen } from "../agents/testing/agents.ts";
import { type JwtNats, startJwtNats } from "../agents/testing/nats-jwt.ts";
import { createUserDirectly } from "../projects/test-support.ts";
import { checkRegistryProbe } from "../registries/outbound.ts";
import { findRegistryCredentials } from "../registries/repository.ts";
import { normalizeRegistryUrl } from "../registries/schemas.ts";
import { type Session, startTestPlatform, type TestPlatform } from "../testing/harness.ts";
import { insertServer } from "../testing/servers.ts";

const PASSWORD = "s3cret-registry-password";

/** A port on 127.0.0.1 nothing listens on (taken, then released). */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe("normalizeRegistryUrl", () => {
  it.each([
    ["ghcr.io", "ghcr.io"],
    ["Registry.Example.com:5000", "registry.example.com:5000"],
    ["https://index.docker.io/v1/", "index.docker.io"],
    ["http://127.0.0.1:5050", "127.0.0.1:5050"],
    ["registry.gitlab.com/group/project", "registry.gitlab.com"],
    ["https://[::1]:5000/", "[::1]:5000"],
    ["http://registry.example.com:80", "registry.example.com:80"],
    ["https://0xa9fea9fe.example.com", "0xa9fea9fe.example.com"],
  ])("%s -> %s", (input, expected) => {
    expect(normalizeRegistryUrl(input)).toEqual({ address: expected });
  });

  it.each([
    "",
    "ftp://registry.example.com",
    "file:///etc/passwd",
    "javascript://x",
    "https://user:pw@registry.example.com",
    "user@registry.example.com",
    "registry.example.com/../admin",
    "registry example.com",
    "registry.example.com\n",
    "https://169.254.169.254/latest",
    "https://0xa9fea9fe",
    "[fe80::1]:5000",
    "registry.example.com:99999",
    "$(touch /tmp/x)",
    "reg;istry.example.com",
  ])("refuses %j", (input) => {
    expect(normalizeRegistryUrl(input)).toHaveProperty("problem");
  });
});

describe("registry", () => {
  let platform: TestPlatform;
  let registries: TestRegistries;
  let owner: Session;
  let admin: Session;
  let member: Session;
  let stranger: Session;
  const as = (session: Session) => ({ token: session.token });

  const create = async (input: Record<string, unknown> = {}, session = owner) => {
    const response = await platform.mutate(
      "registry.create",
      {
        registryName: "Local",
        registryUrl: `http://${registries.http}/`,
        username: registries.username,
        password: registries.password,
        registryType: "selfHosted",
        ...input,
      },
      as(session),
    );
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    return response.body as Record<string, any>;
  };

  const newApplication = async (session: Session) => {
    const project = await platform.mutate("project.create", { name: "Shop" }, as(session));
    expect(project.status, JSON.stringify(project.body)).toBe(200);
    const app = await platform.mutate(
      "application.create",
      { name: "Web", environmentId: project.body.environment.environmentId },
      as(session),
    );
    expect(app.status, JSON.stringify(app.body)).toBe(200);
    return app.body.applicationId as string;
  };

  beforeAll(async () => {
    await requireDocker();
    registries = await startTestRegistries();
    // The plain-HTTP test registry listens on 127.0.0.1 and the TLS one in a network namespace on
    // 198.51.100.0/30 (documentation range): the operator's allow list must cover both.
    platform = await startTestPlatform(
      { PLATFORM_OUTBOUND_ALLOW: "127.0.0.0/8,198.51.100.0/30" },
      { agents: { localAgent: { mainDirectory: "/nonexistent" } } },
    );
    owner = await platform.registerOwner();
    admin = await platform.addMember(owner, "admin");
    member = await platform.addMember(owner, "member");
    stranger = await createUserDirectly(platform, { email: "stranger@example.com" });
  }, 300_000);

  afterAll(async () => platform?.close());

  it("creates a registry with a normalized address, sealing the password and never returning it", async () => {
    const registry = await create({ password: PASSWORD, imagePrefix: "team/apps" });
    expect(registry).toMatchObject({
      registryName: "Local",
      registryUrl: registries.http,
      username: registries.username,
      imagePrefix: "team/apps",
      registryType: "selfHosted",
      organizationId: owner.user.organizationId,
    });
    expect(registry).not.toHaveProperty("password");
    expect(registry).not.toHaveProperty("passwordSealed");

    const row = await platform.ctx.db
      .selectFrom("registries")
      .selectAll()
      .where("registryId", "=", registry.registryId)
      .executeTakeFirstOrThrow();
    expect(row.passwordSealed).not.toContain(PASSWORD);

    for (const response of [
      await platform.query("registry.one", { registryId: registry.registryId }, as(member)),
      await platform.query("registry.all", {}, as(member)),
    ]) {
      expect(response.status).toBe(200);
      expect(JSON.stringify(response.body)).not.toContain(PASSWORD);
      expect(JSON.stringify(response.body)).not.toContain("passwordSealed");
    }
    const credentials = await findRegistryCredentials(
      platform.ctx,
      owner.user.organizationId,
      registry.registryId,
    );
    expect(credentials).toEqual({
      registryUrl: registries.http,
      username: registries.username,
      password: PASSWORD,
      imagePrefix: "team/apps",
    });
  });

  it("defaults registryType to cloud and lists the new registry", async () => {
    const registry = await create({ registryType: undefined, registryUrl: "ghcr.io" });
    expect(registry.registryType).toBe("cloud");
    const all = await platform.query("registry.all", {}, as(owner));
    expect(all.body.map((r: { registryId: string }) => r.registryId)).toContain(registry.registryId);
  });

  it("answers registry.one given as a GET with a JSON body (spec 4.0) over real HTTP", async () => {
    const registry = await create({ password: PASSWORD });
    const server = await listen(platform);
    try {
      const body = JSON.stringify({ registryId: registry.registryId });
      const answer = await new Promise<{ status: number; text: string }>((resolve, reject) => {
        const request = httpRequest(`${server.url}/api/registry.one`, {
          method: "GET",
          headers: {
            authorization: `Bearer ${owner.token}`,
            "content-type": "application/json",
            "content-length": Buffer.byteLength(body),
          },
        });
        request.on("response", (response) => {
          let text = "";
          response.on("data", (chunk) => (text += chunk));
          response.on("end", () => resolve({ status: response.statusCode ?? 0, text }));
        });
        request.on("error", reject);
        request.end(body);
      });
      expect(answer.status, answer.text).toBe(200);
      expect(JSON.parse(answer.text)).toMatchObject({
        registryId: registry.registryId,
        registryUrl: registries.http,
      });
      expect(answer.text).not.toContain(PASSWORD);
    } finally {
      await server.close();
    }
  });

  it("lets members read but only administrators write", async () => {
    const registry = await create({}, admin);
    const denied = [
      await platform.mutate(
        "registry.create",
        { registryName: "x", registryUrl: "ghcr.io", username: "u", password: "p" },
        as(member),
      ),
      await platform.mutate(
        "registry.update",
        { registryId: registry.registryId, registryName: "y" },
        as(member),
      ),
      await platform.mutate("registry.remove", { registryId: registry.registryId }, as(member)),
      await platform.mutate("registry.testRegistryById", { registryId: registry.registryId }, as(member)),
    ];
    for (const response of denied) expect(response.status).toBe(403);
    expect(
      (await platform.query("registry.one", { registryId: registry.registryId }, as(member))).status,
    ).toBe(200);
  });

  it.each([
    [{ registryUrl: "ftp://registry.example.com" }, "registryUrl"],
    [{ registryUrl: "https://user:pw@registry.example.com" }, "registryUrl"],
    [{ registryUrl: "registry.example.com/../x" }, "registryUrl"],
    [{ registryUrl: "registry .example.com" }, "registryUrl"],
    [{ registryUrl: "http://169.254.169.254" }, "registryUrl"],
    [{ imagePrefix: "Team Apps" }, "imagePrefix"],
    [{ imagePrefix: "../etc" }, "imagePrefix"],
    [{ imagePrefix: "team/$(id)" }, "imagePrefix"],
    [{ registryType: "private" }, "registryType"],
    [{ registryName: "" }, "registryName"],
    [{ username: "two words" }, "username"],
    [{ password: "" }, "password"],
  ])("refuses %j naming %s, storing nothing", async (input, field) => {
    const before = await platform.ctx.db.selectFrom("registries").select("registryId").execute();
    const response = await platform.mutate(
      "registry.create",
      { registryName: "Bad", registryUrl: "ghcr.io", username: "u", password: "p", ...input },
      as(owner),
    );
    expect(response.status, JSON.stringify(response.body)).toBe(400);
    expect(response.body.error.data.fields).toContain(field);
    const after = await platform.ctx.db.selectFrom("registries").select("registryId").execute();
    expect(after.length).toBe(before.length);
  });

  it("updates fields and re-seals a new password; an absent password keeps the stored one", async () => {
    const registry = await create({ password: PASSWORD });
    const renamed = await platform.mutate(
      "registry.update",
      {
        registryId: registry.registryId,
        registryName: "Renamed",
        registryUrl: "HTTPS://Reg.Example.com:443/v2/",
      },
      as(owner),
    );
    expect(renamed.status, JSON.stringify(renamed.body)).toBe(200);
    expect(renamed.body).toEqual({ success: true });
    const one = await platform.query("registry.one", { registryId: registry.registryId }, as(owner));
    expect(one.body).toMatchObject({ registryName: "Renamed", registryUrl: "reg.example.com:443" });
    const org = owner.user.organizationId;
    expect((await findRegistryCredentials(platform.ctx, org, registry.registryId))?.password).toBe(PASSWORD);

    await platform.mutate(
      "registry.update",
      { registryId: registry.registryId, password: "new-pass" },
      as(owner),
    );
    expect((await findRegistryCredentials(platform.ctx, org, registry.registryId))?.password).toBe(
      "new-pass",
    );

    const bad = await platform.mutate(
      "registry.update",
      { registryId: registry.registryId, registryUrl: "gopher://x" },
      as(owner),
    );
    expect(bad.status).toBe(400);
    expect(bad.body.error.data.fields).toEqual(["registryUrl"]);
  });

  it("answers 404 for another organization's registry everywhere", async () => {
    const registry = await create();
    const id = { registryId: registry.registryId };
    const responses = [
      await platform.query("registry.one", id, as(stranger)),
      await platform.mutate("registry.update", { ...id, registryName: "Mine" }, as(stranger)),
      await platform.mutate("registry.remove", id, as(stranger)),
      await platform.mutate("registry.testRegistryById", id, as(stranger)),
    ];
    for (const response of responses) expect(response.status).toBe(404);
    expect((await platform.query("registry.all", {}, as(stranger))).body).toEqual([]);
    expect(
      await findRegistryCredentials(platform.ctx, stranger.user.organizationId, registry.registryId),
    ).toBe(undefined);
    const still = await platform.query("registry.one", id, as(owner));
    expect(still.body.registryName).toBe("Local");
  });

  it("links applications to registries of the organization only, and clears the links on remove", async () => {
    const pull = await create();
    const push = await create();
    const applicationId = await newApplication(owner);
    const linked = await platform.mutate(
      "application.update",
      {
        applicationId,
        registryId: pull.registryId,
        buildRegistryId: push.registryId,
        rollbackRegistryId: push.registryId,
      },
      as(owner),
    );
    expect(linked.status, JSON.stringify(linked.body)).toBe(200);
    let app = (await platform.query("application.one", { applicationId }, as(owner))).body;
    expect(app).toMatchObject({
      registryId: pull.registryId,
      buildRegistryId: push.registryId,
      rollbackRegistryId: push.registryId,
    });

    const theirs = await create({}, owner);
    const strangerApp = await newApplication(stranger);
    for (const field of ["registryId", "buildRegistryId", "rollbackRegistryId"]) {
      const refused = await platform.mutate(
        "application.update",
        { applicationId: strangerApp, [field]: theirs.registryId },
        as(stranger),
      );
      expect(refused.status, JSON.stringify(refused.body)).toBe(404);
      expect(refused.body.error.data.fields).toEqual([field]);
    }
    const strangerRow = await platform.ctx.db
      .selectFrom("applications")
      .select(["registryId", "buildRegistryId", "rollbackRegistryId"])
      .where("applicationId", "=", strangerApp)
      .executeTakeFirstOrThrow();
    expect(strangerRow).toEqual({ registryId: null, buildRegistryId: null, rollbackRegistryId: null });

    expect(
      (await platform.mutate("registry.remove", { registryId: push.registryId }, as(owner))).status,
    ).toBe(200);
    app = (await platform.query("application.one", { applicationId }, as(owner))).body;
    expect(app).toMatchObject({
      registryId: pull.registryId,
      buildRegistryId: null,
      rollbackRegistryId: null,
    });
    expect((await platform.query("registry.one", { registryId: push.registryId }, as(owner))).status).toBe(
      404,
    );
    const removal = platform.logLines.find(
      (line) => line.includes("registry removed") && line.includes(push.registryId),
    );
    expect(removal).toContain(applicationId);

    const cleared = await platform.mutate("application.update", { applicationId, registryId: "" }, as(owner));
    expect(cleared.status).toBe(200);
    app = (await platform.query("application.one", { applicationId }, as(owner))).body;
    expect(app.registryId).toBe(null);
  });

  describe("testRegistry through the agent and a real registry", () => {
    const test = (input: Record<string, unknown>) =>
      platform.mutate(
        "registry.testRegistry",
        {
          registryUrl: registries.http,
          username: registries.username,
          password: registries.password,
          registryType: "selfHosted",
          ...input,
        },
        as(owner),
      );

    it("succeeds with the right credentials", async () => {
      const response = await test({});
      expect(response.status, JSON.stringify(response.body)).toBe(200);
      expect(response.body).toEqual({ success: true });
    });

    const expectCategory = (response: { status: number; body: any }, address: string, category: string) => {
      expect(response.status, JSON.stringify(response.body)).toBe(400);
      expect(response.body.error.message).toBe(`Registry login to ${address} failed: ${category}`);
      expect(response.body.error.data.category).toBe(category);
    };

    it("answers a wrong password with the category unauthorized, without the password", async () => {
      const response = await test({ password: "wrong-password-for-test" });
      expectCategory(response, registries.http, "unauthorized");
      expect(JSON.stringify(response.body)).not.toContain("wrong-password-for-test");
    });

    it("answers a host that does not resolve with the category unknown host", async () => {
      const response = await test({ registryUrl: "registry.invalid:5000" });
      expectCategory(response, "registry.invalid:5000", "unknown host");
    });

    it("answers a self-signed certificate (a TLS error) with the one category could not be reached", async () => {
      const response = await test({ registryUrl: `https://${registries.tls}` });
      expectCategory(response, registries.tls, "could not be reached");
    });

    it("is no port scanner: a closed port, a banner and a foreign HTTP service all answer could not be reached", async () => {
      const closed = await freePort();
      expectCategory(
        await test({ registryUrl: `127.0.0.1:${closed}` }),
        `127.0.0.1:${closed}`,
        "could not be reached",
      );

      // A NATS-like banner, then the connection closes (the engine says EOF and quotes it).
      const sockets = new Set<Socket>();
      const banner = createServer((socket) => {
        sockets.add(socket);
        socket.end('INFO {"server_id":"BANNER-SECRET-42"}\r\n');
      });
      // An HTTP service answering 404 with a body of its own.
      const web = createHttpServer((_request, response) => {
        response.writeHead(404, { "content-type": "text/plain" }).end("remote-body-secret-17");
      });
      try {
        for (const server of [banner, web]) {
          await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
          const address = `127.0.0.1:${(server.address() as AddressInfo).port}`;
          const response = await test({ registryUrl: address });
          expectCategory(response, address, "could not be reached");
          // The address itself is named (its port may contain "404").
          const text = JSON.stringify(response.body).replaceAll(address, "<address>");
          for (const leak of ["BANNER-SECRET-42", "INFO", "EOF", "remote-body-secret-17", "404"]) {
            expect(text).not.toContain(leak);
          }
        }
      } finally {
        for (const socket of sockets) socket.destroy();
        web.closeAllConnections();
        await new Promise((resolve) => banner.close(resolve));
        await new Promise((resolve) => web.close(resolve));
      }
    }, 60_000);

    it("refuses the platform's own machines to another organization, the same on every port (issue 22 finding 4)", async () => {
      // A globally reachable address (AS112) as the owner's server: the allow list does not cover
      // it, so the own-address rule decides. Refused before any agent; the stranger's server has
      // no agent anyway, so nothing is ever sent there.
      const serverAddress = "192.175.48.77";
      const serverId = await insertServer(platform.ctx.db, owner.user.organizationId, {
        ipAddress: serverAddress,
      });
      // Another organization tests through a server of its own (the owner's server is not theirs).
      const theirServer = await insertServer(platform.ctx.db, stranger.user.organizationId, {
        ipAddress: "203.0.113.50",
      });
      try {
        const strangerTest = (registryUrl: string) =>
          platform.mutate(
            "registry.testRegistry",
            { registryUrl, username: "u", password: "p", registryType: "selfHosted", serverId: theirServer },
            as(stranger),
          );
        const closed = await freePort();
        const answers = new Set<string>();
        for (const registryUrl of [`https://${serverAddress}:5443`, `${serverAddress}:${closed}`]) {
          const response = await strangerTest(registryUrl);
          expect(response.status, registryUrl).toBe(400);
          expect(response.body.error.data.fields).toEqual(["registryUrl"]);
          expect(response.body.error.message).toMatch(/platform's own machines/);
          answers.add(response.body.error.message.replace(registryUrl.replace("https://", ""), "<url>"));
        }
        expect(answers.size).toBe(1);
        // The organization owning the server passes the same check (checked only, not reached).
        await expect(
          checkRegistryProbe(platform.ctx, owner.user.organizationId, `${serverAddress}:5443`),
        ).resolves.toBeUndefined();
      } finally {
        await platform.ctx.db
          .deleteFrom("servers")
          .where("serverId", "in", [serverId, theirServer])
          .execute();
      }
    });

    it("refuses private and metadata addresses through the outbound guard before any agent", async () => {
      for (const registryUrl of ["10.0.0.9:5000", "192.168.1.2", "[fd00::1]:5000"]) {
        const response = await test({ registryUrl });
        expect(response.status, registryUrl).toBe(400);
        expect(response.body.error.data.fields).toEqual(["registryUrl"]);
        expect(response.body.error.message).toMatch(/private address/);
      }
      // A stored registry is checked again when it is used.
      const stored = await create({ registryUrl: "10.0.0.9:5000" });
      const refused = await platform.mutate(
        "registry.testRegistryById",
        { registryId: stored.registryId },
        as(owner),
      );
      expect(refused.status).toBe(400);
      expect(refused.body.error.data.fields).toEqual(["registryUrl"]);
      await expect(
        findRegistryCredentials(platform.ctx, owner.user.organizationId, stored.registryId),
      ).rejects.toThrow(/private address/);
    });

    it("refuses a bad address before reaching any agent", async () => {
      const response = await test({ registryUrl: "ssh://127.0.0.1:22" });
      expect(response.status).toBe(400);
      expect(response.body.error.data.fields).toEqual(["registryUrl"]);
    });

    it("answers 404 for a server of another organization", async () => {
      const serverId = await insertServer(platform.ctx.db, stranger.user.organizationId, {
        name: "theirs",
        ipAddress: "10.0.0.9",
      });
      const response = await test({ serverId });
      expect(response.status).toBe(404);
    });

    it("testRegistryById without registryId (optional in Dokploy's schema) is a 404", async () => {
      const response = await platform.mutate("registry.testRegistryById", {}, as(admin));
      expect(response.status, JSON.stringify(response.body)).toBe(404);
    });

    it("tests a stored registry by id, with its sealed password", async () => {
      const good = await create();
      const ok = await platform.mutate(
        "registry.testRegistryById",
        { registryId: good.registryId },
        as(admin),
      );
      expect(ok.status, JSON.stringify(ok.body)).toBe(200);
      expect(ok.body).toEqual({ success: true });

      const bad = await create({ password: "not-the-password" });
      const refused = await platform.mutate(
        "registry.testRegistryById",
        { registryId: bad.registryId },
        as(owner),
      );
      expectCategory(refused, registries.http, "unauthorized");
    });

    it("never writes a registry password to the log", () => {
      const log = platform.logLines.join("\n");
      for (const secret of [
        PASSWORD,
        registries.password,
        "wrong-password-for-test",
        "not-the-password",
        "new-pass",
      ]) {
        expect(log).not.toContain(secret);
      }
    });
  });
});

describe("registry on the cloud edition", () => {
  let platform: TestPlatform;
  afterAll(async () => platform?.close());

  it("requires a serverId to test a registry (the control plane's machine is not a tenant's)", async () => {
    platform = await startTestPlatform({ PLATFORM_EDITION: "cloud" }, { agents: { localAgent: false } });
    const owner = await platform.registerOwner();
    const response = await platform.mutate(
      "registry.testRegistry",
      { registryUrl: "ghcr.io", username: "u", password: "p" },
      { token: owner.token },
    );
    expect(response.status, JSON.stringify(response.body)).toBe(400);
    expect(response.body.error.data.fields).toEqual(["serverId"]);
  });
});

describe("registry on the cloud edition, given this machine's serverId", () => {
  let platform: TestPlatform;
  afterAll(async () => platform?.close());

  it("refuses it with the same 400", async () => {
    platform = await startTestPlatform({ PLATFORM_EDITION: "cloud" }, { agents: { localAgent: false } });
    const owner = await platform.registerOwner();
    const response = await platform.mutate(
      "registry.testRegistry",
      { registryUrl: "ghcr.io", username: "u", password: "p", serverId: LOCAL_SERVER_ID },
      { token: owner.token },
    );
    expect(response.status, JSON.stringify(response.body)).toBe(400);
    expect(response.body.error.message).toBe("Invalid input: serverId: is required on the cloud edition");
    expect(response.body.error.data.fields).toEqual(["serverId"]);
  });
});

describe("registry.testRegistry with the local agent over NATS (JWT auth)", () => {
  let nats: JwtNats;
  let platform: TestPlatform;
  let registries: TestRegistries;
  let owner: Session;

  beforeAll(async () => {
    registries = await startTestRegistries();
    nats = await startJwtNats();
    platform = await startTestPlatform(
      { ...nats.env, PLATFORM_OUTBOUND_ALLOW: "127.0.0.0/8" },
      {
        agents: { localAgent: { mainDirectory: "/nonexistent" } },
      },
    );
    owner = await platform.registerOwner();
  }, 300_000);

  afterAll(async () => {
    await platform?.close();
    await nats?.stop();
  });

  it("logs in, and carries the registry's refusal back, through NATS", async () => {
    expect(platform.ctx.agents.client.transport).toBeInstanceOf(NatsAgentTransport);
    const input = {
      registryUrl: registries.http,
      username: registries.username,
      password: registries.password,
    };
    const ok = await platform.mutate("registry.testRegistry", input, { token: owner.token });
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    const refused = await platform.mutate(
      "registry.testRegistry",
      { ...input, password: "nats-wrong-password" },
      { token: owner.token },
    );
    expect(refused.status).toBe(400);
    expect(refused.body.error.message).toBe(`Registry login to ${registries.http} failed: unauthorized`);
    expect(platform.logLines.join("\n")).not.toContain("nats-wrong-password");
  });
});
