/**
 * Issue 22 finding 4: a tenant cannot probe the ports of the platform's own machines (this
 * machine's interface addresses, the registered addresses of managed servers) through
 * server.getServerMetrics, and every failure that would tell a port's state answers one
 * "could not be reached". Real listeners on this machine's own address, real fetches.
 */
import { createServer as createHttpServer, type Server as HttpServer } from "node:http";
import { type AddressInfo, createServer, isIP, type Server, type Socket } from "node:net";
import { freePort } from "@platform/agent/testing/net.ts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Session, startTestPlatform, type TestPlatform } from "../testing/harness.ts";
import { insertServer } from "../testing/servers.ts";
import { createOtherOrganization } from "../users/test-support.ts";
import { outboundAddressProblem, parseAllowList } from "./guard.ts";
import { checkUserTarget, hostInterfaceAddresses } from "./own-addresses.ts";

const empty = parseAllowList("");
if (!("list" in empty)) throw new Error(empty.problem);
/** An address of this machine the guard alone lets through (not loopback, private or link-local). */
const ownAddress = [...hostInterfaceAddresses()].find(
  (address) => isIP(address) === 4 && outboundAddressProblem(address, empty.list) === null,
);
const MANAGED_SERVER_IP = "203.0.113.77";

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
  await insertServer(platform.services.db, owner.user.organizationId, { ipAddress: MANAGED_SERVER_IP });
}, 60_000);

afterAll(async () => {
  for (const socket of sockets) socket.destroy();
  for (const server of listeners) {
    if ("closeAllConnections" in server) server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
  await platform?.close();
});

describe("the platform's own machines as probe targets (issue 22 finding 4)", () => {
  it("finds an address of this machine to probe", () => {
    expect(ownAddress, `interfaces: ${[...hostInterfaceAddresses()].join(", ")}`).toBeDefined();
  });

  it("refuses this machine's own address to another organization, the same way on every port", async () => {
    const answers: string[] = [];
    for (const port of Object.values(ports)) {
      const response = await metrics(tenant, `http://${ownAddress}:${port}/metrics`);
      expect(response.status, JSON.stringify(response.body)).toBe(400);
      expect(response.body.error.data.fields).toEqual(["url"]);
      expect(response.body.error.message).toMatch(/platform's own machines/);
      answers.push(JSON.stringify(response.body).replace(String(port), "<port>"));
    }
    expect(new Set(answers).size).toBe(1);
  });

  it("refuses a managed server's registered address to other organizations", async () => {
    const response = await metrics(tenant, `http://${MANAGED_SERVER_IP}:4500/metrics`);
    expect(response.status, JSON.stringify(response.body)).toBe(400);
    expect(response.body.error.message).toMatch(/platform's own machines/);
    // Its own organization may read it (no connection made here: only the check).
    await expect(
      checkUserTarget(platform.services, owner.user.organizationId, { host: MANAGED_SERVER_IP, port: 4500 }),
    ).resolves.toBeUndefined();
    // An address two organizations registered belongs to neither alone.
    await insertServer(platform.services.db, tenant.organizationId, { ipAddress: MANAGED_SERVER_IP });
    await expect(
      checkUserTarget(platform.services, owner.user.organizationId, { host: MANAGED_SERVER_IP, port: 4500 }),
    ).rejects.toThrow(/platform's own machines/);
    // The proxy's ports answer everyone anyway.
    await expect(
      checkUserTarget(platform.services, tenant.organizationId, { host: ownAddress!, port: 443 }),
    ).resolves.toBeUndefined();
  });

  it("answers one 'could not be reached' for every failure that tells a port's state", async () => {
    // The instance organization owns this machine: it reaches the ports, and learns nothing.
    const answers = new Set<string>();
    for (const port of Object.values(ports)) {
      const response = await metrics(owner, `http://${ownAddress}:${port}/metrics`);
      expect(response.status, `${port}: ${JSON.stringify(response.body)}`).toBe(400);
      expect(response.body.error.message).toBe("The metrics endpoint could not be reached");
      answers.add(JSON.stringify(response.body));
    }
    expect(answers.size).toBe(1);
  });
});

describe("PLATFORM_OUTBOUND_ALLOW wins over the own-address rule", () => {
  let allowed: TestPlatform;
  afterAll(async () => allowed?.close());

  it("lets another organization reach an own address the allow list covers", async () => {
    allowed = await startTestPlatform({ PLATFORM_OUTBOUND_ALLOW: `${ownAddress}/32` });
    await allowed.registerOwner();
    const other = await createOtherOrganization(allowed);
    await expect(
      checkUserTarget(allowed.services, other.organizationId, { host: ownAddress!, port: ports.closed }),
    ).resolves.toBeUndefined();
    const response = await allowed.request(
      `/api/server.getServerMetrics?input=${encodeURIComponent(JSON.stringify({ url: `http://${ownAddress}:${ports.html}/metrics`, token: "t", dataPoints: "5" }))}`,
      { token: other.token },
    );
    expect(response.status).toBe(400);
    expect(response.body.error.message).toBe("The metrics endpoint could not be reached");
  });
});
