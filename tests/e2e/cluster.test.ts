/**
 * A real multi-node Swarm on this machine (issue 30): three extra Docker Engines, each in its own
 * network namespace with its own data root (scripts/test-cluster.sh), each with its own agent.
 * Engine a is the manager (swarm init, as server.setup does); b and c join it through
 * cluster.addWorker {joinServerId}, the token never answered or logged (c leaves the Swarm of
 * its own first). Then: an application deployed through the platform with 3 replicas placed on the
 * workers (placementSwarm) answers from every replica, by name from a container on another node
 * over the platform overlay (dnsrr: this kernel has no IPVS) and through the manager's proxy on
 * its host-mode port (no Bad Gateway for replicas on workers), a line a replica on a worker prints
 * reaches application.readLogs and GET /api/runtime.logs, a worker is cleaned by its own
 * agent, drain moves tasks, labels, a node killed (dockerd and agent) during a deployment
 * has its tasks rescheduled and shows down with the time it was last seen, the deployment
 * settles as Docker shows it (done or failed), and the node comes back.
 * The host's own engine is never touched. The engines are removed whatever happens.
 */
import { execFile } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { type RunningAgent, startAgent } from "../../apps/agent/src/agent.ts";
import { freePort } from "../../apps/agent/src/testing/net.ts";
import { insertTestServer, listen } from "../../apps/control-plane/src/agents/testing/agents.ts";
import { createUserDirectly } from "../../apps/control-plane/src/projects/test-support.ts";
import { ensureProxyOn } from "../../apps/control-plane/src/proxy/proxy-service.ts";
import {
  type Session,
  startTestPlatform,
  type TestPlatform,
} from "../../apps/control-plane/src/testing/harness.ts";

const run = promisify(execFile);
const script = path.resolve(import.meta.dirname, "../../scripts/test-cluster.sh");
const ENGINES = ["a", "b", "c"] as const;
type Engine = (typeof ENGINES)[number];
const socket = (engine: Engine) => `/run/pcl/${engine}/docker.sock`;
const address = (engine: Engine) => `10.231.0.${ENGINES.indexOf(engine) + 2}`;
const IMAGE = "platform-test/busybox:latest";
const CLIENT = "platform-test/netclient:latest";
const ROUTER_IMAGE = "platform-test/traefik-router:latest";
const HEARTBEAT_MS = 300;

async function cluster(...args: string[]) {
  await run("bash", [script, ...args], { timeout: 120_000 });
}
async function docker(engine: Engine, args: string[]): Promise<string> {
  const { stdout } = await run("docker", ["-H", `unix://${socket(engine)}`, ...args], { timeout: 60_000 });
  return stdout.trim();
}

let platform: TestPlatform;
let owner: Session;
let other: Session;
const servers = {} as Record<Engine, string>;
const agents = {} as Partial<Record<Engine, RunningAgent>>;
const directories: string[] = [];
const as = () => ({ token: owner.token });
let appName: string;
let applicationId: string;

async function startNodeAgent(engine: Engine) {
  const mainDirectory = await mkdtemp(path.join(tmpdir(), `cluster-${engine}-`));
  directories.push(mainDirectory);
  agents[engine] = await startAgent({
    serverId: servers[engine],
    transport: platform.ctx.agents.client.transport,
    dockerSocket: socket(engine),
    mainDirectory,
    heartbeatIntervalMs: HEARTBEAT_MS,
    metricsListenHost: "127.0.0.1",
  });
}

interface Node {
  ID: string;
  Description: { Hostname: string };
  Spec: { Role: string; Availability: string; Labels: Record<string, string> };
  Status: { State: string };
  platform: { serverId: string; agentOnline: boolean; lastSeenAt: string | null } | null;
}

async function nodes(): Promise<Node[]> {
  const response = await platform.query("cluster.getNodes", { serverId: servers.a }, as());
  expect(response.status, JSON.stringify(response.body)).toBe(200);
  return response.body;
}
const nodeOf = async (engine: Engine) =>
  (await nodes()).find((node) => node.Description.Hostname === `node-${engine}`) as Node;

/** The hostnames of the nodes running a task of `service` now. */
async function taskNodes(service: string): Promise<string[]> {
  const out = await docker("a", [
    "service",
    "ps",
    service,
    "--filter",
    "desired-state=running",
    "--format",
    "{{.Node}} {{.CurrentState}}",
  ]);
  return out
    .split("\n")
    .filter((line) => /\sRunning /.test(line))
    .map((line) => line.split(" ")[0] ?? "")
    .sort();
}

beforeAll(async () => {
  // The manager's proxy runs the routing stand-in (no Traefik image here); rebuilt only when stale.
  await run("bash", [path.resolve(import.meta.dirname, "../../scripts/build-traefik-router-image.sh")], {
    timeout: 300_000,
  });
  await cluster("down");
  await cluster("up", ...ENGINES);
  await docker("a", ["swarm", "init", "--advertise-addr", address("a"), "--dispatcher-heartbeat", "1s"]);
  // c was set up as a server of its own (server.setup initialises a single-node Swarm): joining
  // makes it leave that Swarm first.
  await docker("c", ["swarm", "init", "--advertise-addr", address("c")]);
  platform = await startTestPlatform(
    // The worker's /metrics is read on 127.0.0.1 (its agent runs in this process).
    { PLATFORM_OUTBOUND_ALLOW: "127.0.0.0/8" },
    { agents: { localAgent: false, heartbeatTimeoutMs: 2000, heartbeatWriteIntervalMs: 100 } },
  );
  owner = await platform.registerOwner();
  for (const engine of ENGINES) {
    servers[engine] = await insertTestServer(platform, owner.user.organizationId, `node-${engine}`);
    await platform.ctx.db
      .updateTable("servers")
      .set({ ipAddress: address(engine), enrolledAt: new Date().toISOString() })
      .where("serverId", "=", servers[engine])
      .execute();
    await startNodeAgent(engine);
  }
  other = await createUserDirectly(platform, { email: "other@example.com" });
}, 480_000);

afterAll(async () => {
  for (const agent of Object.values(agents)) await agent?.stop().catch(() => {});
  await platform?.close().catch(() => {});
  await cluster("down");
  for (const directory of directories) await rm(directory, { recursive: true, force: true });
}, 120_000);

describe("a Swarm of three engines driven through cluster.*", () => {
  it("lists the manager's one node, and the join command for an unmanaged machine", async () => {
    const [node] = await nodes();
    expect(node).toMatchObject({
      Description: { Hostname: "node-a" },
      Spec: { Role: "manager", Availability: "active" },
      Status: { State: "ready" },
      ManagerStatus: { Leader: true },
    });
    const join = await platform.query("cluster.addWorker", { serverId: servers.a }, as());
    expect(join.body).toEqual({
      command: expect.stringMatching(/^docker swarm join --token SWMTKN-\S+ 10\.231\.0\.2:2377$/),
      version: expect.any(String),
    });
  });

  it("joins two servers through their agents without answering or logging the token", async () => {
    const token = await docker("a", ["swarm", "join-token", "-q", "worker"]);
    for (const engine of ["b", "c"] as const) {
      const response = await platform.query(
        "cluster.addWorker",
        { serverId: servers.a, joinServerId: servers[engine] },
        as(),
      );
      expect(response.status, JSON.stringify(response.body)).toBe(200);
      expect(response.body).toEqual({
        command: null,
        version: expect.any(String),
        nodeId: expect.any(String),
      });
    }
    expect(platform.logLines.join("\n")).not.toContain(token);
    expect(platform.logLines.join("\n")).not.toContain("SWMTKN");
    const listed = await nodes();
    expect(listed.map((node) => [node.Description.Hostname, node.Spec.Role])).toEqual([
      ["node-a", "manager"],
      ["node-b", "worker"],
      ["node-c", "worker"],
    ]);
    expect((await nodeOf("b")).platform).toEqual({
      serverId: servers.b,
      name: "node-b",
      agentOnline: true,
      lastSeenAt: expect.any(String),
    });
    expect((await nodeOf("b")).Spec.Labels).toEqual({
      "platform.server": servers.b,
      "platform.organization": owner.user.organizationId,
    });
  }, 120_000);

  it("asking again for a joined server answers its node and puts back labels a crash left out", async () => {
    const { ID } = await nodeOf("b");
    // What a control plane killed between the join and the labelling leaves: a node without them.
    await docker("a", [
      "node",
      "update",
      "--label-rm",
      "platform.server",
      "--label-rm",
      "platform.organization",
      ID,
    ]);
    expect((await nodeOf("b")).platform).toBeNull();
    const again = await platform.query(
      "cluster.addWorker",
      { serverId: servers.a, joinServerId: servers.b },
      as(),
    );
    expect(again.status, JSON.stringify(again.body)).toBe(200);
    expect(again.body).toMatchObject({ command: null, nodeId: ID });
    expect((await nodeOf("b")).platform).toMatchObject({ serverId: servers.b });
    expect((await nodes()).filter((node) => node.Description.Hostname === "node-b")).toHaveLength(1);
  });

  it("cleans a worker through its own agent (cleanup is per node, not only on the manager)", async () => {
    await docker("b", ["create", "--name", "leftover", IMAGE, "true"]);
    const cleaned = await platform.mutate("settings.cleanStoppedContainers", { serverId: servers.b }, as());
    expect(cleaned.status, JSON.stringify(cleaned.body)).toBe(200);
    expect(await docker("b", ["ps", "-a", "--filter", "name=leftover", "--format", "{{.Names}}"])).toBe("");
  });

  it("collects and serves a worker's metrics through its own agent", async () => {
    const port = await freePort();
    const token = "cluster-metrics-token";
    const setup = await platform.mutate(
      "server.setupMonitoring",
      {
        serverId: servers.b,
        metricsConfig: {
          server: {
            refreshRate: 2,
            port,
            token,
            urlCallback: "http://127.0.0.1:9/threshold",
            retentionDays: 1,
            cronJob: "0 3 * * *",
            thresholds: { cpu: 0, memory: 0 },
          },
          containers: { refreshRate: 2, services: { include: [] } },
        },
      },
      as(),
    );
    expect(setup.status, JSON.stringify(setup.body)).toBe(200);
    const input = encodeURIComponent(
      JSON.stringify({ url: `http://127.0.0.1:${port}/metrics`, token, dataPoints: "5" }),
    );
    await vi.waitFor(
      async () => {
        const metrics = await platform.request(`/api/server.getServerMetrics?input=${input}`, as());
        expect(metrics.status, JSON.stringify(metrics.body)).toBe(200);
        expect(metrics.body[0]).toHaveProperty("memTotal");
      },
      { timeout: 20_000, interval: 500 },
    );
  });

  it("refuses another organization and the platform's labels", async () => {
    const theirs = { token: other.token };
    const b = await nodeOf("b");
    expect((await platform.query("cluster.getNodes", { serverId: servers.a }, theirs)).status).toBe(404);
    expect(
      (
        await platform.mutate(
          "cluster.updateNode",
          { serverId: servers.a, nodeId: b.ID, availability: "drain" },
          theirs,
        )
      ).status,
    ).toBe(404);
    expect(
      (await platform.query("cluster.addWorker", { serverId: servers.a, joinServerId: servers.b }, theirs))
        .status,
    ).toBe(404);
    const reserved = await platform.mutate(
      "cluster.updateNode",
      { serverId: servers.a, nodeId: b.ID, labels: { "platform.server": "x" } },
      as(),
    );
    expect(reserved.status).toBe(400);
    expect(JSON.stringify(reserved.body)).toContain("labels");
    expect((await nodeOf("b")).Spec.Availability).toBe("active");
  });

  it("deploys 3 replicas placed on the workers, each answering by name over the overlay and through the proxy", async () => {
    // What server.setup creates on a manager: the attachable platform overlay.
    await docker("a", ["network", "create", "-d", "overlay", "--attachable", "platform-network"]);
    const project = await platform.mutate("project.create", { name: "Cluster" }, as());
    const created = await platform.mutate(
      "application.create",
      { name: "web", environmentId: project.body.environment.environmentId, serverId: servers.a },
      as(),
    );
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    ({ appName, applicationId } = created.body);
    await platform.mutateOk("application.saveDockerProvider", { applicationId, dockerImage: IMAGE }, as());
    // Each replica answers its own hostname (the task's container id).
    const updated = await platform.mutate(
      "application.update",
      {
        applicationId,
        replicas: 3,
        command: 'sh -c "mkdir -p /w && hostname > /w/index.html && exec httpd -f -p 80 -h /w"',
        placementSwarm: {
          Constraints: ["node.role==worker"],
          Preferences: [{ Spread: { SpreadDescriptor: "node.id" } }],
        },
      },
      as(),
    );
    expect(updated.status, JSON.stringify(updated.body)).toBe(200);
    const deployed = await platform.mutate("application.deploy", { applicationId }, as());
    expect(deployed.status, JSON.stringify(deployed.body)).toBe(200);
    await vi.waitFor(async () => expect(await taskNodes(appName)).toHaveLength(3), {
      timeout: 120_000,
      interval: 500,
    });
    expect(new Set(await taskNodes(appName))).toEqual(new Set(["node-b", "node-c"]));
    // No IPVS in this kernel: the platform gave the service DNS round robin.
    expect(
      await docker("a", ["service", "inspect", appName, "--format", "{{.Spec.EndpointSpec.Mode}}"]),
    ).toBe("dnsrr");
    // From a container on the manager's node (no replica there): every replica answers.
    const seen = await docker("a", [
      "run",
      "--rm",
      "--network",
      "platform-network",
      CLIENT,
      "sh",
      "-c",
      `for i in $(seq 1 40); do curl -s -m 3 http://${appName}/; done`,
    ]);
    expect(new Set(seen.split("\n").filter(Boolean)).size).toBe(3);

    // Through the manager's proxy (a routing stand-in for Traefik: no Traefik image here) on its
    // host-mode port 80 inside its namespace: a domain reaches the replicas on the workers.
    await run("sh", ["-c", `docker save ${ROUTER_IMAGE} | docker -H unix://${socket("a")} load -q`], {
      timeout: 120_000,
    });
    await platform.ctx.db
      .updateTable("webServerSettings")
      .set({ traefikImage: ROUTER_IMAGE })
      .where("id", "=", 1)
      .execute();
    await ensureProxyOn(platform.ctx, servers.a);
    // The proxy mounts the socket of its own engine (the agent's), never the host engine's.
    const mounts = await docker("a", [
      "service",
      "inspect",
      "platform-traefik",
      "--format",
      "{{json .Spec.TaskTemplate.ContainerSpec.Mounts}}",
    ]);
    expect(JSON.parse(mounts)).toContainEqual(
      expect.objectContaining({ Source: socket("a"), Target: "/var/run/docker.sock" }),
    );
    const domain = await platform.mutate(
      "domain.create",
      {
        domainType: "application",
        applicationId,
        host: "web.cluster.test",
        port: 80,
        https: false,
        certificateType: "none",
      },
      as(),
    );
    expect(domain.status, JSON.stringify(domain.body)).toBe(200);
    const answered = new Set<string>();
    await vi.waitFor(
      async () => {
        // curl, not fetch: fetch may not set the Host header.
        const { stdout } = await run("curl", [
          "-sf",
          "-m",
          "3",
          "-H",
          "Host: web.cluster.test",
          `http://${address("a")}/`,
        ]);
        answered.add(stdout.trim());
        expect(answered.size).toBe(3);
      },
      { timeout: 60_000, interval: 50 },
    );
  }, 240_000);

  it("a line printed by a replica on a worker reaches application.readLogs and the follow stream", async () => {
    // A replica on node-b (the deploy above placed replicas on both workers).
    const container = (
      await docker("b", ["ps", "-q", "--filter", `label=com.docker.swarm.service.name=${appName}`])
    ).split("\n")[0]!;
    expect(container).not.toBe("");
    const taskId = await docker("b", [
      "inspect",
      container,
      "--format",
      '{{index .Config.Labels "com.docker.swarm.task.id"}}',
    ]);
    // Written to the output of the replica's main process: a line the replica printed on node-b.
    const print = (text: string) =>
      docker("b", ["exec", container, "sh", "-c", `echo ${text} > /proc/1/fd/1`]);
    const marker = `worker-line-${Date.now()}`;
    await print(`${marker} before`);
    // Docker gathers the service's log from the worker's engine for the manager's agent.
    const logLine = (text: string) =>
      new RegExp(`^\\S+ ${appName}\\.\\d\\.${taskId.slice(0, 12)} \\| ${marker} ${text}$`, "m");
    await vi.waitFor(
      async () => {
        const read = await platform.query(
          "application.readLogs",
          { applicationId, tail: 100, search: marker },
          as(),
        );
        expect(read.status, JSON.stringify(read.body)).toBe(200);
        expect(read.body).toMatch(logLine("before"));
      },
      { timeout: 30_000, interval: 500 },
    );

    const http = await listen(platform);
    const abort = new AbortController();
    let received = "";
    try {
      const response = await fetch(`${http.url}/api/runtime.logs?applicationId=${applicationId}&tail=100`, {
        headers: { authorization: `Bearer ${owner.token}` },
        signal: abort.signal,
      });
      expect(response.status).toBe(200);
      const reading = (async () => {
        const decoder = new TextDecoder();
        for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
          received += decoder.decode(chunk, { stream: true });
        }
      })().catch(() => {});
      const dataLines = () =>
        received
          .split("\n")
          .filter((line) => line.startsWith("data: "))
          .map((line) => line.slice(6))
          .join("\n");
      // The tail first, then a line printed on the worker while the stream is open.
      await vi.waitFor(() => expect(dataLines()).toMatch(logLine("before")), {
        timeout: 30_000,
        interval: 100,
      });
      await print(`${marker} live`);
      await vi.waitFor(() => expect(dataLines()).toMatch(logLine("live")), {
        timeout: 30_000,
        interval: 100,
      });
      abort.abort();
      await reading;
    } finally {
      abort.abort();
      await http.close();
    }
  }, 120_000);

  it("drains a node: its tasks move; labels set by the caller keep the platform's", async () => {
    const b = await nodeOf("b");
    const drained = await platform.mutate(
      "cluster.updateNode",
      { serverId: servers.a, nodeId: b.ID, availability: "drain", labels: { zone: "west" } },
      as(),
    );
    expect(drained.status, JSON.stringify(drained.body)).toBe(200);
    expect(drained.body.Spec).toMatchObject({
      Availability: "drain",
      Labels: { zone: "west", "platform.server": servers.b },
    });
    await vi.waitFor(async () => expect(await taskNodes(appName)).toEqual(["node-c", "node-c", "node-c"]), {
      timeout: 90_000,
      interval: 500,
    });
    await platform.mutate(
      "cluster.updateNode",
      { serverId: servers.a, nodeId: b.ID, availability: "active" },
      as(),
    );
  }, 180_000);

  it("a node killed (engine and agent) shows down with when it was last seen; its tasks move; it comes back", async () => {
    // A deployment in flight (a rolling update of the replicas) when the node is lost.
    await platform.mutateOk(
      "application.saveEnvironment",
      { applicationId, env: "WAVE=2", buildArgs: "", buildSecrets: "", createEnvFile: false },
      as(),
    );
    const { deploymentId } = await platform.mutateOk("application.deploy", { applicationId }, as());
    const statusOf = async () =>
      (
        await platform.ctx.db
          .selectFrom("deployments")
          .select("status")
          .where("deploymentId", "=", deploymentId)
          .executeTakeFirstOrThrow()
      ).status;
    await vi.waitFor(async () => expect(await statusOf()).not.toBe("idle"), {
      timeout: 60_000,
      interval: 100,
    });
    await agents.c?.stop();
    await cluster("stop", "c");
    try {
      await vi.waitFor(
        async () => {
          const c = await nodeOf("c");
          expect(c.Status.State).toBe("down");
          expect(c.platform).toMatchObject({ agentOnline: false, lastSeenAt: expect.any(String) });
        },
        { timeout: 60_000, interval: 500 },
      );
      // Every running task leaves the lost node (a rolling update caught by the loss may keep one
      // more task than the replicas until it settles, as Swarm does).
      await vi.waitFor(
        async () => {
          const nodes = await taskNodes(appName);
          expect(nodes.length).toBeGreaterThanOrEqual(3);
          expect(new Set(nodes)).toEqual(new Set(["node-b"]));
        },
        { timeout: 90_000, interval: 500 },
      );
      // The deployment settles as Docker shows it: done only when the service carries it and its
      // update completed; failed with a reason otherwise.
      const ended = await platform.waitForDeployment(deploymentId, 180_000);
      const [state, label] = (
        await docker("a", [
          "service",
          "inspect",
          appName,
          "--format",
          '{{if .UpdateStatus}}{{.UpdateStatus.State}}{{end}}|{{index .Spec.Labels "platform.deployment-id"}}',
        ])
      ).split("|");
      expect(["done", "error"]).toContain(ended.status);
      if (ended.status === "done") {
        expect(label).toBe(deploymentId);
        expect(["completed", ""]).toContain(state);
      } else {
        expect(ended.errorMessage).toBeTruthy();
        expect(state === "completed" && label === deploymentId, `${state} ${label}`).toBe(false);
      }
    } finally {
      // The node comes back even when a step above failed: the later tests need it.
      await cluster("start", "c");
      await startNodeAgent("c");
    }
    await vi.waitFor(
      async () => {
        const c = await nodeOf("c");
        expect(c.Status.State).toBe("ready");
        expect(c.platform?.agentOnline).toBe(true);
      },
      { timeout: 60_000, interval: 500 },
    );
  }, 420_000);

  it("promotes and demotes a node, and removes a worker", async () => {
    const b = await nodeOf("b");
    const promoted = await platform.mutate(
      "cluster.updateNode",
      { serverId: servers.a, nodeId: b.ID, role: "manager" },
      as(),
    );
    expect(promoted.body.Spec.Role).toBe("manager");
    // Swarm refuses to demote a manager until it has joined the Raft quorum.
    await vi.waitFor(
      async () => {
        const demoted = await platform.mutate(
          "cluster.updateNode",
          { serverId: servers.a, nodeId: b.ID, role: "worker" },
          as(),
        );
        expect(demoted.status, JSON.stringify(demoted.body)).toBe(200);
        expect(demoted.body.Spec.Role).toBe("worker");
      },
      { timeout: 30_000, interval: 1000 },
    );
    const c = await nodeOf("c");
    const removed = await platform.mutate(
      "cluster.removeWorker",
      { serverId: servers.a, nodeId: c.ID },
      as(),
    );
    expect(removed.body).toBe(true);
    expect((await nodes()).map((node) => node.Description.Hostname)).toEqual(["node-a", "node-b"]);
    // c's own agent left the Swarm: its engine is free to join another or start its own.
    await vi.waitFor(
      async () =>
        expect(await docker("c", ["info", "--format", "{{.Swarm.LocalNodeState}}"])).toBe("inactive"),
      { timeout: 30_000, interval: 500 },
    );
    expect(
      (await platform.mutate("cluster.removeWorker", { serverId: servers.a, nodeId: c.ID }, as())).status,
    ).toBe(404);
  }, 120_000);
});
