/**
 * Serves every registered procedure at `/api/{router}.{procedure}` (bare answers) and
 * `/api/trpc/{router}.{procedure}` (tRPC with the superjson transformer, as Dokploy: every
 * answer and error is superjson-shaped, `?batch=1` batches). Inputs are plain JSON or
 * superjson's `{json, meta}` on both prefixes. One path for all of them: find, check method,
 * authenticate, check edition and role, parse input, run, parse output.
 */
import type { IncomingMessage } from "node:http";
import type { Context } from "hono";
import superjson from "superjson";
import { z } from "zod";
import { withServerName } from "./agents/errors.ts";
import { authenticate } from "./auth/caller.ts";
import { clientAddress, fromLoopback } from "./auth/client-address.ts";
import { credentialsOf, sessionCookiesOf } from "./auth/cookie-session.ts";
import type { Caller, RequestContext, ServiceContext } from "./context.ts";
import { ApiError, type ErrorCode, fromZodError } from "./errors.ts";
import { MAX_BATCH_CALLS, MAX_BODY_BYTES } from "./limits.ts";
import { type AnyProcedure, PreparedOutput, type RouterDef } from "./procedure.ts";
import { requireServerAccess } from "./projects/permissions.ts";
import { inputFromQuery } from "./query-input.ts";

export type ProcedureTable = Map<string, AnyProcedure>;

export function procedureTable(routers: RouterDef[]): ProcedureTable {
  const table: ProcedureTable = new Map();
  for (const router of routers) {
    for (const [name, procedure] of Object.entries(router.procedures)) {
      const path = `${router.name}.${name}`;
      if (table.has(path)) throw new Error(`Procedure ${path} is registered twice`);
      table.set(path, procedure);
    }
  }
  return table;
}

/** The JSON-RPC codes tRPC puts in `error.code` (the name goes in `error.data.code`). */
const trpcErrorCodes: Record<ErrorCode, number> = {
  BAD_REQUEST: -32600,
  UNAUTHORIZED: -32001,
  FORBIDDEN: -32003,
  NOT_FOUND: -32004,
  METHOD_NOT_SUPPORTED: -32005,
  CONFLICT: -32009,
  PAYLOAD_TOO_LARGE: -32013,
  TOO_MANY_REQUESTS: -32029,
  INTERNAL_SERVER_ERROR: -32603,
  SERVICE_UNAVAILABLE: -32603,
};

/** Inputs nested deeper than this are refused before parsing. */
const MAX_INPUT_DEPTH = 32;

interface CallInput {
  /** The raw input as sent, before unwrapping, or undefined when none was sent. */
  raw: unknown;
  /** Present when the input comes from plain query parameters. */
  query?: URLSearchParams;
}

/** What Hono's c.json sends, for answers serialized ahead (PreparedOutput). */
const JSON_CONTENT_TYPE = { "content-type": "application/json" };

const roleRank = { member: 0, admin: 1, owner: 2 } as const;

export class Dispatcher {
  constructor(
    private readonly ctx: ServiceContext,
    private readonly procedures: ProcedureTable,
  ) {}

  /**
   * Hono handler for `/api/:path` (trpc = false) and `/api/trpc/:path` (trpc = true); `named`
   * gives the procedure for routes that spell it otherwise (`/api/<kind>/<operation>`).
   */
  handle = async (c: Context, trpc: boolean, named?: string): Promise<Response> => {
    // Hono has already percent-decoded the parameter (leaving malformed sequences as they are).
    const path = named ?? c.req.param("path") ?? "";
    const url = new URL(c.req.url);
    if (trpc && url.searchParams.get("batch") === "1") return this.handleBatch(c, path, url);

    try {
      const procedure = this.find(path, c.req.method);
      const input = await this.readInput(c, procedure, url, trpc);
      const data = await this.call(c, procedure, input, url);
      if (data instanceof PreparedOutput && !trpc) return c.body(data.json, 200, JSON_CONTENT_TYPE);
      return c.json(trpc ? resultEnvelope(data) : data);
    } catch (error) {
      const apiError = this.toApiError(c, error);
      for (const [name, value] of Object.entries(apiError.headers)) c.header(name, value);
      const body = trpc ? trpcError(apiError, path) : apiError.toBody();
      return c.json(body, apiError.status as 400);
    }
  };

  private async handleBatch(c: Context, paths: string, url: URL): Promise<Response> {
    const calls = paths.split(",");
    let inputs: Record<string, unknown>;
    try {
      if (calls.length > MAX_BATCH_CALLS) {
        throw new ApiError(
          "BAD_REQUEST",
          `A batch holds at most ${MAX_BATCH_CALLS} calls; this one has ${calls.length}`,
          { fields: ["batch"], maxCalls: MAX_BATCH_CALLS },
        );
      }
      const rawInputs =
        c.req.method === "GET" ? parseJson(url.searchParams.get("input") ?? "{}") : await readJsonBody(c);
      if (
        rawInputs !== undefined &&
        (typeof rawInputs !== "object" || rawInputs === null || Array.isArray(rawInputs))
      ) {
        throw new ApiError("BAD_REQUEST", 'A batch input is an object keyed by call index ("0", "1", …)', {
          fields: ["(input)"],
        });
      }
      inputs = (rawInputs ?? {}) as Record<string, unknown>;
    } catch (error) {
      // The whole batch failed: one error per call, as tRPC answers, so a client reads each.
      const apiError = this.toApiError(c, error);
      return c.json(
        calls.map((path) => trpcError(apiError, path)),
        apiError.status as 400,
      );
    }
    const results: unknown[] = [];
    const statuses = new Set<number>();
    for (const [index, path] of calls.entries()) {
      const raw = Object.hasOwn(inputs, String(index)) ? inputs[String(index)] : undefined;
      try {
        const procedure = this.find(path, c.req.method);
        results.push(resultEnvelope(await this.call(c, procedure, { raw }, url)));
        statuses.add(200);
      } catch (error) {
        const apiError = this.toApiError(c, error);
        for (const [name, value] of Object.entries(apiError.headers)) c.header(name, value);
        results.push(trpcError(apiError, path));
        statuses.add(apiError.status);
      }
    }
    const status = statuses.size === 1 ? [...statuses][0]! : 207;
    return c.json(results, status as 200);
  }

  private find(path: string, method: string): AnyProcedure {
    const procedure = this.procedures.get(path);
    if (!procedure) throw new ApiError("NOT_FOUND", `No procedure named "${path}"`);
    const expected = procedure.kind === "query" ? "GET" : "POST";
    if (method !== expected) {
      throw new ApiError(
        "METHOD_NOT_SUPPORTED",
        `${path} is a ${procedure.kind}: use ${expected}, not ${method}`,
        { allowed: expected },
        { Allow: expected },
      );
    }
    return procedure;
  }

  private async readInput(c: Context, procedure: AnyProcedure, url: URL, trpc: boolean): Promise<CallInput> {
    if (procedure.kind === "mutation") return { raw: await readJsonBody(c) };
    const encoded = url.searchParams.get("input");
    if (encoded !== null) return { raw: parseJson(encoded) };
    // registry.one and security.one are documented as GET with a JSON body.
    const body = await readGetBody(c);
    if (body !== undefined) return { raw: body };
    const params = new URLSearchParams(url.searchParams);
    if (trpc) params.delete("batch");
    return { raw: undefined, query: params };
  }

  private async call(c: Context, procedure: AnyProcedure, input: CallInput, url: URL): Promise<unknown> {
    const requestId = c.get("requestId") as string;
    let caller: Caller | null = null;
    if (procedure.access !== "public") {
      caller = await authenticate(this.ctx, credentialsOf(c.req.raw), url.searchParams.keys());
      c.set("caller", caller);
    }
    const edition = this.ctx.config.edition;
    if (procedure.editions && !procedure.editions.includes(edition)) {
      throw new ApiError("FORBIDDEN", `This procedure is disabled on the ${edition} edition`, { edition });
    }
    if (caller && procedure.access !== "public" && procedure.access !== "member") {
      if (roleRank[caller.role] < roleRank[procedure.access as "admin" | "owner"]) {
        throw new ApiError(
          "FORBIDDEN",
          procedure.access === "owner"
            ? "Only the organization owner may do this"
            : "Administrator rights required",
        );
      }
    }
    const raw = input.query ? inputFromQuery(procedure.input, input.query) : decodeSuperjson(input.raw);
    checkInputShape(raw);
    let parsed = procedure.input.safeParse(raw);
    // An absent input is read as {} when it must be an object, so a 400 names each missing field.
    if (!parsed.success && raw === undefined) parsed = procedure.input.safeParse({});
    if (!parsed.success) throw fromZodError(parsed.error);
    if (caller?.role === "member") await requireNamedServersAccess(this.ctx, caller, parsed.data);

    const context: RequestContext = {
      ctx: this.ctx,
      requestId,
      logger: c.get("logger") ?? this.ctx.logger,
      caller,
      clientAddress: clientAddress(c, this.ctx.config.trustedProxies),
      fromLoopback: fromLoopback(c, this.ctx.config.trustedProxies),
      sessionCookies: sessionCookiesOf(c, this.ctx),
    };
    let result: Awaited<ReturnType<AnyProcedure["handler"]>>;
    try {
      result = await procedure.handler({ ...context, input: parsed.data, caller });
    } catch (error) {
      throw await withServerName(this.ctx, caller?.organizationId, error);
    }
    if (result instanceof PreparedOutput && result.schema === procedure.output) return result;
    const output = procedure.output.safeParse(result instanceof PreparedOutput ? result.data : result);
    if (!output.success) {
      context.logger.error({ issues: output.error.issues }, "procedure output does not match its schema");
      throw new ApiError("INTERNAL_SERVER_ERROR", "Internal server error");
    }
    return output.data ?? null;
  }

  private toApiError(c: Context, error: unknown): ApiError {
    if (error instanceof ApiError) return error;
    if (error instanceof z.ZodError) return fromZodError(error);
    const logger = c.get("logger") ?? this.ctx.logger;
    logger.error({ err: error }, "unhandled error in procedure");
    return new ApiError("INTERNAL_SERVER_ERROR", "Internal server error");
  }
}

async function readJsonBody(c: Context): Promise<unknown> {
  const text = await c.req.text();
  if (text.trim() === "") return undefined;
  return parseJson(text);
}

/**
 * The body of a GET. Fetch's Request drops it, so it is read from Node's IncomingMessage
 * (present under @hono/node-server), with the same size limit as other bodies.
 */
async function readGetBody(c: Context): Promise<unknown> {
  const incoming = (c.env as { incoming?: IncomingMessage } | undefined)?.incoming;
  if (!incoming || incoming.readableEnded) return undefined;
  const length = Number(incoming.headers["content-length"] ?? 0);
  if (!length && !incoming.headers["transfer-encoding"]) return undefined;
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of incoming as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) {
      throw new ApiError("PAYLOAD_TOO_LARGE", `Request body exceeds ${MAX_BODY_BYTES} bytes`, {
        maxBytes: MAX_BODY_BYTES,
      });
    }
    chunks.push(chunk);
  }
  const text = Buffer.concat(chunks).toString("utf8");
  return text.trim() === "" ? undefined : parseJson(text);
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw new ApiError("BAD_REQUEST", "Input is not valid JSON", { fields: ["(input)"] });
  }
}

/**
 * Refused for every procedure as a 400 naming the field: U+0000 (Postgres text cannot hold it,
 * it would fail in the database as a 500) and nesting deeper than MAX_INPUT_DEPTH (no schema
 * is that deep; it only makes large error answers).
 */
function checkInputShape(raw: unknown): void {
  type Step = { value: unknown; key: string; parent: Step | null; depth: number };
  const pending: Step[] = [{ value: raw, key: "", parent: null, depth: 0 }];
  while (pending.length > 0) {
    const step = pending.pop()!;
    let bad: Step | null = typeof step.value === "string" && step.value.includes("\u0000") ? step : null;
    let message = "must not contain NUL characters";
    if (!bad && typeof step.value === "object" && step.value !== null) {
      if (step.depth >= MAX_INPUT_DEPTH) {
        bad = step;
        message = `must not be nested deeper than ${MAX_INPUT_DEPTH} levels`;
      } else {
        for (const [key, value] of Object.entries(step.value)) {
          const child = { value, key, parent: step, depth: step.depth + 1 };
          if (key.includes("\u0000")) bad = child;
          pending.push(child);
        }
      }
    }
    if (bad) {
      const path: string[] = [];
      for (let at: Step | null = bad; at?.parent; at = at.parent) path.push(at.key);
      const segments = path.reverse();
      const field =
        (segments.length > 12 ? [...segments.slice(0, 12), "…"] : segments).join(".") || "(input)";
      throw new ApiError("BAD_REQUEST", `Invalid input: ${field}: ${message}`, {
        fields: [field],
        issues: [{ path: field, message }],
      });
    }
  }
}

/** An input in superjson's form: `{json}` or `{json, meta}` and nothing else. */
function isSuperjson(raw: unknown): raw is { json: unknown; meta?: unknown } {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw) || !Object.hasOwn(raw, "json"))
    return false;
  return Object.keys(raw).every((key) => key === "json" || key === "meta");
}

/**
 * The value a superjson input stands for (`meta` restores undefined, dates and the rest); any
 * other input is taken as plain JSON. Referential equalities are dropped: the JSON already holds
 * each copy, and restoring identity could build a cycle.
 */
function decodeSuperjson(raw: unknown): unknown {
  if (!isSuperjson(raw)) return raw;
  const { meta } = raw;
  if (meta === undefined || meta === null) return raw.json;
  if (typeof meta !== "object" || Array.isArray(meta)) {
    throw new ApiError("BAD_REQUEST", "Invalid input: meta: must be superjson metadata", {
      fields: ["meta"],
    });
  }
  const { referentialEqualities: _dropped, ...kept } = meta as Record<string, unknown>;
  try {
    return superjson.deserialize({ json: raw.json, meta: kept } as Parameters<
      typeof superjson.deserialize
    >[0]);
  } catch (error) {
    const message = error instanceof Error ? error.message.slice(0, 200) : "unreadable";
    throw new ApiError("BAD_REQUEST", `Invalid input: meta: ${message}`, { fields: ["meta"] });
  }
}

/** The error body for a request path: tRPC's superjson shape under `/api/trpc/`, else the plain one. */
export function errorBodyFor(requestPath: string, error: ApiError): unknown {
  const prefix = "/api/trpc/";
  return requestPath.startsWith(prefix) ? trpcError(error, requestPath.slice(prefix.length)) : error.toBody();
}

/** A tRPC result: the data as superjson serializes it (`{json, meta?}`). */
export function resultEnvelope(data: unknown): unknown {
  const plain = data instanceof PreparedOutput ? data.data : data;
  return { result: { data: superjson.serialize(plain) } };
}

/**
 * A tRPC error as Dokploy's server sends it: the shape `{message, code, data}` (code the
 * JSON-RPC number, data.code the name, data.httpStatus, data.path) serialized by superjson.
 */
function trpcError(error: ApiError, path: string): unknown {
  const body = error.toBody().error;
  const shape = {
    message: body.message,
    code: trpcErrorCodes[body.code],
    data: { ...body.data, code: body.code, path },
  };
  return { error: superjson.serialize(shape) };
}

/**
 * A member restricted to some servers (user.assignPermissions accessedServers) names no other
 * one: every procedure's serverId and buildServerId are checked here, in one place (404 Server).
 */
async function requireNamedServersAccess(ctx: ServiceContext, caller: Caller, input: unknown): Promise<void> {
  if (typeof input !== "object" || input === null) return;
  for (const field of ["serverId", "buildServerId"] as const) {
    const serverId = (input as Record<string, unknown>)[field];
    if (typeof serverId === "string" && serverId !== "") await requireServerAccess(ctx.db, caller, serverId);
  }
}
