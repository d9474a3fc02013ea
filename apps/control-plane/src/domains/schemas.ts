/** zod inputs and outputs of the domain and security routers (spec 2.2, 2.7, 4.4, 4.7). */
import { isValidName } from "@platform/names";
import {
  certResolverSchema,
  hostSchema,
  passwordSchema,
  portSchema,
  usernameSchema,
} from "@platform/traefik-config";
import { z } from "zod";
import { entrypointNameSchema, middlewareNameSchema } from "../applications/validation.ts";
import type { Domain, Security } from "../db/schema.ts";

const id = z.string().min(1).max(64);
const certificateTypeSchema = z.enum(["letsencrypt", "custom", "none"]);

/** "" and "/" mean the root; other paths are checked when the domain is saved (pathProblem). */
const pathInput = z.string().max(1024);
const pemInput = z.string().max(64 * 1024);

export const domainFields = {
  host: hostSchema,
  path: pathInput.nullish(),
  port: portSchema.nullish(),
  https: z.boolean().optional(),
  /** Dokploy's default: no certificate. */
  certificateType: certificateTypeSchema.default("none"),
  customCertResolver: certResolverSchema.nullish(),
  certificate: pemInput.nullish(),
  certificateKey: pemInput.nullish(),
  serviceName: z.string().refine(isValidName, "must match ^[a-zA-Z0-9.\\-_]+$").nullish(),
  stripPath: z.boolean().optional(),
  internalPath: pathInput.nullish(),
  /** Dokploy's fields: the entry point instead of web/websecure ("" clears), extra middlewares by name. */
  customEntrypoint: z.union([z.literal("").transform(() => null), entrypointNameSchema]).nullish(),
  middlewares: z.array(middlewareNameSchema).max(20).nullish(),
  /** One of the organization's DNS providers: the host's record is made there (null: none). */
  dnsProviderId: id.nullish(),
  /** Behind the server's forward auth (as forwardAuth.enable/disable); application domains only. */
  forwardAuthEnabled: z.boolean().optional(),
};

export const createDomainInput = z.object({
  ...domainFields,
  domainType: z.enum(["application", "compose", "preview"]).default("application"),
  applicationId: id.nullish(),
  composeId: id.nullish(),
  previewDeploymentId: id.nullish(),
});

export const updateDomainInput = z.object({
  domainId: id,
  host: domainFields.host.optional(),
  path: domainFields.path,
  port: domainFields.port,
  https: domainFields.https,
  certificateType: certificateTypeSchema.optional(),
  customCertResolver: domainFields.customCertResolver,
  certificate: domainFields.certificate,
  certificateKey: domainFields.certificateKey,
  serviceName: domainFields.serviceName,
  stripPath: domainFields.stripPath,
  internalPath: domainFields.internalPath,
  customEntrypoint: domainFields.customEntrypoint,
  middlewares: domainFields.middlewares,
  dnsProviderId: domainFields.dnsProviderId,
  forwardAuthEnabled: domainFields.forwardAuthEnabled,
  /** Whether the domain is routed (as domain.toggleEnable); not for a preview's domain. */
  enabled: z.boolean().optional(),
  /** Accepted as in Dokploy; a domain stays on its application (see the handler). */
  domainType: z.enum(["application", "compose", "preview"]).optional(),
});

export const domainIdInput = z.object({ domainId: id });

export const domainSchema = z.object({
  domainId: z.string(),
  host: z.string(),
  path: z.string(),
  port: z.number(),
  https: z.boolean(),
  /** Dokploy's default: no certificate. */
  certificateType: certificateTypeSchema.default("none"),
  customCertResolver: z.string().nullable(),
  /** The PEM certificate (public); the key is never returned. */
  certificate: z.string().nullable(),
  domainType: z.enum(["application", "compose", "preview"]),
  applicationId: z.string().nullable(),
  composeId: z.string().nullable(),
  previewDeploymentId: z.string().nullable(),
  serviceName: z.string().nullable(),
  uniqueConfigKey: z.string(),
  stripPath: z.boolean(),
  internalPath: z.string().nullable(),
  customEntrypoint: z.string().nullable(),
  middlewares: z.array(z.string()),
  /** false: kept, but routed by no Traefik file (domain.toggleEnable). */
  enabled: z.boolean(),
  /** The DNS provider holding the host's record (null: none). */
  dnsProviderId: z.string().nullable(),
  createdAt: z.string(),
});

export function toDomainView(domain: Domain): z.input<typeof domainSchema> {
  return {
    domainId: domain.domainId,
    host: domain.host,
    path: domain.path,
    port: domain.port,
    https: domain.https,
    certificateType: domain.certificateType,
    customCertResolver: domain.customCertResolver,
    certificate: domain.certificate,
    domainType: domain.domainType,
    applicationId: domain.applicationId,
    composeId: domain.composeId,
    previewDeploymentId: domain.previewDeploymentId,
    serviceName: domain.serviceName,
    uniqueConfigKey: String(domain.uniqueConfigKey),
    stripPath: domain.stripPath,
    internalPath: domain.internalPath,
    customEntrypoint: domain.customEntrypoint,
    middlewares: domain.middlewares,
    enabled: domain.enabled,
    dnsProviderId: domain.dnsProviderId,
    createdAt: domain.createdAt,
  };
}

// ---- security ----

/** A password may hold any character but a line break or NUL (it travels in one header line). */
const credentialPassword = passwordSchema.refine(
  (password) => !["\r", "\n", "\u0000"].some((character) => password.includes(character)),
  "must not contain a line break",
);

export const createSecurityInput = z.object({
  applicationId: id,
  username: usernameSchema,
  password: credentialPassword,
});

export const updateSecurityInput = z.object({
  securityId: id,
  username: usernameSchema.optional(),
  password: credentialPassword.optional(),
});

export const securityIdInput = z.object({ securityId: id });

export const securitySchema = z.object({
  securityId: z.string(),
  applicationId: z.string(),
  username: z.string(),
  /** Always "": only the APR1 hash is kept, and it is not shown either. */
  password: z.literal(""),
  createdAt: z.string(),
});

export function toSecurityView(security: Security): z.input<typeof securitySchema> {
  return {
    securityId: security.securityId,
    applicationId: security.applicationId,
    username: security.username,
    password: "",
    createdAt: security.createdAt,
  };
}
