/**
 * certificates.* against the in-process local agent writing into a temporary main directory: a
 * stored certificate's PEM files and its TLS-store file (valid against the Traefik schema) are
 * written under dynamic/, its key is sealed and never shown, its hosts and expiry are; a `custom`
 * domain without files of its own is served from it (tls: {}) when it covers the host; removal
 * takes the files away. Bad pairs are 400s naming the field with nothing stored, members cannot
 * write, and another organization's certificate or server is a 404.
 */
import { certificateOwner } from "@platform/ownership";
import { validateDynamicConfig } from "@platform/traefik-config";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { LOCAL_SERVER_ID } from "../agents/hub.ts";
import {
  certificateFile,
  createApplication,
  dynamicFile,
  issuedCertificate,
  type ProxyTestPlatform,
  readIfExists,
  startProxyTestPlatform,
} from "../proxy/test-support.ts";
import type { Session } from "../testing/harness.ts";

let test: ProxyTestPlatform;
let member: Session;
const as = (session = test.owner) => ({ token: session.token });
const pair = issuedCertificate(["shop.example.com", "*.example.com"]);

const rows = () => test.platform.ctx.db.selectFrom("certificates").selectAll().execute();

beforeAll(async () => {
  test = await startProxyTestPlatform();
  member = await test.platform.addMember(test.owner, "member");
}, 60_000);

afterAll(async () => {
  await test?.close();
});

describe("certificates", () => {
  let certificateId: string;
  const storeFile = () => dynamicFile(test, `platform-certificate-${certificateId}.yml`);

  it("create checks the pair, seals the key and writes the files and the TLS-store entry", async () => {
    const created = await test.platform.mutate(
      "certificates.create",
      { name: "Shop wildcard", certificateData: pair.chain, privateKey: pair.key },
      as(),
    );
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    certificateId = created.body.certificateId;
    expect(created.body).toMatchObject({
      name: "Shop wildcard",
      certificateData: pair.chain,
      hosts: ["shop.example.com", "*.example.com"],
      serverId: null,
      autoRenew: null,
    });
    expect(new Date(created.body.expiresAt).getTime()).toBeGreaterThan(Date.now());
    expect(JSON.stringify(created.body)).not.toContain("PRIVATE KEY");

    const [row] = await rows();
    expect(row!.privateKeySealed).not.toContain("PRIVATE KEY");
    const base = `platform-certificate-${certificateId}`;
    expect(await readIfExists(certificateFile(test, `${base}.crt`))).toBe(pair.chain);
    expect(await readIfExists(certificateFile(test, `${base}.key`))).toBe(pair.key);
    const config = parse((await readIfExists(storeFile()))!);
    expect(validateDynamicConfig(config)).toEqual([]);
    expect(config).toEqual({
      tls: {
        certificates: [
          {
            certFile: `/etc/traefik/dynamic/certificates/${base}.crt`,
            keyFile: `/etc/traefik/dynamic/certificates/${base}.key`,
          },
        ],
      },
    });
  });

  it("the agent refuses another organization's write over the certificate's files", async () => {
    const client = test.platform.ctx.agents.client;
    const stranger = { owner: certificateOwner(test.stranger.user.organizationId, certificateId) };
    const base = `platform-certificate-${certificateId}`;
    await expect(
      client.writeProxyFile(LOCAL_SERVER_ID, "certificate", `${base}.key`, "forged", stranger),
    ).rejects.toMatchObject({ code: "FAILED_PRECONDITION" });
    await expect(
      client.removeProxyFile(LOCAL_SERVER_ID, "dynamic", `${base}.yml`, stranger),
    ).rejects.toMatchObject({ code: "FAILED_PRECONDITION" });
    expect(await readIfExists(certificateFile(test, `${base}.key`))).toBe(pair.key);
    expect(await readIfExists(storeFile())).toBeDefined();
  });

  it("one and all show expiry and hosts, never the key", async () => {
    const one = await test.platform.query("certificates.one", { certificateId }, as(member));
    expect(one.status).toBe(200);
    expect(one.body).not.toHaveProperty("privateKey");
    expect(one.body).not.toHaveProperty("privateKeySealed");
    expect(one.body.hosts).toEqual(["shop.example.com", "*.example.com"]);
    const all = await test.platform.query("certificates.all", undefined, as());
    expect(all.body.map((item: { certificateId: string }) => item.certificateId)).toEqual([certificateId]);
    expect(JSON.stringify(all.body)).not.toContain("PRIVATE KEY");
  });

  it("bad input is a 400 naming the field, with nothing stored", async () => {
    const other = issuedCertificate(["other.example.com"]);
    const cases: [Record<string, unknown>, string][] = [
      [{ certificateData: pair.chain, privateKey: other.key }, "privateKey"],
      [{ certificateData: pair.chain, privateKey: "-----BEGIN PRIVATE KEY-----\nxx\n" }, "privateKey"],
      [{ certificateData: "not a certificate", privateKey: pair.key }, "certificateData"],
      [{ certificateData: pair.ca + pair.leaf, privateKey: pair.key }, "certificateData"],
      [{ certificateData: pair.chain, privateKey: pair.key, autoRenew: true }, "autoRenew"],
      [{ certificateData: pair.chain, privateKey: pair.key, name: "a\nb" }, "name"],
    ];
    for (const [input, field] of cases) {
      const refused = await test.platform.mutate("certificates.create", { name: "Bad", ...input }, as());
      expect(refused.status, field).toBe(400);
      expect(refused.body.error.data.fields, JSON.stringify(refused.body)).toEqual([field]);
    }
    expect(await rows()).toHaveLength(1);
  });

  it("members cannot write; another organization's certificate or server is a 404", async () => {
    const input = { name: "Shop", certificateData: pair.chain, privateKey: pair.key };
    expect((await test.platform.mutate("certificates.create", input, as(member))).status).toBe(403);
    expect((await test.platform.mutate("certificates.remove", { certificateId }, as(member))).status).toBe(
      403,
    );
    const stranger = test.stranger;
    expect((await test.platform.query("certificates.one", { certificateId }, as(stranger))).status).toBe(404);
    expect((await test.platform.mutate("certificates.remove", { certificateId }, as(stranger))).status).toBe(
      404,
    );
    expect((await test.platform.query("certificates.all", undefined, as(stranger))).body).toEqual([]);
    const server = await test.platform.mutate(
      "server.create",
      { name: "edge-1", ipAddress: "10.0.0.5", username: "root" },
      as(),
    );
    expect(server.status, JSON.stringify(server.body)).toBe(200);
    const onForeignServer = await test.platform.mutate(
      "certificates.create",
      { ...input, serverId: server.body.serverId },
      as(stranger),
    );
    expect(onForeignServer.status).toBe(404);
    // This machine's proxy is the instance organization's: another organization names a server.
    const onThisMachine = await test.platform.mutate("certificates.create", input, as(stranger));
    expect(onThisMachine.status).toBe(400);
    expect(onThisMachine.body.error.data.fields).toEqual(["serverId"]);
    expect(await rows()).toHaveLength(1);
  });

  it("a server whose agent cannot be reached stores nothing; removing a server drops its certificates", async () => {
    const server = await test.platform.mutateOk(
      "server.create",
      { name: "edge-2", ipAddress: "10.0.0.6", username: "root" },
      as(),
    );
    const input = {
      name: "Edge",
      certificateData: pair.chain,
      privateKey: pair.key,
      serverId: server.serverId,
    };
    const refused = await test.platform.mutate("certificates.create", input, as());
    expect(refused.status, JSON.stringify(refused.body)).toBeGreaterThanOrEqual(500);
    expect(await rows()).toHaveLength(1);
    await test.platform.ctx.db
      .insertInto("certificates")
      .values({
        certificateId: "on-a-removed-server",
        organizationId: test.owner.user.organizationId,
        serverId: server.serverId,
        name: "Edge",
        certificateData: pair.chain,
        privateKeySealed: "sealed",
        autoRenew: null,
        expiresAt: new Date(Date.now() + 86_400_000).toISOString(),
        hosts: ["edge.example.com"],
      })
      .execute();
    await test.platform.mutateOk("server.remove", { serverId: server.serverId }, as());
    expect(await rows()).toHaveLength(1);
  });

  it("a custom domain without files of its own is served from a stored certificate covering its host", async () => {
    const app = await createApplication(test);
    const domain = (host: string) =>
      test.platform.mutate(
        "domain.create",
        { applicationId: app.applicationId, host, https: true, certificateType: "custom" },
        as(),
      );
    const covered = await domain("api.example.com");
    expect(covered.status, JSON.stringify(covered.body)).toBe(200);
    expect(covered.body.certificate).toBeNull();
    const config = parse((await readIfExists(dynamicFile(test, `${app.appName}.yml`)))!);
    expect(validateDynamicConfig(config)).toEqual([]);
    const key = covered.body.uniqueConfigKey;
    expect(config.http.routers[`${app.appName}-router-websecure-${key}`].tls).toEqual({});
    expect(config.tls).toBeUndefined();

    const uncovered = await domain("shop.example.org");
    expect(uncovered.status).toBe(400);
    expect(uncovered.body.error.data.fields).toEqual(["certificate"]);
    expect(uncovered.body.error.message).toContain("certificates.create");
  });

  it("update renames, replaces the pair (checked as on create) and rewrites its files; a bad pair changes nothing", async () => {
    const base = `platform-certificate-${certificateId}`;
    const renamed = await test.platform.mutate(
      "certificates.update",
      { certificateId, name: "Renamed" },
      as(),
    );
    expect(renamed.status, JSON.stringify(renamed.body)).toBe(200);
    expect(renamed.body).toMatchObject({ certificateId, name: "Renamed", certificateData: pair.chain });

    const next = issuedCertificate(["next.example.org"]);
    const cases: [Record<string, unknown>, string][] = [
      // A new chain alone must match the stored key.
      [{ certificateData: next.chain }, "privateKey"],
      [{ privateKey: next.key }, "privateKey"],
      [{ certificateData: "not a certificate" }, "certificateData"],
      [{ autoRenew: true }, "autoRenew"],
      [{ name: "a\nb" }, "name"],
    ];
    for (const [input, field] of cases) {
      const refused = await test.platform.mutate("certificates.update", { certificateId, ...input }, as());
      expect(refused.status, field).toBe(400);
      expect(refused.body.error.data.fields, JSON.stringify(refused.body)).toEqual([field]);
    }
    expect((await rows())[0]).toMatchObject({ name: "Renamed", certificateData: pair.chain });
    expect(await readIfExists(certificateFile(test, `${base}.key`))).toBe(pair.key);

    const replaced = await test.platform.mutate(
      "certificates.update",
      { certificateId, certificateData: next.chain, privateKey: next.key },
      as(),
    );
    expect(replaced.status, JSON.stringify(replaced.body)).toBe(200);
    expect(replaced.body).toMatchObject({
      name: "Renamed",
      certificateData: next.chain,
      hosts: ["next.example.org"],
    });
    expect(JSON.stringify(replaced.body)).not.toContain("PRIVATE KEY");
    expect(await readIfExists(certificateFile(test, `${base}.crt`))).toBe(next.chain);
    expect(await readIfExists(certificateFile(test, `${base}.key`))).toBe(next.key);
    expect(validateDynamicConfig(parse((await readIfExists(storeFile()))!))).toEqual([]);

    // Members cannot write; another organization's certificate is a 404; nothing changes.
    const byMember = await test.platform.mutate(
      "certificates.update",
      { certificateId, name: "Mine" },
      as(member),
    );
    expect(byMember.status).toBe(403);
    const byStranger = await test.platform.mutate(
      "certificates.update",
      { certificateId, name: "Theirs" },
      as(test.stranger),
    );
    expect(byStranger.status).toBe(404);
    expect((await rows())[0]).toMatchObject({ name: "Renamed", certificateData: next.chain });
  });

  it("remove takes the TLS-store entry and the PEM files away", async () => {
    const removed = await test.platform.mutate("certificates.remove", { certificateId }, as());
    expect(removed.status, JSON.stringify(removed.body)).toBe(200);
    expect(removed.body).toBe(true);
    expect(await rows()).toHaveLength(0);
    const base = `platform-certificate-${certificateId}`;
    expect(await readIfExists(storeFile())).toBeUndefined();
    expect(await readIfExists(certificateFile(test, `${base}.crt`))).toBeUndefined();
    expect(await readIfExists(certificateFile(test, `${base}.key`))).toBeUndefined();
    expect((await test.platform.query("certificates.one", { certificateId }, as())).status).toBe(404);
  });
});
