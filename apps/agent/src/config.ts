/**
 * The daemon's configuration: a JSON file (written by enrollment, default
 * <stateDir>/agent.json) overlaid with environment variables, checked with zod. A bad value
 * stops the agent with a message naming the setting.
 */
import { readFile } from "node:fs/promises";
import path from "node:path";
import { NATS_URL_PATTERN, SERVER_ID_PATTERN } from "@platform/names";
import * as z from "zod";
import { DEFAULT_HEARTBEAT_INTERVAL_MS } from "./agent.ts";
import { DEFAULT_MAIN_DIRECTORY } from "./core.ts";
import { DEFAULT_DOCKER_SOCKET } from "./docker/engine.ts";
import { DEFAULT_DOCKER_DAEMON_CONFIG, DEFAULT_NVIDIA_RUNTIME_CONFIG } from "./gpu/gpu.ts";
import { PLATFORM_NETWORK } from "./validate/engine-facts.ts";

export const DEFAULT_STATE_DIR = "/etc/platform/agent";
export const CONFIG_FILE_NAME = "agent.json";
export const CREDS_FILE_NAME = "agent.creds";

/** Environment variable -> config field. */
export const ENV_VARIABLES = {
  AGENT_SERVER_ID: "serverId",
  NATS_URL: "natsUrl",
  AGENT_NATS_CREDS: "credsFile",
  AGENT_DOCKER_SOCKET: "dockerSocket",
  AGENT_MAIN_DIR: "mainDirectory",
  AGENT_HOST_ROOT: "hostRoot",
  AGENT_HEARTBEAT_INTERVAL_MS: "heartbeatIntervalMs",
  AGENT_PLATFORM_NETWORK: "platformNetwork",
  AGENT_NVIDIA_SMI: "nvidiaSmi",
  AGENT_DOCKER_DAEMON_CONFIG: "dockerDaemonConfig",
  AGENT_NVIDIA_RUNTIME_CONFIG: "nvidiaRuntimeConfig",
} as const;

const configSchema = z.object({
  serverId: z.string().regex(SERVER_ID_PATTERN, "must match ^[a-zA-Z0-9_-]+$"),
  natsUrl: z.string().regex(NATS_URL_PATTERN, "must be a nats:// (or tls://) URL"),
  credsFile: z.string().min(1).optional(),
  dockerSocket: z.string().min(1).default(DEFAULT_DOCKER_SOCKET),
  mainDirectory: z.string().min(1).default(DEFAULT_MAIN_DIRECTORY),
  hostRoot: z.string().min(1).default("/"),
  heartbeatIntervalMs: z.coerce.number().int().min(100).max(3_600_000).default(DEFAULT_HEARTBEAT_INTERVAL_MS),
  /** The overlay network of this server's applications and proxy (the control plane's PLATFORM_NETWORK). */
  platformNetwork: z
    .string()
    .regex(/^[A-Za-z0-9][A-Za-z0-9_.-]*$/, "must be a Docker network name")
    .default(PLATFORM_NETWORK),
  /** settings.checkGPUStatus / setupGPU: nvidia-smi, the engine's daemon.json, the runtime's config.toml. */
  nvidiaSmi: z.string().min(1).default("nvidia-smi"),
  dockerDaemonConfig: z.string().min(1).default(DEFAULT_DOCKER_DAEMON_CONFIG),
  nvidiaRuntimeConfig: z.string().min(1).default(DEFAULT_NVIDIA_RUNTIME_CONFIG),
});

export type AgentConfig = z.infer<typeof configSchema> & { stateDir: string; configFile: string };

/** Where the state (config and credentials) lives: AGENT_STATE_DIR or /etc/platform/agent. */
export function stateDirectory(env: NodeJS.ProcessEnv = process.env): string {
  return path.resolve(env.AGENT_STATE_DIR || DEFAULT_STATE_DIR);
}

/** The config file: AGENT_CONFIG_FILE or <stateDir>/agent.json. */
export function configFilePath(env: NodeJS.ProcessEnv = process.env): string {
  return path.resolve(env.AGENT_CONFIG_FILE || path.join(stateDirectory(env), CONFIG_FILE_NAME));
}

async function readConfigFile(file: string): Promise<Record<string, unknown>> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return {};
    throw error;
  }
  try {
    const parsed = JSON.parse(text);
    if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed))
      throw new Error("not an object");
    return parsed;
  } catch (error) {
    throw new Error(`config file ${file} is not a JSON object: ${(error as Error).message}`);
  }
}

export async function loadAgentConfig(env: NodeJS.ProcessEnv = process.env): Promise<AgentConfig> {
  const configFile = configFilePath(env);
  const fromFile = await readConfigFile(configFile);
  const fromEnv: Record<string, string> = {};
  for (const [variable, field] of Object.entries(ENV_VARIABLES)) {
    const value = env[variable];
    if (value !== undefined && value !== "") fromEnv[field] = value;
  }
  const result = configSchema.safeParse({ ...fromFile, ...fromEnv });
  if (!result.success) {
    const problems = result.error.issues.map((issue) => {
      const field = String(issue.path[0] ?? "");
      const variable = Object.entries(ENV_VARIABLES).find(([, name]) => name === field)?.[0];
      return `${field} (${variable ?? "config file"}): ${issue.message}`;
    });
    throw new Error(`invalid agent configuration (${configFile}): ${problems.join("; ")}`);
  }
  const config = result.data;
  const stateDir = stateDirectory(env);
  // A relative creds path in the config file is relative to the state directory.
  const credsFile = config.credsFile ? path.resolve(stateDir, config.credsFile) : undefined;
  return { ...config, credsFile, stateDir, configFile };
}
