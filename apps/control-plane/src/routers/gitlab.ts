/**
 * gitlab (spec 4.12): GitLab OAuth applications on gitlab.com or a self-hosted GitLab
 * (gitlabUrl; gitlabInternalUrl, when set, is where the platform reaches it). The OAuth flow
 * starts with startAuthorization (the authorize page with a state minted for the caller) and ends
 * at /api/gitlab/callback; the access token is refreshed before it expires.
 */
import { z } from "zod";
import { gitlabRepositories } from "../git-providers/clients.ts";
import {
  createProcedure,
  listProcedure,
  loadProvider,
  oneProcedure,
  repositoryProcedures,
  startAuthorizationProcedure,
  updateProcedure,
} from "../git-providers/procedures.ts";
import { defineRouter, mutation } from "../procedure.ts";

const gitlabId = z.string().trim().min(1).max(100);
const { repositories, branches } = repositoryProcedures("gitlab");

export const gitlabRouter = defineRouter("gitlab", {
  create: createProcedure("gitlab"),
  one: oneProcedure("gitlab"),
  gitlabProviders: listProcedure("gitlab"),
  update: updateProcedure("gitlab"),
  getGitlabRepositories: repositories,
  getGitlabBranches: branches,
  startAuthorization: startAuthorizationProcedure("gitlab"),
  testConnection: mutation({
    summary: "List the projects the token reaches (groupName overrides the stored groups)",
    access: "member",
    input: z.object({ gitlabId: gitlabId.optional(), groupName: z.string().trim().max(500).optional() }),
    output: z.string(),
    handler: async ({ ctx, caller, input }) => {
      const provider = await loadProvider(ctx, caller, "gitlab", input.gitlabId);
      const projects = await gitlabRepositories(ctx, provider, input.groupName);
      return `Found ${projects.length} repositories`;
    },
  }),
});
