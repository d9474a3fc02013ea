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
  importNetworks,
  importNetworksInput,
  inspectNetwork,
  listNetworks,
  networkIdSchema,
  networkSchema,
  networksToSync,
  optionalServerId,
  recreateNetwork,
  removeNetwork,
  resyncNetworks,
  toNetworkView,
} from "../networks/index.ts";
import { defineRouter, mutation, query } from "../procedure.ts";

const networkIdInput = z.object({ networkId: networkIdSchema });

const networksToSyncSchema = z.object({
  importable: z.array(
    z.object({
      name: z.string(),
      driver: z.string(),
      internal: z.boolean(),
      attachable: z.boolean(),
      subnets: z.array(z.string()),
      labelled: z.boolean(),
    }),
  ),
  missing: z.array(z.object({ networkId: z.string(), name: z.string() })),
});

export const networkRouter = defineRouter("network", {
  all: query({
    summary:
      "The organization's networks on the server (this machine when serverId is omitted), newest first",
    access: "member",
    input: z.object(optionalServerId),
    output: z.array(networkSchema),
    handler: async ({ ctx, caller, input }) =>
      (await listNetworks(ctx, caller.organizationId, input.serverId)).map(toNetworkView),
  }),

  one: query({
    summary: "One network of the organization",
    access: "member",
    input: networkIdInput,
    output: networkSchema,
    handler: async ({ ctx, caller, input }) =>
      toNetworkView(await findNetwork(ctx, caller.organizationId, input.networkId)),
  }),

  create: mutation({
    summary: "Create an attachable overlay (or bridge) network for the organization's services",
    access: "admin",
    input: createNetworkInput,
    output: networkSchema,
    handler: ({ ctx, caller, input }) => createNetwork(ctx, caller, input),
  }),

  inspect: query({
    summary: "The network as the engine has it (docker network inspect)",
    access: "member",
    input: networkIdInput,
    output: z.record(z.string(), z.unknown()),
    handler: ({ ctx, caller, input }) => inspectNetwork(ctx, caller, input.networkId),
  }),

  remove: mutation({
    summary: "Remove a network nothing uses (409 naming what uses it)",
    access: "admin",
    input: networkIdInput,
    output: networkSchema,
    handler: ({ ctx, caller, input }) => removeNetwork(ctx, caller, input.networkId),
  }),

  networksToSync: query({
    summary:
      "What network.resync and network.import would change: engine networks the organization may record (importable) and recorded networks gone from the engine (missing)",
    access: "member",
    input: z.object(optionalServerId),
    output: networksToSyncSchema,
    handler: ({ ctx, caller, input }) => networksToSync(ctx, caller, input.serverId),
  }),

  import: mutation({
    summary:
      "Record engine networks by name: the organization's labelled ones, and unlabelled ones for owners and admins; never another organization's or the platform's",
    access: "admin",
    input: importNetworksInput,
    output: z.object({
      imported: z.array(z.string()),
      errors: z.array(z.object({ name: z.string(), error: z.string() })),
    }),
    handler: ({ ctx, caller, input }) => importNetworks(ctx, caller, input),
  }),

  recreate: mutation({
    summary: "Re-create on the engine a recorded network that is missing there (removed by hand)",
    access: "admin",
    input: networkIdInput,
    output: networkSchema,
    handler: ({ ctx, caller, input }) => recreateNetwork(ctx, caller, input.networkId),
  }),

  resync: mutation({
    summary:
      "Reconcile the table with the engine: record the organization's labelled networks it lacks, drop rows of networks gone from the engine that no service names",
    access: "admin",
    input: z.object(optionalServerId),
    output: z.object({
      imported: z.array(networkSchema),
      removed: z.array(networkSchema),
      kept: z.array(z.object({ networkId: z.string(), name: z.string(), usedBy: z.array(z.string()) })),
    }),
    handler: ({ ctx, caller, input }) => resyncNetworks(ctx, caller, input.serverId),
  }),
});
