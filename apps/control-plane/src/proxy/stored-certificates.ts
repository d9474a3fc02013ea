/**
 * Stored certificates (the certificates router) on their server's proxy: the PEM chain and key
 * are written as `dynamic/certificates/platform-certificate-<certificateId>.crt|.key`, then
 * `dynamic/platform-certificate-<certificateId>.yml` adds them to Traefik's default TLS store,
 * where every router with `tls: {}` (a `custom` domain without files of its own) finds them by
 * SNI. The agent records the certificate as the files' holder (`certificate:<id>` of the
 * organization), so no other tenant's command can overwrite or remove them. The rows are read
 * and written here too, scoped to the organization, each write with its files in one transaction.
 */
import { posix } from "node:path";
import { certificateOwner } from "@platform/ownership";
import {
  CERTIFICATES_DIRECTORY,
  storedCertificateConfig,
  storedCertificateConfigFileName,
  storedCertificateFiles,
  TraefikConfigError,
  toYaml,
} from "@platform/traefik-config";
import { callAgent } from "../agents/errors.ts";
import { LOCAL_SERVER_ID } from "../agents/hub.ts";
import type { ServiceContext } from "../context.ts";
import { newId } from "../crypto/ids.ts";
import type { Db } from "../db/database.ts";
import type { Certificate } from "../db/schema.ts";
import { certificateCovers } from "../domains/certificates.ts";
import { badRequest } from "../errors.ts";
import { configErrorToApiError } from "./sync.ts";

/** Where SecretBox binds a stored certificate's sealed private key. */
export const storedCertificateKeyContext = (
  certificate: Pick<Certificate, "certificateId" | "organizationId">,
) => ({
  table: "certificates",
  rowId: certificate.certificateId,
  organizationId: certificate.organizationId,
});

const serverOf = (certificate: Pick<Certificate, "serverId">) => certificate.serverId ?? LOCAL_SERVER_ID;

function fileNames(certificateId: string) {
  const files = storedCertificateFiles(CERTIFICATES_DIRECTORY, certificateId);
  return {
    certFile: posix.basename(files.certFile),
    keyFile: posix.basename(files.keyFile),
    configFile: storedCertificateConfigFileName(certificateId),
  };
}

/** Writes the certificate's PEM files, then the file naming them (Traefik never reads a missing file). */
export async function applyStoredCertificate(ctx: ServiceContext, certificate: Certificate): Promise<void> {
  let config: ReturnType<typeof storedCertificateConfig>;
  try {
    config = storedCertificateConfig(
      { certificateId: certificate.certificateId },
      { certificatesDirectory: CERTIFICATES_DIRECTORY },
    );
  } catch (error) {
    if (error instanceof TraefikConfigError) throw configErrorToApiError(error);
    throw error;
  }
  const serverId = serverOf(certificate);
  const names = fileNames(certificate.certificateId);
  const holder = { owner: certificateOwner(certificate.organizationId, certificate.certificateId) };
  const key = ctx.secrets.decrypt(certificate.privateKeySealed, storedCertificateKeyContext(certificate));
  const client = ctx.agents.client;
  await callAgent(
    serverId,
    () => client.writeProxyFile(serverId, "certificate", names.certFile, certificate.certificateData, holder),
    ctx.logger,
  );
  await callAgent(
    serverId,
    () => client.writeProxyFile(serverId, "certificate", names.keyFile, key, holder),
    ctx.logger,
  );
  await callAgent(
    serverId,
    () => client.writeProxyFile(serverId, "dynamic", names.configFile, toYaml(config), holder),
    ctx.logger,
  );
}

/** Removes the file naming the certificate first, then its PEM files. */
export async function removeStoredCertificate(
  ctx: ServiceContext,
  certificate: Pick<Certificate, "certificateId" | "organizationId" | "serverId">,
): Promise<void> {
  const serverId = serverOf(certificate);
  const names = fileNames(certificate.certificateId);
  const holder = { owner: certificateOwner(certificate.organizationId, certificate.certificateId) };
  const client = ctx.agents.client;
  await callAgent(
    serverId,
    () => client.removeProxyFile(serverId, "dynamic", names.configFile, holder),
    ctx.logger,
  );
  for (const fileName of [names.certFile, names.keyFile]) {
    await callAgent(
      serverId,
      () => client.removeProxyFile(serverId, "certificate", fileName, holder),
      ctx.logger,
    );
  }
}

/** The organization's certificate; undefined for another organization's. */
export function findCertificate(
  db: Db,
  organizationId: string,
  certificateId: string,
): Promise<Certificate | undefined> {
  return db
    .selectFrom("certificates")
    .selectAll()
    .where("certificateId", "=", certificateId)
    .where("organizationId", "=", organizationId)
    .executeTakeFirst();
}

/** The organization's certificates, newest first. */
export function listCertificates(db: Db, organizationId: string): Promise<Certificate[]> {
  return db
    .selectFrom("certificates")
    .selectAll()
    .where("organizationId", "=", organizationId)
    .orderBy("createdAt", "desc")
    .orderBy("certificateId", "desc")
    .execute();
}

/** A checked certificate pair to store on the proxy of `serverId` (an agentServerId). */
export interface NewStoredCertificate {
  organizationId: string;
  serverId: string;
  name: string;
  certificateData: string;
  privateKey: string;
  autoRenew: boolean | null;
  expiresAt: string;
  hosts: string[];
}

/**
 * Saves the certificate with its key sealed and writes its files to the proxy in one
 * transaction: when the agent refuses or cannot be reached, the row is rolled back.
 */
export async function storeCertificate(
  ctx: ServiceContext,
  certificate: NewStoredCertificate,
): Promise<Certificate> {
  const { privateKey, serverId, ...columns } = certificate;
  const certificateId = newId();
  const sealed = ctx.secrets.encrypt(
    privateKey,
    storedCertificateKeyContext({ certificateId, organizationId: certificate.organizationId }),
  );
  return ctx.db.transaction().execute(async (trx) => {
    const inserted = await trx
      .insertInto("certificates")
      .values({
        certificateId,
        ...columns,
        serverId: serverId === LOCAL_SERVER_ID ? null : serverId,
        privateKeySealed: sealed,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    try {
      await applyStoredCertificate(ctx, inserted);
    } catch (error) {
      // Files written before the failure go again (best effort) with the rolled-back row.
      await removeStoredCertificate(ctx, inserted).catch(() => {});
      throw error;
    }
    return inserted;
  });
}

/** What certificates.update changes: a checked pair (with its reading) and/or the name. */
export interface StoredCertificateChange {
  name?: string | undefined;
  pair?: { certificateData: string; privateKey: string; expiresAt: string; hosts: string[] } | undefined;
}

/**
 * Saves the change and, with a new pair, rewrites the certificate's files on its proxy in one
 * transaction: when the agent refuses or cannot be reached, the row keeps the old pair and the
 * old files are written back (best effort).
 */
export async function updateStoredCertificate(
  ctx: ServiceContext,
  certificate: Certificate,
  change: StoredCertificateChange,
): Promise<Certificate> {
  const { pair } = change;
  return ctx.db.transaction().execute(async (trx) => {
    const updated = await trx
      .updateTable("certificates")
      .set({
        ...(change.name !== undefined ? { name: change.name } : {}),
        ...(pair
          ? {
              certificateData: pair.certificateData,
              privateKeySealed: ctx.secrets.encrypt(
                pair.privateKey,
                storedCertificateKeyContext(certificate),
              ),
              expiresAt: pair.expiresAt,
              hosts: pair.hosts,
            }
          : {}),
      })
      .where("certificateId", "=", certificate.certificateId)
      .returningAll()
      .executeTakeFirstOrThrow();
    if (pair) {
      try {
        await applyStoredCertificate(ctx, updated);
      } catch (error) {
        await applyStoredCertificate(ctx, certificate).catch(() => {});
        throw error;
      }
    }
    return updated;
  });
}

/** Deletes the certificate and takes its files off the proxy in one transaction. */
export async function deleteStoredCertificate(ctx: ServiceContext, certificate: Certificate): Promise<void> {
  await ctx.db.transaction().execute(async (trx) => {
    await trx.deleteFrom("certificates").where("certificateId", "=", certificate.certificateId).execute();
    await removeStoredCertificate(ctx, certificate);
  });
}

/**
 * A `custom` domain without a certificate of its own is served from the TLS store: a stored,
 * unexpired certificate of the organization on the domain's proxy server must cover its host
 * (else a 400 naming `certificate`).
 */
export async function requireCoveringCertificate(
  db: Db,
  organizationId: string,
  serverId: string,
  host: string,
): Promise<void> {
  let query = db
    .selectFrom("certificates")
    .select("hosts")
    .where("organizationId", "=", organizationId)
    .where("expiresAt", ">", new Date().toISOString());
  query =
    serverId === LOCAL_SERVER_ID
      ? query.where("serverId", "is", null)
      : query.where("serverId", "=", serverId);
  const stored = await query.execute();
  if (stored.some((certificate) => certificateCovers(certificate.hosts, host))) return;
  throw badRequest(
    `Invalid input: certificate: is required with certificateType \`custom\`: give certificate and certificateKey, a customCertResolver, or store a certificate covering ${host} on the domain's server first (certificates.create)`,
    { fields: ["certificate"] },
  );
}

/**
 * Before a server's row goes (its certificates go with it by cascade): their files leave its
 * proxy, best effort, as an application's do when it is deleted; an unreachable server is logged.
 */
export async function removeStoredCertificatesOf(ctx: ServiceContext, serverId: string): Promise<void> {
  const certificates = await ctx.db
    .selectFrom("certificates")
    .select(["certificateId", "organizationId", "serverId"])
    .where("serverId", "=", serverId)
    .execute();
  for (const certificate of certificates) {
    try {
      await removeStoredCertificate(ctx, certificate);
    } catch (error) {
      ctx.logger.warn(
        { err: error, serverId, certificateId: certificate.certificateId },
        "a removed server's certificate files could not be removed",
      );
    }
  }
}
