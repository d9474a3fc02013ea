/**
 * previewDeployment (Dokploy's router; spec 6.2, issue 31): an application's previews, each with
 * its host and deployments; delete one (its service, Traefik file and host go), deploy one again,
 * or make one for a branch of the application's repository without a request (create). The
 * previews of pull and merge requests are made by the providers' webhooks (previews/). Another
 * organization's preview or application, or one the caller may not see, is a 404.
 */
import { z } from "zod";
import { findApplication } from "../applications/repository.ts";
import { idSchema } from "../applications/schemas.ts";
import { branchNameProblem } from "../applications/validation.ts";
import type { Caller, ServiceContext } from "../context.ts";
import { listTargetDeployments, toDeploymentView } from "../deployments/repository.ts";
import { deploymentSchema } from "../deployments/schemas.ts";
import { toDomainView } from "../domains/schemas.ts";
import { badRequest, notFound } from "../errors.ts";
import {
  deletePreview,
  deployPreview,
  type findPreview,
  findPreviewDomain,
  listPreviews,
  loadCallerPreview,
} from "../previews/previews.ts";
import { defineRouter, mutation, query } from "../procedure.ts";
import { grantsOf, requireApplicationAccess, requireCanDeleteServices } from "../projects/permissions.ts";

const previewIdInput = z.object({ previewDeploymentId: idSchema });

const previewSchema = z.object({
  previewDeploymentId: z.string(),
  applicationId: z.string(),
  appName: z.string(),
  branch: z.string(),
  pullRequestId: z.string(),
  pullRequestNumber: z.string(),
  pullRequestURL: z.string(),
  pullRequestTitle: z.string(),
  pullRequestCommentId: z.string(),
  previewStatus: z.enum(["idle", "running", "done", "error"]),
  domainId: z.string().nullable(),
  createdAt: z.string(),
  expiresAt: z.null(),
  domain: z.record(z.string(), z.unknown()).nullable(),
  deployments: z.array(deploymentSchema),
});

type PreviewRow = NonNullable<Awaited<ReturnType<typeof findPreview>>>;

async function toPreviewView(ctx: ServiceContext, row: PreviewRow): Promise<z.input<typeof previewSchema>> {
  const domain = await findPreviewDomain(ctx.db, row);
  return {
    previewDeploymentId: row.previewDeploymentId,
    applicationId: row.applicationId,
    appName: row.appName,
    branch: row.branch,
    pullRequestId: row.pullRequestId,
    pullRequestNumber: row.pullRequestNumber,
    pullRequestURL: row.pullRequestUrl,
    pullRequestTitle: row.pullRequestTitle,
    pullRequestCommentId: row.pullRequestCommentId ?? "",
    previewStatus: row.previewStatus,
    domainId: row.domainId,
    createdAt: row.createdAt,
    // Dokploy's field, never set there either: no preview expires (docs/decisions.md).
    expiresAt: null,
    domain: domain ? toDomainView(domain) : null,
    deployments: (await listTargetDeployments(ctx.db, row.previewDeploymentId)).map(toDeploymentView),
  };
}

async function loadCallerApplication(ctx: ServiceContext, caller: Caller, applicationId: string) {
  const application = await findApplication(ctx.db, caller.organizationId, applicationId);
  if (!application) throw notFound("Application");
  await requireApplicationAccess(ctx.db, caller, applicationId);
  return application;
}

export const previewDeploymentRouter = defineRouter("previewDeployment", {
  all: query({
    summary: "The application's previews, oldest first, each with its host and deployments",
    access: "member",
    input: z.object({ applicationId: idSchema }),
    output: z.array(previewSchema),
    handler: async ({ ctx, caller, input }) => {
      await loadCallerApplication(ctx, caller, input.applicationId);
      const rows = await listPreviews(ctx.db, input.applicationId);
      return Promise.all(rows.map((row) => toPreviewView(ctx, row)));
    },
  }),

  one: query({
    summary: "A preview with its host and deployments",
    access: "member",
    input: previewIdInput,
    output: previewSchema,
    handler: async ({ ctx, caller, input }) =>
      toPreviewView(ctx, await loadCallerPreview(ctx, caller, input.previewDeploymentId)),
  }),

  delete: mutation({
    summary: "Delete a preview: its deployments stop, its service, Traefik file and host go",
    access: "member",
    input: previewIdInput,
    output: z.boolean(),
    handler: async ({ ctx, caller, input }) => {
      const preview = await loadCallerPreview(ctx, caller, input.previewDeploymentId);
      requireCanDeleteServices(await grantsOf(ctx.db, caller));
      await deletePreview(ctx, preview, "Deleted by previewDeployment.delete");
      return true;
    },
  }),

  redeploy: mutation({
    summary: "Build and deploy a preview again (queued); answers true",
    access: "member",
    input: previewIdInput.extend({
      title: z.string().max(500).optional(),
      description: z.string().max(1000).optional(),
    }),
    output: z.boolean(),
    handler: async ({ ctx, caller, input }) => {
      const preview = await loadCallerPreview(ctx, caller, input.previewDeploymentId);
      const application = await loadCallerApplication(ctx, caller, preview.applicationId);
      await deployPreview(
        ctx,
        application,
        {
          branch: preview.branch,
          provider: null,
          pullRequestId: preview.pullRequestId,
          pullRequestNumber: preview.pullRequestNumber,
          pullRequestURL: preview.pullRequestUrl,
          pullRequestTitle: preview.pullRequestTitle,
          headSha: preview.headSha,
        },
        {
          kind: "redeploy",
          title: input.title || "Rebuild Preview Deployment",
          description: input.description,
          force: true,
        },
      );
      return true;
    },
  }),

  create: mutation({
    summary:
      "Make a preview of a branch of the application's repository (no pull request): its host, service and first deployment",
    access: "member",
    input: z.object({
      applicationId: idSchema,
      branch: z.string().min(1).max(255),
      title: z.string().max(500).optional(),
    }),
    output: previewSchema,
    handler: async ({ ctx, caller, input }) => {
      const application = await loadCallerApplication(ctx, caller, input.applicationId);
      const problem = branchNameProblem(input.branch);
      if (problem) throw badRequest(`Invalid input: branch ${problem}`, { fields: ["branch"] });
      if (!["github", "gitlab", "bitbucket", "gitea", "git"].includes(application.sourceType)) {
        throw badRequest(`A ${application.sourceType} source has no branch to preview`, {
          fields: ["applicationId"],
        });
      }
      if (application.previewLimit < 1) {
        throw badRequest("The application's previewLimit is 0", { fields: ["applicationId"] });
      }
      const { preview } = await deployPreview(
        ctx,
        application,
        {
          branch: input.branch,
          provider: null,
          // One API preview per branch: asking again deploys it again.
          pullRequestId: `branch:${input.branch}`,
          pullRequestNumber: "0",
          pullRequestURL: "",
          pullRequestTitle: input.title ?? input.branch,
          headSha: null,
        },
        { force: true, title: `Preview of ${input.branch}` },
      );
      return toPreviewView(ctx, preview);
    },
  }),
});
