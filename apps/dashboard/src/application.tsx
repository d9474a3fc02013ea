/**
 * An application's page, as Dokploy's: a header with its lifecycle (Deploy, Stop, Start, Reload,
 * Delete) and tabs General (source, build), Environment (variables, build arguments), Domains,
 * Preview Deployments (settings and the pull requests' previews), Deployments (with rollbacks),
 * Logs (the running container's output), Monitoring and Advanced (resources, command, ports,
 * redirects, mounts, credentials, Swarm, registries). Each tab is a hash
 * route, #/application/<id>/<tab>.
 */
import { useState } from "preact/hooks";
import { type Application, type Deployment, type Domain, mutate, query } from "./api.ts";
import { type ApplicationSettings, ApplicationSettingsForms } from "./app-settings.tsx";
import { DeploymentsPanel, useDeployments } from "./deployments.tsx";
import { PreviewDeployments } from "./previews.tsx";
import { Redirects } from "./redirects.tsx";
import { RuntimeLogs } from "./runtime-logs.tsx";
import { ServiceContainerGraph } from "./servers.tsx";
import { Mounts, Resources } from "./service-parts.tsx";
import { ConfirmButton, ErrorText, href, plural, Saved, Status, Tabs, useLoad, useSubmit } from "./ui.tsx";

const TABS = [
  ["general", "General"],
  ["environment", "Environment"],
  ["domains", "Domains"],
  ["previews", "Preview Deployments"],
  ["deployments", "Deployments"],
  ["logs", "Logs"],
  ["monitoring", "Monitoring"],
  ["advanced", "Advanced"],
] as const;

export function ApplicationPage({ applicationId, tab = "general" }: { applicationId: string; tab?: string }) {
  const application = useLoad(
    () => query<ApplicationSettings>("application.one", { applicationId }),
    applicationId,
  );
  const deployments = useDeployments(
    () => query<Deployment[]>("deployment.all", { applicationId }),
    applicationId,
  );
  const app = application.data;
  if (application.error && !app) {
    return (
      <>
        <h1>Application not found</h1>
        <ErrorText error={application.error} />
        <p>
          <a href={href()}>Back to the projects</a>
        </p>
      </>
    );
  }
  const project = app?.environment.project;
  return (
    <>
      <nav aria-label="Breadcrumb" class="crumbs">
        <a href={href()}>Projects</a> /{" "}
        {project && <a href={href("project", project.projectId)}>{project.name}</a>} /{" "}
        <span aria-current="page">{app?.name ?? "…"}</span>
      </nav>
      <h1>
        {app?.name ?? "Application"} <Status value={app?.applicationStatus} />
      </h1>
      {app && (
        <Lifecycle
          app={app}
          hasDeployments={(deployments.data?.length ?? 0) > 0}
          running={deployments.data?.some((d) => d.status === "running" || d.status === "idle") ?? false}
          onDeploy={(deploymentId) => {
            deployments.watch(deploymentId);
            deployments.reload();
            location.hash = href("application", applicationId, "deployments");
          }}
          onChanged={() => {
            application.reload();
            deployments.reload();
          }}
        />
      )}
      <Tabs route={["application", applicationId]} tabs={TABS} current={tab} />
      {app && tab === "general" && (
        <>
          <p class="muted">
            {app.appName} ·{" "}
            {app.sourceType === "docker" ? `image ${app.dockerImage ?? "not set"}` : app.sourceType}
          </p>
          <ApplicationSettingsForms part="general" app={app} onSaved={application.reload} />
        </>
      )}
      {app && tab === "environment" && (
        <EnvironmentVariables key={app.applicationId} application={app} onSaved={application.reload} />
      )}
      {tab === "domains" && <Domains applicationId={applicationId} />}
      {app && tab === "previews" && <PreviewDeployments app={app} onSaved={application.reload} />}
      {tab === "deployments" && (
        <>
          <DeploymentsPanel deployments={deployments} onEnd={application.reload} />
          {app && (
            <Rollbacks
              app={app}
              deployments={deployments.data ?? []}
              onRolledBack={(deploymentId) => {
                deployments.watch(deploymentId);
                deployments.reload();
              }}
            />
          )}
        </>
      )}
      {tab === "logs" && <RuntimeLogs procedure="application.readLogs" target={{ applicationId }} />}
      {app && tab === "monitoring" && <ServiceContainerGraph appName={app.appName} />}
      {app && tab === "advanced" && (
        <>
          <Resources
            key={`resources-${applicationId}`}
            procedure="application.update"
            target={{ applicationId }}
            current={app}
            onSaved={application.reload}
          />
          <Command key={`command-${applicationId}`} app={app} onSaved={application.reload} />
          <Ports application={app} onChanged={application.reload} />
          <Redirects app={app} onChanged={application.reload} />
          <Mounts serviceId={applicationId} serviceType="application" />
          <ApplicationSettingsForms part="advanced" app={app} onSaved={application.reload} />
        </>
      )}
    </>
  );
}

/** Deploy, redeploy, cancel, stop, start, reload and delete: the header's buttons on every tab. */
function Lifecycle({
  app,
  hasDeployments,
  running,
  onDeploy,
  onChanged,
}: {
  app: ApplicationSettings;
  hasDeployments: boolean;
  running: boolean;
  onDeploy: (deploymentId: string) => void;
  onChanged: () => void;
}) {
  const applicationId = app.applicationId;
  const [message, setMessage] = useState("");
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const act = (run: () => Promise<unknown>, done: string) => async () => {
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
  const deploy = (procedure: "application.deploy" | "application.redeploy") =>
    act(async () => {
      const { deploymentId } = await mutate<{ deploymentId: string }>(procedure, { applicationId });
      onDeploy(deploymentId);
    }, "Deployment started.");
  const domains = app.domains.length;
  return (
    <div class="lifecycle">
      <div class="row">
        <button type="button" disabled={busy} onClick={deploy("application.deploy")}>
          Deploy
        </button>
        {hasDeployments && (
          <button type="button" class="ghost" disabled={busy} onClick={deploy("application.redeploy")}>
            Redeploy (rebuild)
          </button>
        )}
        {running && (
          <button
            type="button"
            class="ghost"
            disabled={busy}
            onClick={act(() => mutate("application.cancelDeployment", { applicationId }), "Cancelled.")}
          >
            Cancel the running deployment
          </button>
        )}
        <button
          type="button"
          class="ghost"
          disabled={busy}
          onClick={act(() => mutate("application.stop", { applicationId }), "Stopped.")}
        >
          Stop
        </button>
        <button
          type="button"
          class="ghost"
          disabled={busy}
          onClick={act(() => mutate("application.start", { applicationId }), "Started.")}
        >
          Start
        </button>
        <button
          type="button"
          class="ghost"
          disabled={busy}
          onClick={act(
            () => mutate("application.reload", { applicationId, appName: app.appName }),
            "Reloaded.",
          )}
        >
          Reload
        </button>
        <ConfirmButton
          label="Delete"
          title={`Delete ${app.name}?`}
          consequence={`This stops and removes the application ${app.name} (${app.appName}): its containers, ${plural(domains, "domain")}, ${plural(app.ports.length, "published port")}, its deployments with their logs and the images kept for rollbacks. Named volumes and the Git repository are not touched. It cannot be undone.`}
          confirmLabel={`Delete ${app.name}`}
          action={async () => {
            await mutate("application.delete", { applicationId });
            location.hash = href("project", app.environment.project.projectId);
          }}
        />
        <Saved text={message} />
      </div>
      <ErrorText error={error} />
    </div>
  );
}

function Domains({ applicationId }: { applicationId: string }) {
  const domains = useLoad(() => query<Domain[]>("domain.byApplicationId", { applicationId }), applicationId);
  const [editing, setEditing] = useState<string>();
  return (
    <section class="card" aria-labelledby="domains-title">
      <h2 id="domains-title">Domains</h2>
      <ErrorText error={domains.error} />
      <ul aria-label="Domains" class="services">
        {domains.data?.map((domain) => (
          <li key={domain.domainId}>
            {domain.https ? "https" : "http"}://{domain.host}
            {domain.path && domain.path !== "/" ? domain.path : ""}{" "}
            <span class="muted">→ port {domain.port ?? "default"}</span>{" "}
            <button type="button" class="ghost" onClick={() => setEditing(domain.domainId)}>
              Edit {domain.host}
            </button>
            <ConfirmButton
              label={`Delete ${domain.host}`}
              title={`Delete the domain ${domain.host}?`}
              consequence={`Requests to ${domain.host} will no longer reach this application; its certificate, if any, is no longer renewed.`}
              confirmLabel={`Delete ${domain.host}`}
              action={async () => {
                await mutate("domain.delete", { domainId: domain.domainId });
                domains.reload();
              }}
            />
            {editing === domain.domainId && (
              <DomainForm
                domain={domain}
                onDone={() => {
                  setEditing(undefined);
                  domains.reload();
                }}
              />
            )}
          </li>
        ))}
        {domains.data?.length === 0 && <li class="muted">No domain yet: add one below.</li>}
      </ul>
      <DomainForm applicationId={applicationId} onDone={domains.reload} />
    </section>
  );
}

/** Adds a domain to `applicationId`, or edits `domain`. */
function DomainForm({
  applicationId,
  domain,
  onDone,
}: {
  applicationId?: string;
  domain?: Domain;
  onDone: () => void;
}) {
  const [host, setHost] = useState(domain?.host ?? "");
  const [port, setPort] = useState(String(domain?.port ?? 80));
  const [https, setHttps] = useState(domain?.https ?? false);
  const save = useSubmit(async () => {
    if (domain) await mutate("domain.update", { domainId: domain.domainId, host, port: Number(port), https });
    else {
      await mutate("domain.create", { applicationId, host, port: Number(port), https });
      setHost("");
    }
    onDone();
  });
  const what = domain ? `Edit ${domain.host}` : "Add a domain";
  return (
    <form onSubmit={save.onSubmit} class="inline" aria-label={what}>
      <label>
        Host
        <input
          required
          placeholder="app.example.com"
          value={host}
          onInput={(e) => setHost(e.currentTarget.value)}
        />
      </label>
      <label>
        Container port
        <input
          type="number"
          min={1}
          max={65535}
          required
          value={port}
          onInput={(e) => setPort(e.currentTarget.value)}
        />
      </label>
      <label class="check">
        <input type="checkbox" checked={https} onChange={(e) => setHttps(e.currentTarget.checked)} /> HTTPS
      </label>
      <button type="submit" disabled={save.busy}>
        {domain ? "Save domain" : "Add domain"}
      </button>
      <ErrorText error={save.error} />
    </form>
  );
}

function EnvironmentVariables({ application, onSaved }: { application: Application; onSaved: () => void }) {
  const [env, setEnv] = useState(application.env ?? "");
  const [buildArgs, setBuildArgs] = useState(application.buildArgs ?? "");
  const [saved, setSaved] = useState(false);
  const save = useSubmit(async () => {
    setSaved(false);
    await mutate("application.saveEnvironment", {
      applicationId: application.applicationId,
      env,
      buildArgs,
      createEnvFile: application.createEnvFile ?? true,
    });
    setSaved(true);
    onSaved();
  });
  return (
    <form onSubmit={save.onSubmit} class="card" aria-labelledby="env-title">
      <h2 id="env-title">Environment variables</h2>
      <label>
        Variables, KEY=value on each line (used from the next deployment)
        <textarea rows={5} spellcheck={false} value={env} onInput={(e) => setEnv(e.currentTarget.value)} />
      </label>
      <label>
        Build arguments, KEY=value on each line (passed to the image build)
        <textarea
          rows={3}
          spellcheck={false}
          value={buildArgs}
          onInput={(e) => setBuildArgs(e.currentTarget.value)}
        />
      </label>
      <div class="row">
        <button type="submit" disabled={save.busy}>
          Save variables
        </button>
        <Saved text={saved ? "Saved." : ""} />
      </div>
      <ErrorText error={save.error} />
    </form>
  );
}

function Ports({ application, onChanged }: { application: Application; onChanged: () => void }) {
  const [published, setPublished] = useState("");
  const [target, setTarget] = useState("80");
  const [protocol, setProtocol] = useState<"tcp" | "udp">("tcp");
  const add = useSubmit(async () => {
    await mutate("port.create", {
      applicationId: application.applicationId,
      publishedPort: Number(published),
      targetPort: Number(target),
      protocol,
    });
    setPublished("");
    onChanged();
  });
  const remove = async (portId: string) => {
    await mutate("port.delete", { portId });
    onChanged();
  };
  return (
    <section class="card" aria-labelledby="ports-title">
      <h2 id="ports-title">Ports</h2>
      <p class="muted">Published on the server's own address, from the next deployment.</p>
      <ul class="services" aria-label="Ports">
        {application.ports.map((port) => (
          <li key={port.portId}>
            {port.publishedPort} → {port.targetPort}/{port.protocol}{" "}
            <button type="button" class="ghost" onClick={() => remove(port.portId)}>
              Remove port {port.publishedPort}
            </button>
          </li>
        ))}
        {application.ports.length === 0 && <li class="muted">No published port.</li>}
      </ul>
      <form onSubmit={add.onSubmit} class="inline" aria-label="Publish a port">
        <label>
          Published port
          <input
            type="number"
            min={1}
            max={65535}
            required
            value={published}
            onInput={(e) => setPublished(e.currentTarget.value)}
          />
        </label>
        <label>
          Port in the container
          <input
            type="number"
            min={1}
            max={65535}
            required
            value={target}
            onInput={(e) => setTarget(e.currentTarget.value)}
          />
        </label>
        <label>
          Protocol
          <select value={protocol} onChange={(e) => setProtocol(e.currentTarget.value as "tcp" | "udp")}>
            <option value="tcp">tcp</option>
            <option value="udp">udp</option>
          </select>
        </label>
        <button type="submit" disabled={add.busy}>
          Publish port
        </button>
        <ErrorText error={add.error} />
      </form>
    </section>
  );
}

/** The deployments whose image was kept, each with a roll back (confirmed). */
function Rollbacks({
  app,
  deployments,
  onRolledBack,
}: {
  app: ApplicationSettings;
  deployments: Deployment[];
  onRolledBack: (deploymentId: string) => void;
}) {
  // Each successful deployment keeps its image and service spec; the newest is what runs now.
  const kept = deployments.filter((d) => d.rollbackId).slice(1);
  return (
    <section class="card" aria-labelledby="rollbacks-title">
      <h2 id="rollbacks-title">Rollbacks</h2>
      {!app.rollbackActive && kept.length === 0 && (
        <p class="muted">
          Rollbacks are off: turn them on in{" "}
          <a href={href("application", app.applicationId, "advanced")}>Advanced</a>, then each deployment
          keeps its image.
        </p>
      )}
      <ul class="services" aria-label="Rollbacks">
        {kept.map((d) => {
          const when = new Date(d.createdAt).toLocaleString();
          return (
            <li key={d.deploymentId}>
              {d.title} <span class="muted">{when}</span>{" "}
              <ConfirmButton
                label={`Roll back to ${when}`}
                title={`Roll back ${app.name}?`}
                consequence={`The running version of ${app.name} is replaced by the image of the deployment of ${when} (${d.title}). The current version stops; a new deployment records the rollback.`}
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
        {app.rollbackActive && kept.length === 0 && (
          <li class="muted">No deployment kept yet: deploy first.</li>
        )}
      </ul>
    </section>
  );
}

/** The command the container runs instead of the image's (application.update's command). */
function Command({ app, onSaved }: { app: ApplicationSettings; onSaved: () => void }) {
  const [command, setCommand] = useState(app.command ?? "");
  const [saved, setSaved] = useState("");
  const save = useSubmit(async () => {
    setSaved("");
    await mutate("application.update", { applicationId: app.applicationId, command: command.trim() || null });
    setSaved("Saved; used from the next deployment.");
    onSaved();
  });
  return (
    <form onSubmit={save.onSubmit} class="card inline" aria-labelledby="command-title">
      <h2 id="command-title">Command</h2>
      <label class="wide">
        Command (empty: the image's own)
        <input value={command} spellcheck={false} onInput={(e) => setCommand(e.currentTarget.value)} />
      </label>
      <button type="submit" disabled={save.busy}>
        Save command
      </button>
      <Saved text={saved} />
      <ErrorText error={save.error} />
    </form>
  );
}
