/**
 * Servers: the organization's servers (add one: its bootstrap command, or the set-up over SSH
 * with its log; validation and security audit), and metrics graphs (uPlot) of this machine and
 * of a service's containers, read through server.getServerMetrics from the agent's /metrics
 * without the monitoring token, which the control plane takes from the server's stored monitoring
 * (a query's input is in its URL; graphs are shown to those who may read the token:
 * user.getMetricsToken answers this machine's to instance administrators only, server.one a
 * remote server's to the organization's administrators); the thresholds in force, and a Docker
 * cleanup now, of this machine or of a remote server.
 */
import { useEffect, useRef, useState } from "preact/hooks";
import uPlot from "uplot";
import "uplot/dist/uPlot.min.css";
import { type Answer, ApiFailure, mutate, query, type User } from "./api.ts";
import { ClusterNodes } from "./cluster.tsx";
import { ConfirmButton, ErrorText, Status, useLoad, useSubmit } from "./ui.tsx";

export interface MetricsConfig {
  server: {
    refreshRate: number;
    port: number;
    token: string;
    urlCallback: string;
    retentionDays: number;
    cronJob: string;
    thresholds: { cpu: number; memory: number };
  };
  containers: { refreshRate: number; services?: { include?: string[]; exclude?: string[] } };
}

/** What server.one shows members in place of the monitoring token. */
const REDACTED = "[redacted]";

export interface MetricsToken {
  serverIp: string | null;
  metricsConfig: MetricsConfig | null;
}

/** The agent's metrics base URL on this machine, or undefined without monitoring. */
export function metricsBase(monitoring: MetricsToken | undefined): string | undefined {
  const config = monitoring?.metricsConfig?.server;
  if (!config) return undefined;
  const host = monitoring?.serverIp || location.hostname;
  return `http://${host.includes(":") ? `[${host}]` : host}:${config.port}/metrics`;
}

/** One plotted line: its label, colour and how to read it from a sample. */
interface Line {
  label: string;
  stroke: string;
  read: (sample: Record<string, unknown>) => number;
}

export const SERVER_LINES: Line[] = [
  { label: "CPU %", stroke: "#2f7de1", read: (s) => Number(s.cpu) },
  { label: "Memory %", stroke: "#d9480f", read: (s) => Number(s.memUsed) },
];
export const CONTAINER_LINES: Line[] = [
  { label: "CPU % of a core", stroke: "#2f7de1", read: (s) => Number(s.cpu) },
  {
    label: "Memory %",
    stroke: "#d9480f",
    read: (s) => Number((s.memory as { percentage?: number } | undefined)?.percentage ?? 0),
  },
];

export function MetricsGraph({
  url,
  refreshSeconds,
  lines,
  label,
  giveUpAfter404s,
}: {
  url: string;
  refreshSeconds: number;
  lines: Line[];
  label: string;
  /** Stop asking after this many 404s in a row (a container graph of a stopped service). */
  giveUpAfter404s?: number;
}) {
  const box = useRef<HTMLDivElement>(null);
  const [error, setError] = useState<string>();
  const [latest, setLatest] = useState<Record<string, unknown>>();
  const [stopped, setStopped] = useState(false);
  const [round, setRound] = useState(0);
  useEffect(() => {
    let plot: uPlot | undefined;
    let live = true;
    let missing = 0;
    const draw = async () => {
      try {
        const samples = await query<Record<string, unknown>[]>("server.getServerMetrics", {
          url,
          dataPoints: "120",
        });
        if (!live || !box.current) return;
        setError(undefined);
        setLatest(samples.at(-1));
        // In time order, without samples whose time does not read.
        const timed = samples
          .map((sample) => ({ sample, at: Date.parse(String(sample.timestamp)) / 1000 }))
          .filter(({ at }) => Number.isFinite(at))
          .sort((a, b) => a.at - b.at);
        const data: uPlot.AlignedData = [
          timed.map(({ at }) => at),
          ...lines.map((line) => timed.map(({ sample }) => line.read(sample))),
        ];
        if (plot) plot.setData(data);
        else {
          plot = new uPlot(
            {
              width: Math.max(280, box.current.clientWidth),
              height: 240,
              // The last five minutes at least, so a few samples do not stretch over years.
              scales: {
                x: {
                  time: true,
                  range: (self) => {
                    const times = self.data[0];
                    const last = times.at(-1) ?? Date.now() / 1000;
                    return [Math.min(times[0] ?? last, last - 300), last];
                  },
                },
                y: { range: (_plot, _min, max) => [0, Math.max(100, max)] },
              },
              axes: [{ stroke: "currentColor" }, { stroke: "currentColor", label: "%" }],
              series: [{}, ...lines.map(({ label, stroke }) => ({ label, stroke, width: 2 }))],
            },
            data,
            box.current,
          );
        }
      } catch (failure) {
        if (!live) return;
        setError((failure as Error).message);
        // Nothing to read there (a service without a running container): asking again each
        // cycle for ever would only repeat the 404.
        missing = failure instanceof ApiFailure && failure.status === 404 ? missing + 1 : 0;
        if (giveUpAfter404s !== undefined && missing >= giveUpAfter404s) {
          clearInterval(timer);
          setStopped(true);
        }
      }
    };
    draw();
    const timer = setInterval(draw, Math.max(2, refreshSeconds) * 1000);
    return () => {
      live = false;
      clearInterval(timer);
      plot?.destroy();
    };
  }, [url, refreshSeconds, round]);
  return (
    <figure class="metrics" aria-label={label}>
      <div ref={box} />
      <figcaption class="muted">
        {stopped
          ? "Nothing to graph: no running container answers."
          : latest
            ? `Now: ${lines.map((line) => `${line.label.replace(/ %.*$/, "")} ${Math.round(line.read(latest) * 10) / 10} %`).join(", ")}`
            : "Reading the metrics…"}
      </figcaption>
      <ErrorText error={error} />
      {stopped && (
        <button
          type="button"
          class="ghost"
          onClick={() => {
            setStopped(false);
            setError(undefined);
            setRound((n) => n + 1);
          }}
        >
          Read the metrics again
        </button>
      )}
    </figure>
  );
}

type Server = Answer<"server.all">[number];

/** An error of the API or an agent, which names a server by its id, as the page says it: by name. */
function naming(server: { serverId: string; name: string }, message: string | undefined): string | undefined {
  return message?.replaceAll(server.serverId, server.name);
}

/** Runs `action`; its failure's message names the server by its name. */
async function asNamed<T>(server: { serverId: string; name: string }, action: () => Promise<T>): Promise<T> {
  try {
    return await action();
  } catch (failure) {
    throw new Error(naming(server, (failure as Error).message));
  }
}

/** A server's Swarm nodes, asked of its agent only once the reader opens them. */
function SwarmOf({ server, administers }: { server: Server; administers: boolean }) {
  const [open, setOpen] = useState(false);
  return (
    <details onToggle={(e) => setOpen(e.currentTarget.open)}>
      <summary>Swarm nodes of {server.name}</summary>
      {open && <ClusterNodes server={server} administers={administers} />}
    </details>
  );
}

/**
 * A server's connection details as server.update takes them; the SSH key can be another of the
 * organization's or none.
 */
function EditServer({ server, onSaved }: { server: Server; onSaved: () => void }) {
  const [name, setName] = useState(server.name);
  const [description, setDescription] = useState(server.description ?? "");
  const [ipAddress, setIpAddress] = useState(server.ipAddress);
  const [port, setPort] = useState(String(server.port));
  const [username, setUsername] = useState(server.username);
  const [sshKeyId, setSshKeyId] = useState(server.sshKeyId ?? "");
  const keys = useLoad(() => query<SshKey[]>("sshKey.all"), "ssh-keys");
  const [message, setMessage] = useState("");
  const save = useSubmit(async () => {
    setMessage("");
    await asNamed(server, () =>
      mutate("server.update", {
        serverId: server.serverId,
        name,
        description: description || null,
        ipAddress,
        port: Number(port),
        username,
        sshKeyId: sshKeyId || null,
      }),
    );
    setMessage(`${name} saved.`);
    onSaved();
  });
  return (
    <details>
      <summary>Edit {server.name}</summary>
      <form onSubmit={save.onSubmit} class="inline" aria-label={`Edit ${server.name}`}>
        <label>
          Name of {server.name}
          <input required value={name} onInput={(e) => setName(e.currentTarget.value)} />
        </label>
        <label>
          Description of {server.name}
          <input value={description} onInput={(e) => setDescription(e.currentTarget.value)} />
        </label>
        <label>
          IP address of {server.name}
          <input required value={ipAddress} onInput={(e) => setIpAddress(e.currentTarget.value)} />
        </label>
        <label>
          SSH port of {server.name}
          <input
            type="number"
            min={1}
            max={65535}
            required
            value={port}
            onInput={(e) => setPort(e.currentTarget.value)}
          />
        </label>
        <label>
          SSH user of {server.name}
          <input required value={username} onInput={(e) => setUsername(e.currentTarget.value)} />
        </label>
        <label>
          SSH key of {server.name}
          <select value={sshKeyId} onChange={(e) => setSshKeyId(e.currentTarget.value)}>
            <option value="">none (bootstrap command only)</option>
            {keys.data?.map((key) => (
              <option key={key.sshKeyId} value={key.sshKeyId}>
                {key.name}
              </option>
            ))}
          </select>
        </label>
        <button type="submit" disabled={save.busy}>
          Save {server.name}
        </button>
        <span role="status">{message}</span>
        <ErrorText error={save.error} />
      </form>
    </details>
  );
}

type Checks = Record<string, Record<string, unknown> | boolean>;

/** A check's result as a definition list: one row per tool or finding. */
function CheckList({ title, result }: { title: string; result: Checks }) {
  const show = (value: unknown): string =>
    typeof value === "boolean"
      ? value
        ? "yes"
        : "no"
      : value && typeof value === "object"
        ? Object.entries(value)
            .filter(([, v]) => v !== null && v !== "")
            .map(([k, v]) => `${k}: ${show(v)}`)
            .join(", ")
        : String(value);
  return (
    <>
      <h4>{title}</h4>
      <dl class="facts">
        {Object.entries(result).map(([name, value]) => (
          <>
            <dt key={`${name}-t`}>{name}</dt>
            <dd key={`${name}-d`}>{show(value)}</dd>
          </>
        ))}
      </dl>
    </>
  );
}

/** A server's row: validation and the security audit on demand, its set-up for administrators. */
function ServerItem({
  server,
  administers,
  onChanged,
}: {
  server: Server;
  administers: boolean;
  onChanged: () => void;
}) {
  const [checks, setChecks] = useState<{ validate: Checks; security: Checks }>();
  const [bootstrap, setBootstrap] = useState<string>();
  const [setupReport, setSetupReport] = useState<{ message: string; log: string }>();
  const check = useSubmit(async () => {
    setChecks(undefined);
    const [validate, security] = await Promise.all([
      query<Checks>("server.validate", { serverId: server.serverId }),
      query<Checks>("server.security", { serverId: server.serverId }),
    ]);
    setChecks({ validate, security });
  });
  const enroll = useSubmit(async () => {
    const answer = await mutate<{ command: string }>("server.enrollmentCommand", {
      serverId: server.serverId,
    });
    setBootstrap(answer.command);
  });
  const setup = useSubmit(async () => {
    setSetupReport(undefined);
    try {
      const answer = await mutate<{ message: string }>("server.setup", { serverId: server.serverId });
      const detail = await query<{ setupLog: string }>("server.one", { serverId: server.serverId });
      setSetupReport({ message: answer.message, log: detail.setupLog });
    } finally {
      onChanged();
    }
  });
  // Its monitoring as server.one answers it (the token `[redacted]` for members), or as just saved.
  const detail = useLoad(
    () =>
      query<{ metricsConfig: MetricsConfig | null; enableDockerCleanup: boolean }>("server.one", {
        serverId: server.serverId,
      }),
    `server-${server.serverId}`,
  );
  const [saved, setSaved] = useState<MetricsConfig>();
  const monitored = saved ?? detail.data?.metricsConfig ?? undefined;
  const readable = monitored !== undefined && monitored.server.token !== REDACTED;
  const titleId = `server-${server.serverId}`;
  const host = server.ipAddress.includes(":") ? `[${server.ipAddress}]` : server.ipAddress;
  return (
    <li class="card" aria-labelledby={titleId}>
      <h3 id={titleId}>
        {server.name} <span class="muted">{server.ipAddress}</span> <Status value={server.serverStatus} />{" "}
        <span class="badge">{server.online ? "agent online" : "agent offline"}</span>
      </h3>
      <div class="row">
        <button type="button" class="ghost" disabled={check.busy} onClick={check.onSubmit}>
          Check {server.name}
        </button>
        {administers && (
          <>
            <button type="button" class="ghost" disabled={enroll.busy} onClick={enroll.onSubmit}>
              Bootstrap command for {server.name}
            </button>
            <button type="button" class="ghost" disabled={setup.busy} onClick={setup.onSubmit}>
              {setup.busy ? "Setting up over SSH…" : `Set up ${server.name} over SSH`}
            </button>
            <ConfirmButton
              label={`Remove ${server.name}`}
              title={`Remove ${server.name}?`}
              consequence={`${server.name} (${server.ipAddress}) is forgotten by the control plane: its settings, its monitoring and the certificates stored for it are deleted, and its agent is no longer accepted (adding it again needs a new enrolment). The API refuses while services are placed on it${server.totalSum > 0 ? ` (now ${server.totalSum})` : ""} or it builds applications: delete or move them first. Nothing on the machine itself is deleted.`}
              confirmLabel="Remove server"
              action={() =>
                asNamed(server, () => mutate("server.remove", { serverId: server.serverId })).then(onChanged)
              }
            />
          </>
        )}
      </div>
      {administers && <EditServer server={server} onSaved={onChanged} />}
      <SwarmOf server={server} administers={administers} />
      {/* The agent's errors name the server by its id: the page says its name. */}
      <ErrorText error={naming(server, check.error ?? enroll.error ?? setup.error)} />
      {bootstrap && (
        <p>
          Run this on the server as root (the token works once):{" "}
          <output class="secret" aria-label={`Bootstrap command for ${server.name}`}>
            {bootstrap}
          </output>
        </p>
      )}
      {setupReport && (
        <>
          <p role="status">{setupReport.message}</p>
          <div
            class="log-lines setup-log"
            role="log"
            aria-label={`Set-up log of ${server.name}`}
            // biome-ignore lint/a11y/noNoninteractiveTabindex: the log scrolls; the keyboard must reach it
            tabIndex={0}
          >
            {setupReport.log || "(no output)"}
          </div>
        </>
      )}
      {administers && detail.data && (
        <details>
          <summary>Monitoring of {server.name}</summary>
          <MonitoringFields
            title={`Monitoring of ${server.name}`}
            config={monitored ?? null}
            save={(metricsConfig) =>
              asNamed(server, () =>
                mutate<{ message: string }>("server.setupMonitoring", {
                  serverId: server.serverId,
                  metricsConfig,
                }),
              )
            }
            onSaved={setSaved}
          />
        </details>
      )}
      {administers && detail.data && (
        <DailyCleanup server={server} enabled={detail.data.enableDockerCleanup} onSaved={detail.reload} />
      )}
      {administers && <Cleanup server={server} />}
      <ErrorText error={naming(server, detail.error)} />
      {monitored && !readable && (
        <p class="muted">Monitoring is set up; its graph is for the organization's administrators.</p>
      )}
      {monitored && readable && (
        <MetricsGraph
          url={`http://${host}:${monitored.server.port}/metrics`}
          refreshSeconds={monitored.server.refreshRate}
          lines={SERVER_LINES}
          label={`CPU and memory use of ${server.name}`}
        />
      )}
      {checks && (
        <div class="checks">
          <CheckList title="Validation" result={checks.validate} />
          <CheckList title="Security audit" result={checks.security} />
        </div>
      )}
    </li>
  );
}

function randomToken(): string {
  return Array.from(crypto.getRandomValues(new Uint8Array(24)), (n) => n.toString(16).padStart(2, "0")).join(
    "",
  );
}

/** A server's monitoring: refresh rate, port, thresholds, where alerts go, which services. */
export function MonitoringFields({
  title,
  config,
  save: store,
  onSaved,
}: {
  title: string;
  config: MetricsConfig | null;
  save: (metricsConfig: MetricsConfig) => Promise<{ message: string }>;
  onSaved: (metricsConfig: MetricsConfig) => void;
}) {
  const [refresh, setRefresh] = useState(String(config?.server.refreshRate ?? 30));
  const [port, setPort] = useState(String(config?.server.port ?? 4500));
  const [cpu, setCpu] = useState(String(config?.server.thresholds.cpu ?? 0));
  const [memory, setMemory] = useState(String(config?.server.thresholds.memory ?? 0));
  const [callback, setCallback] = useState(config?.server.urlCallback ?? "");
  const [retention, setRetention] = useState(String(config?.server.retentionDays ?? 7));
  const [services, setServices] = useState((config?.containers.services?.include ?? []).join(", "));
  const [message, setMessage] = useState("");
  const save = useSubmit(async () => {
    setMessage("");
    const include = services
      .split(/[\s,]+/)
      .map((name) => name.trim())
      .filter(Boolean);
    const metricsConfig: MetricsConfig = {
      server: {
        refreshRate: Number(refresh),
        port: Number(port),
        token: config?.server.token ?? randomToken(),
        urlCallback: callback,
        retentionDays: Number(retention),
        cronJob: config?.server.cronJob ?? "0 3 * * *",
        thresholds: { cpu: Number(cpu), memory: Number(memory) },
      },
      containers: {
        refreshRate: Number(refresh),
        ...(include.length > 0 ? { services: { include } } : {}),
      },
    };
    const answer = await store(metricsConfig);
    setMessage(answer.message);
    onSaved(metricsConfig);
  });
  const number = (label: string, value: string, set: (v: string) => void, min: number, max: number) => (
    <label>
      {label}
      <input
        type="number"
        min={min}
        max={max}
        required
        value={value}
        onInput={(e) => set(e.currentTarget.value)}
      />
    </label>
  );
  return (
    <form onSubmit={save.onSubmit} class="card inline" aria-label={title}>
      <h3>{title}</h3>
      {number("Refresh every (seconds)", refresh, setRefresh, 2, 86400)}
      {number("Metrics port", port, setPort, 1, 65535)}
      {number("CPU threshold % (0: off)", cpu, setCpu, 0, 100)}
      {number("Memory threshold % (0: off)", memory, setMemory, 0, 100)}
      {number("Keep metrics (days)", retention, setRetention, 1, 3650)}
      <label>
        Alerts to (URL)
        <input type="url" required value={callback} onInput={(e) => setCallback(e.currentTarget.value)} />
      </label>
      <label>
        Services whose containers are measured (app names; empty: all)
        <input value={services} onInput={(e) => setServices(e.currentTarget.value)} />
      </label>
      <button type="submit" disabled={save.busy}>
        Save monitoring
      </button>
      <span role="status">{message}</span>
      <ErrorText error={save.error} />
    </form>
  );
}

interface SshKey {
  sshKeyId: string;
  name: string;
  publicKey: string;
}

function AddServer({ onAdded }: { onAdded: () => void }) {
  const [name, setName] = useState("");
  const [ipAddress, setIpAddress] = useState("");
  const [username, setUsername] = useState("root");
  const [port, setPort] = useState("22");
  const [serverType, setServerType] = useState<"deploy" | "build">("deploy");
  const keys = useLoad(() => query<SshKey[]>("sshKey.all"), "ssh-keys");
  const [sshKeyId, setSshKeyId] = useState("");
  const [newKey, setNewKey] = useState<SshKey>();
  const generate = useSubmit(async () => {
    const pair = await mutate<{ privateKey: string; publicKey: string }>("sshKey.generate", {
      type: "ed25519",
    });
    const key = await mutate<SshKey>("sshKey.create", {
      name: `servers ${new Date().toISOString().slice(0, 10)}`,
      ...pair,
    });
    setNewKey(key);
    setSshKeyId(key.sshKeyId);
    keys.reload();
  });
  const add = useSubmit(async () => {
    await mutate("server.create", {
      name,
      ipAddress,
      username,
      port: Number(port),
      serverType,
      sshKeyId: sshKeyId || null,
    });
    setName("");
    setIpAddress("");
    onAdded();
  });
  return (
    <form onSubmit={add.onSubmit} class="card inline" aria-labelledby="add-server-title">
      <h2 id="add-server-title">Add a server</h2>
      <label>
        Server name
        <input required value={name} onInput={(e) => setName(e.currentTarget.value)} />
      </label>
      <label>
        IP address or host name
        <input required value={ipAddress} onInput={(e) => setIpAddress(e.currentTarget.value)} />
      </label>
      <label>
        SSH user
        <input required value={username} onInput={(e) => setUsername(e.currentTarget.value)} />
      </label>
      <label>
        SSH port
        <input
          type="number"
          min={1}
          max={65535}
          required
          value={port}
          onInput={(e) => setPort(e.currentTarget.value)}
        />
      </label>
      <label>
        Used for
        <select
          value={serverType}
          onChange={(e) => setServerType(e.currentTarget.value as "deploy" | "build")}
        >
          <option value="deploy">deployments</option>
          <option value="build">builds</option>
        </select>
      </label>
      <label>
        SSH key
        <select value={sshKeyId} onChange={(e) => setSshKeyId(e.currentTarget.value)}>
          <option value="">none (bootstrap command only)</option>
          {keys.data?.map((key) => (
            <option key={key.sshKeyId} value={key.sshKeyId}>
              {key.name}
            </option>
          ))}
        </select>
      </label>
      <button type="button" class="ghost" disabled={generate.busy} onClick={generate.onSubmit}>
        New SSH key
      </button>
      <button type="submit" disabled={add.busy}>
        Add server
      </button>
      <ErrorText error={add.error ?? generate.error} />
      {newKey && (
        <p>
          Add this public key to the server's ~/.ssh/authorized_keys:{" "}
          <output class="secret" aria-label="Public key">
            {newKey.publicKey}
          </output>
        </p>
      )}
      <p class="muted">
        Then install its agent: run its bootstrap command on it as root, or, with an SSH key, let the control
        plane set it up over SSH.
      </p>
    </form>
  );
}

interface CleanupReport {
  reclaimedBytes: number;
  containersDeleted: number;
  imagesDeleted: number;
  volumesDeleted: number;
  scope: "server" | "organization";
}

/** settings.clean*: what each removes. */
const CLEANUPS = [
  ["cleanAll", "everything unused (stopped containers, unused images and volumes, build cache)"],
  ["cleanStoppedContainers", "stopped containers"],
  ["cleanUnusedImages", "unused images"],
  ["cleanUnusedVolumes", "unused volumes"],
  ["cleanDockerBuilder", "the build cache"],
] as const;

/**
 * A remote server's daily Docker cleanup (cleanAll at midnight): server.one's enableDockerCleanup,
 * changed with settings.updateDockerCleanup and its serverId (administrators only).
 */
function DailyCleanup({
  server,
  enabled,
  onSaved,
}: {
  server: { serverId: string; name: string };
  enabled: boolean;
  onSaved: () => void;
}) {
  const [cleanup, setCleanup] = useState(enabled);
  const [message, setMessage] = useState("");
  const save = useSubmit(async () => {
    setMessage("");
    await asNamed(server, () =>
      mutate("settings.updateDockerCleanup", { enableDockerCleanup: cleanup, serverId: server.serverId }),
    );
    setMessage(cleanup ? "Daily cleanup on." : "Daily cleanup off.");
    onSaved();
  });
  return (
    <form onSubmit={save.onSubmit} class="inline" aria-label={`Daily Docker cleanup of ${server.name}`}>
      <label class="check">
        <input type="checkbox" checked={cleanup} onChange={(e) => setCleanup(e.currentTarget.checked)} />{" "}
        Daily Docker cleanup of {server.name} (unused images, stopped containers, build cache)
      </label>
      <button type="submit" disabled={save.busy}>
        Save daily cleanup of {server.name}
      </button>
      <span role="status">{message}</span>
      <ErrorText error={save.error} />
    </form>
  );
}

/** A Docker cleanup of this machine, or of `server` (settings.clean* with its serverId), and its answer. */
function Cleanup({ server }: { server?: { serverId: string; name: string } }) {
  const [kind, setKind] = useState<(typeof CLEANUPS)[number][0]>("cleanAll");
  const [report, setReport] = useState<CleanupReport>();
  const [busy, setBusy] = useState(false);
  const where = server ? server.name : "this machine";
  const what = CLEANUPS.find(([name]) => name === kind)?.[1] ?? kind;
  return (
    <div class="row">
      <label>
        What to clean on {where}
        <select value={kind} onChange={(e) => setKind(e.currentTarget.value as typeof kind)}>
          {CLEANUPS.map(([name, label]) => (
            <option key={name} value={name}>
              {label}
            </option>
          ))}
        </select>
      </label>
      <ConfirmButton
        label={busy ? "Cleaning up…" : server ? `Clean up ${server.name} now` : "Clean up Docker now"}
        title={`Clean up Docker on ${where}?`}
        consequence={`This removes ${what} on ${where}.${kind === "cleanAll" || kind === "cleanUnusedVolumes" ? " Unused volumes go with their data: a database or service whose volume is not in use right now (stopped, or not yet redeployed) loses it." : ""} Removed objects cannot be brought back.`}
        confirmLabel="Clean up"
        action={async () => {
          setReport(undefined);
          setBusy(true);
          try {
            const clean = () =>
              mutate<CleanupReport>(`settings.${kind}`, server ? { serverId: server.serverId } : {});
            setReport(await (server ? asNamed(server, clean) : clean()));
          } finally {
            setBusy(false);
          }
        }}
      />
      <span role="status">
        {report
          ? `Cleaned: ${(report.reclaimedBytes / 1048576).toFixed(1)} MB freed, ${report.containersDeleted} containers, ${report.imagesDeleted} images, ${report.volumesDeleted} volumes removed${report.scope === "organization" ? " (only this organization's objects)" : ""}.`
          : ""}
      </span>
    </div>
  );
}

export function ServersPage({ user, instanceAdmin }: { user: User | undefined; instanceAdmin: boolean }) {
  const servers = useLoad(() => query<Server[]>("server.all"), "servers");
  // An agent being installed turns its server online: read the list again every few seconds.
  useEffect(() => {
    const timer = setInterval(servers.reload, 5000);
    return () => clearInterval(timer);
  }, []);
  const monitoring = useLoad(() => query<MetricsToken>("user.getMetricsToken"), "metrics-token");
  const config = monitoring.data?.metricsConfig;
  const base = metricsBase(monitoring.data);
  const administers = user !== undefined && user.role !== "member";
  return (
    <>
      <h1>Servers</h1>
      <section class="card" aria-labelledby="this-machine">
        <h2 id="this-machine">This machine</h2>
        <ErrorText error={monitoring.error} />
        {config && base ? (
          <>
            <MetricsGraph
              url={base}
              refreshSeconds={config.server.refreshRate}
              lines={SERVER_LINES}
              label="CPU and memory use of this machine"
            />
            <p class="muted">
              Thresholds: CPU {config.server.thresholds.cpu || "off"}
              {config.server.thresholds.cpu ? " %" : ""}, memory {config.server.thresholds.memory || "off"}
              {config.server.thresholds.memory ? " %" : ""} (alerts go to {config.server.urlCallback}; change
              them in the instance settings).
            </p>
            <ContainerMetrics base={base} config={config} />
          </>
        ) : (
          monitoring.data && (
            <p class="muted">
              No metrics: monitoring is not set up (instance settings), or only an instance administrator may
              read them.
            </p>
          )
        )}
        {instanceAdmin && <Cleanup />}
        {instanceAdmin && <ClusterNodes administers={administers} />}
      </section>
      <section class="card" aria-labelledby="servers-title">
        <h2 id="servers-title">Remote servers</h2>
        <ErrorText error={servers.error} />
        <ul class="server-list" aria-label="Servers">
          {servers.data?.map((server) => (
            <ServerItem
              key={server.serverId}
              server={server}
              administers={administers}
              onChanged={servers.reload}
            />
          ))}
          {servers.data?.length === 0 && <li class="muted">No remote server yet.</li>}
        </ul>
      </section>
      {administers && <AddServer onAdded={servers.reload} />}
    </>
  );
}

/** A service's containers on this machine: pick its appName, see its graph. */
function ContainerMetrics({ base, config }: { base: string; config: MetricsConfig }) {
  const [appName, setAppName] = useState("");
  const [shown, setShown] = useState<string>();
  const show = (event: Event) => {
    event.preventDefault();
    setShown(appName.trim());
  };
  return (
    <>
      <form onSubmit={show} class="inline" aria-labelledby="containers-title">
        <h3 id="containers-title">A service's containers</h3>
        <label>
          Service (app name)
          <input required value={appName} onInput={(e) => setAppName(e.currentTarget.value)} />
        </label>
        <button type="submit">Show container metrics</button>
      </form>
      {shown && (
        <MetricsGraph
          key={shown}
          url={`${base}/containers?appName=${encodeURIComponent(shown)}`}
          refreshSeconds={config.containers.refreshRate}
          lines={CONTAINER_LINES}
          label={`CPU and memory use of ${shown}'s containers`}
          giveUpAfter404s={5}
        />
      )}
    </>
  );
}

/** An application's containers as a graph, for those who may read this machine's metrics. */
export function ServiceContainerGraph({ appName }: { appName: string }) {
  const monitoring = useLoad(() => query<MetricsToken>("user.getMetricsToken"), "metrics-token");
  const config = monitoring.data?.metricsConfig;
  const base = metricsBase(monitoring.data);
  if (!config || !base) return null;
  return (
    <section class="card" aria-labelledby="container-metrics-title">
      <h2 id="container-metrics-title">Container metrics</h2>
      <MetricsGraph
        url={`${base}/containers?appName=${encodeURIComponent(appName)}`}
        refreshSeconds={config.containers.refreshRate}
        lines={CONTAINER_LINES}
        label={`CPU and memory use of ${appName}'s containers`}
        giveUpAfter404s={5}
      />
    </section>
  );
}
