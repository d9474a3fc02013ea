/**
 * dockerVolume (Dokploy's router of the same name): the named volumes of a server's engine and
 * the files inside one. Logic and tenancy in docker-objects/index.ts.
 */
import { z } from "zod";
import {
  deleteVolumeFile,
  getVolumeConfig,
  getVolumes,
  getVolumesSize,
  listVolumeFiles,
  optionalServerId,
  readVolumeFile,
  removeVolume,
  volumeContentSchema,
  volumeFileContentSchema,
  volumeFileEntrySchema,
  volumeNameSchema,
  volumePathSchema,
  volumeSchema,
  volumeSizeSchema,
  writeVolumeFile,
} from "../docker-objects/index.ts";
import { defineRouter, mutation, query, success, successSchema } from "../procedure.ts";

const volumeInput = { volumeName: volumeNameSchema, ...optionalServerId };
const fileInput = { ...volumeInput, path: volumePathSchema };

export const dockerVolumeRouter = defineRouter("dockerVolume", {
  getVolumes: query({
    summary: "The named volumes of the server's engine the caller may see",
    access: "member",
    input: z.object(optionalServerId).optional(),
    output: z.array(volumeSchema),
    handler: ({ ctx, caller, input }) => getVolumes(ctx, caller, input?.serverId),
  }),

  getVolumesSize: query({
    summary: "The size of each volume the caller may see (Docker's disk usage)",
    access: "member",
    input: z.object(optionalServerId).optional(),
    output: z.array(volumeSizeSchema),
    handler: ({ ctx, caller, input }) => getVolumesSize(ctx, caller, input?.serverId),
  }),

  getVolumeConfig: query({
    summary: "The full configuration of one volume (docker volume inspect)",
    access: "member",
    input: z.object(volumeInput),
    output: z.record(z.string(), z.unknown()),
    handler: ({ ctx, caller, input }) => getVolumeConfig(ctx, caller, input.volumeName, input.serverId),
  }),

  removeVolume: mutation({
    summary: "Remove a volume no container uses",
    access: "member",
    input: z.object(volumeInput),
    output: successSchema,
    handler: async ({ ctx, caller, input }) => {
      await removeVolume(ctx, caller, input.volumeName, input.serverId);
      return success;
    },
  }),

  listVolumeFiles: query({
    summary: "The entries of a directory inside a volume (directories first)",
    access: "member",
    input: z.object(fileInput),
    output: z.array(volumeFileEntrySchema),
    handler: ({ ctx, caller, input }) => listVolumeFiles(ctx, caller, input),
  }),

  readVolumeFile: query({
    summary: "A file inside a volume, base64 (at most 512 KiB; binary says it is not text)",
    access: "member",
    input: z.object(fileInput),
    output: volumeFileContentSchema,
    handler: ({ ctx, caller, input }) => readVolumeFile(ctx, caller, input),
  }),

  writeVolumeFile: mutation({
    summary: "Write a text file inside a volume (created or replaced; at most 512 KiB)",
    access: "member",
    input: z.object({
      ...fileInput,
      content: volumeContentSchema,
    }),
    output: successSchema,
    handler: async ({ ctx, caller, input }) => {
      await writeVolumeFile(ctx, caller, input);
      return success;
    },
  }),

  deleteVolumeFile: mutation({
    summary: "Delete a file or directory inside a volume",
    access: "member",
    input: z.object(fileInput),
    output: successSchema,
    handler: async ({ ctx, caller, input }) => {
      await deleteVolumeFile(ctx, caller, input);
      return success;
    },
  }),
});
