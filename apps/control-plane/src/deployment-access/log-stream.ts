/**
 * GET /api/deployment.logs?deploymentId=… : a deployment's log as server-sent events. First
 * the log so far, then each new line as it is written (event `log`, data: one
 * "<ISO timestamp> <line>"), and last an `end` event whose data is {status, errorMessage}.
 * Same authentication as every procedure; another organization's deployment is a 404. A server
 * schedule's run is followed by instance administrators only (access.ts), and so is a
 * run of the control plane's own backup (target kind webServer).
 */
import type { Context, Hono } from "hono";
import { streamSSE } from "hono/streaming";
import { authenticate } from "../auth/caller.ts";
import { credentialsOf } from "../auth/cookie-session.ts";
import { findWebServerRun } from "../backups/web-server-runs.ts";
import type { ServiceContext } from "../context.ts";
import type { Deployment } from "../db/schema.ts";
import type { LogEvent } from "../deployments/logs.ts";
import { ApiError, badRequest } from "../errors.ts";
import { errorResponse, type OpenApiPathItem } from "../openapi.ts";
import { loadCallerDeployment, rereadDeployment } from "./access.ts";

export const DEPLOYMENT_LOGS_PATH = "/api/deployment.logs";

export const deploymentLogsOpenApi: OpenApiPathItem = {
  get: {
    operationId: "deployment.logs",
    tags: ["deployment"],
    summary: "Follow a deployment's log live (server-sent events)",
    description:
      "Events `log` (data: one `<ISO timestamp> <line>`) for the log so far and each new line, then one `end` event (data: JSON `{status, errorMessage}`).",
    security: [{ bearer: [] }, { apiKey: [] }],
    parameters: [{ name: "deploymentId", in: "query", required: true, schema: { type: "string" } }],
    responses: {
      "200": {
        description: "The log as an event stream",
        content: { "text/event-stream": { schema: { type: "string" } } },
      },
      default: errorResponse,
    },
  },
};

/** How often a follower re-reads the row when no line arrives (ends stale or removed ones). */
const POLL_MS = 2_000;

const finished = (deployment: Deployment) => deployment.status === "done" || deployment.status === "error";
const linesOf = (logs: string) => (logs === "" ? [] : logs.replace(/\n$/, "").split("\n"));

export function registerDeploymentLogRoute(app: Hono, ctx: ServiceContext): void {
  app.get(DEPLOYMENT_LOGS_PATH, async (c) => {
    try {
      return await followDeployment(c, ctx);
    } catch (error) {
      if (error instanceof ApiError) {
        return c.json(error.toBody(), error.status as 400, error.headers);
      }
      throw error;
    }
  });
}

async function followDeployment(c: Context, ctx: ServiceContext): Promise<Response> {
  const url = new URL(c.req.url);
  const caller = await authenticate(ctx, credentialsOf(c.req.raw), url.searchParams.keys());
  const deploymentId = url.searchParams.get("deploymentId");
  if (!deploymentId || deploymentId.length > 100) {
    throw badRequest("Invalid input: deploymentId: a deployment id is required", {
      fields: ["deploymentId"],
    });
  }
  const { organizationId } = caller;
  const webServerRun = await findWebServerRun(ctx, caller, deploymentId);
  if (!webServerRun) await loadCallerDeployment(ctx, caller, deploymentId);
  const reread = async (): Promise<Deployment | undefined> =>
    webServerRun
      ? findWebServerRun(ctx, caller, deploymentId)
      : rereadDeployment(ctx, organizationId, deploymentId);

  return streamSSE(c, async (stream) => {
    const pending: LogEvent[] = [];
    let wake: (() => void) | undefined;
    const follow = ctx.deployments.worker.logs.follow(deploymentId, (event) => {
      pending.push(event);
      wake?.();
    });
    let closed = false;
    stream.onAbort(() => {
      closed = true;
      wake?.();
    });
    const sendLines = async (lines: string[]) => {
      for (const line of lines) await stream.writeSSE({ event: "log", data: line });
    };
    const sendEnd = (status: string, errorMessage: string | null) =>
      stream.writeSSE({ event: "end", data: JSON.stringify({ status, errorMessage }) });
    try {
      if (follow.lines) {
        await sendLines(follow.lines);
      } else {
        // Not running here: the row has the whole story unless the run starts meanwhile (then the
        // listener has every line from the first).
        const row = await reread();
        if (pending.length === 0) {
          if (!row) return void (await sendEnd("error", "The deployment was removed"));
          await sendLines(linesOf(row.logs));
          if (finished(row)) return void (await sendEnd(row.status, row.errorMessage));
        }
      }
      while (!closed) {
        for (let event = pending.shift(); event; event = pending.shift()) {
          if (event.type === "line") await stream.writeSSE({ event: "log", data: event.line });
          else return void (await sendEnd(event.status, event.errorMessage));
        }
        const timedOut = await new Promise<boolean>((resolve) => {
          const timer = setTimeout(() => resolve(true), POLL_MS);
          wake = () => {
            clearTimeout(timer);
            resolve(false);
          };
        });
        wake = undefined;
        if (timedOut && pending.length === 0 && !ctx.deployments.worker.isRunning(deploymentId)) {
          const row = await reread();
          if (!row) return void (await sendEnd("error", "The deployment was removed"));
          if (finished(row) && pending.length === 0)
            return void (await sendEnd(row.status, row.errorMessage));
        }
      }
    } finally {
      follow.stop();
    }
  });
}
