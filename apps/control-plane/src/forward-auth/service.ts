/**
 * Forward auth (Dokploy's forwardAuth, issue 41 item 6): an authentication service deployed on a
 * server puts that server's domains behind a sign-in. Per server (serverId null: this machine)
 * the organization sets an auth domain, then deploys the service (oauth2-proxy, image
 * PLATFORM_FORWARD_AUTH_IMAGE) signing in with one of its OIDC providers; a protected domain's
 * serving router then carries a Traefik `forwardAuth` middleware asking that service about every
 * request (2xx lets it through, any other answer is the client's: oauth2-proxy's redirect to the
 * sign-in, in its static-upstream mode).
 *
 * The service is a Swarm service `forward-auth-<hash of the settings id>` on the
 * platform network, labelled with the organization and `forward-auth:<settings id>`; the auth
 * domain's `/oauth2/` routes are its own Traefik file of that name, held by the same owner. The
 * provider's client secret and the service's cookie secret are sealed at rest, never answered
 * (the client secret as `********`), and reach only the service's environment.
 *
 * Removing the service or its auth domain while domains are protected is refused (409): a
 * protected domain never becomes public by accident, nor is it routed to a service that is gone.
 */
import { randomBytes } from "node:crypto";
import { forwardAuthOwner } from "@platform/ownership";
import {
  dynamicConfigFileName,
  forwardAuthDomainConfig,
  TraefikConfigError,
  toYaml,
} from "@platform/traefik-config";
import { callAgent } from "../agents/errors.ts";
import { LOCAL_SERVER_ID } from "../agents/hub.ts";
import { lockApplication } from "../applications/repository.ts";
import type { ServiceContext } from "../context.ts";
import { newId } from "../crypto/ids.ts";
import type { SecretContext } from "../crypto/secret-box.ts";
import type { Db } from "../db/database.ts";
import type { ForwardAuthProviderRow, ForwardAuthSettingsRow } from "../db/schema.ts";
import { PLATFORM_NETWORK, type ServiceSpecToSend } from "../deployments/service-spec.ts";
import { claimHost } from "../domains/ownership.ts";
import type { LocatedDomain } from "../domains/repository.ts";
import { badRequest, conflict, notFound } from "../errors.ts";
import { isUniqueViolation } from "../projects/repository.ts";
import { configErrorToApiError, proxyServerOf, syncApplicationProxyWith } from "../proxy/sync.ts";
import { agentServerId, listServers } from "../servers/repository.ts";
import { FORWARD_AUTH_PORT, forwardAuthServiceName } from "./names.ts";
import {
  AUTH_DOMAIN_CONSTRAINT,
  countProtectedDomains,
  deleteProvider,
  deleteSettings,
  findProvider,
  findSettings,
  insertProvider,
  insertSettings,
  isDomainProtected,
  listSettings,
  protectDomain,
  SETTINGS_SERVER_CONSTRAINT,
  serversUsingProvider,
  unprotectDomain,
  updateSettings,
} from "./repository.ts";

/** Dokploy's image; PLATFORM_FORWARD_AUTH_IMAGE replaces it (a mirror, another tag). */
export const DEFAULT_FORWARD_AUTH_IMAGE = "quay.io/oauth2-proxy/oauth2-proxy:v7.6.0";
export const SECRET_MASK = "********" as const;
const SERVICE_TIMEOUT_MS = 180_000;
const DEPLOY_WAIT_SECONDS = 150;

export type CertificateType = "letsencrypt" | "custom" | "none";

export const callbackUrl = (authDomain: string, https: boolean) =>
  `${https ? "https" : "http"}://${authDomain}/oauth2/callback`;

/** The cookie domain shared by the auth domain and the domains it protects (Dokploy's rule). */
export function baseDomainOf(authDomain: string): string {
  const labels = authDomain.split(".").filter(Boolean);
  return `.${(labels.length > 2 ? labels.slice(1) : labels).join(".")}`;
}

const providerSealContext = (row: { providerId: string; organizationId: string }): SecretContext => ({
  table: "forward_auth_providers",
  rowId: row.providerId,
  organizationId: row.organizationId,
});
const settingsSealContext = (row: {
  forwardAuthSettingsId: string;
  organizationId: string;
}): SecretContext => ({
  table: "forward_auth_settings",
  rowId: row.forwardAuthSettingsId,
  organizationId: row.organizationId,
});

/** The server id as stored (null: this machine), checked against the caller's organization. */
async function targetServer(ctx: ServiceContext, organizationId: string, serverId: string | null) {
  const agentId = await agentServerId(ctx, organizationId, serverId);
  return { agentId, stored: agentId === LOCAL_SERVER_ID ? null : agentId };
}

/* Providers */

export interface ProviderInput {
  issuer: string;
  clientId: string;
  clientSecret: string;
  domain?: string | null;
  scopes?: string[];
}

export function toProviderView(row: ForwardAuthProviderRow) {
  return {
    providerId: row.providerId,
    issuer: row.issuer,
    domain: row.domain,
    clientId: row.clientId,
    clientSecret: SECRET_MASK,
    scopes: row.scopes,
    createdAt: row.createdAt,
  };
}

export function createProvider(ctx: ServiceContext, organizationId: string, input: ProviderInput) {
  const providerId = newId();
  return insertProvider(ctx.db, {
    providerId,
    organizationId,
    issuer: input.issuer,
    domain: input.domain ?? null,
    clientId: input.clientId,
    clientSecretSealed: ctx.secrets.encrypt(
      input.clientSecret,
      providerSealContext({ providerId, organizationId }),
    ),
    scopes: input.scopes ?? [],
  });
}

export async function requireProvider(ctx: ServiceContext, organizationId: string, providerId: string) {
  const provider = await findProvider(ctx.db, organizationId, providerId);
  if (!provider) throw notFound("Provider");
  return provider;
}

/** A provider a deployed service signs in with stays (409): its removal would not reach the service. */
export async function removeProvider(ctx: ServiceContext, organizationId: string, providerId: string) {
  await requireProvider(ctx, organizationId, providerId);
  const servers = await serversUsingProvider(ctx.db, providerId);
  if (servers.length > 0) {
    throw conflict(
      `The provider is used by the authentication service of ${servers.length} server(s): remove it there first (forwardAuth.removeOnServer)`,
      { fields: ["providerId"] },
    );
  }
  await deleteProvider(ctx.db, providerId);
}

/* Auth domain (settings) */

export function toAuthDomainView(row: ForwardAuthSettingsRow) {
  return {
    host: row.authDomain,
    https: row.https,
    certificateType: row.certificateType,
    customCertResolver: row.customCertResolver,
    callbackUrl: callbackUrl(row.authDomain, row.https),
  };
}

export async function getAuthDomain(ctx: ServiceContext, organizationId: string, serverId: string | null) {
  const { stored } = await targetServer(ctx, organizationId, serverId);
  return findSettings(ctx.db, organizationId, stored);
}

export interface AuthDomainInput {
  serverId: string | null;
  authDomain: string;
  https: boolean;
  certificateType: CertificateType;
  customCertResolver?: string;
}

/**
 * Saves the server's auth domain and writes its `/oauth2/` routes to the server's proxy in one
 * transaction (the host claimed for the organization); a deployed service is redeployed with it.
 */
export async function setAuthDomain(ctx: ServiceContext, organizationId: string, input: AuthDomainInput) {
  const { agentId, stored } = await targetServer(ctx, organizationId, input.serverId);
  if (input.certificateType === "custom" && input.https && !input.customCertResolver) {
    throw badRequest("Invalid input: customCertResolver: is required with certificateType custom", {
      fields: ["customCertResolver"],
    });
  }
  const values = {
    authDomain: input.authDomain,
    baseDomain: baseDomainOf(input.authDomain),
    https: input.https,
    certificateType: input.certificateType,
    customCertResolver: input.customCertResolver ?? null,
  };
  let row: ForwardAuthSettingsRow;
  try {
    row = await ctx.db.transaction().execute(async (trx) => {
      await claimHost(trx, organizationId, input.authDomain);
      const existing = await findSettings(trx, organizationId, stored);
      const saved = existing
        ? await updateSettings(trx, existing.forwardAuthSettingsId, values)
        : await newSettings(ctx, trx, organizationId, stored, values);
      await writeAuthDomainFile(ctx, agentId, saved);
      return saved;
    });
  } catch (error) {
    if (isUniqueViolation(error, AUTH_DOMAIN_CONSTRAINT)) {
      throw conflict(
        `Invalid input: authDomain: ${input.authDomain} is already the auth domain of a server`,
        {
          fields: ["authDomain"],
        },
      );
    }
    if (isUniqueViolation(error, SETTINGS_SERVER_CONSTRAINT)) {
      throw conflict("The server's auth domain was set at the same time: try again", {
        fields: ["serverId"],
      });
    }
    throw error;
  }
  if (row.providerId) await deployService(ctx, agentId, row);
  return row;
}

function newSettings(
  ctx: ServiceContext,
  db: Db,
  organizationId: string,
  serverId: string | null,
  values: Omit<
    ForwardAuthSettingsRow,
    | "forwardAuthSettingsId"
    | "organizationId"
    | "serverId"
    | "providerId"
    | "cookieSecretSealed"
    | "createdAt"
  >,
) {
  const forwardAuthSettingsId = newId();
  // oauth2-proxy takes a 16, 24 or 32 byte secret: 32 hexadecimal characters.
  const cookieSecret = randomBytes(16).toString("hex");
  return insertSettings(db, {
    forwardAuthSettingsId,
    organizationId,
    serverId,
    ...values,
    providerId: null,
    cookieSecretSealed: ctx.secrets.encrypt(
      cookieSecret,
      settingsSealContext({ forwardAuthSettingsId, organizationId }),
    ),
  });
}

async function writeAuthDomainFile(ctx: ServiceContext, agentId: string, row: ForwardAuthSettingsRow) {
  const name = forwardAuthServiceName(row.forwardAuthSettingsId);
  let config: ReturnType<typeof forwardAuthDomainConfig>;
  try {
    config = forwardAuthDomainConfig({
      name,
      host: row.authDomain,
      https: row.https,
      certificateType: row.certificateType,
      customCertResolver: row.customCertResolver,
      upstream: `http://${name}:${FORWARD_AUTH_PORT}`,
    });
  } catch (error) {
    if (error instanceof TraefikConfigError) throw configErrorToApiError(error);
    throw error;
  }
  const holder = { owner: forwardAuthOwner(row.organizationId, row.forwardAuthSettingsId) };
  await callAgent(
    agentId,
    () =>
      ctx.agents.client.writeProxyFile(
        agentId,
        "dynamic",
        dynamicConfigFileName(name),
        toYaml(config),
        holder,
      ),
    ctx.logger,
  );
}

async function refuseWhileProtecting(
  ctx: ServiceContext,
  organizationId: string,
  serverId: string | null,
  what: string,
) {
  const count = await countProtectedDomains(ctx.db, organizationId, serverId);
  if (count > 0) {
    throw conflict(
      `${count} domain(s) of this server are protected by forward auth: disable it on them (forwardAuth.disable) before removing ${what}`,
      { fields: ["serverId"] },
    );
  }
}

/** Removes the auth domain, its routes and the service (nothing to do when none is set). */
export async function removeAuthDomain(ctx: ServiceContext, organizationId: string, serverId: string | null) {
  const { agentId, stored } = await targetServer(ctx, organizationId, serverId);
  const row = await findSettings(ctx.db, organizationId, stored);
  if (!row) return;
  await refuseWhileProtecting(ctx, organizationId, stored, "the auth domain");
  await removeService(ctx, agentId, row);
  const name = forwardAuthServiceName(row.forwardAuthSettingsId);
  const holder = { owner: forwardAuthOwner(row.organizationId, row.forwardAuthSettingsId) };
  await callAgent(
    agentId,
    () => ctx.agents.client.removeProxyFile(agentId, "dynamic", dynamicConfigFileName(name), holder),
    ctx.logger,
  );
  await deleteSettings(ctx.db, row.forwardAuthSettingsId);
}

/* The service */

/** oauth2-proxy's configuration (its OAUTH2_PROXY_* variables), as Dokploy sets them. */
export function forwardAuthEnvironment(
  settings: ForwardAuthSettingsRow,
  provider: ForwardAuthProviderRow,
  secrets: { clientSecret: string; cookieSecret: string },
): string[] {
  const scopes = provider.scopes.length > 0 ? provider.scopes : ["openid", "email", "profile"];
  return [
    "OAUTH2_PROXY_PROVIDER=oidc",
    `OAUTH2_PROXY_OIDC_ISSUER_URL=${provider.issuer}`,
    `OAUTH2_PROXY_CLIENT_ID=${provider.clientId}`,
    `OAUTH2_PROXY_CLIENT_SECRET=${secrets.clientSecret}`,
    `OAUTH2_PROXY_COOKIE_SECRET=${secrets.cookieSecret}`,
    `OAUTH2_PROXY_HTTP_ADDRESS=0.0.0.0:${FORWARD_AUTH_PORT}`,
    "OAUTH2_PROXY_REVERSE_PROXY=true",
    "OAUTH2_PROXY_SKIP_PROVIDER_BUTTON=true",
    "OAUTH2_PROXY_SET_XAUTHREQUEST=true",
    "OAUTH2_PROXY_UPSTREAMS=static://202",
    `OAUTH2_PROXY_REDIRECT_URL=${callbackUrl(settings.authDomain, settings.https)}`,
    `OAUTH2_PROXY_COOKIE_DOMAINS=${settings.baseDomain}`,
    `OAUTH2_PROXY_WHITELIST_DOMAINS=${settings.baseDomain}`,
    `OAUTH2_PROXY_COOKIE_SECURE=${settings.https ? "true" : "false"}`,
    "OAUTH2_PROXY_EMAIL_DOMAINS=*",
    `OAUTH2_PROXY_SCOPE=${scopes.join(" ")}`,
  ];
}

async function deployService(ctx: ServiceContext, agentId: string, settings: ForwardAuthSettingsRow) {
  if (!settings.providerId) return;
  const provider = await requireProvider(ctx, settings.organizationId, settings.providerId);
  const name = forwardAuthServiceName(settings.forwardAuthSettingsId);
  const spec: ServiceSpecToSend = {
    name,
    image: ctx.config.forwardAuthImage ?? DEFAULT_FORWARD_AUTH_IMAGE,
    env: forwardAuthEnvironment(settings, provider, {
      clientSecret: ctx.secrets.decrypt(provider.clientSecretSealed, providerSealContext(provider)),
      cookieSecret: ctx.secrets.decrypt(settings.cookieSecretSealed, settingsSealContext(settings)),
    }),
    replicas: 1,
    labels: { "platform.forwardAuthSettingsId": settings.forwardAuthSettingsId },
    networks: [PLATFORM_NETWORK],
  };
  await callAgent(
    agentId,
    () =>
      ctx.agents.client.deployService(
        agentId,
        {
          jobId: newId(),
          logStreamId: "",
          spec,
          waitSeconds: DEPLOY_WAIT_SECONDS,
          owner: forwardAuthOwner(settings.organizationId, settings.forwardAuthSettingsId),
        },
        SERVICE_TIMEOUT_MS,
      ),
    ctx.logger,
  );
}

async function removeService(ctx: ServiceContext, agentId: string, settings: ForwardAuthSettingsRow) {
  await callAgent(
    agentId,
    () =>
      ctx.agents.client.serviceAction(
        agentId,
        forwardAuthServiceName(settings.forwardAuthSettingsId),
        "REMOVE",
        {
          timeoutMs: SERVICE_TIMEOUT_MS,
          owner: forwardAuthOwner(settings.organizationId, settings.forwardAuthSettingsId),
        },
      ),
    ctx.logger,
  );
}

/** Deploys (or updates) the server's service signing in with the provider; the auth domain comes first (a 400 naming serverId). */
export async function deployOnServer(
  ctx: ServiceContext,
  organizationId: string,
  serverId: string | null,
  providerId: string,
) {
  await requireProvider(ctx, organizationId, providerId);
  const { agentId, stored } = await targetServer(ctx, organizationId, serverId);
  const settings = await findSettings(ctx.db, organizationId, stored);
  if (!settings) {
    throw badRequest(
      "Invalid input: serverId: set the authentication domain for this server before deploying the proxy (forwardAuth.setAuthDomain)",
      { fields: ["serverId"] },
    );
  }
  await deployService(ctx, agentId, { ...settings, providerId });
  if (settings.providerId !== providerId) {
    await updateSettings(ctx.db, settings.forwardAuthSettingsId, { providerId });
  }
}

export async function removeOnServer(ctx: ServiceContext, organizationId: string, serverId: string | null) {
  const { agentId, stored } = await targetServer(ctx, organizationId, serverId);
  const settings = await findSettings(ctx.db, organizationId, stored);
  if (!settings) return;
  await refuseWhileProtecting(ctx, organizationId, stored, "the authentication service");
  await removeService(ctx, agentId, settings);
  await updateSettings(ctx.db, settings.forwardAuthSettingsId, { providerId: null });
}

/** Whether the server's service exists and runs (unknown: its agent did not answer). */
async function serviceStatus(
  ctx: ServiceContext,
  agentId: string,
  settings: ForwardAuthSettingsRow | undefined,
): Promise<"running" | "stopped" | "unknown"> {
  if (!settings) return "stopped";
  const name = forwardAuthServiceName(settings.forwardAuthSettingsId);
  try {
    const observed = await ctx.agents.client.observeServices(
      agentId,
      {
        serviceNames: [name],
        jobIds: [],
        owners: { [name]: forwardAuthOwner(settings.organizationId, settings.forwardAuthSettingsId) },
      },
      4000,
    );
    const service = observed.services[0];
    return service?.found && !service.ownerMismatch && service.runningTasks > 0 ? "running" : "stopped";
  } catch {
    return "unknown";
  }
}

/** This machine (for the instance organization, not on the cloud) and the organization's servers. */
export async function serverStatus(ctx: ServiceContext, organizationId: string) {
  const targets: { serverId: string | null; agentId: string; name: string }[] = [];
  const local = await agentServerId(ctx, organizationId, null).catch(() => undefined);
  if (local) targets.push({ serverId: null, agentId: LOCAL_SERVER_ID, name: "Platform server (local)" });
  for (const server of await listServers(ctx.db, organizationId)) {
    targets.push({ serverId: server.serverId, agentId: server.serverId, name: server.name });
  }
  const settings = await listSettings(ctx.db, organizationId);
  return Promise.all(
    targets.map(async (target) => {
      const row = settings.find((candidate) => candidate.serverId === target.serverId);
      return {
        serverId: target.serverId,
        name: target.name,
        status: await serviceStatus(ctx, target.agentId, row),
        authDomain: row?.authDomain ?? null,
        https: row?.https ?? true,
        certificateType: row?.certificateType ?? "none",
        customCertResolver: row?.customCertResolver ?? null,
        callbackUrl: row ? callbackUrl(row.authDomain, row.https) : null,
      };
    }),
  );
}

/* Domains */

/** Only application domains are protected (Dokploy's rule): compose and preview domains are a 400. */
function requireApplicationDomain(domain: LocatedDomain): string {
  if (domain.domainType !== "application" || !domain.applicationId) {
    throw badRequest("Invalid input: domainId: forward auth protects application domains only", {
      fields: ["domainId"],
    });
  }
  return domain.applicationId;
}

export function domainStatus(ctx: ServiceContext, domain: LocatedDomain) {
  return isDomainProtected(ctx.db, domain.domainId);
}

/**
 * A 400 naming `field` unless the server's authentication service (serverId null: this machine)
 * is deployed and running: what a domain needs before it is put behind it.
 */
export async function requireRunningForwardAuth(
  ctx: ServiceContext,
  organizationId: string,
  application: { serverId: string | null },
  field: "domainId" | "forwardAuthEnabled" = "domainId",
): Promise<void> {
  const settings = await findSettings(ctx.db, organizationId, application.serverId);
  if (!settings?.providerId) {
    throw badRequest(
      `Invalid input: ${field}: deploy the authentication proxy for the domain's server first (forwardAuth.setAuthDomain, then forwardAuth.deployOnServer)`,
      { fields: [field] },
    );
  }
  if ((await serviceStatus(ctx, proxyServerOf(ctx, application), settings)) !== "running") {
    throw badRequest(
      `Invalid input: ${field}: the authentication proxy of the domain's server is not running: deploy it again (forwardAuth.deployOnServer)`,
      { fields: [field] },
    );
  }
}

/**
 * Puts the domain behind its server's authentication service, which must be deployed and
 * running (a 400 naming `field` otherwise): the row and the application's Traefik file change in one transaction.
 */
export async function enableOnDomain(
  ctx: ServiceContext,
  domain: LocatedDomain,
  application: { serverId: string | null },
  field: "domainId" | "forwardAuthEnabled" = "domainId",
) {
  const applicationId = requireApplicationDomain(domain);
  await requireRunningForwardAuth(ctx, domain.organizationId, application, field);
  await ctx.db.transaction().execute(async (trx) => {
    await lockApplication(trx, applicationId);
    await protectDomain(trx, domain.domainId);
    await syncApplicationProxyWith(ctx, trx, applicationId);
  });
}

/**
 * domain.create/update's forwardAuthEnabled (Dokploy's field): an application domain put behind
 * its server's forward auth or served without it, as forwardAuth.enable/disable do. A compose
 * domain cannot be protected (400 naming the field); false on it changes nothing.
 */
export async function setDomainForwardAuth(
  ctx: ServiceContext,
  domain: LocatedDomain,
  application: { serverId: string | null } | undefined,
  enabled: boolean,
) {
  if (domain.domainType !== "application" || !domain.applicationId || !application) {
    if (!enabled) return;
    throw badRequest("Invalid input: forwardAuthEnabled: forward auth protects application domains only", {
      fields: ["forwardAuthEnabled"],
    });
  }
  if (enabled) await enableOnDomain(ctx, domain, application, "forwardAuthEnabled");
  else await disableOnDomain(ctx, domain);
}

export async function disableOnDomain(ctx: ServiceContext, domain: LocatedDomain) {
  const applicationId = requireApplicationDomain(domain);
  await ctx.db.transaction().execute(async (trx) => {
    await lockApplication(trx, applicationId);
    await unprotectDomain(trx, domain.domainId);
    await syncApplicationProxyWith(ctx, trx, applicationId);
  });
}
