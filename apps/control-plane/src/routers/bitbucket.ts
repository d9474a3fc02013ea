/**
 * bitbucket (spec 4.12): Bitbucket Cloud accounts, with an app password (username) or an API
 * token (e-mail); bitbucketWorkspaceName picks the workspace whose repositories are listed.
 */
import { z } from "zod";
import { bitbucketRepositories } from "../git-providers/clients.ts";
import {
  createProcedure,
  listProcedure,
  loadProvider,
  oneProcedure,
  repositoryProcedures,
  updateProcedure,
} from "../git-providers/procedures.ts";
import { defineRouter, mutation } from "../procedure.ts";

const bitbucketId = z.string().trim().min(1).max(100);
const { repositories, branches } = repositoryProcedures("bitbucket");

export const bitbucketRouter = defineRouter("bitbucket", {
  create: createProcedure("bitbucket"),
  one: oneProcedure("bitbucket"),
  bitbucketProviders: listProcedure("bitbucket"),
  update: updateProcedure("bitbucket"),
  getBitbucketRepositories: repositories,
  getBitbucketBranches: branches,
  testConnection: mutation({
    summary: "List the workspace's repositories, with the stored credentials or the ones given (not stored)",
    access: "member",
    input: z.object({
      bitbucketId: bitbucketId.optional(),
      bitbucketUsername: z.string().trim().max(100).optional(),
      bitbucketEmail: z.string().trim().max(320).optional(),
      workspaceName: z.string().trim().max(100).optional(),
      appPassword: z.string().max(4096).optional(),
      apiToken: z.string().max(4096).optional(),
    }),
    output: z.string(),
    handler: async ({ ctx, caller, input }) => {
      const { bitbucketId: id, ...override } = input;
      const provider = await loadProvider(ctx, caller, "bitbucket", id);
      const given = Object.fromEntries(Object.entries(override).filter(([, value]) => value));
      return `Found ${(await bitbucketRepositories(ctx, provider, given)).length} repositories`;
    },
  }),
});
