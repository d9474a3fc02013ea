/**
 * Preview deployments (issue 31, spec 6.2): a pull or merge request of an application with
 * isPreviewDeploymentsActive becomes a service of its own, of the application's organization:
 * its own appName (`preview-<appName>-<random>`), its Swarm service and image labelled with the
 * preview as owner (previewOwner), built from the application's source at the request's branch
 * with previewEnv, previewBuildArgs and the preview build secrets, routed at
 * `<preview appName>.<previewWildcard's parent>` (previewPath, previewPort, previewHttps,
 * previewCertificateType) through a Traefik file of its own. Its host is a `domains` row
 * (domainType preview) claimed like any domain: another organization's host is never taken.
 * Its deployments go through the deployment queue (target kind `preview`); new commits queue
 * another, a redelivered event for the same commit queues nothing (head_sha); close or merge
 * deletes it (service, Traefik file, host, rows); previewLimit deletes the oldest first. A
 * comment on the request (comments.ts) shows its URL, commit and status as it goes.
 */
import { randomBytes } from "node:crypto";
import { isExistingAppName } from "@platform/names";
import { previewOwner } from "@platform/ownership";
import { dynamicConfigFileName, toYaml } from "@platform/traefik-config";
import { callAgent } from "../agents/errors.ts";
import { loadDeployedApplication, runApplicationVariant } from "../applications/pipeline.ts";
import { findApplication } from "../applications/repository.ts";
import { providerRepository } from "../applications/source.ts";
import { openApplicationSecret } from "../applications/views.ts";
import type { Caller, ServiceContext } from "../context.ts";
import { newId } from "../crypto/ids.ts";
import type { Db } from "../db/database.ts";
import { withOwner } from "../db/owned.ts";
import type { Application, PreviewDeployment } from "../db/schema.ts";
import { recordEvent } from "../deployments/events.ts";
import type { DeploymentOutcome, DeploymentRun } from "../deployments/pipeline.ts";
import { insertDeployment } from "../deployments/repository.ts";
import { removeServiceOf, serverOf } from "../deployments/runtime.ts";
import { DEFAULT_TITLES, type DeploymentKind, enqueueOrFail } from "../deployments/start.ts";
import { dropWaitingDeployments, stopRunningDeployment } from "../deployments/stop.ts";
import type { DeploymentTarget } from "../deployments/targets.ts";
import { claimHost } from "../domains/ownership.ts";
import { badRequest, notFound } from "../errors.ts";
import { findProvider, PROVIDER_ID_FIELD } from "../git-providers/repository.ts";
import { requireApplicationAccess } from "../projects/permissions.ts";
import { applicationConfig, proxyServerOf } from "../proxy/sync.ts";
import { agentServerId } from "../servers/repository.ts";
import type { WebhookProvider } from "../webhooks/payload.ts";
import {
  type CommentStatus,
  commentBody,
  isCollaborator,
  type RequestRef,
  upsertComment,
} from "./comments.ts";
import type { PullRequestChange } from "./events.ts";

const SERVICE_ACTION_TIMEOUT_MS = 60_000;
const PROVIDER_KINDS = ["github", "gitlab", "bitbucket", "gitea"] as const;
type ProviderKind = (typeof PROVIDER_KINDS)[number];

type LocatedApp = Application & { organizationId: string };

async function loadApp(db: Db, applicationId: string): Promise<LocatedApp | undefined> {
  return withOwner(db.selectFrom("applications"), "applications.environmentId")
    .selectAll("applications")
    .select("projects.organizationId")
    .where("applications.applicationId", "=", applicationId)
    .executeTakeFirst();
}

export function findPreview(db: Db, previewDeploymentId: string) {
  return db
    .selectFrom("previewDeployments")
    .selectAll()
    .where("previewDeploymentId", "=", previewDeploymentId)
    .executeTakeFirst();
}

export function listPreviews(db: Db, applicationId: string) {
  return db
    .selectFrom("previewDeployments")
    .selectAll()
    .where("applicationId", "=", applicationId)
    .orderBy("createdAt", "asc")
    .orderBy("previewDeploymentId")
    .execute();
}

/** The preview's host (its domain row), when it has one. */
export function findPreviewDomain(db: Db, preview: Pick<PreviewDeployment, "domainId">) {
  if (!preview.domainId) return Promise.resolve(undefined);
  return db.selectFrom("domains").selectAll().where("domainId", "=", preview.domainId).executeTakeFirst();
}

const isProviderKind = (kind: string): kind is ProviderKind =>
  (PROVIDER_KINDS as readonly string[]).includes(kind);

/** The branch field of the application's source kind (a preview builds the request's branch there). */
const BRANCH_FIELD = {
  github: "branch",
  gitlab: "gitlabBranch",
  bitbucket: "bitbucketBranch",
  gitea: "giteaBranch",
  git: "customGitBranch",
} as const;

/** `preview-<appName>-<6 hex>`: a DNS label and a valid appName. */
export function previewAppName(appName: string, random = randomBytes(3).toString("hex")): string {
  const base = appName
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, 40)
    .replace(/-+$/, "");
  return `preview-${base || "app"}-${random}`;
}

/** The preview's host: `*.example.com` -> `<previewAppName>.example.com` (the instance's wildcard domain without one). */
export async function previewHost(db: Db, app: Pick<Application, "previewWildcard">, appName: string) {
  let parent = app.previewWildcard?.trim().toLowerCase().replace(/^\*\./, "") ?? "";
  if (!parent) {
    const settings = await db
      .selectFrom("webServerSettings")
      .select("wildcardDomain")
      .where("id", "=", 1)
      .executeTakeFirst();
    parent = settings?.wildcardDomain.trim().toLowerCase().replace(/^\*\./, "") ?? "";
  }
  if (!parent) throw badRequest("The application has no previewWildcard", { fields: ["previewWildcard"] });
  return `${appName}.${parent}`;
}

const previewUrl = (app: Pick<Application, "previewHttps" | "previewPath">, host: string) =>
  `${app.previewHttps ? "https" : "http"}://${host}${app.previewPath && app.previewPath !== "/" ? app.previewPath : ""}`;

/** A preview of an application of the caller's organization the caller may see (else 404). */
export async function loadCallerPreview(ctx: ServiceContext, caller: Caller, previewDeploymentId: string) {
  const preview = await findPreview(ctx.db, previewDeploymentId);
  if (!preview || !(await findApplication(ctx.db, caller.organizationId, preview.applicationId))) {
    throw notFound("Preview deployment");
  }
  await requireApplicationAccess(ctx.db, caller, preview.applicationId, "Preview deployment");
  return preview;
}

// ---------------------------------------------------------------- comments

/** The request a preview comments on (null: made through the API, or the provider is gone). */
async function requestOf(
  ctx: ServiceContext,
  app: LocatedApp,
  preview: PreviewDeployment,
): Promise<RequestRef | null> {
  const kind = preview.provider;
  if (!kind || !isProviderKind(kind) || app.sourceType !== kind) return null;
  const providerId = app[PROVIDER_ID_FIELD[kind]];
  if (!providerId) return null;
  const provider = await findProvider(ctx.db, app.organizationId, kind, providerId);
  if (!provider) return null;
  return { provider, repository: providerRepository(kind, app).path, number: preview.pullRequestNumber };
}

/** Posts or edits the preview's comment; a provider that fails is logged, never fatal. */
export async function updatePreviewComment(
  ctx: ServiceContext,
  previewDeploymentId: string,
  status: CommentStatus,
): Promise<void> {
  try {
    // One comment per request: the preview's row is locked while it is posted or edited, so
    // the event's "queued" and the worker's "building" never both post a first comment.
    await ctx.db.transaction().execute(async (trx) => {
      const preview = await trx
        .selectFrom("previewDeployments")
        .selectAll()
        .where("previewDeploymentId", "=", previewDeploymentId)
        .forUpdate()
        .executeTakeFirst();
      if (!preview) return;
      const app = await loadApp(trx, preview.applicationId);
      if (!app) return;
      const ref = await requestOf(ctx, app, preview);
      if (!ref) return;
      const host = preview.domainId
        ? (
            await trx
              .selectFrom("domains")
              .select("host")
              .where("domainId", "=", preview.domainId)
              .executeTakeFirst()
          )?.host
        : undefined;
      const body = commentBody({ status, url: host ? previewUrl(app, host) : "-", commit: preview.headSha });
      const commentId = await upsertComment(ctx, ref, preview.pullRequestCommentId, body);
      if (commentId && commentId !== preview.pullRequestCommentId) {
        await trx
          .updateTable("previewDeployments")
          .set({ pullRequestCommentId: commentId })
          .where("previewDeploymentId", "=", previewDeploymentId)
          .execute();
      }
    });
  } catch (error) {
    ctx.logger.warn({ err: error, previewDeploymentId, status }, "the preview's comment was not posted");
  }
}

// ---------------------------------------------------------------- create, deploy, delete

export interface NewPreview {
  branch: string;
  provider: WebhookProvider | null;
  pullRequestId: string;
  pullRequestNumber: string;
  pullRequestURL: string;
  pullRequestTitle: string;
  headSha: string | null;
}

/**
 * Creates the request's preview (or finds it) and queues its deployment of `headSha`, in one
 * transaction: a redelivered event whose commit is already queued queues nothing. previewLimit
 * deletes the oldest previews first. Answers the preview and the deployment queued (null: none).
 */
export async function deployPreview(
  ctx: ServiceContext,
  app: LocatedApp,
  request: NewPreview,
  options: { kind?: DeploymentKind; title?: string; description?: string; force?: boolean } = {},
): Promise<{ preview: PreviewDeployment; deploymentId: string | null; created: boolean }> {
  // This machine runs only the instance organization's services (a 400 naming serverId).
  await agentServerId(ctx, app.organizationId, app.serverId);
  const existing = await ctx.db
    .selectFrom("previewDeployments")
    .selectAll()
    .where("applicationId", "=", app.applicationId)
    .where("pullRequestId", "=", request.pullRequestId)
    .executeTakeFirst();
  if (!existing) {
    const others = await listPreviews(ctx.db, app.applicationId);
    const excess = others.length - app.previewLimit + 1;
    for (const oldest of others.slice(0, Math.max(0, excess))) {
      await deletePreview(ctx, oldest, `The application's previewLimit (${app.previewLimit}) was reached`);
    }
  }
  const appName = existing?.appName ?? previewAppName(app.appName);
  const host = existing ? null : await previewHost(ctx.db, app, appName);
  const result = await ctx.db.transaction().execute(async (trx) => {
    await sql_lockPreviews(trx, app.applicationId);
    let preview =
      (await trx
        .selectFrom("previewDeployments")
        .selectAll()
        .where("applicationId", "=", app.applicationId)
        .where("pullRequestId", "=", request.pullRequestId)
        .forUpdate()
        .executeTakeFirst()) ?? null;
    let created = false;
    if (!preview) {
      const previewDeploymentId = newId();
      const domainId = newId();
      await claimHost(trx, app.organizationId, host!);
      preview = await trx
        .insertInto("previewDeployments")
        .values({
          previewDeploymentId,
          applicationId: app.applicationId,
          appName,
          branch: request.branch,
          provider: request.provider,
          pullRequestId: request.pullRequestId,
          pullRequestNumber: request.pullRequestNumber,
          pullRequestUrl: request.pullRequestURL,
          pullRequestTitle: request.pullRequestTitle,
          headSha: request.headSha,
          domainId,
        })
        .returningAll()
        .executeTakeFirstOrThrow();
      await trx
        .insertInto("domains")
        .values({
          domainId,
          host: host!,
          path: app.previewPath,
          port: app.previewPort,
          https: app.previewHttps,
          certificateType: app.previewHttps ? app.previewCertificateType : "none",
          customCertResolver: app.previewHttps ? app.previewCustomCertResolver : null,
          certificate: null,
          certificateKeySealed: null,
          domainType: "preview",
          applicationId: app.applicationId,
          composeId: null,
          serviceName: null,
          internalPath: null,
          customEntrypoint: null,
          previewDeploymentId,
        })
        .execute();
      created = true;
    } else if (!options.force && request.headSha && preview.headSha === request.headSha) {
      return { preview, deploymentId: null, created };
    } else {
      preview = await trx
        .updateTable("previewDeployments")
        .set({
          headSha: request.headSha ?? preview.headSha,
          branch: request.branch,
          pullRequestTitle: request.pullRequestTitle || preview.pullRequestTitle,
        })
        .where("previewDeploymentId", "=", preview.previewDeploymentId)
        .returningAll()
        .executeTakeFirstOrThrow();
    }
    const kind = options.kind ?? "deploy";
    const deployment = await insertDeployment(trx, {
      target: { kind: "preview", id: preview.previewDeploymentId },
      kind,
      title:
        options.title ||
        (request.headSha
          ? `Preview ${request.headSha.slice(0, 7)} of ${request.branch}`
          : DEFAULT_TITLES[kind]),
      description: options.description ?? (request.pullRequestTitle || null),
      serverId: app.serverId,
    });
    return { preview, deploymentId: deployment.deploymentId, created };
  });
  if (result.deploymentId) {
    await enqueueOrFail(ctx, result.deploymentId, result.preview.previewDeploymentId);
    await updatePreviewComment(ctx, result.preview.previewDeploymentId, "queued");
  }
  return result;
}

/** Serializes the creations of one application's previews (the limit and the request's row). */
async function sql_lockPreviews(trx: Db, applicationId: string) {
  await trx
    .selectFrom("applications")
    .select("applicationId")
    .where("applicationId", "=", applicationId)
    .forUpdate()
    .execute();
}

/**
 * Deletes a preview: its deployments stop, its service and Traefik file go (best effort on an
 * unreachable server), its rows go (its host is free again), its comment says so.
 */
export async function deletePreview(
  ctx: ServiceContext,
  preview: PreviewDeployment,
  reason: string,
): Promise<void> {
  const app = await loadApp(ctx.db, preview.applicationId);
  await dropWaitingDeployments(ctx, preview.previewDeploymentId, reason);
  await stopRunningDeployment(ctx, preview.previewDeploymentId, reason);
  if (app) {
    const owner = previewOwner(app.organizationId, preview.previewDeploymentId);
    const serverId = serverOf(app);
    if (isExistingAppName(preview.appName)) {
      await removeServiceOf(ctx, serverId, preview.appName, "application", () =>
        ctx.agents.client.serviceAction(serverId, preview.appName, "REMOVE", {
          timeoutMs: SERVICE_ACTION_TIMEOUT_MS,
          owner,
        }),
      );
      try {
        await callAgent(
          serverId,
          () =>
            ctx.agents.client.removeProxyFile(serverId, "dynamic", dynamicConfigFileName(preview.appName), {
              owner,
            }),
          ctx.logger,
        );
      } catch (error) {
        ctx.logger.warn({ err: error, serverId }, "the preview's Traefik file could not be removed");
      }
    }
    await updatePreviewComment(ctx, preview.previewDeploymentId, "deleted");
  }
  await ctx.db
    .deleteFrom("previewDeployments")
    .where("previewDeploymentId", "=", preview.previewDeploymentId)
    .execute();
}

/** Deletes every preview of the application (before the application goes). */
export async function deleteApplicationPreviews(
  ctx: ServiceContext,
  applicationId: string,
  reason: string,
): Promise<void> {
  for (const preview of await listPreviews(ctx.db, applicationId)) {
    await deletePreview(ctx, preview, reason);
  }
}

/** Writes the preview's Traefik file (its one host) on the server its service runs on. */
async function writePreviewProxy(
  ctx: ServiceContext,
  app: LocatedApp,
  preview: PreviewDeployment,
  log: (line: string) => void,
): Promise<void> {
  const domains = await ctx.db
    .selectFrom("domains")
    .selectAll()
    .where("previewDeploymentId", "=", preview.previewDeploymentId)
    .execute();
  const config = applicationConfig(preview.appName, domains, []);
  if (!config) return;
  const serverId = proxyServerOf(ctx, app);
  await ctx.agents.client.writeProxyFile(
    serverId,
    "dynamic",
    dynamicConfigFileName(preview.appName),
    toYaml(config),
    { owner: previewOwner(app.organizationId, preview.previewDeploymentId) },
  );
  for (const domain of domains) log(`Routing ${previewUrl(app, domain.host)} to the preview`);
}

/** A preview's deployment: the application's pipeline with the preview's name, branch and settings. */
export async function runPreviewDeployment(
  ctx: ServiceContext,
  run: DeploymentRun,
): Promise<DeploymentOutcome> {
  await updatePreviewComment(ctx, run.target.id, "building");
  return runApplicationVariant(ctx, run, async () => {
    const preview = await findPreview(ctx.db, run.target.id);
    if (!preview) throw new Error("The preview deployment no longer exists");
    const app = await loadDeployedApplication(ctx, preview.applicationId);
    if (!app) throw new Error("The application no longer exists");
    const branchField = BRANCH_FIELD[app.sourceType as keyof typeof BRANCH_FIELD];
    if (!branchField) throw new Error(`A ${app.sourceType} source has no branch to preview`);
    const previewApp = {
      ...app,
      appName: preview.appName,
      env: app.previewEnv ?? "",
      buildArgs: app.previewBuildArgs,
      [branchField]: preview.branch,
    };
    return {
      app: previewApp,
      variant: {
        owner: previewOwner(app.organizationId, preview.previewDeploymentId),
        buildSecrets: openApplicationSecret(
          ctx.secrets,
          "previewBuildSecrets",
          app,
          app.previewBuildSecretsSealed,
        ),
        ports: [],
        mounts: [],
        keepRollback: false,
        afterDeploy: (_serverId, log) => writePreviewProxy(ctx, app, preview, log),
      },
    };
  });
}

/** The deployment queue's view of a preview (deployments/targets.ts). */
export async function loadPreviewTarget(
  ctx: ServiceContext,
  previewDeploymentId: string,
): Promise<DeploymentTarget | undefined> {
  const preview = await findPreview(ctx.db, previewDeploymentId);
  if (!preview) return undefined;
  const app = await loadApp(ctx.db, preview.applicationId);
  if (!app) return undefined;
  const setStatus = async (db: Db, status: PreviewDeployment["previewStatus"]) => {
    await db
      .updateTable("previewDeployments")
      .set({ previewStatus: status })
      .where("previewDeploymentId", "=", previewDeploymentId)
      .execute();
  };
  return {
    kind: "preview",
    serviceId: previewDeploymentId,
    name: `${app.name} preview #${preview.pullRequestNumber}`,
    organizationId: app.organizationId,
    status: preview.previewStatus,
    run: runPreviewDeployment,
    recovery: {
      follow: {
        serverId: serverOf(app),
        name: preview.appName,
        owner: previewOwner(app.organizationId, previewDeploymentId),
      },
    },
    setStatus,
    settle: async (db, deployment, result, now) => {
      await setStatus(db, result.status);
      await recordEvent(
        db,
        {
          organizationId: app.organizationId,
          kind: result.status === "done" ? "appDeploy" : "appBuildError",
          applicationId: app.applicationId,
          payload: {
            applicationName: `${app.name} (preview ${preview.appName})`,
            status: result.status === "done" ? "success" : "error",
            message:
              result.status === "done"
                ? `${deployment.title}: deployed`
                : `${deployment.title}: ${result.errorMessage}`,
          },
        },
        now,
      );
      // After the outcome is stored: the comment says what the deployment's record says.
      const status = result.status === "done" ? "done" : "error";
      setImmediate(() => void updatePreviewComment(ctx, previewDeploymentId, status));
    },
  };
}

// ---------------------------------------------------------------- events

export interface PreviewEventInput {
  provider: WebhookProvider;
  change: PullRequestChange;
  applicationIds: string[];
}

/** Handles a verified request event for the applications it concerns; answers what was done. */
export async function handlePullRequestChange(
  ctx: ServiceContext,
  input: PreviewEventInput,
): Promise<string> {
  const { change, provider } = input;
  if (change.action === "ignore") return "ignored: the request's change needs no preview";
  const outcomes: string[] = [];
  for (const applicationId of input.applicationIds) {
    const app = await loadApp(ctx.db, applicationId);
    if (!app) continue;
    const existing = await ctx.db
      .selectFrom("previewDeployments")
      .selectAll()
      .where("applicationId", "=", applicationId)
      .where("pullRequestId", "=", change.id)
      .executeTakeFirst();
    if (change.action === "close") {
      if (existing) {
        await deletePreview(ctx, existing, "The request was closed or merged");
        outcomes.push("preview deleted");
      }
      continue;
    }
    const skip = await whyNoPreview(ctx, app, input);
    if (skip) {
      outcomes.push(`no preview: ${skip}`);
      continue;
    }
    const { deploymentId, created } = await deployPreview(ctx, app, {
      branch: change.branch,
      provider,
      pullRequestId: change.id,
      pullRequestNumber: change.number,
      pullRequestURL: change.url,
      pullRequestTitle: change.title,
      headSha: change.headSha,
    });
    outcomes.push(
      deploymentId
        ? `preview ${created ? "created" : "updated"} (deployment ${deploymentId})`
        : `preview already queued for ${change.headSha.slice(0, 7)}`,
    );
  }
  return outcomes.length > 0 ? outcomes.join("; ") : "ignored: no application with this request's preview";
}

async function whyNoPreview(
  ctx: ServiceContext,
  app: LocatedApp,
  input: PreviewEventInput,
): Promise<string | null> {
  if (!app.isPreviewDeploymentsActive) return "previews are not active on the application";
  if (app.previewLimit < 1) return "the application's previewLimit is 0";
  if (app.sourceType !== input.provider) {
    return `the application's source is ${app.sourceType}, not ${input.provider}`;
  }
  const labels = app.previewLabels ?? [];
  if (labels.length > 0 && !input.change.labels.some((label) => labels.includes(label))) {
    return input.change.hasLabels
      ? `the request carries none of the labels ${labels.join(", ")}`
      : `${input.provider} requests carry no labels and previewLabels is set`;
  }
  if (app.previewRequireCollaboratorPermissions) {
    const kind = input.provider;
    const providerId = app[PROVIDER_ID_FIELD[kind]];
    const provider = providerId
      ? await findProvider(ctx.db, app.organizationId, kind, providerId)
      : undefined;
    if (!provider) return "the application has no provider to check the author's permissions with";
    const ref = { provider, repository: providerRepository(kind, app).path, number: input.change.number };
    let allowed = false;
    try {
      allowed = await isCollaborator(ctx, ref, input.change.author);
    } catch (error) {
      ctx.logger.warn({ err: error }, "the request author's permissions could not be checked");
      return "the author's permissions could not be checked";
    }
    if (!allowed) return "the request's author is not a collaborator of the repository";
  }
  return null;
}
