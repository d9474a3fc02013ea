/**
 * cluster (not in the spec; Dokploy's cluster router, issue 30): the Swarm nodes of a server,
 * or of this machine when serverId is omitted, through that server's agent (the Swarm manager).
 *
 * - getNodes answers Docker's node objects (as Dokploy does) with `platform`: the Platform
 *   server a node is (label platform.server, set when it joined through joinServerId) and that
 *   server's agent: online, and when it was last seen.
 * - addWorker / addManager answer Dokploy's join command for a machine Platform does not manage;
 *   with joinServerId (a server of the caller's organization) that server's agent joins the
 *   Swarm itself: the join token goes from one agent to the other and is never answered or
 *   logged.
 * - updateNode drains, pauses or activates a node, promotes or demotes it, and sets its labels;
 *   removeWorker drains and removes a node (Dokploy); a node that is a Platform server also
 *   leaves the Swarm through its own agent, so its engine is free again.
 *
 * Tenancy: both servers must be the caller's organization's (another's is a 404, as unknown);
 * the platform.* node labels (ownership) are the platform's: set at join, never by a caller.
 * Access: getNodes is docker.*'s rule (a member needs canAccessToDocker: the nodes show host
 * names, engines and the Swarm's TLS trust root); everything else is for administrators.
 */
import { z } from "zod";
import { serverIdSchema } from "../agents/container-views.ts";
import { callAgent } from "../agents/errors.ts";
import { LOCAL_SERVER_ID } from "../agents/hub.ts";
import type { Caller, ServiceContext } from "../context.ts";
import { badRequest, notFound } from "../errors.ts";
import { defineRouter, mutation, query } from "../procedure.ts";
import { requireFeature } from "../projects/permissions.ts";
import { agentServerId, findServer } from "../servers/repository.ts";

/** Node labels the platform owns: which Platform server and organization a node is. */
export const NODE_SERVER_LABEL = "platform.server";
export const NODE_ORGANIZATION_LABEL = "platform.organization";
const RESERVED_LABEL_PREFIX = "platform.";
/** Joining waits for the engine's first contact with the manager (Docker's own timeout is 20 s). */
const JOIN_TIMEOUT_MS = 60_000;

const nodeIdSchema = z
  .string()
  .regex(/^[a-z0-9]{1,64}$/, "must be a Swarm node id (lowercase letters and digits)");
/** How long a removed node's agent may take to leave its Swarm (its tasks stop first). */
const LEAVE_SWARM_TIMEOUT_MS = 60_000;

const labelsSchema = z
  .record(
    z.string().regex(/^[a-zA-Z0-9][a-zA-Z0-9._\-/]{0,127}$/, "must be a label key"),
    z.string().max(1024),
  )
  .refine((labels) => Object.keys(labels).length <= 64, "at most 64 labels");

const platformViewSchema = z
  .object({
    serverId: z.string(),
    name: z.string(),
    agentOnline: z.boolean(),
    lastSeenAt: z.string().nullable(),
  })
  .nullable();
const nodeSchema = z.looseObject({ ID: z.string(), platform: platformViewSchema.optional() });
const joinSchema = z.object({
  command: z.string().nullable(),
  version: z.string(),
  nodeId: z.string().optional(),
});

async function managerOf(ctx: ServiceContext, caller: Caller, serverId: string | undefined) {
  return agentServerId(ctx, caller.organizationId, serverId);
}

interface DockerNode {
  ID: string;
  Spec?: { Labels?: Record<string, string> };
}

/** The node's Platform server (when it is one of the caller's organization) and its agent. */
async function withPlatform(ctx: ServiceContext, caller: Caller, node: DockerNode) {
  const serverId = node.Spec?.Labels?.[NODE_SERVER_LABEL];
  if (!serverId || node.Spec?.Labels?.[NODE_ORGANIZATION_LABEL] !== caller.organizationId) {
    return { ...node, platform: null };
  }
  const server = await findServer(ctx.db, caller.organizationId, serverId);
  if (!server) return { ...node, platform: null };
  const connection = ctx.agents.connectionOf(server);
  return {
    ...node,
    platform: {
      serverId,
      name: server.name,
      agentOnline: connection.online,
      lastSeenAt: connection.lastHeartbeatAt,
    },
  };
}

async function listNodes(ctx: ServiceContext, manager: string): Promise<DockerNode[]> {
  const list = await callAgent(manager, () => ctx.agents.client.listNodes(manager), ctx.logger);
  return list.nodeJson.map((json) => JSON.parse(json) as DockerNode);
}

/** Adds a worker or a manager: the join command, or the join of a Platform server's engine. */
async function addNode(
  ctx: ServiceContext,
  caller: Caller,
  input: { serverId?: string; joinServerId?: string },
  manager: boolean,
) {
  const managerId = await managerOf(ctx, caller, input.serverId);
  const join = input.joinServerId;
  if (join !== undefined) {
    if (join === LOCAL_SERVER_ID) {
      throw badRequest("Invalid input: joinServerId: this machine cannot join another server's Swarm", {
        fields: ["joinServerId"],
      });
    }
    if (join === managerId) {
      throw badRequest("Invalid input: joinServerId: a server cannot join its own Swarm", {
        fields: ["joinServerId"],
      });
    }
  }
  const joinId = join === undefined ? undefined : await agentServerId(ctx, caller.organizationId, join);
  const token = await callAgent(
    managerId,
    () => ctx.agents.client.swarmJoinToken(managerId, manager),
    ctx.logger,
  );
  if (joinId === undefined) {
    // Dokploy's answer: the command to run on a machine Platform does not manage.
    const server =
      managerId === LOCAL_SERVER_ID ? undefined : await findServer(ctx.db, caller.organizationId, managerId);
    const port = token.address.slice(token.address.lastIndexOf(":") + 1);
    const address = server?.ipAddress ? `${server.ipAddress}:${port}` : token.address;
    return { command: `docker swarm join --token ${token.token} ${address}`, version: token.engineVersion };
  }
  const joined = await callAgent(
    joinId,
    () =>
      ctx.agents.client.joinSwarm(
        joinId,
        { token: token.token, remoteAddress: token.address, advertiseAddress: "" },
        JOIN_TIMEOUT_MS,
      ),
    ctx.logger,
  );
  // The new node carries which Platform server and organization it is.
  await callAgent(
    managerId,
    () =>
      ctx.agents.client.updateNode(managerId, {
        nodeId: joined.nodeId,
        availability: "",
        role: "",
        labels: { [NODE_SERVER_LABEL]: joinId, [NODE_ORGANIZATION_LABEL]: caller.organizationId },
        setLabels: true,
      }),
    ctx.logger,
  );
  ctx.logger.info(
    { serverId: managerId, joinServerId: joinId, nodeId: joined.nodeId },
    "server joined a Swarm",
  );
  return { command: null, version: token.engineVersion, nodeId: joined.nodeId };
}

const addInput = z.object({
  serverId: serverIdSchema.optional(),
  joinServerId: serverIdSchema.optional(),
});

export const clusterRouter = defineRouter("cluster", {
  getNodes: query({
    summary: "The Swarm nodes of a server (this machine when serverId is omitted) with their agents",
    access: "member",
    input: z.object({ serverId: serverIdSchema.optional() }),
    output: z.array(nodeSchema),
    handler: async ({ ctx, caller, input }) => {
      requireFeature(caller, "docker");
      const manager = await managerOf(ctx, caller, input.serverId);
      const nodes = await listNodes(ctx, manager);
      return Promise.all(nodes.map((node) => withPlatform(ctx, caller, node)));
    },
  }),

  addWorker: query({
    summary: "The command that joins a machine to the server's Swarm as a worker, or joins joinServerId",
    access: "admin",
    input: addInput,
    output: joinSchema,
    handler: ({ ctx, caller, input }) => addNode(ctx, caller, input, false),
  }),

  addManager: query({
    summary: "The command that joins a machine to the server's Swarm as a manager, or joins joinServerId",
    access: "admin",
    input: addInput,
    output: joinSchema,
    handler: ({ ctx, caller, input }) => addNode(ctx, caller, input, true),
  }),

  updateNode: mutation({
    summary: "Drain, pause or activate a node, promote or demote it, or set its labels",
    access: "admin",
    input: z.object({
      serverId: serverIdSchema.optional(),
      nodeId: nodeIdSchema,
      availability: z.enum(["active", "pause", "drain"]).optional(),
      role: z.enum(["worker", "manager"]).optional(),
      labels: labelsSchema.optional(),
    }),
    output: nodeSchema,
    handler: async ({ ctx, caller, input }) => {
      const reserved = Object.keys(input.labels ?? {}).filter((key) => key.startsWith(RESERVED_LABEL_PREFIX));
      if (reserved.length > 0) {
        throw badRequest(`Invalid input: labels: ${reserved[0]}: the platform.* labels are the platform's`, {
          fields: ["labels"],
        });
      }
      const manager = await managerOf(ctx, caller, input.serverId);
      let labels: Record<string, string> = {};
      if (input.labels) {
        // The caller sets its own labels; the platform's stay as they are.
        const current = (await listNodes(ctx, manager)).find((node) => node.ID === input.nodeId);
        const kept = Object.entries(current?.Spec?.Labels ?? {}).filter(([key]) =>
          key.startsWith(RESERVED_LABEL_PREFIX),
        );
        labels = { ...input.labels, ...Object.fromEntries(kept) };
      }
      const updated = await callAgent(
        manager,
        () =>
          ctx.agents.client.updateNode(manager, {
            nodeId: input.nodeId,
            availability: input.availability ?? "",
            role: input.role ?? "",
            labels,
            setLabels: input.labels !== undefined,
          }),
        ctx.logger,
      );
      return withPlatform(ctx, caller, JSON.parse(updated.nodeJson) as DockerNode);
    },
  }),

  removeWorker: mutation({
    summary: "Drain a node and remove it from the server's Swarm",
    access: "admin",
    input: z.object({ nodeId: nodeIdSchema, serverId: serverIdSchema.optional() }),
    output: z.boolean(),
    handler: async ({ ctx, caller, input }) => {
      const manager = await managerOf(ctx, caller, input.serverId);
      const node = (await listNodes(ctx, manager)).find((candidate) => candidate.ID === input.nodeId);
      if (!node) throw notFound("Node");
      // A node that is a server of the organization: its tasks move away first, then its own
      // agent leaves the Swarm so its engine is free again (best effort: it may be down).
      const member = (await withPlatform(ctx, caller, node)).platform;
      if (member && member.serverId !== manager) {
        await callAgent(
          manager,
          () =>
            ctx.agents.client.updateNode(manager, {
              nodeId: input.nodeId,
              availability: "drain",
              role: "",
              labels: {},
              setLabels: false,
            }),
          ctx.logger,
        );
        // Leaving waits for the node's tasks to stop: longer than a command's usual deadline.
        await ctx.agents.client
          .leaveSwarm(member.serverId, LEAVE_SWARM_TIMEOUT_MS)
          .catch((error: unknown) => {
            ctx.logger.warn(
              { err: error, serverId: member.serverId },
              "the removed node did not leave the Swarm",
            );
          });
      }
      const removed = await callAgent(
        manager,
        () => ctx.agents.client.removeNode(manager, input.nodeId),
        ctx.logger,
      );
      if (!removed.removed) throw notFound("Node");
      return true;
    },
  }),
});
