/**
 * Database services: created in an environment (a generated password), and a page with their
 * connection URLs (the API shows them only to those with access to the service), status, its
 * lifecycle (deploy with its live log, stop, start, reload, delete confirmed) and tabs General,
 * Environment, Logs, Backups and Advanced (resources, mounts).
 */
import { useState } from "preact/hooks";
import { mutate, query } from "./api.ts";
import { LiveLog } from "./log.tsx";
import { RuntimeLogs } from "./runtime-logs.tsx";
import { ActionButtons, Breadcrumb, Mounts, Resources, ServiceEnvironment } from "./service-parts.tsx";
import { ConfirmButton, ErrorText, href, Status, Tabs, useLoad, useSubmit } from "./ui.tsx";

export const DATABASE_KINDS = [
  { kind: "postgres", idKey: "postgresId", label: "PostgreSQL", named: true, user: true },
  { kind: "mysql", idKey: "mysqlId", label: "MySQL", named: true, user: true },
  { kind: "mariadb", idKey: "mariadbId", label: "MariaDB", named: true, user: true },
  { kind: "mongo", idKey: "mongoId", label: "MongoDB", named: false, user: true },
  { kind: "redis", idKey: "redisId", label: "Redis", named: false, user: false },
] as const;
type Kind = (typeof DATABASE_KINDS)[number];

/** What the API uses when no image is given (shown as the field's placeholder). */
const DEFAULT_IMAGES: Record<Kind["kind"], string> = {
  postgres: "postgres:18",
  mysql: "mysql:8",
  mariadb: "mariadb:11",
  mongo: "mongo:8",
  redis: "redis:7",
};

const TABS = [
  ["general", "General"],
  ["environment", "Environment"],
  ["logs", "Logs"],
  ["backups", "Backups"],
  ["advanced", "Advanced"],
] as const;

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
  const [image, setImage] = useState("");
  const create = useSubmit(async () => {
    const facts = DATABASE_KINDS.find((k) => k.kind === kind)!;
    const created = await mutate<Record<string, string>>(`${kind}.create`, {
      name,
      appName: appNameOf(name),
      environmentId,
      databasePassword: randomText(24),
      ...(image.trim() ? { dockerImage: image.trim() } : {}),
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
      <label>
        Database image (empty: the instance's default)
        <input
          placeholder={DEFAULT_IMAGES[kind]}
          value={image}
          onInput={(e) => setImage(e.currentTarget.value)}
        />
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
  env: string | null;
  memoryLimit: string | null;
  memoryReservation: string | null;
  cpuLimit: string | null;
  cpuReservation: string | null;
  environment: { project: { projectId: string; name: string } };
}

export function DatabasePage({ kind, id, tab = "general" }: { kind: string; id: string; tab?: string }) {
  const facts = DATABASE_KINDS.find((k) => k.kind === kind);
  const detail = useLoad(
    () =>
      facts
        ? query<DatabaseDetail>(`${kind}.one`, { [facts.idKey]: id })
        : Promise.reject(new Error("Unknown database kind")),
    `${kind}/${id}`,
  );
  const [deploymentId, setDeploymentId] = useState<string>();
  const db = detail.data;
  if (!facts || (detail.error && !db)) {
    return (
      <>
        <h1>Database not found</h1>
        <ErrorText error={detail.error ?? "Unknown database kind"} />
        <p>
          <a href={href()}>Back to the projects</a>
        </p>
      </>
    );
  }
  const target = { [facts.idKey]: id };
  return (
    <>
      <Breadcrumb project={db?.environment.project} name={db?.name} />
      <h1>
        {db?.name ?? "Database"} <Status value={db?.applicationStatus} />
      </h1>
      {db && (
        <ActionButtons
          onChanged={detail.reload}
          actions={[
            [
              "Deploy",
              async () => {
                const started = await mutate<{ deploymentId: string }>(`${kind}.deploy`, target);
                setDeploymentId(started.deploymentId);
              },
              "Deployment started.",
            ],
            ["Stop", () => mutate(`${kind}.stop`, target), "Stopped."],
            ["Start", () => mutate(`${kind}.start`, target), "Started."],
            ["Reload", () => mutate(`${kind}.reload`, { ...target, appName: db.appName }), "Reloaded."],
          ]}
        >
          <ConfirmButton
            label="Delete"
            title={`Delete ${db.name}?`}
            consequence={`This removes the ${facts.label} database ${db.name} (${db.appName}) and its data volume ${db.appName}-data: every table and row in it is lost, and its backup schedules stop. Backups already in a destination are kept. It cannot be undone.`}
            confirmLabel={`Delete ${db.name}`}
            action={async () => {
              await mutate(`${kind}.remove`, target);
              location.hash = href("project", db.environment.project.projectId);
            }}
          />
        </ActionButtons>
      )}
      <Tabs route={["database", kind, id]} tabs={TABS} current={tab} />
      {deploymentId && <LiveLog key={deploymentId} deploymentId={deploymentId} onEnd={detail.reload} />}
      {db && tab === "general" && (
        <>
          <section class="card" aria-labelledby="connection-title">
            <h2 id="connection-title">Connection</h2>
            <dl class="facts">
              <dt>Kind</dt>
              <dd>
                {facts.label} ({db.dockerImage})
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
          <ExternalPort
            key={`${kind}/${id}`}
            kind={kind}
            idKey={facts.idKey}
            id={id}
            current={db.externalPort}
            onSaved={detail.reload}
          />
        </>
      )}
      {db && tab === "environment" && (
        <ServiceEnvironment
          key={`env-${id}`}
          procedure={`${kind}.saveEnvironment`}
          target={target}
          current={db.env}
          onSaved={detail.reload}
        />
      )}
      {tab === "logs" && <RuntimeLogs procedure={`${kind}.readLogs`} target={target} />}
      {tab === "backups" && (
        <section class="card" aria-labelledby="db-backups-title">
          <h2 id="db-backups-title">Backups</h2>
          <p>
            Backups of {db?.name ?? "this database"} are scheduled, run and restored on the{" "}
            <a href={href("backups")}>Backups</a> page, with their destinations.
          </p>
        </section>
      )}
      {db && tab === "advanced" && (
        <>
          <Resources
            key={`resources-${id}`}
            procedure={`${kind}.update`}
            target={target}
            current={db}
            onSaved={detail.reload}
          />
          <Mounts serviceId={id} serviceType={kind as Kind["kind"]} />
        </>
      )}
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
