/**
 * The HTTP application: request ids and access logs, the body limit, health, the OpenAPI
 * document, the web dashboard at `/`, and the procedure dispatcher on both prefixes.
 */
import { type Context, Hono } from "hono";
import { bodyLimit } from "hono/body-limit";
import { requestId } from "hono/request-id";
import type { Logger } from "pino";
import {
  registerContainerUploadRoutes,
  UPLOAD_FILE_PATH,
  uploadFileToContainerOpenApi,
} from "./agents/container-upload.ts";
import { dropDeploymentOpenApi, registerDropRoutes } from "./applications/drop.ts";
import type { Caller, ServiceContext } from "./context.ts";
import { registerDashboardRoutes } from "./dashboard/routes.ts";
import {
  DEPLOYMENT_LOGS_PATH,
  deploymentLogsOpenApi,
  registerDeploymentLogRoute,
} from "./deployment-access/log-stream.ts";
import { Dispatcher, errorBodyFor, procedureTable } from "./dispatcher.ts";
import { ApiError } from "./errors.ts";
import { registerGitProviderRoutes } from "./git-providers/routes.ts";
import { readiness } from "./health.ts";
import { MAX_BODY_BYTES } from "./limits.ts";
import { RUNTIME_LOGS_PATH, registerRuntimeLogRoute, runtimeLogsOpenApi } from "./monitoring/log-follow.ts";
import { buildOpenApiDocument, type OpenApiPathItem, registerOpenApiRoutes } from "./openapi.ts";
import type { RouterDef } from "./procedure.ts";
import { allRouters } from "./routers/index.ts";
import { registerAgentArtifactRoutes } from "./servers/agent-artifact.ts";
import { deployWebhookOpenApi, registerDeployWebhookRoutes } from "./webhooks/route.ts";

export { MAX_BODY_BYTES };

/** The routes outside the procedure layer that the OpenAPI document describes. */
const openApiRoutes: Record<string, OpenApiPathItem> = {
  [DEPLOYMENT_LOGS_PATH]: deploymentLogsOpenApi,
  [RUNTIME_LOGS_PATH]: runtimeLogsOpenApi,
  "/api/application.dropDeployment": dropDeploymentOpenApi,
  [UPLOAD_FILE_PATH]: uploadFileToContainerOpenApi,
  "/api/deploy/{provider}/{applicationId}": deployWebhookOpenApi,
};

/**
 * The document /api/openapi.json serves, built without a running control plane (no services):
 * scripts/generate-api-types.ts makes the dashboard's types of it.
 */
export function openApiDocument(routers: RouterDef[] = allRouters): Record<string, unknown> {
  return buildOpenApiDocument(procedureTable(routers), openApiRoutes);
}

export type AppEnv = { Variables: { requestId: string; logger: Logger; caller: Caller } };

export function createApp(ctx: ServiceContext, routers: RouterDef[] = allRouters): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  const procedures = procedureTable(routers);
  const dispatcher = new Dispatcher(ctx, procedures);

  app.use(requestId({ limitLength: 64 }));
  app.use(async (c, next) => {
    const started = performance.now();
    const logger = ctx.logger.child({ requestId: c.get("requestId") });
    c.set("logger", logger);
    await next();
    const caller = c.get("caller");
    logger.info(
      {
        method: c.req.method,
        path: c.req.path,
        status: c.res.status,
        durationMs: Math.round((performance.now() - started) * 100) / 100,
        userId: caller?.userId,
      },
      "request",
    );
  });
  // Before the general body limit: the drop upload has its own, larger one.
  registerDropRoutes(app as unknown as Hono, ctx);
  app.use(
    "/api/*",
    bodyLimit({
      maxSize: MAX_BODY_BYTES,
      onError: (c) => {
        const error = new ApiError("PAYLOAD_TOO_LARGE", `Request body exceeds ${MAX_BODY_BYTES} bytes`, {
          maxBytes: MAX_BODY_BYTES,
        });
        return c.json(errorBodyFor(c.req.path, error), 413);
      },
    }),
  );

  // Liveness: the process answers, whatever its dependencies do (never restart it for them).
  app.get("/health/live", (c) => c.json({ status: "ok" }));
  // Readiness: 503 while the database is unreachable; NATS down is reported as degraded.
  const ready = async (c: Context) => {
    const { report, ready } = await readiness(ctx);
    return c.json(report, ready ? 200 : 503);
  };
  app.get("/health/ready", ready);
  app.get("/health", ready);

  registerOpenApiRoutes(app as unknown as Hono, procedures, openApiRoutes, ctx);
  registerAgentArtifactRoutes(app as unknown as Hono);
  registerDashboardRoutes(app as unknown as Hono, ctx);
  registerDeployWebhookRoutes(app, ctx);
  registerGitProviderRoutes(app, ctx);
  registerDeploymentLogRoute(app as unknown as Hono, ctx);
  registerRuntimeLogRoute(app as unknown as Hono, ctx);
  registerContainerUploadRoutes(app as unknown as Hono, ctx);
  app.all("/api/trpc/:path", (c) => dispatcher.handle(c, true));
  // Spec 4.0: the lifecycle operations of databases are also written `POST /api/<kind>/<operation>`.
  app.all(
    "/api/:kind{postgres|mysql|mariadb|mongo|redis}/:operation{deploy|start|stop|reload|rebuild|remove}",
    (c) => dispatcher.handle(c, false, `${c.req.param("kind")}.${c.req.param("operation")}`),
  );
  app.all("/api/:path", (c) => dispatcher.handle(c, false));

  app.notFound((c) =>
    c.json(
      errorBodyFor(c.req.path, new ApiError("NOT_FOUND", `No route for ${c.req.method} ${c.req.path}`)),
      404,
    ),
  );
  app.onError((error, c) => {
    // Routes outside the dispatcher (webhooks, log stream, uploads) may meet a 503 of the database.
    if (error instanceof ApiError) {
      for (const [name, value] of Object.entries(error.headers)) c.header(name, value);
      return c.json(error.toBody(), error.status as 503);
    }
    (c.get("logger") ?? ctx.logger).error({ err: error }, "unhandled error");
    return c.json(
      errorBodyFor(c.req.path, new ApiError("INTERNAL_SERVER_ERROR", "Internal server error")),
      500,
    );
  });
  return app;
}
