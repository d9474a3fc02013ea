/**
 * forwardAuth (Dokploy's router of the same name, issue 41 item 6): application domains behind a
 * sign-in through an authentication service (oauth2-proxy) deployed on their server
 * (forward-auth/service.ts). Administrators set a server's auth domain and deploy or remove its
 * service; members with access to an application protect or unprotect its domains. The OIDC
 * providers the services sign in with are the organization's (createProvider, removeProvider:
 * ours, as Dokploy's come from its SSO settings); their client secrets are sealed and answered
 * as `********`. Another organization's server, domain or provider is a 404.
 */
import { z } from "zod";
import { findApplication } from "../applications/repository.ts";
import type { Caller, ServiceContext } from "../context.ts";
import { findDomain } from "../domains/repository.ts";
import { notFound } from "../errors.ts";
import { listProviders } from "../forward-auth/repository.ts";
import {
  createProvider,
  deployOnServer,
  disableOnDomain,
  domainStatus,
  enableOnDomain,
  getAuthDomain,
  removeAuthDomain,
  removeOnServer,
  removeProvider,
  SECRET_MASK,
  serverStatus,
  setAuthDomain,
  toAuthDomainView,
  toProviderView,
} from "../forward-auth/service.ts";
import { defineRouter, mutation, noInput, query, success, successSchema } from "../procedure.ts";
import { requireApplicationAccess } from "../projects/permissions.ts";

const idSchema = z.string().min(1).max(128);
const certificateTypeSchema = z.enum(["none", "letsencrypt", "custom"]);
/** Dokploy's auth domain rule: lower-case DNS labels and a top-level domain of letters. */
const authDomainSchema = z
  .string()
  .trim()
  .toLowerCase()
  .max(253)
  .regex(/^(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,}$/, "Invalid auth domain");
// serverId null (or left out): this machine, the instance organization's.
const serverTargetInput = z.strictObject({ serverId: idSchema.nullish() });
const domainTargetInput = z.strictObject({ domainId: idSchema });
const okSchema = z.object({ ok: z.literal(true) });
const ok = { ok: true as const };

const authDomainSchemaOut = z.object({
  host: z.string(),
  https: z.boolean(),
  certificateType: certificateTypeSchema,
  customCertResolver: z.string().nullable(),
  callbackUrl: z.string(),
});

const providerSchema = z.object({
  providerId: z.string(),
  issuer: z.string(),
  domain: z.string().nullable(),
  clientId: z.string(),
  clientSecret: z.literal(SECRET_MASK),
  scopes: z.array(z.string()),
  createdAt: z.string(),
});

/** The domain in the caller's organization and an application the caller may change. */
async function loadDomain(ctx: ServiceContext, caller: Caller, domainId: string) {
  const domain = await findDomain(ctx.db, caller.organizationId, domainId);
  if (!domain) throw notFound("Domain");
  if (domain.applicationId) await requireApplicationAccess(ctx.db, caller, domain.applicationId, "Domain");
  return domain;
}

export const forwardAuthRouter = defineRouter("forwardAuth", {
  getAuthDomain: query({
    summary:
      "The auth domain of a server's forward-auth service (null: none set; serverId null: this machine)",
    access: "admin",
    input: serverTargetInput,
    output: authDomainSchemaOut.nullable(),
    handler: async ({ ctx, caller, input }) => {
      const row = await getAuthDomain(ctx, caller.organizationId, input.serverId ?? null);
      return row ? toAuthDomainView(row) : null;
    },
  }),

  setAuthDomain: mutation({
    summary: "Set the host of a server's sign-in pages (/oauth2/…); a deployed service is redeployed with it",
    access: "admin",
    input: z.strictObject({
      serverId: idSchema.nullish(),
      authDomain: authDomainSchema,
      https: z.boolean().default(true),
      certificateType: certificateTypeSchema.default("letsencrypt"),
      customCertResolver: z
        .string()
        .regex(/^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/, "is not a certificate resolver name")
        .optional(),
    }),
    output: z.object({ callbackUrl: z.string() }),
    handler: async ({ ctx, caller, input }) => {
      const row = await setAuthDomain(ctx, caller.organizationId, {
        ...input,
        serverId: input.serverId ?? null,
      });
      return { callbackUrl: toAuthDomainView(row).callbackUrl };
    },
  }),

  removeAuthDomain: mutation({
    summary: "Remove a server's auth domain and its service (refused while domains are protected)",
    access: "admin",
    input: serverTargetInput,
    output: okSchema,
    handler: async ({ ctx, caller, input }) => {
      await removeAuthDomain(ctx, caller.organizationId, input.serverId ?? null);
      return ok;
    },
  }),

  listProviders: query({
    summary: "The organization's OIDC providers forward auth can sign in with",
    access: "admin",
    input: noInput,
    output: z.array(z.object({ providerId: z.string(), issuer: z.string(), domain: z.string().nullable() })),
    handler: async ({ ctx, caller }) =>
      (await listProviders(ctx.db, caller.organizationId)).map(({ providerId, issuer, domain }) => ({
        providerId,
        issuer,
        domain,
      })),
  }),

  createProvider: mutation({
    summary: "Add an OIDC provider for forward auth; the client secret is encrypted and never shown again",
    access: "admin",
    input: z.strictObject({
      issuer: z.url({ protocol: /^https?$/ }).max(2048),
      clientId: z.string().min(1).max(512),
      clientSecret: z.string().min(1).max(4096),
      domain: z.string().max(253).nullish(),
      scopes: z
        .array(z.string().regex(/^[A-Za-z0-9_.:/-]{1,128}$/, "is not a scope"))
        .max(20)
        .optional(),
    }),
    output: providerSchema,
    handler: async ({ ctx, caller, input }) =>
      toProviderView(await createProvider(ctx, caller.organizationId, input)),
  }),

  removeProvider: mutation({
    summary: "Remove an OIDC provider (refused while a server's service signs in with it)",
    access: "admin",
    input: z.strictObject({ providerId: idSchema }),
    output: successSchema,
    handler: async ({ ctx, caller, input }) => {
      await removeProvider(ctx, caller.organizationId, input.providerId);
      return success;
    },
  }),

  serverStatus: query({
    summary: "Each server's forward-auth service: running, stopped or unknown, with its auth domain",
    access: "admin",
    input: noInput,
    output: z.array(
      z.object({
        serverId: z.string().nullable(),
        name: z.string(),
        status: z.enum(["running", "stopped", "unknown"]),
        authDomain: z.string().nullable(),
        https: z.boolean(),
        certificateType: certificateTypeSchema,
        customCertResolver: z.string().nullable(),
        callbackUrl: z.string().nullable(),
      }),
    ),
    handler: ({ ctx, caller }) => serverStatus(ctx, caller.organizationId),
  }),

  deployOnServer: mutation({
    summary:
      "Deploy (or update) a server's authentication service signing in with one of the organization's providers",
    access: "admin",
    input: z.strictObject({ serverId: idSchema.nullish(), providerId: idSchema }),
    output: okSchema,
    handler: async ({ ctx, caller, input }) => {
      await deployOnServer(ctx, caller.organizationId, input.serverId ?? null, input.providerId);
      return ok;
    },
  }),

  removeOnServer: mutation({
    summary: "Remove a server's authentication service (refused while domains are protected)",
    access: "admin",
    input: serverTargetInput,
    output: okSchema,
    handler: async ({ ctx, caller, input }) => {
      await removeOnServer(ctx, caller.organizationId, input.serverId ?? null);
      return ok;
    },
  }),

  status: query({
    summary: "Whether a domain is behind its server's forward auth",
    access: "member",
    input: domainTargetInput,
    output: z.object({ enabled: z.boolean() }),
    handler: async ({ ctx, caller, input }) => ({
      enabled: await domainStatus(ctx, await loadDomain(ctx, caller, input.domainId)),
    }),
  }),

  enable: mutation({
    summary: "Put an application domain behind its server's running authentication service",
    access: "member",
    input: domainTargetInput,
    output: okSchema,
    handler: async ({ ctx, caller, input }) => {
      const domain = await loadDomain(ctx, caller, input.domainId);
      const application = domain.applicationId
        ? await findApplication(ctx.db, caller.organizationId, domain.applicationId)
        : undefined;
      await enableOnDomain(ctx, domain, { serverId: application?.serverId ?? null });
      return ok;
    },
  }),

  disable: mutation({
    summary: "Serve an application domain without forward auth again",
    access: "member",
    input: domainTargetInput,
    output: okSchema,
    handler: async ({ ctx, caller, input }) => {
      await disableOnDomain(ctx, await loadDomain(ctx, caller, input.domainId));
      return ok;
    },
  }),
});
