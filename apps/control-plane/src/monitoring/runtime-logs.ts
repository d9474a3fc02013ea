/**
 * Runtime logs (the readLogs procedures of application, compose and the six database kinds):
 * the inputs Dokploy 0.30.7 takes (`tail` 1-10,000, default 100; `since` `all` or `<n>s|m|h|d`;
 * `search` a plain phrase of letters, digits, spaces and `._-`) and its answer, one string of
 * lines. The agent of the service's server reads Docker's log API and filters by the phrase
 * (agent docker/logs.ts): no shell anywhere. Each line is
 * `<RFC 3339 time> <task or container> | <text>`, the text's control characters escaped by the
 * agent; nothing of the platform's is added to it.
 */
import type { AgentClient, ResourceOwner, ServiceLogs } from "@platform/agent-protocol";
import type { Logger } from "pino";
import { z } from "zod";
import { callAgent } from "../agents/errors.ts";

export const logTailSchema = z.number().int().min(1).max(10_000).default(100);
export const logSinceSchema = z
  .string()
  .max(32)
  .regex(/^(all|\d+[smhd])$/, "since must be all or a number followed by s, m, h or d")
  .default("all");
export const logSearchSchema = z
  .string()
  .regex(/^[a-zA-Z0-9 ._-]{0,500}$/, "search must be a plain phrase (letters, digits, spaces and ._-)")
  .optional();

export const runtimeLogInput = { tail: logTailSchema, since: logSinceSchema, search: logSearchSchema };

/** The answer: one line per log line, each ending with a newline ("" when there is none). */
export const runtimeLogsSchema = z.string();

const SECONDS: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86_400 };
/** Docker's since is a Unix time: anything older than the epoch is "all" anyway. */
const MAX_SINCE_SECONDS = 2 ** 32 - 1;

/** `since` as seconds back from now; 0 for all. */
export function sinceSeconds(since: string): number {
  if (since === "all") return 0;
  const seconds = Number(since.slice(0, -1)) * SECONDS[since.slice(-1)]!;
  return Math.min(seconds, MAX_SINCE_SECONDS);
}

export function formatRuntimeLogs(logs: ServiceLogs): string {
  return logs.lines.map((line) => `${line.time} ${line.source} | ${line.text}\n`).join("");
}

export interface RuntimeLogTarget {
  serverId: string;
  owner: ResourceOwner;
  /** A Swarm service (an application's or database's appName)… */
  swarmServiceName?: string;
  /** …or a container of the compose stack `stackName`. */
  containerId?: string;
  stackName?: string;
}

export interface RuntimeLogQuery {
  tail: number;
  since: string;
  search?: string;
}

/** The workload's newest lines, read by its server's agent. */
export async function readRuntimeLogs(
  client: AgentClient,
  target: RuntimeLogTarget,
  query: RuntimeLogQuery,
  logger?: Logger,
): Promise<string> {
  const { serverId, ...workload } = target;
  const logs = await callAgent(
    serverId,
    () =>
      client.readServiceLogs(
        serverId,
        {
          ...workload,
          tail: query.tail,
          sinceSeconds: sinceSeconds(query.since),
          search: query.search ?? "",
        },
        30_000,
      ),
    logger,
  );
  return formatRuntimeLogs(logs);
}

/** The last `tail` lines of a deployment's stored log (deployment.readLogs), as Dokploy's `tail -n`. */
export function tailLines(log: string, tail: number): string {
  if (log === "") return "";
  const lines = log.replace(/\n$/, "").split("\n");
  return `${lines.slice(-tail).join("\n")}\n`;
}
