/**
 * What the pages of applications, databases and compose stacks share: CPU and memory limits,
 * mounts, environment variables, and the project a service's environment belongs to (for the
 * breadcrumbs).
 */
import { useState } from "preact/hooks";
import { mutate, type Project, query } from "./api.ts";
import { ErrorText, href, Saved, useLoad, useSubmit } from "./ui.tsx";

interface Limits {
  memoryLimit: string | null;
  memoryReservation: string | null;
  cpuLimit: string | null;
  cpuReservation: string | null;
}

const LIMITS = [
  ["cpuLimit", "CPU limit (cores, e.g. 0.5)"],
  ["cpuReservation", "CPU reservation (cores)"],
  ["memoryLimit", "Memory limit (bytes or 512M, 1G)"],
  ["memoryReservation", "Memory reservation"],
] as const;

/** CPU and memory limits, saved by `procedure` (application.update, postgres.update…) with `target`. */
export function Resources({
  procedure,
  target,
  current,
  onSaved,
}: {
  procedure: string;
  target: Record<string, string>;
  current: Limits;
  onSaved: () => void;
}) {
  const [values, setValues] = useState<Record<string, string>>(
    Object.fromEntries(LIMITS.map(([key]) => [key, current[key] ?? ""])),
  );
  const [saved, setSaved] = useState("");
  const save = useSubmit(async () => {
    setSaved("");
    await mutate(procedure, {
      ...target,
      ...Object.fromEntries(LIMITS.map(([key]) => [key, values[key]?.trim() || null])),
    });
    setSaved("Saved; applied on the next deployment.");
    onSaved();
  });
  return (
    <form onSubmit={save.onSubmit} class="card inline" aria-labelledby="resources-title">
      <h2 id="resources-title">Resources</h2>
      {LIMITS.map(([key, label]) => (
        <label key={key}>
          {label}
          <input
            value={values[key]}
            placeholder="no limit"
            onInput={(e) => setValues({ ...values, [key]: e.currentTarget.value })}
          />
        </label>
      ))}
      <button type="submit" disabled={save.busy}>
        Save resources
      </button>
      <Saved text={saved} />
      <ErrorText error={save.error} />
    </form>
  );
}

interface Mount {
  mountId: string;
  type: "volume" | "file" | "bind";
  volumeName: string | null;
  hostPath: string | null;
  filePath: string | null;
  mountPath: string;
}

type ServiceType = "application" | "postgres" | "mysql" | "mariadb" | "mongo" | "redis" | "compose";

/** A service's mounts: named volumes, bind mounts and files, added and removed. */
export function Mounts({ serviceId, serviceType }: { serviceId: string; serviceType: ServiceType }) {
  const mounts = useLoad(
    () => query<Mount[]>("mounts.listByServiceId", { serviceId, serviceType }),
    `${serviceType}-${serviceId}`,
  );
  const [type, setType] = useState<Mount["type"]>("volume");
  const [source, setSource] = useState("");
  const [mountPath, setMountPath] = useState("");
  const [content, setContent] = useState("");
  const add = useSubmit(async () => {
    const where =
      type === "volume"
        ? { volumeName: source }
        : type === "bind"
          ? { hostPath: source }
          : { filePath: source, content };
    await mutate("mounts.create", { type, mountPath, serviceId, serviceType, ...where });
    setSource("");
    setMountPath("");
    setContent("");
    mounts.reload();
  });
  const remove = async (mountId: string) => {
    await mutate("mounts.remove", { mountId });
    mounts.reload();
  };
  return (
    <section class="card" aria-labelledby="mounts-title">
      <h2 id="mounts-title">Mounts</h2>
      <ErrorText error={mounts.error} />
      <ul class="services" aria-label="Mounts">
        {mounts.data?.map((mount) => (
          <li key={mount.mountId}>
            {mount.type} {mount.volumeName ?? mount.hostPath ?? mount.filePath} → {mount.mountPath}{" "}
            <button type="button" class="ghost" onClick={() => remove(mount.mountId)}>
              Remove mount {mount.mountPath}
            </button>
          </li>
        ))}
        {mounts.data?.length === 0 && <li class="muted">No mount: the container's files go with it.</li>}
      </ul>
      <form onSubmit={add.onSubmit} class="inline" aria-label="Add a mount">
        <label>
          Mount type
          <select value={type} onChange={(e) => setType(e.currentTarget.value as Mount["type"])}>
            <option value="volume">Named volume</option>
            <option value="bind">Directory of the server</option>
            <option value="file">File</option>
          </select>
        </label>
        <label>
          {type === "volume" ? "Volume name" : type === "bind" ? "Path on the server" : "File name"}
          <input required value={source} onInput={(e) => setSource(e.currentTarget.value)} />
        </label>
        <label>
          Path in the container
          <input
            required
            placeholder="/data"
            value={mountPath}
            onInput={(e) => setMountPath(e.currentTarget.value)}
          />
        </label>
        {type === "file" && (
          <label class="wide">
            File content
            <textarea
              rows={4}
              spellcheck={false}
              value={content}
              onInput={(e) => setContent(e.currentTarget.value)}
            />
          </label>
        )}
        <button type="submit" disabled={add.busy}>
          Add mount
        </button>
        <ErrorText error={add.error} />
      </form>
    </section>
  );
}

/** A database's or a stack's variables: `procedure` (postgres.saveEnvironment, compose.saveEnvironment…). */
export function ServiceEnvironment({
  procedure,
  target,
  current,
  onSaved,
}: {
  procedure: string;
  target: Record<string, string>;
  current: string | null;
  onSaved: () => void;
}) {
  const [env, setEnv] = useState(current ?? "");
  const [saved, setSaved] = useState("");
  const save = useSubmit(async () => {
    setSaved("");
    await mutate(procedure, { ...target, env });
    setSaved("Saved.");
    onSaved();
  });
  return (
    <form onSubmit={save.onSubmit} class="card" aria-labelledby="env-title">
      <h2 id="env-title">Environment variables</h2>
      <label>
        Variables, KEY=value on each line (used from the next deployment)
        <textarea rows={6} spellcheck={false} value={env} onInput={(e) => setEnv(e.currentTarget.value)} />
      </label>
      <div class="row">
        <button type="submit" disabled={save.busy}>
          Save variables
        </button>
        <Saved text={saved} />
      </div>
      <ErrorText error={save.error} />
    </form>
  );
}

/** The project holding environment `environmentId` (from project.all), for a breadcrumb. */
export function useProjectOf(environmentId: string | undefined) {
  const projects = useLoad(
    () => (environmentId ? query<Project[]>("project.all") : Promise.resolve([] as Project[])),
    `projects-of-${environmentId ?? ""}`,
  );
  return projects.data?.find((project) =>
    project.environments.some((environment) => environment.environmentId === environmentId),
  );
}

/** Projects / <project> / <service>. */
export function Breadcrumb({
  project,
  name,
}: {
  project?: { projectId: string; name: string };
  name?: string;
}) {
  return (
    <nav aria-label="Breadcrumb" class="crumbs">
      <a href={href()}>Projects</a> /{" "}
      {project && <a href={href("project", project.projectId)}>{project.name}</a>} /{" "}
      <span aria-current="page">{name ?? "…"}</span>
    </nav>
  );
}

/** A row of a service's lifecycle buttons, each running its procedure, then `onChanged`. */
export function ActionButtons({
  actions,
  onChanged,
  children,
}: {
  actions: readonly (readonly [label: string, run: () => Promise<unknown>, done: string])[];
  onChanged: () => void;
  children?: preact.ComponentChildren;
}) {
  const [message, setMessage] = useState("");
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const act = async (run: () => Promise<unknown>, done: string) => {
    setBusy(true);
    setError(undefined);
    setMessage("");
    try {
      await run();
      setMessage(done);
      onChanged();
    } catch (failure) {
      setError((failure as Error).message);
    } finally {
      setBusy(false);
    }
  };
  return (
    <div class="lifecycle">
      <div class="row">
        {actions.map(([label, run, done], index) => (
          <button
            key={label}
            type="button"
            class={index === 0 ? undefined : "ghost"}
            disabled={busy}
            onClick={() => act(run, done)}
          >
            {label}
          </button>
        ))}
        {children}
        <Saved text={message} />
      </div>
      <ErrorText error={error} />
    </div>
  );
}
