/**
 * AgentCore: the agent's command handler, independent of how commands arrive. It turns one
 * CommandRequest into one CommandReply using the local Docker Engine, the host's files and
 * `--version` probes, and maps failures to protocol error codes (a bad name is refused before
 * Docker is called).
 */
import { hostname as osHostname } from "node:os";
import path from "node:path";
import {
  AGENT_VERSION,
  type AgentEvent,
  type CommandHandlers,
  type CommandReply,
  type CommandRequest,
  dispatchCommand,
  errorReply,
  type Heartbeat,
  type LogChunk,
  type ReadContainerMetricsCommand,
  refuseIfExpired,
} from "@platform/agent-protocol";
import { assertValidName, InvalidNameError } from "@platform/names";
import type { AllowList } from "@platform/outbound-guard";
import type Docker from "dockerode";
import type { Logger } from "pino";
import { securityAudit } from "./audit/index.ts";
import { type ServiceProbe, systemctlProbe } from "./audit/services.ts";
import { CommandError } from "./command-error.ts";
import { changeDatabaseCredentials } from "./deploy/database-credentials.ts";
import { Deployer } from "./deploy/index.ts";
import { keepRollbackImage, removeRollbackImages, rollbackImageStatus } from "./deploy/rollback-images.ts";
import { keepStackRollbackImages } from "./deploy/stack.ts";
import { cleanDocker } from "./docker/cleanup.ts";
import { containerAction, containerEvents } from "./docker/container-actions.ts";
import { containerFiles } from "./docker/container-files.ts";
import { inspectContainer, listContainers, restartContainer } from "./docker/containers.ts";
import {
  createDockerClient,
  DEFAULT_DOCKER_SOCKET,
  engineMessage,
  engineStatus,
  isEngineUnreachable,
  withTimeout,
} from "./docker/engine.ts";
import { restartControlPlane, serverHealth } from "./docker/engine-health.ts";
import { diskUsage, inspectImage, listImages, removeImage } from "./docker/images.ts";
import { LogFollowers } from "./docker/log-follow.ts";
import { readServiceLogs } from "./docker/logs.ts";
import {
  createNetwork,
  importNetwork,
  inspectNetwork,
  listEngineNetworks,
  removeNetwork,
} from "./docker/networks.ts";
import { joinSwarm, leaveSwarm, listNodes, removeNode, swarmJoinToken, updateNode } from "./docker/nodes.ts";
import { containerStats } from "./docker/stats.ts";
import { allContainerStats, listSwarmServices } from "./docker/swarm-views.ts";
import { inspectVolume, listVolumes, removeVolume, volumeFile } from "./docker/volumes.ts";
import { checkGpu, type GpuOptions, setupGpu } from "./gpu/gpu.ts";
import { Monitoring } from "./monitoring/index.ts";
import { ProxyManager } from "./proxy/index.ts";
import { ensurePlatformNetwork } from "./proxy/service.ts";
import { registryLogin } from "./registry/login.ts";
import { swarmState } from "./validate/engine-facts.ts";
import { validateServer } from "./validate/index.ts";

export const DEFAULT_MAIN_DIRECTORY = "/etc/platform";

export interface AgentCoreOptions {
  /** The server this agent runs on; commands for another server are refused. */
  serverId: string;
  /**
   * What this agent writes into the marks it leaves on an engine other agents may share (a
   * service stopped for a volume backup), to find its own again when it starts: the server id
   * by default. A control plane's local agent adds its installation (two control planes on one
   * engine, as in the test suite, each have a server "local").
   */
  agentMark?: string;
  /** Docker Engine socket (default /var/run/docker.sock); ignored when `docker` is given. */
  dockerSocket?: string;
  /** A ready dockerode client (tests inject one). */
  docker?: Docker;
  /** The platform's main directory on the server (default /etc/platform). */
  mainDirectory?: string;
  /** Root of the files the security audit reads (default "/"). */
  hostRoot?: string;
  /** systemd unit states for the audit (default: ask systemctl). */
  serviceProbe?: ServiceProbe;
  /**
   * PATH searched for rclone, nixpacks, pack and railpack, nvidia-smi and
   * nvidia-container-runtime (default: the agent's PATH).
   */
  toolSearchPath?: string;
  /** The nvidia-smi executable: a path, or a name looked up on toolSearchPath (default nvidia-smi). */
  nvidiaSmi?: string;
  /** The engine's daemon.json settings.setupGPU merges into (default /etc/docker/daemon.json). */
  dockerDaemonConfig?: string;
  /** nvidia-container-runtime's config.toml (default /etc/nvidia-container-runtime/config.toml). */
  nvidiaRuntimeConfig?: string;
  /** Timeout of each `<tool> --version` (default 5000 ms). */
  toolTimeoutMs?: number;
  /** Reported hostname (default: os.hostname()). */
  hostname?: string;
  /** Publishes log chunks of long commands (startAgent passes the transport's). */
  publishLogChunk?: (chunk: LogChunk) => void;
  /**
   * The overlay network of this server's applications and proxy (default platform-network): a
   * deployment asking for platform-network is attached to it.
   */
  platformNetwork?: string;
  /** The proxy's Swarm service name (default platform-traefik; tests use their own). */
  proxyServiceName?: string;
  /** Publishes events (serverThreshold); startAgent passes the transport's. */
  publishEvent?: (event: AgentEvent) => void;
  /** Loopback/private targets monitoring callbacks may reach (PLATFORM_OUTBOUND_ALLOW). */
  outboundAllow?: AllowList;
  /** Address the /metrics endpoints listen on (default all interfaces). */
  metricsListenHost?: string;
  logger?: Logger;
}

export class AgentCore {
  readonly serverId: string;
  readonly docker: Docker;
  readonly hostname: string;
  private readonly dockerSocket: string;
  readonly mainDirectory: string;
  private readonly hostRoot: string;
  private readonly serviceProbe: ServiceProbe;
  readonly deployer: Deployer;
  readonly proxy: ProxyManager;
  readonly monitoring: Monitoring;
  readonly logFollowers: LogFollowers;

  constructor(private readonly options: AgentCoreOptions) {
    this.serverId = options.serverId;
    this.dockerSocket = options.dockerSocket ?? DEFAULT_DOCKER_SOCKET;
    this.docker = options.docker ?? createDockerClient(this.dockerSocket);
    this.hostname = options.hostname ?? osHostname();
    this.mainDirectory = options.mainDirectory ?? DEFAULT_MAIN_DIRECTORY;
    this.hostRoot = options.hostRoot ?? "/";
    this.serviceProbe = options.serviceProbe ?? systemctlProbe();
    const { docker, mainDirectory } = this;
    const logger = options.logger;
    this.deployer = new Deployer({
      docker,
      agentMark: options.agentMark ?? this.serverId,
      mainDirectory,
      platformNetwork: options.platformNetwork,
      publishLogChunk: options.publishLogChunk ?? (() => {}),
      toolSearchPath: options.toolSearchPath,
      logger,
    });
    this.proxy = new ProxyManager({
      docker,
      mainDirectory,
      serviceName: options.proxyServiceName,
      platformNetwork: options.platformNetwork,
      dockerSocket: this.dockerSocket,
      logger,
    });
    this.monitoring = new Monitoring({
      serverId: this.serverId,
      docker,
      directory: path.join(mainDirectory, "monitoring"),
      publishEvent: options.publishEvent,
      outboundAllow: options.outboundAllow,
      listenHost: options.metricsListenHost,
      logger,
    });
    this.logFollowers = new LogFollowers(docker, options.publishLogChunk ?? (() => {}), logger);
  }

  /** Runs one command; never rejects (failures become error replies). */
  async handle(request: CommandRequest): Promise<CommandReply> {
    const started = performance.now();
    const reply = await this.run(request);
    this.options.logger?.debug(
      {
        requestId: request.requestId,
        command: request.command,
        result: reply.result,
        code: reply.result === "error" ? reply.error.code : undefined,
        durationMs: Math.round((performance.now() - started) * 10) / 10,
      },
      "command handled",
    );
    return reply;
  }

  private async run(request: CommandRequest): Promise<CommandReply> {
    const { requestId } = request;
    if (request.serverId !== this.serverId) {
      return errorReply(
        requestId,
        "INVALID_ARGUMENT",
        `this agent serves ${this.serverId}, not ${request.serverId}`,
      );
    }
    const expired = refuseIfExpired(request);
    if (expired) return expired;
    try {
      return await dispatchCommand(this.handlers, request);
    } catch (error) {
      return this.errorToReply(requestId, request.command, error);
    }
  }

  /** The handler of each command of the protocol (see dispatchCommand). */
  private readonly handlers: CommandHandlers = {
    ping: async () => ({ agentVersion: AGENT_VERSION, hostname: this.hostname, timeUnixMs: Date.now() }),
    validateServer: () =>
      validateServer(this.docker, {
        mainDirectory: this.mainDirectory,
        platformNetwork: this.options.platformNetwork,
        searchPath: this.options.toolSearchPath,
        timeoutMs: this.options.toolTimeoutMs,
      }),
    securityAudit: () => securityAudit(this.hostRoot, this.serviceProbe),
    listContainers: async (command) => ({ containers: await listContainers(this.docker, command) }),
    inspectContainer: (command) => inspectContainer(this.docker, command.containerId, command.scope),
    restartContainer: (command) =>
      restartContainer(this.docker, command.containerId, command.scope, command.stopTimeoutSeconds),
    containerAction: (command) => containerAction(this.docker, command),
    containerFiles: (command) => containerFiles(this.docker, command),
    containerEvents: (command) => containerEvents(this.docker, command),
    buildImage: (command) => this.deployer.buildImage(command),
    deployService: (command) => this.deployer.deployService(command),
    serviceAction: (command) => this.deployer.serviceAction(command),
    changeDatabaseCredentials: (command) => changeDatabaseCredentials(this.docker, command),
    deployStack: (command) => this.deployer.deployStack(command),
    readRepositoryFile: (command) => this.deployer.readRepositoryFile(command),
    listRepositoryFiles: (command) => this.deployer.listRepositoryFiles(command),
    stackAction: (command) => this.deployer.stackAction(command),
    observeServices: (command) => this.deployer.observeServices(command),
    backupDatabase: (command) => this.deployer.backupDatabase(command),
    restoreDatabase: (command) => this.deployer.restoreDatabase(command),
    backupVolume: (command) => this.deployer.backupVolume(command),
    restoreVolume: (command) => this.deployer.restoreVolume(command),
    cancelJob: (command) => this.deployer.cancelJob(command),
    awaitJob: (command) => this.deployer.awaitJob(command),
    cleanBuildCache: () => this.deployer.cleanBuildCache(),
    keepRollbackImage: (command) => keepRollbackImage(this.docker, command),
    rollbackImageStatus: (command) => rollbackImageStatus(this.docker, command.image),
    removeRollbackImages: (command) => removeRollbackImages(this.docker, command.images),
    keepStackRollbackImages: (command) => keepStackRollbackImages(this.docker, command),
    registryLogin: (command) => registryLogin(this.docker, command),
    containerStats: async (command) => ({
      containers: await containerStats(this.docker, command.swarmServiceName, command.owner),
    }),
    setupMonitoring: (command) => this.monitoring.apply(command.metricsConfigJson),
    readContainerMetrics: (command) => this.readContainerMetrics(command),
    readServiceLogs: (command) => readServiceLogs(this.docker, command),
    followServiceLogs: (command) => this.logFollowers.follow(command),
    renewLogFollow: async (command) => this.logFollowers.renew(command),
    writeProxyFile: (command) => this.proxy.writeFile(command),
    readProxyFile: (command) => this.proxy.readFile(command),
    removeProxyFile: (command) => this.proxy.removeFile(command),
    ensureProxy: (command) => this.proxy.ensure(command),
    reloadProxy: () => this.proxy.reload(),
    inspectProxy: () => this.proxy.inspect(),
    updateProxyService: (command) => this.proxy.updateService(command),
    listProxyFiles: () => this.proxy.listFiles(),
    runSchedule: (command) => this.deployer.runSchedule(command),
    runHostScript: (command) => this.deployer.runHostScript(command),
    readAccessLog: (command) => this.proxy.readAccessLog(command),
    cleanAccessLog: () => this.proxy.cleanAccessLog(),
    cleanMonitoring: () => this.monitoring.store.clear(),
    serverHealth: (command) =>
      serverHealth(this.docker, command, {
        enabled: this.monitoring.enabled,
        since: (since) => this.monitoring.store.readSystemSince(since),
      }),
    restartControlPlane: (command) => restartControlPlane(this.docker, command),
    cleanDocker: (command) => cleanDocker(this.docker, command),
    listNodes: () => listNodes(this.docker),
    swarmJoinToken: (command) => swarmJoinToken(this.docker, command.manager),
    joinSwarm: (command) => joinSwarm(this.docker, command),
    updateNode: (command) => updateNode(this.docker, command),
    removeNode: (command) => removeNode(this.docker, command.nodeId),
    leaveSwarm: () => leaveSwarm(this.docker),
    ensurePlatformNetwork: () => ensurePlatformNetwork(this.docker, this.options.platformNetwork),
    listVolumes: (command) => listVolumes(this.docker, command),
    inspectVolume: (command) => inspectVolume(this.docker, command),
    removeVolume: (command) => removeVolume(this.docker, command),
    volumeFile: (command) => volumeFile(this.docker, command),
    listImages: (command) => listImages(this.docker, command),
    inspectImage: (command) => inspectImage(this.docker, command),
    removeImage: (command) => removeImage(this.docker, command),
    diskUsage: (command) => diskUsage(this.docker, command),
    listSwarmServices: (command) => listSwarmServices(this.docker, command),
    allContainerStats: (command) => allContainerStats(this.docker, command),
    createNetwork: (command) => createNetwork(this.docker, command),
    inspectNetwork: (command) => inspectNetwork(this.docker, command),
    removeNetwork: (command) => removeNetwork(this.docker, command),
    listEngineNetworks: (command) => listEngineNetworks(this.docker, command),
    importNetwork: (command) => importNetwork(this.docker, command),
    checkGpu: () => checkGpu(this.gpuOptions()),
    setupGpu: () => setupGpu(this.gpuOptions()),
  };

  private gpuOptions(): GpuOptions {
    return {
      docker: this.docker,
      nvidiaSmi: this.options.nvidiaSmi,
      searchPath: this.options.toolSearchPath,
      daemonConfigPath: this.options.dockerDaemonConfig,
      runtimeConfigPath: this.options.nvidiaRuntimeConfig,
    };
  }

  /** Stored samples of one service for the control plane (readAppMonitoring), owner-filtered. */
  private async readContainerMetrics(command: ReadContainerMetricsCommand) {
    const appName = assertValidName(command.appName, "appName");
    const limit = Math.min(Math.max(command.limit || 1, 1), 10_000);
    const records = await this.monitoring.containers(appName, limit, command.organizationId || undefined);
    return {
      recordsJson: JSON.stringify(typeof records === "string" ? [] : records),
      monitoringEnabled: this.monitoring.enabled,
    };
  }

  private errorToReply(requestId: string, command: string, error: unknown): CommandReply {
    if (error instanceof CommandError) return errorReply(requestId, error.code, error.message);
    if (error instanceof InvalidNameError) return errorReply(requestId, "INVALID_ARGUMENT", error.message);
    if (isEngineUnreachable(error)) {
      return errorReply(
        requestId,
        "UNAVAILABLE",
        `the Docker Engine is not reachable at ${this.dockerSocket}`,
      );
    }
    if (engineStatus(error) === 404) return errorReply(requestId, "NOT_FOUND", engineMessage(error));
    this.options.logger?.warn({ requestId, command, err: error }, "command failed");
    return errorReply(requestId, "INTERNAL", `${command} failed: ${engineMessage(error)}`);
  }

  /** The heartbeat describing this agent and its engine now. */
  async heartbeat(): Promise<Heartbeat> {
    let dockerVersion = "";
    try {
      dockerVersion = (await withTimeout(this.docker.version(), 3000, "docker version")).Version;
    } catch {}
    return {
      serverId: this.serverId,
      agentVersion: AGENT_VERSION,
      hostname: this.hostname,
      sentAtUnixMs: Date.now(),
      dockerReachable: dockerVersion !== "",
      dockerVersion,
      swarmState: dockerVersion ? await swarmState(this.docker) : "",
    };
  }
}
