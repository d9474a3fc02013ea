/**
 * Threshold alerts: when CPU or memory use stays above its threshold (percent; 0 disables) for
 * SUSTAINED_SAMPLES system samples in a row, the agent POSTs to `urlCallback` once (through the
 * outbound guard: never link-local or metadata addresses, loopback and private ones only when
 * the operator's allow list covers them) and publishes a `serverThreshold` event, which the
 * control plane records for notification delivery. It fires again only after the value has
 * dropped below the threshold.
 */
import type { AgentEvent, MetricsConfig, SystemMetricsRecord } from "@platform/agent-protocol";
import { type AllowList, checkOutboundHost } from "@platform/outbound-guard";
import type { Logger } from "pino";

export const SUSTAINED_SAMPLES = 3;
const CALLBACK_TIMEOUT_MS = 10_000;

export type ThresholdKind = "CPU" | "Memory";

export interface ThresholdAlert {
  type: ThresholdKind;
  /** Percent, as sampled. */
  value: number;
  threshold: number;
  message: string;
  timestamp: string;
  serverId: string;
}

export interface ThresholdWatchOptions {
  serverId: string;
  outboundAllow: AllowList;
  publishEvent: (event: AgentEvent) => void;
  logger?: Logger;
  /** Sends the callback (tests observe it); default: a guarded fetch POST. */
  send?: (url: string, alert: ThresholdAlert) => Promise<void>;
}

export class ThresholdWatch {
  private readonly above = { CPU: 0, Memory: 0 };
  private readonly fired = { CPU: false, Memory: false };

  constructor(private readonly options: ThresholdWatchOptions) {}

  /** Looks at one system sample; answers the alerts it fired (already sent and published). */
  async observe(record: SystemMetricsRecord, server: MetricsConfig["server"]): Promise<ThresholdAlert[]> {
    const alerts: ThresholdAlert[] = [];
    const checks: [ThresholdKind, number, number][] = [
      ["CPU", Number(record.cpu), server.thresholds.cpu],
      ["Memory", Number(record.memUsed), server.thresholds.memory],
    ];
    for (const [type, value, threshold] of checks) {
      if (threshold <= 0 || value <= threshold) {
        this.above[type] = 0;
        this.fired[type] = false;
        continue;
      }
      this.above[type]++;
      if (this.fired[type] || this.above[type] < SUSTAINED_SAMPLES) continue;
      this.fired[type] = true;
      alerts.push({
        type,
        value,
        threshold,
        message: `${type} usage ${value.toFixed(2)}% has stayed above the threshold of ${threshold}%`,
        timestamp: record.timestamp,
        serverId: this.options.serverId,
      });
    }
    for (const alert of alerts) await this.deliver(server.urlCallback, alert);
    return alerts;
  }

  private async deliver(url: string, alert: ThresholdAlert): Promise<void> {
    const { publishEvent, serverId, logger } = this.options;
    publishEvent({
      serverId,
      kind: "serverThreshold",
      timeUnixMs: Date.parse(alert.timestamp) || Date.now(),
      attributes: {
        type: alert.type,
        value: alert.value.toFixed(2),
        threshold: String(alert.threshold),
        message: alert.message,
      },
    });
    try {
      await (this.options.send ?? ((target, body) => this.post(target, body)))(url, alert);
    } catch (error) {
      logger?.warn({ err: (error as Error).message, type: alert.type }, "threshold callback not delivered");
    }
  }

  private async post(url: string, alert: ThresholdAlert): Promise<void> {
    const target = new URL(url);
    await checkOutboundHost(target.hostname, this.options.outboundAllow);
    const response = await fetch(target, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(alert),
      redirect: "manual",
      signal: AbortSignal.timeout(CALLBACK_TIMEOUT_MS),
    });
    await response.body?.cancel();
    if (!response.ok) throw new Error(`the callback answered ${response.status}`);
  }
}
