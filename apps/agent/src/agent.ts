/**
 * startAgent: runs an AgentCore on a transport: serves `agent.<serverId>.cmd` and publishes a
 * heartbeat at start and then every heartbeatIntervalMs (±10% jitter, so many agents do not beat
 * in step). The control plane uses it to run the agent of its own machine in-process over the
 * in-memory transport; the daemon (main.ts) uses it over NATS.
 */
import type { AgentTransport, Subscription } from "@platform/agent-protocol";
import type { Logger } from "pino";
import { AgentCore, type AgentCoreOptions } from "./core.ts";
import { sweepOrphanVxlanLinks } from "./docker/vxlan.ts";

export const DEFAULT_HEARTBEAT_INTERVAL_MS = 10_000;
/** How often the agent looks for VXLAN links the engine left behind (docker/vxlan.ts). */
const ORPHAN_VXLAN_SWEEP_MS = 10_000;

export interface StartAgentOptions extends AgentCoreOptions {
  transport: AgentTransport;
  /** Default 10 000 ms. */
  heartbeatIntervalMs?: number;
  /** An AgentCore to use instead of building one from the other options. */
  core?: AgentCore;
  logger?: Logger;
}

export interface RunningAgent {
  core: AgentCore;
  /** Publishes one heartbeat now (also done on the timer). */
  beat(): Promise<void>;
  /** Stops serving and beating; leaves the transport open. */
  stop(): Promise<void>;
}

/** The next heartbeat delay: `intervalMs` ±10%. */
export function jitteredInterval(intervalMs: number, random = Math.random): number {
  return Math.round(intervalMs * (0.9 + 0.2 * random()));
}

export async function startAgent(options: StartAgentOptions): Promise<RunningAgent> {
  const { transport, logger } = options;
  const core =
    options.core ??
    new AgentCore({
      ...options,
      publishLogChunk:
        options.publishLogChunk ?? ((chunk) => transport.publishLogChunk(options.serverId, chunk)),
      publishEvent: options.publishEvent ?? ((event) => transport.publishEvent(event)),
    });
  const intervalMs = options.heartbeatIntervalMs ?? DEFAULT_HEARTBEAT_INTERVAL_MS;
  try {
    await core.monitoring.start();
  } catch (error) {
    logger?.warn({ err: error }, "monitoring not resumed");
  }
  try {
    const started = await core.deployer.restartServicesStoppedForVolumes();
    if (started.length > 0)
      logger?.info({ services: started }, "services a volume backup left stopped started again");
  } catch (error) {
    logger?.warn({ err: error }, "services stopped for a volume backup not checked");
  }
  // Deleting links needs root: an agent run by another user (a developer's test) leaves them.
  const stopSweep =
    process.platform === "linux" && process.getuid?.() === 0
      ? sweepOrphanVxlanLinks(ORPHAN_VXLAN_SWEEP_MS, (links) =>
          logger?.warn(
            { links },
            "removed VXLAN links the Docker Engine had left behind (moby/libnetwork#1765)",
          ),
        )
      : () => {};
  const commands: Subscription = transport.serveCommands(core.serverId, (request) => core.handle(request));
  await transport.flush();

  let stopped = false;
  let timer: NodeJS.Timeout | undefined;

  const beat = async () => {
    try {
      transport.publishHeartbeat(await core.heartbeat());
    } catch (error) {
      logger?.warn({ err: error }, "heartbeat not published");
    }
  };
  const schedule = () => {
    if (stopped) return;
    timer = setTimeout(async () => {
      await beat();
      schedule();
    }, jitteredInterval(intervalMs));
    timer.unref();
  };

  await beat();
  schedule();
  logger?.info({ serverId: core.serverId, heartbeatIntervalMs: intervalMs }, "agent serving commands");

  return {
    core,
    beat,
    stop: async () => {
      stopped = true;
      clearTimeout(timer);
      stopSweep();
      commands.unsubscribe();
      core.logFollowers.stopAll();
      await core.monitoring.stop();
      await transport.flush().catch(() => {});
      logger?.info({ serverId: core.serverId }, "agent stopped");
    },
  };
}
