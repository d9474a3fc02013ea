/**
 * Test helper: a private nats-server (/usr/sbin/nats-server) with a custom configuration on a
 * spare port of 127.0.0.1, which a test can stop and start again (to cut the agent off NATS).
 * With `jetstream`, JetStream is on, storing in the server's own temporary directory.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { connect as tcpConnect } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { freePort } from "./net.ts";

export const NATS_SERVER_BINARY = process.env.NATS_SERVER_BIN ?? "/usr/sbin/nats-server";

function portOpen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = tcpConnect({ host: "127.0.0.1", port });
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}

export class TestNatsServer {
  private process: ChildProcess | undefined;
  private constructor(
    readonly port: number,
    private readonly directory: string,
    readonly configFile: string,
  ) {}

  get url(): string {
    return `nats://127.0.0.1:${this.port}`;
  }

  /** Writes `config` (nats-server syntax, without `listen`) and starts the server. */
  static async start(config: string, options: { jetstream?: boolean } = {}): Promise<TestNatsServer> {
    const port = await freePort();
    const directory = await mkdtemp(path.join(tmpdir(), "agent-nats-"));
    const configFile = path.join(directory, "nats.conf");
    const jetstream = options.jetstream
      ? `jetstream: { store_dir: ${JSON.stringify(path.join(directory, "jetstream"))} }\n`
      : "";
    await writeFile(configFile, `listen: "127.0.0.1:${port}"\n${jetstream}${config}\n`);
    const server = new TestNatsServer(port, directory, configFile);
    await server.resume();
    return server;
  }

  /**
   * (Re)starts the server process on the same port and waits until it accepts connections; a
   * no-op while it runs (a second process would find the port open, be taken for the server and
   * leave the first one running after stop()).
   */
  async resume(): Promise<void> {
    if (this.process && this.process.exitCode === null && this.process.signalCode === null) return;
    const child = spawn(NATS_SERVER_BINARY, ["-c", this.configFile], { stdio: ["ignore", "ignore", "pipe"] });
    let stderr = "";
    child.stderr?.on("data", (chunk) => {
      stderr += chunk;
    });
    const spawnError = new Promise<Error>((resolve) => child.once("error", resolve));
    this.process = child;
    for (let attempt = 0; attempt < 100; attempt++) {
      if (await portOpen(this.port)) return;
      if (child.exitCode !== null) throw new Error(`nats-server exited: ${stderr}`);
      const failed = await Promise.race([spawnError, new Promise((resolve) => setTimeout(resolve, 100))]);
      if (failed instanceof Error) throw new Error(`cannot run ${NATS_SERVER_BINARY}: ${failed.message}`);
    }
    throw new Error(`nats-server did not listen on ${this.port}: ${stderr}`);
  }

  /** Stops the server process (the configuration stays for resume()). */
  async pause(): Promise<void> {
    const child = this.process;
    this.process = undefined;
    if (!child || child.exitCode !== null) return;
    const exited = new Promise((resolve) => child.once("exit", resolve));
    child.kill("SIGTERM");
    await exited;
  }

  async stop(): Promise<void> {
    await this.pause();
    await rm(this.directory, { recursive: true, force: true });
  }
}
