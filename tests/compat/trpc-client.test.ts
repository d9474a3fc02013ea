/**
 * The API driven by the real tRPC client (v11) with the superjson transformer, as Dokploy's own
 * web app and tRPC scripts call it, against a real listening server: queries, mutations, batches
 * and errors over httpLink and httpBatchLink, each answer read back through the client.
 */
import { once } from "node:events";
import type { AddressInfo } from "node:net";
import { serve } from "@hono/node-server";
import {
  createTRPCUntypedClient,
  httpBatchLink,
  httpLink,
  type TRPCClientError,
  type TRPCLink,
} from "@trpc/client";
import type { AnyTRPCRouter } from "@trpc/server";
import superjson from "superjson";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type Session,
  startTestPlatform,
  type TestPlatform,
} from "../../apps/control-plane/src/testing/harness.ts";

describe("the real @trpc/client with superjson", () => {
  let platform: TestPlatform;
  let server: ReturnType<typeof serve>;
  let base: string;
  let owner: Session;
  /** Every URL the client fetched, to see what it batched. */
  const fetched: { method: string; url: string }[] = [];

  const clientWith = (link: "http" | "batch") => {
    const options = {
      url: `${base}/api/trpc`,
      transformer: superjson,
      headers: () => ({ authorization: `Bearer ${owner.token}` }),
      fetch: (url: URL | RequestInfo, init?: RequestInit) => {
        fetched.push({ method: init?.method ?? "GET", url: String(url) });
        return fetch(url, init);
      },
    };
    const links: TRPCLink<AnyTRPCRouter>[] = [link === "http" ? httpLink(options) : httpBatchLink(options)];
    return createTRPCUntypedClient<AnyTRPCRouter>({ links });
  };
  const failure = (promise: Promise<unknown>) =>
    promise.then(
      (value) => {
        throw new Error(`expected a failure, got ${JSON.stringify(value)}`);
      },
      (error: TRPCClientError<AnyTRPCRouter>) => error,
    );

  beforeAll(async () => {
    platform = await startTestPlatform();
    owner = await platform.registerOwner();
    server = serve({ fetch: platform.app.fetch, port: 0, hostname: "127.0.0.1" });
    await once(server, "listening");
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server?.close();
    await platform?.close();
  });

  it("httpLink: a mutation, queries with and without input, and their answers", async () => {
    const client = clientWith("http");
    const created = (await client.mutation("project.create", { name: "Via tRPC client" })) as any;
    expect(created.project.name).toBe("Via tRPC client");
    expect(created.environment.name).toBe("production");

    const one = (await client.query("project.one", { projectId: created.project.projectId })) as any;
    expect(one.projectId).toBe(created.project.projectId);
    // No input: the client sends superjson's form of undefined.
    const all = (await client.query("project.all")) as any[];
    expect(all.map((p) => p.projectId)).toContain(created.project.projectId);
    const last = fetched.at(-1)!;
    expect(decodeURIComponent(new URL(last.url).searchParams.get("input")!)).toContain('"undefined"');
  });

  it("httpLink: errors come back as TRPCClientError with Dokploy's shape", async () => {
    const client = clientWith("http");
    const unknown = await failure(client.mutation("project.create", { name: "x", colour: "red" }));
    expect(unknown.message).toContain("colour");
    expect(unknown.data).toMatchObject({ code: "BAD_REQUEST", httpStatus: 400, fields: ["colour"] });
    expect(unknown.shape).toMatchObject({ code: -32600 });

    const missing = await failure(
      client.query("project.one", { projectId: "00000000-0000-4000-8000-000000000000" }),
    );
    expect(missing.data).toMatchObject({ code: "NOT_FOUND", httpStatus: 404, path: "project.one" });

    const noSuch = await failure(client.query("project.nothing"));
    expect(noSuch.data).toMatchObject({ code: "NOT_FOUND", httpStatus: 404 });

    const anonymous = createTRPCUntypedClient<AnyTRPCRouter>({
      links: [httpLink({ url: `${base}/api/trpc`, transformer: superjson })],
    });
    const unauthorized = await failure(anonymous.query("project.all"));
    expect(unauthorized.data).toMatchObject({ code: "UNAUTHORIZED", httpStatus: 401 });
  });

  it("httpBatchLink: queries and mutations batched in one request each, with mixed results", async () => {
    const client = clientWith("batch");
    const before = fetched.length;
    const [a, b] = (await Promise.all([
      client.mutation("project.create", { name: "Batch A" }),
      client.mutation("project.create", { name: "Batch B" }),
    ])) as any[];
    expect([a.project.name, b.project.name]).toEqual(["Batch A", "Batch B"]);
    const mutationRequests = fetched.slice(before);
    expect(mutationRequests).toHaveLength(1);
    expect(mutationRequests[0]!.method).toBe("POST");
    expect(mutationRequests[0]!.url).toContain("project.create,project.create?batch=1");

    const settled = await Promise.allSettled([
      client.query("project.one", { projectId: a.project.projectId }),
      client.query("project.all"),
      client.query("project.one", { projectId: b.project.projectId, extra: true }),
      client.query("project.search", { q: "Batch", limit: 1 }),
    ]);
    expect(fetched.length - before).toBe(2);
    const [first, all, refused, search] = settled;
    expect(first).toMatchObject({ status: "fulfilled", value: { projectId: a.project.projectId } });
    expect(all.status === "fulfilled" && (all.value as any[]).length).toBeGreaterThanOrEqual(2);
    expect(refused.status).toBe("rejected");
    expect((refused as PromiseRejectedResult).reason.data).toMatchObject({
      code: "BAD_REQUEST",
      fields: ["extra"],
      path: "project.one",
    });
    expect(search).toMatchObject({ status: "fulfilled", value: { total: 2 } });
    expect((search as PromiseFulfilledResult<any>).value.items).toHaveLength(1);
  });

  it("httpLink: a multipart upload (application.dropDeployment) answers in the same shape", async () => {
    const client = clientWith("http");
    const form = new FormData();
    form.set("applicationId", "no-such-application");
    form.set("zip", new Blob([new Uint8Array([0x50, 0x4b, 0x03, 0x04])]), "app.zip");
    const missing = await failure(client.mutation("application.dropDeployment", form));
    expect(missing.data).toMatchObject({
      code: "NOT_FOUND",
      httpStatus: 404,
      path: "application.dropDeployment",
    });
    expect(missing.shape).toMatchObject({ code: -32004 });
  });

  it("the plain prefix still answers the bare value", async () => {
    const response = await fetch(`${base}/api/project.all`, {
      headers: { authorization: `Bearer ${owner.token}` },
    });
    expect(response.status).toBe(200);
    const body = await response.json();
    expect(Array.isArray(body)).toBe(true);
  });
});
