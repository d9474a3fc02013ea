/**
 * Serves every registered procedure at `/api/{router}.{procedure}` (bare answers) and
 * `/api/trpc/{router}.{procedure}` (tRPC envelopes, `?input=`, `{"json": …}` superjson bodies
 * and `?batch=1`). One path for all of them: find, check method, authenticate, check edition
 * and role, parse input, run, parse output.
 */
import type { IncomingMessage } from "node:http";
import type { Context } from "hono";
import { z } from "zod";
import { authenticate } from "./auth/caller.ts";
import { clientAddress } from "./auth/client-address.ts";
import type { Caller, RequestContext, ServiceContext } from "./context.ts";
import { ApiError, type ErrorBody, fromZodError } from "./errors.ts";
import { MAX_BODY_BYTES } from "./limits.ts";
import type { AnyProcedure, RouterDef } from "./procedure.ts";
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

type Wire = "plain" | "trpc" | "superjson";

interface CallInput {
  /** The raw input as sent, before unwrapping, or undefined when none was sent. */
  raw: unknown;
  /** Present when the input comes from plain query parameters. */
  query?: URLSearchParams;
}

const roleRank = { member: 0, admin: 1, owner: 2 } as const;

export class Dispatcher {
  constructor(
    private readonly services: ServiceContext,
    private readonly procedures: ProcedureTable,
  ) {}

  /** Hono handler for `/api/:path` (trpc = false) and `/api/trpc/:path` (trpc = true). */
  handle = async (c: Context, trpc: boolean): Promise<Response> => {
    const path = decodeURIComponent(c.req.param("path") ?? "");
    const url = new URL(c.req.url);
    if (trpc && url.searchParams.get("batch") === "1") return this.handleBatch(c, path, url);

    let wire: Wire = trpc ? "trpc" : "plain";
    try {
      const procedure = this.find(path, c.req.method);
      const input = await this.readInput(c, procedure, url, trpc);
      if (trpc && isSuperjson(input.raw)) wire = "superjson";
      const data = await this.call(c, procedure, input, url);
      return c.json(envelope(data, wire));
    } catch (error) {
      return this.errorResponse(c, error, wire);
    }
  };

  private async handleBatch(c: Context, paths: string, url: URL): Promise<Response> {
    let inputs: Record<string, unknown> = {};
    const results: unknown[] = [];
    const statuses = new Set<number>();
    try {
      const rawInputs =
        c.req.method === "GET" ? parseJson(url.searchParams.get("input") ?? "{}") : await readJsonBody(c);
      inputs = (rawInputs ?? {}) as Record<string, unknown>;
    } catch (error) {
      return this.errorResponse(c, error, "trpc");
    }
    for (const [index, path] of paths.split(",").entries()) {
      const raw = inputs[String(index)];
      const wire: Wire = isSuperjson(raw) ? "superjson" : "trpc";
      try {
        const procedure = this.find(path, c.req.method);
        results.push(envelope(await this.call(c, procedure, { raw }, url), wire));
        statuses.add(200);
      } catch (error) {
        const apiError = this.toApiError(c, error);
        for (const [name, value] of Object.entries(apiError.headers)) c.header(name, value);
        results.push(errorEnvelope(apiError, wire));
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
      caller = await authenticate(
        this.services,
        { authorization: c.req.header("authorization"), apiKey: c.req.header("x-api-key") },
        url.searchParams.keys(),
      );
      c.set("caller", caller);
    }
    const edition = this.services.config.edition;
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
    const raw = input.query ? inputFromQuery(procedure.input, input.query) : unwrapSuperjson(input.raw);
    rejectNul(raw);
    let parsed = procedure.input.safeParse(raw);
    // An absent input is read as {} when it must be an object, so a 400 names each missing field.
    if (!parsed.success && raw === undefined) parsed = procedure.input.safeParse({});
    if (!parsed.success) throw fromZodError(parsed.error);

    const context: RequestContext = {
      services: this.services,
      requestId,
      logger: c.get("logger") ?? this.services.logger,
      caller,
      clientAddress: clientAddress(c, this.services.config.trustedProxies),
    };
    const result = await procedure.handler({ ...context, input: parsed.data, caller });
    const output = procedure.output.safeParse(result);
    if (!output.success) {
      context.logger.error({ issues: output.error.issues }, "procedure output does not match its schema");
      throw new ApiError("INTERNAL_SERVER_ERROR", "Internal server error");
    }
    return output.data ?? null;
  }

  private toApiError(c: Context, error: unknown): ApiError {
    if (error instanceof ApiError) return error;
    if (error instanceof z.ZodError) return fromZodError(error);
    const logger = c.get("logger") ?? this.services.logger;
    logger.error({ err: error }, "unhandled error in procedure");
    return new ApiError("INTERNAL_SERVER_ERROR", "Internal server error");
  }

  private errorResponse(c: Context, error: unknown, wire: Wire): Response {
    const apiError = this.toApiError(c, error);
    for (const [name, value] of Object.entries(apiError.headers)) c.header(name, value);
    return c.json(errorEnvelope(apiError, wire), apiError.status as 400);
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
 * Postgres text cannot hold U+0000: such a string would fail in the database as a 500, so it
 * is refused here as a 400 naming the field, for every procedure.
 */
function rejectNul(raw: unknown): void {
  type Step = { value: unknown; key: string; parent: Step | null };
  const pending: Step[] = [{ value: raw, key: "", parent: null }];
  while (pending.length > 0) {
    const step = pending.pop()!;
    let bad: Step | null = typeof step.value === "string" && step.value.includes("\u0000") ? step : null;
    if (!bad && typeof step.value === "object" && step.value !== null) {
      for (const [key, value] of Object.entries(step.value)) {
        const child = { value, key, parent: step };
        if (key.includes("\u0000")) bad = child;
        pending.push(child);
      }
    }
    if (bad) {
      const path: string[] = [];
      for (let at: Step | null = bad; at?.parent; at = at.parent) path.push(at.key);
      const field = path.reverse().join(".") || "(input)";
      const message = "must not contain NUL characters";
      throw new ApiError("BAD_REQUEST", `Invalid input: ${field}: ${message}`, {
        fields: [field],
        issues: [{ path: field, message }],
      });
    }
  }
}

function isSuperjson(raw: unknown): raw is { json: unknown } {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw) || !("json" in raw)) return false;
  return Object.keys(raw).every((key) => key === "json" || key === "meta");
}

function unwrapSuperjson(raw: unknown): unknown {
  return isSuperjson(raw) ? raw.json : raw;
}

function envelope(data: unknown, wire: Wire): unknown {
  if (wire === "plain") return data;
  return { result: { data: wire === "superjson" ? { json: data } : data } };
}

function errorEnvelope(error: ApiError, wire: Wire): ErrorBody | { error: { json: ErrorBody["error"] } } {
  const body = error.toBody();
  return wire === "superjson" ? { error: { json: body.error } } : body;
}
