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
  type AllowList,
  assertValidName,
  type CommandReply,
  type CommandRequest,
  errorReply,
  type Heartbeat,
  InvalidNameError,
  type LogChunk,
  type ReadContainerMetricsCommand,
  refuseIfExpired,
} from "@platform/agent-protocol";
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
import { inspectContainer, listContainers, restartContainer } from "./docker/containers.ts";
import {
  createDockerClient,
  DEFAULT_DOCKER_SOCKET,
  engineMessage,
  engineStatus,
  isEngineUnreachable,
  withTimeout,
} from "./docker/engine.ts";
import { joinSwarm, leaveSwarm, listNodes, removeNode, swarmJoinToken, updateNode } from "./docker/nodes.ts";
import { containerStats } from "./docker/stats.ts";
import { Monitoring } from "./monitoring/index.ts";
import { ProxyManager } from "./proxy/index.ts";
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
  /** PATH searched for rclone, nixpacks, pack and railpack (default: the agent's PATH). */
  toolSearchPath?: string;
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
      switch (request.command) {
        case "ping":
          return {
            requestId,
            result: "ping",
            ping: { agentVersion: AGENT_VERSION, hostname: this.hostname, timeUnixMs: Date.now() },
          };
        case "validateServer":
          return {
            requestId,
            result: "validateServer",
            validateServer: await validateServer(this.docker, {
              mainDirectory: this.mainDirectory,
              platformNetwork: this.options.platformNetwork,
              searchPath: this.options.toolSearchPath,
              timeoutMs: this.options.toolTimeoutMs,
            }),
          };
        case "securityAudit":
          return {
            requestId,
            result: "securityAudit",
            securityAudit: await securityAudit(this.hostRoot, this.serviceProbe),
          };
        case "listContainers":
          return {
            requestId,
            result: "containers",
            containers: { containers: await listContainers(this.docker, request.listContainers) },
          };
        case "inspectContainer":
          return {
            requestId,
            result: "containerConfig",
            containerConfig: await inspectContainer(
              this.docker,
              request.inspectContainer.containerId,
              request.inspectContainer.scope,
            ),
          };
        case "restartContainer":
          return {
            requestId,
            result: "restartContainer",
            restartContainer: await restartContainer(
              this.docker,
              request.restartContainer.containerId,
              request.restartContainer.scope,
              request.restartContainer.stopTimeoutSeconds,
            ),
          };
        case "buildImage":
          return {
            requestId,
            result: "buildImage",
            buildImage: await this.deployer.buildImage(request.buildImage),
          };
        case "deployService":
          return {
            requestId,
            result: "deployService",
            deployService: await this.deployer.deployService(request.deployService),
          };
        case "serviceAction":
          return {
            requestId,
            result: "serviceAction",
            serviceAction: await this.deployer.serviceAction(request.serviceAction),
          };
        case "changeDatabaseCredentials":
          return {
            requestId,
            result: "databaseCredentialsChanged",
            databaseCredentialsChanged: await changeDatabaseCredentials(
              this.docker,
              request.changeDatabaseCredentials,
            ),
          };
        case "deployStack":
          return {
            requestId,
            result: "deployStack",
            deployStack: await this.deployer.deployStack(request.deployStack),
          };
        case "readRepositoryFile":
          return {
            requestId,
            result: "repositoryFile",
            repositoryFile: await this.deployer.readRepositoryFile(request.readRepositoryFile),
          };
        case "stackAction":
          return {
            requestId,
            result: "stackAction",
            stackAction: await this.deployer.stackAction(request.stackAction),
          };
        case "observeServices":
          return {
            requestId,
            result: "observedServices",
            observedServices: await this.deployer.observeServices(request.observeServices),
          };
        case "backupDatabase":
          return {
            requestId,
            result: "backupDatabase",
            backupDatabase: await this.deployer.backupDatabase(request.backupDatabase),
          };
        case "restoreDatabase":
          return {
            requestId,
            result: "restoreDatabase",
            restoreDatabase: await this.deployer.restoreDatabase(request.restoreDatabase),
          };
        case "backupVolume":
          return {
            requestId,
            result: "backupVolume",
            backupVolume: await this.deployer.backupVolume(request.backupVolume),
          };
        case "restoreVolume":
          return {
            requestId,
            result: "restoreVolume",
            restoreVolume: await this.deployer.restoreVolume(request.restoreVolume),
          };
        case "cancelJob":
          return {
            requestId,
            result: "cancelJob",
            cancelJob: await this.deployer.cancelJob(request.cancelJob),
          };
        case "cleanBuildCache":
          return {
            requestId,
            result: "cleanBuildCache",
            cleanBuildCache: await this.deployer.cleanBuildCache(),
          };
        case "keepRollbackImage":
          return {
            requestId,
            result: "rollbackImageKept",
            rollbackImageKept: await keepRollbackImage(this.docker, request.keepRollbackImage),
          };
        case "rollbackImageStatus":
          return {
            requestId,
            result: "rollbackImageStatus",
            rollbackImageStatus: await rollbackImageStatus(this.docker, request.rollbackImageStatus.image),
          };
        case "removeRollbackImages":
          return {
            requestId,
            result: "rollbackImagesRemoved",
            rollbackImagesRemoved: await removeRollbackImages(
              this.docker,
              request.removeRollbackImages.images,
            ),
          };
        case "keepStackRollbackImages":
          return {
            requestId,
            result: "stackRollbackImagesKept",
            stackRollbackImagesKept: await keepStackRollbackImages(
              this.docker,
              request.keepStackRollbackImages,
            ),
          };
        case "registryLogin":
          return {
            requestId,
            result: "registryLogin",
            registryLogin: await registryLogin(this.docker, request.registryLogin),
          };
        case "containerStats":
          return {
            requestId,
            result: "containerStats",
            containerStats: {
              containers: await containerStats(
                this.docker,
                request.containerStats.swarmServiceName,
                request.containerStats.owner,
              ),
            },
          };
        case "setupMonitoring":
          return {
            requestId,
            result: "monitoringSetUp",
            monitoringSetUp: await this.monitoring.apply(request.setupMonitoring.metricsConfigJson),
          };
        case "readContainerMetrics":
          return {
            requestId,
            result: "containerMetrics",
            containerMetrics: await this.readContainerMetrics(request.readContainerMetrics),
          };
        case "writeProxyFile":
          return {
            requestId,
            result: "proxyFileWritten",
            proxyFileWritten: await this.proxy.writeFile(request.writeProxyFile),
          };
        case "readProxyFile":
          return {
            requestId,
            result: "proxyFile",
            proxyFile: await this.proxy.readFile(request.readProxyFile),
          };
        case "removeProxyFile":
          return {
            requestId,
            result: "proxyFileRemoved",
            proxyFileRemoved: await this.proxy.removeFile(request.removeProxyFile),
          };
        case "ensureProxy":
          return {
            requestId,
            result: "proxyService",
            proxyService: await this.proxy.ensure(request.ensureProxy),
          };
        case "reloadProxy":
          return { requestId, result: "proxyReloaded", proxyReloaded: await this.proxy.reload() };
        case "runSchedule":
          return {
            requestId,
            result: "scheduleRun",
            scheduleRun: await this.deployer.runSchedule(request.runSchedule),
          };
        case "runHostScript":
          return {
            requestId,
            result: "hostScript",
            hostScript: await this.deployer.runHostScript(request.runHostScript),
          };
        case "readAccessLog":
          return {
            requestId,
            result: "accessLogPage",
            accessLogPage: await this.proxy.readAccessLog(request.readAccessLog),
          };
        case "cleanDocker":
          return {
            requestId,
            result: "dockerCleanup",
            dockerCleanup: await cleanDocker(this.docker, request.cleanDocker),
          };
        case "listNodes":
          return { requestId, result: "nodes", nodes: await listNodes(this.docker) };
        case "swarmJoinToken":
          return {
            requestId,
            result: "swarmJoinToken",
            swarmJoinToken: await swarmJoinToken(this.docker, request.swarmJoinToken.manager),
          };
        case "joinSwarm":
          return {
            requestId,
            result: "swarmJoined",
            swarmJoined: await joinSwarm(this.docker, request.joinSwarm),
          };
        case "updateNode":
          return {
            requestId,
            result: "nodeUpdated",
            nodeUpdated: await updateNode(this.docker, request.updateNode),
          };
        case "removeNode":
          return {
            requestId,
            result: "nodeRemoved",
            nodeRemoved: await removeNode(this.docker, request.removeNode.nodeId),
          };
        case "leaveSwarm":
          return { requestId, result: "swarmLeft", swarmLeft: await leaveSwarm(this.docker) };
        default:
          return errorReply(requestId, "UNIMPLEMENTED", "this agent does not know the command");
      }
    } catch (error) {
      return this.errorToReply(requestId, request.command, error);
    }
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
