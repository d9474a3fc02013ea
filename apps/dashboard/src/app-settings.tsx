/**
 * An application's settings beside its deployments: the source (source.tsx), the build type, HTTP Basic
 * credentials, Swarm settings and the registry it pulls from. Each form saves through one
 * procedure of the public API and applies from the next deployment.
 */
import { useState } from "preact/hooks";
import { type Application, mutate, query, type RequestBody } from "./api.ts";
import { ApplicationSource } from "./source.tsx";
import { ErrorText, useLoad, useSubmit } from "./ui.tsx";

/**
 * application.one's answer. The schema of that answer leaves the stored Swarm objects open
 * (records of unknown members); they are what application.update accepted, so the forms read them
 * as its input schema describes them.
 */
export type ApplicationSettings = Omit<Application, SwarmKey> & SwarmFields;

/** A form's "Saved." beside its button. */
function Saved({ shown }: { shown: boolean }) {
  return <span role="status">{shown ? "Saved." : ""}</span>;
}

function useSave(action: () => Promise<void>, onSaved: () => void) {
  const [saved, setSaved] = useState(false);
  const submit = useSubmit(async () => {
    setSaved(false);
    await action();
    setSaved(true);
    onSaved();
  });
  return { ...submit, saved };
}

const BUILD_TYPES = [
  "dockerfile",
  "nixpacks",
  "heroku_buildpacks",
  "paketo_buildpacks",
  "railpack",
  "static",
];

function BuildType({ app, onSaved }: { app: ApplicationSettings; onSaved: () => void }) {
  const [buildType, setBuildType] = useState<string>(app.buildType);
  const [dockerfile, setDockerfile] = useState(app.dockerfile ?? "Dockerfile");
  const save = useSave(
    () =>
      mutate("application.saveBuildType", {
        applicationId: app.applicationId,
        buildType,
        dockerContextPath: null,
        dockerBuildStage: null,
        ...(buildType === "dockerfile" ? { dockerfile } : {}),
      }),
    onSaved,
  );
  return (
    <form onSubmit={save.onSubmit} class="card inline" aria-labelledby="build-title">
      <h2 id="build-title">Build type</h2>
      <label>
        Build with
        <select value={buildType} onChange={(e) => setBuildType(e.currentTarget.value)}>
          {BUILD_TYPES.map((type) => (
            <option key={type} value={type}>
              {type.replace("_", " ")}
            </option>
          ))}
        </select>
      </label>
      {buildType === "dockerfile" && (
        <label>
          Dockerfile path
          <input required value={dockerfile} onInput={(e) => setDockerfile(e.currentTarget.value)} />
        </label>
      )}
      <button type="submit" disabled={save.busy}>
        Save build type
      </button>
      <Saved shown={save.saved} />
      <ErrorText error={save.error} />
    </form>
  );
}

function BasicAuth({ app, onSaved }: { app: ApplicationSettings; onSaved: () => void }) {
  const [username, setUsername] = useState("");
  const [password, setPassword] = useState("");
  const add = useSave(async () => {
    await mutate("security.create", { applicationId: app.applicationId, username, password });
    setUsername("");
    setPassword("");
  }, onSaved);
  const remove = async (securityId: string) => {
    await mutate("security.delete", { securityId });
    onSaved();
  };
  return (
    <section class="card" aria-labelledby="basic-auth-title">
      <h2 id="basic-auth-title">HTTP Basic credentials</h2>
      <ul class="services" aria-label="Basic credentials">
        {app.security.map((entry) => (
          <li key={entry.securityId}>
            {entry.username}{" "}
            <button type="button" class="ghost" onClick={() => remove(entry.securityId)}>
              Remove {entry.username}
            </button>
          </li>
        ))}
        {app.security.length === 0 && <li class="muted">Open to everyone (no credentials).</li>}
      </ul>
      <form onSubmit={add.onSubmit} class="inline" aria-label="Add Basic credentials">
        <label>
          User name
          <input
            required
            autocomplete="off"
            value={username}
            onInput={(e) => setUsername(e.currentTarget.value)}
          />
        </label>
        <label>
          Password
          <input
            type="password"
            required
            autocomplete="new-password"
            value={password}
            onInput={(e) => setPassword(e.currentTarget.value)}
          />
        </label>
        <button type="submit" disabled={add.busy}>
          Add credentials
        </button>
        <ErrorText error={add.error} />
      </form>
    </section>
  );
}

type Json = Record<string, unknown>;

const SWARM_KEYS = [
  "healthCheckSwarm",
  "restartPolicySwarm",
  "placementSwarm",
  "updateConfigSwarm",
  "rollbackConfigSwarm",
  "modeSwarm",
  "labelsSwarm",
  "networkSwarm",
  "stopGracePeriodSwarm",
  "endpointSpecSwarm",
  "ulimitsSwarm",
] as const;
type SwarmKey = (typeof SWARM_KEYS)[number];
/** The Swarm fields of application.update (Docker's names), as application.one answers them. */
type SwarmFields = { [Key in SwarmKey]-?: Exclude<RequestBody<"application.update">[Key], undefined> };
type UpdateConfig = NonNullable<SwarmFields["updateConfigSwarm"]>;

// Docker takes durations in nanoseconds; the forms show seconds.
const seconds = (ns: number | undefined | null) => (ns == null ? "" : String(ns / 1e9));
const nanos = (text: string) => (text.trim() === "" ? undefined : Math.round(Number(text) * 1e9));
const count = (text: string) => (text.trim() === "" ? undefined : Number(text));
const lines = (text: string) =>
  text
    .split("\n")
    .map((line) => line.trim())
    .filter(Boolean);
/** The object without its undefined members, or null when none is left. */
function compact<T extends Json>(value: T): T | null {
  const kept = Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined));
  return Object.keys(kept).length > 0 ? (kept as T) : null;
}

function Field({
  label,
  value,
  set,
  type = "text",
}: {
  label: string;
  value: string;
  set: (value: string) => void;
  type?: "text" | "number";
}) {
  const onInput = (e: { currentTarget: HTMLInputElement }) => set(e.currentTarget.value);
  return (
    <label>
      {label}
      <input type={type as "number"} min={0} step="any" value={value} onInput={onInput} />
    </label>
  );
}

function Choice({
  label,
  value,
  set,
  options,
}: {
  label: string;
  value: string;
  set: (value: string) => void;
  options: string[];
}) {
  return (
    <label>
      {label}
      <select value={value} onChange={(e) => set(e.currentTarget.value)}>
        {options.map((option) => (
          <option key={option} value={option}>
            {option || "(Docker's default)"}
          </option>
        ))}
      </select>
    </label>
  );
}

/** An update or rollback config: its fields as text, and the object they make (null when empty). */
function useUpdateConfig(stored: UpdateConfig | null) {
  const [parallelism, setParallelism] = useState(stored ? String(stored.Parallelism) : "");
  const [delay, setDelay] = useState(seconds(stored?.Delay));
  const [order, setOrder] = useState<string>(stored?.Order ?? "stop-first");
  const [failureAction, setFailureAction] = useState(stored?.FailureAction ?? "");
  const value = (): UpdateConfig | null =>
    parallelism.trim() === ""
      ? null
      : {
          ...stored,
          Parallelism: Number(parallelism),
          Delay: nanos(delay),
          // The <select>s offer only the values the schema names.
          Order: order as UpdateConfig["Order"],
          FailureAction: (failureAction || undefined) as UpdateConfig["FailureAction"],
        };
  const fields = (name: string) => (
    <fieldset>
      <legend>{name} (empty parallelism: Docker's default)</legend>
      <Field label={`${name}: parallelism`} type="number" value={parallelism} set={setParallelism} />
      <Field label={`${name}: delay (seconds)`} type="number" value={delay} set={setDelay} />
      <Choice label={`${name}: order`} value={order} set={setOrder} options={["stop-first", "start-first"]} />
      <Choice
        label={`${name}: on failure`}
        value={failureAction}
        set={setFailureAction}
        options={["", "pause", "continue", "rollback"]}
      />
    </fieldset>
  );
  return { value, fields };
}

/**
 * Swarm settings as forms (application.update's *Swarm fields): what they do not show of a stored
 * value is kept, and the rest (ulimitsSwarm, placement preferences…) is edited as JSON.
 */
function Swarm({ app, onSaved }: { app: ApplicationSettings; onSaved: () => void }) {
  const [replicas, setReplicas] = useState(String(app.replicas));
  const health = app.healthCheckSwarm;
  const [healthTest, setHealthTest] = useState(
    health?.Test
      ? health.Test[0] === "CMD-SHELL"
        ? (health.Test[1] ?? "")
        : health.Test.slice(1).join(" ")
      : "",
  );
  const [healthInterval, setHealthInterval] = useState(seconds(health?.Interval));
  const [healthTimeout, setHealthTimeout] = useState(seconds(health?.Timeout));
  const [healthStart, setHealthStart] = useState(seconds(health?.StartPeriod));
  const [healthRetries, setHealthRetries] = useState(health?.Retries == null ? "" : String(health.Retries));
  const restart = app.restartPolicySwarm;
  const [restartCondition, setRestartCondition] = useState(restart?.Condition ?? "");
  const [restartDelay, setRestartDelay] = useState(seconds(restart?.Delay));
  const [restartAttempts, setRestartAttempts] = useState(
    restart?.MaxAttempts == null ? "" : String(restart.MaxAttempts),
  );
  const [constraints, setConstraints] = useState((app.placementSwarm?.Constraints ?? []).join("\n"));
  const [mode, setMode] = useState(app.modeSwarm && "Global" in app.modeSwarm ? "global" : "replicated");
  const [labels, setLabels] = useState(
    Object.entries(app.labelsSwarm ?? {})
      .map(([key, value]) => `${key}=${value}`)
      .join("\n"),
  );
  const [networks, setNetworks] = useState(
    (app.networkSwarm ?? []).map((n) => `${n.Target ?? ""}: ${(n.Aliases ?? []).join(", ")}`).join("\n"),
  );
  const [grace, setGrace] = useState(seconds(app.stopGracePeriodSwarm));
  const [endpointMode, setEndpointMode] = useState(app.endpointSpecSwarm?.Mode ?? "");
  const [endpointPorts, setEndpointPorts] = useState(
    (app.endpointSpecSwarm?.Ports ?? [])
      .map(
        (p) =>
          `${p.PublishedPort ?? ""}:${p.TargetPort ?? ""}/${p.Protocol ?? "tcp"} ${p.PublishMode ?? "ingress"}`,
      )
      .join("\n"),
  );
  const update = useUpdateConfig(app.updateConfigSwarm);
  const rollback = useUpdateConfig(app.rollbackConfigSwarm);
  const [advanced, setAdvanced] = useState(
    app.ulimitsSwarm ? JSON.stringify({ ulimitsSwarm: app.ulimitsSwarm }) : "",
  );
  const save = useSave(async () => {
    let extra: Json = {};
    if (advanced.trim()) {
      try {
        extra = JSON.parse(advanced);
      } catch {
        throw new Error("The other Swarm settings must be a JSON object");
      }
    }
    const ports = lines(endpointPorts).map((line) => {
      const match = /^(\d*):(\d+)(?:\/(tcp|udp))?(?:\s+(ingress|host))?$/.exec(line);
      if (!match)
        throw new Error(
          `Endpoint port "${line}": write published:target/protocol mode, e.g. 8080:80/tcp ingress`,
        );
      return compact({
        PublishedPort: count(match[1] ?? ""),
        TargetPort: Number(match[2]),
        Protocol: match[3] ?? "tcp",
        PublishMode: match[4] ?? "ingress",
      });
    });
    const labelEntries = lines(labels).map((line) => {
      const at = line.indexOf("=");
      if (at < 1) throw new Error(`Label "${line}": write key=value`);
      return [line.slice(0, at).trim(), line.slice(at + 1).trim()];
    });
    const placement = { ...app.placementSwarm, Constraints: lines(constraints) };
    if (placement.Constraints.length === 0) delete (placement as Json).Constraints;
    await mutate("application.update", {
      applicationId: app.applicationId,
      replicas: Number(replicas),
      healthCheckSwarm: compact({
        ...health,
        Test: healthTest.trim() ? ["CMD-SHELL", healthTest.trim()] : undefined,
        Interval: nanos(healthInterval),
        Timeout: nanos(healthTimeout),
        StartPeriod: nanos(healthStart),
        Retries: count(healthRetries),
      }),
      restartPolicySwarm: compact({
        ...restart,
        Condition: restartCondition || undefined,
        Delay: nanos(restartDelay),
        MaxAttempts: count(restartAttempts),
      }),
      placementSwarm: compact(placement),
      modeSwarm: mode === "global" ? { Global: {} } : null,
      labelsSwarm: labelEntries.length > 0 ? Object.fromEntries(labelEntries) : null,
      networkSwarm:
        lines(networks).length > 0
          ? lines(networks).map((line) => {
              const [target = "", aliases = ""] = line.split(":");
              return compact({
                Target: target.trim() || undefined,
                Aliases: aliases.trim() ? aliases.split(/[\s,]+/).filter(Boolean) : undefined,
              });
            })
          : null,
      stopGracePeriodSwarm: nanos(grace) ?? null,
      endpointSpecSwarm: compact({
        Mode: endpointMode || undefined,
        Ports: ports.length > 0 ? ports : undefined,
      }),
      updateConfigSwarm: update.value(),
      rollbackConfigSwarm: rollback.value(),
      ...extra,
    });
  }, onSaved);
  return (
    <form onSubmit={save.onSubmit} class="card inline swarm" aria-labelledby="swarm-title">
      <h2 id="swarm-title">Swarm settings</h2>
      <label>
        Replicas
        <input
          type="number"
          min={1}
          max={100}
          required
          value={replicas}
          onInput={(e) => setReplicas(e.currentTarget.value)}
        />
      </label>
      <Choice label="Service mode" value={mode} set={setMode} options={["replicated", "global"]} />
      <fieldset>
        <legend>Health check</legend>
        <Field label="Health check command (run by a shell)" value={healthTest} set={setHealthTest} />
        <Field
          label="Health check interval (seconds)"
          type="number"
          value={healthInterval}
          set={setHealthInterval}
        />
        <Field
          label="Health check timeout (seconds)"
          type="number"
          value={healthTimeout}
          set={setHealthTimeout}
        />
        <Field
          label="Health check start period (seconds)"
          type="number"
          value={healthStart}
          set={setHealthStart}
        />
        <Field label="Health check retries" type="number" value={healthRetries} set={setHealthRetries} />
      </fieldset>
      <fieldset>
        <legend>Restart policy</legend>
        <Choice
          label="Restart condition"
          value={restartCondition}
          set={setRestartCondition}
          options={["", "any", "on-failure", "none"]}
        />
        <Field label="Restart delay (seconds)" type="number" value={restartDelay} set={setRestartDelay} />
        <Field
          label="Restart attempts at most"
          type="number"
          value={restartAttempts}
          set={setRestartAttempts}
        />
      </fieldset>
      {update.fields("Update")}
      {rollback.fields("Rollback")}
      <label>
        Placement constraints (one a line, e.g. node.role==manager)
        <textarea
          rows={2}
          spellcheck={false}
          value={constraints}
          onInput={(e) => setConstraints(e.currentTarget.value)}
        />
      </label>
      <label>
        Service labels (key=value, one a line)
        <textarea
          rows={2}
          spellcheck={false}
          value={labels}
          onInput={(e) => setLabels(e.currentTarget.value)}
        />
      </label>
      <label>
        Networks and aliases (network: alias, alias — one a line)
        <textarea
          rows={2}
          spellcheck={false}
          value={networks}
          onInput={(e) => setNetworks(e.currentTarget.value)}
        />
      </label>
      <Field label="Stop grace period (seconds)" type="number" value={grace} set={setGrace} />
      <Choice
        label="Endpoint mode"
        value={endpointMode}
        set={setEndpointMode}
        options={["", "vip", "dnsrr"]}
      />
      <label>
        Endpoint ports (published:target/protocol mode, one a line, e.g. 8080:80/tcp ingress)
        <textarea
          rows={2}
          spellcheck={false}
          value={endpointPorts}
          onInput={(e) => setEndpointPorts(e.currentTarget.value)}
        />
      </label>
      <label>
        Other Swarm settings, JSON (ulimitsSwarm, placementSwarm preferences…; applied over the fields above)
        <textarea
          rows={3}
          spellcheck={false}
          value={advanced}
          onInput={(e) => setAdvanced(e.currentTarget.value)}
        />
      </label>
      <button type="submit" disabled={save.busy}>
        Save Swarm settings
      </button>
      <Saved shown={save.saved} />
      <ErrorText error={save.error} />
    </form>
  );
}

interface Registry {
  registryId: string;
  registryName: string;
  registryUrl: string;
}

function Registries({ app, onSaved }: { app: ApplicationSettings; onSaved: () => void }) {
  const registries = useLoad(() => query<Registry[]>("registry.all"), "registries");
  const [registryId, setRegistryId] = useState(app.registryId ?? "");
  const [name, setName] = useState("");
  const [url, setUrl] = useState("");
  const [username, setUsername] = useState("");
  const [password, setPassword] = useState("");
  const choose = useSave(
    () => mutate("application.update", { applicationId: app.applicationId, registryId: registryId || null }),
    onSaved,
  );
  const add = useSave(async () => {
    const created = await mutate<Registry>("registry.create", {
      registryName: name,
      registryUrl: url,
      username,
      password,
    });
    setRegistryId(created.registryId);
    setName("");
    setPassword("");
  }, registries.reload);
  return (
    <section class="card" aria-labelledby="registry-title">
      <h2 id="registry-title">Registry</h2>
      <form onSubmit={choose.onSubmit} class="inline" aria-label="Registry of this application">
        <label>
          Pull from
          <select value={registryId} onChange={(e) => setRegistryId(e.currentTarget.value)}>
            <option value="">no registry (public images)</option>
            {registries.data?.map((r) => (
              <option key={r.registryId} value={r.registryId}>
                {r.registryName} ({r.registryUrl})
              </option>
            ))}
          </select>
        </label>
        <button type="submit" disabled={choose.busy}>
          Use registry
        </button>
        <Saved shown={choose.saved} />
        <ErrorText error={choose.error ?? registries.error} />
      </form>
      <details>
        <summary>Add a registry</summary>
        <form onSubmit={add.onSubmit} class="inline" aria-label="Add a registry">
          <label>
            Registry name
            <input required value={name} onInput={(e) => setName(e.currentTarget.value)} />
          </label>
          <label>
            Registry URL
            <input
              required
              placeholder="registry.example.com"
              value={url}
              onInput={(e) => setUrl(e.currentTarget.value)}
            />
          </label>
          <label>
            Registry user
            <input required value={username} onInput={(e) => setUsername(e.currentTarget.value)} />
          </label>
          <label>
            Registry password
            <input
              type="password"
              required
              value={password}
              onInput={(e) => setPassword(e.currentTarget.value)}
            />
          </label>
          <button type="submit" disabled={add.busy}>
            Add registry
          </button>
          <ErrorText error={add.error} />
        </form>
      </details>
    </section>
  );
}

export function ApplicationSettingsForms({
  app,
  onSaved,
  part,
}: {
  app: ApplicationSettings;
  onSaved: () => void;
  /** The General tab (source, build) or the Advanced one (credentials, Swarm, registries). */
  part: "general" | "advanced";
}) {
  const key = app.applicationId;
  if (part === "general") {
    return (
      <>
        <ApplicationSource key={`source-${key}`} app={app} onSaved={onSaved} />
        <BuildType key={`build-${key}`} app={app} onSaved={onSaved} />
      </>
    );
  }
  return (
    <>
      <BasicAuth app={app} onSaved={onSaved} />
      <Swarm key={`swarm-${key}`} app={app} onSaved={onSaved} />
      <Registries key={`registry-${key}`} app={app} onSaved={onSaved} />
    </>
  );
}
