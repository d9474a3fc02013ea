/**
 * The OpenAPI 3.1 document, generated from the same zod schemas the dispatcher parses with,
 * and a Swagger UI page (served from the swagger-ui-dist package, no CDN).
 */
import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import path from "node:path";
import type { Hono } from "hono";
import { z } from "zod";
import type { ProcedureTable } from "./dispatcher.ts";
import { errorStatus } from "./errors.ts";

type JsonSchema = Record<string, unknown>;

const toJsonSchema = (schema: z.ZodType, io: "input" | "output"): JsonSchema => {
  const json = z.toJSONSchema(schema, { io, unrepresentable: "any", target: "draft-2020-12" }) as JsonSchema;
  delete json.$schema;
  return json;
};

const errorBodySchema = {
  type: "object",
  required: ["error"],
  properties: {
    error: {
      type: "object",
      required: ["message", "code", "data"],
      properties: {
        message: { type: "string" },
        code: { type: "string", enum: Object.keys(errorStatus) },
        data: { type: "object" },
      },
    },
  },
};

/** An OpenAPI path item for a route served outside the procedure layer (SSE, multipart, webhooks). */
export type OpenApiPathItem = Record<string, unknown>;

/** The error responses every route shares. */
export const errorResponse = {
  description: "Error",
  content: { "application/json": { schema: { $ref: "#/components/schemas/Error" } } },
};

export function buildOpenApiDocument(
  procedures: ProcedureTable,
  routes: Record<string, OpenApiPathItem> = {},
): Record<string, unknown> {
  const paths: Record<string, unknown> = {};
  for (const [name, procedure] of [...procedures.entries()].sort(([a], [b]) => a.localeCompare(b))) {
    const input = toJsonSchema(procedure.input, "input");
    const objectInput = (input.anyOf as JsonSchema[] | undefined)?.find((s) => s.type === "object") ?? input;
    const properties = (objectInput.properties ?? {}) as Record<string, JsonSchema>;
    const required = new Set((objectInput.required ?? []) as string[]);
    const operation: Record<string, unknown> = {
      operationId: name,
      tags: [name.split(".")[0]],
      summary: procedure.summary ?? name,
      security: procedure.access === "public" ? [] : [{ bearer: [] }, { apiKey: [] }],
      responses: {
        "200": {
          description: "Success",
          content: { "application/json": { schema: toJsonSchema(procedure.output, "output") } },
        },
        default: errorResponse,
      },
    };
    if (procedure.access === "admin" || procedure.access === "owner") {
      operation.description = `Requires the ${procedure.access} role.`;
    }
    if (procedure.editions) operation["x-editions"] = procedure.editions;
    if (procedure.kind === "query") {
      operation.parameters = Object.entries(properties).map(([param, schema]) => ({
        name: param,
        in: "query",
        required: required.has(param),
        schema,
      }));
    } else {
      operation.requestBody = {
        required: required.size > 0,
        content: { "application/json": { schema: input } },
      };
    }
    paths[`/api/${name}`] = { [procedure.kind === "query" ? "get" : "post"]: operation };
  }
  Object.assign(paths, routes);
  return {
    openapi: "3.1.0",
    info: {
      title: "Platform API",
      version: "1.0.0",
      description:
        "Procedures are also served under /api/trpc/{router}.{procedure} with tRPC envelopes ({result:{data}}).",
    },
    servers: [{ url: "/" }],
    components: {
      securitySchemes: {
        bearer: { type: "http", scheme: "bearer", description: "Session token or API key" },
        apiKey: { type: "apiKey", in: "header", name: "x-api-key" },
      },
      schemas: { Error: errorBodySchema },
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
const docsInit = `window.ui = SwaggerUIBundle({ url: "/api/openapi.json", dom_id: "#ui" });`;

export function registerOpenApiRoutes(
  app: Hono,
  procedures: ProcedureTable,
  routes: Record<string, OpenApiPathItem>,
): void {
  // Converting every procedure's schemas is not free: built on the first request, not in
  // createApp, then served from this cache.
  let document: Record<string, unknown> | undefined;
  app.get("/api/openapi.json", (c) => {
    document ??= buildOpenApiDocument(procedures, routes);
    return c.json(document);
  });
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
