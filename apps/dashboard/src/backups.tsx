/**
 * Backups: the organization's destinations (S3-compatible buckets: create, edit, delete, test the
 * connection, the files in the bucket), the database backups of every database service the
 * caller sees (each `<kind>.one` carries its backups) and the volume backups of every service
 * (volumeBackups.list): create, edit, delete, run now, their runs with each run's log, a restore
 * with its log, and the last verified restore. The newest runs of all of them (overview.backups)
 * close the page. Secrets (a destination's secret access key) are write-only.
 */
import { useState } from "preact/hooks";
import { type Answer, mutate, query } from "./api.ts";
import { ConfirmButton, loadServices, RunLog, type ServiceChoice, size, when } from "./confirm.tsx";
import { ErrorText, FormButtons, Status, useLoad, useSubmit } from "./ui.tsx";

type Destination = Answer<"destination.all">[number];
type Backup = Answer<"backup.one">;
type VolumeBackup = Answer<"volumeBackups.list">[number];
type Run = Answer<"deployment.allByType">[number];
type BackupFile = Answer<"backup.listBackupFiles">[number];
type OverviewRun = Answer<"overview.backups">[number];

const DATABASE_TYPES = new Set(["postgres", "mysql", "mariadb", "mongo", "redis"]);
const MANUAL: Record<string, string> = {
  postgres: "backup.manualBackupPostgres",
  mysql: "backup.manualBackupMysql",
  mariadb: "backup.manualBackupMariadb",
  mongo: "backup.manualBackupMongo",
  redis: "backup.manualBackupRedis",
};

// ---- destinations --------------------------------------------------------------------------

interface DestinationFields {
  name: string;
  provider: string;
  endpoint: string;
  region: string;
  bucket: string;
  accessKey: string;
  secretAccessKey: string;
}

function DestinationForm({ destination, onDone }: { destination?: Destination; onDone: () => void }) {
  const [fields, setFields] = useState<DestinationFields>({
    name: destination?.name ?? "",
    provider: destination?.provider ?? "S3",
    endpoint: destination?.endpoint ?? "",
    region: destination?.region ?? "us-east-1",
    bucket: destination?.bucket ?? "",
    accessKey: destination?.accessKey ?? "",
    secretAccessKey: "",
  });
  const [tested, setTested] = useState("");
  const set = (key: keyof DestinationFields) => (e: { currentTarget: HTMLInputElement }) =>
    setFields({ ...fields, [key]: e.currentTarget.value });
  const withoutEmptySecret = () => {
    const { secretAccessKey, ...rest } = fields;
    return secretAccessKey ? fields : rest;
  };
  const save = useSubmit(async () => {
    if (destination) {
      await mutate("destination.update", {
        destinationId: destination.destinationId,
        ...withoutEmptySecret(),
      });
    } else {
      await mutate("destination.create", { ...fields });
    }
    onDone();
  });
  const test = useSubmit(async () => {
    setTested("");
    await mutate("destination.testConnection", {
      ...withoutEmptySecret(),
      ...(destination ? { destinationId: destination.destinationId } : {}),
    });
    setTested(`Connection to ${fields.bucket} works: a probe object was written, read back and deleted.`);
  });
  const title = destination ? `Edit destination ${destination.name}` : "New destination";
  const titleId = destination ? `edit-destination-${destination.destinationId}` : "new-destination";
  return (
    <form onSubmit={save.onSubmit} class="card inline" aria-labelledby={titleId}>
      <h3 id={titleId}>{title}</h3>
      <label>
        Destination name
        <input required value={fields.name} onInput={set("name")} />
      </label>
      <label>
        Provider
        <input value={fields.provider} onInput={set("provider")} placeholder="AWS, Minio, Cloudflare…" />
      </label>
      <label>
        Endpoint (empty for AWS)
        <input value={fields.endpoint} onInput={set("endpoint")} placeholder="https://s3.example.com" />
      </label>
      <label>
        Region
        <input value={fields.region} onInput={set("region")} />
      </label>
      <label>
        Bucket
        <input required value={fields.bucket} onInput={set("bucket")} />
      </label>
      <label>
        Access key
        <input required value={fields.accessKey} onInput={set("accessKey")} autocomplete="off" />
      </label>
      <label>
        Secret access key{destination ? " (leave empty to keep the stored one)" : ""}
        <input
          type="password"
          required={!destination}
          value={fields.secretAccessKey}
          onInput={set("secretAccessKey")}
          autocomplete="new-password"
        />
      </label>
      <FormButtons noun="destination" editing={!!destination} busy={save.busy} onCancel={onDone}>
        <button type="button" class="ghost" disabled={test.busy} onClick={test.onSubmit}>
          Test connection
        </button>
      </FormButtons>
      <p role="status">{tested}</p>
      <ErrorText error={test.error ?? save.error} />
    </form>
  );
}

function BucketFiles({ destination }: { destination: Destination }) {
  const files = useLoad(
    () =>
      query<BackupFile[]>("backup.listBackupFiles", { destinationId: destination.destinationId, search: "" }),
    destination.destinationId,
  );
  return (
    <section aria-label={`Files in ${destination.name}`}>
      <h4>Files in {destination.bucket}</h4>
      <ErrorText error={files.error} />
      {files.data?.length === 0 && (
        <p class="muted">The bucket holds no file yet: run a backup to write one.</p>
      )}
      {files.data && files.data.length > 0 && (
        <div class="table-scroll">
          <table class="list">
            <thead>
              <tr>
                <th scope="col">File</th>
                <th scope="col">Size</th>
                <th scope="col">Modified</th>
              </tr>
            </thead>
            <tbody>
              {files.data.map((file) => (
                <tr key={file.key}>
                  <td>{file.key}</td>
                  <td>{size(file.size)}</td>
                  <td>{when(file.lastModified)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}

function DestinationItem({
  destination,
  backupsUsing,
  onChanged,
}: {
  destination: Destination;
  backupsUsing: number;
  onChanged: () => void;
}) {
  const [editing, setEditing] = useState(false);
  const [showFiles, setShowFiles] = useState(false);
  const [tested, setTested] = useState("");
  const test = useSubmit(async () => {
    setTested("");
    const { destinationId, organizationId: _o, createdAt: _c, ...fields } = destination;
    await mutate("destination.testConnection", { destinationId, ...fields });
    setTested("Connection works.");
  });
  if (editing) {
    return (
      <li>
        <DestinationForm
          destination={destination}
          onDone={() => {
            setEditing(false);
            onChanged();
          }}
        />
      </li>
    );
  }
  return (
    <li>
      <strong>{destination.name}</strong>{" "}
      <span class="muted wrap-anywhere">
        {destination.provider} · {destination.bucket} · {destination.endpoint || "AWS"} · {destination.region}
      </span>
      <div class="row">
        <button type="button" class="ghost" disabled={test.busy} onClick={test.onSubmit}>
          Test connection of {destination.name}
        </button>
        <button
          type="button"
          class="ghost"
          onClick={() => setShowFiles(!showFiles)}
          aria-expanded={showFiles}
        >
          Files of {destination.name}
        </button>
        <button type="button" class="ghost" onClick={() => setEditing(true)}>
          Edit {destination.name}
        </button>
        <ConfirmButton
          label={`Delete destination ${destination.name}`}
          lost={`The destination and the ${backupsUsing} backup schedule${backupsUsing === 1 ? "" : "s"} writing to it are deleted; the files already in bucket ${destination.bucket} stay there.`}
          action={async () => {
            await mutate("destination.remove", { destinationId: destination.destinationId });
            onChanged();
          }}
        />
        <span role="status">{tested}</span>
      </div>
      <ErrorText error={test.error} />
      {showFiles && <BucketFiles destination={destination} />}
    </li>
  );
}

// ---- runs ----------------------------------------------------------------------------------

function Runs({ id, type, label }: { id: string; type: "backup" | "volumeBackup"; label: string }) {
  const runs = useLoad(() => query<Run[]>("deployment.allByType", { id, type }), `${type}-${id}`);
  const [shown, setShown] = useState<Run>();
  return (
    <section aria-label={`Runs of ${label}`}>
      <h4>Runs</h4>
      <ErrorText error={runs.error} />
      {runs.data?.length === 0 && <p class="muted">No run yet: use Run now, or wait for the schedule.</p>}
      <ul class="services">
        {runs.data?.map((run) => (
          <li key={run.deploymentId}>
            <Status value={run.status} /> {run.title} <span class="muted">{when(run.createdAt)}</span>
            {run.errorMessage && <span class="error-inline"> {run.errorMessage}</span>}{" "}
            <button type="button" class="link" onClick={() => setShown(run)}>
              Log of the run of {when(run.createdAt)}
            </button>
          </li>
        ))}
      </ul>
      {shown && (
        <RunLog title={`Log: ${shown.title}`} deploymentId={shown.deploymentId} onEnd={runs.reload} />
      )}
    </section>
  );
}

/** Picks a file of the backup (its prefix) and restores it; the restore's log follows. */
function Restore({
  destinationId,
  prefix,
  label,
  target,
  start,
}: {
  destinationId: string;
  prefix: string;
  label: string;
  target: { name: string; initial: string };
  start: (file: string, targetName: string) => Promise<string>;
}) {
  const files = useLoad(
    () => query<BackupFile[]>("backup.listBackupFiles", { destinationId, search: `${prefix}/` }),
    `${destinationId}-${prefix}`,
  );
  const [file, setFile] = useState("");
  const [targetName, setTargetName] = useState(target.initial);
  const [deploymentId, setDeploymentId] = useState<string>();
  const newest = files.data?.[files.data.length - 1]?.key ?? "";
  const chosen = file || newest;
  const formId = `restore-${label.replace(/\W+/g, "-")}`;
  return (
    <section class="inline" aria-labelledby={formId}>
      <h4 id={formId}>Restore {label}</h4>
      <ErrorText error={files.error} />
      {files.data?.length === 0 ? (
        <p class="muted">No file under {prefix}/ yet: run a backup first.</p>
      ) : (
        <>
          <label>
            File to restore
            <select value={chosen} onChange={(e) => setFile(e.currentTarget.value)}>
              {[...(files.data ?? [])].reverse().map((f) => (
                <option key={f.key} value={f.key}>
                  {f.key} ({size(f.size)})
                </option>
              ))}
            </select>
          </label>
          <label>
            {target.name}
            <input value={targetName} onInput={(e) => setTargetName(e.currentTarget.value)} />
          </label>
          <ConfirmButton
            class=""
            label={`Restore ${label}`}
            lost={`The restore writes ${chosen || "the file"} over what ${label} holds now: data written since that file was made is lost.`}
            action={async () => setDeploymentId(await start(chosen, targetName))}
          />
        </>
      )}
      {deploymentId && <RunLog title={`Restore log of ${label}`} deploymentId={deploymentId} />}
    </section>
  );
}

// ---- database backups ----------------------------------------------------------------------

interface DatabaseBackups {
  service: ServiceChoice;
  databaseName: string;
  backups: Backup[];
}

async function loadDatabaseBackups(services: ServiceChoice[]): Promise<DatabaseBackups[]> {
  const databases = services.filter((service) => DATABASE_TYPES.has(service.type));
  return Promise.all(
    databases.map(async (service) => {
      const one = await query<{ backups: Backup[]; databaseName?: string | null }>(`${service.type}.one`, {
        [`${service.type}Id`]: service.id,
      });
      return { service, databaseName: one.databaseName ?? "", backups: one.backups };
    }),
  );
}

function BackupForm({
  databases,
  destinations,
  backup,
  onDone,
}: {
  databases: DatabaseBackups[];
  destinations: Destination[];
  backup?: Backup;
  onDone: () => void;
}) {
  const [databaseIndex, setDatabaseIndex] = useState(0);
  const database = databases[databaseIndex];
  const [destinationId, setDestinationId] = useState(
    backup?.destinationId ?? destinations[0]?.destinationId ?? "",
  );
  const [schedule, setSchedule] = useState(backup?.schedule ?? "0 3 * * *");
  const [prefix, setPrefix] = useState(backup?.prefix ?? "");
  const [databaseName, setDatabaseName] = useState<string>();
  const [keep, setKeep] = useState(backup?.keepLatestCount ? String(backup.keepLatestCount) : "");
  const [enabled, setEnabled] = useState(backup?.enabled ?? true);
  const [verify, setVerify] = useState(backup?.verifyRestore ?? false);
  const [verifyTable, setVerifyTable] = useState(backup?.verifyTable ?? "");
  const isRedis = (backup?.databaseType ?? database?.service.type) === "redis";
  const name = databaseName ?? backup?.database ?? (isRedis ? "" : (database?.databaseName ?? ""));
  const save = useSubmit(async () => {
    const common = {
      destinationId,
      schedule,
      prefix: prefix || database?.service.appName || "backups",
      database: name,
      keepLatestCount: keep ? Number(keep) : null,
      enabled,
      verifyRestore: verify,
      verifyTable: verifyTable || null,
    };
    if (backup) {
      await mutate("backup.update", { backupId: backup.backupId, ...common });
    } else if (database) {
      await mutate("backup.create", {
        ...common,
        databaseType: database.service.type,
        [`${database.service.type}Id`]: database.service.id,
      });
    }
    onDone();
  });
  const titleId = backup ? `edit-backup-${backup.backupId}` : "new-backup";
  return (
    <form onSubmit={save.onSubmit} class="card inline" aria-labelledby={titleId}>
      <h3 id={titleId}>{backup ? `Edit the backup of ${backup.prefix}` : "New database backup"}</h3>
      {!backup && (
        <label>
          Database
          <select
            value={String(databaseIndex)}
            onChange={(e) => setDatabaseIndex(Number(e.currentTarget.value))}
          >
            {databases.map((d, index) => (
              <option key={d.service.id} value={String(index)}>
                {d.service.name} ({d.service.type}, {d.service.where})
              </option>
            ))}
          </select>
        </label>
      )}
      <label>
        Destination
        <select value={destinationId} onChange={(e) => setDestinationId(e.currentTarget.value)}>
          {destinations.map((d) => (
            <option key={d.destinationId} value={d.destinationId}>
              {d.name}
            </option>
          ))}
        </select>
      </label>
      <label>
        Schedule (cron: minute hour day month weekday)
        <input required value={schedule} onInput={(e) => setSchedule(e.currentTarget.value)} />
      </label>
      <label>
        Prefix in the bucket
        <input
          value={prefix}
          placeholder={database?.service.appName}
          onInput={(e) => setPrefix(e.currentTarget.value)}
        />
      </label>
      {!isRedis && (
        <label>
          Database name
          <input required value={name} onInput={(e) => setDatabaseName(e.currentTarget.value)} />
        </label>
      )}
      <label>
        Keep the newest (files; empty keeps all)
        <input type="number" min={1} value={keep} onInput={(e) => setKeep(e.currentTarget.value)} />
      </label>
      <label class="check">
        <input type="checkbox" checked={enabled} onChange={(e) => setEnabled(e.currentTarget.checked)} />{" "}
        Enabled
      </label>
      <label class="check">
        <input type="checkbox" checked={verify} onChange={(e) => setVerify(e.currentTarget.checked)} /> Verify
        each file by a restore into a throwaway container
      </label>
      {verify && (
        <label>
          Table whose rows the verification counts (optional)
          <input value={verifyTable} onInput={(e) => setVerifyTable(e.currentTarget.value)} />
        </label>
      )}
      <FormButtons noun="backup" editing={!!backup} busy={save.busy} onCancel={onDone} />
      <ErrorText error={save.error} />
    </form>
  );
}

function BackupItem({
  entry,
  backup,
  databases,
  destinations,
  onChanged,
}: {
  entry: DatabaseBackups;
  backup: Backup;
  databases: DatabaseBackups[];
  destinations: Destination[];
  onChanged: () => void;
}) {
  const label = `${entry.service.name} to ${backup.destination.name}`;
  const [panel, setPanel] = useState<"" | "edit" | "runs" | "restore">("");
  const [lastRun, setLastRun] = useState<{ deploymentId: string; title: string }>();
  const toggle = (next: typeof panel) => setPanel(panel === next ? "" : next);
  const run = useSubmit(async () => {
    const answer = await mutate<{ deploymentId: string }>(MANUAL[backup.databaseType]!, {
      backupId: backup.backupId,
    });
    setLastRun({ deploymentId: answer.deploymentId, title: `Backup log of ${label}` });
    onChanged();
  });
  const verify = useSubmit(async () => {
    const answer = await mutate<{ deploymentId: string }>("backup.verifyRestore", {
      backupId: backup.backupId,
    });
    setLastRun({ deploymentId: answer.deploymentId, title: `Verification log of ${label}` });
    onChanged();
  });
  const verified = backup.lastVerifiedRestore;
  return (
    <li>
      <strong>{entry.service.name}</strong> <span class="muted">({entry.service.where})</span> →{" "}
      {backup.destination.name}/{backup.prefix} <span class="badge">{backup.schedule}</span>{" "}
      {!backup.enabled && <span class="badge">disabled</span>}
      <dl class="facts">
        <dt>Last run</dt>
        <dd>
          {backup.lastRun ? (
            <>
              <Status value={backup.lastRun.status} /> {when(backup.lastRun.createdAt)}{" "}
              {backup.lastRun.backupFile && <span class="wrap-anywhere">{backup.lastRun.backupFile}</span>}
              {backup.lastRun.errorMessage && (
                <span class="error-inline"> {backup.lastRun.errorMessage}</span>
              )}
            </>
          ) : (
            "never"
          )}
        </dd>
        <dt>Last verified restore</dt>
        <dd>
          {verified ? (
            <>
              <Status value={verified.status} /> {when(verified.finishedAt ?? verified.createdAt)}{" "}
              {verified.check ?? verified.errorMessage ?? ""}
            </>
          ) : (
            "not verified yet"
          )}
        </dd>
      </dl>
      <div class="row">
        <button type="button" disabled={run.busy} onClick={run.onSubmit}>
          {run.busy ? "Backing up…" : `Run backup of ${entry.service.name} now`}
        </button>
        <button type="button" class="ghost" disabled={verify.busy} onClick={verify.onSubmit}>
          {verify.busy ? "Verifying…" : "Verify the newest file"}
        </button>
        <button type="button" class="ghost" aria-expanded={panel === "runs"} onClick={() => toggle("runs")}>
          Runs of {entry.service.name}
        </button>
        <button
          type="button"
          class="ghost"
          aria-expanded={panel === "restore"}
          onClick={() => toggle("restore")}
        >
          Restore {entry.service.name}…
        </button>
        <button type="button" class="ghost" aria-expanded={panel === "edit"} onClick={() => toggle("edit")}>
          Edit
        </button>
        <ConfirmButton
          label={`Delete the backup of ${entry.service.name}`}
          lost={`The schedule stops: no more backups of ${entry.service.name} to ${backup.destination.name}. The files already in the bucket and the runs stay.`}
          action={async () => {
            await mutate("backup.remove", { backupId: backup.backupId });
            onChanged();
          }}
        />
      </div>
      <ErrorText error={run.error ?? verify.error} />
      {lastRun && <RunLog title={lastRun.title} deploymentId={lastRun.deploymentId} />}
      {panel === "edit" && (
        <BackupForm
          databases={databases}
          destinations={destinations}
          backup={backup}
          onDone={() => {
            setPanel("");
            onChanged();
          }}
        />
      )}
      {panel === "runs" && <Runs id={backup.backupId} type="backup" label={label} />}
      {panel === "restore" && (
        <Restore
          destinationId={backup.destinationId}
          prefix={backup.prefix}
          label={entry.service.name}
          target={{ name: "Database to restore into", initial: backup.database }}
          start={async (file, databaseName) =>
            (
              await mutate<{ deploymentId: string }>("backup.restoreBackupWithLogs", {
                databaseId: entry.service.id,
                databaseType: entry.service.type,
                databaseName,
                backupFile: file,
                destinationId: backup.destinationId,
              })
            ).deploymentId
          }
        />
      )}
    </li>
  );
}

// ---- volume backups ------------------------------------------------------------------------

interface ServiceVolumeBackups {
  service: ServiceChoice;
  volumeBackups: VolumeBackup[];
}

function VolumeBackupForm({
  services,
  destinations,
  volumeBackup,
  onDone,
}: {
  services: ServiceChoice[];
  destinations: Destination[];
  volumeBackup?: VolumeBackup;
  onDone: () => void;
}) {
  const [serviceIndex, setServiceIndex] = useState(0);
  const service = services[serviceIndex];
  const [fields, setFields] = useState({
    name: volumeBackup?.name ?? "",
    volumeName: volumeBackup?.volumeName ?? "",
    prefix: volumeBackup?.prefix ?? "",
    cronExpression: volumeBackup?.cronExpression ?? "0 4 * * *",
    keepLatestCount: volumeBackup?.keepLatestCount ? String(volumeBackup.keepLatestCount) : "",
    destinationId: volumeBackup?.destinationId ?? destinations[0]?.destinationId ?? "",
  });
  const [turnOff, setTurnOff] = useState(volumeBackup?.turnOff ?? false);
  const [enabled, setEnabled] = useState(volumeBackup?.enabled ?? true);
  const set = (key: keyof typeof fields) => (e: { currentTarget: HTMLInputElement | HTMLSelectElement }) =>
    setFields({ ...fields, [key]: e.currentTarget.value });
  const save = useSubmit(async () => {
    const common = {
      name: fields.name,
      volumeName: fields.volumeName,
      prefix: fields.prefix || fields.volumeName,
      cronExpression: fields.cronExpression,
      keepLatestCount: fields.keepLatestCount ? Number(fields.keepLatestCount) : null,
      destinationId: fields.destinationId,
      turnOff,
      enabled,
    };
    if (volumeBackup) {
      await mutate("volumeBackups.update", { volumeBackupId: volumeBackup.volumeBackupId, ...common });
    } else if (service) {
      await mutate("volumeBackups.create", {
        ...common,
        serviceType: service.type,
        [`${service.type}Id`]: service.id,
      });
    }
    onDone();
  });
  const titleId = volumeBackup ? `edit-volume-${volumeBackup.volumeBackupId}` : "new-volume-backup";
  return (
    <form onSubmit={save.onSubmit} class="card inline" aria-labelledby={titleId}>
      <h3 id={titleId}>{volumeBackup ? `Edit volume backup ${volumeBackup.name}` : "New volume backup"}</h3>
      {!volumeBackup && (
        <label>
          Service
          <select
            value={String(serviceIndex)}
            onChange={(e) => setServiceIndex(Number(e.currentTarget.value))}
          >
            {services.map((s, index) => (
              <option key={s.id} value={String(index)}>
                {s.name} ({s.type}, {s.where})
              </option>
            ))}
          </select>
        </label>
      )}
      <label>
        Volume backup name
        <input required value={fields.name} onInput={set("name")} />
      </label>
      <label>
        Volume name
        <input required value={fields.volumeName} onInput={set("volumeName")} />
      </label>
      <label>
        Prefix in the bucket
        <input value={fields.prefix} placeholder={fields.volumeName} onInput={set("prefix")} />
      </label>
      <label>
        Schedule (cron)
        <input required value={fields.cronExpression} onInput={set("cronExpression")} />
      </label>
      <label>
        Keep the newest (files; empty keeps all)
        <input type="number" min={1} value={fields.keepLatestCount} onInput={set("keepLatestCount")} />
      </label>
      <label>
        Destination
        <select value={fields.destinationId} onChange={set("destinationId")}>
          {destinations.map((d) => (
            <option key={d.destinationId} value={d.destinationId}>
              {d.name}
            </option>
          ))}
        </select>
      </label>
      <label class="check">
        <input type="checkbox" checked={turnOff} onChange={(e) => setTurnOff(e.currentTarget.checked)} /> Stop
        the service while its volume is read
      </label>
      <label class="check">
        <input type="checkbox" checked={enabled} onChange={(e) => setEnabled(e.currentTarget.checked)} />{" "}
        Enabled
      </label>
      <FormButtons noun="volume backup" editing={!!volumeBackup} busy={save.busy} onCancel={onDone} />
      <ErrorText error={save.error} />
    </form>
  );
}

function VolumeBackupItem({
  entry,
  volumeBackup,
  services,
  destinations,
  onChanged,
}: {
  entry: ServiceVolumeBackups;
  volumeBackup: VolumeBackup;
  services: ServiceChoice[];
  destinations: Destination[];
  onChanged: () => void;
}) {
  const [panel, setPanel] = useState<"" | "edit" | "runs" | "restore">("");
  const [lastRun, setLastRun] = useState<string>();
  const toggle = (next: typeof panel) => setPanel(panel === next ? "" : next);
  const run = useSubmit(async () => {
    const answer = await mutate<{ deploymentId: string }>("volumeBackups.runManually", {
      volumeBackupId: volumeBackup.volumeBackupId,
    });
    setLastRun(answer.deploymentId);
    onChanged();
  });
  const label = `${volumeBackup.name} (${volumeBackup.volumeName})`;
  return (
    <li>
      <strong>{volumeBackup.name}</strong>{" "}
      <span class="muted">
        volume {volumeBackup.volumeName} of {entry.service.name} ({entry.service.where})
      </span>{" "}
      <span class="badge">{volumeBackup.cronExpression}</span>{" "}
      {!volumeBackup.enabled && <span class="badge">disabled</span>}
      <div class="row">
        <button type="button" disabled={run.busy} onClick={run.onSubmit}>
          {run.busy ? "Backing up…" : `Run volume backup ${volumeBackup.name} now`}
        </button>
        <button type="button" class="ghost" aria-expanded={panel === "runs"} onClick={() => toggle("runs")}>
          Runs of {volumeBackup.name}
        </button>
        <button
          type="button"
          class="ghost"
          aria-expanded={panel === "restore"}
          onClick={() => toggle("restore")}
        >
          Restore {volumeBackup.name}…
        </button>
        <button type="button" class="ghost" aria-expanded={panel === "edit"} onClick={() => toggle("edit")}>
          Edit {volumeBackup.name}
        </button>
        <ConfirmButton
          label={`Delete volume backup ${volumeBackup.name}`}
          lost={`The schedule stops: no more backups of volume ${volumeBackup.volumeName}. The files already in the bucket stay.`}
          action={async () => {
            await mutate("volumeBackups.delete", { volumeBackupId: volumeBackup.volumeBackupId });
            onChanged();
          }}
        />
      </div>
      <ErrorText error={run.error} />
      {lastRun && <RunLog title={`Backup log of ${label}`} deploymentId={lastRun} />}
      {panel === "edit" && (
        <VolumeBackupForm
          services={services}
          destinations={destinations}
          volumeBackup={volumeBackup}
          onDone={() => {
            setPanel("");
            onChanged();
          }}
        />
      )}
      {panel === "runs" && <Runs id={volumeBackup.volumeBackupId} type="volumeBackup" label={label} />}
      {panel === "restore" && (
        <Restore
          destinationId={volumeBackup.destinationId}
          prefix={volumeBackup.prefix}
          label={label}
          target={{ name: "Volume to restore into", initial: volumeBackup.volumeName }}
          start={async (file, volumeName) =>
            (
              await mutate<{ deploymentId: string }>("volumeBackups.restoreVolumeBackupWithLogs", {
                backupFileName: file,
                destinationId: volumeBackup.destinationId,
                volumeName,
                id: entry.service.id,
                serviceType: entry.service.type,
              })
            ).deploymentId
          }
        />
      )}
    </li>
  );
}

// ---- the page ------------------------------------------------------------------------------

function RecentRuns({ round }: { round: number }) {
  const runs = useLoad(() => query<OverviewRun[]>("overview.backups"), `recent-${round}`);
  const [shown, setShown] = useState<OverviewRun>();
  const newest = (runs.data ?? []).slice(0, 20);
  return (
    <section class="card" aria-labelledby="recent-runs">
      <h2 id="recent-runs">Recent runs</h2>
      <ErrorText error={runs.error} />
      {runs.data?.length === 0 && <p class="muted">No backup has run yet.</p>}
      <ul class="services">
        {newest.map((run) => (
          <li key={run.deploymentId}>
            <Status value={run.status} /> {run.kind === "backup" ? "database" : "volume"} backup of{" "}
            {run.serviceName} to {run.destinationName} <span class="muted">{when(run.createdAt)}</span>{" "}
            <button type="button" class="link" onClick={() => setShown(run)}>
              Log of {run.serviceName} at {when(run.createdAt)}
            </button>
          </li>
        ))}
      </ul>
      {shown && <RunLog title={`Log: ${shown.serviceName}`} deploymentId={shown.deploymentId} />}
    </section>
  );
}

export function BackupsPage() {
  const [round, setRound] = useState(0);
  const reload = () => setRound((n) => n + 1);
  const destinations = useLoad(() => query<Destination[]>("destination.all"), `destinations-${round}`);
  const services = useLoad(loadServices, `services-${round}`);
  const databases = useLoad(
    async () => (services.data ? loadDatabaseBackups(services.data) : []),
    `databases-${round}-${services.data ? "ready" : "waiting"}`,
  );
  const volumes = useLoad(
    async () =>
      Promise.all(
        (services.data ?? []).map(async (service) => ({
          service,
          volumeBackups: await query<VolumeBackup[]>("volumeBackups.list", {
            id: service.id,
            volumeBackupType: service.type,
          }),
        })),
      ),
    `volumes-${round}-${services.data ? "ready" : "waiting"}`,
  );
  const [addingDestination, setAddingDestination] = useState(false);
  const destinationList = destinations.data ?? [];
  const databaseList = databases.data ?? [];
  const backups = databaseList.flatMap((entry) => entry.backups.map((backup) => ({ entry, backup })));
  const volumeBackups = (volumes.data ?? []).flatMap((entry) =>
    entry.volumeBackups.map((volumeBackup) => ({ entry, volumeBackup })),
  );
  return (
    <div class="instance-page">
      <h1>Backups</h1>
      <section class="card" aria-labelledby="destinations-title">
        <h2 id="destinations-title">Destinations</h2>
        <ErrorText error={destinations.error} />
        {destinations.data?.length === 0 && (
          <p class="muted">
            No destination yet: add an S3-compatible bucket below; every backup writes to one.
          </p>
        )}
        <ul class="services" aria-label="Destinations">
          {destinationList.map((destination) => (
            <DestinationItem
              key={destination.destinationId}
              destination={destination}
              backupsUsing={
                backups.filter((b) => b.backup.destinationId === destination.destinationId).length
              }
              onChanged={reload}
            />
          ))}
        </ul>
        {addingDestination || destinations.data?.length === 0 ? (
          <DestinationForm
            onDone={() => {
              setAddingDestination(false);
              reload();
            }}
          />
        ) : (
          <button type="button" class="ghost" onClick={() => setAddingDestination(true)}>
            Add a destination
          </button>
        )}
      </section>

      <section class="card" aria-labelledby="database-backups-title">
        <h2 id="database-backups-title">Database backups</h2>
        <ErrorText error={services.error ?? databases.error} />
        {databases.data && backups.length === 0 && (
          <p class="muted">
            {databaseList.length === 0
              ? "No database yet: create one in a project, then schedule its backups here."
              : destinationList.length === 0
                ? "No backup yet: add a destination first."
                : "No database backup yet: schedule one below."}
          </p>
        )}
        <ul class="services" aria-label="Database backups">
          {backups.map(({ entry, backup }) => (
            <BackupItem
              key={backup.backupId}
              entry={entry}
              backup={backup}
              databases={databaseList}
              destinations={destinationList}
              onChanged={reload}
            />
          ))}
        </ul>
        {databaseList.length > 0 && destinationList.length > 0 && (
          <BackupForm
            key={`new-backup-${round}`}
            databases={databaseList}
            destinations={destinationList}
            onDone={reload}
          />
        )}
      </section>

      <section class="card" aria-labelledby="volume-backups-title">
        <h2 id="volume-backups-title">Volume backups</h2>
        <ErrorText error={volumes.error} />
        {volumes.data && volumeBackups.length === 0 && (
          <p class="muted">
            {(services.data ?? []).length === 0
              ? "No service yet: create one in a project, then back up its volumes here."
              : destinationList.length === 0
                ? "No volume backup yet: add a destination first."
                : "No volume backup yet: schedule one below."}
          </p>
        )}
        <ul class="services" aria-label="Volume backups">
          {volumeBackups.map(({ entry, volumeBackup }) => (
            <VolumeBackupItem
              key={volumeBackup.volumeBackupId}
              entry={entry}
              volumeBackup={volumeBackup}
              services={services.data ?? []}
              destinations={destinationList}
              onChanged={reload}
            />
          ))}
        </ul>
        {(services.data ?? []).length > 0 && destinationList.length > 0 && (
          <VolumeBackupForm
            key={`new-volume-${round}`}
            services={services.data ?? []}
            destinations={destinationList}
            onDone={reload}
          />
        )}
      </section>

      <RecentRuns round={round} />
    </div>
  );
}
