/**
 * The AgentHub of a running control plane. Without NATS_URL everything stays in the process:
 * an InMemoryAgentTransport and the agent of the control plane's own machine (LOCAL_SERVER_ID)
 * running on it. With NATS_URL, commands and heartbeats cross NATS (the local agent too, over
 * the control plane's own connection), and remote agents enroll for their own credentials.
 */
import { createHash } from "node:crypto";
import { readFile } from "node:fs/promises";
import { type RunningAgent, type StartAgentOptions, startAgent } from "@platform/agent";
import {
  AgentClient,
  type AgentEvent,
  type AgentTransport,
  connect,
  credsAuthenticator,
  InMemoryAgentTransport,
  NatsAgentTransport,
  type NatsConnection,
  type Subscription,
} from "@platform/agent-protocol";
import type { Logger } from "pino";
import { type Config, instanceIdOf } from "../config.ts";
import type { Db } from "../db/database.ts";
import { InstanceLease } from "../db/instance-lease.ts";
import { ApiError } from "../errors.ts";
import { type DependencyStatus, trackNatsConnection } from "../health.ts";
import { markActiveIfValid } from "./activation.ts";
import { createEnrollmentToken, enroll } from "./enrollment.ts";
import { HeartbeatRecorder } from "./heartbeats.ts";
import {
  type AgentConnection,
  type AgentEnrollRequest,
  type AgentEnrollResponse,
  type AgentHub,
  type EnrollmentToken,
  HEARTBEAT_TIMEOUT_MS,
  LOCAL_SERVER_ID,
} from "./hub.ts";
import { NatsAccountSigner } from "./nats-signer.ts";

/** How long this machine's agent stays with a control plane that stopped renewing (it died). */
const LOCAL_AGENT_LEASE_MS = 15_000;

export interface AgentHubOptions {
  /** A server is online while its last heartbeat is younger than this (default 30 s). */
  heartbeatTimeoutMs?: number;
  /** Least time between two writes of one server's last_heartbeat_at (default: timeout / 4). */
  heartbeatWriteIntervalMs?: number;
  /** Longest wait before a received heartbeat is written, batched with others (default 250 ms). */
  heartbeatFlushMs?: number;
  /** Default timeout of agent commands (default 10 s). */
  commandTimeoutMs?: number;
  /** Settings of the in-process agent of this machine (Docker socket, ...); false: run none. */
  localAgent?: false | Omit<StartAgentOptions, "transport" | "serverId">;
}

export interface AgentHubDeps {
  db: Db;
  logger: Logger;
  now(): Date;
}

class RunningAgentHub implements AgentHub {
  readonly client: AgentClient;
  private readonly heartbeatTimeoutMs: number;
  private heartbeats: Subscription | undefined;
  private recorder: HeartbeatRecorder | undefined;
  private localAgent: RunningAgent | undefined;
  private localTransport: AgentTransport | undefined;
  /** When each agent was last heard (entries older than the timeout are dropped: they mean "away"). */
  private readonly lastHeard = new Map<string, number>();
  private lastHeardPrunedAt = 0;
  private readonly backListeners: ((serverId: string) => void)[] = [];
  private readonly eventListeners: ((event: AgentEvent) => void)[] = [];
  private events: Subscription | undefined;
  /** Over NATS: whether this control plane runs this machine's agent (one of the copies does). */
  private readonly localAgentLease: InstanceLease | undefined;
  private election: NodeJS.Timeout | undefined;

  constructor(
    private readonly deps: AgentHubDeps,
    private readonly transport: AgentTransport,
    private readonly connection: NatsConnection | undefined,
    private readonly signer: NatsAccountSigner,
    readonly natsUrlForAgents: string | null,
    options: AgentHubOptions,
    instanceId?: string,
  ) {
    this.localAgentLease = instanceId
      ? new InstanceLease(deps.db, "local-agent", instanceId, LOCAL_AGENT_LEASE_MS)
      : undefined;
    this.client = new AgentClient(transport, options.commandTimeoutMs);
    this.heartbeatTimeoutMs = options.heartbeatTimeoutMs ?? HEARTBEAT_TIMEOUT_MS;
    this.natsStatus = connection ? trackNatsConnection(connection, deps.logger) : () => "disabled";
  }

  readonly natsStatus: () => DependencyStatus;

  async start(options: AgentHubOptions): Promise<void> {
    const { db, logger, now } = this.deps;
    const recorder = new HeartbeatRecorder({
      db,
      logger,
      now,
      writeIntervalMs: options.heartbeatWriteIntervalMs ?? Math.floor(this.heartbeatTimeoutMs / 4),
      flushMs: options.heartbeatFlushMs,
      tryActivate: (serverId) => markActiveIfValid({ db, logger, agents: this }, serverId),
    });
    this.recorder = recorder;
    this.heartbeats = this.transport.subscribeHeartbeats((heartbeat) => {
      this.heard(heartbeat.serverId);
      recorder.record(heartbeat);
    });
    this.events = this.transport.subscribeEvents((event) => {
      for (const listener of this.eventListeners) {
        try {
          listener(event);
        } catch (error) {
          logger.warn({ err: error, serverId: event.serverId }, "agent event listener failed");
        }
      }
    });
    await this.transport.flush();
    const local = options.localAgent;
    if (local === false) return;
    const startLocal = async () => {
      // Over NATS the local agent gets its own transport (its own subscriptions) on the shared connection.
      this.localTransport = this.connection ? new NatsAgentTransport(this.connection) : this.transport;
      this.localAgent = await startAgent({
        ...local,
        logger: local?.logger ?? logger.child({ component: "local-agent" }),
        transport: this.localTransport,
        serverId: LOCAL_SERVER_ID,
      });
    };
    // Without NATS each control plane reaches only its own in-process agent, which it needs: the
    // commands it sends are those of the jobs it runs (each run once: leases, tick claims).
    if (!this.connection || !this.localAgentLease) return startLocal();
    // Over NATS every copy's agent would answer the same subjects and drive this machine's
    // engine twice: the copy that holds the lease runs it, the others wait to take it over.
    const lease = this.localAgentLease;
    const elect = async () => {
      const held = this.localAgent !== undefined;
      const mine = await lease.take(now()).catch(() => held); // the database away: nothing changes
      if (mine && !held) {
        logger.info({ owner: lease.owner }, "this control plane runs this machine's agent");
        await startLocal();
      } else if (!mine && held) {
        logger.warn("another control plane took this machine's agent over: stopping this one's");
        await this.stopLocal();
      }
    };
    await elect();
    let electing = false;
    this.election = setInterval(() => {
      if (electing) return;
      electing = true;
      elect()
        .catch((error) => logger.error({ err: error }, "this machine's agent not started"))
        .finally(() => {
          electing = false;
        });
    }, lease.ttlMs / 3);
    this.election.unref();
  }

  private async stopLocal(): Promise<void> {
    await this.localAgent?.stop();
    this.localAgent = undefined;
    if (this.localTransport !== this.transport) await this.localTransport?.close();
    this.localTransport = undefined;
  }

  onAgentBack(listener: (serverId: string) => void): void {
    this.backListeners.push(listener);
  }

  onAgentEvent(listener: (event: AgentEvent) => void): void {
    this.eventListeners.push(listener);
  }

  private heard(serverId: string): void {
    const at = Date.now();
    if (at - this.lastHeardPrunedAt > this.heartbeatTimeoutMs) {
      this.lastHeardPrunedAt = at;
      for (const [id, heardAt] of this.lastHeard) {
        if (at - heardAt > this.heartbeatTimeoutMs) this.lastHeard.delete(id);
      }
    }
    const last = this.lastHeard.get(serverId);
    this.lastHeard.set(serverId, at);
    if (last !== undefined && at - last <= this.heartbeatTimeoutMs) return;
    for (const listener of this.backListeners) {
      try {
        listener(serverId);
      } catch (error) {
        this.deps.logger.warn({ err: error, serverId }, "agent-back listener failed");
      }
    }
  }

  async createEnrollmentToken(serverId: string): Promise<EnrollmentToken> {
    if (!this.natsUrlForAgents) throw withoutNats();
    return createEnrollmentToken(this.deps.db, serverId, this.deps.now());
  }

  enroll(request: AgentEnrollRequest): Promise<AgentEnrollResponse> {
    const { db, logger, now } = this.deps;
    return enroll(
      { db, logger, now: now(), signer: this.signer, natsUrlForAgents: this.natsUrlForAgents },
      request,
    );
  }

  connectionOf(server: { lastHeartbeatAt: string | null }): AgentConnection {
    const { lastHeartbeatAt } = server;
    const ageMs =
      lastHeartbeatAt === null
        ? Number.POSITIVE_INFINITY
        : this.deps.now().getTime() - Date.parse(lastHeartbeatAt);
    return { online: ageMs < this.heartbeatTimeoutMs, lastHeartbeatAt };
  }

  async close(): Promise<void> {
    clearInterval(this.election);
    const held = this.localAgent !== undefined;
    await this.stopLocal();
    if (held) await this.localAgentLease?.release();
    this.heartbeats?.unsubscribe();
    this.events?.unsubscribe();
    await this.recorder?.close();
    await this.transport.close();
    if (this.connection && !this.connection.isClosed()) await this.connection.drain().catch(() => {});
  }
}

function withoutNats(): ApiError {
  return new ApiError(
    "CONFLICT",
    "This control plane runs without NATS (NATS_URL is not set): only its own machine has an agent",
  );
}

export async function connectControlPlaneNats(
  config: Config,
  name = "platform-control-plane",
): Promise<NatsConnection> {
  const url = config.natsUrl!;
  const authenticator = config.natsCredsFile
    ? credsAuthenticator(await readFile(config.natsCredsFile))
    : undefined;
  try {
    return await connect({
      servers: url,
      authenticator,
      name,
      timeout: 5000,
      maxReconnectAttempts: -1,
      reconnectTimeWait: 1000,
    });
  } catch (error) {
    throw new Error(`NATS is not reachable at ${url}: ${(error as Error).message}`);
  }
}

/** Starts the hub for `config`: NATS when NATS_URL is set, in memory otherwise. */
export async function startAgentHub(
  config: Config,
  deps: AgentHubDeps,
  options: AgentHubOptions = {},
): Promise<AgentHub> {
  const signer = NatsAccountSigner.fromSeed(config.natsAccountSeed);
  let hub: RunningAgentHub;
  if (config.natsUrl) {
    if (!signer.configured) {
      deps.logger.warn(
        "NATS_ACCOUNT_SEED is not set: agents' credentials are signed by a throwaway key, which only a NATS server without authentication accepts (agents are not isolated from each other)",
      );
    }
    const connection = await connectControlPlaneNats(config);
    const transport = new NatsAgentTransport(connection, {
      onError: (error) => deps.logger.warn({ err: error }, "NATS message dropped"),
    });
    hub = new RunningAgentHub(
      deps,
      transport,
      connection,
      signer,
      config.natsAgentUrl ?? config.natsUrl,
      options,
      instanceIdOf(config),
    );
  } else {
    hub = new RunningAgentHub(deps, new InMemoryAgentTransport(), undefined, signer, null, options);
  }
  // The local agent's monitoring callbacks follow the control plane's outbound allow list; its
  // main directory and network are the control plane's settings (the production stack's).
  const localAgent =
    options.localAgent === false
      ? false
      : {
          outboundAllow: config.outboundAllow,
          mainDirectory: config.mainDirectory,
          platformNetwork: config.platformNetwork,
          // Its /metrics endpoints listen where the API does (HOST=127.0.0.1 keeps them local).
          metricsListenHost: config.host,
          // The data directory is this installation's, and the same at each of its starts.
          agentMark: `${LOCAL_SERVER_ID}@${createHash("sha256").update(config.dataDir).digest("hex").slice(0, 16)}`,
          ...options.localAgent,
        };
  try {
    await hub.start({ ...options, localAgent });
  } catch (error) {
    await hub.close().catch(() => {});
    throw error;
  }
  return hub;
}
