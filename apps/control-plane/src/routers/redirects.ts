/**
 * redirects (Dokploy's `redirects` router; the spec leaves it out, issue 27 item 7): an
 * application's regex redirects, each a redirectRegex middleware in front of the routers of the
 * application's own Traefik file. The regex is checked at save for what Traefik (Go RE2) reads
 * (400 naming `regex`); every change rewrites the file in the same transaction, so a refused
 * write leaves the rows as they were. Another organization's application or redirect is a 404.
 */
import { hasControlCharacter, redirectRegexProblem } from "@platform/traefik-config";
import { z } from "zod";
import { findApplication } from "../applications/repository.ts";
import { idSchema } from "../applications/schemas.ts";
import type { Caller, ServiceContext } from "../context.ts";
import { notFound } from "../errors.ts";
import { defineRouter, mutation, query, success, successSchema } from "../procedure.ts";
import { requireApplicationAccess } from "../projects/permissions.ts";
import { deleteRedirect, findRedirect, insertRedirect, updateRedirect } from "../redirects/repository.ts";
import { redirectSchema } from "../redirects/schemas.ts";

const regexSchema = z
  .string()
  .min(1, "must not be empty")
  .max(2048)
  .superRefine((regex, ctx) => {
    const problem = redirectRegexProblem(regex);
    if (problem) ctx.addIssue({ code: "custom", message: problem });
  });
const replacementSchema = z
  .string()
  .min(1, "must not be empty")
  .max(2048)
  .refine((replacement) => !hasControlCharacter(replacement), "must not contain control characters");

const redirectIdInput = z.object({ redirectId: idSchema });
/** A redirect as redirects.one answers it, and each of application.one's `redirects`. */
async function loadRedirect(ctx: ServiceContext, caller: Caller, redirectId: string) {
  const redirect = await findRedirect(ctx.db, caller.organizationId, redirectId);
  if (!redirect) throw notFound("Redirect");
  await requireApplicationAccess(ctx.db, caller, redirect.applicationId, "Redirect");
  return redirect;
}

export const redirectsRouter = defineRouter("redirects", {
  create: mutation({
    summary: "Redirect an application's requests matching a regex (a redirectRegex middleware)",
    access: "member",
    input: z.object({
      applicationId: idSchema,
      regex: regexSchema,
      replacement: replacementSchema,
      permanent: z.boolean().default(false),
    }),
    // Dokploy answers true.
    output: z.boolean(),
    handler: async ({ ctx, caller, input }) => {
      const application = await findApplication(ctx.db, caller.organizationId, input.applicationId);
      if (!application) throw notFound("Application");
      await requireApplicationAccess(ctx.db, caller, application.applicationId);
      await insertRedirect(ctx, {
        applicationId: application.applicationId,
        regex: input.regex,
        replacement: input.replacement,
        permanent: input.permanent,
      });
      return true as const;
    },
  }),

  one: query({
    summary: "One redirect",
    access: "member",
    input: redirectIdInput,
    output: redirectSchema,
    handler: async ({ ctx, caller, input }) => loadRedirect(ctx, caller, input.redirectId),
  }),

  update: mutation({
    summary: "Change a redirect's regex, replacement or permanence",
    access: "member",
    input: redirectIdInput.extend({
      regex: regexSchema.optional(),
      replacement: replacementSchema.optional(),
      permanent: z.boolean().optional(),
    }),
    output: successSchema,
    handler: async ({ ctx, caller, input }) => {
      const redirect = await loadRedirect(ctx, caller, input.redirectId);
      const patch = {
        ...(input.regex !== undefined ? { regex: input.regex } : {}),
        ...(input.replacement !== undefined ? { replacement: input.replacement } : {}),
        ...(input.permanent !== undefined ? { permanent: input.permanent } : {}),
      };
      if (Object.keys(patch).length === 0) return success;
      await updateRedirect(ctx, redirect, patch);
      return success;
    },
  }),

  delete: mutation({
    summary: "Remove a redirect",
    access: "member",
    input: redirectIdInput,
    output: successSchema,
    handler: async ({ ctx, caller, input }) => {
      const redirect = await loadRedirect(ctx, caller, input.redirectId);
      await deleteRedirect(ctx, redirect);
      return success;
    },
  }),
});
