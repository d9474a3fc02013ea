/**
 * @platform/agent: the per-server daemon's parts, for the control plane to run an agent
 * in-process (startAgent over InMemoryAgentTransport) and for tests and tooling.
 */
export {
  DEFAULT_HEARTBEAT_INTERVAL_MS,
  type RunningAgent,
  type StartAgentOptions,
  startAgent,
} from "./agent.ts";
export { type ServiceProbe, staticProbe, systemctlProbe } from "./audit/services.ts";
export { type AgentConfig, loadAgentConfig } from "./config.ts";
export { AgentCore, type AgentCoreOptions, DEFAULT_MAIN_DIRECTORY } from "./core.ts";
export { DEFAULT_DOCKER_SOCKET } from "./docker/engine.ts";
export { type EnrollmentResult, type EnrollOptions, enrollAgent, formatCreds } from "./enroll.ts";
export { type AgentNatsOptions, connectAgentNats } from "./nats.ts";
