/**
 * DNS providers (dnsProvider.*, issue 41 item 5) through the real control plane against a local
 * stand-in speaking Cloudflare's v4 API on 127.0.0.1 (allowed through PLATFORM_OUTBOUND_ALLOW,
 * its base URL given by PLATFORM_CLOUDFLARE_API_URL): the token sealed and masked, tenancy, the
 * connection test, zones and records edited, and an application's domain whose A record is made,
 * moved and deleted with it. Every request the stand-in receives is recorded and checked.
 */
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { newId } from "../crypto/ids.ts";
import { listZones } from "../dns/cloudflare.ts";
import { EMPTY_ALLOW_LIST } from "../outbound/guard.ts";
import { createApplication, type ProxyTestPlatform, startProxyTestPlatform } from "../proxy/test-support.ts";
import { type CloudflareStandIn, startCloudflareStandIn } from "../testing/cloudflare-stand-in.ts";
import type { Session } from "../testing/harness.ts";

const PUBLIC_IP = "203.0.113.44";
const TOKEN = `cf-${randomBytes(16).toString("hex")}`;
const NEW_TOKEN = `cf-${randomBytes(16).toString("hex")}`;
/** More zones than one page of 50, so listing walks the pages. */
const ZONES = ["example.com", "apps.example.com", ...Array.from({ length: 55 }, (_, i) => `zone${i}.test`)];

let cloudflare: CloudflareStandIn;
let test: ProxyTestPlatform;
let member: Session;
const as = (session: Session) => ({ token: session.token });
const call = (name: string, input: unknown, session = test.owner) =>
  test.platform.mutate(name, input as Record<string, unknown>, as(session));
const read = (name: string, input: unknown, session = test.owner) =>
  test.platform.query(name, input as Record<string, unknown>, as(session));
const zoneId = (name: string) => cloudflare.zones.find((zone) => zone.name === name)!.id;
const recordsOf = (name: string) => cloudflare.records.get(zoneId(name)) ?? [];

/** Every row of every table containing `needle`, as JSON text. */
async function rowsNaming(needle: string): Promise<string[]> {
  const db = test.platform.ctx.db;
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
      if (JSON.stringify(row).includes(needle)) rows.push(tableName);
    }
  }
  return rows;
}

beforeAll(async () => {
  cloudflare = await startCloudflareStandIn(ZONES, [TOKEN]);
  test = await startProxyTestPlatform({
    PLATFORM_PUBLIC_IP: PUBLIC_IP,
    PLATFORM_OUTBOUND_ALLOW: "127.0.0.1/32",
    PLATFORM_CLOUDFLARE_API_URL: cloudflare.url,
  });
  member = await test.platform.addMember(
    test.owner,
    "member",
    `dns-member-${randomBytes(3).toString("hex")}@example.com`,
  );
}, 120_000);

afterAll(async () => {
  await test?.close();
  await cloudflare?.close();
});

describe("dnsProvider.*", () => {
  let providerId: string;

  it("create seals the token and answers it masked; no table holds it", async () => {
    const created = await call("dnsProvider.create", {
      name: "main-cf",
      config: { providerType: "cloudflare", apiToken: TOKEN },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    expect(created.body).toMatchObject({
      name: "main-cf",
      providerType: "cloudflare",
      config: { providerType: "cloudflare", apiToken: "********" },
    });
    providerId = created.body.dnsProviderId;
    expect(JSON.stringify(created.body)).not.toContain(TOKEN);
    expect(await rowsNaming(TOKEN)).toEqual([]);
    expect(cloudflare.seen).toEqual([]);
  });

  it("all and one answer it masked, to members too; names are unique per organization", async () => {
    const all = await read("dnsProvider.all", {}, member);
    expect(all.status).toBe(200);
    expect(all.body).toEqual([
      expect.objectContaining({
        dnsProviderId: providerId,
        config: { providerType: "cloudflare", apiToken: "********" },
      }),
    ]);
    const one = await read("dnsProvider.one", { dnsProviderId: providerId }, member);
    expect(one.body.name).toBe("main-cf");
    const again = await call("dnsProvider.create", {
      name: "main-cf",
      config: { providerType: "cloudflare", apiToken: "x" },
    });
    expect(again.status).toBe(409);
  });

  it("refuses other provider types, bad names and unknown fields with a 400 naming the field", async () => {
    const route53 = await call("dnsProvider.create", {
      name: "aws",
      config: { providerType: "route53", accessKeyId: "a", secretAccessKey: "b" },
    });
    expect(route53.status).toBe(400);
    expect(JSON.stringify(route53.body)).toContain("providerType");
    const badName = await call("dnsProvider.create", {
      name: "has space",
      config: { providerType: "cloudflare", apiToken: "t" },
    });
    expect(badName.status).toBe(400);
    expect(JSON.stringify(badName.body)).toContain("name");
    const mask = await call("dnsProvider.create", {
      name: "masked",
      config: { providerType: "cloudflare", apiToken: "********" },
    });
    expect(mask.status).toBe(400);
    expect(JSON.stringify(mask.body)).toContain("config.apiToken");
  });

  it("members may read but not write, test or edit records", async () => {
    for (const [name, input] of [
      ["dnsProvider.create", { name: "m", config: { providerType: "cloudflare", apiToken: "t" } }],
      ["dnsProvider.remove", { dnsProviderId: providerId }],
      ["dnsProvider.testConnection", { dnsProviderId: providerId }],
      ["dnsProvider.deleteRecord", { dnsProviderId: providerId, zoneId: "z", recordId: "r" }],
    ] as const) {
      expect((await call(name, input, member)).status, name).toBe(403);
    }
  });

  it("testConnection verifies the token at Cloudflare (config, stored provider, or the mask with it)", async () => {
    cloudflare.seen.length = 0;
    expect((await call("dnsProvider.testConnection", { dnsProviderId: providerId })).status).toBe(200);
    const masked = await call("dnsProvider.testConnection", {
      dnsProviderId: providerId,
      config: { providerType: "cloudflare", apiToken: "********" },
    });
    expect(masked.status).toBe(200);
    expect(cloudflare.seen.map((request) => [request.method, request.path, request.authorization])).toEqual([
      ["GET", "/client/v4/user/tokens/verify", `Bearer ${TOKEN}`],
      ["GET", "/client/v4/user/tokens/verify", `Bearer ${TOKEN}`],
    ]);
    const refused = await call("dnsProvider.testConnection", {
      config: { providerType: "cloudflare", apiToken: "wrong" },
    });
    expect(refused.status).toBe(400);
    expect(refused.body.error.message).toContain("Authentication error");
    expect(refused.body.error.message).not.toContain("wrong");
    const neither = await call("dnsProvider.testConnection", {});
    expect(neither.status).toBe(400);
  });

  it("listZones walks Cloudflare's pages", async () => {
    cloudflare.seen.length = 0;
    const zones = await read("dnsProvider.listZones", { dnsProviderId: providerId }, member);
    expect(zones.status, JSON.stringify(zones.body)).toBe(200);
    expect((zones.body as { name: string }[]).map((zone) => zone.name)).toEqual(ZONES);
    expect(zones.body[0]).toEqual({ id: zoneId("example.com"), name: "example.com" });
    expect(cloudflare.seen.map((request) => request.query.page)).toEqual(["1", "2"]);
  });

  it("createRecord, listRecords, updateRecord and deleteRecord edit the zone at Cloudflare; proxied goes to Cloudflare as sent (false when left out)", async () => {
    const zone = zoneId("example.com");
    const created = await call("dnsProvider.createRecord", {
      dnsProviderId: providerId,
      zoneId: zone,
      type: "A",
      name: "www.example.com",
      content: "198.51.100.1",
      ttl: 300,
      proxied: true,
    });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    expect(created.body.proxied).toBe(true);
    expect(cloudflare.seen.at(-1)).toMatchObject({ method: "POST", body: { proxied: true } });
    expect(recordsOf("example.com")).toEqual([
      {
        id: created.body.id,
        type: "A",
        name: "www.example.com",
        content: "198.51.100.1",
        ttl: 300,
        proxied: true,
      },
    ]);
    // Dokploy's upsert: the same type and name overwrites the record.
    const again = await call("dnsProvider.createRecord", {
      dnsProviderId: providerId,
      zoneId: zone,
      type: "A",
      name: "www.example.com",
      content: "198.51.100.2",
    });
    expect(again.body.id).toBe(created.body.id);
    expect(recordsOf("example.com")).toHaveLength(1);
    const listed = await read("dnsProvider.listRecords", { dnsProviderId: providerId, zoneId: zone }, member);
    expect(listed.body).toEqual([
      {
        id: created.body.id,
        type: "A",
        name: "www.example.com",
        content: "198.51.100.2",
        ttl: 1,
        proxied: false,
      },
    ]);
    const updated = await call("dnsProvider.updateRecord", {
      dnsProviderId: providerId,
      zoneId: zone,
      recordId: created.body.id,
      type: "CNAME",
      name: "www.example.com",
      content: "example.com",
      proxied: true,
    });
    expect(updated.status).toBe(200);
    expect(updated.body.proxied).toBe(true);
    expect(cloudflare.seen.at(-1)).toMatchObject({ method: "PUT", body: { proxied: true } });
    expect(recordsOf("example.com")[0]).toMatchObject({
      type: "CNAME",
      content: "example.com",
      proxied: true,
    });
    const notBoolean = await call("dnsProvider.updateRecord", {
      dnsProviderId: providerId,
      zoneId: zone,
      recordId: created.body.id,
      type: "CNAME",
      name: "www.example.com",
      content: "example.com",
      proxied: "yes",
    });
    expect(notBoolean.status).toBe(400);
    expect(notBoolean.body.error.data.fields).toContain("proxied");
    const deleted = await call("dnsProvider.deleteRecord", {
      dnsProviderId: providerId,
      zoneId: zone,
      recordId: created.body.id,
    });
    expect(deleted.status).toBe(200);
    expect(recordsOf("example.com")).toEqual([]);
    const gone = await call("dnsProvider.deleteRecord", {
      dnsProviderId: providerId,
      zoneId: zone,
      recordId: created.body.id,
    });
    expect(gone.status).toBe(400);
    expect(gone.body.error.message).toContain("Record does not exist");
    const badType = await call("dnsProvider.createRecord", {
      dnsProviderId: providerId,
      zoneId: zone,
      type: "MX",
      name: "x.example.com",
      content: "mail",
    });
    expect(badType.status).toBe(400);
    expect(JSON.stringify(badType.body)).toContain("type");
  });

  it("update keeps the stored token for the mask and seals a new one", async () => {
    const kept = await call("dnsProvider.update", {
      dnsProviderId: providerId,
      name: "renamed",
      config: { providerType: "cloudflare", apiToken: "********" },
    });
    expect(kept.status, JSON.stringify(kept.body)).toBe(200);
    expect(kept.body.name).toBe("renamed");
    cloudflare.seen.length = 0;
    await call("dnsProvider.testConnection", { dnsProviderId: providerId });
    expect(cloudflare.seen.at(-1)?.authorization).toBe(`Bearer ${TOKEN}`);
    cloudflare.tokens.add(NEW_TOKEN);
    await call("dnsProvider.update", {
      dnsProviderId: providerId,
      name: "renamed",
      config: { providerType: "cloudflare", apiToken: NEW_TOKEN },
    });
    await call("dnsProvider.testConnection", { dnsProviderId: providerId });
    expect(cloudflare.seen.at(-1)?.authorization).toBe(`Bearer ${NEW_TOKEN}`);
    expect(await rowsNaming(NEW_TOKEN)).toEqual([]);
  });

  it("another organization's provider is a 404 for every procedure, and nothing reaches Cloudflare", async () => {
    cloudflare.seen.length = 0;
    const stranger = test.stranger;
    const zone = zoneId("example.com");
    for (const [name, input] of [
      ["dnsProvider.one", { dnsProviderId: providerId }],
      [
        "dnsProvider.update",
        { dnsProviderId: providerId, name: "x", config: { providerType: "cloudflare", apiToken: "t" } },
      ],
      ["dnsProvider.remove", { dnsProviderId: providerId }],
      ["dnsProvider.testConnection", { dnsProviderId: providerId }],
      ["dnsProvider.listZones", { dnsProviderId: providerId }],
      ["dnsProvider.listRecords", { dnsProviderId: providerId, zoneId: zone }],
      [
        "dnsProvider.createRecord",
        {
          dnsProviderId: providerId,
          zoneId: zone,
          type: "A",
          name: "a.example.com",
          content: "198.51.100.9",
        },
      ],
      [
        "dnsProvider.updateRecord",
        {
          dnsProviderId: providerId,
          zoneId: zone,
          recordId: "r",
          type: "A",
          name: "a.example.com",
          content: "198.51.100.9",
        },
      ],
      ["dnsProvider.deleteRecord", { dnsProviderId: providerId, zoneId: zone, recordId: "r" }],
    ] as const) {
      const response =
        name.endsWith(".one") || name.includes(".list")
          ? await read(name, input, stranger)
          : await call(name, input, stranger);
      expect(response.status, `${name} ${JSON.stringify(response.body)}`).toBe(404);
    }
    expect((await read("dnsProvider.all", {}, stranger)).body).toEqual([]);
    expect(cloudflare.seen).toEqual([]);
  });

  it("Cloudflare is reached only through the outbound guard: a loopback API refused by it is never called", async () => {
    cloudflare.seen.length = 0;
    const ctx = { config: { ...test.platform.ctx.config, outboundAllow: EMPTY_ALLOW_LIST } };
    await expect(listZones(ctx, TOKEN)).rejects.toThrow(/may not be reached/);
    expect(cloudflare.seen).toEqual([]);
  });
});

describe("a domain with a DNS provider", () => {
  let providerId: string;
  let app: { applicationId: string; appName: string };

  beforeAll(async () => {
    const created = await call("dnsProvider.create", {
      name: "domains-cf",
      config: { providerType: "cloudflare", apiToken: NEW_TOKEN },
    });
    providerId = created.body.dnsProviderId;
    app = await createApplication(test);
  });

  it("domain.create points the host at the server in the most specific zone", async () => {
    const created = await call("domain.create", {
      domainType: "application",
      applicationId: app.applicationId,
      host: "shop.apps.example.com",
      port: 8080,
      dnsProviderId: providerId,
    });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    expect(created.body.dnsProviderId).toBe(providerId);
    expect(recordsOf("apps.example.com")).toEqual([
      expect.objectContaining({ type: "A", name: "shop.apps.example.com", content: PUBLIC_IP }),
    ]);
    expect(recordsOf("example.com")).toEqual([]);
    const one = await read("domain.one", { domainId: created.body.domainId });
    expect(one.body.dnsProviderId).toBe(providerId);
  });

  it("domain.update moves the record with the host; domain.delete removes it", async () => {
    const [domain] = (await read("domain.byApplicationId", { applicationId: app.applicationId })).body;
    const before = recordsOf("apps.example.com")[0]!;
    const moved = await call("domain.update", { domainId: domain.domainId, host: "shop.example.com" });
    expect(moved.status, JSON.stringify(moved.body)).toBe(200);
    expect(recordsOf("apps.example.com")).toEqual([]);
    expect(recordsOf("example.com")).toEqual([
      expect.objectContaining({ type: "A", name: "shop.example.com", content: PUBLIC_IP }),
    ]);
    expect(recordsOf("example.com")[0]!.id).not.toBe(before.id);
    // A change that leaves host and provider alone does not call Cloudflare.
    cloudflare.seen.length = 0;
    expect((await call("domain.update", { domainId: domain.domainId, port: 9090 })).status).toBe(200);
    expect(cloudflare.seen).toEqual([]);
    const removed = await call("domain.delete", { domainId: domain.domainId });
    expect(removed.status).toBe(200);
    expect(recordsOf("example.com")).toEqual([]);
  });

  it("domain.update with dnsProviderId null detaches the domain and deletes its record", async () => {
    const created = await call("domain.create", {
      domainType: "application",
      applicationId: app.applicationId,
      host: "detach.example.com",
      dnsProviderId: providerId,
    });
    expect(recordsOf("example.com")).toHaveLength(1);
    const detached = await call("domain.update", { domainId: created.body.domainId, dnsProviderId: null });
    expect(detached.status).toBe(200);
    expect(detached.body.dnsProviderId).toBeNull();
    expect(recordsOf("example.com")).toEqual([]);
    await call("domain.delete", { domainId: created.body.domainId });
  });

  it("a compose stack's domain gets its record too, deleted with the domain", async () => {
    const stack = await test.platform.mutateOk(
      "compose.create",
      {
        name: "dns stack",
        appName: "dns-stack",
        environmentId: test.environmentId,
        composeFile: "services:\n  web:\n    image: busybox\n",
      },
      as(test.owner),
    );
    const created = await call("domain.create", {
      domainType: "compose",
      composeId: stack.composeId,
      serviceName: "web",
      host: "stack.example.com",
      dnsProviderId: providerId,
    });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    expect(recordsOf("example.com")).toEqual([
      expect.objectContaining({ type: "A", name: "stack.example.com", content: PUBLIC_IP }),
    ]);
    expect((await call("domain.delete", { domainId: created.body.domainId })).status).toBe(200);
    expect(recordsOf("example.com")).toEqual([]);
  });

  it("a domain save that fails after the record was made puts the record back", async () => {
    // Another organization holds the host: the save is a 409 after Cloudflare was written.
    const strangerApp = await createApplication(test, test.stranger, test.strangerEnvironmentId);
    // Written straight to the database: the stranger's organization has no server to route on.
    for (const host of ["claimed.example.com", "kept-record.example.com"]) {
      await test.platform.ctx.db
        .insertInto("domains")
        .values({
          domainId: newId(),
          host,
          certificateType: "none",
          customCertResolver: null,
          certificate: null,
          certificateKeySealed: null,
          domainType: "application",
          applicationId: strangerApp.applicationId,
          composeId: null,
          serviceName: null,
          internalPath: null,
          customEntrypoint: null,
          createdAt: new Date().toISOString(),
        })
        .execute();
    }
    const made = await call("domain.create", {
      domainType: "application",
      applicationId: app.applicationId,
      host: "claimed.example.com",
      dnsProviderId: providerId,
    });
    expect(made.status, JSON.stringify(made.body)).toBe(409);
    expect(recordsOf("example.com")).toEqual([]);
    // A record that was there before is overwritten, then restored.
    const existing = await call("dnsProvider.createRecord", {
      dnsProviderId: providerId,
      zoneId: zoneId("example.com"),
      type: "A",
      name: "kept-record.example.com",
      content: "198.51.100.5",
      ttl: 120,
    });
    const overwritten = await call("domain.create", {
      domainType: "application",
      applicationId: app.applicationId,
      host: "kept-record.example.com",
      dnsProviderId: providerId,
    });
    expect(overwritten.status).toBe(409);
    expect(recordsOf("example.com")).toEqual([
      {
        id: existing.body.id,
        type: "A",
        name: "kept-record.example.com",
        content: "198.51.100.5",
        ttl: 120,
        proxied: false,
      },
    ]);
    await call("dnsProvider.deleteRecord", {
      dnsProviderId: providerId,
      zoneId: zoneId("example.com"),
      recordId: existing.body.id,
    });
  });

  it("a host no zone holds is a 400 naming dnsProviderId, and no domain is saved", async () => {
    const refused = await call("domain.create", {
      domainType: "application",
      applicationId: app.applicationId,
      host: "shop.elsewhere.org",
      dnsProviderId: providerId,
    });
    expect(refused.status).toBe(400);
    expect(JSON.stringify(refused.body)).toContain("dnsProviderId");
    const domains = (await read("domain.byApplicationId", { applicationId: app.applicationId })).body as {
      host: string;
    }[];
    expect(domains.map((domain) => domain.host)).not.toContain("shop.elsewhere.org");
  });

  it("a provider refusing the token is a 400 and no domain is saved", async () => {
    cloudflare.tokens.delete(NEW_TOKEN);
    try {
      const refused = await call("domain.create", {
        domainType: "application",
        applicationId: app.applicationId,
        host: "refused.example.com",
        dnsProviderId: providerId,
      });
      expect(refused.status).toBe(400);
      expect(refused.body.error.message).toContain("Authentication error");
      const domains = (await read("domain.byApplicationId", { applicationId: app.applicationId })).body as {
        host: string;
      }[];
      expect(domains.map((domain) => domain.host)).not.toContain("refused.example.com");
    } finally {
      cloudflare.tokens.add(NEW_TOKEN);
    }
  });

  it("another organization's provider on a domain is a 404; removing a provider detaches its domains", async () => {
    const strangerApp = await createApplication(test, test.stranger, test.strangerEnvironmentId);
    const foreign = await test.platform.mutate(
      "domain.create",
      {
        domainType: "application",
        applicationId: strangerApp.applicationId,
        host: "theirs.example.com",
        dnsProviderId: providerId,
      },
      as(test.stranger),
    );
    expect(foreign.status).toBe(404);
    const created = await call("domain.create", {
      domainType: "application",
      applicationId: app.applicationId,
      host: "kept.example.com",
      dnsProviderId: providerId,
    });
    expect(created.status).toBe(200);
    expect((await call("dnsProvider.remove", { dnsProviderId: providerId })).status).toBe(200);
    const after = await read("domain.one", { domainId: created.body.domainId });
    expect(after.body.dnsProviderId).toBeNull();
    // The record stays at Cloudflare: the platform no longer manages it.
    expect(recordsOf("example.com")).toEqual([expect.objectContaining({ name: "kept.example.com" })]);
  });
});
