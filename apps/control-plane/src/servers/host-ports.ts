/**
 * A server's host ports are shared by every tenant and every kind of service on it (an
 * application's published ports, a database's external port). A port the platform or the host
 * needs is refused with a 400; a port another service publishes on the same server is a 409.
 * The check and the write that takes the port run in one transaction holding a lock per server,
 * so two requests can never both take the same free port.
 */
import { sql } from "kysely";
import type { ServiceContext } from "../context.ts";
import type { Db } from "../db/database.ts";
import { badRequest, conflict } from "../errors.ts";
import { loadWebServerSettings } from "../proxy/proxy-service.ts";

/**
 * Host ports no service may publish: SSH 22, the proxy's 80/443/8080, Swarm's 2377 (cluster
 * management), 7946 (node gossip) and 4789 (overlay VXLAN), NATS 4222 and Postgres 5432 of the
 * platform itself. The proxy's configured host ports are added from the settings.
 */
export const RESERVED_HOST_PORTS: readonly number[] = [22, 80, 443, 2377, 4222, 4789, 5432, 7946, 8080];

export interface HostPortClaim {
  /** The server (null: this machine). */
  serverId: string | null;
  port: number;
  protocol: "tcp" | "udp";
  /** The input field named by a refusal. */
  field: string;
  /** The service asking, whose own ports do not count as taken. */
  except: { applicationId?: string; databaseId?: string };
}

/**
 * Runs `write` (which stores the claimed port) after checking the claim, inside one transaction
 * under the server's port lock; `write` must use the transaction it is given.
 */
export async function claimHostPort<T>(
  services: ServiceContext,
  claim: HostPortClaim,
  write: (trx: Db) => Promise<T>,
): Promise<T> {
  return services.db.transaction().execute(async (trx) => {
    const settings = await loadWebServerSettings(trx);
    const reserved = new Set([
      ...RESERVED_HOST_PORTS,
      settings.proxyHttpPort,
      settings.proxyHttpsPort,
      settings.proxyDashboardPort,
    ]);
    if (reserved.has(claim.port)) {
      throw badRequest(
        `Invalid input: ${claim.field}: ${claim.port} is reserved for the platform or the host`,
        { fields: [claim.field] },
      );
    }
    const lockKey = `platform.host-ports:${claim.serverId ?? "local"}`;
    await sql`select pg_advisory_xact_lock(hashtext(${lockKey}))`.execute(trx);
    if (await hostPortTaken(trx, claim)) {
      throw conflict(`Port ${claim.port}/${claim.protocol} is already published on this server`, {
        fields: [claim.field],
      });
    }
    return write(trx);
  });
}

/** Another service publishing the claimed port and protocol on the same server. */
async function hostPortTaken(db: Db, claim: HostPortClaim): Promise<boolean> {
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
  if (protocol !== "tcp") return false;
  // A database's external port is tcp.
  const database = await db
    .selectFrom("databaseServices")
    .select("databaseId")
    .where("externalPort", "=", port)
    .where("databaseId", "!=", except.databaseId ?? "")
    .where("serverId", "is not distinct from", serverId)
    .limit(1)
    .executeTakeFirst();
  return database !== undefined;
}
