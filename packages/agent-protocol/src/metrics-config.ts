/**
 * The monitoring configuration (`metricsConfig`, spec 2.13) with the bounds of spec 8, and the
 * records the agent stores and serves on GET /metrics and /metrics/containers. The control plane
 * validates setupMonitoring input with this schema and the agent checks it again on arrival.
 *
 * @example
 * metricsConfigSchema.parse({ server: { refreshRate: 2, port: 4500, token: "t", urlCallback:
 *   "https://hooks.example.com/x", retentionDays: 7, cronJob: "0 0 * * *",
 *   thresholds: { cpu: 90, memory: 85 } }, containers: { refreshRate: 2 } });
 */

import { NAME_PATTERN } from "@platform/names";
import { Cron } from "croner";
import * as z from "zod";

/** A cron expression croner accepts (5 or 6 fields). */
const cronExpression = z
  .string()
  .min(1)
  .max(120)
  .refine((pattern) => {
    try {
      new Cron(pattern, { paused: true }).stop();
      return true;
    } catch {
      return false;
    }
  }, "must be a cron expression");

const serviceNames = z.array(z.string().regex(NAME_PATTERN, "must match ^[a-zA-Z0-9.\\-_]+$")).max(500);

export const metricsConfigSchema = z.strictObject({
  server: z.strictObject({
    refreshRate: z.number().min(2).max(86_400),
    port: z.number().int().min(1).max(65_535),
    token: z.string().min(1).max(512),
    urlCallback: z.url({ protocol: /^https?$/ }).max(2048),
    retentionDays: z.number().int().min(1).max(3650),
    cronJob: cronExpression,
    thresholds: z.strictObject({
      /** Percent; 0 disables. */
      cpu: z.number().min(0).max(100),
      memory: z.number().min(0).max(100),
    }),
  }),
  containers: z.strictObject({
    refreshRate: z.number().min(2).max(86_400),
    services: z
      .strictObject({ include: serviceNames.optional(), exclude: serviceNames.optional() })
      .optional(),
  }),
});

export type MetricsConfig = z.infer<typeof metricsConfigSchema>;

/** One system sample (spec 2.13 "System metrics record"). Percentages and sizes are strings. */
export interface SystemMetricsRecord {
  /** Percent of all cores. */
  cpu: string;
  cpuModel: string;
  cpuCores: number;
  cpuPhysicalCores: number;
  /** GHz. */
  cpuSpeed: number;
  os: string;
  distro: string;
  kernel: string;
  arch: string;
  /** Percent of memTotal. */
  memUsed: string;
  memUsedGB: string;
  /** GB. */
  memTotal: string;
  /** Seconds. */
  uptime: number;
  /** Percent of totalDisk. */
  diskUsed: string;
  /** GB. */
  totalDisk: string;
  /** MB received and sent since the previous sample. */
  networkIn: string;
  networkOut: string;
  /** ISO 8601. */
  timestamp: string;
}

/** One container sample (spec 2.13 "Container metrics record" plus its resource use). */
export interface ContainerMetricsRecord {
  containerId: string;
  containerName: string;
  containerImage: string;
  /** The container's labels as JSON (the ownership labels among them). */
  containerLabels: string;
  containerCommand: string;
  /** ISO 8601. */
  containerCreated: string;
  /** The Swarm service (appName) the container belongs to, or its name. */
  appName: string;
  /** The `platform.organization` label; "" for unmanaged containers. */
  organizationId: string;
  timestamp: string;
  /** Percent of one core (200 = two cores busy). */
  cpu: number;
  memory: { used: number; total: number; percentage: number; unit: "bytes" };
  network: { input: number; output: number; unit: "bytes" };
  blockIO: { read: number; write: number; unit: "bytes" };
}

/** The three error messages of the metrics endpoints (spec 7.5). */
export const METRICS_ERRORS = {
  noData: "No monitoring data available",
  notRunning: "Container not running",
  notIncluded: "Service not included",
} as const;
