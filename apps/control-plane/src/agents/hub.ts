/**
 * What the rest of the control plane needs from its agents: a client that reaches the agent of
 * a server (or the control plane's own machine), one-time enrollment tokens, and whether an
 * agent is alive. The implementation owns NATS (or the in-memory transport), the NATS signing
 * keys and heartbeat tracking.
 */
import type { AgentClient, AgentEvent } from "@platform/agent-protocol";
import type { DependencyStatus } from "../health.ts";

/** Server id of the control plane's own machine (the embedded agent). */
export const LOCAL_SERVER_ID = "local";

/** A server is online while its last heartbeat is younger than this. */
export const HEARTBEAT_TIMEOUT_MS = 30_000;

export interface EnrollmentToken {
  /** Shown once; only its sha256 is stored. */
  token: string;
  expiresAt: string;
}

export interface AgentEnrollRequest {
  enrollmentToken: string;
  /** The agent's nkey user public key (U...); its seed never leaves the server. */
  publicKey: string;
  hostname: string;
  agentVersion: string;
}

export interface AgentEnrollResponse {
  serverId: string;
  natsUrl: string;
  /** NATS user JWT for publicKey, allowed only the subjects agent.<serverId>.> */
  userJwt: string;
}

export interface AgentConnection {
  online: boolean;
  lastHeartbeatAt: string | null;
}

export interface AgentHub {
  /** The client used to send commands; server ids are given per call (LOCAL_SERVER_ID for local). */
  readonly client: AgentClient;
  /** A one-time token the bootstrap script exchanges for the agent's NATS credentials. */
  createEnrollmentToken(serverId: string): Promise<EnrollmentToken>;
  /**
   * Exchanges a one-time enrollment token for the agent's NATS credentials (POST
   * /api/agent.enroll); throws ApiError UNAUTHORIZED for an invalid, used or expired token.
   */
  enroll(request: AgentEnrollRequest): Promise<AgentEnrollResponse>;
  /** Online when the last heartbeat is recent enough, computed at the time of the call. */
  connectionOf(server: { lastHeartbeatAt: string | null }): AgentConnection;
  /**
   * Calls `listener` when an agent is heard again: its first heartbeat since this control plane
   * started, or one after a silence longer than the heartbeat timeout (reconciliation runs then).
   */
  onAgentBack(listener: (serverId: string) => void): void;
  /** Calls `listener` with each event an agent publishes (serverThreshold, ...). */
  onAgentEvent(listener: (event: AgentEvent) => void): void;
  /** The URL agents on other machines use to reach NATS (given to them at enrollment). */
  readonly natsUrlForAgents: string | null;
  /** The NATS connection's state for /health ("disabled" without NATS_URL). */
  natsStatus(): DependencyStatus;
  close(): Promise<void>;
}
