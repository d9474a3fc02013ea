/**
 * The provider-level HTTP routes (spec 4.15):
 * - POST /api/github/webhook: a GitHub App's webhook. The provider is found by `installation.id`
 *   (a `ping` by `hook.app_id` = githubAppId) and X-Hub-Signature-256 is verified in constant time
 *   with that provider's webhook secret: unsigned, wrongly signed or unknown is 401. A push deploys
 *   the applications of that provider, owner and repository as 6.2 says (branch or tag, watchPaths);
 *   a pull_request goes to the preview hook.
 * - POST /api/deploy/gitlab: a GitLab provider's group or project webhook (Dokploy's). The provider
 *   is the one whose webhookSecret equals X-Gitlab-Token (compared in constant time with every
 *   GitLab provider's): missing or unknown is 401. A push or tag push deploys the applications of
 *   that provider and project (gitlabPathNamespace) as 6.2 says; a merge request goes to the
 *   preview hook.
 * - GET /api/gitlab/callback, /api/gitea/callback: the OAuth redirect targets. `state` must be one
 *   `<kind>.startAuthorization` minted (oauth-state.ts): unknown, expired or used is a 400 before
 *   anything is sent to the provider. `code` is then traded for tokens at the provider's token
 *   endpoint, for the provider the state was minted for.
 */
import { escapeLogText } from "@platform/agent-protocol";
import type { Context, Hono } from "hono";
import type { AppEnv } from "../app.ts";
import { startApplicationDeployment } from "../applications/start-deployment.ts";
import type { ServiceContext } from "../context.ts";
import type { Application } from "../db/schema.ts";
import { ApiError, notFound } from "../errors.ts";
import { decideDeployment } from "../webhooks/decide.ts";
import { PayloadError, parsePushEvent } from "../webhooks/payload.ts";
import { isPullRequestEvent, onPullRequestEvent } from "../webhooks/previews.ts";
import { parseBody, titleOf } from "../webhooks/route.ts";
import { constantTimeEqual, verifySignature } from "../webhooks/signature.ts";
import { exchangeOAuthCode } from "./clients.ts";
import { takeOAuthState } from "./oauth-state.ts";
import {
  findGithubProvidersBy,
  findProvider,
  listProvidersAnywhere,
  openSecrets,
  PROVIDER_NAMES,
  type ProviderRecord,
} from "./repository.ts";

const fail = (c: Context<AppEnv>, error: ApiError) => c.json(error.toBody(), error.status as 400);
const obj = (value: unknown) =>
  value && typeof value === "object" ? (value as Record<string, unknown>) : {};

/** The provider whose webhook secret signed the body, among the candidates; null when none did. */
function signedBy(
  ctx: ServiceContext,
  candidates: ProviderRecord[],
  headers: Headers,
  raw: Uint8Array,
): ProviderRecord | null {
  let found: ProviderRecord | null = null;
  for (const provider of candidates) {
    const secret = openSecrets(ctx, provider).githubWebhookSecret;
    // Every candidate is checked, so the time does not tell which one matched.
    if (secret && verifySignature("github", secret, headers, raw) && found === null) found = provider;
  }
  return found;
}

async function githubWebhook(c: Context<AppEnv>, ctx: ServiceContext) {
  const raw = new Uint8Array(await c.req.arrayBuffer());
  let payload: Record<string, unknown>;
  try {
    payload = obj(parseBody(c.req.header("content-type"), raw));
  } catch {
    return fail(c, new ApiError("UNAUTHORIZED", "Missing or invalid GitHub webhook signature"));
  }
  const event = c.req.header("x-github-event") ?? "";
  const candidates =
    event === "ping"
      ? await findGithubProvidersBy(ctx.db, "githubAppId", String(obj(payload.hook).app_id ?? ""))
      : await findGithubProvidersBy(
          ctx.db,
          "githubInstallationId",
          String(obj(payload.installation).id ?? ""),
        );
  const provider = signedBy(ctx, candidates, c.req.raw.headers, raw);
  if (!provider) {
    c.get("logger").warn({ event }, "github webhook: no provider's secret signed it");
    return fail(c, new ApiError("UNAUTHORIZED", "Missing or invalid GitHub webhook signature"));
  }
  if (event === "ping") return c.json({ success: true, deployed: false, message: "pong" });

  const repository = obj(payload.repository);
  const owner = String(obj(repository.owner).login ?? obj(repository.owner).name ?? "");
  const name = String(repository.name ?? "");
  const applications = await ctx.db
    .selectFrom("applications")
    .selectAll()
    .where("sourceType", "=", "github")
    .where("githubId", "=", provider.row.providerId)
    .where("owner", "=", owner)
    .where("repository", "=", name)
    .execute();

  if (isPullRequestEvent("github", event)) {
    const message = await onPullRequestEvent(ctx, {
      provider: "github",
      event,
      payload,
      applicationIds: applications.map((app) => app.applicationId),
    });
    return c.json({ success: true, deployed: false, message });
  }
  if (event !== "push") {
    return c.json({
      success: true,
      deployed: false,
      message: `Ignored the ${event || "unnamed"} event: only pushes deploy`,
    });
  }
  return deployPush(c, ctx, "github", payload, applications);
}

/** Parses a verified push and starts the deployments of the applications it concerns (6.2). */
async function deployPush(
  c: Context<AppEnv>,
  ctx: ServiceContext,
  kind: "github" | "gitlab",
  payload: unknown,
  applications: Application[],
) {
  let push: ReturnType<typeof parsePushEvent>;
  try {
    push = parsePushEvent(kind, payload);
  } catch (error) {
    const reason = error instanceof PayloadError ? error.message : "not a push payload";
    const field = error instanceof PayloadError ? error.field : "body";
    return fail(c, new ApiError("BAD_REQUEST", `Invalid webhook body: ${reason}`, { fields: [field] }));
  }
  const deploymentIds: string[] = [];
  const skipped: string[] = [];
  for (const application of applications) {
    const decision = decideDeployment(application, push);
    if (!decision.deploy) {
      skipped.push(`${application.applicationId}: ${decision.reason}`);
      continue;
    }
    const { deploymentId } = await startApplicationDeployment(ctx, {
      applicationId: application.applicationId,
      kind: "deploy",
      title: titleOf(kind, push),
      description: escapeLogText(push.headMessage.trim()).slice(0, 1000) || undefined,
    });
    deploymentIds.push(deploymentId);
  }
  return c.json({
    success: true,
    deployed: deploymentIds.length > 0,
    deploymentIds,
    message:
      deploymentIds.length > 0
        ? `Started ${deploymentIds.length} deployment(s)`
        : `Nothing deployed${skipped.length > 0 ? `: ${skipped.join("; ")}` : ": no application uses this repository"}`,
  });
}

const GITLAB_UNAUTHORIZED = "Missing or unknown X-Gitlab-Token";

async function gitlabWebhook(c: Context<AppEnv>, ctx: ServiceContext) {
  const token = c.req.header("x-gitlab-token") ?? "";
  let provider: ProviderRecord | null = null;
  // Every provider's secret is compared, so the time does not tell which one (or none) matched.
  for (const candidate of await listProvidersAnywhere(ctx.db, "gitlab")) {
    const secret = openSecrets(ctx, candidate).webhookSecret;
    if (secret && constantTimeEqual(token, secret) && provider === null) provider = candidate;
  }
  if (!token || !provider) {
    c.get("logger").warn("gitlab webhook: no provider's webhookSecret matches X-Gitlab-Token");
    return fail(c, new ApiError("UNAUTHORIZED", GITLAB_UNAUTHORIZED));
  }
  const raw = new Uint8Array(await c.req.arrayBuffer());
  let payload: Record<string, unknown>;
  try {
    payload = obj(parseBody(c.req.header("content-type"), raw));
  } catch {
    return fail(
      c,
      new ApiError("BAD_REQUEST", "Invalid webhook body: the body is not JSON", { fields: ["body"] }),
    );
  }
  const event = c.req.header("x-gitlab-event") ?? "";
  const pathNamespace = String(obj(payload.project).path_with_namespace ?? "");
  const applications = await ctx.db
    .selectFrom("applications")
    .selectAll()
    .where("sourceType", "=", "gitlab")
    .where("gitlabId", "=", provider.row.providerId)
    .where("gitlabPathNamespace", "=", pathNamespace)
    .execute();
  if (isPullRequestEvent("gitlab", event)) {
    const message = await onPullRequestEvent(ctx, {
      provider: "gitlab",
      event,
      payload,
      applicationIds: applications.map((app) => app.applicationId),
    });
    return c.json({ success: true, deployed: false, message });
  }
  if (event !== "Push Hook" && event !== "Tag Push Hook") {
    return c.json({
      success: true,
      deployed: false,
      message: `Ignored the ${event || "unnamed"} event: only pushes deploy`,
    });
  }
  return deployPush(c, ctx, "gitlab", payload, applications);
}

async function oauthCallback(c: Context<AppEnv>, ctx: ServiceContext, kind: "gitlab" | "gitea") {
  const code = c.req.query("code") ?? "";
  const state = c.req.query("state") ?? "";
  if (!code || code.length > 2000) {
    return fail(
      c,
      new ApiError("BAD_REQUEST", "The callback carries no authorization code", { fields: ["code"] }),
    );
  }
  try {
    const minted = await takeOAuthState(ctx, kind, state);
    const provider = await findProvider(ctx.db, minted.organizationId, kind, minted.providerId);
    if (!provider) throw notFound(`${PROVIDER_NAMES[kind]} provider`);
    await exchangeOAuthCode(ctx, provider, code);
  } catch (error) {
    if (error instanceof ApiError) return fail(c, error);
    throw error;
  }
  // The dashboard's Git providers page (a hash route: the page is served at /).
  return c.redirect("/#/git-providers", 302);
}

export function registerGitProviderRoutes(app: Hono<AppEnv>, ctx: ServiceContext): void {
  app.post("/api/github/webhook", (c) => githubWebhook(c, ctx));
  app.post("/api/deploy/gitlab", (c) => gitlabWebhook(c, ctx));
  app.get("/api/gitlab/callback", (c) => oauthCallback(c, ctx, "gitlab"));
  app.get("/api/gitea/callback", (c) => oauthCallback(c, ctx, "gitea"));
}
