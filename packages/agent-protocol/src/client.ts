/**
 * AgentClient: the control plane's typed way to run a command on a server's agent over any
 * AgentTransport. It fills in the request id and deadline, and turns an error reply into an
 * AgentCommandError, so callers get the result object or an exception.
 */
import { randomUUID } from "node:crypto";
import { AgentCommandError, AgentProtocolError } from "./errors.ts";
import {
  type AccessLogPage,
  type BackupDatabaseCommand,
  type BackupDatabaseResult,
  type BackupVolumeCommand,
  type BackupVolumeResult,
  type BuildImageCommand,
  type BuildImageResult,
  type CancelJobResult,
  type ChangeDatabaseCredentialsCommand,
  type CleanBuildCacheResult,
  type CleanDockerCommand,
  type Command,
  type CommandName,
  type CommandReply,
  type CommandRequest,
  type Container,
  type ContainerConfig,
  type ContainerMetricsList,
  type ContainerScope,
  type ContainerStats,
  type DatabaseCredentialsChanged,
  type DeployServiceCommand,
  type DeployServiceResult,
  type DeployStackCommand,
  type DeployStackResult,
  type DockerCleanupResult,
  type EnsureProxyCommand,
  type JoinSwarmCommand,
  type KeepRollbackImageCommand,
  type KeepStackRollbackImagesCommand,
  type ListContainersCommand,
  type MonitoringSetUp,
  type NodeList,
  type NodeRemoved,
  type NodeUpdated,
  type ObservedServices,
  type ObserveServicesCommand,
  type PingResult,
  type ProxyFile,
  type ProxyFileHolder,
  type ProxyFileRemoved,
  type ProxyFileScope,
  type ProxyFileWritten,
  type ProxyReloaded,
  type ProxyService,
  RESULT_NAME_OF_COMMAND,
  type ReadAccessLogCommand,
  type ReadContainerMetricsCommand,
  type ReadRepositoryFileCommand,
  type RegistryAuth,
  type RegistryLoginResult,
  type RepositoryFile,
  type ResourceOwner,
  type RestartContainerResult,
  type RestoreDatabaseCommand,
  type RestoreDatabaseResult,
  type RestoreVolumeCommand,
  type RestoreVolumeResult,
  type ResultOfCommand,
  type RollbackImageKept,
  type RollbackImageStatus,
  type RollbackImagesRemoved,
  type RunHostScriptCommand,
  type RunScheduleCommand,
  type ScheduledCommandResult,
  type SecurityAuditResult,
  type ServiceAction,
  type ServiceActionResult,
  type StackActionCommand,
  type StackActionResult,
  type StackRollbackImagesKept,
  type SwarmJoined,
  type SwarmJoinToken,
  type SwarmLeft,
  type UpdateNodeCommand,
  type ValidateServerResult,
} from "./messages.ts";
import { assertValidName, assertValidServerId } from "./names.ts";
import type { AgentTransport } from "./transport.ts";

export const DEFAULT_COMMAND_TIMEOUT_MS = 10_000;

/** A request for `serverId` with a fresh id and a deadline `timeoutMs` from now. */
export function makeCommandRequest(
  serverId: string,
  command: Command,
  timeoutMs: number,
  nowUnixMs = Date.now(),
): CommandRequest {
  return { requestId: randomUUID(), serverId, deadlineUnixMs: nowUnixMs + timeoutMs, ...command };
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

export class AgentClient {
  constructor(
    readonly transport: AgentTransport,
    readonly defaultTimeoutMs = DEFAULT_COMMAND_TIMEOUT_MS,
  ) {}

  /** Runs any command and returns its result. */
  async run<C extends Command>(
    serverId: string,
    command: C,
    timeoutMs = this.defaultTimeoutMs,
  ): Promise<ResultOfCommand[C["command"]]> {
    assertValidServerId(serverId);
    const request = makeCommandRequest(serverId, command, timeoutMs);
    const reply = await this.transport.request(serverId, request, timeoutMs);
    return resultOf(reply, command.command as C["command"], serverId);
  }

  ping(serverId: string, timeoutMs?: number): Promise<PingResult> {
    return this.run(serverId, { command: "ping", ping: {} }, timeoutMs);
  }

  validateServer(serverId: string, timeoutMs?: number): Promise<ValidateServerResult> {
    return this.run(serverId, { command: "validateServer", validateServer: {} }, timeoutMs);
  }

  securityAudit(serverId: string, timeoutMs?: number): Promise<SecurityAuditResult> {
    return this.run(serverId, { command: "securityAudit", securityAudit: {} }, timeoutMs);
  }

  async listContainers(
    serverId: string,
    filter: ListContainersCommand = {},
    timeoutMs?: number,
  ): Promise<Container[]> {
    const list = await this.run(serverId, { command: "listContainers", listContainers: filter }, timeoutMs);
    return list.containers;
  }

  /** The container's inspect data; one outside `scope` is answered NOT_FOUND by the agent. */
  inspectContainer(
    serverId: string,
    containerId: string,
    scope: ContainerScope,
    timeoutMs?: number,
  ): Promise<ContainerConfig> {
    assertValidName(containerId, "container id");
    return this.run(
      serverId,
      { command: "inspectContainer", inspectContainer: { containerId, scope } },
      timeoutMs,
    );
  }

  restartContainer(
    serverId: string,
    containerId: string,
    scope: ContainerScope,
    options: { stopTimeoutSeconds?: number; timeoutMs?: number } = {},
  ): Promise<RestartContainerResult> {
    assertValidName(containerId, "container id");
    const restartContainer = { containerId, scope, stopTimeoutSeconds: options.stopTimeoutSeconds ?? 0 };
    return this.run(serverId, { command: "restartContainer", restartContainer }, options.timeoutMs);
  }

  // ---- deployments ----

  /** Builds (and pushes) an image; progress goes to the command's log stream. */
  buildImage(serverId: string, command: BuildImageCommand, timeoutMs: number): Promise<BuildImageResult> {
    assertValidName(command.appName, "appName");
    return this.run(serverId, { command: "buildImage", buildImage: command }, timeoutMs);
  }

  /** Creates or updates an application's Swarm service and waits for its new tasks. */
  deployService(
    serverId: string,
    command: DeployServiceCommand,
    timeoutMs: number,
  ): Promise<DeployServiceResult> {
    assertValidName(command.spec.name, "service name");
    return this.run(serverId, { command: "deployService", deployService: command }, timeoutMs);
  }

  serviceAction(
    serverId: string,
    serviceName: string,
    action: ServiceAction,
    options: { replicas?: number; timeoutMs?: number; owner?: ResourceOwner; removeVolumes?: string[] } = {},
  ): Promise<ServiceActionResult> {
    assertValidName(serviceName, "service name");
    for (const volume of options.removeVolumes ?? []) assertValidName(volume, "volume name");
    const serviceAction = {
      serviceName,
      action,
      replicas: options.replicas ?? 0,
      ...(options.owner ? { owner: options.owner } : {}),
      ...(options.removeVolumes?.length ? { removeVolumes: options.removeVolumes } : {}),
    };
    return this.run(serverId, { command: "serviceAction", serviceAction }, options.timeoutMs);
  }

  /** Deploys a compose stack from its converted file and waits for its tasks. */
  deployStack(serverId: string, command: DeployStackCommand, timeoutMs: number): Promise<DeployStackResult> {
    assertValidName(command.appName, "appName");
    return this.run(serverId, { command: "deployStack", deployStack: command }, timeoutMs);
  }

  /** Starts, stops, removes or reads the services of a compose stack. */
  stackAction(serverId: string, command: StackActionCommand, timeoutMs?: number): Promise<StackActionResult> {
    assertValidName(command.appName, "appName");
    return this.run(serverId, { command: "stackAction", stackAction: command }, timeoutMs);
  }

  /** Stops the running build or deploy of job `jobId` (a deployment id). */
  cancelJob(serverId: string, jobId: string, timeoutMs?: number): Promise<CancelJobResult> {
    return this.run(serverId, { command: "cancelJob", cancelJob: { jobId } }, timeoutMs);
  }

  /** Docker's state of some services (by appName) and which of `jobIds` the agent is running. */
  observeServices(
    serverId: string,
    command: ObserveServicesCommand,
    timeoutMs?: number,
  ): Promise<ObservedServices> {
    for (const name of command.serviceNames) assertValidName(name, "service name");
    return this.run(serverId, { command: "observeServices", observeServices: command }, timeoutMs);
  }

  /** Changes a database user's name or password inside the running database of a service. */
  changeDatabaseCredentials(
    serverId: string,
    command: ChangeDatabaseCredentialsCommand,
    timeoutMs?: number,
  ): Promise<DatabaseCredentialsChanged> {
    assertValidName(command.serviceName, "service name");
    return this.run(
      serverId,
      { command: "changeDatabaseCredentials", changeDatabaseCredentials: command },
      timeoutMs,
    );
  }

  /** Tags the image a deployment ran as a kept rollback image (and pushes it with a registry). */
  keepRollbackImage(
    serverId: string,
    command: KeepRollbackImageCommand,
    timeoutMs?: number,
  ): Promise<RollbackImageKept> {
    return this.run(serverId, { command: "keepRollbackImage", keepRollbackImage: command }, timeoutMs);
  }

  /** Keeps the images a compose stack's services run for a rollback of the stack. */
  keepStackRollbackImages(
    serverId: string,
    command: KeepStackRollbackImagesCommand,
    timeoutMs?: number,
  ): Promise<StackRollbackImagesKept> {
    return this.run(
      serverId,
      { command: "keepStackRollbackImages", keepStackRollbackImages: command },
      timeoutMs,
    );
  }

  /** One file of a repository's branch, cloned by the server's agent. */
  readRepositoryFile(
    serverId: string,
    command: ReadRepositoryFileCommand,
    timeoutMs?: number,
  ): Promise<RepositoryFile> {
    return this.run(serverId, { command: "readRepositoryFile", readRepositoryFile: command }, timeoutMs);
  }

  /** Whether a kept rollback image is still on the server. */
  rollbackImageStatus(serverId: string, image: string, timeoutMs?: number): Promise<RollbackImageStatus> {
    return this.run(serverId, { command: "rollbackImageStatus", rollbackImageStatus: { image } }, timeoutMs);
  }

  /** Untags kept rollback images; missing ones are fine. */
  removeRollbackImages(
    serverId: string,
    images: string[],
    timeoutMs?: number,
  ): Promise<RollbackImagesRemoved> {
    return this.run(
      serverId,
      { command: "removeRollbackImages", removeRollbackImages: { images } },
      timeoutMs,
    );
  }

  cleanBuildCache(serverId: string, timeoutMs?: number): Promise<CleanBuildCacheResult> {
    return this.run(serverId, { command: "cleanBuildCache", cleanBuildCache: {} }, timeoutMs);
  }

  /** Logs in to a registry through the server's Docker Engine; the registry's refusal is an error. */
  registryLogin(serverId: string, auth: RegistryAuth, timeoutMs?: number): Promise<RegistryLoginResult> {
    return this.run(serverId, { command: "registryLogin", registryLogin: { auth } }, timeoutMs);
  }

  /** One sample of the resource use of the running containers of a Swarm service. */
  async containerStats(
    serverId: string,
    swarmServiceName: string,
    owner: ResourceOwner,
    timeoutMs?: number,
  ): Promise<ContainerStats[]> {
    assertValidName(swarmServiceName, "service name");
    const list = await this.run(
      serverId,
      { command: "containerStats", containerStats: { swarmServiceName, owner } },
      timeoutMs,
    );
    return list.containers;
  }

  /** Applies a monitoring configuration (JSON of metricsConfig) on the server, live. */
  setupMonitoring(serverId: string, metricsConfigJson: string, timeoutMs?: number): Promise<MonitoringSetUp> {
    return this.run(
      serverId,
      { command: "setupMonitoring", setupMonitoring: { metricsConfigJson } },
      timeoutMs,
    );
  }

  /** The newest stored metrics of one service's containers labelled for `organizationId`. */
  readContainerMetrics(
    serverId: string,
    command: ReadContainerMetricsCommand,
    timeoutMs?: number,
  ): Promise<ContainerMetricsList> {
    assertValidName(command.appName, "appName");
    return this.run(serverId, { command: "readContainerMetrics", readContainerMetrics: command }, timeoutMs);
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
  ): Promise<ProxyFileWritten> {
    return this.run(
      serverId,
      { command: "writeProxyFile", writeProxyFile: { scope, fileName, content, ...holder } },
      timeoutMs,
    );
  }

  readProxyFile(
    serverId: string,
    scope: ProxyFileScope,
    fileName: string,
    holder: ProxyFileHolder = {},
    timeoutMs?: number,
  ): Promise<ProxyFile> {
    return this.run(
      serverId,
      { command: "readProxyFile", readProxyFile: { scope, fileName, ...holder } },
      timeoutMs,
    );
  }

  removeProxyFile(
    serverId: string,
    scope: ProxyFileScope,
    fileName: string,
    holder: ProxyFileHolder = {},
    timeoutMs?: number,
  ): Promise<ProxyFileRemoved> {
    return this.run(
      serverId,
      { command: "removeProxyFile", removeProxyFile: { scope, fileName, ...holder } },
      timeoutMs,
    );
  }

  /** Creates or updates the proxy's Swarm service. */
  ensureProxy(serverId: string, command: EnsureProxyCommand, timeoutMs?: number): Promise<ProxyService> {
    return this.run(serverId, { command: "ensureProxy", ensureProxy: command }, timeoutMs);
  }

  reloadProxy(serverId: string, timeoutMs?: number): Promise<ProxyReloaded> {
    return this.run(serverId, { command: "reloadProxy", reloadProxy: {} }, timeoutMs);
  }

  /** One filtered, sorted page of the proxy's access log. */
  /** A schedule's command in one of its service's containers (a job: cancelJob stops it). */
  runSchedule(
    serverId: string,
    command: RunScheduleCommand,
    timeoutMs?: number,
  ): Promise<ScheduledCommandResult> {
    return this.run(serverId, { command: "runSchedule", runSchedule: command }, timeoutMs);
  }

  /** An instance administrator's script on the server itself (a job: cancelJob stops it). */
  runHostScript(
    serverId: string,
    command: RunHostScriptCommand,
    timeoutMs?: number,
  ): Promise<ScheduledCommandResult> {
    return this.run(serverId, { command: "runHostScript", runHostScript: command }, timeoutMs);
  }

  readAccessLog(serverId: string, command: ReadAccessLogCommand, timeoutMs?: number): Promise<AccessLogPage> {
    return this.run(serverId, { command: "readAccessLog", readAccessLog: command }, timeoutMs);
  }

  /** Removes unused Docker objects of one organization, or of the whole engine. */
  cleanDocker(
    serverId: string,
    command: CleanDockerCommand,
    timeoutMs?: number,
  ): Promise<DockerCleanupResult> {
    return this.run(serverId, { command: "cleanDocker", cleanDocker: command }, timeoutMs);
  }

  /** Dumps a database into object storage (a job: cancelJob stops it). */
  backupDatabase(
    serverId: string,
    command: BackupDatabaseCommand,
    timeoutMs: number,
  ): Promise<BackupDatabaseResult> {
    return this.run(serverId, { command: "backupDatabase", backupDatabase: command }, timeoutMs);
  }

  /** Restores a backup object into a database (or a throwaway container of its image). */
  restoreDatabase(
    serverId: string,
    command: RestoreDatabaseCommand,
    timeoutMs: number,
  ): Promise<RestoreDatabaseResult> {
    return this.run(serverId, { command: "restoreDatabase", restoreDatabase: command }, timeoutMs);
  }

  /** Archives a named volume into object storage (a job: cancelJob stops it). */
  backupVolume(
    serverId: string,
    command: BackupVolumeCommand,
    timeoutMs: number,
  ): Promise<BackupVolumeResult> {
    return this.run(serverId, { command: "backupVolume", backupVolume: command }, timeoutMs);
  }

  /** Restores a volume archive from object storage into a named volume (a job). */
  restoreVolume(
    serverId: string,
    command: RestoreVolumeCommand,
    timeoutMs: number,
  ): Promise<RestoreVolumeResult> {
    return this.run(serverId, { command: "restoreVolume", restoreVolume: command }, timeoutMs);
  }

  // ---- clusters ----

  /** The nodes of the Swarm the server manages. */
  listNodes(serverId: string, timeoutMs?: number): Promise<NodeList> {
    return this.run(serverId, { command: "listNodes", listNodes: {} }, timeoutMs);
  }

  /** The join token (a secret: never log it) and address of the server's Swarm. */
  swarmJoinToken(serverId: string, manager: boolean, timeoutMs?: number): Promise<SwarmJoinToken> {
    return this.run(serverId, { command: "swarmJoinToken", swarmJoinToken: { manager } }, timeoutMs);
  }

  /** The server's engine joins a Swarm. */
  joinSwarm(serverId: string, command: JoinSwarmCommand, timeoutMs?: number): Promise<SwarmJoined> {
    return this.run(serverId, { command: "joinSwarm", joinSwarm: command }, timeoutMs);
  }

  /** Changes a node's availability, role or labels (the server manages its Swarm). */
  updateNode(serverId: string, command: UpdateNodeCommand, timeoutMs?: number): Promise<NodeUpdated> {
    return this.run(serverId, { command: "updateNode", updateNode: command }, timeoutMs);
  }

  /** Drains and removes a node from the server's Swarm. */
  removeNode(serverId: string, nodeId: string, timeoutMs?: number): Promise<NodeRemoved> {
    return this.run(serverId, { command: "removeNode", removeNode: { nodeId } }, timeoutMs);
  }

  /** The server's engine leaves its Swarm. */
  leaveSwarm(serverId: string, timeoutMs?: number): Promise<SwarmLeft> {
    return this.run(serverId, { command: "leaveSwarm", leaveSwarm: {} }, timeoutMs);
  }
}
