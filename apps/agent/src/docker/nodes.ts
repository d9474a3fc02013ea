/**
 * The Swarm nodes of the engine (cluster.*): list them, hand out the join token, join or leave a
 * Swarm, change a node (availability, role, labels) and remove one. Node ids, roles and
 * availabilities are checked before the engine is called. The join token is a secret: it is
 * never logged, and engine errors that could echo it are rewritten without it.
 */
import type {
  JoinSwarmCommand,
  NodeList,
  NodeRemoved,
  NodeUpdated,
  SwarmJoined,
  SwarmJoinToken,
  SwarmLeft,
  UpdateNodeCommand,
} from "@platform/agent-protocol";
import { isPlatformInternal } from "@platform/ownership";
import type Docker from "dockerode";
import { CommandError } from "../command-error.ts";
import { engineMessage, engineStatus } from "./engine.ts";

const NODE_ID = /^[a-z0-9]{1,64}$/;
const AVAILABILITIES = new Set(["active", "pause", "drain"]);
const ROLES = new Set(["worker", "manager"]);
const ADDRESS = /^[a-zA-Z0-9.\-:[\]]{1,255}$/;
/** Docker's label key/value characters (no control characters), bounded. */
const LABEL_KEY = /^[a-zA-Z0-9][a-zA-Z0-9._\-/]{0,127}$/;
const SWARM_PORT = 2377;

interface SwarmInfo {
  LocalNodeState?: string;
  NodeID?: string;
  NodeAddr?: string;
  ControlAvailable?: boolean;
  RemoteManagers?: { Addr?: string }[] | null;
}

async function swarmInfo(docker: Docker): Promise<SwarmInfo> {
  const info = (await docker.info()) as { Swarm?: SwarmInfo };
  return info.Swarm ?? {};
}

/** Refuses a command that needs this engine to be a Swarm manager when it is not one. */
async function requireManager(docker: Docker): Promise<SwarmInfo> {
  const swarm = await swarmInfo(docker);
  if (swarm.LocalNodeState !== "active") {
    throw new CommandError("FAILED_PRECONDITION", "this server's Docker Engine is not in a Swarm");
  }
  if (!swarm.ControlAvailable) {
    throw new CommandError(
      "FAILED_PRECONDITION",
      "this server is a Swarm worker: only a manager knows the nodes",
    );
  }
  return swarm;
}

export function assertNodeId(nodeId: string): string {
  if (!NODE_ID.test(nodeId)) throw new CommandError("INVALID_ARGUMENT", "invalid node id");
  return nodeId;
}

export async function listNodes(docker: Docker): Promise<NodeList> {
  const swarm = await requireManager(docker);
  const nodes = (await docker.listNodes()) as { Description?: { Hostname?: string }; ID: string }[];
  nodes.sort(
    (a, b) =>
      (a.Description?.Hostname ?? "").localeCompare(b.Description?.Hostname ?? "") ||
      a.ID.localeCompare(b.ID),
  );
  return { nodeJson: nodes.map((node) => JSON.stringify(node)), localNodeId: swarm.NodeID ?? "" };
}

export async function swarmJoinToken(docker: Docker, manager: boolean): Promise<SwarmJoinToken> {
  const swarm = await requireManager(docker);
  const inspect = (await docker.swarmInspect()) as { JoinTokens: { Worker: string; Manager: string } };
  const version = await docker.version();
  return {
    token: manager ? inspect.JoinTokens.Manager : inspect.JoinTokens.Worker,
    address: `${swarm.NodeAddr ?? ""}:${SWARM_PORT}`,
    engineVersion: version.Version,
  };
}

export async function joinSwarm(docker: Docker, command: JoinSwarmCommand): Promise<SwarmJoined> {
  if (!/^SWMTKN-[A-Za-z0-9-]{10,200}$/.test(command.token)) {
    throw new CommandError("INVALID_ARGUMENT", "invalid join token");
  }
  if (!ADDRESS.test(command.remoteAddress))
    throw new CommandError("INVALID_ARGUMENT", "invalid remote address");
  if (command.advertiseAddress && !ADDRESS.test(command.advertiseAddress)) {
    throw new CommandError("INVALID_ARGUMENT", "invalid advertise address");
  }
  // Joined already (a control plane that died between the join and labelling the node asks
  // again): the same node, so that asking again completes the join instead of failing.
  const current = await swarmInfo(docker);
  if (
    current.LocalNodeState === "active" &&
    current.RemoteManagers?.some((manager) => manager.Addr === command.remoteAddress)
  ) {
    return { nodeId: current.NodeID ?? "" };
  }
  await leaveOwnSwarm(docker);
  try {
    await docker.swarmJoin({
      JoinToken: command.token,
      RemoteAddrs: [command.remoteAddress],
      ListenAddr: "0.0.0.0:2377",
      ...(command.advertiseAddress ? { AdvertiseAddr: command.advertiseAddress } : {}),
    });
  } catch (error) {
    // Never let the token reach a reply or a log line through the engine's message.
    const message = engineMessage(error).split(command.token).join("<token>");
    throw new CommandError("FAILED", `joining the Swarm failed: ${message}`);
  }
  return { nodeId: (await swarmInfo(docker)).NodeID ?? "" };
}

/**
 * A server set up by the platform is the sole manager of its own Swarm: it leaves that Swarm
 * before joining another, when nothing but the platform's own services (the proxy) runs in it.
 * An engine in a Swarm of several nodes, or running other services, is refused.
 */
async function leaveOwnSwarm(docker: Docker): Promise<void> {
  const info = (await docker.info()) as { Swarm?: SwarmInfo & { Nodes?: number } };
  const swarm = info.Swarm ?? {};
  if (swarm.LocalNodeState !== "active" && swarm.LocalNodeState !== "pending") return;
  if (!swarm.ControlAvailable || (swarm.Nodes ?? 0) > 1) {
    throw new CommandError(
      "FAILED_PRECONDITION",
      "this server's Docker Engine is already in a Swarm of several nodes",
    );
  }
  const services = (await docker.listServices()) as {
    Spec?: { Name?: string; Labels?: Record<string, string> };
  }[];
  const own = services.filter(
    (service) => !isPlatformInternal(service.Spec?.Labels, [service.Spec?.Name ?? ""]),
  );
  if (own.length > 0) {
    throw new CommandError(
      "FAILED_PRECONDITION",
      `this server runs ${own.length} service(s) in its own Swarm: remove or move them before it joins another`,
    );
  }
  await docker.swarmLeave({ force: true });
}

export async function updateNode(docker: Docker, command: UpdateNodeCommand): Promise<NodeUpdated> {
  const nodeId = assertNodeId(command.nodeId);
  if (command.availability && !AVAILABILITIES.has(command.availability)) {
    throw new CommandError("INVALID_ARGUMENT", "availability must be active, pause or drain");
  }
  if (command.role && !ROLES.has(command.role)) {
    throw new CommandError("INVALID_ARGUMENT", "role must be worker or manager");
  }
  for (const [key, value] of Object.entries(command.labels)) {
    if (!LABEL_KEY.test(key) || value.length > 1024 || [...value].some((c) => c < " ")) {
      throw new CommandError("INVALID_ARGUMENT", `invalid node label ${JSON.stringify(key.slice(0, 64))}`);
    }
  }
  await requireManager(docker);
  const node = docker.getNode(nodeId);
  // Swarm refuses a stale version: read, change and write again when another update came first.
  for (let attempt = 1; ; attempt++) {
    const current = (await node.inspect()) as {
      Version: { Index: number };
      Spec: { Role: string; Availability: string; Labels?: Record<string, string>; Name?: string };
    };
    const spec = {
      ...current.Spec,
      ...(command.availability ? { Availability: command.availability } : {}),
      ...(command.role ? { Role: command.role } : {}),
      ...(command.setLabels ? { Labels: command.labels } : {}),
    };
    try {
      await node.update({ _query: { version: current.Version.Index }, _body: spec } as never);
      break;
    } catch (error) {
      if (attempt >= 3 || !/update out of sequence/i.test(engineMessage(error))) throw error;
    }
  }
  return { nodeJson: JSON.stringify(await node.inspect()) };
}

export async function removeNode(docker: Docker, nodeId: string): Promise<NodeRemoved> {
  assertNodeId(nodeId);
  const swarm = await requireManager(docker);
  if (nodeId === swarm.NodeID) {
    throw new CommandError(
      "FAILED_PRECONDITION",
      "a manager cannot remove its own node: demote it from another manager",
    );
  }
  try {
    await updateNode(docker, { nodeId, availability: "drain", role: "", labels: {}, setLabels: false });
    await docker.getNode(nodeId).remove({ force: true });
  } catch (error) {
    if (engineStatus(error) === 404) return { removed: false };
    throw error;
  }
  return { removed: true };
}

export async function leaveSwarm(docker: Docker): Promise<SwarmLeft> {
  const swarm = await swarmInfo(docker);
  if (swarm.LocalNodeState !== "active" && swarm.LocalNodeState !== "pending") return { left: false };
  await docker.swarmLeave({ force: true });
  return { left: true };
}
