/**
 * gitlab (spec 4.12): GitLab OAuth applications on gitlab.com or a self-hosted GitLab
 * (gitlabUrl; gitlabInternalUrl, when set, is where the platform reaches it). The OAuth flow
 * ends at /api/gitlab/callback; the access token is refreshed before it expires.
 */
import { z } from "zod";
import { namespacePathSchema, repositoryNameSchema } from "../applications/validation.ts";
import { gitlabBranches, gitlabRepositories } from "../git-providers/clients.ts";
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

const gitlabId = z.string().trim().min(1).max(100);

export const gitlabRouter = defineRouter("gitlab", {
  create: createProcedure("gitlab"),
  one: oneProcedure("gitlab"),
  gitlabProviders: listProcedure("gitlab"),
  update: updateProcedure("gitlab"),
  getGitlabRepositories: query({
    summary: "The GitLab projects the token is a member of (only groupName's groups when set)",
    access: "member",
    input: z.object({ gitlabId }),
    output: z.array(repositorySchema),
    handler: async ({ services, caller, input }) =>
      gitlabRepositories(services, await loadProvider(services, caller, "gitlab", input.gitlabId)),
  }),
  getGitlabBranches: query({
    summary: "The branches of one GitLab project (by its numeric id)",
    access: "member",
    input: z.object({
      id: z.number().int().min(1).optional(),
      owner: namespacePathSchema,
      repo: repositoryNameSchema,
      gitlabId: gitlabId.optional(),
    }),
    output: z.array(branchSchema),
    handler: async ({ services, caller, input }) => {
      const provider = await loadProvider(services, caller, "gitlab", input.gitlabId);
      if (input.id === undefined) {
        const project = (await gitlabRepositories(services, provider, "")).find(
          (repository) => repository.url === `${input.owner}/${input.repo}`,
        );
        if (!project) return [];
        return gitlabBranches(services, provider, Number(project.id));
      }
      return gitlabBranches(services, provider, input.id);
    },
  }),
  testConnection: mutation({
    summary: "List the projects the token reaches (groupName overrides the stored groups)",
    access: "member",
    input: z.object({ gitlabId: gitlabId.optional(), groupName: z.string().trim().max(500).optional() }),
    output: z.string(),
    handler: async ({ services, caller, input }) => {
      const provider = await loadProvider(services, caller, "gitlab", input.gitlabId);
      const projects = await gitlabRepositories(services, provider, input.groupName);
      return `Found ${projects.length} repositories`;
    },
  }),
});
