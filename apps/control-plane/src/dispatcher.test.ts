/** The procedure layer's wire forms and error statuses, on a router made for the test. */
import { once } from "node:events";
import { request as httpRequest } from "node:http";
import type { AddressInfo } from "node:net";
import { serve } from "@hono/node-server";
import type { Hono } from "hono";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { createApp, MAX_BODY_BYTES } from "./app.ts";
import { defineRouter, mutation, query } from "./procedure.ts";
import { authRouter } from "./routers/auth.ts";
import { type Session, startTestPlatform, type TestPlatform } from "./testing/harness.ts";

const echoRouter = defineRouter("echo", {
  get: query({
    access: "member",
    input: z.object({
      text: z.string().min(1),
      count: z.number().int().min(1).max(5).default(1),
      loud: z.boolean().default(false),
      tags: z.array(z.string()).optional(),
    }),
    output: z.object({
      text: z.string(),
      count: z.number(),
      loud: z.boolean(),
      tags: z.array(z.string()).optional(),
    }),
    handler: ({ input }) => input,
  }),
  set: mutation({
    access: "member",
    input: z.object({
      name: z.string().min(1),
      size: z.number().int().positive(),
      options: z.object({ mode: z.string() }).optional(),
    }),
    output: z.object({ name: z.string(), size: z.number() }),
    handler: ({ input }) => ({ ...input, secret: "must-be-stripped" }),
  }),
  when: mutation({
    access: "member",
    input: z.object({ at: z.date(), note: z.string().optional() }),
    output: z.object({ at: z.date(), note: z.string().nullable() }),
    handler: ({ input }) => ({ at: input.at, note: input.note ?? null }),
  }),
  many: mutation({
    access: "member",
    input: z.object({ values: z.array(z.number()), data: z.unknown().optional() }),
    output: z.object({ count: z.number() }),
    handler: ({ input }) => ({ count: input.values.length }),
  }),
  adminOnly: mutation({
    access: "admin",
    input: z.object({}).optional(),
    output: z.object({ ok: z.boolean() }),
    handler: () => ({ ok: true }),
  }),
  selfHostedOnly: query({
    access: "member",
    editions: ["self-hosted"],
    input: z.object({}).optional(),
    output: z.object({ ok: z.boolean() }),
    handler: () => ({ ok: true }),
  }),
  broken: query({
    access: "member",
    input: z.object({}).optional(),
    output: z.object({ ok: z.boolean() }),
    handler: () => {
      throw new Error("connect ECONNREFUSED /var/run/secret.sock (docker run --password hunter2)");
    },
  }),
});

describe("dispatcher", () => {
  let platform: TestPlatform;
  let app: Hono;
  let owner: Session;
  const auth = () => ({ authorization: `Bearer ${owner.token}` });
  const call = async (path: string, init: RequestInit = {}) => {
    const response = await app.request(path, {
      ...init,
      headers: { ...auth(), ...(init.headers as object) },
    });
    const text = await response.text();
    return { status: response.status, headers: response.headers, body: text ? JSON.parse(text) : undefined };
  };
  const post = (path: string, body: unknown) =>
    call(path, {
      method: "POST",
      body: JSON.stringify(body),
      headers: { "content-type": "application/json" },
    });

  beforeAll(async () => {
    platform = await startTestPlatform();
    app = createApp(platform.ctx, [authRouter, echoRouter]) as unknown as Hono;
    owner = await platform.registerOwner();
  });
  afterAll(() => platform.close());

  describe("input forms", () => {
    it("coerces plain query parameters by the schema", async () => {
      const r = await call("/api/echo.get?text=hi&count=3&loud=true&tags=a&tags=b");
      expect(r.status).toBe(200);
      expect(r.body).toEqual({ text: "hi", count: 3, loud: true, tags: ["a", "b"] });
    });

    it("accepts ?input= with plain JSON on both prefixes", async () => {
      const input = encodeURIComponent(JSON.stringify({ text: "hi", count: 2 }));
      expect((await call(`/api/echo.get?input=${input}`)).body).toEqual({
        text: "hi",
        count: 2,
        loud: false,
      });
      expect((await call(`/api/trpc/echo.get?input=${input}`)).body).toEqual({
        result: { data: { json: { text: "hi", count: 2, loud: false } } },
      });
    });

    it("takes superjson's form of no input and of dates, and answers dates as superjson encodes them", async () => {
      const none = encodeURIComponent(JSON.stringify({ json: null, meta: { values: ["undefined"] } }));
      expect((await call(`/api/trpc/echo.selfHostedOnly?input=${none}`)).body).toEqual({
        result: { data: { json: { ok: true } } },
      });
      const missing = await call(`/api/trpc/echo.get?input=${none}`);
      expect(missing.status).toBe(400);
      expect(missing.body.error.json.data.fields).toEqual(["text"]);

      const at = "2026-11-24T10:00:00.000Z";
      const dated = { json: { at, note: undefined }, meta: { values: { at: ["Date"] } } };
      const r = await post("/api/trpc/echo.when", dated);
      expect(r.status).toBe(200);
      expect(r.body).toEqual({
        result: { data: { json: { at, note: null }, meta: { values: { at: ["Date"] }, v: 1 } } },
      });
      // The plain prefix answers the bare value, dates as ISO text.
      expect((await post("/api/echo.when", dated)).body).toEqual({ at, note: null });
      // A date sent as plain text is not a date.
      expect((await post("/api/trpc/echo.when", { at })).body.error.json.data.fields).toEqual(["at"]);
    });

    it("refuses superjson metadata it cannot read, and never builds a cycle", async () => {
      for (const meta of [{ values: { name: [["class", "Foo"]] } }, { values: { name: ["bogus"] } }, "x"]) {
        const r = await post("/api/trpc/echo.set", { json: { name: "a", size: 1 }, meta });
        expect(r.status).toBe(400);
        expect(r.body.error.json.data.fields).toEqual(["meta"]);
      }
      const proto = await post("/api/trpc/echo.set", {
        json: { name: "a", size: 1 },
        meta: { values: { "__proto__.polluted": ["Date"] } },
      });
      expect(proto.status).toBe(400);
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
      const cycle = await post("/api/trpc/echo.many", {
        json: { values: [1], data: { a: {} } },
        meta: { referentialEqualities: { "data.a": ["data.a.b"] } },
      });
      expect(cycle.status).toBe(200);
      expect(cycle.body.result.data.json).toEqual({ count: 1 });
    });

    it("answers superjson inputs with superjson envelopes", async () => {
      const input = encodeURIComponent(JSON.stringify({ json: { text: "hi" } }));
      expect((await call(`/api/trpc/echo.get?input=${input}`)).body).toEqual({
        result: { data: { json: { text: "hi", count: 1, loud: false } } },
      });
      const r = await post("/api/trpc/echo.set", { json: { name: "a", size: 1 }, meta: { values: {} } });
      expect(r.body).toEqual({ result: { data: { json: { name: "a", size: 1 } } } });
    });

    it("takes mutations as JSON bodies and strips fields the output schema does not declare", async () => {
      const r = await post("/api/echo.set", { name: "a", size: 1 });
      expect(r.status).toBe(200);
      expect(r.body).toEqual({ name: "a", size: 1 });
      expect((await post("/api/trpc/echo.set", { name: "a", size: 1 })).body).toEqual({
        result: { data: { json: { name: "a", size: 1 } } },
      });
    });

    it("accepts a JSON body on a query over real HTTP (registry.one / security.one style)", async () => {
      const server = serve({ fetch: app.fetch, port: 0, hostname: "127.0.0.1" });
      await once(server, "listening");
      const { port } = server.address() as AddressInfo;
      try {
        const body = await new Promise<string>((resolve, reject) => {
          const payload = JSON.stringify({ text: "body" });
          const req = httpRequest(
            {
              host: "127.0.0.1",
              port,
              path: "/api/echo.get",
              method: "GET",
              headers: {
                ...auth(),
                "content-type": "application/json",
                "content-length": Buffer.byteLength(payload),
              },
            },
            (res) => {
              let text = "";
              res.on("data", (chunk) => (text += chunk)).on("end", () => resolve(text));
            },
          );
          req.on("error", reject);
          req.end(payload);
        });
        expect(JSON.parse(body)).toEqual({ text: "body", count: 1, loud: false });
      } finally {
        server.close();
      }
    });

    it("serves tRPC batches, every answer superjson-shaped whatever the input form", async () => {
      const input = encodeURIComponent(
        JSON.stringify({ 0: { json: { text: "a" } }, 1: { text: "b", count: 9 }, 2: { text: "c" } }),
      );
      const r = await call(`/api/trpc/echo.get,echo.get,echo.get?batch=1&input=${input}`);
      expect(r.status).toBe(207);
      expect(r.body[0]).toEqual({ result: { data: { json: { text: "a", count: 1, loud: false } } } });
      expect(r.body[1].error.json).toMatchObject({
        code: -32600,
        data: { code: "BAD_REQUEST", httpStatus: 400, path: "echo.get", fields: ["count"] },
      });
      expect(r.body[2]).toEqual({ result: { data: { json: { text: "c", count: 1, loud: false } } } });

      // A batch whose input cannot be read fails every call alike.
      const broken = await call("/api/trpc/echo.get,echo.get?batch=1&input=%7Bnope");
      expect(broken.status).toBe(400);
      expect(broken.body).toHaveLength(2);
      expect(broken.body[1].error.json.data).toMatchObject({ code: "BAD_REQUEST", path: "echo.get" });
      const notObject = await call(`/api/trpc/echo.get?batch=1&input=${encodeURIComponent("[1]")}`);
      expect(notObject.status).toBe(400);
    });

    it("coerces query strings by the schema and names the field and type of a value that does not fit", async () => {
      expect((await call("/api/echo.get?text=a&count=%223%22&loud=%22true%22")).body).toEqual({
        text: "a",
        count: 3,
        loud: true,
      });
      const count = await call("/api/echo.get?text=a&count=twelve");
      expect(count.status).toBe(400);
      expect(count.body.error.data.fields).toEqual(["count"]);
      expect(count.body.error.message).toMatch(/count: .*expected number/);
      const loud = await call("/api/echo.get?text=a&loud=yes");
      expect(loud.body.error.data.fields).toEqual(["loud"]);
      expect(loud.body.error.message).toMatch(/loud: .*expected boolean/);
      const tags = await call(`/api/echo.get?text=a&tags=${encodeURIComponent('["x","y"]')}`);
      expect(tags.body.tags).toEqual(["x", "y"]);
      const notStrings = await call(`/api/echo.get?text=a&tags=${encodeURIComponent("[1]")}`);
      expect(notStrings.status).toBe(400);
      expect(notStrings.body.error.data.fields).toEqual(["tags.0"]);
    });
  });

  describe("unknown fields", () => {
    it("400 names an unknown field at the top, nested, in a query string, on both prefixes", async () => {
      const top = await post("/api/echo.set", { name: "a", size: 1, colour: "red" });
      expect(top.status).toBe(400);
      expect(top.body.error.data.fields).toEqual(["colour"]);
      expect(top.body.error.message).toContain("colour: unknown field");
      const nested = await post("/api/echo.set", { name: "a", size: 1, options: { mode: "x", speed: 2 } });
      expect(nested.body.error.data.fields).toEqual(["options.speed"]);
      const query = await call("/api/echo.get?text=a&verbose=1");
      expect(query.status).toBe(400);
      expect(query.body.error.data.fields).toEqual(["verbose"]);
      const trpc = await post("/api/trpc/echo.set", { json: { name: "a", size: 1, colour: "red" } });
      expect(trpc.body.error.json.data.fields).toEqual(["colour"]);
      const none = await post("/api/echo.adminOnly", { force: true });
      expect(none.status).toBe(400);
      expect(none.body.error.data.fields).toEqual(["force"]);
    });
  });

  describe("errors", () => {
    it("400 lists every failing field", async () => {
      const r = await post("/api/echo.set", { name: "", size: -1 });
      expect(r.status).toBe(400);
      expect(r.body.error.code).toBe("BAD_REQUEST");
      expect(r.body.error.data.fields).toEqual(["name", "size"]);
      expect(r.body.error.message).toContain("name");
      expect(r.body.error.message).toContain("size");
    });

    it("400 for malformed JSON", async () => {
      const r = await call("/api/echo.set", {
        method: "POST",
        body: "{not json",
        headers: { "content-type": "application/json" },
      });
      expect(r.status).toBe(400);
    });

    it("401 without credentials, with a bad key, and for a credential in the query string", async () => {
      const none = await app.request("/api/echo.get?text=x");
      expect(none.status).toBe(401);
      expect((await none.json()).error.code).toBe("UNAUTHORIZED");
      const bad = await app.request("/api/echo.get?text=x", { headers: { "x-api-key": "nope" } });
      expect(bad.status).toBe(401);
      const inQuery = await app.request(`/api/echo.get?text=x&token=${owner.token}`);
      expect(inQuery.status).toBe(401);
      expect((await inQuery.json()).error.message).toMatch(/query string/);
    });

    it("403 for a role below the procedure's and for a procedure off on this edition", async () => {
      const member = await platform.addMember(owner, "member");
      const r = await app.request("/api/echo.adminOnly", {
        method: "POST",
        headers: { authorization: `Bearer ${member.token}` },
      });
      expect(r.status).toBe(403);
      expect((await post("/api/echo.adminOnly", {})).status).toBe(200);

      const cloud = await startTestPlatform({ PLATFORM_EDITION: "cloud" });
      try {
        const cloudApp = createApp(cloud.ctx, [authRouter, echoRouter]);
        const cloudOwner = await cloud.registerOwner();
        const off = await cloudApp.request("/api/echo.selfHostedOnly", {
          headers: { authorization: `Bearer ${cloudOwner.token}` },
        });
        expect(off.status).toBe(403);
        expect((await off.json()).error.message).toContain("cloud edition");
      } finally {
        await cloud.close();
      }
      expect((await call("/api/echo.selfHostedOnly")).status).toBe(200);
    });

    it("404 for an unknown procedure and route", async () => {
      const r = await call("/api/echo.nothing");
      expect(r.status).toBe(404);
      expect(r.body.error.code).toBe("NOT_FOUND");
      const trpc = await call("/api/trpc/nothing.here");
      expect(trpc.status).toBe(404);
      expect(trpc.body.error.json).toMatchObject({
        code: -32004,
        data: { code: "NOT_FOUND", httpStatus: 404 },
      });
      expect((await call("/api/trpc/nothing/here")).body.error.json.data.code).toBe("NOT_FOUND");
      expect((await call("/elsewhere")).body.error.code).toBe("NOT_FOUND");
    });

    it("404, never 500, for malformed percent-encoding and prototype property names", async () => {
      for (const path of [
        "/api/%E0%A4%A",
        "/api/%ZZ",
        "/api/trpc/%E0%A4%A",
        "/api/echo.get%",
        "/api/__proto__",
        "/api/constructor",
        "/api/trpc/toString",
        "/api/trpc/__proto__,constructor?batch=1",
        "/api/docs/constructor",
        "/api/docs/__proto__",
        "/api/docs/toString",
        "/api/docs/hasOwnProperty",
      ]) {
        const r = await call(path);
        expect([path, r.status]).toEqual([path, 404]);
      }
      const badInput = await call("/api/echo.get?input=%E0%A4%A");
      expect(badInput.status).toBe(400);
      const badQuery = await call("/api/echo.get?text=%E0%A4%A");
      expect(badQuery.status).toBe(200);
    });

    it("bounds the error for a deeply nested or huge input", async () => {
      const deep = `{"name":"a","size":1,"options":${"[".repeat(100_000)}${"]".repeat(100_000)}}`;
      const nested = await call("/api/echo.set", {
        method: "POST",
        body: deep,
        headers: { "content-type": "application/json" },
      });
      expect(nested.status).toBe(400);
      expect(JSON.stringify(nested.body).length).toBeLessThan(2_000);
      expect(nested.body.error.message).toContain("nested deeper than");

      const many = await post("/api/echo.many", { values: Array.from({ length: 50_000 }, () => "x") });
      expect(many.status).toBe(400);
      expect(many.body.error.data.issues).toHaveLength(20);
      expect(many.body.error.data.moreIssues).toBe(49_980);
      expect(JSON.stringify(many.body).length).toBeLessThan(6_000);

      const wide = Object.fromEntries(Array.from({ length: 5_000 }, (_, i) => [`k${i}`.repeat(20), 1]));
      const unknown = await post("/api/echo.set", { name: "a", size: 1, ...wide });
      expect(unknown.status).toBe(400);
      expect(JSON.stringify(unknown.body).length).toBeLessThan(10_000);
    });

    it("405 for the wrong method, with Allow", async () => {
      const r = await call("/api/echo.set", { method: "GET" });
      expect(r.status).toBe(405);
      expect(r.headers.get("allow")).toBe("POST");
      expect(r.body.error.code).toBe("METHOD_NOT_SUPPORTED");
      expect((await post("/api/echo.get", { text: "x" })).status).toBe(405);
    });

    it("413 for a body over 1 MiB, with the error body", async () => {
      const r = await post("/api/echo.set", { name: "x".repeat(MAX_BODY_BYTES), size: 1 });
      expect(r.status).toBe(413);
      expect(r.body.error.code).toBe("PAYLOAD_TOO_LARGE");
      const trpc = await post("/api/trpc/echo.set", { name: "x".repeat(MAX_BODY_BYTES), size: 1 });
      expect(trpc.status).toBe(413);
      expect(trpc.body.error.json.data.code).toBe("PAYLOAD_TOO_LARGE");
    });

    it("500 carries no stack trace, path or command line", async () => {
      const r = await call("/api/echo.broken");
      expect(r.status).toBe(500);
      expect(r.body).toEqual({
        error: { message: "Internal server error", code: "INTERNAL_SERVER_ERROR", data: { httpStatus: 500 } },
      });
      expect((await call("/api/trpc/echo.broken")).body).toEqual({
        error: {
          json: {
            message: "Internal server error",
            code: -32603,
            data: { code: "INTERNAL_SERVER_ERROR", httpStatus: 500, path: "echo.broken" },
          },
        },
      });
    });
  });
});
