/**
 * dockerImage (Dokploy's router of the same name): the images of a server's engine. Logic and
 * tenancy in docker-objects/index.ts.
 */
import { z } from "zod";
import {
  getImageConfig,
  getImages,
  imageIdSchema,
  imageRefSchema,
  imageRowSchema,
  optionalServerId,
  removeImage,
  repositorySchema,
  tagSchema,
} from "../docker-objects/index.ts";
import { defineRouter, mutation, query, success, successSchema } from "../procedure.ts";

export const dockerImageRouter = defineRouter("dockerImage", {
  getImages: query({
    summary: "The images of the server's engine the caller may see (one row per tag)",
    access: "member",
    input: z.object(optionalServerId).optional(),
    output: z.array(imageRowSchema),
    handler: ({ ctx, caller, input }) => getImages(ctx, caller, input?.serverId),
  }),

  getImageConfig: query({
    summary: "The full configuration of one image (docker image inspect)",
    access: "member",
    input: z.object({ imageRef: imageRefSchema, ...optionalServerId }),
    output: z.record(z.string(), z.unknown()),
    handler: ({ ctx, caller, input }) => getImageConfig(ctx, caller, input.imageRef, input.serverId),
  }),

  removeImage: mutation({
    summary:
      "Remove an image (repository:tag when both are set, else the id); one another organization uses stays",
    access: "member",
    input: z.object({
      repository: repositorySchema,
      tag: tagSchema,
      id: imageIdSchema,
      force: z.boolean().optional(),
      ...optionalServerId,
    }),
    output: successSchema,
    handler: async ({ ctx, caller, input }) => {
      await removeImage(ctx, caller, input);
      return success;
    },
  }),
});
