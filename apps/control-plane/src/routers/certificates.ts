/**
 * certificates (the spec's router, not shown; Dokploy's `certificates`, issue 27 item 7): an
 * organization's custom certificates. Administrators store and remove them, members read them.
 * At save the chain must parse (leaf first, each certificate issued by the next), the key must be
 * the leaf's and the leaf unexpired; its expiry and hosts (DNS SANs, wildcards kept) are read
 * then and shown. The key is sealed and never returned. The pair is applied to the proxy's TLS
 * store of `serverId` (this machine when absent: the instance organization only), where `custom`
 * domains without files of their own find it by SNI; remove takes the files away again.
 * Another organization's certificate or server is a 404.
 */
import { z } from "zod";
import { idSchema } from "../applications/schemas.ts";
import type { Caller, ServiceContext } from "../context.ts";
import type { Certificate } from "../db/schema.ts";
import { displayNameSchema } from "../display-name.ts";
import { readCertificatePair } from "../domains/certificates.ts";
import { badRequest, notFound } from "../errors.ts";
import { defineRouter, mutation, noInput, query } from "../procedure.ts";
import {
  deleteStoredCertificate,
  findCertificate,
  listCertificates,
  storeCertificate,
  storedCertificateKeyContext,
  updateStoredCertificate,
} from "../proxy/stored-certificates.ts";
import { agentServerId } from "../servers/repository.ts";

const pemInput = z
  .string()
  .min(1, "must not be empty")
  .max(64 * 1024);

const certificateIdInput = z.object({ certificateId: idSchema });

const certificateSchema = z.object({
  certificateId: z.string(),
  name: z.string(),
  /** The PEM chain (public); the private key is never returned. */
  certificateData: z.string(),
  autoRenew: z.boolean().nullable(),
  organizationId: z.string(),
  serverId: z.string().nullable(),
  /** The leaf's notAfter. */
  expiresAt: z.string(),
  /** The hosts the certificate covers (DNS subjectAltNames, `*.x` wildcards kept). */
  hosts: z.array(z.string()),
  createdAt: z.string(),
});

function toCertificateView(certificate: Certificate): z.infer<typeof certificateSchema> {
  const { privateKeySealed: _sealed, ...view } = certificate;
  return {
    ...view,
    expiresAt: new Date(view.expiresAt).toISOString(),
    createdAt: new Date(view.createdAt).toISOString(),
  };
}

async function loadCertificate(ctx: ServiceContext, caller: Caller, certificateId: string) {
  const certificate = await findCertificate(ctx.db, caller.organizationId, certificateId);
  if (!certificate) throw notFound("Certificate");
  return certificate;
}

const autoRenewRefused = () =>
  badRequest(
    "Invalid input: autoRenew: a custom certificate cannot be renewed by the platform (its issuer is not an ACME resolver); upload the renewed certificate, or use certificateType `letsencrypt` on the domain",
    { fields: ["autoRenew"] },
  );

export const certificatesRouter = defineRouter("certificates", {
  create: mutation({
    summary: "Store a custom certificate and its key and apply them to the server's proxy TLS store",
    access: "admin",
    input: z.object({
      name: displayNameSchema,
      certificateData: pemInput,
      privateKey: pemInput,
      autoRenew: z.boolean().nullish(),
      serverId: idSchema.nullish(),
    }),
    output: certificateSchema,
    handler: async ({ ctx, caller, input }) => {
      if (input.autoRenew) throw autoRenewRefused();
      // Another organization's server is a 404 whatever the pair is.
      const serverId = await agentServerId(ctx, caller.organizationId, input.serverId);
      const read = readCertificatePair(input.certificateData, input.privateKey);
      if (!read.ok)
        throw badRequest(`Invalid input: ${read.field}: ${read.message}`, { fields: [read.field] });
      const row = await storeCertificate(ctx, {
        organizationId: caller.organizationId,
        serverId,
        name: input.name,
        certificateData: input.certificateData,
        privateKey: input.privateKey,
        autoRenew: input.autoRenew ?? null,
        expiresAt: read.reading.expiresAt,
        hosts: read.reading.hosts,
      });
      return toCertificateView(row);
    },
  }),

  one: query({
    summary: "One certificate with its expiry and hosts (never its key)",
    access: "member",
    input: certificateIdInput,
    output: certificateSchema,
    handler: async ({ ctx, caller, input }) =>
      toCertificateView(await loadCertificate(ctx, caller, input.certificateId)),
  }),

  all: query({
    summary: "The organization's certificates, newest first (never their keys)",
    access: "member",
    input: noInput,
    output: z.array(certificateSchema),
    handler: async ({ ctx, caller }) =>
      (await listCertificates(ctx.db, caller.organizationId)).map(toCertificateView),
  }),

  update: mutation({
    summary:
      "Rename a certificate or replace its chain and/or key (checked as on create); new files are written to the proxy's TLS store at once",
    access: "admin",
    input: z.object({
      certificateId: idSchema,
      name: displayNameSchema.optional(),
      certificateData: pemInput.optional(),
      privateKey: pemInput.optional(),
      autoRenew: z.boolean().nullish(),
    }),
    output: certificateSchema,
    handler: async ({ ctx, caller, input }) => {
      const certificate = await loadCertificate(ctx, caller, input.certificateId);
      if (input.autoRenew) throw autoRenewRefused();
      let pair: Parameters<typeof updateStoredCertificate>[2]["pair"];
      if (input.certificateData !== undefined || input.privateKey !== undefined) {
        const certificateData = input.certificateData ?? certificate.certificateData;
        const privateKey =
          input.privateKey ??
          ctx.secrets.decrypt(certificate.privateKeySealed, storedCertificateKeyContext(certificate));
        const read = readCertificatePair(certificateData, privateKey);
        if (!read.ok)
          throw badRequest(`Invalid input: ${read.field}: ${read.message}`, { fields: [read.field] });
        pair = { certificateData, privateKey, expiresAt: read.reading.expiresAt, hosts: read.reading.hosts };
      }
      return toCertificateView(await updateStoredCertificate(ctx, certificate, { name: input.name, pair }));
    },
  }),

  remove: mutation({
    summary: "Remove a certificate: its files leave the proxy's TLS store",
    access: "admin",
    input: certificateIdInput,
    // Dokploy answers true.
    output: z.boolean(),
    handler: async ({ ctx, caller, input }) => {
      const certificate = await loadCertificate(ctx, caller, input.certificateId);
      await deleteStoredCertificate(ctx, certificate);
      return true as const;
    },
  }),
});
