/**
 * network (Dokploy's router of the same name): the organization's networks on one of its
 * servers (this machine when serverId is omitted). Members read; owners and admins create and
 * remove. Logic and tenancy in networks/index.ts.
 */
import { z } from "zod";
import {
  createNetwork,
  createNetworkInput,
  findNetwork,
  inspectNetwork,
  listNetworks,
  networkIdSchema,
  networkSchema,
  optionalServerId,
  removeNetwork,
  toNetworkView,
} from "../networks/index.ts";
import { defineRouter, mutation, query } from "../procedure.ts";

const networkIdInput = z.object({ networkId: networkIdSchema });

export const networkRouter = defineRouter("network", {
  all: query({
    summary:
      "The organization's networks on the server (this machine when serverId is omitted), newest first",
    access: "member",
    input: z.object(optionalServerId),
    output: z.array(networkSchema),
    handler: async ({ services, caller, input }) =>
      (await listNetworks(services, caller.organizationId, input.serverId)).map(toNetworkView),
  }),

  one: query({
    summary: "One network of the organization",
    access: "member",
    input: networkIdInput,
    output: networkSchema,
    handler: async ({ services, caller, input }) =>
      toNetworkView(await findNetwork(services, caller.organizationId, input.networkId)),
  }),

  create: mutation({
    summary: "Create an attachable overlay (or bridge) network for the organization's services",
    access: "admin",
    input: createNetworkInput,
    output: networkSchema,
    handler: ({ services, caller, input }) => createNetwork(services, caller, input),
  }),

  inspect: query({
    summary: "The network as the engine has it (docker network inspect)",
    access: "member",
    input: networkIdInput,
    output: z.record(z.string(), z.unknown()),
    handler: ({ services, caller, input }) => inspectNetwork(services, caller, input.networkId),
  }),

  remove: mutation({
    summary: "Remove a network nothing uses (409 naming what uses it)",
    access: "admin",
    input: networkIdInput,
    output: networkSchema,
    handler: ({ services, caller, input }) => removeNetwork(services, caller, input.networkId),
  }),
});
