/**
 * Fault-test support: a TCP proxy on a spare port of 127.0.0.1 in front of a real server
 * (Postgres), which the test can cut and restore. `cut()` stops listening (new connections are
 * refused, as from a stopped server) and destroys every open connection (the server "went
 * away"); `restore()` listens again on the same port. `hold()` keeps the bytes clients send from
 * reaching the server (they are dropped at the next cut), so a test can cut while a query is
 * provably in flight. `stallAfter(bytes)` lets that many bytes of the servers' answers through
 * and then holds the rest (a download provably half-way) until `release()`.
 */
import { createServer, type Server, type Socket, connect as tcpConnect } from "node:net";
import { freePort } from "../../apps/agent/src/testing/net.ts";

export class TcpProxy {
  private server: Server | undefined;
  private readonly sockets = new Set<Socket>();
  private holding = false;
  /** Client chunks kept back since hold(). */
  private held = 0;
  private target: { host: string; port: number } | undefined;
  /** Server bytes still let through before the answers stall; undefined: not stalling. */
  private allowance: number | undefined;
  private readonly stalled: Array<() => void> = [];

  private constructor(readonly port: number) {}

  static async start(): Promise<TcpProxy> {
    const proxy = new TcpProxy(await freePort());
    await proxy.restore();
    return proxy;
  }

  /** Where connections go; set before the first client connects. */
  forwardTo(host: string, port: number): void {
    this.target = { host, port };
  }

  /** `url` with its host and port replaced by the proxy's, forwarding to the original ones. */
  proxiedUrl(url: string): string {
    const parsed = new URL(url);
    this.forwardTo(parsed.hostname, Number(parsed.port || 5432));
    parsed.host = `127.0.0.1:${this.port}`;
    return parsed.toString();
  }

  get connections(): number {
    return this.sockets.size / 2;
  }

  /** Chunks sent by clients since hold() and not forwarded. */
  get heldChunks(): number {
    return this.held;
  }

  hold(): void {
    this.holding = true;
    this.held = 0;
  }

  /** Lets `bytes` more bytes of the servers' answers through, then holds the rest. */
  stallAfter(bytes: number): void {
    this.allowance = bytes;
  }

  /** True once an answer is held by stallAfter. */
  get stalling(): boolean {
    return this.stalled.length > 0;
  }

  /** Lets the held answers go on. */
  release(): void {
    this.allowance = undefined;
    for (const resume of this.stalled.splice(0)) resume();
  }

  async cut(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    const closed = server ? new Promise((resolve) => server.close(resolve)) : Promise.resolve();
    for (const socket of this.sockets) socket.destroy();
    this.sockets.clear();
    this.holding = false;
    this.allowance = undefined;
    this.stalled.length = 0;
    await closed;
  }

  async restore(): Promise<void> {
    if (this.server) return;
    const server = createServer((client) => this.accept(client));
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(this.port, "127.0.0.1", () => resolve());
    });
    this.server = server;
  }

  async close(): Promise<void> {
    await this.cut();
  }

  private accept(client: Socket): void {
    if (!this.target) {
      client.destroy();
      return;
    }
    const upstream = tcpConnect(this.target);
    this.sockets.add(client);
    this.sockets.add(upstream);
    const drop = () => {
      client.destroy();
      upstream.destroy();
      this.sockets.delete(client);
      this.sockets.delete(upstream);
    };
    client.on("error", drop);
    upstream.on("error", drop);
    client.on("close", drop);
    upstream.on("close", drop);
    client.on("data", (chunk) => {
      if (this.holding) this.held++;
      else upstream.write(chunk);
    });
    upstream.on("data", (chunk: Buffer) => {
      if (this.allowance === undefined) return void client.write(chunk);
      const passed = chunk.subarray(0, Math.max(0, this.allowance));
      this.allowance -= passed.length;
      if (passed.length > 0) client.write(passed);
      if (passed.length === chunk.length) return;
      upstream.pause();
      this.stalled.push(() => {
        client.write(chunk.subarray(passed.length));
        upstream.resume();
      });
    });
  }
}
