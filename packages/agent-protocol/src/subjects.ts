/**
 * NATS subject names of the agent protocol. Each server's agent owns the subjects under
 * `agent.<serverId>.`, so one NATS permission (`agent.<serverId>.>`) covers all of them.
 */
import { assertValidServerId, isValidServerId } from "@platform/names";

/** Request/reply commands for one server's agent. */
export function commandSubject(serverId: string): string {
  return `agent.${assertValidServerId(serverId)}.cmd`;
}

/** Heartbeats of one server's agent. */
export function heartbeatSubject(serverId: string): string {
  return `agent.${assertValidServerId(serverId)}.heartbeat`;
}

/** Events of one server's agent. */
export function eventsSubject(serverId: string): string {
  return `agent.${assertValidServerId(serverId)}.events`;
}

/** Chunks of one log stream of one server's agent. */
export function logsSubject(serverId: string, streamId: string): string {
  return `agent.${assertValidServerId(serverId)}.logs.${assertValidServerId(streamId)}`;
}

/** Every subject an agent may publish or subscribe to (its NATS permission). */
export function agentSubjectsWildcard(serverId: string): string {
  return `agent.${assertValidServerId(serverId)}.>`;
}

/** Wildcards over all servers, for the control plane's subscriptions. */
export const ALL_HEARTBEATS_SUBJECT = "agent.*.heartbeat";
export const ALL_EVENTS_SUBJECT = "agent.*.events";

/** The server id in a subject `agent.<serverId>.…`, or undefined when it is not one. */
export function serverIdOfSubject(subject: string): string | undefined {
  const [prefix, serverId] = subject.split(".");
  return prefix === "agent" && isValidServerId(serverId) ? serverId : undefined;
}
