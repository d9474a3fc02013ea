/**
 * Writes of domains (the domain router). Each saves the row and rewrites the Traefik file of the
 * domain's application (or compose stack) in one transaction, under the application's (stack's)
 * lock: when the agent refuses or cannot be reached, the row change is rolled back. A new host is
 * claimed for the organization in the same transaction (ownership.ts).
 */
import { lockApplication } from "../applications/repository.ts";
import { syncComposeProxyWith } from "../compose/proxy.ts";
import { lockCompose } from "../compose/repository.ts";
import type { ServiceContext } from "../context.ts";
import { newId } from "../crypto/ids.ts";
import type { Application, Domain } from "../db/schema.ts";
import {
  certificateKeyContext,
  hasCertificateFiles,
  removeCertificateFiles,
  syncApplicationProxyWith,
} from "../proxy/sync.ts";
import { claimHost } from "./ownership.ts";
import { deleteDomain, insertDomain, type LocatedDomain, updateDomain } from "./repository.ts";

/** A domain's routing settings as stored (host in punycode, paths normalized). */
export type DomainColumns = Pick<
  Domain,
  | "host"
  | "path"
  | "port"
  | "https"
  | "certificateType"
  | "customCertResolver"
  | "certificate"
  | "serviceName"
  | "stripPath"
  | "internalPath"
  | "customEntrypoint"
  | "middlewares"
>;

/** Where a domain routes to, found in the caller's organization. */
type DomainApplication = Pick<Application, "applicationId" | "appName"> & { organizationId: string };

const sealKey = (ctx: ServiceContext, key: string, domainId: string, organizationId: string) =>
  ctx.secrets.encrypt(key, certificateKeyContext(domainId, organizationId));

export function insertComposeDomain(
  ctx: ServiceContext,
  compose: { composeId: string; organizationId: string },
  columns: DomainColumns,
): Promise<Domain> {
  const domainId = newId();
  return ctx.db.transaction().execute(async (trx) => {
    await lockCompose(trx, compose.composeId);
    await claimHost(trx, compose.organizationId, columns.host, { path: columns.path });
    const row = await insertDomain(trx, {
      domainId,
      ...columns,
      certificateKeySealed: null,
      domainType: "compose",
      composeId: compose.composeId,
    });
    await syncComposeProxyWith(ctx, trx, compose.composeId);
    return row;
  });
}

/** `certificateKey`: the private key of the domain's own certificate, sealed when stored. */
export function insertApplicationDomain(
  ctx: ServiceContext,
  application: DomainApplication,
  columns: DomainColumns,
  certificateKey: string | null,
): Promise<Domain> {
  const domainId = newId();
  return ctx.db.transaction().execute(async (trx) => {
    await lockApplication(trx, application.applicationId);
    await claimHost(trx, application.organizationId, columns.host, { path: columns.path });
    const row = await insertDomain(trx, {
      domainId,
      ...columns,
      certificateKeySealed: certificateKey
        ? sealKey(ctx, certificateKey, domainId, application.organizationId)
        : null,
      domainType: "application",
      applicationId: application.applicationId,
    });
    await syncApplicationProxyWith(ctx, trx, application.applicationId);
    return row;
  });
}

export function updateComposeDomain(
  ctx: ServiceContext,
  existing: LocatedDomain,
  composeId: string,
  columns: DomainColumns,
): Promise<Domain> {
  return ctx.db.transaction().execute(async (trx) => {
    await lockCompose(trx, composeId);
    if (columns.host !== existing.host || columns.path !== existing.path) {
      await claimHost(trx, existing.organizationId, columns.host, {
        path: columns.path,
        exceptDomainId: existing.domainId,
      });
    }
    const row = await updateDomain(trx, existing.domainId, { ...columns, certificateKeySealed: null });
    await syncComposeProxyWith(ctx, trx, composeId);
    return row;
  });
}

/**
 * `certificateKey`: a new private key for the domain's own certificate (undefined keeps the
 * stored one). Certificate files the domain no longer uses leave the proxy of `serverId`.
 */
export function updateApplicationDomain(
  ctx: ServiceContext,
  existing: LocatedDomain,
  application: DomainApplication,
  serverId: string,
  columns: DomainColumns,
  certificateKey: string | null | undefined,
): Promise<Domain> {
  const keepsFiles = hasCertificateFiles(columns);
  return ctx.db.transaction().execute(async (trx) => {
    await lockApplication(trx, application.applicationId);
    if (columns.host !== existing.host || columns.path !== existing.path) {
      await claimHost(trx, existing.organizationId, columns.host, {
        path: columns.path,
        exceptDomainId: existing.domainId,
      });
    }
    const row = await updateDomain(trx, existing.domainId, {
      ...columns,
      certificateKeySealed: !keepsFiles
        ? null
        : certificateKey
          ? sealKey(ctx, certificateKey, existing.domainId, existing.organizationId)
          : existing.certificateKeySealed,
    });
    await syncApplicationProxyWith(ctx, trx, application.applicationId);
    if (hasCertificateFiles(existing) && !keepsFiles) {
      await removeCertificateFiles(ctx, serverId, application.appName, existing);
    }
    return row;
  });
}

export async function deleteComposeDomain(
  ctx: ServiceContext,
  domainId: string,
  composeId: string,
): Promise<void> {
  await ctx.db.transaction().execute(async (trx) => {
    await lockCompose(trx, composeId);
    await deleteDomain(trx, domainId);
    await syncComposeProxyWith(ctx, trx, composeId);
  });
}

/** The domain's certificate files leave the proxy of `serverId` with it. */
export async function deleteApplicationDomain(
  ctx: ServiceContext,
  existing: Domain,
  application: DomainApplication,
  serverId: string,
): Promise<void> {
  await ctx.db.transaction().execute(async (trx) => {
    await lockApplication(trx, application.applicationId);
    await deleteDomain(trx, existing.domainId);
    await syncApplicationProxyWith(ctx, trx, application.applicationId);
    if (hasCertificateFiles(existing)) {
      await removeCertificateFiles(ctx, serverId, application.appName, existing);
    }
  });
}

/**
 * domain.toggleEnable (and domain.update's `enabled`): flips `enabled` (or sets it) under the service's lock and rewrites its Traefik file
 * without (or again with) the domain, in one transaction; the host stays the organization's.
 */
export function toggleDomainEnabled(
  ctx: ServiceContext,
  existing: LocatedDomain,
  enabled?: boolean,
): Promise<Domain> {
  return ctx.db.transaction().execute(async (trx) => {
    if (existing.composeId) await lockCompose(trx, existing.composeId);
    else await lockApplication(trx, existing.applicationId!);
    const current = await trx
      .selectFrom("domains")
      .select("enabled")
      .where("domainId", "=", existing.domainId)
      .executeTakeFirstOrThrow();
    const row = await updateDomain(trx, existing.domainId, { enabled: enabled ?? !current.enabled });
    if (existing.composeId) await syncComposeProxyWith(ctx, trx, existing.composeId);
    else await syncApplicationProxyWith(ctx, trx, existing.applicationId!);
    return row;
  });
}
