/**
 * Issue 22 finding 4: a tenant cannot probe the ports of the platform's own machines (this
 * machine's interface addresses, the registered addresses of managed servers) through
 * server.getServerMetrics, and every failure that would tell a port's state answers one
 * "could not be reached".
 *
 * The rule only matters for addresses the guard lets through, globally reachable ones, and this
 * machine has none (its eth0 is in TEST-NET-1, which the guard refuses since issue 37 finding 7).
 * So the rule itself is checked with checkUserTarget, which connects nowhere, on globally
 * reachable addresses given as this machine's; real listeners on this machine's own address, real
 * fetches, show the single answer where the operator's allow list lets the address through.
 */
import { createServer as createHttpServer, type Server as HttpServer } from "node:http";
import { type AddressInfo, createServer, isIP, type Server, type Socket } from "node:net";
import { freePort } from "@platform/agent/testing/net.ts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Session, startTestPlatform, type TestPlatform } from "../testing/harness.ts";
import { insertServer } from "../testing/servers.ts";
import { createOtherOrganization } from "../users/test-support.ts";
import { type AllowList, EMPTY_ALLOW_LIST, outboundAddressProblem, parseAllowList } from "./guard.ts";
import { checkUserTarget, hostInterfaceAddresses } from "./own-addresses.ts";

const allow = (text: string): AllowList => {
  const parsed = parseAllowList(text);
  if (!("list" in parsed)) throw new Error(parsed.problem);
  return parsed.list;
};
/** An address of this machine outside loopback that an allow list can let through. */
const ownAddress = [...hostInterfaceAddresses()].find(
  (address) =>
    isIP(address) === 4 &&
    !address.startsWith("127.") &&
    outboundAddressProblem(address, allow(`${address}/32`)) === null,
);
/** Globally reachable addresses (AS112) standing for this machine and a managed server: only checked, never connected to. */
const OWN_IP = "192.31.196.77";
const MANAGED_SERVER_IP = "192.175.48.77";
const interfaceAddresses = new Set(["127.0.0.1", OWN_IP]);

let platform: TestPlatform;
let owner: Session;
let tenant: Session & { organizationId: string };
const listeners: (Server | HttpServer)[] = [];
const sockets = new Set<Socket>();
/** Ports on every address of this machine: closed, a raw banner, HTTP 404, HTTP JSON object. */
const ports = { closed: 0, banner: 0, html: 0, json: 0 };

async function listen(server: Server | HttpServer): Promise<number> {
  listeners.push(server);
  await new Promise<void>((resolve) => server.listen(0, "0.0.0.0", resolve));
  return (server.address() as AddressInfo).port;
}

const metrics = (session: Session, url: string) =>
  platform.request(
    `/api/server.getServerMetrics?input=${encodeURIComponent(JSON.stringify({ url, token: "t0ken-for-probe", dataPoints: "5" }))}`,
    { token: session.token },
  );

beforeAll(async () => {
  platform = await startTestPlatform();
  owner = await platform.registerOwner();
  tenant = await createOtherOrganization(platform);
  ports.closed = await freePort();
  ports.banner = await listen(
    createServer((socket) => {
      sockets.add(socket);
      socket.end("SSH-2.0-OpenSSH_9.6\r\n");
    }),
  );
  ports.html = await listen(
    createHttpServer((_request, response) => response.writeHead(404).end("<html>not here</html>")),
  );
  ports.json = await listen(
    createHttpServer((_request, response) =>
      response.writeHead(200, { "content-type": "application/json" }).end('{"status":"ok"}'),
    ),
  );
  await insertServer(platform.ctx.db, owner.user.organizationId, { ipAddress: MANAGED_SERVER_IP });
}, 60_000);

/** checkUserTarget's refusal message for `organizationId`, or null when it lets the target through. */
async function ownRuleAnswer(
  organizationId: string,
  host: string,
  port: number,
  outboundAllow: AllowList = EMPTY_ALLOW_LIST,
): Promise<string | null> {
  const services = { config: { ...platform.ctx.config, outboundAllow }, db: platform.ctx.db };
  try {
    await checkUserTarget(services, organizationId, { host, port }, { interfaceAddresses });
    return null;
  } catch (error) {
    return (error as Error).message;
  }
}

afterAll(async () => {
  for (const socket of sockets) socket.destroy();
  for (const server of listeners) {
    if ("closeAllConnections" in server) server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
  await platform?.close();
});

describe("the platform's own machines as probe targets (issue 22 finding 4)", () => {
  it("refuses this machine's own address to another organization, the same way on every port", async () => {
    const answers = new Set<string | null>();
    for (const port of [22, 2375, 4500, 5432]) {
      answers.add(await ownRuleAnswer(tenant.organizationId, OWN_IP, port));
    }
    expect([...answers]).toEqual([
      `${OWN_IP} is an address of the platform's own machines; allow it with PLATFORM_OUTBOUND_ALLOW`,
    ]);
    // The instance organization owns this machine.
    expect(await ownRuleAnswer(owner.user.organizationId, OWN_IP, 4500)).toBeNull();
    // The proxy's ports and the control plane's own answer everyone anyway.
    for (const port of [80, 443, platform.ctx.config.port]) {
      expect(await ownRuleAnswer(tenant.organizationId, OWN_IP, port), String(port)).toBeNull();
    }
  });

  it.each([
    "::ffff:192.31.196.77",
    "[::ffff:c01f:c44d]",
    "::FFFF:C01F:C44D",
    "64:ff9b::c01f:c44d",
    "2002:c01f:c44d::1",
  ])("refuses %s, which carries this machine's address, to another organization", async (host) => {
    expect(await ownRuleAnswer(tenant.organizationId, host, 4500)).toMatch(/platform's own machines/);
  });

  it("refuses a managed server's registered address to other organizations", async () => {
    expect(await ownRuleAnswer(tenant.organizationId, MANAGED_SERVER_IP, 4500)).toMatch(
      /platform's own machines/,
    );
    expect(await ownRuleAnswer(tenant.organizationId, `64:ff9b::c0af:304d`, 4500)).toMatch(
      /platform's own machines/,
    );
    // Its own organization may reach it.
    expect(await ownRuleAnswer(owner.user.organizationId, MANAGED_SERVER_IP, 4500)).toBeNull();
    // An address two organizations registered belongs to neither alone.
    const theirs = await insertServer(platform.ctx.db, tenant.organizationId, {
      ipAddress: MANAGED_SERVER_IP,
    });
    expect(await ownRuleAnswer(owner.user.organizationId, MANAGED_SERVER_IP, 4500)).toMatch(
      /platform's own machines/,
    );
    await platform.ctx.db.deleteFrom("servers").where("serverId", "=", theirs).execute();
  });

  it("lets PLATFORM_OUTBOUND_ALLOW win over the own-address rule", async () => {
    expect(await ownRuleAnswer(tenant.organizationId, OWN_IP, 4500, allow(`${OWN_IP}/32`))).toBeNull();
    expect(
      await ownRuleAnswer(tenant.organizationId, MANAGED_SERVER_IP, 4500, allow(`${OWN_IP}/32`)),
    ).toMatch(/platform's own machines/);
  });

  it("finds an address of this machine to probe", () => {
    expect(ownAddress, `interfaces: ${[...hostInterfaceAddresses()].join(", ")}`).toBeDefined();
  });

  it("refuses another organization's metrics URL on this machine's address, the same way on every port", async () => {
    const answers: string[] = [];
    for (const port of Object.values(ports)) {
      const response = await metrics(tenant, `http://${ownAddress}:${port}/metrics`);
      expect(response.status, JSON.stringify(response.body)).toBe(400);
      expect(response.body.error.data.fields).toEqual(["url"]);
      answers.push(JSON.stringify(response.body).replace(String(port), "<port>"));
    }
    expect(new Set(answers).size).toBe(1);
  });
});

describe("PLATFORM_OUTBOUND_ALLOW covering this machine's own address", () => {
  let allowed: TestPlatform;
  afterAll(async () => allowed?.close());

  it("answers one 'could not be reached' for every failure that tells a port's state, to every organization", async () => {
    allowed = await startTestPlatform({ PLATFORM_OUTBOUND_ALLOW: `${ownAddress}/32` });
    const first = await allowed.registerOwner();
    const other = await createOtherOrganization(allowed);
    const answers = new Set<string>();
    for (const session of [first, other]) {
      for (const port of Object.values(ports)) {
        const response = await allowed.request(
          `/api/server.getServerMetrics?input=${encodeURIComponent(JSON.stringify({ url: `http://${ownAddress}:${port}/metrics`, token: "t0ken-for-probe", dataPoints: "5" }))}`,
          { token: session.token },
        );
        expect(response.status, `${port}: ${JSON.stringify(response.body)}`).toBe(400);
        expect(response.body.error.message).toBe("The metrics endpoint could not be reached");
        answers.add(JSON.stringify(response.body));
      }
    }
    expect(answers.size).toBe(1);
  });
});
