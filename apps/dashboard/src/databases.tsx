/**
 * Database services: created in an environment (a generated password), and a page with their
 * connection URLs (the API shows them only to those with access to the service), status and a
 * deploy with its live log.
 */
import { useState } from "preact/hooks";
import { mutate, query } from "./api.ts";
import { LiveLog } from "./log.tsx";
import { RuntimeLogs, ServiceTabs } from "./runtime-logs.tsx";
import { ErrorText, href, Status, useLoad, useSubmit } from "./ui.tsx";

export const DATABASE_KINDS = [
  { kind: "postgres", idKey: "postgresId", label: "PostgreSQL", named: true, user: true },
  { kind: "mysql", idKey: "mysqlId", label: "MySQL", named: true, user: true },
  { kind: "mariadb", idKey: "mariadbId", label: "MariaDB", named: true, user: true },
  { kind: "mongo", idKey: "mongoId", label: "MongoDB", named: false, user: true },
  { kind: "redis", idKey: "redisId", label: "Redis", named: false, user: false },
] as const;
type Kind = (typeof DATABASE_KINDS)[number];

function randomText(length: number): string {
  const alphabet = "abcdefghijkmnopqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789";
  return Array.from(
    crypto.getRandomValues(new Uint8Array(length)),
    (n) => alphabet[n % alphabet.length],
  ).join("");
}

export function appNameOf(name: string): string {
  const base =
    name
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, "-")
      .replace(/^-+|-+$/g, "")
      .slice(0, 40) || "db";
  return `${base}-${randomText(6).toLowerCase()}`;
}

export function NewDatabase({ environmentId }: { environmentId: string }) {
  const [kind, setKind] = useState<Kind["kind"]>("postgres");
  const [name, setName] = useState("");
  const create = useSubmit(async () => {
    const facts = DATABASE_KINDS.find((k) => k.kind === kind)!;
    const created = await mutate<Record<string, string>>(`${kind}.create`, {
      name,
      appName: appNameOf(name),
      environmentId,
      databasePassword: randomText(24),
      ...(facts.named ? { databaseName: "app" } : {}),
      ...(facts.user ? { databaseUser: "app" } : {}),
    });
    location.hash = href("database", kind, created[facts.idKey]!);
  });
  const formId = `new-db-${environmentId}`;
  return (
    <form onSubmit={create.onSubmit} class="inline" aria-labelledby={formId}>
      <h3 id={formId}>New database</h3>
      <label>
        Database kind
        <select value={kind} onChange={(e) => setKind(e.currentTarget.value as Kind["kind"])}>
          {DATABASE_KINDS.map((k) => (
            <option key={k.kind} value={k.kind}>
              {k.label}
            </option>
          ))}
        </select>
      </label>
      <label>
        Database name
        <input required value={name} onInput={(e) => setName(e.currentTarget.value)} />
      </label>
      <button type="submit" disabled={create.busy}>
        Create database
      </button>
      <ErrorText error={create.error} />
    </form>
  );
}

interface DatabaseDetail {
  name: string;
  appName: string;
  applicationStatus: string;
  dockerImage: string;
  externalPort: number | null;
  internalConnectionUrl: string;
  externalConnectionUrl: string | null;
  environment: { project: { projectId: string; name: string } };
}

export function DatabasePage({ kind, id, logs }: { kind: string; id: string; logs: boolean }) {
  const facts = DATABASE_KINDS.find((k) => k.kind === kind);
  const detail = useLoad(
    () =>
      facts
        ? query<DatabaseDetail>(`${kind}.one`, { [facts.idKey]: id })
        : Promise.reject(new Error("Unknown database kind")),
    `${kind}/${id}`,
  );
  const [deploymentId, setDeploymentId] = useState<string>();
  const deploy = useSubmit(async () => {
    const started = await mutate<{ deploymentId: string }>(`${kind}.deploy`, { [facts!.idKey]: id });
    setDeploymentId(started.deploymentId);
  });
  const db = detail.data;
  const header = (
    <>
      <nav aria-label="Breadcrumb" class="crumbs">
        <a href={href()}>Projects</a> /{" "}
        {db && <a href={href("project", db.environment.project.projectId)}>{db.environment.project.name}</a>}{" "}
        / <span aria-current="page">{db?.name ?? "…"}</span>
      </nav>
      <h1>
        {db?.name ?? "Database"} <Status value={db?.applicationStatus} />
      </h1>
      <ErrorText error={detail.error} />
      {facts && <ServiceTabs route={["database", kind, id]} logs={logs} />}
    </>
  );
  if (logs && facts) {
    return (
      <>
        {header}
        <RuntimeLogs procedure={`${kind}.readLogs`} target={{ [facts.idKey]: id }} />
      </>
    );
  }
  return (
    <>
      {header}
      {db && (
        <section class="card" aria-labelledby="connection-title">
          <h2 id="connection-title">Connection</h2>
          <dl class="facts">
            <dt>Kind</dt>
            <dd>
              {facts?.label} ({db.dockerImage})
            </dd>
            <dt>From services of the same server</dt>
            <dd>
              <output class="secret" aria-label="Internal connection URL">
                {db.internalConnectionUrl}
              </output>
            </dd>
            <dt>From outside</dt>
            <dd>
              {db.externalConnectionUrl ? (
                <output class="secret" aria-label="External connection URL">
                  {db.externalConnectionUrl}
                </output>
              ) : (
                "no external port"
              )}
            </dd>
          </dl>
        </section>
      )}
      {db && facts && (
        <ExternalPort
          key={`${kind}/${id}`}
          kind={kind}
          idKey={facts.idKey}
          id={id}
          current={db.externalPort}
          onSaved={detail.reload}
        />
      )}
      <form onSubmit={deploy.onSubmit} class="row">
        <button type="submit" disabled={deploy.busy || !db}>
          Deploy
        </button>
        <ErrorText error={deploy.error} />
      </form>
      {deploymentId && <LiveLog key={deploymentId} deploymentId={deploymentId} onEnd={detail.reload} />}
    </>
  );
}

/** The port published on the server's address (applied on the next deploy); empty closes it. */
function ExternalPort(props: {
  kind: string;
  idKey: string;
  id: string;
  current: number | null;
  onSaved: () => void;
}) {
  const [port, setPort] = useState(props.current === null ? "" : String(props.current));
  const [saved, setSaved] = useState(false);
  const save = useSubmit(async () => {
    setSaved(false);
    await mutate(`${props.kind}.saveExternalPort`, {
      [props.idKey]: props.id,
      externalPort: port === "" ? null : Number(port),
    });
    setSaved(true);
    props.onSaved();
  });
  return (
    <form onSubmit={save.onSubmit} class="card inline" aria-labelledby="external-port-title">
      <h2 id="external-port-title">External port</h2>
      <label>
        External port (empty: not reachable from outside)
        <input
          type="number"
          min={1}
          max={65535}
          value={port}
          onInput={(e) => setPort(e.currentTarget.value)}
        />
      </label>
      <button type="submit" disabled={save.busy}>
        Save external port
      </button>
      <span role="status">{saved ? "Saved; deploy to apply." : ""}</span>
      <ErrorText error={save.error} />
    </form>
  );
}
