/**
 * Inbound deploy webhooks (spec 4.15, 6.2): POST /api/deploy/{github|gitlab|bitbucket|gitea}/
 * <applicationId>?refreshToken=…. The application id and refresh token authenticate the call
 * (an unknown application and a wrong token get the same 401); when the application has a webhook
 * secret, the provider's signature over the raw body must match too. A push that should not deploy
 * (autoDeploy off, another branch, no new tag, no watched file changed) is a 200 saying why.
 * Compose stacks: POST /api/deploy/compose/<refreshToken> (Dokploy's URL), the provider told by
 * its event header; the same decision and answers (stacks have no webhook secret).
 */
import { escapeLogText } from "@platform/agent-protocol";
import type { Context, Hono } from "hono";
import type { AppEnv } from "../app.ts";
import { startApplicationDeployment } from "../applications/start-deployment.ts";
import { openApplicationSecret } from "../applications/views.ts";
import type { ServiceContext } from "../context.ts";
import { withOwner } from "../db/owned.ts";
import { startTargetDeployment } from "../deployments/start.ts";
import { ApiError } from "../errors.ts";
import { errorResponse, type OpenApiPathItem } from "../openapi.ts";
import { decideDeployment, type PushTarget } from "./decide.ts";
import {
  nonPushEvent,
  PayloadError,
  type PushEvent,
  parsePushEvent,
  type WebhookProvider,
  webhookProviders,
} from "./payload.ts";
import { isPullRequestEvent, onPullRequestEvent } from "./previews.ts";
import { constantTimeEqual, verifySignature } from "./signature.ts";

const PROVIDER_NAMES: Record<WebhookProvider, string> = {
  github: "GitHub",
  gitlab: "GitLab",
  bitbucket: "Bitbucket",
  gitea: "Gitea",
};
const MAX_DESCRIPTION_CHARS = 1000;

export type WebhookAnswer =
  | { success: true; deployed: true; deploymentId: string; message: string }
  | { success: true; deployed: false; message: string };

export const deployWebhookOpenApi: OpenApiPathItem = {
  post: {
    operationId: "deploy.webhook",
    tags: ["deploy"],
    summary: "A Git provider's push webhook: deploys when autoDeploy, branch or tag, and watchPaths allow",
    security: [],
    parameters: [
      { name: "provider", in: "path", required: true, schema: { enum: [...webhookProviders] } },
      { name: "applicationId", in: "path", required: true, schema: { type: "string" } },
      { name: "refreshToken", in: "query", required: true, schema: { type: "string" } },
    ],
    requestBody: { required: true, content: { "application/json": { schema: { type: "object" } } } },
    responses: {
      "200": {
        description: "Deployed, or why not",
        content: {
          "application/json": {
            schema: {
              type: "object",
              required: ["success", "deployed", "message"],
              properties: {
                success: { const: true },
                deployed: { type: "boolean" },
                deploymentId: { type: "string" },
                message: { type: "string" },
              },
            },
          },
        },
      },
      default: errorResponse,
    },
  },
};

function fail(c: Context<AppEnv>, error: ApiError) {
  return c.json(error.toBody(), error.status as 400);
}

async function findApplicationWithOrganization(ctx: ServiceContext, applicationId: string) {
  return withOwner(ctx.db.selectFrom("applications"), "applications.environmentId")
    .selectAll("applications")
    .select("projects.organizationId")
    .where("applications.applicationId", "=", applicationId)
    .executeTakeFirst();
}

/** GitHub may send `application/x-www-form-urlencoded` with the JSON in a `payload` field. */
export function parseBody(contentType: string | undefined, raw: Uint8Array): unknown {
  const text = new TextDecoder("utf-8", { fatal: true }).decode(raw);
  if (contentType?.toLowerCase().startsWith("application/x-www-form-urlencoded")) {
    return JSON.parse(new URLSearchParams(text).get("payload") ?? "");
  }
  return JSON.parse(text);
}

export function titleOf(provider: WebhookProvider, push: PushEvent): string {
  const name = PROVIDER_NAMES[provider];
  if (push.ref.startsWith("refs/tags/")) return `${name} tag ${push.ref.slice("refs/tags/".length)}`;
  return push.headSha ? `${name} push ${push.headSha.slice(0, 7)}` : `${name} push`;
}

/** The provider of a compose stack's webhook call, from the event header each one sends. */
export function providerOfHeaders(headers: Headers): WebhookProvider | null {
  if (headers.get("x-gitea-event") !== null || headers.get("x-gogs-event") !== null) return "gitea";
  if (headers.get("x-gitlab-event") !== null) return "gitlab";
  if (headers.get("x-event-key") !== null) return "bitbucket";
  if (headers.get("x-github-event") !== null) return "github";
  return null;
}

interface PushCall {
  provider: WebhookProvider;
  raw: Uint8Array;
  target: PushTarget;
  /** Logged with each outcome. */
  id: Record<string, string>;
  /** A pull or merge request event (applications' previews); absent: ignored as any non-push event. */
  onPullRequest?: (event: string, payload: unknown) => Promise<string>;
  start: (title: string, description: string | undefined) => Promise<{ deploymentId: string }>;
}

/**
 * What an authenticated webhook call does, for an application or a compose stack: a pull
 * request event goes to previews (applications), another non-push event is ignored, a push
 * deploys when decideDeployment says so.
 */
async function answerPush(c: Context<AppEnv>, ctx: ServiceContext, call: PushCall) {
  const { provider, raw, target, id } = call;
  const logger = c.get("logger");
  const ignoredEvent = nonPushEvent(provider, c.req.raw.headers);
  if (ignoredEvent !== null && call.onPullRequest && isPullRequestEvent(provider, ignoredEvent)) {
    let payload: unknown = null;
    try {
      payload = parseBody(c.req.header("content-type"), raw);
    } catch {
      return fail(
        c,
        new ApiError("BAD_REQUEST", "Invalid webhook body: the body is not JSON", { fields: ["body"] }),
      );
    }
    const message = await call.onPullRequest(ignoredEvent, payload);
    return c.json({ success: true, deployed: false, message } satisfies WebhookAnswer);
  }
  if (ignoredEvent !== null) {
    return c.json({
      success: true,
      deployed: false,
      message: `Ignored the ${ignoredEvent} event: only pushes deploy`,
    } satisfies WebhookAnswer);
  }

  let push: PushEvent;
  try {
    push = parsePushEvent(provider, parseBody(c.req.header("content-type"), raw));
  } catch (error) {
    const reason = error instanceof PayloadError ? error.message : "the body is not JSON";
    const field = error instanceof PayloadError ? error.field : "body";
    return fail(c, new ApiError("BAD_REQUEST", `Invalid webhook body: ${reason}`, { fields: [field] }));
  }

  const decision = decideDeployment(target, push);
  if (!decision.deploy) {
    logger.info({ ...id, provider, ref: push.ref, reason: decision.reason }, "webhook: nothing deployed");
    return c.json({
      success: true,
      deployed: false,
      message: `Nothing deployed: ${decision.reason}`,
    } satisfies WebhookAnswer);
  }
  try {
    const { deploymentId } = await call.start(
      titleOf(provider, push),
      // The commit message is outside text: its line breaks and ANSI sequences are escaped.
      escapeLogText(push.headMessage.trim()).slice(0, MAX_DESCRIPTION_CHARS) || undefined,
    );
    logger.info({ ...id, provider, ref: push.ref, deploymentId }, "webhook: deployment started");
    const message = decision.note ? `Deployment started (${decision.note})` : "Deployment started";
    return c.json({ success: true, deployed: true, deploymentId, message } satisfies WebhookAnswer);
  } catch (error) {
    if (error instanceof ApiError) return fail(c, error);
    throw error;
  }
}

/** The compose stack holding `refreshToken`, with its organization (null: none). */
async function findComposeByToken(ctx: ServiceContext, refreshToken: string) {
  if (refreshToken.length < 16) return null;
  const row = await withOwner(ctx.db.selectFrom("compose"), "compose.environmentId")
    .selectAll("compose")
    .select("projects.organizationId")
    .where("compose.refreshToken", "=", refreshToken)
    .executeTakeFirst();
  // The lookup is by equality; compare again in constant time before trusting it.
  return row && constantTimeEqual(refreshToken, row.refreshToken ?? "") ? row : null;
}

/**
 * A compose stack's push webhook, Dokploy's URL: POST /api/deploy/compose/<refreshToken>, the
 * provider told by its event header (X-GitHub-Event, X-Gitlab-Event, X-Gitea-Event, X-Event-Key).
 */
async function composeWebhook(c: Context<AppEnv>, ctx: ServiceContext, refreshToken: string) {
  const compose = await findComposeByToken(ctx, refreshToken);
  if (!compose) return fail(c, new ApiError("UNAUTHORIZED", "Unknown compose stack or wrong refreshToken"));
  const provider = providerOfHeaders(c.req.raw.headers);
  if (!provider) {
    return fail(
      c,
      new ApiError(
        "BAD_REQUEST",
        "Unknown webhook provider: send the provider's event header (X-GitHub-Event, X-Gitlab-Event, X-Gitea-Event or X-Event-Key)",
        { fields: ["headers"] },
      ),
    );
  }
  const raw = new Uint8Array(await c.req.arrayBuffer());
  return answerPush(c, ctx, {
    provider,
    raw,
    target: { ...compose, kind: "compose stack" },
    id: { composeId: compose.composeId },
    start: (title, description) =>
      startTargetDeployment(ctx, {
        target: { kind: "compose", id: compose.composeId },
        organizationId: compose.organizationId,
        serverId: compose.serverId,
        kind: "deploy",
        title,
        description,
      }),
  });
}

export function registerDeployWebhookRoutes(app: Hono<AppEnv>, ctx: ServiceContext): void {
  app.post("/api/deploy/:provider/:applicationId", async (c) => {
    if (c.req.param("provider") === "compose") return composeWebhook(c, ctx, c.req.param("applicationId"));
    const provider = c.req.param("provider") as WebhookProvider;
    if (!webhookProviders.includes(provider)) {
      return fail(
        c,
        new ApiError("NOT_FOUND", `Unknown webhook provider; use one of ${webhookProviders.join(", ")}`),
      );
    }
    const logger = c.get("logger");
    const token = c.req.query("refreshToken") ?? "";
    const application = await findApplicationWithOrganization(ctx, c.req.param("applicationId"));
    // Compare even without an application, so both refusals take the same path.
    const tokenMatches = constantTimeEqual(token, application?.refreshToken ?? "\u0000no-application");
    if (!application || !tokenMatches) {
      return fail(c, new ApiError("UNAUTHORIZED", "Unknown application or wrong refreshToken"));
    }

    const raw = new Uint8Array(await c.req.arrayBuffer());
    const secret = openApplicationSecret(
      ctx.secrets,
      "webhookSecret",
      application,
      application.webhookSecretSealed,
    );
    if (secret !== null && !verifySignature(provider, secret, c.req.raw.headers, raw)) {
      logger.warn({ applicationId: application.applicationId, provider }, "webhook signature mismatch");
      return fail(
        c,
        new ApiError("UNAUTHORIZED", `Missing or invalid ${PROVIDER_NAMES[provider]} webhook signature`),
      );
    }

    return answerPush(c, ctx, {
      provider,
      raw,
      target: application,
      id: { applicationId: application.applicationId },
      onPullRequest: (event, payload) =>
        onPullRequestEvent(ctx, { provider, event, payload, applicationIds: [application.applicationId] }),
      start: (title, description) =>
        startApplicationDeployment(ctx, {
          applicationId: application.applicationId,
          kind: "deploy",
          title,
          description,
        }),
    });
  });
}
