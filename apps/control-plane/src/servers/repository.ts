/**
 * The SQL of servers, scoped to an organization (a server of another organization is simply
 * not found), and the server view responses show: the row with its service count and the
 * agent's connection state.
 */
import { createHash } from "node:crypto";
import { LOCAL_SERVER_ID } from "../agents/hub.ts";
import type { ServiceContext } from "../context.ts";
import { newId } from "../crypto/ids.ts";
import type { Db } from "../db/database.ts";
import type { Server, ServerType } from "../db/schema.ts";
import { badRequest, notFound } from "../errors.ts";
import { isInstanceOrganization } from "../organizations/instance.ts";
import { countServicesByServer } from "./service-count.ts";

export type { Server };

export interface ServerValues {
  organizationId: string;
  name: string;
  description: string | null;
  ipAddress: string;
  port: number;
  username: string;
  sshKeyId: string | null;
  serverType: ServerType;
}

export type ServerPatch = Partial<Omit<ServerValues, "organizationId">>;

export function insertServer(db: Db, values: ServerValues): Promise<Server> {
  return db
    .insertInto("servers")
    .values({ serverId: newId(), ...values, serverStatus: "inactive" })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export function findServer(db: Db, organizationId: string, serverId: string): Promise<Server | undefined> {
  return db
    .selectFrom("servers")
    .selectAll()
    .where("serverId", "=", serverId)
    .where("organizationId", "=", organizationId)
    .executeTakeFirst();
}

/**
 * A server's name by its id alone: for log lines of work already bound to that server (a
 * deployment's), never for a caller's input.
 */
export async function findServerName(db: Db, serverId: string): Promise<string | undefined> {
  const row = await db
    .selectFrom("servers")
    .select("name")
    .where("serverId", "=", serverId)
    .executeTakeFirst();
  return row?.name;
}

/** The organization's servers, newest first. */
export function listServers(db: Db, organizationId: string): Promise<Server[]> {
  return db
    .selectFrom("servers")
    .selectAll()
    .where("organizationId", "=", organizationId)
    .orderBy("createdAt", "desc")
    .orderBy("serverId", "desc")
    .execute();
}

/** Applies `patch`; a new address or port forgets the trusted host key (another machine). */
export async function updateServer(
  db: Db,
  organizationId: string,
  serverId: string,
  patch: ServerPatch,
): Promise<Server | undefined> {
  const current = await findServer(db, organizationId, serverId);
  if (!current || Object.keys(patch).length === 0) return current;
  const moved =
    (patch.ipAddress !== undefined && patch.ipAddress !== current.ipAddress) ||
    (patch.port !== undefined && patch.port !== current.port);
  return db
    .updateTable("servers")
    .set({ ...patch, ...(moved ? { hostKeySha256: null } : {}) })
    .where("serverId", "=", serverId)
    .where("organizationId", "=", organizationId)
    .returningAll()
    .executeTakeFirst();
}

export async function deleteServer(db: Db, organizationId: string, serverId: string): Promise<boolean> {
  const result = await db
    .deleteFrom("servers")
    .where("serverId", "=", serverId)
    .where("organizationId", "=", organizationId)
    .executeTakeFirst();
  return result.numDeletedRows > 0n;
}

/** Records the output of a setup run (replacing the previous one). */
export async function saveSetupLog(db: Db, serverId: string, setupLog: string): Promise<void> {
  await db.updateTable("servers").set({ setupLog }).where("serverId", "=", serverId).execute();
}

/** Trust on first use: stores the host key's fingerprint when none is stored yet. */
export async function trustHostKey(db: Db, serverId: string, hostKeySha256: string): Promise<void> {
  await db
    .updateTable("servers")
    .set({ hostKeySha256 })
    .where("serverId", "=", serverId)
    .where("hostKeySha256", "is", null)
    .execute();
}

/** OpenSSH's way of showing a key fingerprint: `SHA256:` + unpadded base64 of the digest. */
export function hostKeyFingerprint(hostKey: Buffer): string {
  return `SHA256:${createHash("sha256").update(hostKey).digest("base64").replace(/=+$/, "")}`;
}

/** Servers as responses show them, with totalSum and the connection state of their agent. */
export async function toServerViews(ctx: ServiceContext, servers: Server[]) {
  const totals = await countServicesByServer(
    ctx.db,
    servers.map((s) => s.serverId),
  );
  return servers.map((server) => {
    const connection = ctx.agents.connectionOf(server);
    return {
      serverId: server.serverId,
      organizationId: server.organizationId,
      name: server.name,
      description: server.description,
      ipAddress: server.ipAddress,
      port: server.port,
      username: server.username,
      sshKeyId: server.sshKeyId,
      serverType: server.serverType,
      serverStatus: server.serverStatus,
      createdAt: server.createdAt,
      totalSum: totals.get(server.serverId) ?? 0,
      online: connection.online,
      lastHeartbeatAt: connection.lastHeartbeatAt,
      agentVersion: server.agentVersion,
      enrolledAt: server.enrolledAt,
      hostKeyFingerprint: server.hostKeySha256,
      enableDockerCleanup: server.enableDockerCleanup,
      buildsConcurrency: server.buildsConcurrency,
    };
  });
}

/**
 * The server whose agent a call goes to: this machine's (LOCAL_SERVER_ID) when none is named,
 * else the organization's server (another organization's is a 404). This machine belongs to the
 * instance organization (organizations/instance.ts): any other organization must name one of
 * its servers (a 400 naming serverId). On the cloud edition the control plane's machine is the
 * operator's, not a tenant's, so a serverId is required there.
 */
export async function agentServerId(
  ctx: Pick<ServiceContext, "db" | "config">,
  organizationId: string,
  serverId: string | null | undefined,
): Promise<string> {
  if (!serverId || serverId === LOCAL_SERVER_ID) {
    if (ctx.config.edition === "cloud") {
      throw badRequest("Invalid input: serverId: is required on the cloud edition", { fields: ["serverId"] });
    }
    if (!(await isInstanceOrganization(ctx.db, organizationId))) {
      throw badRequest(
        "Invalid input: serverId: is required (this machine belongs to the instance administrator's organization; name one of your servers)",
        { fields: ["serverId"] },
      );
    }
    return LOCAL_SERVER_ID;
  }
  const server = await findServer(ctx.db, organizationId, serverId);
  if (!server) throw notFound("Server");
  return server.serverId;
}
