/**
 * dnsProvider (Dokploy's router of the same name, issue 41 item 5): an organization's Cloudflare
 * accounts (dns/). Administrators write and test them and edit their records; members read them
 * (the token masked) and list their zones and records. Another organization's provider is a 404.
 */
import { z } from "zod";
import {
  cloudflareConfigSchema,
  createDnsProvider,
  dnsProviderNameSchema,
  dnsProviderSchema,
  dnsRecordFieldsSchema,
  dnsRecordSchema,
  dnsZoneSchema,
  listDnsProviders,
  mergedToken,
  openToken,
  putRecord,
  recordsOf,
  removeDnsProvider,
  removeRecord,
  replaceRecord,
  requireDnsProvider,
  testToken,
  toDnsProviderView,
  updateDnsProvider,
  zonesOf,
} from "../dns/index.ts";
import { badRequest } from "../errors.ts";
import { defineRouter, mutation, noInput, query, success, successSchema } from "../procedure.ts";

const idSchema = z.string().min(1).max(128);
const dnsProviderIdInput = z.object({ dnsProviderId: idSchema });
const fieldsSchema = { name: dnsProviderNameSchema, config: cloudflareConfigSchema };
const zoneInput = { dnsProviderId: idSchema, zoneId: idSchema };

export const dnsProviderRouter = defineRouter("dnsProvider", {
  create: mutation({
    summary: "Connect a DNS provider (Cloudflare); the API token is encrypted and never shown again",
    access: "admin",
    input: z.object(fieldsSchema),
    output: dnsProviderSchema,
    handler: async ({ ctx, caller, input }) =>
      toDnsProviderView(await createDnsProvider(ctx, caller.organizationId, input)),
  }),

  update: mutation({
    summary: "Change a DNS provider; the masked token (********) keeps the stored one",
    access: "admin",
    input: z.object({ dnsProviderId: idSchema, ...fieldsSchema }),
    output: dnsProviderSchema,
    handler: async ({ ctx, caller, input }) => {
      const { dnsProviderId, ...fields } = input;
      return toDnsProviderView(await updateDnsProvider(ctx, caller.organizationId, dnsProviderId, fields));
    },
  }),

  remove: mutation({
    summary: "Delete a DNS provider (its domains keep their records, no longer managed)",
    access: "admin",
    input: dnsProviderIdInput,
    output: successSchema,
    handler: async ({ ctx, caller, input }) => {
      await removeDnsProvider(ctx.db, caller.organizationId, input.dnsProviderId);
      return success;
    },
  }),

  all: query({
    summary: "The organization's DNS providers by name (tokens masked)",
    access: "member",
    input: noInput,
    output: z.array(dnsProviderSchema),
    handler: async ({ ctx, caller }) =>
      (await listDnsProviders(ctx.db, caller.organizationId)).map(toDnsProviderView),
  }),

  one: query({
    summary: "One DNS provider (token masked)",
    access: "member",
    input: dnsProviderIdInput,
    output: dnsProviderSchema,
    handler: async ({ ctx, caller, input }) =>
      toDnsProviderView(await requireDnsProvider(ctx.db, caller.organizationId, input.dnsProviderId)),
  }),

  testConnection: mutation({
    summary: "Check that Cloudflare accepts the token (a config, a stored provider, or both)",
    access: "admin",
    input: z.object({ dnsProviderId: idSchema.optional(), config: cloudflareConfigSchema.optional() }),
    output: successSchema,
    handler: async ({ ctx, caller, input }) => {
      if (!input.config && !input.dnsProviderId) {
        throw badRequest("Provide a config or a dnsProviderId to test", {
          fields: ["config", "dnsProviderId"],
        });
      }
      const stored = input.dnsProviderId
        ? await requireDnsProvider(ctx.db, caller.organizationId, input.dnsProviderId)
        : undefined;
      const token = input.config ? mergedToken(ctx, input.config, stored) : openToken(ctx, stored!);
      await testToken(ctx, token);
      return success;
    },
  }),

  listZones: query({
    summary: "The zones the provider's token may see ({id, name})",
    access: "member",
    input: dnsProviderIdInput,
    output: z.array(dnsZoneSchema),
    handler: async ({ ctx, caller, input }) =>
      zonesOf(ctx, await requireDnsProvider(ctx.db, caller.organizationId, input.dnsProviderId)),
  }),

  listRecords: query({
    summary: "The DNS records of one of the provider's zones",
    access: "member",
    input: z.object(zoneInput),
    output: z.array(dnsRecordSchema),
    handler: async ({ ctx, caller, input }) =>
      recordsOf(
        ctx,
        await requireDnsProvider(ctx.db, caller.organizationId, input.dnsProviderId),
        input.zoneId,
      ),
  }),

  createRecord: mutation({
    summary: "Create a DNS record (one of that type and name is overwritten, as Dokploy's upsert)",
    access: "admin",
    input: z.object({ ...zoneInput, ...dnsRecordFieldsSchema }),
    output: dnsRecordSchema,
    handler: async ({ ctx, caller, input }) => {
      const { dnsProviderId, zoneId, ...fields } = input;
      return putRecord(
        ctx,
        await requireDnsProvider(ctx.db, caller.organizationId, dnsProviderId),
        zoneId,
        fields,
      );
    },
  }),

  updateRecord: mutation({
    summary: "Replace a DNS record",
    access: "admin",
    input: z.object({ ...zoneInput, recordId: idSchema, ...dnsRecordFieldsSchema }),
    output: dnsRecordSchema,
    handler: async ({ ctx, caller, input }) => {
      const { dnsProviderId, zoneId, recordId, ...fields } = input;
      const provider = await requireDnsProvider(ctx.db, caller.organizationId, dnsProviderId);
      return replaceRecord(ctx, provider, zoneId, recordId, fields);
    },
  }),

  deleteRecord: mutation({
    summary: "Delete a DNS record",
    access: "admin",
    input: z.object({ ...zoneInput, recordId: idSchema }),
    output: successSchema,
    handler: async ({ ctx, caller, input }) => {
      const provider = await requireDnsProvider(ctx.db, caller.organizationId, input.dnsProviderId);
      await removeRecord(ctx, provider, input.zoneId, input.recordId);
      return success;
    },
  }),
});
