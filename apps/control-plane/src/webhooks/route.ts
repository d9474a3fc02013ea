/**
 * Inbound deploy webhooks (spec 4.15, 6.2): POST /api/deploy/{github|gitlab|bitbucket|gitea}/
 * <applicationId>?refreshToken=…. The application id and refresh token authenticate the call
 * (an unknown application and a wrong token get the same 401); when the application has a webhook
 * secret, the provider's signature over the raw body must match too. A push that should not deploy
 * (autoDeploy off, another branch, no new tag, no watched file changed) is a 200 saying why.
 */
import { escapeLogText } from "@platform/agent-protocol";
import type { Context, Hono } from "hono";
import type { AppEnv } from "../app.ts";
import { startApplicationDeployment } from "../applications/start-deployment.ts";
import { openApplicationSecret } from "../applications/views.ts";
import type { ServiceContext } from "../context.ts";
import { withOwner } from "../db/owned.ts";
import { ApiError } from "../errors.ts";
import { errorResponse, type OpenApiPathItem } from "../openapi.ts";
import { decideDeployment } from "./decide.ts";
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

export function registerDeployWebhookRoutes(app: Hono<AppEnv>, ctx: ServiceContext): void {
  app.post("/api/deploy/:provider/:applicationId", async (c) => {
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

    const ignoredEvent = nonPushEvent(provider, c.req.raw.headers);
    if (ignoredEvent !== null && isPullRequestEvent(provider, ignoredEvent)) {
      let payload: unknown = null;
      try {
        payload = parseBody(c.req.header("content-type"), raw);
      } catch {
        return fail(
          c,
          new ApiError("BAD_REQUEST", "Invalid webhook body: the body is not JSON", { fields: ["body"] }),
        );
      }
      const message = await onPullRequestEvent(ctx, {
        provider,
        event: ignoredEvent,
        payload,
        applicationIds: [application.applicationId],
      });
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

    const decision = decideDeployment(application, push);
    if (!decision.deploy) {
      logger.info(
        { applicationId: application.applicationId, provider, ref: push.ref, reason: decision.reason },
        "webhook: nothing deployed",
      );
      return c.json({
        success: true,
        deployed: false,
        message: `Nothing deployed: ${decision.reason}`,
      } satisfies WebhookAnswer);
    }
    try {
      const { deploymentId } = await startApplicationDeployment(ctx, {
        applicationId: application.applicationId,
        kind: "deploy",
        title: titleOf(provider, push),
        // The commit message is outside text: its line breaks and ANSI sequences are escaped.
        description: escapeLogText(push.headMessage.trim()).slice(0, MAX_DESCRIPTION_CHARS) || undefined,
      });
      logger.info(
        { applicationId: application.applicationId, provider, ref: push.ref, deploymentId },
        "webhook: deployment started",
      );
      const message = decision.note ? `Deployment started (${decision.note})` : "Deployment started";
      return c.json({ success: true, deployed: true, deploymentId, message } satisfies WebhookAnswer);
    } catch (error) {
      if (error instanceof ApiError) return fail(c, error);
      throw error;
    }
  });
}
