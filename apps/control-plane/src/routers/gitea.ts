/**
 * gitea (spec 4.12): Gitea OAuth applications (giteaUrl; giteaInternalUrl, when set, is where the
 * platform reaches it). The OAuth flow starts with startAuthorization (the authorize page with a
 * state minted for the caller) and ends at /api/gitea/callback; the access token is refreshed
 * before it expires. getGiteaUrl answers the public giteaUrl alone, as Dokploy's does.
 */
import { z } from "zod";
import { displayName } from "../display-name.ts";
import { giteaRepositories } from "../git-providers/clients.ts";
import {
  createProcedure,
  listProcedure,
  loadProvider,
  oneProcedure,
  repositoryProcedures,
  startAuthorizationProcedure,
  updateProcedure,
} from "../git-providers/procedures.ts";
import { defineRouter, mutation, query } from "../procedure.ts";

const giteaId = z.string().trim().min(1).max(100);
const { repositories, branches } = repositoryProcedures("gitea");

export const giteaRouter = defineRouter("gitea", {
  create: createProcedure("gitea"),
  one: oneProcedure("gitea"),
  giteaProviders: listProcedure("gitea"),
  update: updateProcedure("gitea"),
  getGiteaRepositories: repositories,
  getGiteaBranches: branches,
  startAuthorization: startAuthorizationProcedure("gitea"),
  getGiteaUrl: query({
    summary: "The provider's public giteaUrl (where the browser authorizes)",
    access: "member",
    input: z.object({ giteaId }),
    output: z.string(),
    handler: async ({ ctx, caller, input }) =>
      String((await loadProvider(ctx, caller, "gitea", input.giteaId)).settings.giteaUrl ?? ""),
  }),
  testConnection: mutation({
    summary: "List the repositories the token reaches (with organizationName: those of that owner)",
    access: "member",
    input: z.object({ giteaId: giteaId.optional(), organizationName: displayName(100).optional() }),
    output: z.string(),
    handler: async ({ ctx, caller, input }) => {
      const provider = await loadProvider(ctx, caller, "gitea", input.giteaId);
      const owner = input.organizationName?.toLowerCase();
      const repositories = (await giteaRepositories(ctx, provider)).filter(
        (repository) => !owner || repository.owner.username.toLowerCase() === owner,
      );
      return `Found ${repositories.length} repositories`;
    },
  }),
});
