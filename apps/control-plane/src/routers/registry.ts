/**
 * registry (spec 2.1, 4.6): container registries of the organization, for pulling images, pushing
 * builds and keeping rollback images. Administrators write and test (registries belong with the
 * organization's settings), members read. The password is write-only: sealed at rest and in no
 * response, not even registry.one. Another organization's registry is a 404.
 */
import { z } from "zod";
import { notFound } from "../errors.ts";
import { defineRouter, mutation, noInput, query, success, successSchema } from "../procedure.ts";
import { testRegistryLogin } from "../registries/login.ts";
import {
  deleteRegistry,
  findRegistry,
  insertRegistry,
  listRegistries,
  openRegistryPassword,
  toRegistryView,
  updateRegistry,
} from "../registries/repository.ts";
import {
  createRegistryInput,
  idSchema,
  registryIdInput,
  registrySchema,
  testRegistryInput,
  updateRegistryInput,
} from "../registries/schemas.ts";

export const registryRouter = defineRouter("registry", {
  create: mutation({
    summary: "Store a container registry (the password is encrypted and never shown again)",
    access: "admin",
    input: createRegistryInput,
    output: registrySchema,
    handler: async ({ ctx, caller, input }) =>
      toRegistryView(
        await insertRegistry(ctx, caller.organizationId, {
          ...input,
          imagePrefix: input.imagePrefix || null,
        }),
      ),
  }),

  all: query({
    summary: "The organization's registries, newest first (without passwords)",
    access: "member",
    input: noInput,
    output: z.array(registrySchema),
    handler: async ({ ctx, caller }) =>
      (await listRegistries(ctx.db, caller.organizationId)).map(toRegistryView),
  }),

  one: query({
    summary: "One registry (without its password)",
    access: "member",
    input: registryIdInput,
    output: registrySchema,
    handler: async ({ ctx, caller, input }) => {
      const registry = await findRegistry(ctx.db, caller.organizationId, input.registryId);
      if (!registry) throw notFound("Registry");
      return toRegistryView(registry);
    },
  }),

  update: mutation({
    summary: "Change a registry; an absent password keeps the stored one",
    access: "admin",
    input: updateRegistryInput,
    output: successSchema,
    handler: async ({ ctx, caller, input }) => {
      const { registryId, imagePrefix, ...fields } = input;
      const patch = imagePrefix === undefined ? fields : { ...fields, imagePrefix: imagePrefix || null };
      if (!(await updateRegistry(ctx, caller.organizationId, registryId, patch))) {
        throw notFound("Registry");
      }
      return success;
    },
  }),

  remove: mutation({
    summary: "Delete a registry; applications using it lose the reference (set to null)",
    access: "admin",
    input: registryIdInput,
    output: successSchema,
    handler: async ({ ctx, caller, input, logger }) => {
      const affected = await deleteRegistry(ctx.db, caller.organizationId, input.registryId);
      if (!affected) throw notFound("Registry");
      if (affected.length > 0) {
        logger.info(
          { registryId: input.registryId, applicationIds: affected },
          "registry removed; its applications no longer refer to it",
        );
      }
      return success;
    },
  }),

  testRegistry: mutation({
    summary: "Log in to a registry through a server's Docker Engine (nothing is stored)",
    access: "admin",
    input: testRegistryInput,
    output: successSchema,
    handler: async ({ ctx, caller, input }) => {
      await testRegistryLogin(ctx, caller, input);
      return success;
    },
  }),

  testRegistryById: mutation({
    summary: "Log in to a stored registry through a server's Docker Engine",
    access: "admin",
    // registryId is optional in Dokploy's schema; without it there is no registry to find.
    input: z.object({ registryId: idSchema.optional(), serverId: idSchema.optional() }),
    output: successSchema,
    handler: async ({ ctx, caller, input }) => {
      if (input.registryId === undefined) throw notFound("Registry");
      const registry = await findRegistry(ctx.db, caller.organizationId, input.registryId);
      if (!registry) throw notFound("Registry");
      await testRegistryLogin(ctx, caller, {
        registryUrl: registry.registryUrl,
        username: registry.username,
        password: openRegistryPassword(ctx, registry),
        serverId: input.serverId,
      });
      return success;
    },
  }),
});
