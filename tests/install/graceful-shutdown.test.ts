/**
 * A copy of the control plane stopped by SIGTERM (what Swarm sends the old copy once the new one
 * is healthy, install.sh --upgrade) loses no request: it stops accepting connections, closes its
 * idle keep-alive connections, answers the request it is in the middle of (with
 * `connection: close`, so that no further request comes on that connection), and exits 0.
 * The control plane runs as `npm start` runs it (dist/control-plane/main.js) on a fresh database.
 */
import { execFileSync } from "node:child_process";
import net from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ControlPlaneProcess, startControlPlaneProcess, tail } from "../support/control-plane.ts";
import { eventually, repoRoot } from "./stack-fixtures.ts";

let controlPlane: ControlPlaneProcess;
let port: number;

/** A raw connection and everything it received so far. */
async function open(): Promise<{ socket: net.Socket; received: () => string; closed: Promise<void> }> {
  const socket = net.connect(port, "127.0.0.1");
  await new Promise<void>((resolve, reject) => {
    socket.once("connect", resolve);
    socket.once("error", reject);
  });
  let text = "";
  socket.setEncoding("utf8");
  socket.on("data", (chunk) => (text += chunk));
  const closed = new Promise<void>((resolve) => socket.once("close", () => resolve()));
  return { socket, received: () => text, closed };
}

/** Whether a new connection to the port is refused. */
function refused(): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, "127.0.0.1");
    socket.once("connect", () => {
      socket.destroy();
      resolve(false);
    });
    socket.once("error", (error: NodeJS.ErrnoException) => resolve(error.code === "ECONNREFUSED"));
  });
}

beforeAll(async () => {
  execFileSync("node", ["scripts/build.mjs", "--if-stale"], { cwd: repoRoot, stdio: "ignore" });
  controlPlane = await startControlPlaneProcess({});
  port = Number(new URL(controlPlane.url).port);
}, 300_000);

afterAll(async () => {
  await controlPlane?.stop();
}, 60_000);

describe("the control plane on SIGTERM", () => {
  it("stops accepting, closes idle connections, finishes the request in flight and exits 0", async () => {
    // A keep-alive connection that answered once and is idle now.
    const idle = await open();
    idle.socket.write("GET /health/live HTTP/1.1\r\nHost: control-plane\r\n\r\n");
    await eventually(
      async () => expect(idle.received()).toMatch(/"status":"ok"/),
      10_000,
      "the first answer",
    );
    expect(idle.received()).not.toMatch(/connection: close/i);

    // A request in flight: its headers and half of its body are there when SIGTERM comes.
    const body = JSON.stringify({ email: "nobody@example.com", password: "not-the-password" });
    const inFlight = await open();
    inFlight.socket.write(
      `POST /api/auth.login HTTP/1.1\r\nHost: control-plane\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body.slice(0, 10)}`,
    );
    await new Promise((resolve) => setTimeout(resolve, 300));
    const exited = new Promise<number | null>((resolve) =>
      controlPlane.child.once("exit", (code) => resolve(code)),
    );
    controlPlane.child.kill("SIGTERM");

    await eventually(async () => expect(await refused()).toBe(true), 10_000, "new connections refused");
    await idle.closed;
    expect(controlPlane.child.exitCode, tail(controlPlane.output)).toBeNull();

    inFlight.socket.write(body.slice(10));
    await inFlight.closed;
    const answer = inFlight.received();
    expect(answer, tail(controlPlane.output)).toMatch(/^HTTP\/1\.1 (200|401) /);
    expect(answer).toMatch(/^connection: close\r$/im);
    expect(answer).toMatch(/\r\n\r\n\{.*\}$/s);

    expect(await exited, tail(controlPlane.output)).toBe(0);
  }, 120_000);
});
