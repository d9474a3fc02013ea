/**
 * vaultProvider (Dokploy's router of the same name, issue 41 item 7): the organization's external
 * secret stores, whose secrets a service's variables name as `${{vault.<name>.<path>:<field>}}`
 * and the deploy reads (vaults/). Administrators write and test them; members read them (the
 * token masked) and list a provider's secret names for a project they see that the provider is
 * enabled for. Another organization's provider is a 404.
 */
import { z } from "zod";
import { badRequest, forbidden } from "../errors.ts";
import { defineRouter, mutation, noInput, query, success, successSchema } from "../procedure.ts";
import { requireEnvironmentAccess, requireProjectAccess } from "../projects/permissions.ts";
import { listSecretNames, testConnection, VaultError } from "../vaults/hashicorp.ts";
import {
  assignmentSchema,
  createVaultProvider,
  hashicorpConfigSchema,
  isAssigned,
  listVaultProviders,
  mergeConfig,
  openConfig,
  removeVaultProvider,
  requireEnvironmentOf,
  requireVaultProvider,
  toVaultProviderView,
  updateVaultProvider,
  vaultProviderNameSchema,
  vaultProviderSchema,
} from "../vaults/index.ts";

const idSchema = z.string().min(1).max(128);
const vaultProviderIdInput = z.object({ vaultProviderId: idSchema });
const fieldsSchema = {
  name: vaultProviderNameSchema,
  config: hashicorpConfigSchema,
  assignments: z.array(assignmentSchema).max(200),
};

const asBadRequest = (error: unknown): never => {
  if (error instanceof VaultError) throw badRequest(error.message);
  throw error;
};

export const vaultProviderRouter = defineRouter("vaultProvider", {
  create: mutation({
    summary: "Connect a secret vault (HashiCorp Vault KV v2); the token is encrypted and never shown again",
    access: "admin",
    input: z.object(fieldsSchema),
    output: vaultProviderSchema,
    handler: async ({ ctx, caller, input }) =>
      toVaultProviderView(await createVaultProvider(ctx, caller.organizationId, input)),
  }),

  update: mutation({
    summary: "Change a vault provider; the masked token (********) keeps the stored one",
    access: "admin",
    input: z.object({ vaultProviderId: idSchema, ...fieldsSchema }),
    output: vaultProviderSchema,
    handler: async ({ ctx, caller, input }) => {
      const { vaultProviderId, ...fields } = input;
      return toVaultProviderView(
        await updateVaultProvider(ctx, caller.organizationId, vaultProviderId, fields),
      );
    },
  }),

  remove: mutation({
    summary: "Delete a vault provider (services naming it fail their next deploy, saying so)",
    access: "admin",
    input: vaultProviderIdInput,
    output: successSchema,
    handler: async ({ ctx, caller, input }) => {
      await removeVaultProvider(ctx.db, caller.organizationId, input.vaultProviderId);
      return success;
    },
  }),

  all: query({
    summary: "The organization's vault providers by name (tokens masked)",
    access: "member",
    input: noInput,
    output: z.array(vaultProviderSchema),
    handler: async ({ ctx, caller }) =>
      (await listVaultProviders(ctx.db, caller.organizationId)).map(toVaultProviderView),
  }),

  one: query({
    summary: "One vault provider (token masked)",
    access: "member",
    input: vaultProviderIdInput,
    output: vaultProviderSchema,
    handler: async ({ ctx, caller, input }) =>
      toVaultProviderView(await requireVaultProvider(ctx.db, caller.organizationId, input.vaultProviderId)),
  }),

  testConnection: mutation({
    summary: "Check that a vault answers and accepts the token (a config, a stored provider, or both)",
    access: "admin",
    input: z.object({ vaultProviderId: idSchema.optional(), config: hashicorpConfigSchema.optional() }),
    output: successSchema,
    handler: async ({ ctx, caller, input }) => {
      if (!input.config && !input.vaultProviderId) {
        throw badRequest("Provide a config or a vaultProviderId to test");
      }
      const stored = input.vaultProviderId
        ? await requireVaultProvider(ctx.db, caller.organizationId, input.vaultProviderId)
        : undefined;
      const config = input.config ? mergeConfig(ctx, input.config, stored) : openConfig(ctx, stored!);
      await testConnection(ctx, caller.organizationId, config).catch(asBadRequest);
      return success;
    },
  }),

  listSecretNames: query({
    summary: "The `path:field` names a provider holds, for a project (and environment) it is enabled for",
    access: "member",
    input: z.object({ vaultProviderId: idSchema, projectId: idSchema, environmentId: idSchema.optional() }),
    output: z.array(z.string()),
    handler: async ({ ctx, caller, input }) => {
      const provider = await requireVaultProvider(ctx.db, caller.organizationId, input.vaultProviderId);
      await requireProjectAccess(ctx.db, caller, input.projectId);
      if (input.environmentId !== undefined) {
        const environment = await requireEnvironmentOf(ctx.db, input.projectId, input.environmentId);
        await requireEnvironmentAccess(ctx.db, caller, environment);
      }
      if (!isAssigned(provider.assignments, input.projectId, input.environmentId)) {
        throw forbidden("This vault provider is not enabled for the given project/environment");
      }
      return listSecretNames(ctx, caller.organizationId, openConfig(ctx, provider)).catch(asBadRequest);
    },
  }),
});
