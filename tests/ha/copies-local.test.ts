import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { dockerCli, requireDocker, TEST_IMAGE, uniqueName } from "../../apps/agent/src/testing/docker.ts";
import { freePort } from "../../apps/agent/src/testing/net.ts";
import { openDatabase } from "../../apps/control-plane/src/db/database.ts";
import { recordEvent } from "../../apps/control-plane/src/deployments/events.ts";
import { createTestDatabase } from "../../apps/control-plane/src/testing/harness.ts";
import { startTestS3 } from "../../packages/object-storage/src/testing/s3.ts";
import { ApiClient, type ControlPlaneProcess, tail } from "../support/control-plane.ts";
import { SERVING_COMMAND, startCopy as startSharedCopy, waitFor } from "./support.ts";

/** A session's allowance on the copies: no refill worth counting while the file runs. */
const SESSION_LIMIT = 100;

let database: Awaited<ReturnType<typeof createTestDatabase>>;
const copies: ControlPlaneProcess[] = [];
const cleanups: (() => Promise<unknown>)[] = [];

const copySet = { prefix: "ha-local-", copies, cleanups };

function startCopy(name: string): Promise<{ copy: ControlPlaneProcess; api: ApiClient }> {
  return startSharedCopy(
    copySet,
    name,
    {
      PLATFORM_SECRET_KEY: "ha-local-secret-key-0123456789abcdef012",
      RECONCILE_INTERVAL_MS: "1000",
      PLATFORM_SESSION_RATE_LIMIT: `${SESSION_LIMIT}/86400`,
      // The stand-in S3 listens on this machine.
      PLATFORM_OUTBOUND_ALLOW: "127.0.0.0/8",
      PLATFORM_NOTIFICATION_RETRY_MS: "250",
    },
    database,
  );
}

function until(what: string, check: () => Promise<boolean>, timeoutMs = 60_000): Promise<void> {
  return waitFor(copies, what, check, { timeoutMs });
}

interface LogEvent {
  event: string;
  id: string | undefined;
  data: string;
}

/**
 * Follows GET /api/deployment.logs on `baseUrl` (from after `lastEventId`), handing each event to
 * `onEvent` until the `end` event or until the connection breaks (the copy died): answers which.
 */
async function followLog(
  baseUrl: string,
  token: string,
  deploymentId: string,
  onEvent: (event: LogEvent) => void,
  lastEventId?: string,
): Promise<"end" | "broken"> {
  const response = await fetch(
    `${baseUrl}/api/deployment.logs?deploymentId=${encodeURIComponent(deploymentId)}`,
    {
      headers: {
        authorization: `Bearer ${token}`,
        ...(lastEventId ? { "last-event-id": lastEventId } : {}),
      },
      signal: AbortSignal.timeout(120_000),
    },
  );
  if (response.status !== 200 || !response.body) {
    throw new Error(`deployment.logs answered ${response.status}: ${await response.text()}`);
  }
  const decoder = new TextDecoder();
  let buffer = "";
  try {
    for await (const chunk of response.body) {
      buffer += decoder.decode(chunk as Uint8Array, { stream: true }).replaceAll("\r\n", "\n");
      for (let split = buffer.indexOf("\n\n"); split !== -1; split = buffer.indexOf("\n\n")) {
        const block = buffer.slice(0, split);
        buffer = buffer.slice(split + 2);
        const event: LogEvent = { event: "message", id: undefined, data: "" };
        const data: string[] = [];
        for (const line of block.split("\n")) {
          if (line.startsWith("event:")) event.event = line.slice(6).trim();
          else if (line.startsWith("id:")) event.id = line.slice(3).trim();
          else if (line.startsWith("data:")) data.push(line.slice(5).replace(/^ /, ""));
        }
        event.data = data.join("\n");
        onEvent(event);
        if (event.event === "end") return "end";
      }
    }
  } catch {
    return "broken";
  }
  return "broken";
}

let a: ApiClient;
let b: ApiClient;
let first: ControlPlaneProcess;
let ownerToken: string;

beforeAll(async () => {
  await requireDocker();
  database = await createTestDatabase();
  const one = await startCopy("local-a");
  first = one.copy;
  a = one.api;
  b = (await startCopy("local-b")).api;
  const session = await a.mutateOk("auth.register", {
    email: "owner@example.com",
    password: "correct-horse-battery",
    name: "Owner",
  });
  ownerToken = session.token;
  // The polling below goes through an API key: the sessions' allowance is the tests'.
  a.token = session.token;
  const { key } = await a.mutateOk("user.createApiKey", {
    name: "ha",
    metadata: { organizationId: session.user.organizationId },
  });
  a.token = key;
  b.token = key;
}, 180_000);

afterAll(async () => {
  for (const copy of copies) await copy.stop();
  for (const cleanup of cleanups.reverse()) await cleanup().catch(() => {});
  await database?.drop();
}, 120_000);

describe("two control planes on one database, without NATS", () => {
  it("gives a session one rate-limit bucket and an account one login throttle across the copies", async () => {
    const login = (api: ApiClient, password: string) =>
      api.mutate("auth.login", { email: "owner@example.com", password });
    const { token } = (await login(a, "correct-horse-battery")).body as { token: string };
    const clients = [new ApiClient(a.baseUrl), new ApiClient(b.baseUrl)];
    for (const client of clients) client.token = token;
    const answered = [0, 0];
    const refused = [0, 0];
    for (let i = 0; i < SESSION_LIMIT + 20; i++) {
      const status = (await clients[i % 2]!.query("project.all")).status;
      if (status === 200) answered[i % 2]!++;
      else if (status === 429) refused[i % 2]!++;
      else throw new Error(`project.all answered ${status}`);
    }
    // One bucket of SESSION_LIMIT for both copies (one per copy would have answered them all).
    expect(answered[0]! + answered[1]!).toBe(SESSION_LIMIT);
    expect(refused).toEqual([10, 10]);

    // Wrong passwords alternating between the copies: the pair's free attempts are counted once.
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) statuses.push((await login(clients[i % 2]!, `wrong-${i}`)).status);
    expect(statuses).toEqual([401, 401, 401, 401, 401, 429]);
  }, 120_000);

  it("runs a backup schedule firing every second once per tick, whichever copy claims it", async () => {
    const s3 = await startTestS3();
    cleanups.push(() => s3.close());
    const destination = await a.mutateOk("destination.create", {
      name: "Stand-in S3",
      provider: "Minio",
      accessKey: s3.storage.accessKey,
      secretAccessKey: s3.storage.secretAccessKey,
      bucket: s3.storage.bucket,
      region: "us-east-1",
      endpoint: s3.endpoint,
    });
    // The control plane's own backup: run by the copy itself, through no agent.
    const backup = await b.mutateOk("backup.create", {
      schedule: "* * * * * *",
      enabled: true,
      prefix: "ha/web-server",
      destinationId: destination.destinationId,
      database: "",
      databaseType: "web-server",
    });
    const runs = () =>
      b.queryOk<{ status: string; createdAt: string; errorMessage: string | null }[]>(
        "deployment.allByType",
        {
          id: backup.backupId,
          type: "backup",
        },
      );
    await until(
      "three backup runs ended",
      async () => (await runs()).filter((r) => r.status === "done" || r.status === "error").length >= 3,
    );
    await a.mutateOk("backup.update", { backupId: backup.backupId, enabled: false });
    await until("no backup run going", async () =>
      (await runs()).every((r) => r.status === "done" || r.status === "error"),
    );
    const all = await runs();
    // One run per tick: no second holds two runs' starts, whichever copies fired it.
    const ticks = all.map((run) => Math.round(new Date(run.createdAt).getTime() / 1000));
    expect(new Set(ticks).size, JSON.stringify(all)).toBe(ticks.length);
    expect(all.filter((run) => run.status !== "done")).toEqual([]);
  }, 120_000);

  it("finishes on the other copy a deployment whose copy was killed, and its log stream resumes there", async () => {
    const { environmentId } = (await a.mutateOk("project.create", { name: "HA" })).environment;
    const appName = uniqueName("ha-local");
    const application = await a.mutateOk("application.create", { name: appName, appName, environmentId });
    cleanups.push(() => dockerCli(["service", "rm", appName]));
    const { applicationId } = application;
    await a.mutateOk("application.saveDockerProvider", { applicationId, dockerImage: TEST_IMAGE });
    await a.mutateOk("application.update", { applicationId, command: SERVING_COMMAND });
    await a.mutateOk("port.create", {
      applicationId,
      publishedPort: await freePort(),
      targetPort: 8080,
      publishMode: "host",
    });
    await a.mutateOk("application.deploy", { applicationId });
    let deploymentId = "";
    await until("the deployment running", async () => {
      const all = await b.queryOk<{ deploymentId: string; status: string }[]>("deployment.all", {
        applicationId,
      });
      deploymentId = all.find((d) => d.status === "running")?.deploymentId ?? "";
      return deploymentId !== "";
    });

    // Follow the log on the copy running it, until it is killed.
    const received: LogEvent[] = [];
    const onFirst = followLog(first.url, ownerToken, deploymentId, (event) => received.push(event));
    await until("a line followed on copy A", async () => received.some((e) => e.event === "log"));
    first.child.kill("SIGKILL");
    expect(await onFirst).toBe("broken");
    const lastId = received.filter((e) => e.event === "log").at(-1)!.id;
    expect(lastId).toBeDefined();

    // Resumed on copy B with Last-Event-ID: the rest of the log, then its end.
    const resumed: LogEvent[] = [];
    expect(await followLog(b.baseUrl, ownerToken, deploymentId, (event) => resumed.push(event), lastId)).toBe(
      "end",
    );
    const end = JSON.parse(resumed.at(-1)!.data) as { status: string };
    expect(end.status, copies.map((c) => tail(c.output, 30)).join("\n---\n")).toBe("done");

    const all = await b.queryOk<{ status: string; logs: string }[]>("deployment.all", { applicationId });
    expect(all.map((d) => d.status)).toEqual(["done"]);
    // No line twice across the two connections, and every line of the log was received: the
    // lines of copy A's stream, then copy B's from after the last one A sent.
    const lines = [...received, ...resumed].filter((e) => e.event === "log");
    expect(new Set(lines.map((e) => e.id)).size).toBe(lines.length);
    const got = new Set(lines.map((e) => e.data));
    const logLines = all[0]!.logs.split("\n").filter((line) => line !== "" && !line.startsWith("["));
    expect(logLines.length).toBeGreaterThan(0);
    expect(logLines.filter((line) => !got.has(line))).toEqual([]);
    expect(resumed.filter((e) => e.event === "log").length).toBeGreaterThan(0);
  }, 180_000);

  it("delivers on another copy a notification whose delivering copy was killed, once", async () => {
    // Copy A is gone (the test above): a third copy beside B.
    const c = (await startCopy("local-c")).api;
    c.token = b.token;
    let hold = true;
    const delivered: string[] = [];
    const held: ServerResponse[] = [];
    const receiver = createServer((request: IncomingMessage, response: ServerResponse) => {
      let body = "";
      request.on("data", (chunk) => {
        body += chunk;
      });
      request.on("end", () => {
        if (hold) return void held.push(response);
        delivered.push(JSON.parse(body).data.message);
        response.writeHead(200).end("ok");
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
    cleanups.push(async () => {
      for (const response of held) response.destroy();
      receiver.closeAllConnections();
      receiver.close();
    });
    const port = (receiver.address() as { port: number }).port;
    const channel = await b.mutateOk("notification.createCustom", {
      name: "receiver",
      appDeploy: true,
      endpoint: `http://127.0.0.1:${port}/hook`,
    });
    const db = await openDatabase(database.target);
    cleanups.push(() => db.close());
    const { organizationId } = await db.db
      .selectFrom("organizations")
      .select("organizationId")
      .executeTakeFirstOrThrow();
    await recordEvent(
      db.db,
      {
        organizationId,
        kind: "appDeploy",
        applicationId: null,
        payload: { applicationName: "web", status: "success", message: "ha delivery" },
      },
      new Date(),
    );
    await until("the delivery held by the receiver", async () => held.length > 0);
    const row = () =>
      db.db
        .selectFrom("notificationDeliveries")
        .select(["status", "attempts", "leaseOwner"])
        .where("notificationId", "=", channel.notificationId)
        .executeTakeFirstOrThrow();
    const holder = (await row()).leaseOwner;
    expect(["local-b", "local-c"]).toContain(holder);
    // copies: local-a, local-b, local-c, in the order they started.
    const holding = copies[holder === "local-b" ? 1 : 2]!;
    holding.child.kill("SIGKILL");
    for (const response of held.splice(0)) response.destroy();
    hold = false;
    await until(
      "the delivery made by the other copy",
      async () => (await row()).status === "delivered",
      90_000,
    );
    expect(delivered).toEqual(["ha delivery"]);
    expect((await row()).attempts).toBe(2);
  }, 150_000);
});
