/**
 * GET /api/deployment.logs?deploymentId=… : a deployment's log as server-sent events. First
 * the log so far, then each new line as it is written (event `log`, data: one
 * "<ISO timestamp> <line>"; id: see log-cursor.ts), and last an `end` event whose data is
 * {status, errorMessage}. A copy not running the deployment reads its row every POLL_MS (the
 * running copy writes it every LOG_FLUSH_MS), so any copy follows any deployment, and a client
 * whose copy died resumes on another one with Last-Event-ID (issue 40 item 4).
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
import { ApiError, badRequest } from "../errors.ts";
import { errorResponse, type OpenApiPathItem } from "../openapi.ts";
import { loadCallerDeployment, rereadDeployment } from "./access.ts";
import { LogCursor, parseLogEventId } from "./log-cursor.ts";

export const DEPLOYMENT_LOGS_PATH = "/api/deployment.logs";

export const deploymentLogsOpenApi: OpenApiPathItem = {
  get: {
    operationId: "deployment.logs",
    tags: ["deployment"],
    summary: "Follow a deployment's log live (server-sent events)",
    description:
      "Events `log` (id: `<ISO timestamp> <n>`, the line's time and its rank among the lines of that time; data: one `<ISO timestamp> <line>`) for the log so far and each new line, then one `end` event (data: JSON `{status, errorMessage}`). Any control plane on the database follows any deployment; a client reconnecting with Last-Event-ID (to this or another control plane) gets the lines after that one.",
    security: [{ bearer: [] }, { apiKey: [] }],
    parameters: [
      { name: "deploymentId", in: "query", required: true, schema: { type: "string" } },
      {
        name: "Last-Event-ID",
        in: "header",
        required: false,
        description: "The id of the last `log` event received: the stream resumes after that line",
        schema: { type: "string" },
      },
    ],
    responses: {
      "200": {
        description: "The log as an event stream",
        content: { "text/event-stream": { schema: { type: "string" } } },
      },
      default: errorResponse,
    },
  },
};

/**
 * How often a follower re-reads the row of a deployment running on another copy (its lines),
 * or, running here, when no line arrives (ends stale or removed ones).
 */
const POLL_MS = 1_000;

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

  const lastEventId = c.req.header("Last-Event-ID");
  const resumeAfter = lastEventId === undefined ? null : parseLogEventId(lastEventId);
  if (lastEventId !== undefined && !resumeAfter) {
    throw badRequest("Invalid input: Last-Event-ID: an event id of this stream (`<ISO timestamp> <n>`)", {
      fields: ["Last-Event-ID"],
    });
  }

  return streamSSE(c, async (stream) => {
    const cursor = new LogCursor(resumeAfter);
    /** This copy's lines of the run when it runs here: its snapshot, then each line it emits. */
    let local: string[] | null = null;
    let ended: { status: string; errorMessage: string | null } | undefined;
    let wake: (() => void) | undefined;
    const subscribe = () => {
      ended = undefined;
      const follow = ctx.deployments.worker.logs.follow(deploymentId, (event) => {
        if (event.type === "line") local?.push(event.line);
        else ended = { status: event.status, errorMessage: event.errorMessage };
        wake?.();
      });
      // Lines are emitted synchronously: none arrives between follow() and this.
      local = follow.lines ? [...follow.lines] : null;
      return follow;
    };
    let follow = subscribe();
    let closed = false;
    stream.onAbort(() => {
      closed = true;
      wake?.();
    });
    const send = async (lines: readonly string[]) => {
      for (const entry of cursor.next(lines)) {
        await stream.writeSSE({ event: "log", id: entry.id, data: entry.line });
      }
    };
    const sendEnd = (status: string, errorMessage: string | null) =>
      stream.writeSSE({ event: "end", data: JSON.stringify({ status, errorMessage }) });
    try {
      let timedOut = false;
      while (!closed) {
        if (local) {
          // Running here: its lines in memory, as they come.
          await send(local);
          if (ended) return void (await sendEnd(ended.status, ended.errorMessage));
          // Ended without our hearing it, or handed back: the row tells from now on.
          if (timedOut && !ctx.deployments.worker.isRunning(deploymentId)) local = null;
        }
        if (!local) {
          // Running on another copy (or ended): its row, which the copy running it writes every
          // LOG_FLUSH_MS, read every POLL_MS, so the lines written elsewhere arrive as well.
          const row = await reread();
          if (!row) return void (await sendEnd("error", "The deployment was removed"));
          await send(linesOf(row.logs));
          if (finished(row)) return void (await sendEnd(row.status, row.errorMessage));
          if (ctx.deployments.worker.isRunning(deploymentId)) {
            // Taken over by this copy: its lines from now on.
            follow.stop();
            follow = subscribe();
            continue;
          }
        }
        timedOut = await new Promise<boolean>((resolve) => {
          const timer = setTimeout(() => resolve(true), POLL_MS);
          wake = () => {
            clearTimeout(timer);
            resolve(false);
          };
        });
        wake = undefined;
      }
    } finally {
      follow.stop();
    }
  });
}
