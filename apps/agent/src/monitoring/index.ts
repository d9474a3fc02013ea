/**
 * Monitoring: the agent's metrics collection as configured by setupMonitoring (spec 2.13).
 * `apply` checks the configuration, keeps it in `<main directory>/monitoring/config.json` (the
 * token only as its SHA-256) and restarts, live: system samples every server.refreshRate
 * seconds, container samples every containers.refreshRate seconds, both appended to the
 * MetricsStore beside it; retention pruning on server.cronJob (croner); threshold alerts; and
 * the /metrics endpoints on server.port. `start` resumes a kept configuration after a restart.
 */
import { mkdir, readFile, rename, writeFile } from "node:fs/promises";
import type { Server } from "node:http";
import path from "node:path";
import {
  type AgentEvent,
  type ContainerMetricsRecord,
  type MetricsConfig,
  metricsConfigSchema,
  type SystemMetricsRecord,
} from "@platform/agent-protocol";
import { type AllowList, EMPTY_ALLOW_LIST } from "@platform/outbound-guard";
import { Cron } from "croner";
import type Docker from "dockerode";
import type { Logger } from "pino";
import { CommandError } from "../command-error.ts";
import { ContainerSampler, isServiceMonitored, monitoredContainers, serviceNameOf } from "./containers.ts";
import { closeMetricsServer, type MetricsSource, sha256Hex, startMetricsServer } from "./http.ts";
import { MetricsStore } from "./store.ts";
import { SystemSampler } from "./system.ts";
import { ThresholdWatch } from "./thresholds.ts";

/** The configuration as kept on disk: the token replaced by its SHA-256. */
type KeptConfig = Omit<MetricsConfig, "server"> & {
  server: Omit<MetricsConfig["server"], "token"> & { tokenSha256: string };
};

export interface MonitoringOptions {
  serverId: string;
  docker: Docker;
  /** Where config.json and the store live (`<main directory>/monitoring`). */
  directory: string;
  publishEvent?: (event: AgentEvent) => void;
  outboundAllow?: AllowList;
  /** Address the endpoints listen on (default all interfaces). */
  listenHost?: string;
  logger?: Logger;
}

export class Monitoring implements MetricsSource {
  readonly store: MetricsStore;
  private config?: KeptConfig;
  private readonly sampler = new SystemSampler();
  private readonly containerSampler: ContainerSampler;
  private readonly thresholds: ThresholdWatch;
  private timers: NodeJS.Timeout[] = [];
  private cron?: Cron;
  private server?: Server;
  private busy = { system: false, containers: false };

  constructor(private readonly options: MonitoringOptions) {
    this.store = new MetricsStore(path.join(options.directory, "store"));
    this.containerSampler = new ContainerSampler(options.docker);
    this.thresholds = new ThresholdWatch({
      serverId: options.serverId,
      outboundAllow: options.outboundAllow ?? EMPTY_ALLOW_LIST,
      publishEvent: options.publishEvent ?? (() => {}),
      logger: options.logger,
    });
  }

  get enabled(): boolean {
    return this.config !== undefined;
  }

  get port(): number | undefined {
    return this.config?.server.port;
  }

  private get configFile(): string {
    return path.join(this.options.directory, "config.json");
  }

  /** Resumes the kept configuration, if any (agent start). */
  async start(): Promise<void> {
    let text: string;
    try {
      text = await readFile(this.configFile, "utf8");
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return;
      throw error;
    }
    await this.run(JSON.parse(text) as KeptConfig);
  }

  /** Checks, keeps and runs a new configuration (the setupMonitoring command). */
  async apply(configJson: string): Promise<{ port: number }> {
    let parsed: MetricsConfig;
    try {
      parsed = metricsConfigSchema.parse(JSON.parse(configJson));
    } catch (error) {
      throw new CommandError("INVALID_ARGUMENT", `invalid metricsConfig: ${(error as Error).message}`);
    }
    const { token, ...server } = parsed.server;
    const kept: KeptConfig = { ...parsed, server: { ...server, tokenSha256: sha256Hex(token) } };
    await mkdir(this.options.directory, { recursive: true, mode: 0o700 });
    const temporary = `${this.configFile}.tmp`;
    await writeFile(temporary, JSON.stringify(kept), { mode: 0o600 });
    await rename(temporary, this.configFile);
    await this.run(kept);
    return { port: kept.server.port };
  }

  private async run(config: KeptConfig): Promise<void> {
    const previousPort = this.config?.server.port;
    await this.stopLoops();
    this.config = config;
    if (!this.server || previousPort !== config.server.port) {
      if (this.server) await closeMetricsServer(this.server);
      this.server = undefined;
      try {
        this.server = await startMetricsServer(this, config.server.port, this.options.listenHost);
      } catch (error) {
        throw new CommandError(
          "FAILED_PRECONDITION",
          `the metrics port ${config.server.port} cannot be used: ${(error as Error).message}`,
        );
      }
    }
    const every = (seconds: number, task: () => Promise<void>) => {
      const timer = setInterval(() => void task(), seconds * 1000);
      timer.unref();
      this.timers.push(timer);
      void task();
    };
    every(config.server.refreshRate, () => this.collectSystem());
    every(config.containers.refreshRate, () => this.collectContainers());
    this.cron = new Cron(config.server.cronJob, { unref: true }, () => void this.prune());
    await this.prune();
    this.options.logger?.info(
      { port: config.server.port, systemEverySeconds: config.server.refreshRate },
      "monitoring running",
    );
  }

  private async prune(): Promise<void> {
    if (!this.config) return;
    try {
      await this.store.prune(this.config.server.retentionDays);
    } catch (error) {
      this.options.logger?.warn({ err: (error as Error).message }, "metrics pruning failed");
    }
  }

  /** One system sample into the store (skipped while the previous one still runs). */
  async collectSystem(): Promise<void> {
    const config = this.config;
    if (!config || this.busy.system) return;
    this.busy.system = true;
    try {
      const record = await this.sampler.sample();
      await this.store.appendSystem(record);
      await this.thresholds.observe(record, { ...config.server, token: "" });
    } catch (error) {
      this.options.logger?.warn({ err: (error as Error).message }, "system metrics not collected");
    } finally {
      this.busy.system = false;
    }
  }

  /** One sample of every monitored container into the store. */
  async collectContainers(): Promise<void> {
    const config = this.config;
    if (!config || this.busy.containers) return;
    this.busy.containers = true;
    try {
      await this.store.appendContainers(await this.containerSampler.sample(config.containers.services));
    } catch (error) {
      this.options.logger?.warn({ err: (error as Error).message }, "container metrics not collected");
    } finally {
      this.busy.containers = false;
    }
  }

  // ---- MetricsSource (the /metrics endpoints) ----

  tokenSha256(): string | undefined {
    return this.config?.server.tokenSha256;
  }

  system(limit: number | undefined): Promise<SystemMetricsRecord[]> {
    return this.store.readSystem(limit);
  }

  async containers(appName: string, limit: number | undefined, organizationId?: string) {
    if (!this.config) return "noData" as const;
    if (!isServiceMonitored(appName, this.config.containers.services)) return "notIncluded" as const;
    const keep =
      organizationId === undefined
        ? undefined
        : (record: ContainerMetricsRecord) => record.organizationId === organizationId;
    const records = await this.store.readContainers(appName, limit, keep);
    if (records.length > 0) return records;
    const running = (await monitoredContainers(this.options.docker, this.config.containers.services)).some(
      (container) => serviceNameOf(container) === appName,
    );
    return running ? ("noData" as const) : ("notRunning" as const);
  }

  async latestContainers(): Promise<ContainerMetricsRecord[]> {
    const running = await monitoredContainers(this.options.docker, this.config?.containers.services);
    const appNames = new Set(running.map(serviceNameOf));
    const newest = new Map<string, ContainerMetricsRecord>();
    for (const appName of appNames) {
      for (const record of await this.store.readContainers(appName, 50))
        newest.set(record.containerId, record);
    }
    const runningIds = new Set(running.map((container) => container.Id));
    return [...newest.values()].filter((record) => runningIds.has(record.containerId));
  }

  private async stopLoops(): Promise<void> {
    for (const timer of this.timers) clearInterval(timer);
    this.timers = [];
    this.cron?.stop();
    this.cron = undefined;
  }

  /** Stops collecting and serving (agent shutdown); the kept configuration stays. */
  async stop(): Promise<void> {
    await this.stopLoops();
    if (this.server) await closeMetricsServer(this.server);
    this.server = undefined;
  }
}
