/**
 * Fault injection for the notification outbox (issue 24): a real control plane process delivers
 * events to a Custom channel's receiver on 127.0.0.1 that this test owns.
 * - Killed with SIGKILL while a delivery is in flight (the receiver holds the request), the
 *   restarted process (same instance id: same host and port) drops its old lease and delivers
 *   the event: one answered delivery, the row `delivered`.
 * - A receiver that is down (connection refused) is retried with backoff and gets the event,
 *   once, when it listens again.
 * Events are written with recordEvent, as every emitter writes them (their transactions are
 * covered by the unit tests).
 */

import { mkdtemp, rm } from "node:fs/promises";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort } from "../../apps/agent/src/testing/net.ts";
import { type OpenDatabase, openDatabase } from "../../apps/control-plane/src/db/database.ts";
import { recordEvent } from "../../apps/control-plane/src/deployments/events.ts";
import { createTestDatabase } from "../../apps/control-plane/src/testing/harness.ts";
import { ApiClient, tail } from "../support/control-plane.ts";
import { RestartableControlPlane } from "./deploy-harness.ts";

type Mode = "hold" | "up";
let mode: Mode = "up";
/** Requests answered 200, by the event's message. */
const delivered: string[] = [];
/** Requests held open (mode "hold"). */
const held: ServerResponse[] = [];
const receiver = createServer((request: IncomingMessage, response: ServerResponse) => {
  let body = "";
  request.on("data", (chunk) => {
    body += chunk;
  });
  request.on("end", () => {
    if (mode === "hold") {
      held.push(response);
      return;
    }
    delivered.push(JSON.parse(body).data.message);
    response.writeHead(200).end("ok");
  });
});
let receiverPort = 0;
const listen = () => new Promise<void>((resolve) => receiver.listen(receiverPort, "127.0.0.1", resolve));

let controlPlane: RestartableControlPlane;
let database: { drop: () => Promise<void> };
let db: OpenDatabase;
let dataDir = "";
let api: ApiClient;
let organizationId = "";
let notificationId = "";

async function until<T>(
  what: string,
  check: () => Promise<T | undefined> | T | undefined,
  timeoutMs = 20_000,
) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline)
      throw new Error(`timed out waiting for ${what}:\n${tail(controlPlane.output)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

const delivery = (message: string) =>
  db.db
    .selectFrom("notificationDeliveries as d")
    .innerJoin("events", "events.eventId", "d.eventId")
    .select(["d.status", "d.attempts", "d.lastError"])
    .where("d.notificationId", "=", notificationId)
    .where(({ eb, ref }) => eb(ref("events.payload", "->>").key("message" as never), "=", message))
    .executeTakeFirst();

const emit = (message: string) =>
  recordEvent(
    db.db,
    {
      organizationId,
      kind: "appDeploy",
      applicationId: null,
      payload: { applicationName: "web", status: "success", message },
    },
    new Date(),
  );

beforeAll(async () => {
  await listen();
  receiverPort = (receiver.address() as { port: number }).port;
  const created = await createTestDatabase();
  database = created;
  db = await openDatabase(created.target);
  dataDir = await mkdtemp(path.join(tmpdir(), "notif-faults-"));
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  controlPlane = new RestartableControlPlane(url, {
    PATH: process.env.PATH,
    PORT: String(port),
    HOST: "127.0.0.1",
    PLATFORM_URL: url,
    PLATFORM_DATA_DIR: dataDir,
    DATABASE_URL: created.target.url,
    LOG_LEVEL: "warn",
    PLATFORM_LOCAL_PROXY: "false",
    PLATFORM_OUTBOUND_ALLOW: "127.0.0.0/8",
    PLATFORM_NOTIFICATION_RETRY_MS: "250",
  });
  await controlPlane.start();
  api = new ApiClient(url);
  const session = await api.mutateOk("auth.register", {
    email: "owner@example.com",
    password: "correct-horse-battery",
    name: "Owner",
  });
  api.token = session.token;
  organizationId = session.user.organizationId;
  const channel = await api.mutateOk("notification.createCustom", {
    name: "receiver",
    appDeploy: true,
    endpoint: `http://127.0.0.1:${receiverPort}/hook`,
  });
  notificationId = channel.notificationId;
}, 90_000);

afterAll(async () => {
  for (const response of held) response.destroy();
  await controlPlane?.stop("SIGKILL");
  await db?.close();
  await database?.drop();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
  receiver.closeAllConnections();
  receiver.close();
}, 30_000);

describe("notification outbox faults", () => {
  it("a control plane killed -9 mid-delivery delivers the event after its restart, once", async () => {
    mode = "hold";
    await emit("killed mid-delivery");
    await until("the delivery to reach the receiver", () => (held.length > 0 ? true : undefined));
    await controlPlane.stop("SIGKILL");
    for (const response of held.splice(0)) response.destroy();
    expect(await delivery("killed mid-delivery")).toMatchObject({ status: "pending", attempts: 1 });

    mode = "up";
    await controlPlane.start();
    const row = await until("the delivery to be marked delivered", async () => {
      const current = await delivery("killed mid-delivery");
      return current?.status === "delivered" ? current : undefined;
    });
    expect(row.attempts).toBe(2);
    expect(delivered.filter((m) => m === "killed mid-delivery")).toHaveLength(1);
  }, 60_000);

  it("a receiver that is down gets the event when it listens again, once", async () => {
    receiver.closeAllConnections();
    await new Promise<void>((resolve) => receiver.close(() => resolve()));
    await emit("receiver was down");
    const failing = await until("retries against the refused connection", async () => {
      const current = await delivery("receiver was down");
      return current && current.attempts >= 3 ? current : undefined;
    });
    expect(failing.status).toBe("pending");
    expect(failing.lastError).toContain("connection refused");

    await listen();
    await until("the delivery to be marked delivered", async () => {
      const current = await delivery("receiver was down");
      return current?.status === "delivered" ? current : undefined;
    });
    expect(delivered.filter((m) => m === "receiver was down")).toHaveLength(1);
  }, 60_000);
});
