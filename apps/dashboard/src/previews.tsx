/**
 * An application's Preview Deployments tab, as Dokploy's: the previews' settings (application.update's
 * preview* fields: on/off, wildcard domain, port, path, HTTPS and certificate, limit, variables,
 * build arguments and secrets, labels, collaborators only), then the previews a pull or merge
 * request made (previewDeployment.all), each with its status, host, deployments and their logs,
 * a rebuild and a delete (confirmed).
 */
import { useState } from "preact/hooks";
import { type Answer, mutate, query } from "./api.ts";
import type { ApplicationSettings } from "./app-settings.tsx";
import { LiveLog } from "./log.tsx";
import { ConfirmButton, ErrorText, plural, Saved, Status, useLoad, useSubmit } from "./ui.tsx";

type Preview = Answer<"previewDeployment.all">[number];

/** The repository of a connected Git provider the application builds from, if any: previews need one. */
function providerRepository(app: ApplicationSettings): string | null {
  switch (app.sourceType) {
    case "github":
      return app.repository && `${app.owner ?? ""}/${app.repository}`;
    case "gitlab":
      return app.gitlabRepository;
    case "bitbucket":
      return app.bitbucketRepository;
    case "gitea":
      return app.giteaRepository && `${app.giteaOwner ?? ""}/${app.giteaRepository}`;
    default:
      return null;
  }
}

export function PreviewDeployments({ app, onSaved }: { app: ApplicationSettings; onSaved: () => void }) {
  const previews = useLoad(
    () => query<Preview[]>("previewDeployment.all", { applicationId: app.applicationId }),
    app.applicationId,
  );
  const repository = providerRepository(app);
  return (
    <>
      <PreviewSettings key={`preview-settings-${app.applicationId}`} app={app} onSaved={onSaved} />
      <section class="card" aria-labelledby="previews-title">
        <h2 id="previews-title">Previews</h2>
        <div class="row">
          <button type="button" class="ghost" onClick={previews.reload}>
            Refresh the previews
          </button>
        </div>
        <ErrorText error={previews.error} />
        {previews.data?.length === 0 && (
          <p class="muted">
            {repository
              ? `No preview yet. ${app.isPreviewDeploymentsActive ? "Open" : "Turn previews on above, then open"} a pull request (a merge request on GitLab) on ${repository} (${app.sourceType}): each one gets its own service at a host under the wildcard domain, rebuilt on every commit and deleted when it is closed or merged.`
              : "No preview yet. Previews are made of pull requests: connect this application to a repository of a Git provider (GitHub, GitLab, Bitbucket or Gitea) on its General tab, turn previews on above, then open a pull request there."}
          </p>
        )}
        <ul class="services" aria-label="Previews">
          {previews.data?.map((preview) => (
            <PreviewItem key={preview.previewDeploymentId} preview={preview} onChanged={previews.reload} />
          ))}
        </ul>
      </section>
    </>
  );
}

function PreviewItem({ preview, onChanged }: { preview: Preview; onChanged: () => void }) {
  const [shown, setShown] = useState<string>();
  const [message, setMessage] = useState("");
  const [error, setError] = useState<string>();
  const domain = preview.domain ?? {};
  const host = typeof domain.host === "string" ? domain.host : undefined;
  const url = host ? `${domain.https === true ? "https" : "http"}://${host}` : undefined;
  const title = preview.pullRequestTitle || preview.branch;
  const rebuild = async () => {
    setError(undefined);
    setMessage("");
    try {
      await mutate("previewDeployment.redeploy", { previewDeploymentId: preview.previewDeploymentId });
      setMessage("Rebuild started.");
      onChanged();
    } catch (failure) {
      setError((failure as Error).message);
    }
  };
  return (
    <li>
      <strong>{title}</strong> <Status value={preview.previewStatus} />{" "}
      <span class="muted">
        branch {preview.branch}
        {preview.pullRequestNumber !== "0" && ` · #${preview.pullRequestNumber}`}
      </span>
      <div class="row">
        {url && <a href={url}>{host}</a>}
        {preview.pullRequestURL && (
          <a href={preview.pullRequestURL}>Pull request #{preview.pullRequestNumber}</a>
        )}
        <button type="button" class="ghost" onClick={rebuild}>
          Rebuild preview {title}
        </button>
        <ConfirmButton
          label={`Delete preview ${title}`}
          title={`Delete the preview of ${title}?`}
          consequence={`Its service ${preview.appName} stops and is removed with its Traefik file${host ? `, its host ${host}` : ""} and its ${plural(preview.deployments.length, "deployment")} with their logs. The pull request is not touched; a new commit on it makes the preview again.`}
          confirmLabel="Delete preview"
          action={async () => {
            await mutate("previewDeployment.delete", { previewDeploymentId: preview.previewDeploymentId });
            onChanged();
          }}
        />
        <Saved text={message} />
      </div>
      <ErrorText error={error} />
      <ul class="services" aria-label={`Deployments of preview ${title}`}>
        {preview.deployments.map((d) => (
          <li key={d.deploymentId}>
            <button
              type="button"
              class="link"
              aria-pressed={d.deploymentId === shown}
              onClick={() => setShown(shown === d.deploymentId ? undefined : d.deploymentId)}
            >
              {d.title}
            </button>{" "}
            <Status value={d.status} /> <span class="muted">{new Date(d.createdAt).toLocaleString()}</span>
            {d.status === "error" && d.errorMessage && <span class="error-inline"> {d.errorMessage}</span>}
          </li>
        ))}
        {preview.deployments.length === 0 && <li class="muted">Not deployed yet.</li>}
      </ul>
      {shown && <LiveLog key={shown} deploymentId={shown} onEnd={onChanged} />}
    </li>
  );
}

const CERTIFICATE_TYPES = ["none", "letsencrypt", "custom"] as const;
type CertificateType = (typeof CERTIFICATE_TYPES)[number];

function PreviewSettings({ app, onSaved }: { app: ApplicationSettings; onSaved: () => void }) {
  const [active, setActive] = useState(app.isPreviewDeploymentsActive);
  const [wildcard, setWildcard] = useState(app.previewWildcard ?? "");
  const [port, setPort] = useState(String(app.previewPort));
  const [path, setPath] = useState(app.previewPath);
  const [https, setHttps] = useState(app.previewHttps);
  const [certificateType, setCertificateType] = useState<CertificateType>(app.previewCertificateType);
  const [resolver, setResolver] = useState(app.previewCustomCertResolver ?? "");
  const [limit, setLimit] = useState(String(app.previewLimit));
  const [env, setEnv] = useState(app.previewEnv ?? "");
  const [buildArgs, setBuildArgs] = useState(app.previewBuildArgs ?? "");
  const [buildSecrets, setBuildSecrets] = useState("");
  const [labels, setLabels] = useState((app.previewLabels ?? []).join(", "));
  const [collaborators, setCollaborators] = useState(app.previewRequireCollaboratorPermissions);
  const [saved, setSaved] = useState("");
  const save = useSubmit(async () => {
    setSaved("");
    const labelList = labels
      .split(",")
      .map((label) => label.trim())
      .filter(Boolean);
    await mutate("application.update", {
      applicationId: app.applicationId,
      isPreviewDeploymentsActive: active,
      previewWildcard: wildcard.trim() || null,
      previewPort: Number(port),
      previewPath: path.trim() || "/",
      previewHttps: https,
      previewCertificateType: certificateType,
      previewCustomCertResolver: https && certificateType === "custom" ? resolver.trim() || null : null,
      previewLimit: Number(limit),
      previewEnv: env,
      previewBuildArgs: buildArgs,
      // Sealed and never answered: sent only when typed, so an empty field keeps them.
      ...(buildSecrets.trim() ? { previewBuildSecrets: buildSecrets } : {}),
      previewLabels: labelList.length > 0 ? labelList : null,
      previewRequireCollaboratorPermissions: collaborators,
    });
    setBuildSecrets("");
    setSaved("Saved; applies to the next preview deployment.");
    onSaved();
  });
  return (
    <form onSubmit={save.onSubmit} class="card inline" aria-labelledby="preview-settings-title">
      <h2 id="preview-settings-title">Preview deployments</h2>
      <p class="muted wide">
        Each pull request on the application's repository becomes a preview of its own, built from its branch
        with the settings below.
      </p>
      <label class="check wide">
        <input type="checkbox" checked={active} onChange={(e) => setActive(e.currentTarget.checked)} /> Make
        previews of pull requests
      </label>
      <label>
        Wildcard domain
        <input
          placeholder="*.preview.example.com"
          spellcheck={false}
          value={wildcard}
          onInput={(e) => setWildcard(e.currentTarget.value)}
        />
      </label>
      <label>
        Preview container port
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
        Preview path
        <input required spellcheck={false} value={path} onInput={(e) => setPath(e.currentTarget.value)} />
      </label>
      <label>
        Previews at most (the oldest goes)
        <input
          type="number"
          min={0}
          max={100}
          required
          value={limit}
          onInput={(e) => setLimit(e.currentTarget.value)}
        />
      </label>
      <label class="check">
        <input type="checkbox" checked={https} onChange={(e) => setHttps(e.currentTarget.checked)} /> Previews
        over HTTPS
      </label>
      {https && (
        <label>
          Preview certificate
          <select
            value={certificateType}
            onChange={(e) => setCertificateType(e.currentTarget.value as CertificateType)}
          >
            <option value="none">none (the proxy's default)</option>
            <option value="letsencrypt">Let's Encrypt</option>
            <option value="custom">a custom resolver</option>
          </select>
        </label>
      )}
      {https && certificateType === "custom" && (
        <label>
          Certificate resolver
          <input required value={resolver} onInput={(e) => setResolver(e.currentTarget.value)} />
        </label>
      )}
      <label class="wide">
        Preview variables, KEY=value on each line
        <textarea rows={3} spellcheck={false} value={env} onInput={(e) => setEnv(e.currentTarget.value)} />
      </label>
      <label class="wide">
        Preview build arguments, KEY=value on each line
        <textarea
          rows={2}
          spellcheck={false}
          value={buildArgs}
          onInput={(e) => setBuildArgs(e.currentTarget.value)}
        />
      </label>
      <label class="wide">
        Preview build secrets, KEY=value on each line (never shown; empty keeps the saved ones)
        <textarea
          rows={2}
          spellcheck={false}
          autocomplete="off"
          value={buildSecrets}
          onInput={(e) => setBuildSecrets(e.currentTarget.value)}
        />
      </label>
      <label class="wide">
        Only pull requests with one of these labels (comma-separated; empty: all)
        <input spellcheck={false} value={labels} onInput={(e) => setLabels(e.currentTarget.value)} />
      </label>
      <label class="check wide">
        <input
          type="checkbox"
          checked={collaborators}
          onChange={(e) => setCollaborators(e.currentTarget.checked)}
        />{" "}
        Only pull requests of the repository's collaborators
      </label>
      <button type="submit" disabled={save.busy}>
        Save preview settings
      </button>
      <Saved text={saved} />
      <ErrorText error={save.error} />
    </form>
  );
}
