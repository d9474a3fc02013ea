/**
 * swarm.* (Dokploy's router of the same name, issue 39): the Swarm of a server (this machine when
 * serverId is omitted) as Dokploy's docker CLI calls answer it, through that server's agent (a
 * Swarm manager).
 *
 * - getNodes: `docker node ls --format json` rows; getNodeInfo: one node's inspect object.
 * - getNodeApps: `docker service ls --format json` rows of the services the caller may see.
 * - getContainerStats: `docker stats --no-stream` rows of the running containers the caller may see.
 *
 * Tenancy: the server must be the caller's organization's (another's is a 404, as unknown). The
 * agent lists services and containers within the caller's scope (@platform/ownership): its
 * organization's; owners and admins (of the server's organization) also the unmanaged ones; the
 * platform's own never. A member restricted to some services (accessedServices) sees only those.
 * Access is docker.*'s rule: a member needs canAccessToDocker.
 */
import { z } from "zod";
import { callAgent } from "../agents/errors.ts";
import type { Caller, ServiceContext } from "../context.ts";
import { notFound } from "../errors.ts";
import { type EngineTarget, grantedTo, resolveEngineTarget } from "../servers/engine-target.ts";

/** A node id or a node's host name, as `docker node inspect` takes it. */
export const nodeRefSchema = z
  .string()
  .min(1)
  .max(253)
  .regex(/^[a-zA-Z0-9][a-zA-Z0-9._-]*$/, "must be a Swarm node id or host name");

export const nodeRowSchema = z.object({
  Availability: z.string(),
  EngineVersion: z.string(),
  Hostname: z.string(),
  ID: z.string(),
  ManagerStatus: z.string(),
  Self: z.boolean(),
  Status: z.string(),
  TLSStatus: z.string(),
});
export const nodeInfoSchema = z.looseObject({ ID: z.string() });
export const nodeAppSchema = z.object({
  ID: z.string(),
  Image: z.string(),
  Mode: z.string(),
  Name: z.string(),
  Ports: z.string(),
  Replicas: z.string(),
});
export const containerStatsRowSchema = z.object({
  BlockIO: z.string(),
  CPUPerc: z.string(),
  Container: z.string(),
  ID: z.string(),
  MemPerc: z.string(),
  MemUsage: z.string(),
  Name: z.string(),
  NetIO: z.string(),
});

// ---- nodes -----------------------------------------------------------------------------------

interface DockerNode {
  ID: string;
  Description?: { Hostname?: string; Engine?: { EngineVersion?: string }; TLSInfo?: { TrustRoot?: string } };
  Spec?: { Availability?: string };
  Status?: { State?: string };
  ManagerStatus?: { Leader?: boolean; Reachability?: string };
}

async function listNodes(ctx: ServiceContext, target: EngineTarget) {
  const list = await callAgent(
    target.agentServerId,
    () => ctx.agents.client.listNodes(target.agentServerId),
    ctx.logger,
  );
  return { nodes: list.nodeJson.map((json) => JSON.parse(json) as DockerNode), self: list.localNodeId };
}

const capitalized = (value: string | undefined) =>
  value ? `${value.charAt(0).toUpperCase()}${value.slice(1)}` : "";

/** `docker node ls`' ManagerStatus column: Leader, Reachable, Unreachable, or empty for a worker. */
function managerStatus(node: DockerNode): string {
  if (!node.ManagerStatus) return "";
  if (node.ManagerStatus.Leader) return "Leader";
  return capitalized(node.ManagerStatus.Reachability);
}

export async function getNodes(ctx: ServiceContext, caller: Caller, serverId?: string) {
  const target = await resolveEngineTarget(ctx, caller, serverId);
  const { nodes, self } = await listNodes(ctx, target);
  // A node whose trust root is not the cluster's (the manager's) still needs its certificate rotated.
  const trustRoot = nodes.find((node) => node.ID === self)?.Description?.TLSInfo?.TrustRoot;
  return nodes.map((node) => ({
    Availability: capitalized(node.Spec?.Availability),
    EngineVersion: node.Description?.Engine?.EngineVersion ?? "",
    Hostname: node.Description?.Hostname ?? "",
    ID: node.ID,
    ManagerStatus: managerStatus(node),
    Self: node.ID === self,
    Status: capitalized(node.Status?.State),
    TLSStatus:
      trustRoot === undefined || node.Description?.TLSInfo?.TrustRoot === trustRoot
        ? "Ready"
        : "Needs Rotation",
  }));
}

/** One node by id or host name; a node the Swarm does not have is a 404. */
export async function getNodeInfo(ctx: ServiceContext, caller: Caller, nodeId: string, serverId?: string) {
  const target = await resolveEngineTarget(ctx, caller, serverId);
  const { nodes } = await listNodes(ctx, target);
  const node =
    nodes.find((candidate) => candidate.ID === nodeId) ??
    nodes.find((candidate) => candidate.Description?.Hostname === nodeId);
  if (!node) throw notFound("Node");
  return node as DockerNode & Record<string, unknown>;
}

// ---- services --------------------------------------------------------------------------------

export async function getNodeApps(ctx: ServiceContext, caller: Caller, serverId?: string) {
  const target = await resolveEngineTarget(ctx, caller, serverId);
  const list = await callAgent(
    target.agentServerId,
    () => ctx.agents.client.call(target.agentServerId, "listSwarmServices", { scope: target.scope }),
    ctx.logger,
  );
  return list.services
    .filter((service) => grantedTo(service.labels, target))
    .map((service) => ({
      ID: service.id.slice(0, 12),
      Image: service.image,
      Mode: service.mode,
      Name: service.name,
      Ports: service.ports,
      Replicas: `${service.runningTasks}/${service.desiredTasks}`,
    }));
}

// ---- container stats -------------------------------------------------------------------------

const BINARY_UNITS = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];

/** Docker's BytesSize: binary units, 4 significant digits ("10.5MiB", "1.944GiB"). */
export function bytesSize(bytes: number): string {
  let size = Math.max(bytes, 0);
  let unit = 0;
  while (size >= 1024 && unit < BINARY_UNITS.length - 1) {
    size /= 1024;
    unit++;
  }
  return `${Number(size.toPrecision(4))}${BINARY_UNITS[unit]}`;
}

/** `docker stats`' NetIO and BlockIO: decimal units, 3 significant digits ("1.2kB"). */
export function ioSize(bytes: number): string {
  let size = Math.max(bytes, 0);
  let unit = 0;
  const units = ["B", "kB", "MB", "GB", "TB", "PB"];
  while (size >= 1000 && unit < units.length - 1) {
    size /= 1000;
    unit++;
  }
  return `${Number(size.toPrecision(3))}${units[unit]}`;
}

const percent = (value: number) => `${value.toFixed(2)}%`;

export async function getContainerStats(ctx: ServiceContext, caller: Caller, serverId?: string) {
  const target = await resolveEngineTarget(ctx, caller, serverId);
  const list = await callAgent(
    target.agentServerId,
    // Each sample waits about a second for the engine's CPU delta; many containers take longer.
    () => ctx.agents.client.call(target.agentServerId, "allContainerStats", { scope: target.scope }, 60_000),
    ctx.logger,
  );
  return list.containers
    .filter((container) => grantedTo(container.labels, target))
    .map((container) => ({
      BlockIO: `${ioSize(container.blockReadBytes)} / ${ioSize(container.blockWriteBytes)}`,
      CPUPerc: percent(container.cpuPercent),
      Container: container.id.slice(0, 12),
      ID: container.id.slice(0, 12),
      MemPerc: percent(
        container.memoryLimitBytes > 0 ? (container.memoryUsageBytes / container.memoryLimitBytes) * 100 : 0,
      ),
      MemUsage: `${bytesSize(container.memoryUsageBytes)} / ${bytesSize(container.memoryLimitBytes)}`,
      Name: container.name,
      NetIO: `${ioSize(container.networkRxBytes)} / ${ioSize(container.networkTxBytes)}`,
    }));
}
