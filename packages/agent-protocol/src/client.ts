/**
 * AgentClient: the control plane's typed way to run a command on a server's agent over any
 * AgentTransport. It fills in the request id and deadline, and turns an error reply into an
 * AgentCommandError, so callers get the result object or an exception.
 */
import { randomUUID } from "node:crypto";
import { assertValidName, assertValidServerId } from "@platform/names";
import { AgentCommandError, AgentProtocolError } from "./errors.ts";
import {
  type CommandInput,
  type CommandName,
  type CommandReply,
  type CommandRequestInput,
  type CommandTable,
  type Container,
  type ContainerScope,
  type ContainerStats,
  type Init,
  type ProxyFileHolder,
  type ProxyFileScope,
  RESULT_NAME_OF_COMMAND,
  type RegistryAuth,
  type ResourceOwner,
  type ResultOfCommand,
  type ServiceAction,
} from "./messages.ts";
import type { AgentTransport } from "./transport.ts";

export const DEFAULT_COMMAND_TIMEOUT_MS = 10_000;

/** The command message a sender gives for command K: any field may be left out (see Init). */
export type CommandArgs<K extends CommandName> = Init<CommandTable[K]["command"]>;

/** A request for `serverId` with a fresh id and a deadline `timeoutMs` from now. */
export function makeCommandRequest(
  serverId: string,
  command: CommandInput,
  timeoutMs: number,
  nowUnixMs = Date.now(),
): CommandRequestInput {
  return { requestId: randomUUID(), serverId, deadlineUnixMs: nowUnixMs + timeoutMs, ...command };
}

/** The request for command `name` with its message, as makeCommandRequest takes it. */
export function commandInput<K extends CommandName>(name: K, command: CommandArgs<K>): CommandInput {
  return { command: name, [name]: command } as unknown as CommandInput;
}

/** The result a reply carries for `command`, or an AgentCommandError for an error reply. */
export function resultOf<C extends CommandName>(
  reply: CommandReply,
  command: C,
  serverId: string,
): ResultOfCommand[C] {
  if (reply.result === "error") {
    throw new AgentCommandError(reply.error.code, reply.error.message, serverId, command);
  }
  const expected = RESULT_NAME_OF_COMMAND[command];
  if (reply.result !== expected) {
    throw new AgentProtocolError(`${command} was answered with a ${reply.result} result`);
  }
  return (reply as unknown as Record<string, ResultOfCommand[C]>)[expected]!;
}

/**
 * Every command of the protocol is `call(serverId, name, message)`, typed by the generated
 * command table; the named methods below add the checks and defaults of their callers.
 */
export class AgentClient {
  constructor(
    readonly transport: AgentTransport,
    readonly defaultTimeoutMs = DEFAULT_COMMAND_TIMEOUT_MS,
  ) {}

  /** Runs command `name` and returns its result. */
  async call<K extends CommandName>(
    serverId: string,
    name: K,
    command: CommandArgs<K>,
    timeoutMs = this.defaultTimeoutMs,
  ): Promise<ResultOfCommand[K]> {
    assertValidServerId(serverId);
    const request = makeCommandRequest(serverId, commandInput(name, command), timeoutMs);
    const reply = await this.transport.request(serverId, request, timeoutMs);
    return resultOf(reply, name, serverId);
  }

  ping(serverId: string, timeoutMs?: number) {
    return this.call(serverId, "ping", {}, timeoutMs);
  }

  validateServer(serverId: string, timeoutMs?: number) {
    return this.call(serverId, "validateServer", {}, timeoutMs);
  }

  securityAudit(serverId: string, timeoutMs?: number) {
    return this.call(serverId, "securityAudit", {}, timeoutMs);
  }

  async listContainers(
    serverId: string,
    filter: CommandArgs<"listContainers"> = {},
    timeoutMs?: number,
  ): Promise<Container[]> {
    return (await this.call(serverId, "listContainers", filter, timeoutMs)).containers;
  }

  /** The container's inspect data; one outside `scope` is answered NOT_FOUND by the agent. */
  inspectContainer(serverId: string, containerId: string, scope: ContainerScope, timeoutMs?: number) {
    assertValidName(containerId, "container id");
    return this.call(serverId, "inspectContainer", { containerId, scope }, timeoutMs);
  }

  restartContainer(
    serverId: string,
    containerId: string,
    scope: ContainerScope,
    options: { stopTimeoutSeconds?: number; timeoutMs?: number } = {},
  ) {
    assertValidName(containerId, "container id");
    const { stopTimeoutSeconds = 0, timeoutMs } = options;
    return this.call(serverId, "restartContainer", { containerId, scope, stopTimeoutSeconds }, timeoutMs);
  }

  // ---- deployments ----

  /** Builds (and pushes) an image; progress goes to the command's log stream. */
  buildImage(serverId: string, command: CommandArgs<"buildImage">, timeoutMs: number) {
    assertValidName(command.appName ?? "", "appName");
    return this.call(serverId, "buildImage", command, timeoutMs);
  }

  /** Creates or updates an application's Swarm service and waits for its new tasks. */
  deployService(serverId: string, command: CommandArgs<"deployService">, timeoutMs: number) {
    assertValidName(command.spec?.name ?? "", "service name");
    return this.call(serverId, "deployService", command, timeoutMs);
  }

  serviceAction(
    serverId: string,
    serviceName: string,
    action: ServiceAction,
    options: { replicas?: number; timeoutMs?: number; owner?: ResourceOwner; removeVolumes?: string[] } = {},
  ) {
    assertValidName(serviceName, "service name");
    const { replicas = 0, owner, removeVolumes = [], timeoutMs } = options;
    for (const volume of removeVolumes) assertValidName(volume, "volume name");
    return this.call(
      serverId,
      "serviceAction",
      { serviceName, action, replicas, owner, removeVolumes },
      timeoutMs,
    );
  }

  /** Deploys a compose stack from its converted file and waits for its tasks. */
  deployStack(serverId: string, command: CommandArgs<"deployStack">, timeoutMs: number) {
    assertValidName(command.appName ?? "", "appName");
    return this.call(serverId, "deployStack", command, timeoutMs);
  }

  /** Starts, stops, removes or reads the services of a compose stack. */
  stackAction(serverId: string, command: CommandArgs<"stackAction">, timeoutMs?: number) {
    assertValidName(command.appName ?? "", "appName");
    return this.call(serverId, "stackAction", command, timeoutMs);
  }

  /** Stops the running build or deploy of job `jobId` (a deployment id). */
  /** Stops a job; with `waitMs`, the answer says whether it has ended (`ended`) within that time. */
  cancelJob(serverId: string, jobId: string, timeoutMs?: number, waitMs = 0) {
    return this.call(serverId, "cancelJob", { jobId, waitMs }, timeoutMs);
  }

  /**
   * A job's outcome: ENDED with its result (or error) once it ended, RUNNING when it still runs
   * after `waitMs`, UNKNOWN when this agent neither runs it nor kept its outcome (it restarted).
   */
  awaitJob(serverId: string, jobId: string, waitMs: number, timeoutMs = waitMs + 5000) {
    return this.call(serverId, "awaitJob", { jobId, waitMs }, timeoutMs);
  }

  /** Docker's state of some services (by appName) and which of `jobIds` the agent is running. */
  observeServices(serverId: string, command: CommandArgs<"observeServices">, timeoutMs?: number) {
    for (const name of command.serviceNames ?? []) assertValidName(name, "service name");
    return this.call(serverId, "observeServices", command, timeoutMs);
  }

  /** Changes a database user's name or password inside the running database of a service. */
  changeDatabaseCredentials(
    serverId: string,
    command: CommandArgs<"changeDatabaseCredentials">,
    timeoutMs?: number,
  ) {
    assertValidName(command.serviceName ?? "", "service name");
    return this.call(serverId, "changeDatabaseCredentials", command, timeoutMs);
  }

  /** Tags the image a deployment ran as a kept rollback image (and pushes it with a registry). */
  keepRollbackImage(serverId: string, command: CommandArgs<"keepRollbackImage">, timeoutMs?: number) {
    return this.call(serverId, "keepRollbackImage", command, timeoutMs);
  }

  /** Keeps the images a compose stack's services run for a rollback of the stack. */
  keepStackRollbackImages(
    serverId: string,
    command: CommandArgs<"keepStackRollbackImages">,
    timeoutMs?: number,
  ) {
    return this.call(serverId, "keepStackRollbackImages", command, timeoutMs);
  }

  /** One file of a repository's branch, cloned by the server's agent. */
  readRepositoryFile(serverId: string, command: CommandArgs<"readRepositoryFile">, timeoutMs?: number) {
    return this.call(serverId, "readRepositoryFile", command, timeoutMs);
  }

  /** The paths of a repository's branch, cloned by the server's agent (patch.readRepoDirectories). */
  listRepositoryFiles(serverId: string, command: CommandArgs<"listRepositoryFiles">, timeoutMs?: number) {
    return this.call(serverId, "listRepositoryFiles", command, timeoutMs);
  }

  /** Whether a kept rollback image is still on the server. */
  rollbackImageStatus(serverId: string, image: string, timeoutMs?: number) {
    return this.call(serverId, "rollbackImageStatus", { image }, timeoutMs);
  }

  /** Untags kept rollback images; missing ones are fine. */
  removeRollbackImages(serverId: string, images: string[], timeoutMs?: number) {
    return this.call(serverId, "removeRollbackImages", { images }, timeoutMs);
  }

  cleanBuildCache(serverId: string, timeoutMs?: number) {
    return this.call(serverId, "cleanBuildCache", {}, timeoutMs);
  }

  /** Logs in to a registry through the server's Docker Engine; the registry's refusal is an error. */
  registryLogin(serverId: string, auth: RegistryAuth, timeoutMs?: number) {
    return this.call(serverId, "registryLogin", { auth }, timeoutMs);
  }

  /** One sample of the resource use of the running containers of a Swarm service. */
  async containerStats(
    serverId: string,
    swarmServiceName: string,
    owner: ResourceOwner,
    timeoutMs?: number,
  ): Promise<ContainerStats[]> {
    assertValidName(swarmServiceName, "service name");
    return (await this.call(serverId, "containerStats", { swarmServiceName, owner }, timeoutMs)).containers;
  }

  /** Applies a monitoring configuration (JSON of metricsConfig) on the server, live. */
  setupMonitoring(serverId: string, metricsConfigJson: string, timeoutMs?: number) {
    return this.call(serverId, "setupMonitoring", { metricsConfigJson }, timeoutMs);
  }

  /** The newest stored metrics of one service's containers labelled for `organizationId`. */
  readContainerMetrics(serverId: string, command: CommandArgs<"readContainerMetrics">, timeoutMs?: number) {
    assertValidName(command.appName ?? "", "appName");
    return this.call(serverId, "readContainerMetrics", command, timeoutMs);
  }

  // ---- proxy ----

  // Dynamic and certificate files name their holder: a tenant's owner or { platformFile: true }.

  writeProxyFile(
    serverId: string,
    scope: ProxyFileScope,
    fileName: string,
    content: string,
    holder: ProxyFileHolder = {},
    timeoutMs?: number,
  ) {
    return this.call(serverId, "writeProxyFile", { scope, fileName, content, ...holder }, timeoutMs);
  }

  readProxyFile(
    serverId: string,
    scope: ProxyFileScope,
    fileName: string,
    holder: ProxyFileHolder = {},
    timeoutMs?: number,
  ) {
    return this.call(serverId, "readProxyFile", { scope, fileName, ...holder }, timeoutMs);
  }

  removeProxyFile(
    serverId: string,
    scope: ProxyFileScope,
    fileName: string,
    holder: ProxyFileHolder = {},
    timeoutMs?: number,
  ) {
    return this.call(serverId, "removeProxyFile", { scope, fileName, ...holder }, timeoutMs);
  }

  /** Creates or updates the proxy's Swarm service. */
  ensureProxy(serverId: string, command: CommandArgs<"ensureProxy">, timeoutMs?: number) {
    return this.call(serverId, "ensureProxy", command, timeoutMs);
  }

  reloadProxy(serverId: string, timeoutMs?: number) {
    return this.call(serverId, "reloadProxy", {}, timeoutMs);
  }

  /** The proxy's Swarm service as Docker runs it (published ports, environment); changes nothing. */
  inspectProxy(serverId: string, timeoutMs?: number) {
    return this.call(serverId, "inspectProxy", {}, timeoutMs);
  }

  /** Replaces the proxy service's extra published ports and/or environment in place. */
  updateProxyService(serverId: string, command: CommandArgs<"updateProxyService">, timeoutMs?: number) {
    return this.call(serverId, "updateProxyService", command, timeoutMs);
  }

  /** The proxy's dynamic configuration files and who holds each; changes nothing. */
  listProxyFiles(serverId: string, timeoutMs?: number) {
    return this.call(serverId, "listProxyFiles", {}, timeoutMs);
  }

  /** A schedule's command in one of its service's containers (a job: cancelJob stops it). */
  runSchedule(serverId: string, command: CommandArgs<"runSchedule">, timeoutMs?: number) {
    return this.call(serverId, "runSchedule", command, timeoutMs);
  }

  /** An instance administrator's script on the server itself (a job: cancelJob stops it). */
  runHostScript(serverId: string, command: CommandArgs<"runHostScript">, timeoutMs?: number) {
    return this.call(serverId, "runHostScript", command, timeoutMs);
  }

  /** The newest lines of an owner's Swarm service or compose container (the readLogs procedures). */
  readServiceLogs(serverId: string, command: CommandArgs<"readServiceLogs">, timeoutMs?: number) {
    return this.call(serverId, "readServiceLogs", command, timeoutMs);
  }

  /** Starts following an owner's workload's output (published on its log stream's subject). */
  followServiceLogs(serverId: string, command: CommandArgs<"followServiceLogs">, timeoutMs?: number) {
    return this.call(serverId, "followServiceLogs", command, timeoutMs);
  }

  /** Extends (or, with stop, ends) a follower's lease; `following` false when there is none. */
  renewLogFollow(serverId: string, command: CommandArgs<"renewLogFollow">, timeoutMs?: number) {
    return this.call(serverId, "renewLogFollow", command, timeoutMs);
  }

  /** One filtered, sorted page of the proxy's access log. */
  readAccessLog(serverId: string, command: CommandArgs<"readAccessLog">, timeoutMs?: number) {
    return this.call(serverId, "readAccessLog", command, timeoutMs);
  }

  /** Empties the proxy's access log in place (settings.updateLogCleanup's scheduled cleanup). */
  cleanAccessLog(serverId: string, timeoutMs?: number) {
    return this.call(serverId, "cleanAccessLog", {}, timeoutMs);
  }

  /** Deletes every stored metrics sample of the agent (settings.cleanMonitoring). */
  cleanMonitoring(serverId: string, timeoutMs?: number) {
    return this.call(serverId, "cleanMonitoring", {}, timeoutMs);
  }

  /** The engine's state and the metrics store's system samples of the last hours. */
  serverHealth(serverId: string, command: CommandArgs<"serverHealth">, timeoutMs?: number) {
    return this.call(serverId, "serverHealth", command, timeoutMs);
  }

  /** Restarts the control plane's Swarm service, or rolls it to an image. */
  restartControlPlane(serverId: string, command: CommandArgs<"restartControlPlane">, timeoutMs?: number) {
    return this.call(serverId, "restartControlPlane", command, timeoutMs);
  }

  /** What the server offers NVIDIA GPUs with: driver, CUDA, container runtime, Swarm resource. */
  checkGpu(serverId: string, timeoutMs?: number) {
    return this.call(serverId, "checkGpu", {}, timeoutMs);
  }

  /** Configures the engine for NVIDIA GPUs (daemon.json); refused without driver or runtime. */
  setupGpu(serverId: string, timeoutMs?: number) {
    return this.call(serverId, "setupGpu", {}, timeoutMs);
  }

  /** Removes unused Docker objects of one organization, or of the whole engine. */
  cleanDocker(serverId: string, command: CommandArgs<"cleanDocker">, timeoutMs?: number) {
    return this.call(serverId, "cleanDocker", command, timeoutMs);
  }

  /** Dumps a database into object storage (a job: cancelJob stops it). */
  backupDatabase(serverId: string, command: CommandArgs<"backupDatabase">, timeoutMs: number) {
    return this.call(serverId, "backupDatabase", command, timeoutMs);
  }

  /** Restores a backup object into a database (or a throwaway container of its image). */
  restoreDatabase(serverId: string, command: CommandArgs<"restoreDatabase">, timeoutMs: number) {
    return this.call(serverId, "restoreDatabase", command, timeoutMs);
  }

  /** Archives a named volume into object storage (a job: cancelJob stops it). */
  backupVolume(serverId: string, command: CommandArgs<"backupVolume">, timeoutMs: number) {
    return this.call(serverId, "backupVolume", command, timeoutMs);
  }

  /** Restores a volume archive from object storage into a named volume (a job). */
  restoreVolume(serverId: string, command: CommandArgs<"restoreVolume">, timeoutMs: number) {
    return this.call(serverId, "restoreVolume", command, timeoutMs);
  }

  // ---- clusters ----

  /** The nodes of the Swarm the server manages. */
  listNodes(serverId: string, timeoutMs?: number) {
    return this.call(serverId, "listNodes", {}, timeoutMs);
  }

  /** The join token (a secret: never log it) and address of the server's Swarm. */
  swarmJoinToken(serverId: string, manager: boolean, timeoutMs?: number) {
    return this.call(serverId, "swarmJoinToken", { manager }, timeoutMs);
  }

  /** The server's engine joins a Swarm. */
  joinSwarm(serverId: string, command: CommandArgs<"joinSwarm">, timeoutMs?: number) {
    return this.call(serverId, "joinSwarm", command, timeoutMs);
  }

  /** Changes a node's availability, role or labels (the server manages its Swarm). */
  updateNode(serverId: string, command: CommandArgs<"updateNode">, timeoutMs?: number) {
    return this.call(serverId, "updateNode", command, timeoutMs);
  }

  /** Drains and removes a node from the server's Swarm. */
  removeNode(serverId: string, nodeId: string, timeoutMs?: number) {
    return this.call(serverId, "removeNode", { nodeId }, timeoutMs);
  }

  /** The server's engine leaves its Swarm. */
  leaveSwarm(serverId: string, timeoutMs?: number) {
    return this.call(serverId, "leaveSwarm", {}, timeoutMs);
  }
}
