/**
 * domain (spec 2.7, 4.4): an application's or a compose service's hosts and paths, routed by the
 * proxy of its server (domains/service.ts does the work).
 */
import { isIPv4, isIPv6 } from "node:net";
import { isValidName } from "@platform/names";
import { hostSchema, hostToAscii, isWildcardHost } from "@platform/traefik-config";
import { z } from "zod";
import { composeDomains } from "../compose/deploy.ts";
import { loadCallerCompose } from "../compose/repository.ts";
import { validateDomainDns } from "../domains/dns.ts";
import { listApplicationDomains } from "../domains/repository.ts";
import {
  createDomainInput,
  domainIdInput,
  domainSchema,
  toDomainView,
  updateDomainInput,
} from "../domains/schemas.ts";
import {
  createDomain,
  deleteDomain,
  generateDomain,
  loadDomain,
  loadDomainApplication,
  serverIpOf,
  toggleDomain,
  updateDomain,
} from "../domains/service.ts";
import { notFound } from "../errors.ts";
import { defineRouter, mutation, query } from "../procedure.ts";
import { findServer } from "../servers/repository.ts";

export const domainRouter = defineRouter("domain", {
  create: mutation({
    summary: "Add a domain to an application; its Traefik file is rewritten at once",
    access: "member",
    input: createDomainInput,
    output: domainSchema,
    handler: ({ ctx, caller, input }) => createDomain(ctx, caller, input),
  }),

  byApplicationId: query({
    summary: "The domains of an application",
    access: "member",
    input: z.object({ applicationId: z.string().min(1).max(64) }),
    output: z.array(domainSchema),
    handler: async ({ ctx, caller, input }) => {
      const application = await loadDomainApplication(ctx, caller, input.applicationId);
      return (await listApplicationDomains(ctx.db, application.applicationId)).map(toDomainView);
    },
  }),

  byComposeId: query({
    summary: "The domains of a compose service",
    access: "member",
    input: z.object({ composeId: z.string().min(1).max(64) }),
    output: z.array(domainSchema),
    handler: async ({ ctx, caller, input }) => {
      const compose = await loadCallerCompose(ctx.db, caller, input.composeId);
      return (await composeDomains(ctx, compose.composeId)).map(toDomainView);
    },
  }),

  one: query({
    summary: "One domain",
    access: "member",
    input: domainIdInput,
    output: domainSchema,
    handler: async ({ ctx, caller, input }) => toDomainView(await loadDomain(ctx, caller, input.domainId)),
  }),

  update: mutation({
    summary: "Change a domain; its application's Traefik file is rewritten at once",
    access: "member",
    input: updateDomainInput,
    output: domainSchema,
    handler: ({ ctx, caller, input }) => updateDomain(ctx, caller, input),
  }),

  delete: mutation({
    summary: "Remove a domain; the application's Traefik file is rewritten (or removed with the last)",
    access: "member",
    input: domainIdInput,
    output: domainSchema,
    handler: ({ ctx, caller, input }) => deleteDomain(ctx, caller, input.domainId),
  }),

  toggleEnable: mutation({
    summary:
      "Disable a domain (kept, routed no more) or enable it again; its Traefik file is rewritten at once",
    access: "member",
    input: domainIdInput,
    output: domainSchema.extend({ requiresRedeploy: z.boolean() }),
    // Stacks are routed by their Traefik file too (compose/proxy.ts): no redeploy needed.
    handler: async ({ ctx, caller, input }) => ({
      ...(await toggleDomain(ctx, caller, input.domainId)),
      requiresRedeploy: false,
    }),
  }),

  generateDomain: mutation({
    summary: "A free host for an application: <appName>-<hash>.<server-ip>.<wildcard domain>",
    access: "member",
    input: z.object({
      appName: z.string().min(1).max(63).refine(isValidName, "must match ^[a-zA-Z0-9.\\-_]+$"),
      serverId: z.string().min(1).max(64).nullish(),
    }),
    output: z.string(),
    handler: ({ ctx, caller, input }) =>
      generateDomain(ctx, caller, input.appName, input.serverId ?? undefined),
  }),

  canGenerateTraefikMeDomains: query({
    summary: "The server's IPv4 address when domains can be generated for it, else an empty string",
    access: "member",
    input: z.object({ serverId: z.string().min(1).max(64) }),
    output: z.string(),
    handler: async ({ ctx, caller, input }) => {
      const ip = await serverIpOf(ctx, caller, input.serverId);
      return isIPv4(ip) ? ip : "";
    },
  }),

  validateDomain: mutation({
    summary: "Whether a host's DNS records point at the server (serverIp)",
    access: "member",
    input: z.object({
      domain: hostSchema.refine((host) => !isWildcardHost(host), "a wildcard host cannot be looked up"),
      serverIp: z
        .string()
        .refine((ip) => ip === "" || isIPv4(ip) || isIPv6(ip), "must be an IPv4 or IPv6 address")
        .nullish(),
      /** The server whose address the host must point at, when serverIp is not given. */
      serverId: z.string().min(1).max(100).nullish(),
    }),
    output: z.object({ isValid: z.boolean(), resolvedIp: z.string(), error: z.string().optional() }),
    handler: async ({ ctx, caller, input }) => {
      let serverIp = input.serverIp || undefined;
      if (input.serverId) {
        const server = await findServer(ctx.db, caller.organizationId, input.serverId);
        if (!server) throw notFound("Server");
        serverIp ??= server.ipAddress;
      }
      return validateDomainDns(hostToAscii(input.domain), serverIp);
    },
  }),
});
