/**
 * github (spec 4.12): GitHub App connections. create takes an existing app's fields (githubAppId,
 * githubInstallationId, private key, client id and secret, webhook secret); the API is reached
 * with an installation token bought with a JWT signed by the app's private key.
 */
import { z } from "zod";
import { repositoryNameSchema } from "../applications/validation.ts";
import { githubBranches, githubRepositories } from "../git-providers/clients.ts";
import {
  branchSchema,
  createProcedure,
  listProcedure,
  loadProvider,
  oneProcedure,
  repositorySchema,
  updateProcedure,
} from "../git-providers/procedures.ts";
import { defineRouter, mutation, query } from "../procedure.ts";

const githubIdInput = z.object({ githubId: z.string().trim().min(1).max(100) });
const branchesInput = z.object({
  owner: repositoryNameSchema,
  repo: repositoryNameSchema,
  githubId: z.string().trim().min(1).max(100).optional(),
});

const branches = query({
  summary: "The branches of one repository of the GitHub App's installation",
  access: "member",
  input: branchesInput,
  output: z.array(branchSchema),
  handler: async ({ services, caller, input }) => {
    const provider = await loadProvider(services, caller, "github", input.githubId);
    return githubBranches(services, provider, input.owner, input.repo);
  },
});

export const githubRouter = defineRouter("github", {
  create: createProcedure("github"),
  one: oneProcedure("github"),
  githubProviders: listProcedure("github"),
  update: updateProcedure("github"),
  getGithubRepositories: query({
    summary: "The repositories the GitHub App's installation can read",
    access: "member",
    input: githubIdInput,
    output: z.array(repositorySchema),
    handler: async ({ services, caller, input }) =>
      githubRepositories(services, await loadProvider(services, caller, "github", input.githubId)),
  }),
  getGithubBranches: branches,
  branches,
  testConnection: mutation({
    summary: "Buy an installation token and list the installation's repositories",
    access: "member",
    input: githubIdInput,
    output: z.string(),
    handler: async ({ services, caller, input }) => {
      const provider = await loadProvider(services, caller, "github", input.githubId);
      return `Found ${(await githubRepositories(services, provider)).length} repositories`;
    },
  }),
});
