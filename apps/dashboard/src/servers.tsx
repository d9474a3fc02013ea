/**
 * Servers: the organization's servers, and this machine's metrics as a graph (uPlot) of CPU and
 * memory use, read through server.getServerMetrics from the agent's /metrics with the
 * monitoring token (user.getMetricsToken answers it to instance administrators only).
 */
import { useEffect, useRef, useState } from "preact/hooks";
import uPlot from "uplot";
import "uplot/dist/uPlot.min.css";
import { query } from "./api.ts";
import { ErrorText, Status, useLoad } from "./ui.tsx";

interface Server {
  serverId: string;
  name: string;
  ipAddress: string;
  serverStatus: string;
  serverType: string;
}

interface MetricsToken {
  serverIp: string | null;
  metricsConfig: { server: { port: number; token: string; refreshRate: number } } | null;
}

interface Sample {
  timestamp: string;
  cpu: number;
  memUsed: number;
}

function MetricsGraph({
  url,
  token,
  refreshSeconds,
}: {
  url: string;
  token: string;
  refreshSeconds: number;
}) {
  const box = useRef<HTMLDivElement>(null);
  const [error, setError] = useState<string>();
  const [latest, setLatest] = useState<Sample>();
  useEffect(() => {
    let plot: uPlot | undefined;
    let live = true;
    const draw = async () => {
      try {
        const samples = await query<Sample[]>("server.getServerMetrics", { url, token, dataPoints: "120" });
        if (!live || !box.current) return;
        setError(undefined);
        setLatest(samples.at(-1));
        const data: uPlot.AlignedData = [
          samples.map((s) => Date.parse(s.timestamp) / 1000),
          samples.map((s) => s.cpu),
          samples.map((s) => s.memUsed),
        ];
        if (plot) plot.setData(data);
        else {
          plot = new uPlot(
            {
              width: Math.max(280, box.current.clientWidth),
              height: 240,
              // The last five minutes at least, so a few samples do not stretch over years.
              scales: {
                x: { time: true, range: (_plot, min, max) => [Math.min(min, max - 300), max] },
                y: { range: [0, 100] },
              },
              axes: [{ stroke: "currentColor" }, { stroke: "currentColor", label: "%" }],
              series: [
                {},
                { label: "CPU %", stroke: "#2f7de1", width: 2 },
                { label: "Memory %", stroke: "#d9480f", width: 2 },
              ],
            },
            data,
            box.current,
          );
        }
      } catch (failure) {
        if (live) setError((failure as Error).message);
      }
    };
    draw();
    const timer = setInterval(draw, Math.max(2, refreshSeconds) * 1000);
    return () => {
      live = false;
      clearInterval(timer);
      plot?.destroy();
    };
  }, [url, token, refreshSeconds]);
  return (
    <figure class="metrics" aria-label="CPU and memory use of this machine">
      <div ref={box} />
      <figcaption class="muted">
        {latest ? `Now: CPU ${latest.cpu} %, memory ${latest.memUsed} %` : "Reading the metrics…"}
      </figcaption>
      <ErrorText error={error} />
    </figure>
  );
}

export function ServersPage() {
  const servers = useLoad(() => query<Server[]>("server.all"), "servers");
  const monitoring = useLoad(() => query<MetricsToken>("user.getMetricsToken"), "metrics-token");
  const config = monitoring.data?.metricsConfig?.server;
  const host = monitoring.data?.serverIp || location.hostname;
  return (
    <>
      <h1>Servers</h1>
      <section class="card" aria-labelledby="this-machine">
        <h2 id="this-machine">This machine</h2>
        <ErrorText error={monitoring.error} />
        {config ? (
          <MetricsGraph
            url={`http://${host.includes(":") ? `[${host}]` : host}:${config.port}/metrics`}
            token={config.token}
            refreshSeconds={config.refreshRate}
          />
        ) : (
          monitoring.data && (
            <p class="muted">
              No metrics: monitoring is not set up (admin.setupMonitoring), or only an instance administrator
              may read them.
            </p>
          )
        )}
      </section>
      <section class="card" aria-labelledby="servers-title">
        <h2 id="servers-title">Remote servers</h2>
        <ErrorText error={servers.error} />
        <ul class="services" aria-label="Servers">
          {servers.data?.map((server) => (
            <li key={server.serverId}>
              {server.name} <span class="muted">{server.ipAddress}</span>{" "}
              <Status value={server.serverStatus} />
            </li>
          ))}
          {servers.data?.length === 0 && (
            <li class="muted">No remote server yet (server.create, see API).</li>
          )}
        </ul>
      </section>
    </>
  );
}
