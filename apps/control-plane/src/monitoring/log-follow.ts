/**
 * GET /api/runtime.logs?applicationId=… (or composeId=…&containerId=…, or postgresId=…,
 * mysqlId=…, mariadbId=…, mongoId=…, redisId=…, libsqlId=…): a workload's runtime log followed live as
 * server-sent events, one stream per request. Each line is an event `log` whose data is
 * `<RFC 3339 time> <task or container> | <text>` (the readLogs line) and whose id is the line's
 * time; a client reconnecting with Last-Event-ID gets the lines after that time. An `end` event
 * (data JSON {reason}) closes the stream when the workload is removed.
 *
 * The agent of the workload's server follows Docker's log (FollowServiceLogsCommand) and
 * publishes batches of lines on a NATS subject of this stream; this module relays them. Every
 * RENEW_MS it renews the agent's lease (an agent whose control plane went away stops following
 * after LEASE_SECONDS). When the agent answers that it no longer follows (it restarted, or its
 * stream ended) the follower is asked again from the last time seen of each task or container:
 * lines Docker gives again (those at exactly that time) are recognized and dropped, so a restart
 * of the agent loses and repeats nothing. The stream stops the agent's follower when the client
 * goes. Same authentication as every procedure; another organization's service, or one the
 * caller's grants do not show, is a 404.
 */
import { randomUUID } from "node:crypto";
import {
  type AgentClient,
  decodeServiceLogs,
  type LogChunk,
  type ServiceLogLine,
  type Subscription,
} from "@platform/agent-protocol";
import { applicationOwner, composeOwner, databaseOwner } from "@platform/ownership";
import type { Context, Hono } from "hono";
import { type SSEStreamingApi, streamSSE } from "hono/streaming";
import type { Logger } from "pino";
import { callAgent } from "../agents/errors.ts";
import { LOCAL_SERVER_ID } from "../agents/hub.ts";
import { findApplication } from "../applications/repository.ts";
import { authenticate } from "../auth/caller.ts";
import { credentialsOf } from "../auth/cookie-session.ts";
import { loadCallerCompose } from "../compose/repository.ts";
import type { Caller, ServiceContext } from "../context.ts";
import { findDatabase } from "../databases/repository.ts";
import type { DatabaseKind } from "../db/schema.ts";
import { ApiError, badRequest, notFound } from "../errors.ts";
import { errorResponse, type OpenApiPathItem } from "../openapi.ts";
import { requireServiceAccess } from "../projects/permissions.ts";
import { logSearchSchema, type RuntimeLogTarget } from "./runtime-logs.ts";

export const RUNTIME_LOGS_PATH = "/api/runtime.logs";

/** How long the agent follows without a renewal. */
export const LEASE_SECONDS = 30;
/** How often the lease is renewed (and an agent that forgot the follower is asked again). */
const RENEW_MS = 3_000;
/** A follower whose stream ended this soon is asked again only after this long (no busy loop). */
const REFOLLOW_PAUSE_MS = 1_000;
/** Tasks silent this long before the newest line no longer hold back where a resume starts. */
const QUIET_SOURCE_MS = 60_000;
const AGENT_TIMEOUT_MS = 15_000;
const DATABASE_KINDS: DatabaseKind[] = ["postgres", "mysql", "mariadb", "mongo", "redis", "libsql"];
const ID_PARAMETERS = ["applicationId", "composeId", ...DATABASE_KINDS.map((kind) => `${kind}Id`)];
const TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?(?:Z|[+-]\d{2}:\d{2})$/;

const queryParameter = (name: string, description: string, type = "string") => ({
  name,
  in: "query",
  required: false,
  description,
  schema: { type },
});

export const runtimeLogsOpenApi: OpenApiPathItem = {
  get: {
    operationId: "runtime.logs",
    tags: ["application"],
    summary: "Follow a service's runtime log live (server-sent events)",
    description:
      "Exactly one of applicationId, composeId (with containerId), postgresId, mysqlId, mariadbId, mongoId, redisId or libsqlId. Events `log` (id: the line's RFC 3339 time; data: `<time> <task or container> | <text>`) for the newest `tail` lines and each new line, across agent restarts and from every node of the service; Last-Event-ID resumes after that time. An `end` event (data: JSON `{reason}`) closes the stream when the service is removed.",
    security: [{ bearer: [] }, { apiKey: [] }],
    parameters: [
      ...ID_PARAMETERS.map((name) => queryParameter(name, `The ${name.slice(0, -2)} service`)),
      queryParameter("containerId", "With composeId: the stack's container"),
      queryParameter("tail", "0 to 10000 lines printed before the stream starts (default 100)", "integer"),
      queryParameter("search", "Only lines containing this plain phrase (letters, digits, spaces and ._-)"),
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

export function registerRuntimeLogRoute(app: Hono, ctx: ServiceContext): void {
  app.get(RUNTIME_LOGS_PATH, async (c) => {
    try {
      return await followRuntimeLogs(c, ctx);
    } catch (error) {
      if (error instanceof ApiError) {
        return c.json(error.toBody(), error.status as 400, error.headers);
      }
      throw error;
    }
  });
}

export interface FollowQuery {
  tail: number;
  search: string;
  /** Last-Event-ID: only lines after this time. */
  after?: string;
}

function parseQuery(url: URL, lastEventId: string | undefined): FollowQuery {
  const tailText = url.searchParams.get("tail");
  const tail = tailText === null ? 100 : Number(tailText);
  if (!/^\d{1,5}$/.test(tailText ?? "0") || !Number.isInteger(tail) || tail > 10_000) {
    throw badRequest("Invalid input: tail: a whole number from 0 to 10000", { fields: ["tail"] });
  }
  const search = logSearchSchema.safeParse(url.searchParams.get("search") ?? undefined);
  if (!search.success) {
    throw badRequest(`Invalid input: search: ${search.error.issues[0]?.message}`, { fields: ["search"] });
  }
  if (lastEventId !== undefined && !TIME.test(lastEventId)) {
    throw badRequest("Invalid input: Last-Event-ID: an event id of this stream (an RFC 3339 time)", {
      fields: ["Last-Event-ID"],
    });
  }
  return { tail, search: search.data ?? "", after: lastEventId };
}

/** The workload the query names, when the caller may see it (404 otherwise). */
async function targetOf(ctx: ServiceContext, caller: Caller, url: URL): Promise<RuntimeLogTarget> {
  const named = ID_PARAMETERS.filter((name) => url.searchParams.has(name));
  if (named.length !== 1) {
    throw badRequest(`Invalid input: exactly one of ${ID_PARAMETERS.join(", ")} is required`, {
      fields: named.length ? named : ID_PARAMETERS,
    });
  }
  const parameter = named[0]!;
  const id = url.searchParams.get(parameter)!;
  if (id === "" || id.length > 100) {
    throw badRequest(`Invalid input: ${parameter}: an id is required`, { fields: [parameter] });
  }
  const containerId = url.searchParams.get("containerId");
  if (parameter !== "composeId" && containerId !== null) {
    throw badRequest("Invalid input: containerId: only with composeId", { fields: ["containerId"] });
  }
  const { db } = ctx;
  if (parameter === "applicationId") {
    const application = await findApplication(db, caller.organizationId, id);
    if (!application) throw notFound("Application");
    await requireServiceAccess(db, caller, {
      serviceId: application.applicationId,
      environmentId: application.environmentId,
      projectId: application.projectId,
    });
    return {
      serverId: application.serverId ?? LOCAL_SERVER_ID,
      owner: applicationOwner(caller.organizationId, application.applicationId),
      swarmServiceName: application.appName,
    };
  }
  if (parameter === "composeId") {
    if (!containerId || !/^[a-zA-Z0-9.\-_]{1,128}$/.test(containerId)) {
      throw badRequest("Invalid input: containerId: a container id or name of the stack is required", {
        fields: ["containerId"],
      });
    }
    const row = await loadCallerCompose(db, caller, id);
    return {
      serverId: row.serverId ?? LOCAL_SERVER_ID,
      owner: composeOwner(row.organizationId, row.composeId),
      containerId,
      stackName: row.appName,
    };
  }
  const kind = parameter.slice(0, -2) as DatabaseKind;
  const label = `${kind[0]!.toUpperCase()}${kind.slice(1)}`;
  const row = await findDatabase(db, caller.organizationId, kind, id);
  if (!row) throw notFound(label);
  await requireServiceAccess(
    db,
    caller,
    { serviceId: row.databaseId, environmentId: row.environmentId, projectId: row.projectId },
    label,
  );
  return {
    serverId: row.serverId ?? LOCAL_SERVER_ID,
    owner: databaseOwner(row.organizationId, row.databaseId),
    swarmServiceName: row.appName,
  };
}

async function followRuntimeLogs(c: Context, ctx: ServiceContext): Promise<Response> {
  const url = new URL(c.req.url);
  const caller = await authenticate(ctx, credentialsOf(c.req.raw), url.searchParams.keys());
  const query = parseQuery(url, c.req.header("Last-Event-ID"));
  const target = await targetOf(ctx, caller, url);
  const logger = (c.get("logger") as Logger | undefined) ?? ctx.logger;
  const follow = new RuntimeLogFollow(ctx.agents.client, target, query, logger);
  // The first follow answers before the stream starts: a workload that is not there is a 404.
  await follow.start();
  return streamFollow(c, follow);
}

/** The SSE response relaying a started follow, until the client goes or the follow ends. */
export function streamFollow(c: Context, follow: RuntimeLogFollow): Response {
  return streamSSE(c, async (stream) => {
    let closed = false;
    const done = new Promise<void>((resolve) => {
      stream.onAbort(() => {
        closed = true;
        resolve();
      });
      follow.onEnd = resolve;
    });
    let writing: Promise<unknown> = Promise.resolve();
    follow.onText = (text) => {
      writing = writing.then(() => (closed ? undefined : stream.write(text))).catch(() => {});
    };
    follow.flushPending();
    const keepAlive = setInterval(() => follow.onText?.(": keep-alive\n\n"), 15_000);
    try {
      await done;
      await writing;
      if (!closed && follow.endReason) {
        await writeEnd(stream, follow.endReason);
      }
    } finally {
      clearInterval(keepAlive);
      follow.close();
    }
  });
}

const writeEnd = (stream: SSEStreamingApi, reason: string) =>
  stream.writeSSE({ event: "end", data: JSON.stringify({ reason }) });

/** One SSE event per line: id the line's time, data the readLogs line. */
export function formatEvents(lines: ServiceLogLine[]): string {
  let text = "";
  for (const line of lines) {
    text += `id: ${line.time}\nevent: log\ndata: ${line.time} ${line.source} | ${line.text}\n\n`;
  }
  return text;
}

/** Where a task's (or container's) lines have got to: its last time and the lines at that time. */
interface SourceMark {
  time: string;
  atTime: Set<string>;
  seenAtMs: number;
}

const lineKey = (line: ServiceLogLine) => `${line.stream}\u0000${line.text}`;

/**
 * One followed log: the agent's follower (asked again whenever it is lost), the lines' marks per
 * source, and the text waiting for the SSE stream.
 */
export class RuntimeLogFollow {
  /** Receives the events' text once the stream is open. */
  onText?: (text: string) => void;
  /** Called once the follow is over (endReason says why). */
  onEnd?: () => void;
  endReason?: string;
  private readonly baseId = `rl${randomUUID().replaceAll("-", "")}`;
  private attempt = 0;
  private streamId = "";
  private subscription?: Subscription;
  private renewTimer?: NodeJS.Timeout;
  private pending: string[] = [];
  private readonly marks = new Map<string, SourceMark>();
  /** Lines up to this time were sent before this follow started (Last-Event-ID). */
  private readonly after?: string;
  private closed = false;
  private refollowing = false;
  private startedAtMs = 0;
  /** When the first follower started: where a resume starts when no line came yet. */
  private firstStart?: string;
  private readonly client: AgentClient;

  constructor(
    client: AgentClient,
    private readonly target: RuntimeLogTarget,
    private readonly query: FollowQuery,
    private readonly logger?: Logger,
  ) {
    this.client = client;
    this.after = query.after;
  }

  /** Starts the agent's follower; rejects (an ApiError) when the agent refuses. */
  async start(): Promise<void> {
    this.firstStart = new Date().toISOString();
    await this.followFrom(this.after, this.after ? 0 : this.query.tail);
    this.renewTimer = setInterval(() => void this.renew(), RENEW_MS);
  }

  /** Hands what arrived before the stream opened to onText. */
  flushPending(): void {
    const pending = this.pending;
    this.pending = [];
    for (const text of pending) this.onText?.(text);
    if (this.endReason) this.onEnd?.();
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.renewTimer);
    this.subscription?.unsubscribe();
    const { serverId } = this.target;
    // Stops the agent's follower now rather than at the end of its lease.
    this.client
      .renewLogFollow(serverId, { logStreamId: this.streamId, stop: true }, AGENT_TIMEOUT_MS)
      .catch(() => {});
  }

  /** Where a new follower starts: the earliest last time of the tasks still printing. */
  private resumeTime(): string | undefined {
    let newestMs = 0;
    for (const mark of this.marks.values()) newestMs = Math.max(newestMs, mark.seenAtMs);
    let earliest: string | undefined;
    for (const mark of this.marks.values()) {
      if (mark.seenAtMs < newestMs - QUIET_SOURCE_MS) continue;
      if (earliest === undefined || mark.time < earliest) earliest = mark.time;
    }
    return earliest ?? this.after ?? this.firstStart;
  }

  private async followFrom(sinceTime: string | undefined, tail: number): Promise<void> {
    const { serverId, ...workload } = this.target;
    const streamId = `${this.baseId}-${this.attempt++}`;
    const previous = this.subscription;
    this.subscription = this.client.transport.subscribeLogs(serverId, streamId, (chunk) =>
      this.receive(streamId, chunk),
    );
    previous?.unsubscribe();
    this.streamId = streamId;
    await this.client.transport.flush();
    this.startedAtMs = Date.now();
    await callAgent(
      serverId,
      () =>
        this.client.followServiceLogs(
          serverId,
          {
            ...workload,
            logStreamId: streamId,
            sinceTime: sinceTime ?? "",
            tail,
            search: this.query.search,
            leaseSeconds: LEASE_SECONDS,
          },
          AGENT_TIMEOUT_MS,
        ),
      this.logger,
    );
  }

  private receive(streamId: string, chunk: LogChunk): void {
    if (this.closed || streamId !== this.streamId) return;
    let lines: ServiceLogLine[];
    try {
      lines = decodeServiceLogs(chunk.data).lines;
    } catch (error) {
      this.logger?.warn({ err: error, streamId }, "undecodable runtime log chunk dropped");
      lines = [];
    }
    const fresh = lines.filter((line) => this.isNew(line));
    if (fresh.length) this.emit(formatEvents(fresh));
    if (chunk.final) {
      // Docker ended the stream (the task or container went): ask again, which tells whether
      // the workload is still there.
      const wait = Math.max(0, REFOLLOW_PAUSE_MS - (Date.now() - this.startedAtMs));
      setTimeout(() => void this.refollow(), wait).unref();
    }
  }

  /** False for a line already sent (given again after a resume); records it otherwise. */
  private isNew(line: ServiceLogLine): boolean {
    if (this.after && line.time <= this.after) return false;
    const key = lineKey(line);
    const mark = this.marks.get(line.source);
    if (mark) {
      if (line.time < mark.time) return false;
      if (line.time === mark.time) {
        if (mark.atTime.has(key)) return false;
        mark.atTime.add(key);
      } else {
        mark.time = line.time;
        mark.atTime = new Set([key]);
      }
      mark.seenAtMs = Date.now();
    } else {
      this.marks.set(line.source, { time: line.time, atTime: new Set([key]), seenAtMs: Date.now() });
    }
    return true;
  }

  private emit(text: string): void {
    if (this.onText) this.onText(text);
    else this.pending.push(text);
  }

  private end(reason: string): void {
    if (this.endReason) return;
    this.endReason = reason;
    clearInterval(this.renewTimer);
    this.onEnd?.();
  }

  private async renew(): Promise<void> {
    if (this.closed || this.refollowing) return;
    const { serverId } = this.target;
    try {
      const lease = await this.client.renewLogFollow(
        serverId,
        { logStreamId: this.streamId, stop: false },
        AGENT_TIMEOUT_MS,
      );
      if (!lease.following) await this.refollow();
    } catch {
      // The agent is away (restarting): the next renewal tries again.
    }
  }

  /** Asks the agent again from where the lines got to; ends the stream once the workload is gone. */
  private async refollow(): Promise<void> {
    if (this.closed || this.refollowing || this.endReason) return;
    this.refollowing = true;
    try {
      await this.followFrom(this.resumeTime(), this.query.tail);
    } catch (error) {
      if (error instanceof ApiError && error.status === 404) this.end("removed");
      else this.logger?.info({ err: error }, "runtime log follower not restarted yet");
    } finally {
      this.refollowing = false;
    }
  }
}
