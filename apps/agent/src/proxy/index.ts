/**
 * The platform's proxy (Traefik) on this server: its files under <main directory>/traefik,
 * written atomically, and its Swarm service.
 */
import path from "node:path";
import type {
  AccessLogCleaned,
  AccessLogPage,
  EnsureProxyCommand,
  ProxyFile,
  ProxyFileList,
  ProxyFileRemoved,
  ProxyFileWritten,
  ProxyInspection,
  ProxyReloaded,
  ProxyService,
  ReadAccessLogCommand,
  ReadProxyFileCommand,
  RemoveProxyFileCommand,
  UpdateProxyServiceCommand,
  WriteProxyFileCommand,
} from "@platform/agent-protocol";
import { isImageReference } from "@platform/names";
import { ACCESS_LOG_PATH, PROXY_DIRECTORY_NAME, PROXY_SERVICE_NAME } from "@platform/traefik-config/paths.ts";
import type Docker from "dockerode";
import type { Logger } from "pino";
import { CommandError } from "../command-error.ts";
import { DEFAULT_DOCKER_SOCKET, engineStatus } from "../docker/engine.ts";
import { retryOutOfSequence, updateService, withForceUpdate } from "../docker/swarm.ts";
import { PLATFORM_NETWORK } from "../validate/engine-facts.ts";
import { cleanAccessLog, readAccessLog } from "./access-log.ts";
import { checkContent, ProxyFiles, proxyFileLocation } from "./files.ts";
import { commandHolder, ProxyFileHolders } from "./holders.ts";
import {
  DASHBOARD_TARGET_PORT,
  ENTRY_POINT_TARGETS,
  envOf,
  extraPortsOf,
  findProxyService,
  HTTP_TARGET_PORT,
  HTTPS_TARGET_PORT,
  type ProxyExtraPort,
  proxyServiceSpec,
  requirePlatformNetwork,
  swarmManagerNodeId,
} from "./service.ts";

export interface ProxyManagerOptions {
  docker: Docker;
  /** The platform's main directory on the server; the proxy's files live in <it>/traefik. */
  mainDirectory: string;
  /** The proxy's Swarm service (default platform-traefik; tests use their own names). */
  serviceName?: string;
  /** The overlay network the proxy shares with the applications (default platform-network). */
  platformNetwork?: string;
  /** The engine's socket the agent uses (default /var/run/docker.sock): the proxy mounts it. */
  dockerSocket?: string;
  logger?: Logger;
}

const STATIC_SCOPE = proxyFileLocation("static", "");

export class ProxyManager {
  private readonly files: ProxyFiles;
  private readonly holders: ProxyFileHolders;
  readonly serviceName: string;

  constructor(readonly options: ProxyManagerOptions) {
    this.files = new ProxyFiles(options.mainDirectory);
    this.holders = new ProxyFileHolders(options.mainDirectory);
    this.serviceName = options.serviceName ?? PROXY_SERVICE_NAME;
  }

  async writeFile(command: WriteProxyFileCommand): Promise<ProxyFileWritten> {
    const location = proxyFileLocation(command.scope, command.fileName);
    const content = checkContent(command.content);
    const holder = commandHolder(command.scope, command);
    const written = await this.holders.exclusive(command.scope, location.fileName, async () => {
      await this.holders.check(command.scope, location.fileName, holder);
      await this.holders.record(command.scope, location.fileName, holder);
      return this.files.write(location, content);
    });
    this.options.logger?.info({ scope: command.scope, path: written }, "proxy file written");
    return { path: written };
  }

  async readFile(command: ReadProxyFileCommand): Promise<ProxyFile> {
    const location = proxyFileLocation(command.scope, command.fileName);
    await this.holders.check(command.scope, location.fileName, commandHolder(command.scope, command));
    const content = await this.files.read(location);
    return content === undefined ? { exists: false, content: "" } : { exists: true, content };
  }

  /** The dynamic directory's configuration files, each with its recorded holder. */
  async listFiles(): Promise<ProxyFileList> {
    const names = await this.files.listDynamic();
    const files = await Promise.all(
      names.map(async (fileName) => {
        const holder = await this.holders.holderOf("dynamic", fileName);
        if (holder === undefined) return { fileName, platformFile: false };
        if ("platform" in holder) return { fileName, platformFile: true };
        return {
          fileName,
          owner: { organizationId: holder.organizationId, resource: holder.resource },
          platformFile: false,
        };
      }),
    );
    return { files };
  }

  /** One page of the access log Traefik writes to <main directory>/traefik/access.log. */
  readAccessLog(command: ReadAccessLogCommand): Promise<AccessLogPage> {
    const file = path.join(this.options.mainDirectory, PROXY_DIRECTORY_NAME, path.basename(ACCESS_LOG_PATH));
    return readAccessLog(file, command);
  }

  /** Empties the access log in place (settings.updateLogCleanup's scheduled cleanup). */
  cleanAccessLog(): Promise<AccessLogCleaned> {
    return cleanAccessLog(
      path.join(this.options.mainDirectory, PROXY_DIRECTORY_NAME, path.basename(ACCESS_LOG_PATH)),
    );
  }

  async removeFile(command: RemoveProxyFileCommand): Promise<ProxyFileRemoved> {
    const location = proxyFileLocation(command.scope, command.fileName);
    const holder = commandHolder(command.scope, command);
    const removed = await this.holders.exclusive(command.scope, location.fileName, async () => {
      await this.holders.check(command.scope, location.fileName, holder);
      const removed = await this.files.remove(location);
      await this.holders.forget(command.scope, location.fileName, holder);
      return removed;
    });
    if (removed)
      this.options.logger?.info({ scope: command.scope, fileName: command.fileName }, "proxy file removed");
    return { removed };
  }

  /**
   * Writes traefik.yml, then creates the service or updates its spec in place. Traefik reads its
   * static configuration only when it starts, so a changed traefik.yml also restarts the task.
   */
  async ensure(command: EnsureProxyCommand): Promise<ProxyService> {
    const image = checkImage(command.image);
    const staticConfig = checkContent(command.staticConfig, "staticConfig");
    const { httpPort, httpsPort, dashboardPort } = hostPorts(command);
    const { docker } = this.options;
    const nodeId = await swarmManagerNodeId(docker);
    const platformNetwork = this.options.platformNetwork ?? PLATFORM_NETWORK;
    await requirePlatformNetwork(docker, platformNetwork);
    const existing = await findProxyService(docker, this.serviceName);

    // Only compared (to restart Traefik when it changed); the write below makes every check.
    const previousConfig = await this.files.read(STATIC_SCOPE).catch(() => undefined);
    const staticPath = await this.files.write(STATIC_SCOPE, staticConfig);
    const settings = {
      serviceName: this.serviceName,
      image,
      // The static file lives directly in the proxy's (checked, real) directory.
      proxyDirectory: path.dirname(staticPath),
      nodeId,
      platformNetwork,
      dockerSocket: this.options.dockerSocket ?? DEFAULT_DOCKER_SOCKET,
      httpPort,
      httpsPort,
      dashboardPort,
    };

    if (existing === undefined) {
      try {
        const service = await docker.createService(proxyServiceSpec({ ...settings, forceUpdate: 0 }));
        this.options.logger?.info({ service: this.serviceName, image, staticPath }, "proxy service created");
        return { serviceId: service.id, created: true };
      } catch (error) {
        // Created meanwhile by a concurrent ensure: update that one instead.
        if (engineStatus(error) !== 409) throw error;
      }
    }
    let known = existing;
    const serviceId = await retryOutOfSequence(async () => {
      const current = known ?? (await findProxyService(docker, this.serviceName));
      known = undefined; // a retry reads the service's new version
      if (current === undefined) throw new CommandError("FAILED", `the service ${this.serviceName} vanished`);
      const forceUpdate =
        (current.spec.TaskTemplate?.ForceUpdate ?? 0) + (previousConfig === staticConfig ? 0 : 1);
      // The extra ports and environment are updateService's: kept as the running spec has them.
      const kept = { additionalPorts: extraPortsOf(current.spec), env: envOf(current.spec) };
      await updateService(
        docker,
        current.id,
        current.version,
        proxyServiceSpec({ ...settings, ...kept, forceUpdate }),
      );
      return current.id;
    });
    this.options.logger?.info({ service: this.serviceName, image, staticPath }, "proxy service updated");
    return { serviceId, created: false };
  }

  /**
   * Replaces the running proxy service's extra published ports and/or environment in place (the
   * task is re-created with them). FAILED_PRECONDITION when the proxy is not installed.
   */
  async updateService(command: UpdateProxyServiceCommand): Promise<ProxyService> {
    const ports = command.setPorts ? checkExtraPorts(command.additionalPorts) : undefined;
    const env = command.setEnv ? checkEnv(command.env) : undefined;
    const { docker } = this.options;
    const serviceId = await retryOutOfSequence(async () => {
      const existing = await findProxyService(docker, this.serviceName);
      if (existing === undefined) {
        throw new CommandError("FAILED_PRECONDITION", "the proxy is not installed on this server");
      }
      const spec = structuredClone(existing.spec);
      if (ports !== undefined) {
        const entryPoints = (spec.EndpointSpec?.Ports ?? []).filter((port) =>
          ENTRY_POINT_TARGETS.has(port.TargetPort ?? 0),
        );
        for (const port of ports) {
          if (entryPoints.some((entry) => entry.PublishedPort === port.PublishedPort)) {
            throw new CommandError(
              "INVALID_ARGUMENT",
              `additionalPorts: ${port.PublishedPort} is published by the proxy's entry points`,
            );
          }
        }
        spec.EndpointSpec = {
          ...spec.EndpointSpec,
          Ports: [...entryPoints, ...ports.map((port) => ({ PublishMode: "host" as const, ...port }))],
        };
      }
      const task = spec.TaskTemplate as Docker.ContainerTaskSpec;
      if (env !== undefined && task.ContainerSpec) task.ContainerSpec.Env = env;
      await updateService(docker, existing.id, existing.version, spec);
      return existing.id;
    });
    this.options.logger?.info({ service: this.serviceName }, "proxy ports or environment updated");
    return { serviceId, created: false };
  }

  /** Restarts the proxy's task (Traefik re-reads traefik.yml); found false when there is none. */
  async reload(): Promise<ProxyReloaded> {
    const { docker } = this.options;
    const found = await retryOutOfSequence(async () => {
      const existing = await findProxyService(docker, this.serviceName);
      if (existing === undefined) return false;
      await updateService(docker, existing.id, existing.version, withForceUpdate(existing.spec));
      return true;
    });
    if (found) this.options.logger?.info({ service: this.serviceName }, "proxy service reloaded");
    return { found };
  }

  /** The proxy's published ports and environment as its Swarm service spec has them. */
  async inspect(): Promise<ProxyInspection> {
    const existing = await findProxyService(this.options.docker, this.serviceName);
    if (existing === undefined) return { found: false, ports: [], env: [], runningTasks: 0 };
    const ports = (existing.spec.EndpointSpec?.Ports ?? []).map((port) => ({
      targetPort: port.TargetPort ?? 0,
      publishedPort: port.PublishedPort ?? 0,
      protocol: port.Protocol ?? "tcp",
    }));
    const task = existing.spec.TaskTemplate as Docker.ContainerTaskSpec | undefined;
    const tasks = await this.options.docker.listTasks({
      filters: JSON.stringify({ service: [existing.id], "desired-state": ["running"] }),
    });
    const runningTasks = tasks.filter(
      (t: { Status?: { State?: string } }) => t.Status?.State === "running",
    ).length;
    return { found: true, ports, env: task?.ContainerSpec?.Env ?? [], runningTasks };
  }
}

const PROTOCOLS = new Set(["tcp", "udp", "sctp"]);

/** The extra ports to publish: valid numbers, not an entry point's target, no duplicates. */
export function checkExtraPorts(ports: { targetPort: number; publishedPort: number; protocol: string }[]) {
  if (ports.length > 64) throw new CommandError("INVALID_ARGUMENT", "additionalPorts: at most 64 ports");
  const seen = new Set<string>();
  return ports.map((port): ProxyExtraPort => {
    for (const [field, value] of [
      ["targetPort", port.targetPort],
      ["publishedPort", port.publishedPort],
    ] as const) {
      if (!Number.isInteger(value) || value < 1 || value > 65535) {
        throw new CommandError(
          "INVALID_ARGUMENT",
          `additionalPorts: ${field} must be a port number (1-65535)`,
        );
      }
    }
    if (!PROTOCOLS.has(port.protocol)) {
      throw new CommandError("INVALID_ARGUMENT", "additionalPorts: protocol must be tcp, udp or sctp");
    }
    if (ENTRY_POINT_TARGETS.has(port.targetPort)) {
      throw new CommandError(
        "INVALID_ARGUMENT",
        `additionalPorts: targetPort ${port.targetPort} is an entry point's (the dashboard's is settings.toggleDashboard's)`,
      );
    }
    const key = `${port.publishedPort}/${port.protocol}`;
    if (seen.has(key)) throw new CommandError("INVALID_ARGUMENT", `additionalPorts: ${key} is listed twice`);
    seen.add(key);
    return {
      TargetPort: port.targetPort,
      PublishedPort: port.publishedPort,
      Protocol: port.protocol as ProxyExtraPort["Protocol"],
    };
  });
}

/** KEY=VALUE entries: a shell-safe variable name, no NUL or line break, bounded. */
export const ENV_ENTRY = /^[A-Za-z_][A-Za-z0-9_]{0,127}=[^\0\r\n]{0,4096}$/;

export function checkEnv(env: string[]): string[] {
  if (env.length > 200) throw new CommandError("INVALID_ARGUMENT", "env: at most 200 variables");
  const names = new Set<string>();
  for (const entry of env) {
    if (!ENV_ENTRY.test(entry)) {
      throw new CommandError(
        "INVALID_ARGUMENT",
        "env: each entry must be KEY=VALUE with KEY of letters, digits and _ (not first a digit) and VALUE on one line",
      );
    }
    const name = entry.slice(0, entry.indexOf("="));
    if (names.has(name)) throw new CommandError("INVALID_ARGUMENT", `env: ${name} is set twice`);
    names.add(name);
  }
  return env;
}

function checkImage(image: unknown): string {
  if (!isImageReference(image)) {
    throw new CommandError("INVALID_ARGUMENT", "image must be an image reference such as traefik:v3");
  }
  return image;
}

/**
 * The host ports to publish: 0 (unset) means the entry point's own port (80, 443, 8080); the
 * dashboard's only when it is enabled. INVALID_ARGUMENT naming the field otherwise.
 */
export function hostPorts(
  command: Pick<EnsureProxyCommand, "httpPort" | "httpsPort" | "dashboard" | "dashboardPort">,
): { httpPort: number; httpsPort: number; dashboardPort?: number } {
  const httpPort = checkPort(command.httpPort, "httpPort", HTTP_TARGET_PORT);
  const httpsPort = checkPort(command.httpsPort, "httpsPort", HTTPS_TARGET_PORT);
  const dashboardPort = command.dashboard
    ? checkPort(command.dashboardPort, "dashboardPort", DASHBOARD_TARGET_PORT)
    : undefined;
  const ports = [httpPort, httpsPort, ...(dashboardPort === undefined ? [] : [dashboardPort])];
  if (new Set(ports).size !== ports.length) {
    throw new CommandError("INVALID_ARGUMENT", "httpPort, httpsPort and dashboardPort must differ");
  }
  return { httpPort, httpsPort, dashboardPort };
}

function checkPort(port: unknown, field: string, defaultPort: number): number {
  if (port === 0 || port === undefined) return defaultPort;
  if (typeof port !== "number" || !Number.isInteger(port) || port < 1 || port > 65535) {
    throw new CommandError("INVALID_ARGUMENT", `${field} must be a port number (1-65535)`);
  }
  return port;
}
