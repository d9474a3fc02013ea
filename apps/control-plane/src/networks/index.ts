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
import { organizationNetworkName } from "@platform/ownership";
import { z } from "zod";
import { serverIdSchema } from "../agents/container-views.ts";
import { callAgent } from "../agents/errors.ts";
import { LOCAL_SERVER_ID } from "../agents/hub.ts";
import type { Caller, ServiceContext } from "../context.ts";
import { newId } from "../crypto/ids.ts";
import type { NetworkRow } from "../db/schema.ts";
import { ApiError, conflict, notFound } from "../errors.ts";
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
  ...optionalServerId,
});
export type CreateNetworkInput = z.infer<typeof createNetworkInput>;

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
    createdAt: row.createdAt,
    organizationId: row.organizationId,
    serverId: row.serverId,
  };
}

// ---- repository ------------------------------------------------------------------------------

/** The organization's networks of the server (this machine when omitted); another's server is a 404. */
export async function listNetworks(
  services: ServiceContext,
  organizationId: string,
  serverId?: string | null,
) {
  if (
    serverId &&
    serverId !== LOCAL_SERVER_ID &&
    !(await findServer(services.db, organizationId, serverId))
  ) {
    throw notFound("Server");
  }
  let query = services.db
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
  services: ServiceContext,
  organizationId: string,
  networkId: string,
): Promise<NetworkRow> {
  const row = await services.db
    .selectFrom("networks")
    .selectAll()
    .where("networkId", "=", networkId)
    .where("organizationId", "=", organizationId)
    .executeTakeFirst();
  if (!row) throw notFound("Network");
  return row;
}

// ---- through the agent -----------------------------------------------------------------------

/** Only the organization's own labelled networks: never unlabelled ones, whatever the role. */
const scopeOf = (caller: Caller): ContainerScope => ({
  organizationId: caller.organizationId,
  includeUnmanaged: false,
});

const agentOf = (row: NetworkRow) => row.serverId ?? LOCAL_SERVER_ID;

export async function createNetwork(services: ServiceContext, caller: Caller, input: CreateNetworkInput) {
  // A server of another organization is a 404 before anything is written.
  const agent = await agentServerId(services, caller.organizationId, input.serverId);
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
    dockerId: null,
    createdAt: new Date().toISOString(),
  };
  try {
    await services.db.insertInto("networks").values(row).execute();
  } catch (error) {
    if ((error as { code?: string }).code === "23505") {
      throw conflict(`Invalid input: name: the organization already has a network named ${input.name}`, {
        fields: ["name"],
      });
    }
    throw error;
  }
  try {
    const created = await callAgent(
      agent,
      () =>
        services.agents.client.call(
          agent,
          "createNetwork",
          {
            name: row.dockerName,
            scope: scopeOf(caller),
            driver: row.driver,
            internal: row.internal,
            enableIpv6: false,
            labels: {},
          },
          60_000,
        ),
      services.logger,
    );
    row.dockerId = created.networkId;
    await services.db
      .updateTable("networks")
      .set({ dockerId: created.networkId })
      .where("networkId", "=", row.networkId)
      .execute();
  } catch (error) {
    await services.db.deleteFrom("networks").where("networkId", "=", row.networkId).execute();
    throw error;
  }
  return toNetworkView(row);
}

export async function inspectNetwork(services: ServiceContext, caller: Caller, networkId: string) {
  const row = await findNetwork(services, caller.organizationId, networkId);
  const agent = agentOf(row);
  const { inspectJson } = await callAgent(
    agent,
    () =>
      services.agents.client.call(agent, "inspectNetwork", { name: row.dockerName, scope: scopeOf(caller) }),
    services.logger,
  );
  return JSON.parse(inspectJson) as Record<string, unknown>;
}

/** Removes the network from its engine, then its row; refused (409) while something uses it. */
export async function removeNetwork(services: ServiceContext, caller: Caller, networkId: string) {
  const row = await findNetwork(services, caller.organizationId, networkId);
  const agent = agentOf(row);
  try {
    await callAgent(
      agent,
      () =>
        services.agents.client.call(
          agent,
          "removeNetwork",
          { name: row.dockerName, scope: scopeOf(caller) },
          60_000,
        ),
      services.logger,
    );
  } catch (error) {
    // Already gone from the engine (removed by hand): the row goes too.
    if (!(error instanceof ApiError && error.code === "NOT_FOUND")) throw error;
  }
  await services.db
    .deleteFrom("networks")
    .where("networkId", "=", row.networkId)
    .where("organizationId", "=", caller.organizationId)
    .execute();
  return toNetworkView(row);
}
