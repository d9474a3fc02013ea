/**
 * network.* (Dokploy's router of the same name): networks an organization creates on one of its
 * servers (this machine when serverId is omitted) for its services, through the server's agent.
 *
 * Tenancy: the engine's name is namespaced by the organization (organizationNetworkName), and
 * the network is labelled platform.organization=<its id>; the agent acts on a network only when
 * both say it is the caller's. Another organization's network id is a 404 (its row and engine
 * network untouched); the platform's own network and the engine's (ingress, bridge) can never
 * be named: a tenant's name always carries its prefix, and reserved names are refused.
 */
import type { ContainerScope } from "@platform/agent-protocol";
import { organizationNetworkName, organizationNetworkPrefix } from "@platform/ownership";
import { z } from "zod";
import { serverIdSchema } from "../agents/container-views.ts";
import { callAgent } from "../agents/errors.ts";
import { LOCAL_SERVER_ID } from "../agents/hub.ts";
import type { Caller, ServiceContext } from "../context.ts";
import { newId } from "../crypto/ids.ts";
import { ownedBy, type WorkloadTable } from "../db/owned.ts";
import type { NetworkRow } from "../db/schema.ts";
import { ApiError, badRequest, conflict, notFound } from "../errors.ts";
import { agentServerId, findServer } from "../servers/repository.ts";

// ---- inputs ----------------------------------------------------------------------------------

/** Names Docker or the platform keep (Dokploy's list, with the platform's own network). */
export const RESERVED_NETWORK_NAMES = [
  "platform-network",
  "dokploy-network",
  "host",
  "bridge",
  "none",
  "ingress",
  "docker_gwbridge",
];

export const networkNameSchema = z
  .string()
  .min(1)
  .max(48)
  .regex(
    /^[a-zA-Z0-9][a-zA-Z0-9_.-]*$/,
    "Network name must start with a letter or digit and contain only letters, digits, '_', '.' or '-'",
  )
  .refine(
    (name) => !RESERVED_NETWORK_NAMES.includes(name.toLowerCase()) && !/^platform-/i.test(name),
    `This name is reserved (${RESERVED_NETWORK_NAMES.join(", ")}, platform-*).`,
  );

export const networkIdSchema = z.string().min(1).max(64);
export const optionalServerId = { serverId: serverIdSchema.optional() };

export const createNetworkInput = z.object({
  name: networkNameSchema,
  driver: z.enum(["overlay", "bridge"]).optional(),
  internal: z.boolean().optional(),
  /** Dokploy's CLI sends it as text (`--mtu 1400`); Linux takes 68 up to 65535. */
  mtu: z.coerce.number().int().min(68).max(65535).optional(),
  ...optionalServerId,
});
export type CreateNetworkInput = z.infer<typeof createNetworkInput>;

/** networkIds of applications, compose stacks and database services (Dokploy's text[] column). */
export const networkIdsSchema = z.array(networkIdSchema).max(20);

export const importNetworksInput = z.object({
  ...optionalServerId,
  names: z.array(z.string().min(1).max(128)).min(1).max(50),
});

// ---- answers ---------------------------------------------------------------------------------

export const networkSchema = z.object({
  networkId: z.string(),
  name: z.string(),
  /** The engine's name (what a compose file names as an external network). */
  dockerName: z.string(),
  driver: z.enum(["overlay", "bridge"]),
  scope: z.string(),
  internal: z.boolean(),
  attachable: z.boolean(),
  ingress: z.boolean(),
  configOnly: z.boolean(),
  enableIPv4: z.boolean(),
  enableIPv6: z.boolean(),
  /** The driver's MTU the network was created with; null: the engine's default. */
  mtu: z.number().nullable(),
  createdAt: z.string(),
  organizationId: z.string(),
  serverId: z.string().nullable(),
});

export function toNetworkView(row: NetworkRow): z.infer<typeof networkSchema> {
  return {
    networkId: row.networkId,
    name: row.name,
    dockerName: row.dockerName,
    driver: row.driver,
    scope: row.driver === "overlay" ? "swarm" : "local",
    internal: row.internal,
    attachable: row.attachable,
    ingress: false,
    configOnly: false,
    enableIPv4: true,
    enableIPv6: row.enableIpv6,
    mtu: row.mtu,
    createdAt: row.createdAt,
    organizationId: row.organizationId,
    serverId: row.serverId,
  };
}

// ---- repository ------------------------------------------------------------------------------

/** The organization's networks of the server (this machine when omitted); another's server is a 404. */
export async function listNetworks(ctx: ServiceContext, organizationId: string, serverId?: string | null) {
  if (serverId && serverId !== LOCAL_SERVER_ID && !(await findServer(ctx.db, organizationId, serverId))) {
    throw notFound("Server");
  }
  let query = ctx.db
    .selectFrom("networks")
    .selectAll()
    .where("organizationId", "=", organizationId)
    .orderBy("createdAt", "desc");
  query =
    serverId && serverId !== LOCAL_SERVER_ID
      ? query.where("serverId", "=", serverId)
      : query.where("serverId", "is", null);
  return query.execute();
}

export async function findNetwork(
  ctx: ServiceContext,
  organizationId: string,
  networkId: string,
): Promise<NetworkRow> {
  const row = await ctx.db
    .selectFrom("networks")
    .selectAll()
    .where("networkId", "=", networkId)
    .where("organizationId", "=", organizationId)
    .executeTakeFirst();
  if (!row) throw notFound("Network");
  return row;
}

// ---- through the agent -----------------------------------------------------------------------

/**
 * The organization's own labelled networks; an unlabelled one only for a row that recorded one
 * (network.import by the instance's owner, who alone may import them: seesUnmanaged).
 */
const scopeOf = (caller: Caller, row?: NetworkRow): ContainerScope => ({
  organizationId: caller.organizationId,
  includeUnmanaged: row !== undefined && !isNamespaced(row),
});

/** True when the engine's name is in the organization's namespace (one the platform labelled). */
const isNamespaced = (row: NetworkRow) =>
  row.dockerName.startsWith(organizationNetworkPrefix(row.organizationId));

const agentOf = (row: NetworkRow) => row.serverId ?? LOCAL_SERVER_ID;

export async function createNetwork(ctx: ServiceContext, caller: Caller, input: CreateNetworkInput) {
  // A server of another organization is a 404 before anything is written.
  const agent = await agentServerId(ctx, caller.organizationId, input.serverId);
  const serverId = agent === LOCAL_SERVER_ID ? null : agent;
  const row: NetworkRow = {
    networkId: newId(),
    organizationId: caller.organizationId,
    serverId,
    name: input.name,
    dockerName: organizationNetworkName(caller.organizationId, input.name),
    driver: input.driver ?? "overlay",
    internal: input.internal ?? false,
    attachable: (input.driver ?? "overlay") === "overlay",
    enableIpv6: false,
    mtu: input.mtu ?? null,
    dockerId: null,
    createdAt: new Date().toISOString(),
  };
  try {
    await ctx.db.insertInto("networks").values(row).execute();
  } catch (error) {
    if ((error as { code?: string }).code === "23505") {
      throw conflict(`Invalid input: name: the organization already has a network named ${input.name}`, {
        fields: ["name"],
      });
    }
    throw error;
  }
  try {
    row.dockerId = await createOnEngine(ctx, caller, row);
  } catch (error) {
    await ctx.db.deleteFrom("networks").where("networkId", "=", row.networkId).execute();
    throw error;
  }
  return toNetworkView(row);
}

export async function inspectNetwork(ctx: ServiceContext, caller: Caller, networkId: string) {
  const row = await findNetwork(ctx, caller.organizationId, networkId);
  const agent = agentOf(row);
  const { inspectJson } = await callAgent(
    agent,
    () =>
      ctx.agents.client.call(agent, "inspectNetwork", {
        name: row.dockerName,
        scope: scopeOf(caller, row),
      }),
    ctx.logger,
  );
  return JSON.parse(inspectJson) as Record<string, unknown>;
}

/** Removes the network from its engine, then its row; refused (409) while something uses it. */
export async function removeNetwork(ctx: ServiceContext, caller: Caller, networkId: string) {
  const row = await findNetwork(ctx, caller.organizationId, networkId);
  const users = await networkUsers(ctx, caller.organizationId, row.networkId);
  if (users.length > 0) {
    throw conflict(
      `the network ${row.name} is in use by ${users.join(", ")}: remove it from their networkIds first`,
    );
  }
  const agent = agentOf(row);
  try {
    await callAgent(
      agent,
      () =>
        ctx.agents.client.call(
          agent,
          "removeNetwork",
          { name: row.dockerName, scope: scopeOf(caller, row) },
          60_000,
        ),
      ctx.logger,
    );
  } catch (error) {
    // Already gone from the engine (removed by hand): the row goes too.
    if (!(error instanceof ApiError && error.code === "NOT_FOUND")) throw error;
  }
  await ctx.db
    .deleteFrom("networks")
    .where("networkId", "=", row.networkId)
    .where("organizationId", "=", caller.organizationId)
    .execute();
  return toNetworkView(row);
}

// ---- networkIds of applications, compose stacks and database services --------------------------

/** The service (or stack) a networkIds list belongs to: its server, and how it runs. */
export interface NetworkTarget {
  serverId: string | null;
  /** A Swarm service (application, database) or a stack: overlay networks only. */
  swarm: boolean;
}

const networkIdsError = (message: string) =>
  badRequest(`Invalid input: networkIds: ${message}`, { fields: ["networkIds"] });

/**
 * Refuses (400 naming networkIds) an id that is not one of the organization's networks (another
 * organization's is as unknown as a missing one), a network on another server, a bridge for a
 * Swarm service or stack, and, for a Swarm service, a network the platform did not make (the
 * agent joins a service only to networks carrying the organization's labels).
 */
export async function checkNetworkIds(
  ctx: ServiceContext,
  organizationId: string,
  target: NetworkTarget,
  networkIds: readonly string[] | undefined,
): Promise<void> {
  if (!networkIds || networkIds.length === 0) return;
  const rows = await networkRows(ctx, organizationId, networkIds);
  for (const id of networkIds) {
    const row = rows.get(id);
    if (!row) throw networkIdsError(`network ${id} not found`);
    if ((row.serverId ?? null) !== (target.serverId ?? null)) {
      throw networkIdsError(`the network ${row.name} is on another server than this service`);
    }
    if (target.swarm && row.driver !== "overlay") {
      throw networkIdsError(
        `the network ${row.name} is a bridge: a Swarm service joins overlay networks only`,
      );
    }
    if (target.swarm && !isNamespaced(row)) {
      throw networkIdsError(
        `the network ${row.name} was imported, not made by the platform: only compose stacks join it`,
      );
    }
  }
}

async function networkRows(ctx: ServiceContext, organizationId: string, ids: readonly string[]) {
  const rows = await ctx.db
    .selectFrom("networks")
    .selectAll()
    .where("organizationId", "=", organizationId)
    .where("networkId", "in", [...new Set(ids)])
    .execute();
  return new Map(rows.map((row) => [row.networkId, row]));
}

/** The engine's names of networkIds at deploy; a network gone since the save fails the deploy. */
export async function networkDockerNames(
  ctx: ServiceContext,
  organizationId: string,
  networkIds: readonly string[],
): Promise<string[]> {
  if (networkIds.length === 0) return [];
  const rows = await networkRows(ctx, organizationId, networkIds);
  return networkIds.map((id) => {
    const row = rows.get(id);
    if (!row) throw new Error(`networkIds: the network ${id} no longer exists: remove it from networkIds`);
    return row.dockerName;
  });
}

const USER_TABLES: { table: WorkloadTable; kind: string }[] = [
  { table: "applications", kind: "application" },
  { table: "compose", kind: "compose" },
  { table: "databaseServices", kind: "database" },
];

/** "<kind> <name>" of every service of the organization whose networkIds names the network. */
export async function networkUsers(
  ctx: ServiceContext,
  organizationId: string,
  networkId: string,
): Promise<string[]> {
  const users: string[] = [];
  for (const { table, kind } of USER_TABLES) {
    const rows = await ownedBy(
      ctx.db
        .selectFrom(table)
        .select(`${table}.name as name`)
        .where((eb) => eb(eb.val(networkId), "=", eb.fn.any(`${table}.networkIds`))),
      `${table}.environmentId`,
      organizationId,
    ).execute();
    users.push(...rows.map((row) => `${kind} ${row.name}`));
  }
  return users;
}

// ---- import, recreate, resync ------------------------------------------------------------------

/**
 * The engine's networks the caller may record on the server: its organization's labelled ones
 * and, for an owner or admin of the machine's organization (this machine: the instance
 * organization; a server: the organization that added it), unlabelled ones, as Dokploy imports
 * any bridge or overlay network that is not the engine's or its own (docs/decisions.md).
 */
async function engineNetworks(ctx: ServiceContext, caller: Caller, serverId: string | undefined) {
  const agent = await agentServerId(ctx, caller.organizationId, serverId);
  // agentServerId answered: the machine is the caller organization's (as docker.* decides).
  const includeUnmanaged = caller.role !== "member";
  const { networks } = await callAgent(
    agent,
    () =>
      ctx.agents.client.call(agent, "listEngineNetworks", {
        scope: { organizationId: caller.organizationId, includeUnmanaged },
      }),
    ctx.logger,
  );
  return { agent, includeUnmanaged, networks };
}

/** The row's name: the organization's own name for a namespaced network, else the engine's. */
function rowName(organizationId: string, dockerName: string) {
  const prefix = organizationNetworkPrefix(organizationId);
  return dockerName.startsWith(prefix) ? dockerName.slice(prefix.length) : dockerName;
}

/** What resync would change (Dokploy's findNetworksToSync): importable and missing networks. */
export async function networksToSync(ctx: ServiceContext, caller: Caller, serverId?: string) {
  const rows = await listNetworks(ctx, caller.organizationId, serverId);
  const { networks } = await engineNetworks(ctx, caller, serverId);
  const recorded = new Set(rows.map((row) => row.dockerName));
  const onEngine = new Set(networks.map((network) => network.name));
  return {
    importable: networks
      .filter((network) => !recorded.has(network.name))
      .map((network) => ({
        name: network.name,
        driver: network.driver,
        internal: network.internal,
        attachable: network.attachable,
        subnets: network.subnets,
        labelled: network.labelled,
      })),
    missing: rows
      .filter((row) => !onEngine.has(row.dockerName))
      .map((row) => ({ networkId: row.networkId, name: row.name })),
  };
}

/**
 * Records engine networks (Dokploy's importDockerNetworks): each name the agent confirms the
 * caller may record; a name already recorded, unknown, another organization's or the platform's
 * is an entry of `errors` (as a missing network), nothing written for it.
 */
export async function importNetworks(
  ctx: ServiceContext,
  caller: Caller,
  input: z.infer<typeof importNetworksInput>,
) {
  const { agent, includeUnmanaged } = await engineNetworks(ctx, caller, input.serverId);
  const serverId = agent === LOCAL_SERVER_ID ? null : agent;
  const recorded = new Set(
    (await listNetworks(ctx, caller.organizationId, input.serverId)).map((row) => row.dockerName),
  );
  const imported: string[] = [];
  const errors: { name: string; error: string }[] = [];
  for (const name of [...new Set(input.names)]) {
    if (recorded.has(name)) {
      errors.push({ name, error: "Already imported" });
      continue;
    }
    try {
      const config = await callAgent(
        agent,
        () =>
          ctx.agents.client.call(agent, "importNetwork", {
            name,
            scope: { organizationId: caller.organizationId, includeUnmanaged },
          }),
        ctx.logger,
      );
      await recordEngineNetwork(ctx, caller.organizationId, serverId, JSON.parse(config.inspectJson));
      imported.push(name);
    } catch (error) {
      errors.push({ name, error: error instanceof Error ? error.message : String(error) });
    }
  }
  return { imported, errors };
}

async function recordEngineNetwork(
  ctx: ServiceContext,
  organizationId: string,
  serverId: string | null,
  info: {
    Id: string;
    Name: string;
    Driver: string;
    Internal?: boolean;
    Attachable?: boolean;
    EnableIPv6?: boolean;
    Options?: Record<string, string>;
  },
): Promise<NetworkRow> {
  const row: NetworkRow = {
    networkId: newId(),
    organizationId,
    serverId,
    name: rowName(organizationId, info.Name),
    dockerName: info.Name,
    driver: info.Driver === "bridge" ? "bridge" : "overlay",
    internal: info.Internal ?? false,
    attachable: info.Attachable ?? false,
    enableIpv6: info.EnableIPv6 ?? false,
    mtu: engineMtu(info.Options),
    dockerId: info.Id,
    createdAt: new Date().toISOString(),
  };
  try {
    await ctx.db.insertInto("networks").values(row).execute();
  } catch (error) {
    if ((error as { code?: string }).code === "23505") {
      throw new Error(`the organization already has a network named ${row.name}`);
    }
    throw error;
  }
  return row;
}

/**
 * Re-creates on the engine a recorded network that is missing there (removed by hand), as it was
 * recorded; 409 when the engine still has it. An imported network the platform did not make
 * cannot be re-created with the organization's labels under its foreign name: 400.
 */
export async function recreateNetwork(ctx: ServiceContext, caller: Caller, networkId: string) {
  const row = await findNetwork(ctx, caller.organizationId, networkId);
  if (!isNamespaced(row)) {
    throw badRequest(
      `Invalid input: networkId: the network ${row.name} was imported, not made by the platform: re-create it on the engine`,
      { fields: ["networkId"] },
    );
  }
  row.dockerId = await createOnEngine(ctx, caller, row);
  return toNetworkView(row);
}

/** The MTU an engine network was created with (its driver option), null when it has none. */
function engineMtu(options: Record<string, string> | undefined): number | null {
  const mtu = Number(options?.["com.docker.network.driver.mtu"]);
  return Number.isInteger(mtu) && mtu > 0 ? mtu : null;
}

/** Creates the recorded network on its engine, as recorded, and keeps the engine's id on its row. */
async function createOnEngine(ctx: ServiceContext, caller: Caller, row: NetworkRow): Promise<string> {
  const agent = agentOf(row);
  const created = await callAgent(
    agent,
    () =>
      ctx.agents.client.call(
        agent,
        "createNetwork",
        {
          name: row.dockerName,
          scope: scopeOf(caller),
          driver: row.driver,
          internal: row.internal,
          enableIpv6: row.enableIpv6,
          mtu: row.mtu ?? 0,
          labels: {},
        },
        60_000,
      ),
    ctx.logger,
  );
  await ctx.db
    .updateTable("networks")
    .set({ dockerId: created.networkId })
    .where("networkId", "=", row.networkId)
    .where("organizationId", "=", row.organizationId)
    .execute();
  return created.networkId;
}

/**
 * Reconciles the table with the engine: records the organization's labelled networks the table
 * lacks (a row lost, a network made by an earlier install), and drops rows whose network is gone
 * from the engine unless a service names it in networkIds (those stay, for network.recreate).
 */
export async function resyncNetworks(ctx: ServiceContext, caller: Caller, serverId?: string) {
  const rows = await listNetworks(ctx, caller.organizationId, serverId);
  const { agent, networks } = await engineNetworks(ctx, caller, serverId);
  const recorded = new Set(rows.map((row) => row.dockerName));
  const onEngine = new Set(networks.map((network) => network.name));
  const imported: z.infer<typeof networkSchema>[] = [];
  for (const network of networks) {
    if (!network.labelled || recorded.has(network.name)) continue;
    const row = await recordEngineNetwork(
      ctx,
      caller.organizationId,
      agent === LOCAL_SERVER_ID ? null : agent,
      {
        Id: network.networkId,
        Name: network.name,
        Driver: network.driver,
        Internal: network.internal,
        Attachable: network.attachable,
      },
    );
    imported.push(toNetworkView(row));
  }
  const removed: z.infer<typeof networkSchema>[] = [];
  const kept: { networkId: string; name: string; usedBy: string[] }[] = [];
  for (const row of rows.filter((row) => !onEngine.has(row.dockerName))) {
    const users = await networkUsers(ctx, caller.organizationId, row.networkId);
    if (users.length > 0) {
      kept.push({ networkId: row.networkId, name: row.name, usedBy: users });
      continue;
    }
    await ctx.db
      .deleteFrom("networks")
      .where("networkId", "=", row.networkId)
      .where("organizationId", "=", caller.organizationId)
      .execute();
    removed.push(toNetworkView(row));
  }
  return { imported, removed, kept };
}
