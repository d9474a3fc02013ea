/**
 * A server's host ports are shared by every tenant and every kind of service on it (an
 * application's published ports, a database's external port, the ports a compose stack's file
 * publishes). A port the platform or the host
 * needs (reservedHostPorts, one list fed by that server's configuration) is refused with a 400; a port another service publishes on the same server is a 409.
 * The check and the write that takes the port run in one transaction holding a lock per server,
 * so two requests can never both take the same free port.
 */
import { networkInterfaces } from "node:os";
import { sql } from "kysely";
import { LOCAL_SERVER_ID } from "../agents/hub.ts";
import type { ServiceContext } from "../context.ts";
import type { Db } from "../db/database.ts";
import { badRequest, conflict } from "../errors.ts";
import { loadMonitoringConfig } from "../monitoring/monitoring-config.ts";
import { loadWebServerSettings } from "../proxy/static-config.ts";

/**
 * Ports every server needs, whatever its configuration: SSH, the proxy's default 80/443/8080,
 * Swarm's 2377 (cluster management), 7946 (node gossip) and 4789 (overlay VXLAN), NATS 4222 and
 * the platform's Postgres 5432.
 */
const FIXED_RESERVED_PORTS: ReadonlyMap<number, string> = new Map([
  [22, "SSH"],
  [80, "the proxy"],
  [443, "the proxy"],
  [8080, "the proxy's dashboard"],
  [2377, "Docker Swarm"],
  [7946, "Docker Swarm"],
  [4789, "Docker Swarm"],
  [4222, "NATS"],
  [5432, "the platform's database"],
]);

/** deploy/install.sh publishes the control plane on 3000 whatever PORT says inside. */
const INSTALL_PUBLISHED_PORT = 3000;

/** The port of a nats://, tls:// or ws(s):// URL (its scheme's default when it names none). */
function natsPort(url: string | undefined): number | null {
  if (!url) return null;
  const parsed = new URL(url);
  if (parsed.port) return Number(parsed.port);
  return { "ws:": 80, "wss:": 443 }[parsed.protocol] ?? 4222;
}

/** This machine's own addresses (loopback, its interfaces, PLATFORM_PUBLIC_IP). */
function ownAddresses(ctx: ServiceContext): Set<string> {
  const addresses = new Set(["localhost", "127.0.0.1", "::1"]);
  for (const list of Object.values(networkInterfaces())) {
    for (const address of list ?? []) addresses.add(address.address);
  }
  if (ctx.config.publicIp) addresses.add(ctx.config.publicIp);
  return addresses;
}

/**
 * The one list of host ports no service may publish on the server `serverId` (null: this
 * machine), each with what needs it: the fixed ports above, the proxy's configured ports, the
 * agent's metrics port from the server's monitoring configuration, and on the control plane's
 * own machine (this machine, or a server at one of its addresses) the control plane's PORT,
 * 3000 and the NATS ports of its configuration. An application holding one of these when the
 * platform restarts would make the instance unreachable.
 */
export async function reservedHostPorts(
  ctx: ServiceContext,
  db: Db,
  serverId: string | null,
): Promise<Map<number, string>> {
  const reserved = new Map(FIXED_RESERVED_PORTS);
  const settings = await loadWebServerSettings(db);
  reserved.set(settings.proxyHttpPort, "the proxy");
  reserved.set(settings.proxyHttpsPort, "the proxy");
  reserved.set(settings.proxyDashboardPort, "the proxy's dashboard");
  const monitoring = await db
    .selectFrom("monitoringConfigs")
    .select("organizationId")
    .where("serverId", "=", serverId ?? LOCAL_SERVER_ID)
    .executeTakeFirst();
  if (monitoring) {
    const config = await loadMonitoringConfig(
      { db, secrets: ctx.secrets },
      monitoring.organizationId,
      serverId ?? LOCAL_SERVER_ID,
    );
    if (config) reserved.set(config.server.port, "the agent's metrics");
  }
  if (await isControlPlaneMachine(ctx, db, serverId)) {
    const { port, natsUrl, natsAgentUrl } = ctx.config;
    reserved.set(INSTALL_PUBLISHED_PORT, "the control plane");
    if (port > 0) reserved.set(port, "the control plane");
    for (const url of [natsUrl, natsAgentUrl]) {
      const nats = natsPort(url);
      if (nats !== null) reserved.set(nats, "NATS");
    }
  }
  return reserved;
}

/** This machine, or a server added at one of this machine's own addresses. */
async function isControlPlaneMachine(ctx: ServiceContext, db: Db, serverId: string | null): Promise<boolean> {
  if (serverId === null || serverId === LOCAL_SERVER_ID) return true;
  const server = await db
    .selectFrom("servers")
    .select("ipAddress")
    .where("serverId", "=", serverId)
    .executeTakeFirst();
  return server !== undefined && ownAddresses(ctx).has(server.ipAddress);
}

export interface HostPortClaim {
  /** The server (null: this machine). */
  serverId: string | null;
  port: number;
  protocol: "tcp" | "udp";
  /** The input field named by a refusal. */
  field: string;
  /** The service asking, whose own ports do not count as taken. */
  except: { applicationId?: string; databaseId?: string; composeId?: string };
}

/**
 * Runs `write` (which stores the claimed port) after checking the claim, inside one transaction
 * under the server's port lock; `write` must use the transaction it is given.
 */
export async function claimHostPort<T>(
  ctx: ServiceContext,
  claim: HostPortClaim,
  write: (trx: Db) => Promise<T>,
): Promise<T> {
  return ctx.db.transaction().execute(async (trx) => {
    const reserved = (await reservedHostPorts(ctx, trx, claim.serverId)).get(claim.port);
    if (reserved !== undefined) {
      throw badRequest(`Invalid input: ${claim.field}: ${claim.port} is reserved for ${reserved}`, {
        fields: [claim.field],
      });
    }
    await lockHostPorts(trx, claim.serverId);
    if (await hostPortTaken(trx, claim)) {
      throw conflict(`Port ${claim.port}/${claim.protocol} is already published on this server`, {
        fields: [claim.field],
      });
    }
    return write(trx);
  });
}

/** Holds the server's port lock until the transaction `trx` ends (claims on the server wait for it). */
export async function lockHostPorts(trx: Db, serverId: string | null): Promise<void> {
  const lockKey = `platform.host-ports:${serverId ?? "local"}`;
  await sql`select pg_advisory_xact_lock(hashtext(${lockKey}))`.execute(trx);
}

/** Another service publishing the claimed port and protocol on the same server. */
export async function hostPortTaken(db: Db, claim: HostPortClaim): Promise<boolean> {
  const { serverId, port, protocol, except } = claim;
  // "is not distinct from": a null serverId (this machine) matches null.
  const application = await db
    .selectFrom("ports")
    .innerJoin("applications", "applications.applicationId", "ports.applicationId")
    .select("ports.portId")
    .where("ports.publishedPort", "=", port)
    .where("ports.protocol", "=", protocol)
    .where("ports.applicationId", "!=", except.applicationId ?? "")
    .where("applications.serverId", "is not distinct from", serverId)
    .limit(1)
    .executeTakeFirst();
  if (application) return true;
  if (await endpointPortTaken(db, claim)) return true;
  // A compose stack's file publishes it (compose/ports.ts stores them when the file is saved).
  const stack = await db
    .selectFrom("compose")
    .select("composeId")
    .where(sql<boolean>`published_ports @> ${JSON.stringify([{ port, protocol }])}::jsonb`)
    .where("composeId", "!=", except.composeId ?? "")
    .where("serverId", "is not distinct from", serverId)
    .limit(1)
    .executeTakeFirst();
  if (stack) return true;
  if (protocol !== "tcp") return false;
  // A database's external ports are tcp (libsql also publishes its gRPC and admin ports).
  const database = await db
    .selectFrom("databaseServices")
    .select("databaseId")
    .where((eb) =>
      eb.or([
        eb("externalPort", "=", port),
        eb("externalGrpcPort", "=", port),
        eb("externalAdminPort", "=", port),
      ]),
    )
    .where("databaseId", "!=", except.databaseId ?? "")
    .where("serverId", "is not distinct from", serverId)
    .limit(1)
    .executeTakeFirst();
  return database !== undefined;
}

/** Another service publishing the port through endpointSpecSwarm.Ports (any protocol) on the server. */
async function endpointPortTaken(db: Db, { serverId, port, except }: HostPortClaim): Promise<boolean> {
  const publishes = sql<boolean>`endpoint_spec_swarm -> 'Ports' @> ${JSON.stringify([{ PublishedPort: port }])}::jsonb`;
  const application = await db
    .selectFrom("applications")
    .select("applicationId")
    .where(publishes)
    .where("applicationId", "!=", except.applicationId ?? "")
    .where("serverId", "is not distinct from", serverId)
    .limit(1)
    .executeTakeFirst();
  if (application) return true;
  const database = await db
    .selectFrom("databaseServices")
    .select("databaseId")
    .where(publishes)
    .where("databaseId", "!=", except.databaseId ?? "")
    .where("serverId", "is not distinct from", serverId)
    .limit(1)
    .executeTakeFirst();
  return database !== undefined;
}

/**
 * Checks the host ports of endpointSpecSwarm.Ports as port.create checks its port (reserved: 400,
 * taken on the server: 409, both naming endpointSpecSwarm), before an update stores them.
 */
export async function checkEndpointPorts(
  ctx: ServiceContext,
  target: { serverId: string | null; except: HostPortClaim["except"] },
  endpointSpec: { Ports?: { PublishedPort?: number; Protocol?: string }[] } | null | undefined,
): Promise<void> {
  const seen = new Set<number>();
  for (const port of endpointSpec?.Ports ?? []) {
    if (port.PublishedPort === undefined) continue;
    if (seen.has(port.PublishedPort)) {
      throw badRequest(`Invalid input: endpointSpecSwarm: port ${port.PublishedPort} is published twice`, {
        fields: ["endpointSpecSwarm"],
      });
    }
    seen.add(port.PublishedPort);
    const claim: HostPortClaim = {
      serverId: target.serverId,
      port: port.PublishedPort,
      protocol: port.Protocol === "udp" ? "udp" : "tcp",
      field: "endpointSpecSwarm",
      except: target.except,
    };
    await claimHostPort(ctx, claim, async () => undefined);
  }
}
