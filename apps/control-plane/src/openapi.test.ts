import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { procedureTable } from "./dispatcher.ts";
import { allRouters } from "./routers/index.ts";
import { startTestPlatform, type TestPlatform } from "./testing/harness.ts";

describe("OpenAPI document and docs page", () => {
  let platform: TestPlatform;
  beforeAll(async () => {
    platform = await startTestPlatform();
  });
  afterAll(() => platform.close());

  it("lists every registered procedure with its method", async () => {
    const { status, body } = await platform.request("/api/openapi.json");
    expect(status).toBe(200);
    expect(body.openapi).toBe("3.1.0");
    const procedures = procedureTable(allRouters);
    expect(procedures.size).toBeGreaterThan(0);
    for (const [name, procedure] of procedures) {
      const method = procedure.kind === "query" ? "get" : "post";
      expect(body.paths[`/api/${name}`]?.[method], name).toBeDefined();
    }
    const routes = [
      "/api/deployment.logs",
      "/api/runtime.logs",
      "/api/application.dropDeployment",
      "/api/docker.uploadFileToContainer",
      "/api/deploy/{provider}/{applicationId}",
      "/api/trpc/{path}",
    ];
    expect(Object.keys(body.paths)).toHaveLength(procedures.size + routes.length);
  });

  it("serves the same document on every request (built once, on the first)", async () => {
    const first = await platform.request("/api/openapi.json");
    const second = await platform.request("/api/openapi.json");
    expect(second.status).toBe(200);
    expect(second.body).toEqual(first.body);
  });

  it("describes the routes outside the procedure layer: live logs, drop uploads and deploy webhooks", async () => {
    const { body } = await platform.request("/api/openapi.json");
    const logs = body.paths["/api/deployment.logs"].get;
    expect(Object.keys(logs.responses["200"].content)).toEqual(["text/event-stream"]);
    expect(logs.parameters.map((p: { name: string }) => p.name)).toEqual(["deploymentId", "Last-Event-ID"]);
    const runtime = body.paths["/api/runtime.logs"].get;
    expect(Object.keys(runtime.responses["200"].content)).toEqual(["text/event-stream"]);
    expect(runtime.parameters.map((p: { name: string }) => p.name)).toEqual([
      "applicationId",
      "composeId",
      "postgresId",
      "mysqlId",
      "mariadbId",
      "mongoId",
      "redisId",
      "libsqlId",
      "containerId",
      "tail",
      "search",
    ]);
    const drop = body.paths["/api/application.dropDeployment"].post;
    expect(drop.requestBody.content["multipart/form-data"].schema.required).toEqual(["applicationId", "zip"]);
    const webhook = body.paths["/api/deploy/{provider}/{applicationId}"].post;
    expect(webhook.security).toEqual([]);
    expect(webhook.parameters.find((p: { name: string }) => p.name === "provider").schema.enum).toEqual([
      "github",
      "gitlab",
      "bitbucket",
      "gitea",
    ]);
  });

  it("describes inputs: query parameters for queries, JSON bodies for mutations", async () => {
    const { body } = await platform.request("/api/openapi.json");
    const register = body.paths["/api/auth.register"].post;
    expect(register.requestBody.content["application/json"].schema.required).toEqual(
      expect.arrayContaining(["email", "password", "name"]),
    );
    expect(register.security).toEqual([]);
  });

  it("serves the interactive reference page and its assets without a CDN", async () => {
    const page = await platform.request("/api/docs");
    expect(page.status).toBe(200);
    expect(page.body).toContain("/api/docs/swagger-ui-bundle.js");
    expect(page.body).not.toMatch(/https?:\/\//);
    const bundle = await platform.app.request("/api/docs/swagger-ui-bundle.js");
    expect(bundle.status).toBe(200);
    expect((await platform.request("/api/docs/..%2Fpackage.json")).status).toBe(404);
  });
});

describe("health", () => {
  let platform: TestPlatform;
  beforeAll(async () => {
    platform = await startTestPlatform();
  });
  afterAll(() => platform.close());

  it("reports liveness and the database state", async () => {
    const { status, body } = await platform.request("/health");
    expect(status).toBe(200);
    expect(body).toMatchObject({
      status: "ok",
      checks: { database: { status: "up" }, nats: { status: "disabled" } },
    });
    expect((await platform.request("/health/ready")).body).toEqual(body);
    expect(await platform.request("/health/live")).toMatchObject({ status: 200, body: { status: "ok" } });
  });

  it("answers 503 when the database is gone", async () => {
    await platform.ctx.db.destroy();
    const { status, body } = await platform.request("/health");
    expect(status).toBe(503);
    expect(body.checks.database.status).toBe("down");
    // Liveness does not depend on the database: nothing should restart the process for it.
    expect((await platform.request("/health/live")).status).toBe(200);
  });
});
