/**
 * github (spec 4.12): GitHub App connections. create takes an existing app's fields (githubAppId,
 * githubInstallationId, private key, client id and secret, webhook secret); the API is reached
 * with an installation token bought with a JWT signed by the app's private key.
 */
import { z } from "zod";
import { githubRepositories } from "../git-providers/clients.ts";
import {
  createProcedure,
  listProcedure,
  loadProvider,
  oneProcedure,
  repositoryProcedures,
  updateProcedure,
} from "../git-providers/procedures.ts";
import { defineRouter, mutation } from "../procedure.ts";

const { repositories, branches } = repositoryProcedures("github");

export const githubRouter = defineRouter("github", {
  create: createProcedure("github"),
  one: oneProcedure("github"),
  githubProviders: listProcedure("github"),
  update: updateProcedure("github"),
  getGithubRepositories: repositories,
  getGithubBranches: branches,
  branches,
  testConnection: mutation({
    summary: "Buy an installation token and list the installation's repositories",
    access: "member",
    input: z.object({ githubId: z.string().trim().min(1).max(100) }),
    output: z.string(),
    handler: async ({ ctx, caller, input }) => {
      const provider = await loadProvider(ctx, caller, "github", input.githubId);
      return `Found ${(await githubRepositories(ctx, provider)).length} repositories`;
    },
  }),
});
