/**
 * swarm (Dokploy's router of the same name, issue 39): a server's Swarm nodes, one node, the
 * services the caller may see and their containers' stats. Logic and tenancy in swarm/index.ts.
 */
import { z } from "zod";
import { serverIdSchema } from "../agents/container-views.ts";
import { defineRouter, query } from "../procedure.ts";
import {
  containerStatsRowSchema,
  getContainerStats,
  getNodeApps,
  getNodeInfo,
  getNodes,
  nodeAppSchema,
  nodeInfoSchema,
  nodeRefSchema,
  nodeRowSchema,
} from "../swarm/index.ts";

const serverInput = z.object({ serverId: serverIdSchema.optional() });

export const swarmRouter = defineRouter("swarm", {
  getNodes: query({
    summary:
      "The Swarm nodes of a server (this machine when serverId is omitted), as `docker node ls` lists them",
    access: "member",
    input: serverInput,
    output: z.array(nodeRowSchema),
    handler: ({ ctx, caller, input }) => getNodes(ctx, caller, input.serverId),
  }),

  getNodeInfo: query({
    summary: "One Swarm node (by id or host name) as `docker node inspect` shows it",
    access: "member",
    input: z.object({ nodeId: nodeRefSchema, serverId: serverIdSchema.optional() }),
    output: nodeInfoSchema,
    handler: ({ ctx, caller, input }) => getNodeInfo(ctx, caller, input.nodeId, input.serverId),
  }),

  getNodeApps: query({
    summary: "The Swarm services of the server the caller may see, as `docker service ls` lists them",
    access: "member",
    input: serverInput,
    output: z.array(nodeAppSchema),
    handler: ({ ctx, caller, input }) => getNodeApps(ctx, caller, input.serverId),
  }),

  getContainerStats: query({
    summary: "One stats sample of each running container the caller may see, as `docker stats --no-stream`",
    access: "member",
    input: serverInput,
    output: z.array(containerStatsRowSchema),
    handler: ({ ctx, caller, input }) => getContainerStats(ctx, caller, input.serverId),
  }),
});
