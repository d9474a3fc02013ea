/**
 * Compose stacks: created in an environment with their compose file, a page to edit the file,
 * deploy with the live log, and the stack's deployments. The deployment queue of the
 * organization is a page of its own.
 */
import { useState } from "preact/hooks";
import { type Answer, mutate, query } from "./api.ts";
import { appNameOf } from "./databases.tsx";
import { DeploymentsPanel, useDeployments } from "./deployments.tsx";
import { ComposeLogs, ServiceTabs } from "./runtime-logs.tsx";
import { ComposeSource } from "./source.tsx";
import { ErrorText, href, Status, useLoad, useSubmit } from "./ui.tsx";

const EXAMPLE = `services:
  web:
    image: nginx:alpine
`;

export function NewCompose({ environmentId }: { environmentId: string }) {
  const [name, setName] = useState("");
  const [file, setFile] = useState(EXAMPLE);
  const create = useSubmit(async () => {
    const created = await mutate<{ composeId: string }>("compose.create", {
      name,
      appName: appNameOf(name),
      environmentId,
      composeFile: file,
      composeType: "docker-compose",
    });
    location.hash = href("compose", created.composeId);
  });
  const formId = `new-compose-${environmentId}`;
  return (
    <form onSubmit={create.onSubmit} class="inline" aria-labelledby={formId}>
      <h3 id={formId}>New compose stack</h3>
      <label>
        Stack name
        <input required value={name} onInput={(e) => setName(e.currentTarget.value)} />
      </label>
      <label class="wide">
        Compose file
        <textarea
          rows={5}
          spellcheck={false}
          required
          value={file}
          onInput={(e) => setFile(e.currentTarget.value)}
        />
      </label>
      <button type="submit" disabled={create.busy}>
        Create stack
      </button>
      <ErrorText error={create.error} />
    </form>
  );
}

interface Compose {
  composeId: string;
  name: string;
  appName: string;
  composeFile: string;
  composeStatus: string;
  composeType: string;
  sourceType: string;
  [field: string]: unknown;
}

export function ComposePage({ composeId, logs }: { composeId: string; logs: boolean }) {
  const compose = useLoad(() => query<Compose>("compose.one", { composeId }), composeId);
  const deployments = useDeployments(
    () => query<Answer<"deployment.allByCompose">>("deployment.allByCompose", { composeId }),
    composeId,
  );
  const deploy = useSubmit(async () => {
    const started = await mutate<{ deploymentId: string }>("compose.deploy", { composeId });
    deployments.watch(started.deploymentId);
    deployments.reload();
  });
  const stack = compose.data;
  const header = (
    <>
      <nav aria-label="Breadcrumb" class="crumbs">
        <a href={href()}>Projects</a> / <span aria-current="page">{stack?.name ?? "…"}</span>
      </nav>
      <h1>
        {stack?.name ?? "Compose stack"} <Status value={stack?.composeStatus} />
      </h1>
      <ErrorText error={compose.error} />
      <ServiceTabs route={["compose", composeId]} logs={logs} />
    </>
  );
  if (logs) {
    return (
      <>
        {header}
        {stack && (
          <ComposeLogs
            composeId={composeId}
            appName={stack.appName}
            composeType={stack.composeType}
            serverId={typeof stack.serverId === "string" ? stack.serverId : null}
          />
        )}
      </>
    );
  }
  return (
    <>
      {header}
      {stack && (
        <p class="muted">
          {stack.appName} · {stack.composeType} · source {stack.sourceType}
        </p>
      )}
      {stack && <ComposeSource key={`source-${stack.composeId}`} stack={stack} onSaved={compose.reload} />}
      {stack && <ComposeFile key={stack.composeId} stack={stack} onSaved={compose.reload} />}
      <form onSubmit={deploy.onSubmit} class="row">
        <button type="submit" disabled={deploy.busy || !stack}>
          Deploy stack
        </button>
        <ErrorText error={deploy.error} />
      </form>
      <DeploymentsPanel deployments={deployments} onEnd={compose.reload} />
    </>
  );
}

function ComposeFile({ stack, onSaved }: { stack: Compose; onSaved: () => void }) {
  const [file, setFile] = useState(stack.composeFile);
  const [saved, setSaved] = useState(false);
  const save = useSubmit(async () => {
    setSaved(false);
    await mutate("compose.update", { composeId: stack.composeId, composeFile: file });
    setSaved(true);
    onSaved();
  });
  return (
    <form onSubmit={save.onSubmit} class="card" aria-labelledby="compose-file-title">
      <h2 id="compose-file-title">Compose file</h2>
      <label>
        docker-compose.yml (used from the next deployment)
        <textarea rows={10} spellcheck={false} value={file} onInput={(e) => setFile(e.currentTarget.value)} />
      </label>
      <div class="row">
        <button type="submit" disabled={save.busy}>
          Save compose file
        </button>
        <span role="status">{saved ? "Saved." : ""}</span>
      </div>
      <ErrorText error={save.error} />
    </form>
  );
}

interface QueueJob {
  id: string;
  name: string;
  state: "waiting" | "active" | "completed" | "failed";
  queuedAt: string;
  failedReason: string | null;
  title: string;
  serviceType: string;
  applicationId: string | null;
  composeId: string | null;
  databaseId: string | null;
  applicationName: string;
}

function serviceLink(job: QueueJob): string | undefined {
  if (job.serviceType === "application" && job.applicationId) return href("application", job.applicationId);
  if (job.serviceType === "compose" && job.composeId) return href("compose", job.composeId);
  if (job.databaseId && !["schedule", "preview"].includes(job.serviceType))
    return href("database", job.serviceType, job.databaseId);
  return undefined;
}

/** The organization's deployment queue: waiting and running jobs first, then the last finished. */
export function QueuePage() {
  const queue = useLoad(() => query<QueueJob[]>("deployment.queueList"), "queue");
  const order = { active: 0, waiting: 1, failed: 2, completed: 3 };
  const jobs = [...(queue.data ?? [])].sort((a, b) => order[a.state] - order[b.state]);
  return (
    <>
      <h1>Deployment queue</h1>
      <div class="row">
        <button type="button" class="ghost" onClick={queue.reload}>
          Refresh the queue
        </button>
      </div>
      <ErrorText error={queue.error} />
      <table class="queue" aria-label="Deployment queue">
        <thead>
          <tr>
            <th scope="col">Service</th>
            <th scope="col">Job</th>
            <th scope="col">State</th>
            <th scope="col">Queued</th>
          </tr>
        </thead>
        <tbody>
          {jobs.map((job) => {
            const link = serviceLink(job);
            return (
              <tr key={job.id}>
                <td>{link ? <a href={link}>{job.applicationName}</a> : job.applicationName}</td>
                <td>
                  {job.name}: {job.title}
                  {job.failedReason && <span class="error-inline"> {job.failedReason}</span>}
                </td>
                <td>
                  <span class={`badge status-${job.state}`}>{job.state}</span>
                </td>
                <td>{new Date(job.queuedAt).toLocaleString()}</td>
              </tr>
            );
          })}
          {queue.data?.length === 0 && (
            <tr>
              <td colSpan={4} class="muted">
                The queue is empty.
              </td>
            </tr>
          )}
        </tbody>
      </table>
    </>
  );
}
