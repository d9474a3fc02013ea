/**
 * The docker.* container operations beyond inspect and restart (issue 39): start, stop, kill and
 * remove a container, its files through Docker's archive API, and the engine's container events.
 * The router has already checked the container is the caller's (docker.ts visibleContainer) and
 * passes its full id; the agent checks the container's labels against the scope again and
 * answers NOT_FOUND when they do not match, so that neither check alone decides.
 */
import {
  type ContainerActionCommand_Action,
  type ContainerEvent,
  type ContainerScope,
  undeletablePathReason,
} from "@platform/agent-protocol";
import type { Logger } from "pino";
import { z } from "zod";
import type { ServiceContext } from "../context.ts";
import { callAgent } from "./errors.ts";

/** Dokploy's CONTAINER_FILE_SIZE_LIMIT: the most readContainerFile answers and writeContainerFile takes. */
export const CONTAINER_FILE_LIMIT_BYTES = 512 * 1024;
/** The longest window docker.getEvents reads (one day, in minutes). */
export const MAX_EVENT_MINUTES = 24 * 60;

/** A path inside the container: absolute after normalising, never with a `..` segment or NUL. */
export const containerPathSchema = z
  .string()
  .min(1)
  .max(4096)
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is refused
  .refine((path) => !/[\u0000-\u001f\u007f]/.test(path), "must not hold NUL or control characters")
  .refine((path) => !path.split("/").includes(".."), "must not hold a '..' segment");

/** A path docker.deleteContainerFile may remove: not `/`, a top-level system directory, nor under /proc, /sys, /dev. */
export const deletablePathSchema = containerPathSchema.superRefine((path, context) => {
  const reason = undeletablePathReason(path);
  if (reason) context.addIssue({ code: "custom", message: reason });
});

export const fileContentSchema = z
  .string()
  .refine(
    (content) => Buffer.byteLength(content, "utf8") <= CONTAINER_FILE_LIMIT_BYTES,
    `at most ${CONTAINER_FILE_LIMIT_BYTES} bytes`,
  );

export const containerFileEntrySchema = z.object({ name: z.string(), isDirectory: z.boolean() });

export const containerFileSchema = z.object({
  /** The file's text, base64-encoded (Dokploy's answer). */
  content: z.string(),
  truncated: z.boolean(),
});

export const dockerEventSchema = z.object({
  Type: z.string(),
  Action: z.string(),
  Actor: z.object({ ID: z.string(), Attributes: z.record(z.string(), z.string()) }),
  time: z.number(),
  timeNano: z.number(),
});

export const dockerEventsSchema = z.object({ events: z.array(dockerEventSchema), fetchedAt: z.string() });

interface Agent {
  ctx: ServiceContext;
  agentServerId: string;
  scope: ContainerScope;
}

function logger(agent: Agent): Logger {
  return agent.ctx.logger;
}

/** Starts, stops, kills or removes the container `containerId` (a full, checked id). */
export async function actOnContainer(
  agent: Agent,
  containerId: string,
  action: ContainerActionCommand_Action,
) {
  const { ctx, agentServerId, scope } = agent;
  return callAgent(
    agentServerId,
    () =>
      ctx.agents.client.call(
        agentServerId,
        "containerAction",
        { containerId, action, scope },
        // A stop waits up to Docker's 10 s before killing.
        60_000,
      ),
    logger(agent),
  );
}

async function files(
  agent: Agent,
  containerId: string,
  operation: "LIST" | "READ" | "WRITE" | "DELETE",
  path: string,
  content?: Uint8Array,
) {
  const { ctx, agentServerId, scope } = agent;
  return callAgent(
    agentServerId,
    () =>
      ctx.agents.client.call(
        agentServerId,
        "containerFiles",
        { containerId, operation, path, scope, ...(content ? { content } : {}) },
        60_000,
      ),
    logger(agent),
  );
}

export async function listContainerFiles(agent: Agent, containerId: string, path: string) {
  const result = await files(agent, containerId, "LIST", path);
  return result.entries.map((entry) => ({ name: entry.name, isDirectory: entry.isDirectory }));
}

export async function readContainerFile(agent: Agent, containerId: string, path: string) {
  const result = await files(agent, containerId, "READ", path);
  return { content: Buffer.from(result.content).toString("base64"), truncated: result.truncated };
}

export async function writeContainerFile(agent: Agent, containerId: string, path: string, content: string) {
  await files(agent, containerId, "WRITE", path, Buffer.from(content, "utf8"));
}

/** Writes `bytes` (any content: the upload of docker.uploadFileToContainer) as the file `path`. */
export async function uploadContainerFile(
  agent: Agent,
  containerId: string,
  path: string,
  bytes: Uint8Array,
) {
  await files(agent, containerId, "WRITE", path, bytes);
}

/**
 * Removes the file or directory `path` of the container: the agent runs `rm -rf -- <path>` in it
 * through the exec API (an argument vector, no shell), as Docker's archive API cannot remove.
 */
export async function deleteContainerFile(agent: Agent, containerId: string, path: string) {
  await files(agent, containerId, "DELETE", path);
}

/** The engine's events of the scope's containers in the last `minutes`, newest first, Dokploy's shape. */
export async function containerEvents(agent: Agent, minutes: number, now: Date) {
  const { ctx, agentServerId, scope } = agent;
  // Up to now: the agent reads until its own clock's now when this is later.
  const untilUnix = Math.ceil(now.getTime() / 1000);
  const result = await callAgent(
    agentServerId,
    () =>
      ctx.agents.client.call(
        agentServerId,
        "containerEvents",
        { scope, sinceUnix: untilUnix - minutes * 60, untilUnix },
        30_000,
      ),
    logger(agent),
  );
  return {
    events: result.events.map((event: ContainerEvent) => ({
      Type: event.type,
      Action: event.action,
      Actor: { ID: event.actorId, Attributes: event.attributes },
      time: event.time,
      timeNano: event.timeNano,
    })),
    fetchedAt: now.toISOString(),
  };
}
