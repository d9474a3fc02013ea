/**
 * What domain.* does (spec 2.7, 4.4): an application's hosts and paths routed by the proxy of its
 * server. Every change is saved and the application's Traefik file rewritten in one transaction:
 * when the agent refuses or cannot be reached, the row change is rolled back. A compose stack's
 * domain (domainType compose) names the compose service it routes to (serviceName, a service of
 * the stack's file) and is written to the stack's own Traefik file (compose/proxy.ts). A host
 * belongs to one organization across the instance (domains/ownership.ts): another's is a 409
 * naming `host`. Also used by application.deployNginxQuickstart and compose.deployTemplate.
 */
import { randomBytes } from "node:crypto";
import { isIPv4 } from "node:net";
import { hostProblem, hostToAscii, pathProblem, wildcardCertificateProblem } from "@platform/traefik-config";
import type { z } from "zod";
import { LOCAL_SERVER_ID } from "../agents/hub.ts";
import { findApplication } from "../applications/repository.ts";
import { composeServerOf } from "../compose/deploy.ts";
import { loadCallerCompose } from "../compose/repository.ts";
import type { Caller, ServiceContext } from "../context.ts";
import type { Domain } from "../db/schema.ts";
import { PLATFORM_NETWORK } from "../deployments/service-spec.ts";
import { requireDnsProvider } from "../dns/index.ts";
import { badRequest, notFound } from "../errors.ts";
import { requireRunningForwardAuth, setDomainForwardAuth } from "../forward-auth/service.ts";
import { loadCallerPreview } from "../previews/previews.ts";
import { requireApplicationAccess } from "../projects/permissions.ts";
import { loadWebServerSettings } from "../proxy/static-config.ts";
import { requireCoveringCertificate } from "../proxy/stored-certificates.ts";
import { hasCertificateFiles, proxyServerOf, usesStoredCertificate } from "../proxy/sync.ts";
import { controlPlanePublicIp } from "../servers/public-ip.ts";
import { findServer } from "../servers/repository.ts";
import { certificateProblem, keyMatchesCertificate, privateKeyProblem } from "./certificates.ts";
import { removeRecordOf, saveWithDnsRecord } from "./dns-records.ts";
import { findDomain, type LocatedDomain } from "./repository.ts";
import { type createDomainInput, toDomainView, type updateDomainInput } from "./schemas.ts";
import { checkUserDomainRouting } from "./user-traefik-config.ts";
import {
  deleteApplicationDomain,
  deleteComposeDomain,
  insertApplicationDomain,
  insertComposeDomain,
  toggleDomainEnabled,
  updateApplicationDomain,
  updateComposeDomain,
} from "./writes.ts";

/** A domain's routing settings as they will be stored (certificateKey: undefined keeps the stored one). */
interface DomainSettings {
  host: string;
  path: string;
  port: number;
  https: boolean;
  certificateType: Domain["certificateType"];
  customCertResolver: string | null;
  certificate: string | null;
  certificateKey: string | null | undefined;
  serviceName: string | null;
  stripPath: boolean;
  internalPath: string | null;
  customEntrypoint: string | null;
  middlewares: string[];
}

const field = (name: string, message: string) =>
  badRequest(`Invalid input: ${name}: ${message}`, { fields: [name] });

const isRoot = (path: string | null | undefined) => !path || path === "/";

/** Checks the settings together and returns them as stored: host in punycode, paths normalized. */
function checkedSettings(settings: DomainSettings, storedKeySealed: string | null): DomainSettings {
  const hostIssue = hostProblem(settings.host);
  if (hostIssue) throw field("host", hostIssue);
  const wildcardIssue = wildcardCertificateProblem(settings.host, settings.certificateType);
  if (wildcardIssue) throw field("certificateType", wildcardIssue);
  const path = isRoot(settings.path) ? "/" : settings.path;
  const pathIssue = path === "/" ? undefined : pathProblem(path);
  if (pathIssue) throw field("path", pathIssue);
  const internalPath = isRoot(settings.internalPath) ? null : settings.internalPath;
  const internalPathIssue = internalPath ? pathProblem(internalPath) : undefined;
  if (internalPathIssue) throw field("internalPath", internalPathIssue);

  const custom = settings.certificateType === "custom";
  const customCertResolver = custom ? settings.customCertResolver : null;
  let certificate: string | null = null;
  let certificateKey: string | null | undefined = null;
  if (custom && !customCertResolver) {
    certificate = settings.certificate;
    certificateKey = settings.certificateKey;
    // Without a certificate of its own, a stored certificate covering the host must exist
    // (requireStoredCertificate, once the domain's server is known).
    if (!certificate && certificateKey) {
      throw field("certificate", "is required with certificateKey");
    }
    const certificateIssue = certificate ? certificateProblem(certificate) : undefined;
    if (certificateIssue) throw field("certificate", certificateIssue);
    if (!certificate) {
      certificateKey = null;
    } else if (certificateKey) {
      const keyIssue = privateKeyProblem(certificateKey);
      if (keyIssue) throw field("certificateKey", keyIssue);
      if (!keyMatchesCertificate(certificate, certificateKey)) {
        throw field("certificateKey", "is not the private key of the certificate");
      }
    } else if (!storedKeySealed) {
      throw field("certificateKey", "is required with certificateType `custom` (or give customCertResolver)");
    }
  }
  return {
    ...settings,
    host: hostToAscii(settings.host),
    path,
    internalPath,
    customCertResolver,
    certificate,
    certificateKey,
  };
}

/**
 * Fields this domain would not use are refused (400 naming the field), never stored unused
 * (issue 27): only what the caller sent is checked.
 */
function refuseUnusedFields(
  input: {
    customCertResolver?: string | null;
    certificate?: string | null;
    certificateKey?: string | null;
    serviceName?: string | null;
  },
  kind: "application" | "compose",
  certificateType: string,
): void {
  if (kind === "application" && input.serviceName) {
    throw field("serviceName", "only a compose domain routes to a named service");
  }
  if (certificateType !== "custom") {
    for (const name of ["customCertResolver", "certificate", "certificateKey"] as const) {
      if (input[name]) throw field(name, "is used only with certificateType `custom`");
    }
  } else if (input.customCertResolver) {
    for (const name of ["certificate", "certificateKey"] as const) {
      if (input[name]) {
        throw field(name, "is not used with customCertResolver (the resolver issues the certificate)");
      }
    }
  }
}

export async function loadDomain(ctx: ServiceContext, caller: Caller, domainId: string) {
  const domain = await findDomain(ctx.db, caller.organizationId, domainId);
  if (!domain) throw notFound("Domain");
  if (domain.composeId) await loadCallerCompose(ctx.db, caller, domain.composeId, "Domain");
  else await requireApplicationAccess(ctx.db, caller, domain.applicationId, "Domain");
  return domain;
}

/** A `custom` domain without a certificate of its own needs a stored one covering its host on its server. */
async function requireStoredCertificate(
  ctx: ServiceContext,
  organizationId: string,
  serverId: string,
  settings: DomainSettings,
): Promise<void> {
  if (usesStoredCertificate(settings)) {
    await requireCoveringCertificate(ctx.db, organizationId, serverId, settings.host);
  }
}

/** Custom certificate files are written for applications only so far: a stack's domain uses a resolver or a stored certificate. */
function checkComposeCertificate(settings: DomainSettings): void {
  if (hasCertificateFiles(settings)) {
    throw field(
      "certificateType",
      "a compose service's domain takes letsencrypt, none, or custom with customCertResolver or a stored certificate (certificates.create)",
    );
  }
}

/** create for domainType compose: the stack's file is rewritten in the same transaction. */
async function createComposeDomain(
  ctx: ServiceContext,
  caller: Caller,
  composeId: string,
  settings: DomainSettings,
  dnsProviderId: string | null = null,
) {
  const compose = await loadCallerCompose(ctx.db, caller, composeId);
  if (!settings.serviceName) throw field("serviceName", "is required when domainType is `compose`");
  checkComposeCertificate(settings);
  const serverId = composeServerOf(compose);
  await requireStoredCertificate(ctx, compose.organizationId, serverId, settings);
  const { certificateKey: _key, ...columns } = settings;
  const change = {
    organizationId: compose.organizationId,
    existing: null,
    host: columns.host,
    dnsProviderId,
    serverId,
  };
  return toDomainView(await saveWithDnsRecord(ctx, change, () => insertComposeDomain(ctx, compose, columns)));
}

export async function loadDomainApplication(ctx: ServiceContext, caller: Caller, applicationId: string) {
  const application = await findApplication(ctx.db, caller.organizationId, applicationId);
  if (!application) throw notFound("Application");
  await requireApplicationAccess(ctx.db, caller, application.applicationId);
  return application;
}

/** The IP a server is reached at for generated domains: its address, or this machine's. */
export async function serverIpOf(ctx: ServiceContext, caller: Caller, serverId: string | undefined) {
  if (serverId && serverId !== LOCAL_SERVER_ID) {
    const server = await findServer(ctx.db, caller.organizationId, serverId);
    if (!server) throw notFound("Server");
    return server.ipAddress;
  }
  if (ctx.config.edition === "cloud") {
    throw badRequest("Invalid input: serverId: is required on the cloud edition", { fields: ["serverId"] });
  }
  const settings = await loadWebServerSettings(ctx.db);
  return settings.serverIp || controlPlanePublicIp(ctx.config);
}

const LABEL_ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789";

/** `<appName>-<hash>.<server-ip>.<wildcard domain>`, the appName made a valid DNS label. */
function generatedHost(appName: string, ip: string, wildcardDomain: string): string {
  const hash = [...randomBytes(6)].map((byte) => LABEL_ALPHABET[byte % LABEL_ALPHABET.length]).join("");
  const label =
    appName
      .toLowerCase()
      .replace(/[^a-z0-9-]+/g, "-")
      .replace(/^-+|-+$/g, "")
      .slice(0, 63 - hash.length - 1)
      .replace(/-+$/, "") || "app";
  return `${label}-${hash}.${ip}.${wildcardDomain}`;
}

/**
 * A generated host (domain.generateDomain's form) routed to an application's `port` over plain
 * HTTP, as domain.create would add it (application.deployNginxQuickstart).
 */
export async function addGeneratedApplicationDomain(
  ctx: ServiceContext,
  caller: Caller,
  applicationId: string,
  port: number,
) {
  const application = await loadDomainApplication(ctx, caller, applicationId);
  const hostFor = await generateHostFor(ctx, caller, application.appName, application.serverId ?? undefined);
  const settings = checkedSettings(
    {
      host: hostFor(""),
      path: "/",
      port,
      https: false,
      certificateType: "none",
      customCertResolver: null,
      certificate: null,
      certificateKey: null,
      serviceName: null,
      stripPath: true,
      internalPath: null,
      customEntrypoint: null,
      middlewares: [],
    },
    null,
  );
  const { certificateKey: _key, ...columns } = settings;
  return toDomainView(await insertApplicationDomain(ctx, application, columns, null));
}

/**
 * A domain of a compose stack created for the caller as domain.create does (compose.deployTemplate:
 * a template's domains), without TLS, as Dokploy creates a template's.
 */
export async function addComposeDomain(
  ctx: ServiceContext,
  caller: Caller,
  composeId: string,
  domain: { host: string; port: number; serviceName: string; path?: string },
) {
  const settings = checkedSettings(
    {
      host: domain.host,
      path: domain.path ?? "/",
      port: domain.port,
      https: false,
      certificateType: "none",
      customCertResolver: null,
      certificate: null,
      certificateKey: null,
      serviceName: domain.serviceName,
      stripPath: true,
      internalPath: null,
      customEntrypoint: null,
      middlewares: [],
    },
    null,
  );
  return createComposeDomain(ctx, caller, composeId, settings);
}

/**
 * A generated host (domain.generateDomain's form) for `appName` on `serverId`; a server without a
 * public IPv4 address gets 127.0.0.1's, as Dokploy's templates do.
 */
export async function generateHostFor(
  ctx: ServiceContext,
  caller: Caller,
  appName: string,
  serverId: string | undefined,
): Promise<(serviceName: string) => string> {
  const ip = await serverIpOf(ctx, caller, serverId);
  const settings = await loadWebServerSettings(ctx.db);
  return () => generatedHost(appName, isIPv4(ip) ? ip : "127.0.0.1", settings.wildcardDomain);
}

/** domain.update's settings: checked, stored and routed (a domain stays on its service). */
async function updateDomainSettings(
  ctx: ServiceContext,
  caller: Caller,
  existing: LocatedDomain,
  input: z.infer<typeof updateDomainInput>,
): Promise<Domain> {
  if (input.domainType !== undefined && input.domainType !== existing.domainType) {
    throw field("domainType", "a domain cannot move between an application, a compose service and a preview");
  }
  const certificateType = input.certificateType ?? existing.certificateType;
  refuseUnusedFields(input, existing.composeId ? "compose" : "application", certificateType);
  const settings = checkedSettings(
    {
      host: input.host ?? existing.host,
      path: input.path === undefined ? existing.path : (input.path ?? "/"),
      port: input.port ?? existing.port,
      https: input.https ?? existing.https,
      certificateType,
      customCertResolver:
        input.customCertResolver === undefined ? existing.customCertResolver : input.customCertResolver,
      certificate: input.certificate === undefined ? existing.certificate : input.certificate,
      certificateKey: input.certificateKey ?? undefined,
      serviceName: input.serviceName === undefined ? existing.serviceName : input.serviceName,
      stripPath: input.stripPath ?? existing.stripPath,
      internalPath: input.internalPath === undefined ? existing.internalPath : input.internalPath,
      customEntrypoint:
        input.customEntrypoint === undefined ? existing.customEntrypoint : input.customEntrypoint,
      middlewares: input.middlewares === undefined ? existing.middlewares : (input.middlewares ?? []),
    },
    existing.certificateKeySealed,
  );
  const { certificateKey, ...columns } = settings;
  const recordChange = {
    organizationId: existing.organizationId,
    existing,
    host: columns.host,
    dnsProviderId: input.dnsProviderId === undefined ? existing.dnsProviderId : input.dnsProviderId,
  };
  if (existing.composeId) {
    checkComposeCertificate(settings);
    const compose = await loadCallerCompose(ctx.db, caller, existing.composeId);
    const serverId = composeServerOf(compose);
    await requireStoredCertificate(ctx, existing.organizationId, serverId, settings);
    return saveWithDnsRecord(ctx, { ...recordChange, serverId }, () =>
      updateComposeDomain(ctx, existing, existing.composeId!, columns),
    );
  }
  const application = await loadDomainApplication(ctx, caller, existing.applicationId!);
  await checkUserDomainRouting(ctx, caller, application, settings, existing);
  const serverId = proxyServerOf(ctx, application);
  await requireStoredCertificate(ctx, existing.organizationId, serverId, settings);
  return saveWithDnsRecord(ctx, { ...recordChange, serverId }, () =>
    updateApplicationDomain(ctx, existing, application, serverId, columns, certificateKey),
  );
}

/** domain.create: the domain checked, saved with its DNS record and routed at once. */
export async function createDomain(
  ctx: ServiceContext,
  caller: Caller,
  input: z.infer<typeof createDomainInput>,
) {
  // Another organization's DNS provider is a 404 whatever else the input says.
  if (input.dnsProviderId) await requireDnsProvider(ctx.db, caller.organizationId, input.dnsProviderId);
  if (input.previewDeploymentId) {
    // Another organization's (or an unseen) application, stack or preview is a 404 before the refusal says why.
    if (input.applicationId) await loadDomainApplication(ctx, caller, input.applicationId);
    if (input.composeId) await loadCallerCompose(ctx.db, caller, input.composeId);
    await loadCallerPreview(ctx, caller, input.previewDeploymentId);
    throw field("previewDeploymentId", "preview domains are made by preview deployments");
  }
  if (input.domainType === "preview") {
    throw field("domainType", "preview domains are made by preview deployments");
  }
  if (input.domainType === "compose" && !input.composeId) {
    throw field("composeId", "is required when domainType is `compose`");
  }
  if (input.domainType !== "compose" && !input.applicationId) {
    throw field("applicationId", "is required when domainType is `application`");
  }
  if (input.domainType === "compose" && input.applicationId) {
    await loadDomainApplication(ctx, caller, input.applicationId);
    throw field("applicationId", "is not used when domainType is `compose`");
  }
  if (input.domainType !== "compose" && input.composeId) {
    await loadCallerCompose(ctx.db, caller, input.composeId);
    throw field("composeId", "is used only when domainType is `compose`");
  }
  if (input.forwardAuthEnabled && input.domainType !== "application") {
    throw field("forwardAuthEnabled", "forward auth protects application domains only");
  }
  refuseUnusedFields(input, input.domainType, input.certificateType);
  const settings = checkedSettings(
    {
      host: input.host,
      path: input.path ?? "/",
      port: input.port ?? 3000,
      https: input.https ?? false,
      certificateType: input.certificateType,
      customCertResolver: input.customCertResolver ?? null,
      certificate: input.certificate ?? null,
      certificateKey: input.certificateKey ?? null,
      serviceName: input.serviceName ?? null,
      stripPath: input.stripPath ?? true,
      internalPath: input.internalPath ?? null,
      customEntrypoint: input.customEntrypoint ?? null,
      middlewares: input.middlewares ?? [],
    },
    null,
  );
  const dnsProviderId = input.dnsProviderId ?? null;
  if (input.domainType === "compose") {
    return createComposeDomain(ctx, caller, input.composeId!, settings, dnsProviderId);
  }
  const application = await loadDomainApplication(ctx, caller, input.applicationId!);
  const serverId = proxyServerOf(ctx, application);
  await requireStoredCertificate(ctx, application.organizationId, serverId, settings);
  if (application.detachDokployNetwork) {
    throw field(
      "applicationId",
      `the application is detached from ${PLATFORM_NETWORK} (detachDokployNetwork), which the proxy reaches it over`,
    );
  }
  await checkUserDomainRouting(ctx, caller, application, settings, null);
  if (input.forwardAuthEnabled) {
    await requireRunningForwardAuth(ctx, application.organizationId, application, "forwardAuthEnabled");
  }
  const { certificateKey, ...columns } = settings;
  const change = {
    organizationId: application.organizationId,
    existing: null,
    host: columns.host,
    dnsProviderId,
    serverId,
  };
  const created = await saveWithDnsRecord(ctx, change, () =>
    insertApplicationDomain(ctx, application, columns, certificateKey ?? null),
  );
  if (input.forwardAuthEnabled) {
    await setDomainForwardAuth(
      ctx,
      { ...created, organizationId: application.organizationId },
      application,
      true,
    );
  }
  return toDomainView(created);
}

/** domain.update: settings, enabled and forward auth changed, the domain rerouted at once. */
export async function updateDomain(
  ctx: ServiceContext,
  caller: Caller,
  input: z.infer<typeof updateDomainInput>,
) {
  const existing = await loadDomain(ctx, caller, input.domainId);
  if (input.dnsProviderId) await requireDnsProvider(ctx.db, caller.organizationId, input.dnsProviderId);
  if (input.enabled !== undefined && existing.domainType === "preview") {
    throw field("enabled", "a preview's domain follows its preview deployment and leaves with it");
  }
  const application = existing.applicationId
    ? await findApplication(ctx.db, caller.organizationId, existing.applicationId)
    : undefined;
  if (input.forwardAuthEnabled) {
    if (existing.domainType !== "application" || !application) {
      throw field("forwardAuthEnabled", "forward auth protects application domains only");
    }
    await requireRunningForwardAuth(ctx, existing.organizationId, application, "forwardAuthEnabled");
  }
  let updated = await updateDomainSettings(ctx, caller, existing, input);
  if (input.enabled !== undefined && input.enabled !== updated.enabled) {
    updated = await toggleDomainEnabled(
      ctx,
      { ...updated, organizationId: existing.organizationId },
      input.enabled,
    );
  }
  if (input.forwardAuthEnabled !== undefined) {
    const located = { ...updated, organizationId: existing.organizationId };
    await setDomainForwardAuth(ctx, located, application, input.forwardAuthEnabled);
  }
  return toDomainView(updated);
}

/** domain.delete: unrouted (its Traefik file rewritten, or removed with the last) and its DNS record removed. */
export async function deleteDomain(ctx: ServiceContext, caller: Caller, domainId: string) {
  const existing = await loadDomain(ctx, caller, domainId);
  if (existing.composeId) {
    await deleteComposeDomain(ctx, existing.domainId, existing.composeId);
  } else {
    const application = await loadDomainApplication(ctx, caller, existing.applicationId!);
    const serverId = proxyServerOf(ctx, application);
    await deleteApplicationDomain(ctx, existing, application, serverId);
  }
  await removeRecordOf(ctx, existing.organizationId, existing);
  return toDomainView(existing);
}

/** domain.toggleEnable: a domain kept but routed no more, or routed again. */
export async function toggleDomain(ctx: ServiceContext, caller: Caller, domainId: string) {
  const existing = await loadDomain(ctx, caller, domainId);
  if (existing.domainType === "preview") {
    throw field("domainId", "a preview's domain follows its preview deployment and leaves with it");
  }
  return toDomainView(await toggleDomainEnabled(ctx, existing));
}

/** domain.generateDomain: a free host on the server's public IPv4 address. */
export async function generateDomain(
  ctx: ServiceContext,
  caller: Caller,
  appName: string,
  serverId: string | undefined,
): Promise<string> {
  const ip = await serverIpOf(ctx, caller, serverId);
  if (!isIPv4(ip)) {
    throw field("serverId", "the server has no public IPv4 address to build a wildcard DNS domain from");
  }
  const settings = await loadWebServerSettings(ctx.db);
  return generatedHost(appName, ip, settings.wildcardDomain);
}
