/**
 * An application's settings beside its deployments: the source (source.tsx), the build type, HTTP Basic
 * credentials, Swarm settings and the registry it pulls from. Each form saves through one
 * procedure of the public API and applies from the next deployment.
 */
import { useState } from "preact/hooks";
import { type Application, mutate, query } from "./api.ts";
import { ApplicationSource } from "./source.tsx";
import { ErrorText, useLoad, useSubmit } from "./ui.tsx";

export interface ApplicationSettings extends Application {
  customGitUrl: string | null;
  customGitBranch: string | null;
  customGitBuildPath: string | null;
  buildType: string;
  dockerfile: string | null;
  replicas: number;
  registryId: string | null;
  security: { securityId: string; username: string }[];
}

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
  const [buildType, setBuildType] = useState(app.buildType);
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

function Swarm({ app, onSaved }: { app: ApplicationSettings; onSaved: () => void }) {
  const [replicas, setReplicas] = useState(String(app.replicas));
  const [advanced, setAdvanced] = useState("");
  const save = useSave(async () => {
    let extra: Record<string, unknown> = {};
    if (advanced.trim()) {
      try {
        extra = JSON.parse(advanced);
      } catch {
        throw new Error("The other Swarm settings must be a JSON object");
      }
    }
    await mutate("application.update", {
      applicationId: app.applicationId,
      replicas: Number(replicas),
      ...extra,
    });
  }, onSaved);
  return (
    <form onSubmit={save.onSubmit} class="card inline" aria-labelledby="swarm-title">
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
      <label>
        Other Swarm settings, JSON (restartPolicySwarm, placementSwarm, labelsSwarm…)
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
}: {
  app: ApplicationSettings;
  onSaved: () => void;
}) {
  const key = app.applicationId;
  return (
    <>
      <ApplicationSource key={`source-${key}`} app={app} onSaved={onSaved} />
      <BuildType key={`build-${key}`} app={app} onSaved={onSaved} />
      <BasicAuth app={app} onSaved={onSaved} />
      <Swarm key={`swarm-${key}`} app={app} onSaved={onSaved} />
      <Registries key={`registry-${key}`} app={app} onSaved={onSaved} />
    </>
  );
}
