/**
 * The NATS cluster install.sh deploys on a Swarm with three managers (deploy/stack-nats-cluster.yml
 * over deploy/stack.yml), run for real without such a Swarm: the three servers as containers of
 * the stack's NATS image on one network, under their service names (nats, nats-2, nats-3), each
 * with the generated operator configuration (apps/control-plane/bin/nats-keys.mjs, as install.sh
 * makes the nats-conf secret) at /run/secrets/nats-conf and the command line of the file. They
 * form one JetStream cluster: the control plane's credentials create a stream of three replicas,
 * one on each server, and JetStream keeps answering with one server stopped.
 */
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { chmod, mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { connect, credsAuthenticator, type NatsConnection } from "../../packages/agent-protocol/src/index.ts";
import { built, docker, eventually, repoRoot } from "./stack-fixtures.ts";

const id = randomBytes(4).toString("hex");
const network = `platform-nats-cluster-test-${id}`;
const SERVERS = ["nats", "nats-2", "nats-3"] as const;
const container = (server: string) => `${network}-${server}`;

let directory: string;
let image: string;
const monitoring: Record<string, number> = {};
const clientPorts: Record<string, number> = {};
let connection: NatsConnection | undefined;

/** The published host port of a container's port. */
async function hostPort(name: string, port: number): Promise<number> {
  const answer = await docker("port", name, `${port}/tcp`);
  return Number(answer.split("\n")[0]!.split(":").at(-1));
}

async function monitor(server: string, endpoint: string): Promise<any> {
  const response = await fetch(`http://127.0.0.1:${monitoring[server]}/${endpoint}`);
  return response.json();
}

beforeAll(async () => {
  image = built("build-stack-images.sh").split(" ")[1]!;
  directory = await mkdtemp(path.join(tmpdir(), "platform-nats-cluster-test-"));
  execFileSync("node", [path.join(repoRoot, "apps/control-plane/bin/nats-keys.mjs"), directory], {
    cwd: repoRoot,
    stdio: ["ignore", "ignore", "inherit"],
  });
  await chmod(path.join(directory, "nats.conf"), 0o644);
  const cluster = parse(await readFile(path.join(repoRoot, "deploy/stack-nats-cluster.yml"), "utf8"));
  await docker("network", "create", network);
  for (const server of SERVERS) {
    const command: string[] = cluster.services[server].command;
    await docker(
      "run",
      "-d",
      "--name",
      container(server),
      "--network",
      network,
      "--network-alias",
      server,
      "-v",
      `${path.join(directory, "nats.conf")}:/run/secrets/nats-conf:ro`,
      "-p",
      "127.0.0.1::8222",
      "-p",
      "127.0.0.1::4222",
      image,
      ...command,
    );
    monitoring[server] = await hostPort(container(server), 8222);
    clientPorts[server] = await hostPort(container(server), 4222);
  }
}, 600_000);

afterAll(async () => {
  await connection?.close().catch(() => {});
  for (const server of SERVERS) await docker("rm", "-f", container(server)).catch(() => "");
  await docker("network", "rm", network).catch(() => "");
  if (directory) await rm(directory, { recursive: true, force: true });
}, 120_000);

describe("NATS as deploy/stack-nats-cluster.yml runs it", () => {
  it("forms one JetStream cluster of the three servers", async () => {
    for (const server of SERVERS) {
      await eventually(
        async () => {
          const routes = await monitor(server, "routez");
          expect(new Set(routes.routes.map((route: { remote_name: string }) => route.remote_name)).size).toBe(
            2,
          );
          const jetstream = await monitor(server, "jsz");
          expect(jetstream.meta_cluster).toMatchObject({ name: "platform", cluster_size: 3 });
          expect(jetstream.meta_cluster.leader).toMatch(/^nats-[123]$/);
        },
        60_000,
        `the cluster seen from ${server}`,
      );
    }
  }, 120_000);

  it("takes a stream of three replicas from the control plane's credentials, and keeps it with one server stopped", async () => {
    const creds = await readFile(path.join(directory, "control-plane.creds"));
    connection = await connect({
      servers: `nats://127.0.0.1:${clientPorts.nats}`,
      authenticator: credsAuthenticator(creds),
    });
    const api = async (subject: string, body: unknown) => {
      const answer = await connection!.request(`$JS.API.${subject}`, JSON.stringify(body), {
        timeout: 10_000,
      });
      return answer.json<any>();
    };
    const created = await eventually(
      async () => {
        const answer = await api("STREAM.CREATE.CLUSTERTEST", {
          name: "CLUSTERTEST",
          subjects: ["clustertest.>"],
          storage: "file",
          num_replicas: 3,
        });
        expect(answer.error).toBeUndefined();
        return answer;
      },
      30_000,
      "a stream of three replicas",
    );
    const placed = [created.cluster.leader, ...created.cluster.replicas.map((replica: any) => replica.name)];
    expect(placed.sort()).toEqual(["nats-1", "nats-2", "nats-3"]);
    const published = await connection.request("clustertest.one", "kept", { timeout: 10_000 });
    expect(published.json<any>()).toMatchObject({ stream: "CLUSTERTEST", seq: 1 });

    // One server stopped (not the one this client is connected to): the other two keep the stream.
    await docker("stop", "-t", "1", container("nats-3"));
    // (a write that timed out may still have been stored: the last acknowledged one counts)
    const acknowledged = await eventually(
      async () => {
        const answer = await connection!.request("clustertest.two", "still", { timeout: 5_000 });
        const ack = answer.json<any>();
        expect(ack).toMatchObject({ stream: "CLUSTERTEST", seq: expect.any(Number) });
        return ack.seq as number;
      },
      60_000,
      "a write with nats-3 stopped",
    );
    expect(acknowledged).toBeGreaterThanOrEqual(2);
    const info = await api("STREAM.INFO.CLUSTERTEST", {});
    expect(info.state.messages).toBe(acknowledged);
  }, 180_000);
});
