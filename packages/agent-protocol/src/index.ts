/**
 * @platform/agent-protocol: the contract between the control plane and the agents
 * (proto/agent.proto), shared by both sides. Names, ownership labels and the outbound guard are
 * packages of their own (@platform/names, @platform/ownership, @platform/outbound-guard).
 */
export * from "./agent-version.ts";
export * from "./builders.ts";
export * from "./client.ts";
export * from "./codec.ts";
export * from "./container-paths.ts";
export * from "./dispatch.ts";
export * from "./errors.ts";
export * from "./log-text.ts";
export * from "./memory-transport.ts";
export * from "./messages.ts";
export * from "./metrics-config.ts";
export * from "./nats-transport.ts";
export * from "./stack-commands.ts";
export * from "./subjects.ts";
export * from "./transport.ts";
