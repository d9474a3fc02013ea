/**
 * The drop upload refuses an anonymous client from its headers alone (finding 11 of issue 10):
 * over real HTTP, a body that is still being sent (chunked, or with a 90 MB Content-Length) gets
 * its 401 before the client has finished, so no anonymous upload is buffered.
 */
import { request } from "node:http";
import { serve } from "@hono/node-server";
import { freePort } from "@platform/agent/testing/net.ts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestPlatform, type TestPlatform } from "../testing/harness.ts";

let platform: TestPlatform;
let http: ReturnType<typeof serve> | undefined;
let port: number;

beforeAll(async () => {
  port = await freePort();
  platform = await startTestPlatform({}, { agents: { localAgent: false } });
  http = serve({ fetch: platform.app.fetch, port, hostname: "127.0.0.1" });
});

afterAll(async () => {
  await new Promise<void>((resolve) => (http ? http.close(() => resolve()) : resolve()));
  await platform?.close();
});

/** Starts an upload, sends one 64 KiB chunk and never finishes; resolves with the answer, if any. */
function unfinishedUpload(path: string, headers: Record<string, string>) {
  return new Promise<{ status: number; body: string } | "no answer">((resolve) => {
    const req = request({ host: "127.0.0.1", port, path, method: "POST", headers });
    const timer = setTimeout(() => {
      req.destroy();
      resolve("no answer");
    }, 5000);
    req.on("response", (response) => {
      let body = "";
      response.on("data", (chunk) => (body += chunk));
      response.on("end", () => {
        clearTimeout(timer);
        req.destroy();
        resolve({ status: response.statusCode ?? 0, body });
      });
    });
    req.on("error", () => {});
    req.write(Buffer.alloc(64 * 1024, "a"));
  });
}

describe("application.dropDeployment upload", () => {
  it.each([
    ["/api/application.dropDeployment", { "transfer-encoding": "chunked" }],
    ["/api/trpc/application.dropDeployment", { "transfer-encoding": "chunked" }],
    ["/api/application.dropDeployment", { "content-length": String(90 * 1024 * 1024) }],
  ])("answers an anonymous upload to %s (%j) with 401 before its body is read", async (path, framing) => {
    const answer = await unfinishedUpload(path, {
      "content-type": "multipart/form-data; boundary=x",
      ...framing,
    });
    expect(answer).not.toBe("no answer");
    if (answer === "no answer") return;
    expect(answer.status).toBe(401);
    const error = JSON.parse(answer.body).error;
    // /api/trpc answers in superjson's shape, the plain prefix the bare error.
    expect(path.includes("/trpc/") ? error.json.data.code : error.code).toBe("UNAUTHORIZED");
  });

  it("also refuses a bad token before the body", async () => {
    const answer = await unfinishedUpload("/api/application.dropDeployment", {
      "content-type": "multipart/form-data; boundary=x",
      authorization: "Bearer not-a-real-token",
      "transfer-encoding": "chunked",
    });
    expect(answer).toMatchObject({ status: 401 });
  });
});
