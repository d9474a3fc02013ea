/**
 * The API reference is complete: every registered procedure has its row in openapi-docs.ts
 * (and no row names a procedure that does not exist), every operation a summary, a description,
 * a declared tag and the error responses it can give, create procedures a request example the
 * API itself accepts, and the document passes Spectral's whole OpenAPI ruleset (.spectral.yaml)
 * with 0 errors and 0 warnings.
 */
import { execFile } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { procedureTable } from "./dispatcher.ts";
import { procedureDocs, routeDocs, tagDocs } from "./openapi-docs.ts";
import { allRouters } from "./routers/index.ts";
import { startTestPlatform, type TestPlatform } from "./testing/harness.ts";

const root = path.resolve(import.meta.dirname, "../../..");
const procedures = procedureTable(allRouters);
const methods = ["get", "post", "put", "patch", "delete"];

describe("API reference", () => {
  let platform: TestPlatform;
  let document: any;
  beforeAll(async () => {
    platform = await startTestPlatform();
    document = (await platform.request("/api/openapi.json")).body;
  });
  afterAll(() => platform.close());

  const operations = () =>
    Object.entries(document.paths as Record<string, Record<string, any>>).flatMap(([route, item]) =>
      Object.entries(item)
        .filter(([method]) => methods.includes(method))
        .map(([method, operation]) => ({ route, method, operation })),
    );

  it("has a description row for every registered procedure, and none for a procedure that does not exist", () => {
    const missing = [...procedures.keys()].filter((name) => !procedureDocs[name]?.description);
    expect(missing, "add a row to openapi-docs.ts for each").toEqual([]);
    const stale = Object.keys(procedureDocs).filter((name) => !procedures.has(name));
    expect(stale, "rows in openapi-docs.ts for procedures that are not registered").toEqual([]);
    for (const [name, doc] of Object.entries(procedureDocs)) {
      expect(doc.description.length, name).toBeGreaterThan(20);
    }
  });

  it("describes every spec router as a tag, and lists the tags every operation uses", () => {
    for (const router of allRouters) expect(tagDocs[router.name], router.name).toBeTruthy();
    const declared = new Set((document.tags as { name: string }[]).map((tag) => tag.name));
    for (const router of allRouters) expect(declared.has(router.name), router.name).toBe(true);
    for (const { route, operation } of operations()) {
      expect(operation.tags?.length, route).toBe(1);
      expect(declared.has(operation.tags[0]), `${route}: ${operation.tags[0]}`).toBe(true);
    }
  });

  it("gives every operation a summary, a description and its error responses with the error body", () => {
    for (const { route, method, operation } of operations()) {
      const where = `${method.toUpperCase()} ${route}`;
      expect(operation.summary, where).toBeTruthy();
      expect(operation.description, where).toBeTruthy();
      expect(operation.responses["400"], where).toEqual({ $ref: "#/components/responses/BadRequest" });
      expect(operation.responses.default, where).toEqual({ $ref: "#/components/responses/ServerError" });
      if (operation.security?.length) {
        for (const status of ["401", "403", "429"]) expect(operation.responses[status], where).toBeDefined();
      }
      if (method === "post") expect(operation.responses["413"], where).toBeDefined();
    }
    const responses = document.components.responses;
    expect(responses.BadRequest.content["application/json"].schema.$ref).toBe(
      "#/components/schemas/ValidationError",
    );
    expect(document.components.schemas.ValidationError.properties.error.properties.data.required).toEqual([
      "fields",
      "issues",
    ]);
    expect(responses.TooManyRequests.headers["Retry-After"]).toBeDefined();
  });

  it("answers the statuses the procedures really give: 404 by id, 409 where a row says, edition 403", () => {
    const responses = (name: string) => Object.values(document.paths[`/api/${name}`])[0] as any;
    expect(responses("application.one").responses["404"]).toBeDefined();
    expect(responses("project.all").responses["404"]).toBeUndefined();
    expect(responses("security.create").responses["409"]).toBeDefined();
    expect(responses("project.create").responses["409"]).toBeUndefined();
    expect(responses("auth.login").responses["401"]).toBeDefined();
    expect(responses("auth.login").responses["403"]).toBeUndefined();
    expect(responses("settings.readTraefikConfig").responses["403"]).toBeDefined();
    expect(responses("project.all").responses["413"]).toBeUndefined();
  });

  it("has an example for every create procedure, accepted by the procedure's own input schema", () => {
    const creates = [...procedures.keys()].filter((name) =>
      /\.(create\w*|register|inviteMember)$/.test(name),
    );
    expect(creates.length).toBeGreaterThan(8);
    for (const name of creates) {
      const example = procedureDocs[name]?.example;
      expect(example, `${name} needs an example in openapi-docs.ts`).toBeDefined();
      const parsed = procedures.get(name)!.input.safeParse(example);
      expect(parsed.success, `${name}: ${JSON.stringify(parsed.error?.issues)}`).toBe(true);
      const body = document.paths[`/api/${name}`].post.requestBody.content["application/json"];
      expect(body.example).toEqual(example);
    }
  });

  it("documents the routes outside the procedure layer and the /api/trpc forms", () => {
    for (const operationId of Object.keys(routeDocs)) {
      const found = operations().find(({ operation }) => operation.operationId === operationId);
      expect(found?.operation.description, operationId).toContain(routeDocs[operationId]!.description);
    }
    const trpc = document.paths["/api/trpc/{path}"];
    expect(trpc.get.tags).toEqual(["trpc"]);
    expect(trpc.get.parameters.map((p: { name: string }) => p.name)).toEqual(["path", "input", "batch"]);
    expect(trpc.post.responses["405"]).toEqual({ $ref: "#/components/responses/MethodNotSupported" });
    expect(document.paths["/api/project.all"].get.description).toContain("/api/trpc/project.all");
  });

  it("passes Spectral's whole OpenAPI ruleset with 0 errors and 0 warnings", async () => {
    const dir = await mkdtemp(path.join(tmpdir(), "platform-openapi-"));
    try {
      const file = path.join(dir, "openapi.json");
      await writeFile(file, JSON.stringify(document, null, 2));
      const spectral = path.join(root, "node_modules/.bin/spectral");
      const args = ["lint", file, "--ruleset", path.join(root, ".spectral.yaml"), "--format", "json"];
      const { stdout } = await promisify(execFile)(spectral, [...args, "--fail-severity", "hint"], {
        maxBuffer: 64 * 1024 * 1024,
      }).catch((error: { stdout?: string; message: string }) => ({ stdout: error.stdout ?? error.message }));
      const results = JSON.parse(stdout.slice(stdout.indexOf("["), stdout.lastIndexOf("]") + 1));
      const problems = results.map(
        (r: { code: string; message: string; path: string[] }) =>
          `${r.code}: ${r.message} at ${r.path.join(".")}`,
      );
      expect(problems).toEqual([]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
    // Spectral lints the whole document in a child process: minutes on a loaded machine.
  }, 180_000);
});
