/**
 * Compose stacks: created in an environment with their compose file, a page to edit the file,
 * deploy with the live log, and the stack's deployments with rollbacks. The deployment queue of the
 * organization is a page of its own.
 */
import { useState } from "preact/hooks";
import { type Answer, type Deployment, mutate, query } from "./api.ts";
import { appNameOf } from "./databases.tsx";
import { DeploymentsPanel, useDeployments } from "./deployments.tsx";
import { ComposeLogs } from "./runtime-logs.tsx";
import { ActionButtons, Breadcrumb, Mounts, ServiceEnvironment, useProjectOf } from "./service-parts.tsx";
import { ComposeSource } from "./source.tsx";
import { ConfirmButton, ErrorText, href, Status, Tabs, useLoad, useSubmit } from "./ui.tsx";

/** How many rollbacks a stack keeps (rollbacks/rollbacks.ts's ROLLBACKS_KEPT_PER_APPLICATION). */
const ROLLBACKS_KEPT = 5;

const EXAMPLE = `services:
  web:
    image: nginx:alpine
`;

export function NewCompose({ environmentId }: { environmentId: string }) {
  const [name, setName] = useState("");
  const [file, setFile] = useState(EXAMPLE);
  const [composeType, setComposeType] = useState<"docker-compose" | "stack">("docker-compose");
  const create = useSubmit(async () => {
    const created = await mutate<{ composeId: string }>("compose.create", {
      name,
      appName: appNameOf(name),
      environmentId,
      composeFile: file,
      composeType,
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
      <label>
        Deploy with
        <select
          value={composeType}
          onChange={(e) => setComposeType(e.currentTarget.value as "docker-compose" | "stack")}
        >
          <option value="docker-compose">Docker Compose (docker compose up)</option>
          <option value="stack">Swarm stack (docker stack deploy)</option>
        </select>
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
  environmentId: string;
  env: string | null;
  [field: string]: unknown;
}

const TABS = [
  ["general", "General"],
  ["environment", "Environment"],
  ["deployments", "Deployments"],
  ["logs", "Logs"],
  ["advanced", "Advanced"],
] as const;

export function ComposePage({ composeId, tab = "general" }: { composeId: string; tab?: string }) {
  const compose = useLoad(() => query<Compose>("compose.one", { composeId }), composeId);
  const deployments = useDeployments(
    () => query<Answer<"deployment.allByCompose">>("deployment.allByCompose", { composeId }),
    composeId,
  );
  const stack = compose.data;
  const project = useProjectOf(stack?.environmentId);
  if (compose.error && !stack) {
    return (
      <>
        <h1>Compose stack not found</h1>
        <ErrorText error={compose.error} />
        <p>
          <a href={href()}>Back to the projects</a>
        </p>
      </>
    );
  }
  const changed = () => {
    compose.reload();
    deployments.reload();
  };
  return (
    <>
      <Breadcrumb project={project} name={stack?.name} />
      <h1>
        {stack?.name ?? "Compose stack"} <Status value={stack?.composeStatus} />
      </h1>
      {stack && (
        <ActionButtons
          onChanged={changed}
          actions={[
            [
              "Deploy stack",
              async () => {
                const started = await mutate<{ deploymentId: string }>("compose.deploy", { composeId });
                deployments.watch(started.deploymentId);
                location.hash = href("compose", composeId, "deployments");
              },
              "Deployment started.",
            ],
            ["Stop", () => mutate("compose.stop", { composeId }), "Stopped."],
            ["Start", () => mutate("compose.start", { composeId }), "Started."],
          ]}
        >
          <ConfirmButton
            label="Delete"
            title={`Delete ${stack.name}?`}
            consequence={`This stops and removes the stack ${stack.name} (${stack.appName}): all its services' containers, its networks, its domains and its deployments with their logs. Its named volumes are kept. It cannot be undone.`}
            confirmLabel={`Delete ${stack.name}`}
            action={async () => {
              await mutate("compose.delete", { composeId, deleteVolumes: false });
              location.hash = project ? href("project", project.projectId) : href();
            }}
          />
        </ActionButtons>
      )}
      <Tabs route={["compose", composeId]} tabs={TABS} current={tab} />
      {stack && tab === "general" && (
        <>
          <p class="muted">
            {stack.appName} · {stack.composeType} · source {stack.sourceType}
          </p>
          <ComposeSource key={`source-${stack.composeId}`} stack={stack} onSaved={compose.reload} />
          <ComposeFile key={stack.composeId} stack={stack} onSaved={compose.reload} />
        </>
      )}
      {stack && tab === "environment" && (
        <ServiceEnvironment
          key={`env-${composeId}`}
          procedure="compose.saveEnvironment"
          target={{ composeId }}
          current={stack.env}
          onSaved={compose.reload}
        />
      )}
      {tab === "deployments" && (
        <>
          <DeploymentsPanel deployments={deployments} onEnd={compose.reload} />
          {stack && (
            <ComposeRollbacks
              stack={stack}
              deployments={deployments.data ?? []}
              onRolledBack={(deploymentId) => {
                deployments.watch(deploymentId);
                deployments.reload();
              }}
            />
          )}
        </>
      )}
      {stack && tab === "logs" && (
        <ComposeLogs
          composeId={composeId}
          appName={stack.appName}
          composeType={stack.composeType}
          serverId={typeof stack.serverId === "string" ? stack.serverId : null}
        />
      )}
      {tab === "advanced" && <Mounts serviceId={composeId} serviceType="compose" />}
    </>
  );
}

/**
 * The stack's deployments whose images and converted file were kept (every successful one), each
 * with a roll back (confirmed): the stack is deployed again from that file and those images.
 */
function ComposeRollbacks({
  stack,
  deployments,
  onRolledBack,
}: {
  stack: Compose;
  deployments: Deployment[];
  onRolledBack: (deploymentId: string) => void;
}) {
  // The newest kept one is what runs now.
  const kept = deployments.filter((d) => d.rollbackId).slice(1);
  return (
    <section class="card" aria-labelledby="compose-rollbacks-title">
      <h2 id="compose-rollbacks-title">Rollbacks</h2>
      <p class="muted">
        Every successful deployment keeps the images its services ran and the compose file it used (the newest{" "}
        {ROLLBACKS_KEPT}).
      </p>
      <ul class="services" aria-label="Rollbacks">
        {kept.map((d) => {
          const when = new Date(d.createdAt).toLocaleString();
          return (
            <li key={d.deploymentId}>
              {d.title} <span class="muted">{when}</span>{" "}
              <ConfirmButton
                label={`Roll back to ${when}`}
                title={`Roll back ${stack.name}?`}
                consequence={`Every service of the stack ${stack.name} (${stack.appName}) is replaced by the images and the compose file of the deployment of ${when} (${d.title}); the running containers stop. The compose file saved on the General tab is not changed: the next deployment uses it again. A new deployment records the rollback.`}
                confirmLabel="Roll back"
                danger={false}
                action={async () => {
                  const answer = await mutate<{ deploymentId: string }>("rollback.rollback", {
                    rollbackId: d.rollbackId,
                  });
                  onRolledBack(answer.deploymentId);
                }}
              />
            </li>
          );
        })}
        {kept.length === 0 && <li class="muted">Nothing to roll back to yet: deploy the stack twice.</li>}
      </ul>
    </section>
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
