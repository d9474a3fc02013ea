/**
 * The OpenAPI 3.1 document, generated from the same zod schemas the dispatcher parses with and
 * the prose of openapi-docs.ts: one tag per spec router, every error status an operation can
 * answer (with the error body), request examples for create procedures, and the /api/trpc forms.
 * Also the reference page (Swagger UI from the swagger-ui-dist package: no CDN, nothing fetched
 * from anywhere but this server).
 */
import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import path from "node:path";
import type { Hono } from "hono";
import { z } from "zod";
import type { ProcedureTable } from "./dispatcher.ts";
import { errorStatus } from "./errors.ts";
import { MAX_BODY_BYTES } from "./limits.ts";
import { type ProcedureDoc, procedureDocs, routeDocs, tagDocs } from "./openapi-docs.ts";
import type { Access, AnyProcedure } from "./procedure.ts";

type JsonSchema = Record<string, unknown>;

const toJsonSchema = (schema: z.ZodType, io: "input" | "output"): JsonSchema => {
  const json = z.toJSONSchema(schema, { io, unrepresentable: "any", target: "draft-2020-12" }) as JsonSchema;
  delete json.$schema;
  return json;
};

const errorEnvelope = (data: JsonSchema): JsonSchema => ({
  type: "object",
  required: ["error"],
  properties: {
    error: {
      type: "object",
      required: ["message", "code", "data"],
      properties: {
        message: { type: "string", description: "What went wrong, for people" },
        code: { type: "string", enum: Object.keys(errorStatus), description: "The machine code" },
        data,
      },
    },
  },
});

const errorBodySchema = errorEnvelope({
  type: "object",
  description: "Details: always `httpStatus`; more per error (e.g. `retryAfterSeconds`)",
  properties: { httpStatus: { type: "integer" } },
});

const validationErrorSchema = errorEnvelope({
  type: "object",
  required: ["fields", "issues"],
  properties: {
    httpStatus: { type: "integer", const: 400 },
    fields: {
      type: "array",
      items: { type: "string" },
      description: "Every failing field as a dotted path; `(input)` for the input as a whole",
    },
    issues: {
      type: "array",
      items: {
        type: "object",
        required: ["path", "message"],
        properties: { path: { type: "string" }, message: { type: "string" } },
      },
    },
  },
});

const errorExample = (code: keyof typeof errorStatus, message: string, data: JsonSchema = {}) => ({
  error: { message, code, data: { ...data, httpStatus: errorStatus[code] } },
});

const jsonError = (description: string, schema: string, example: unknown, headers?: JsonSchema) => ({
  description,
  ...(headers ? { headers } : {}),
  content: { "application/json": { schema: { $ref: `#/components/schemas/${schema}` }, example } },
});

/** Every error status an operation may answer, as shared response components. */
const errorResponses = {
  BadRequest: jsonError(
    "Invalid input: `error.data.fields` names every failing field, and nothing was changed",
    "ValidationError",
    errorExample("BAD_REQUEST", "Invalid input: name: Too small: expected string to have >=1 characters", {
      fields: ["name"],
      issues: [{ path: "name", message: "Too small: expected string to have >=1 characters" }],
    }),
  ),
  Unauthorized: jsonError(
    "No credentials, or an invalid, expired or revoked session token or API key",
    "Error",
    errorExample("UNAUTHORIZED", "Authentication required"),
  ),
  Forbidden: jsonError(
    "The caller's role or permissions do not allow this, or the procedure is disabled on this edition",
    "Error",
    errorExample("FORBIDDEN", "Administrator rights required"),
  ),
  NotFound: jsonError(
    "The object does not exist or belongs to another organization",
    "Error",
    errorExample("NOT_FOUND", "Application not found"),
  ),
  Conflict: jsonError(
    "The request conflicts with the current state (a name already taken, a running deployment, …)",
    "Error",
    errorExample("CONFLICT", 'The appName "shop-web" is already in use', { fields: ["appName"] }),
  ),
  PayloadTooLarge: jsonError(
    `The request body exceeds ${MAX_BODY_BYTES} bytes`,
    "Error",
    errorExample("PAYLOAD_TOO_LARGE", `Request body exceeds ${MAX_BODY_BYTES} bytes`, {
      maxBytes: MAX_BODY_BYTES,
    }),
  ),
  TooManyRequests: jsonError(
    "A rate limit was reached (the API key's own limit, or login throttling)",
    "Error",
    errorExample("TOO_MANY_REQUESTS", "Rate limit exceeded: at most 120 requests per 60 s", {
      retryAfterSeconds: 12,
    }),
    { "Retry-After": { description: "Seconds to wait before trying again", schema: { type: "integer" } } },
  ),
  ServerError: jsonError(
    "An unexpected error (500), or a dependency such as the database or a server's agent is unavailable (503)",
    "Error",
    errorExample("SERVICE_UNAVAILABLE", "The server's agent is not connected"),
  ),
} as const;

type ErrorResponseName = keyof typeof errorResponses;
const statusResponse: Record<number, ErrorResponseName> = {
  400: "BadRequest",
  401: "Unauthorized",
  403: "Forbidden",
  404: "NotFound",
  409: "Conflict",
  413: "PayloadTooLarge",
  429: "TooManyRequests",
};

/** The error statuses of one procedure: derived from its declaration, plus its doc row's. */
function procedureErrorStatuses(procedure: AnyProcedure, input: JsonSchema, doc?: ProcedureDoc): number[] {
  const statuses = new Set<number>([400, ...(doc?.errors ?? [])]);
  if (procedure.access !== "public") {
    for (const status of [401, 403, 429]) statuses.add(status);
  }
  if (procedure.editions) statuses.add(403);
  if (Object.keys(objectProperties(input)).some((name) => /Id$/.test(name))) statuses.add(404);
  if (procedure.kind === "mutation") statuses.add(413);
  return [...statuses].sort();
}

function errorResponseRefs(statuses: number[]): Record<string, unknown> {
  const responses: Record<string, unknown> = {};
  for (const status of statuses) {
    responses[String(status)] = { $ref: `#/components/responses/${statusResponse[status]}` };
  }
  responses.default = { $ref: "#/components/responses/ServerError" };
  return responses;
}

/** The object form of an input schema (an optional input is `anyOf: [object, null]`). */
function objectInput(input: JsonSchema): JsonSchema {
  return (input.anyOf as JsonSchema[] | undefined)?.find((s) => s.type === "object") ?? input;
}

function objectProperties(input: JsonSchema): Record<string, JsonSchema> {
  return (objectInput(input).properties ?? {}) as Record<string, JsonSchema>;
}

/** Parameter descriptions for inputs whose schema has none. */
const parameterNotes: Record<string, string> = {
  q: "Words to search for (name, description and other text fields)",
  limit: "Page size, 1 to 100 (default 20)",
  offset: "Number of items to skip (default 0)",
  appName: "The application's Swarm service name (appName)",
  type: "Which kind of object (one of the enum's values)",
  appType: "`stack` or `docker-compose`",
  id: "Id of the object the `type` names",
  provider: "The Git provider sending the webhook",
  refreshToken: "The application's refreshToken (application.one)",
};

function parameterDescription(name: string, schema: JsonSchema): string {
  if (typeof schema.description === "string") return schema.description;
  if (parameterNotes[name]) return parameterNotes[name];
  const idOf = /^(\w+)Id$/.exec(name);
  if (idOf) return `Id of the ${idOf[1]!.replace(/[A-Z]/g, (c) => ` ${c.toLowerCase()}`)}`;
  return `Only items whose ${name} contains this text`;
}

const accessNotes: Record<Access, string> = {
  public: "Public: no credentials needed.",
  member: "Any member of the organization (some objects need a permission flag).",
  admin: "Requires the admin role (or owner).",
  owner: "Requires the owner role.",
};

function accessNote(procedure: AnyProcedure): string {
  const editions = procedure.editions ? ` Only on the ${procedure.editions.join(" and ")} edition.` : "";
  return `${accessNotes[procedure.access as Access]}${editions}`;
}

function procedureOperation(name: string, procedure: AnyProcedure): Record<string, unknown> {
  const doc = procedureDocs[name];
  const input = toJsonSchema(procedure.input, "input");
  const method = procedure.kind === "query" ? "GET" : "POST";
  const operation: Record<string, unknown> = {
    operationId: name,
    tags: [name.split(".")[0]],
    summary: procedure.summary ?? name,
    description: [
      doc?.description ?? "",
      accessNote(procedure),
      `Also served as \`${method} /api/trpc/${name}\` with tRPC envelopes (see the trpc tag).`,
    ]
      .filter(Boolean)
      .join("\n\n"),
    security: procedure.access === "public" ? [] : [{ bearer: [] }, { apiKey: [] }],
    responses: {
      "200": {
        description: "Success",
        content: { "application/json": { schema: toJsonSchema(procedure.output, "output") } },
      },
      ...errorResponseRefs(procedureErrorStatuses(procedure, input, doc)),
    },
  };
  if (procedure.editions) operation["x-editions"] = procedure.editions;
  if (procedure.kind === "query") {
    const required = new Set((objectInput(input).required ?? []) as string[]);
    operation.parameters = Object.entries(objectProperties(input)).map(([param, schema]) => ({
      name: param,
      in: "query",
      required: required.has(param),
      description: parameterDescription(param, schema),
      schema,
    }));
  } else {
    const required = (objectInput(input).required ?? []) as string[];
    operation.requestBody = {
      required: required.length > 0,
      content: {
        "application/json": { schema: input, ...(doc?.example ? { example: doc.example } : {}) },
      },
    };
  }
  return operation;
}

/** An OpenAPI path item for a route served outside the procedure layer (SSE, multipart, webhooks). */
export type OpenApiPathItem = Record<string, unknown>;

/** The error responses every route shares. */
export const errorResponse = {
  description: "Error",
  content: { "application/json": { schema: { $ref: "#/components/schemas/Error" } } },
};

/** The /api/trpc forms: every procedure again, with tRPC's envelopes, batching and superjson. */
function trpcPathItem(): Record<string, unknown> {
  const pathParameter = {
    name: "path",
    in: "path",
    required: true,
    description: "`router.procedure`; with `batch=1`, several separated by commas",
    schema: { type: "string" },
    example: "project.all",
  };
  const batchParameter = {
    name: "batch",
    in: "query",
    required: false,
    description:
      "`1` calls every procedure of `path` in order and answers an array (207 when the statuses differ)",
    schema: { type: "string", enum: ["1"] },
  };
  const envelope = {
    type: "object",
    required: ["result"],
    properties: {
      result: {
        type: "object",
        required: ["data"],
        properties: {
          data: { description: "The procedure's answer, or `{json: answer}` for a superjson call" },
        },
      },
    },
  };
  const success = {
    description: "`{result: {data}}`, or an array of such envelopes (and error bodies) for a batch",
    content: { "application/json": { schema: { oneOf: [envelope, { type: "array", items: {} }] } } },
  };
  const errors = (statuses: number[]) => ({
    ...errorResponseRefs(statuses),
    "405": { $ref: "#/components/responses/MethodNotSupported" },
  });
  const common =
    "Errors are the same `{error: {message, code, data}}` bodies (`{error: {json: …}}` for superjson calls). Each procedure's own page lists its input, answer, access and errors.";
  return {
    get: {
      operationId: "trpc.query",
      tags: ["trpc"],
      summary: "Call a query procedure with tRPC envelopes",
      description: `Any query procedure at \`GET /api/trpc/{router}.{procedure}\`. The input is the \`input\` parameter as JSON text (\`{"json": input}\` for superjson clients), or plain query parameters as on \`/api/{router}.{procedure}\`. ${common}`,
      security: [{ bearer: [] }, { apiKey: [] }],
      parameters: [
        pathParameter,
        {
          name: "input",
          in: "query",
          required: false,
          description:
            'The input as JSON text, e.g. `{"projectId":"…"}`; with `batch=1` an object from position to input, e.g. `{"0":{…},"1":{…}}`',
          schema: { type: "string" },
        },
        batchParameter,
      ],
      responses: { "200": success, "207": success, ...errors([400, 401, 403, 404, 429]) },
    },
    post: {
      operationId: "trpc.mutation",
      tags: ["trpc"],
      summary: "Call a mutation procedure with tRPC envelopes",
      description: `Any mutation procedure at \`POST /api/trpc/{router}.{procedure}\`. The body is the input as JSON, or \`{"json": input}\` for superjson clients; with \`batch=1\` an object from position to input. ${common}`,
      security: [{ bearer: [] }, { apiKey: [] }],
      parameters: [pathParameter, batchParameter],
      requestBody: {
        required: false,
        content: {
          "application/json": {
            schema: { type: "object" },
            example: { json: { name: "shop", description: "the web shop" } },
          },
        },
      },
      responses: { "200": success, "207": success, ...errors([400, 401, 403, 404, 409, 413, 429]) },
    },
  };
}

/** A route's operations with their description and error responses completed from routeDocs. */
function completeRoute(item: OpenApiPathItem): OpenApiPathItem {
  const completed: OpenApiPathItem = {};
  for (const [method, value] of Object.entries(item)) {
    const operation = value as Record<string, unknown>;
    const doc = routeDocs[operation.operationId as string];
    const statuses = new Set<number>([400, ...(doc?.errors ?? [])]);
    if ((operation.security as unknown[] | undefined)?.length !== 0) {
      for (const status of [401, 403, 429]) statuses.add(status);
    }
    const names = ((operation.parameters ?? []) as { name: string }[]).map((p) => p.name);
    const body = JSON.stringify(operation.requestBody ?? {});
    if (names.some((name) => /Id$/.test(name)) || /"\w+Id"/.test(body)) statuses.add(404);
    if (method === "post") statuses.add(413);
    const { default: _unused, ...responses } = operation.responses as Record<string, unknown>;
    const parameters = (operation.parameters as JsonSchema[] | undefined)?.map((parameter) => ({
      ...parameter,
      description:
        parameter.description ??
        parameterDescription(parameter.name as string, parameter.schema as JsonSchema),
    }));
    completed[method] = {
      ...operation,
      ...(parameters ? { parameters } : {}),
      description: [doc?.description, operation.description].filter(Boolean).join("\n\n"),
      responses: { ...responses, ...errorResponseRefs([...statuses].sort()) },
    };
  }
  return completed;
}

export function buildOpenApiDocument(
  procedures: ProcedureTable,
  routes: Record<string, OpenApiPathItem> = {},
): Record<string, unknown> {
  const paths: Record<string, unknown> = {};
  for (const [name, procedure] of [...procedures.entries()].sort(([a], [b]) => a.localeCompare(b))) {
    paths[`/api/${name}`] = {
      [procedure.kind === "query" ? "get" : "post"]: procedureOperation(name, procedure),
    };
  }
  for (const [route, item] of Object.entries(routes)) paths[route] = completeRoute(item);
  paths["/api/trpc/{path}"] = trpcPathItem();

  const used = new Set<string>();
  for (const item of Object.values(paths)) {
    for (const operation of Object.values(item as Record<string, { tags?: string[] }>)) {
      for (const tag of operation.tags ?? []) used.add(tag);
    }
  }
  return {
    openapi: "3.1.0",
    info: {
      title: "Platform API",
      version: "1.0.0",
      description: [
        "Every procedure of the API contract at `/api/{router}.{procedure}`: queries with GET and the input as query parameters, mutations with POST and a JSON body; answers are bare JSON.",
        "The same procedures are served under `/api/trpc/{router}.{procedure}` with tRPC envelopes (`{result: {data}}`, `?input=`, superjson `{json: …}` bodies, `?batch=1`): see the trpc tag.",
        "Credentials: `Authorization: Bearer <session token or API key>` or `x-api-key: <API key>`. Every error is `{error: {message, code, data}}` with the status of its code.",
      ].join("\n\n"),
    },
    servers: [{ url: "/", description: "This control plane" }],
    tags: Object.entries(tagDocs)
      .filter(([name]) => used.has(name))
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([name, description]) => ({ name, description })),
    components: {
      securitySchemes: {
        bearer: { type: "http", scheme: "bearer", description: "A session token (auth.login) or an API key" },
        apiKey: {
          type: "apiKey",
          in: "header",
          name: "x-api-key",
          description: "An API key (user.createApiKey)",
        },
      },
      schemas: { Error: errorBodySchema, ValidationError: validationErrorSchema },
      responses: {
        ...errorResponses,
        MethodNotSupported: jsonError(
          "A query called with POST or a mutation with GET; the Allow header names the right method",
          "Error",
          errorExample("METHOD_NOT_SUPPORTED", "project.all is a query: use GET, not POST", {
            allowed: "GET",
          }),
        ),
      },
    },
    paths,
  };
}

const require = createRequire(import.meta.url);
const swaggerDir = path.dirname(require.resolve("swagger-ui-dist/package.json"));
const swaggerAssets: Record<string, string> = {
  "swagger-ui.css": "text/css; charset=utf-8",
  "swagger-ui-bundle.js": "text/javascript; charset=utf-8",
};

const docsPage = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Platform API</title>
<link rel="stylesheet" href="/api/docs/swagger-ui.css"></head>
<body><div id="ui"></div><script src="/api/docs/swagger-ui-bundle.js"></script>
<script src="/api/docs/init.js"></script></body></html>`;
// validatorUrl null: Swagger UI would otherwise fetch a badge from an online validator.
const docsInit = `window.ui = SwaggerUIBundle({ url: "/api/openapi.json", dom_id: "#ui", validatorUrl: null });`;

/** The document each control plane serves, by its services (settings.getOpenApiDocument). */
const documentsByServices = new WeakMap<object, () => Record<string, unknown>>();

/** The document /api/openapi.json serves for the control plane of `services`, if it serves one. */
export function openApiDocumentOf(services: object): Record<string, unknown> | undefined {
  return documentsByServices.get(services)?.();
}

export function registerOpenApiRoutes(
  app: Hono,
  procedures: ProcedureTable,
  routes: Record<string, OpenApiPathItem>,
  services?: object,
): void {
  // Converting every procedure's schemas is not free: built on the first request, not in
  // createApp, then served from this cache.
  let document: Record<string, unknown> | undefined;
  const current = () => {
    document ??= buildOpenApiDocument(procedures, routes);
    return document;
  };
  if (services) documentsByServices.set(services, current);
  app.get("/api/openapi.json", (c) => c.json(current()));
  app.get("/api/docs", (c) => c.html(docsPage));
  app.get("/api/docs/init.js", (c) =>
    c.body(docsInit, 200, { "content-type": "text/javascript; charset=utf-8" }),
  );
  app.get("/api/docs/:asset", async (c) => {
    const asset = c.req.param("asset");
    const type = Object.hasOwn(swaggerAssets, asset) ? swaggerAssets[asset] : undefined;
    if (!type) return c.notFound();
    const body = await readFile(path.join(swaggerDir, asset));
    return c.body(body, 200, { "content-type": type, "cache-control": "public, max-age=86400" });
  });
}
