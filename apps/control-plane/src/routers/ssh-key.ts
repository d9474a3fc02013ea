/**
 * sshKey (Dokploy's SSH key resource): the keys server.setup logs in with. Private keys are
 * write-only: sealed at rest, never in a response or a log line. Another organization's key
 * is a 404.
 */
import { z } from "zod";
import { notFound } from "../errors.ts";
import { defineRouter, mutation, noInput, query, success, successSchema } from "../procedure.ts";
import { requireFeature } from "../projects/permissions.ts";
import {
  descriptionSchema,
  idSchema,
  keyTextSchema,
  nameSchema,
  sshKeySchema,
  sshKeyTypeSchema,
} from "../servers/schemas.ts";
import {
  checkKeyPair,
  deleteSshKey,
  findSshKey,
  generateSshKeyPair,
  insertSshKey,
  listSshKeys,
  toSshKeyView,
  updateSshKey,
} from "../servers/ssh-keys.ts";

export const sshKeyRouter = defineRouter("sshKey", {
  create: mutation({
    summary: "Store an SSH key pair (the private key is encrypted and never shown again)",
    access: "admin",
    input: z.object({
      name: nameSchema,
      description: descriptionSchema,
      privateKey: keyTextSchema,
      publicKey: keyTextSchema,
    }),
    output: sshKeySchema,
    handler: async ({ ctx, caller, input }) => {
      checkKeyPair(input.privateKey, input.publicKey);
      const key = await insertSshKey(ctx, {
        organizationId: caller.organizationId,
        name: input.name,
        description: input.description ?? null,
        privateKey: input.privateKey,
        publicKey: input.publicKey,
      });
      return toSshKeyView(key);
    },
  }),

  one: query({
    summary: "One SSH key (public part only)",
    access: "member",
    input: z.object({ sshKeyId: idSchema }),
    output: sshKeySchema,
    handler: async ({ ctx, caller, input }) => {
      requireFeature(caller, "sshKeys");
      const key = await findSshKey(ctx.db, caller.organizationId, input.sshKeyId);
      if (!key) throw notFound("SSH key");
      return toSshKeyView(key);
    },
  }),

  all: query({
    summary: "The organization's SSH keys, newest first (public parts only)",
    access: "member",
    input: noInput,
    output: z.array(sshKeySchema),
    handler: async ({ ctx, caller }) => {
      requireFeature(caller, "sshKeys");
      return (await listSshKeys(ctx.db, caller.organizationId)).map(toSshKeyView);
    },
  }),

  allForApps: query({
    summary:
      "The organization's SSH keys as id and name only, newest first, for choosing an application's Git key (any member)",
    access: "member",
    input: noInput,
    output: z.array(z.object({ sshKeyId: z.string(), name: z.string() })),
    handler: async ({ ctx, caller }) =>
      (await listSshKeys(ctx.db, caller.organizationId)).map(({ sshKeyId, name }) => ({ sshKeyId, name })),
  }),

  update: mutation({
    summary: "Rename an SSH key or change its description",
    access: "admin",
    input: z.object({ sshKeyId: idSchema, name: nameSchema.optional(), description: descriptionSchema }),
    output: sshKeySchema,
    handler: async ({ ctx, caller, input }) => {
      const patch: { name?: string; description?: string | null } = {};
      if (input.name !== undefined) patch.name = input.name;
      if (input.description !== undefined) patch.description = input.description;
      const key = await updateSshKey(ctx.db, caller.organizationId, input.sshKeyId, patch);
      if (!key) throw notFound("SSH key");
      return toSshKeyView(key);
    },
  }),

  remove: mutation({
    summary: "Delete an SSH key; servers that used it keep running without one",
    access: "admin",
    input: z.object({ sshKeyId: idSchema }),
    output: successSchema,
    handler: async ({ ctx, caller, input }) => {
      if (!(await deleteSshKey(ctx.db, caller.organizationId, input.sshKeyId))) {
        throw notFound("SSH key");
      }
      return success;
    },
  }),

  generate: mutation({
    summary: "Generate a key pair in OpenSSH format (nothing is stored; pass it to sshKey.create)",
    access: "admin",
    input: z.object({ type: sshKeyTypeSchema.default("rsa") }).prefault({}),
    output: z.object({ privateKey: z.string(), publicKey: z.string() }),
    handler: ({ input }) => generateSshKeyPair(input.type),
  }),
});
