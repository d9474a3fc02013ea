/**
 * The agent's metrics endpoints on `server.port` (spec 4.10, 7.5): GET /metrics?limit=N|all
 * (system samples), GET /metrics/containers?appName=…&limit=N|all (one service's container
 * samples) and the same data in Prometheus text exposition (prom-client) at /metrics/prometheus
 * or when the client accepts text/plain and not JSON. Every request needs
 * `Authorization: Bearer <server.token>`, compared in constant time with the SHA-256 the agent
 * keeps; anything else is a 401. Errors use the API's body `{error:{message,code,data}}`.
 */
import { createHash, timingSafeEqual } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import {
  type ContainerMetricsRecord,
  METRICS_ERRORS,
  type SystemMetricsRecord,
} from "@platform/agent-protocol";
import { NAME_PATTERN } from "@platform/names";

export const DEFAULT_LIMIT = 50;
const MAX_LIMIT = 100_000;

export function sha256Hex(text: string): string {
  return createHash("sha256").update(text, "utf8").digest("hex");
}

/** What the endpoints read; Monitoring (index.ts) implements it over its store and Docker. */
export interface MetricsSource {
  tokenSha256(): string | undefined;
  system(limit: number | undefined): Promise<SystemMetricsRecord[]>;
  /** The samples of appName, or which 7.5 error applies. */
  containers(
    appName: string,
    limit: number | undefined,
  ): Promise<ContainerMetricsRecord[] | keyof typeof METRICS_ERRORS>;
  /** The newest sample of every container (Prometheus exposition). */
  latestContainers(): Promise<ContainerMetricsRecord[]>;
}

class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly data: Record<string, unknown> = {},
  ) {
    super(message);
  }
}

const ERROR_STATUS: Record<keyof typeof METRICS_ERRORS, [number, string]> = {
  noData: [404, "NOT_FOUND"],
  notRunning: [404, "NOT_FOUND"],
  notIncluded: [400, "BAD_REQUEST"],
};

function metricsError(kind: keyof typeof METRICS_ERRORS): HttpError {
  const [status, code] = ERROR_STATUS[kind];
  return new HttpError(status, code, METRICS_ERRORS[kind]);
}

function authorized(request: IncomingMessage, expectedSha256: string | undefined): boolean {
  const header = request.headers.authorization ?? "";
  const match = /^Bearer (.+)$/.exec(header);
  if (!match || !expectedSha256) return false;
  return timingSafeEqual(Buffer.from(sha256Hex(match[1]!), "hex"), Buffer.from(expectedSha256, "hex"));
}

function parseLimit(value: string | null): number | undefined {
  if (value === null || value === "") return DEFAULT_LIMIT;
  if (value === "all") return undefined;
  if (!/^\d{1,6}$/.test(value) || Number(value) < 1 || Number(value) > MAX_LIMIT) {
    throw new HttpError(400, "BAD_REQUEST", `Invalid input: limit: must be 1 to ${MAX_LIMIT} or "all"`, {
      fields: ["limit"],
    });
  }
  return Number(value);
}

function wantsPrometheus(request: IncomingMessage, pathname: string): boolean {
  if (pathname.endsWith("/prometheus")) return true;
  const accept = request.headers.accept ?? "";
  return accept.includes("text/plain") && !accept.includes("application/json");
}

/** Prometheus text for the newest system sample and the newest sample of each container. */
export async function prometheusText(
  system: SystemMetricsRecord | undefined,
  containers: ContainerMetricsRecord[],
): Promise<{ contentType: string; body: string }> {
  // Loaded with the first Prometheus scrape: most agents never serve one.
  const { Gauge, Registry } = await import("prom-client");
  const registry = new Registry();
  const gauge = (name: string, help: string, labelNames: string[] = []) =>
    new Gauge({ name, help, labelNames, registers: [registry] });
  if (system) {
    const facts = gauge("platform_node_info", "Host facts (value 1)", [
      "cpu_model",
      "os",
      "distro",
      "kernel",
      "arch",
    ]);
    facts.set(
      {
        cpu_model: system.cpuModel,
        os: system.os,
        distro: system.distro,
        kernel: system.kernel,
        arch: system.arch,
      },
      1,
    );
    gauge("platform_node_cpu_usage_percent", "CPU use of all cores").set(Number(system.cpu));
    gauge("platform_node_cpu_cores", "Logical CPU cores").set(system.cpuCores);
    gauge("platform_node_memory_used_percent", "Memory in use").set(Number(system.memUsed));
    gauge("platform_node_memory_used_bytes", "Memory in use").set(Number(system.memUsedGB) * 1024 ** 3);
    gauge("platform_node_memory_total_bytes", "Memory size").set(Number(system.memTotal) * 1024 ** 3);
    gauge("platform_node_disk_used_percent", "Root filesystem in use").set(Number(system.diskUsed));
    gauge("platform_node_disk_total_bytes", "Root filesystem size").set(Number(system.totalDisk) * 1024 ** 3);
    gauge("platform_node_network_in_bytes", "Bytes received over the last interval").set(
      Number(system.networkIn) * 1024 ** 2,
    );
    gauge("platform_node_network_out_bytes", "Bytes sent over the last interval").set(
      Number(system.networkOut) * 1024 ** 2,
    );
    gauge("platform_node_uptime_seconds", "Host uptime").set(system.uptime);
  }
  const labels = ["container_id", "container_name", "app_name", "organization_id"];
  const perContainer = {
    cpu: gauge("platform_container_cpu_percent", "CPU use, percent of one core", labels),
    memory: gauge("platform_container_memory_used_bytes", "Memory in use without the page cache", labels),
    memoryLimit: gauge("platform_container_memory_limit_bytes", "Memory limit", labels),
    rx: gauge(
      "platform_container_network_receive_bytes",
      "Bytes received since the container started",
      labels,
    ),
    tx: gauge("platform_container_network_transmit_bytes", "Bytes sent since the container started", labels),
    read: gauge("platform_container_block_read_bytes", "Bytes read from block devices", labels),
    write: gauge("platform_container_block_write_bytes", "Bytes written to block devices", labels),
  };
  for (const record of containers) {
    const set = {
      container_id: record.containerId.slice(0, 12),
      container_name: record.containerName,
      app_name: record.appName,
      organization_id: record.organizationId,
    };
    perContainer.cpu.set(set, record.cpu);
    perContainer.memory.set(set, record.memory.used);
    perContainer.memoryLimit.set(set, record.memory.total);
    perContainer.rx.set(set, record.network.input);
    perContainer.tx.set(set, record.network.output);
    perContainer.read.set(set, record.blockIO.read);
    perContainer.write.set(set, record.blockIO.write);
  }
  return { contentType: registry.contentType, body: await registry.metrics() };
}

async function route(
  source: MetricsSource,
  request: IncomingMessage,
): Promise<{ contentType: string; body: string }> {
  const url = new URL(request.url ?? "/", "http://agent");
  const pathname = url.pathname.replace(/\/+$/, "") || "/";
  if (request.method !== "GET") throw new HttpError(405, "METHOD_NOT_SUPPORTED", "Only GET is served");
  if (!authorized(request, source.tokenSha256())) {
    throw new HttpError(401, "UNAUTHORIZED", "A valid Bearer token is required");
  }
  const limit = parseLimit(url.searchParams.get("limit"));
  const prometheus = wantsPrometheus(request, pathname);
  const json = (value: unknown) => ({ contentType: "application/json", body: JSON.stringify(value) });

  if (pathname === "/metrics" || pathname === "/metrics/prometheus") {
    const system = await source.system(prometheus ? 1 : limit);
    if (prometheus) return prometheusText(system.at(-1), await source.latestContainers());
    if (system.length === 0) throw metricsError("noData");
    return json(system);
  }
  if (pathname === "/metrics/containers" || pathname === "/metrics/containers/prometheus") {
    const appName = url.searchParams.get("appName") ?? "";
    if (!NAME_PATTERN.test(appName) || appName.length > 200) {
      throw new HttpError(400, "BAD_REQUEST", "Invalid input: appName: must match ^[a-zA-Z0-9.\\-_]+$", {
        fields: ["appName"],
      });
    }
    const records = await source.containers(appName, prometheus ? undefined : limit);
    if (typeof records === "string") throw metricsError(records);
    if (prometheus) {
      const newest = new Map(records.map((record) => [record.containerId, record]));
      return prometheusText(undefined, [...newest.values()]);
    }
    return json(records);
  }
  throw new HttpError(404, "NOT_FOUND", "Not found");
}

function answer(response: ServerResponse, status: number, contentType: string, body: string): void {
  response.writeHead(status, { "content-type": contentType, "cache-control": "no-store" });
  response.end(body);
}

/** Starts the endpoints on `port` (all interfaces, like Dokploy's monitoring). */
export async function startMetricsServer(
  source: MetricsSource,
  port: number,
  host = "0.0.0.0",
): Promise<Server> {
  const server = createServer((request, response) => {
    route(source, request).then(
      ({ contentType, body }) => answer(response, 200, contentType, body),
      (error: unknown) => {
        const http =
          error instanceof HttpError
            ? error
            : new HttpError(500, "INTERNAL_SERVER_ERROR", "Metrics could not be read");
        answer(
          response,
          http.status,
          "application/json",
          JSON.stringify({ error: { message: http.message, code: http.code, data: http.data } }),
        );
      },
    );
  });
  server.keepAliveTimeout = 5_000;
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  return server;
}

export async function closeMetricsServer(server: Server): Promise<void> {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
}
