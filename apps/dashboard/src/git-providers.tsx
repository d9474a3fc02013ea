/**
 * The organization's Git providers (GitHub, GitLab, Gitea, Bitbucket): listed with their plain
 * settings, connected with the fields each kind's `<kind>.create` takes, tested
 * (`<kind>.testConnection`), edited in place (the same form, its plain fields read from
 * `<kind>.one`, saved with `<kind>.update`; a secret left empty is not sent, so the stored one is
 * kept) and removed (`gitProvider.remove`). Secrets typed in are sent once and never shown back
 * (the API answers none). GitLab and Gitea providers created with an OAuth
 * application offer the provider's authorization page, asked of `<kind>.startAuthorization` on
 * the click (its state is minted for this member and works once); its callback comes back here.
 */
import { useState } from "preact/hooks";
import { mutate, query } from "./api.ts";
import { ErrorText, useLoad, useSubmit } from "./ui.tsx";

export type ProviderKind = "github" | "gitlab" | "gitea" | "bitbucket";

interface Field {
  name: string;
  label: string;
  type?: "number" | "secret" | "key";
  required?: boolean;
  value?: string;
}

/** A field whose value is never shown back (the API answers none). */
const isSecret = (field: Field) => field.type === "secret" || field.type === "key";

/** A repository as the `get<Kind>Repositories` procedures answer it; `url` is its owner/name path. */
export interface Repository {
  id: number | string;
  name: string;
  url: string;
  owner: { username: string };
  defaultBranch: string | null;
}

/** A repository split as the procedures name it: the owner path and the last segment. */
export interface RepositoryRef {
  owner: string;
  slug: string;
  repo: Repository;
}

export function refOf(repo: Repository): RepositoryRef {
  const cut = repo.url.lastIndexOf("/");
  return cut < 0
    ? { owner: repo.owner.username, slug: repo.url, repo }
    : { owner: repo.url.slice(0, cut), slug: repo.url.slice(cut + 1), repo };
}

const callback = (kind: string) => `${location.origin}/api/${kind}/callback`;

/** Per kind: its name, id field, create form, repository procedures and the source fields. */
export const PROVIDER_KINDS: Record<
  ProviderKind,
  {
    label: string;
    idField: string;
    fields: Field[];
    repositories: string;
    branches: (id: string, ref: RepositoryRef) => [string, Record<string, unknown>];
    /** The repository fields of application.save<Kind>Provider and compose.update. */
    source: (id: string, ref: RepositoryRef, branch: string) => Record<string, unknown>;
    buildPathField: string;
  }
> = {
  github: {
    label: "GitHub",
    idField: "githubId",
    fields: [
      { name: "githubAppName", label: "GitHub App name" },
      { name: "githubAppId", label: "App ID", type: "number", required: true },
      { name: "githubInstallationId", label: "Installation ID", required: true },
      { name: "githubClientId", label: "Client ID" },
      { name: "githubClientSecret", label: "Client secret", type: "secret" },
      { name: "githubPrivateKey", label: "Private key (PEM)", type: "key", required: true },
      { name: "githubWebhookSecret", label: "Webhook secret", type: "secret" },
    ],
    repositories: "github.getGithubRepositories",
    branches: (githubId, { owner, slug }) => ["github.getGithubBranches", { githubId, owner, repo: slug }],
    source: (githubId, { owner, slug }, branch) => ({ githubId, owner, repository: slug, branch }),
    buildPathField: "buildPath",
  },
  gitlab: {
    label: "GitLab",
    idField: "gitlabId",
    fields: [
      { name: "gitlabUrl", label: "GitLab URL", required: true, value: "https://gitlab.com" },
      { name: "gitlabInternalUrl", label: "Internal URL (optional)" },
      { name: "groupName", label: "Groups (optional, comma separated)" },
      { name: "applicationId", label: "OAuth application ID" },
      { name: "secret", label: "OAuth application secret", type: "secret" },
      { name: "redirectUri", label: "Redirect URI", value: callback("gitlab") },
      { name: "accessToken", label: "Access token (instead of OAuth)", type: "secret" },
    ],
    repositories: "gitlab.getGitlabRepositories",
    branches: (gitlabId, { owner, slug, repo }) => [
      "gitlab.getGitlabBranches",
      { gitlabId, id: Number(repo.id), owner, repo: slug },
    ],
    source: (gitlabId, { owner, slug, repo }, branch) => ({
      gitlabId,
      gitlabProjectId: Number(repo.id),
      gitlabOwner: owner,
      gitlabRepository: slug,
      gitlabPathNamespace: repo.url,
      gitlabBranch: branch,
    }),
    buildPathField: "gitlabBuildPath",
  },
  gitea: {
    label: "Gitea",
    idField: "giteaId",
    fields: [
      { name: "giteaUrl", label: "Gitea URL", required: true },
      { name: "giteaInternalUrl", label: "Internal URL (optional)" },
      { name: "clientId", label: "OAuth client ID" },
      { name: "clientSecret", label: "OAuth client secret", type: "secret" },
      { name: "redirectUri", label: "Redirect URI", value: callback("gitea") },
      { name: "accessToken", label: "Access token (instead of OAuth)", type: "secret" },
    ],
    repositories: "gitea.getGiteaRepositories",
    branches: (giteaId, { owner, slug }) => [
      "gitea.getGiteaBranches",
      { giteaId, owner, repositoryName: slug },
    ],
    source: (giteaId, { owner, slug }, branch) => ({
      giteaId,
      giteaOwner: owner,
      giteaRepository: slug,
      giteaBranch: branch,
    }),
    buildPathField: "giteaBuildPath",
  },
  bitbucket: {
    label: "Bitbucket",
    idField: "bitbucketId",
    fields: [
      { name: "bitbucketWorkspaceName", label: "Workspace" },
      { name: "bitbucketEmail", label: "Email (with an API token)" },
      { name: "apiToken", label: "API token", type: "secret" },
      { name: "bitbucketUsername", label: "Username (with an app password)" },
      { name: "appPassword", label: "App password", type: "secret" },
    ],
    repositories: "bitbucket.getBitbucketRepositories",
    branches: (bitbucketId, { owner, slug }) => [
      "bitbucket.getBitbucketBranches",
      { bitbucketId, owner, repo: slug },
    ],
    source: (bitbucketId, { owner, slug, repo }, branch) => ({
      bitbucketId,
      bitbucketOwner: owner,
      bitbucketRepository: repo.name,
      bitbucketRepositorySlug: slug,
      bitbucketBranch: branch,
    }),
    buildPathField: "bitbucketBuildPath",
  },
};

export const KIND_NAMES = Object.keys(PROVIDER_KINDS) as ProviderKind[];

/** gitProvider.getAll's answer: the provider and its kind's object (plain settings only). */
export interface GitProvider {
  gitProviderId: string;
  name: string;
  providerType: ProviderKind;
  github: Record<string, unknown> | null;
  gitlab: Record<string, unknown> | null;
  gitea: Record<string, unknown> | null;
  bitbucket: Record<string, unknown> | null;
}

export const providerIdOf = (provider: GitProvider) =>
  String(provider[provider.providerType]?.[PROVIDER_KINDS[provider.providerType].idField] ?? "");

export function useGitProviders() {
  return useLoad(() => query<GitProvider[]>("gitProvider.getAll"), "git-providers");
}

/** The field naming a GitLab or Gitea provider's OAuth application. */
const OAUTH_CLIENT_ID_FIELD: Partial<Record<ProviderKind, string>> = {
  gitlab: "applicationId",
  gitea: "clientId",
};

/** Whether the provider has an OAuth application and no token yet: it offers its authorization page. */
function awaitsAuthorization(provider: GitProvider): boolean {
  const settings = provider[provider.providerType] ?? {};
  const clientIdField = OAUTH_CLIENT_ID_FIELD[provider.providerType];
  return clientIdField !== undefined && !settings.authorized && Boolean(settings[clientIdField]);
}

/** What the list shows of a provider: its URL or workspace, and whether OAuth completed. */
function summary(provider: GitProvider): string {
  const settings = provider[provider.providerType] ?? {};
  const parts = ["gitlabUrl", "giteaUrl", "bitbucketWorkspaceName", "githubAppName"]
    .map((field) => settings[field])
    .filter((value): value is string => typeof value === "string" && value !== "");
  if ("authorized" in settings) parts.push(settings.authorized ? "authorized" : "not authorized yet");
  return parts.join(" · ");
}

function ProviderRow({ provider, onChanged }: { provider: GitProvider; onChanged: () => void }) {
  const kind = PROVIDER_KINDS[provider.providerType];
  const [result, setResult] = useState("");
  const [editing, setEditing] = useState<Record<string, string>>();
  // The form's values: the provider's plain fields as `<kind>.one` answers them, never a secret.
  const edit = useSubmit(async () => {
    const one = await query<Record<string, unknown>>(`${provider.providerType}.one`, {
      [kind.idField]: providerIdOf(provider),
    });
    setEditing(
      Object.fromEntries(
        kind.fields.map((field) => {
          const value = one[field.name];
          const plain = !isSecret(field) && value !== null && value !== undefined;
          return [field.name, plain ? String(value) : ""];
        }),
      ),
    );
  });
  const test = useSubmit(async () => {
    setResult("");
    setResult(
      await mutate<string>(`${provider.providerType}.testConnection`, {
        [kind.idField]: providerIdOf(provider),
      }),
    );
  });
  const remove = useSubmit(async () => {
    await mutate("gitProvider.remove", { gitProviderId: provider.gitProviderId });
    onChanged();
  });
  // The link carries a state the API mints for this member, valid once for ten minutes: asked for on the click.
  const authorize = useSubmit(async () => {
    const { authorizeUrl } = await mutate<{ authorizeUrl: string }>(
      `${provider.providerType}.startAuthorization`,
      { [kind.idField]: providerIdOf(provider) },
    );
    window.location.assign(authorizeUrl);
  });
  return (
    <li>
      <strong>{provider.name}</strong> <span class="muted">{kind.label}</span>{" "}
      <span class="muted">{summary(provider)}</span>
      <form onSubmit={test.onSubmit} class="row" aria-label={`Provider ${provider.name}`}>
        <button type="submit" class="ghost" disabled={test.busy}>
          Test connection of {provider.name}
        </button>
        <button
          type="button"
          class="ghost"
          disabled={edit.busy}
          aria-expanded={editing !== undefined}
          onClick={editing ? () => setEditing(undefined) : edit.onSubmit}
        >
          Edit {provider.name}
        </button>
        <button type="button" class="ghost" disabled={remove.busy} onClick={remove.onSubmit}>
          Remove {provider.name}
        </button>
        {awaitsAuthorization(provider) && (
          <button type="button" class="ghost" disabled={authorize.busy} onClick={authorize.onSubmit}>
            Authorize on {kind.label}
          </button>
        )}
        <span role="status">{result}</span>
      </form>
      <ErrorText error={test.error ?? remove.error ?? edit.error ?? authorize.error} />
      {editing && (
        <ProviderForm
          edit={{ kind: provider.providerType, provider, values: editing }}
          onDone={() => {
            setEditing(undefined);
            onChanged();
          }}
        />
      )}
    </li>
  );
}

/** A provider being edited: its kind, its row and the plain values `<kind>.one` answered. */
interface Editing {
  kind: ProviderKind;
  provider: GitProvider;
  values: Record<string, string>;
}

/**
 * Connects a provider (`<kind>.create`), or, with `edit`, changes one (`<kind>.update`): every
 * plain field is sent as it stands (one emptied is cleared), a secret only when typed in (the API
 * keeps the stored one when it is absent).
 */
function ProviderForm({ edit, onDone }: { edit?: Editing; onDone: () => void }) {
  const [kind, setKind] = useState<ProviderKind>(edit?.kind ?? "github");
  const [name, setName] = useState(edit?.provider.name ?? "");
  const initial = () =>
    edit?.values ?? Object.fromEntries(PROVIDER_KINDS[kind].fields.map((f) => [f.name, f.value ?? ""]));
  const [values, setValues] = useState<Record<string, string>>(initial);
  const choose = (next: ProviderKind) => {
    setKind(next);
    setValues(Object.fromEntries(PROVIDER_KINDS[next].fields.map((f) => [f.name, f.value ?? ""])));
  };
  const save = useSubmit(async () => {
    const input: Record<string, unknown> = { name };
    for (const field of PROVIDER_KINDS[kind].fields) {
      const value = values[field.name]?.trim() ?? "";
      if (value !== "") input[field.name] = field.type === "number" ? Number(value) : value;
      // Emptied, a plain field is cleared ("" clears every one of them).
      else if (edit && !isSecret(field) && (edit.values[field.name] ?? "") !== "") input[field.name] = "";
    }
    if (edit) {
      const { idField } = PROVIDER_KINDS[kind];
      await mutate(`${kind}.update`, {
        ...input,
        [idField]: providerIdOf(edit.provider),
        gitProviderId: edit.provider.gitProviderId,
      });
    } else {
      await mutate(`${kind}.create`, input);
      // The secrets typed in leave the page with the form's values.
      setName("");
      setValues(initial());
    }
    onDone();
  });
  const title = edit ? `Edit ${edit.provider.name}` : "Connect a Git provider";
  const titleId = edit ? `edit-provider-${edit.provider.gitProviderId}` : "connect-provider";
  return (
    <form onSubmit={save.onSubmit} class={edit ? "inline" : "card inline"} aria-labelledby={titleId}>
      {edit ? <h3 id={titleId}>{title}</h3> : <h2 id={titleId}>{title}</h2>}
      {!edit && (
        <label>
          Provider
          <select value={kind} onChange={(e) => choose(e.currentTarget.value as ProviderKind)}>
            {KIND_NAMES.map((k) => (
              <option key={k} value={k}>
                {PROVIDER_KINDS[k].label}
              </option>
            ))}
          </select>
        </label>
      )}
      <label>
        Provider name
        <input required value={name} onInput={(e) => setName(e.currentTarget.value)} />
      </label>
      {PROVIDER_KINDS[kind].fields.map((field) => {
        const onInput = (e: { currentTarget: { value: string } }) =>
          setValues({ ...values, [field.name]: e.currentTarget.value });
        // Editing, a secret left empty keeps the stored one.
        const unchanged = edit ? " (empty: unchanged)" : "";
        return field.type === "key" ? (
          <label key={`${kind}-${field.name}`} class="wide">
            {field.label}
            {unchanged}
            <textarea
              rows={4}
              spellcheck={false}
              required={field.required && !edit}
              value={values[field.name]}
              onInput={onInput}
            />
          </label>
        ) : field.type === "secret" ? (
          // A secret is typed, sent once, and never shown back.
          <label key={`${kind}-${field.name}`}>
            {field.label}
            {unchanged}
            <input type="password" autocomplete="new-password" value={values[field.name]} onInput={onInput} />
          </label>
        ) : (
          <label key={`${kind}-${field.name}`}>
            {field.label}
            <input
              inputMode={field.type === "number" ? "numeric" : undefined}
              pattern={field.type === "number" ? "[0-9]+" : undefined}
              required={field.required}
              value={values[field.name]}
              onInput={onInput}
            />
          </label>
        );
      })}
      <button type="submit" disabled={save.busy}>
        {edit ? `Save ${edit.provider.name}` : "Connect provider"}
      </button>
      <ErrorText error={save.error} />
    </form>
  );
}

export function GitProvidersPage() {
  const providers = useGitProviders();
  return (
    <>
      <h1>Git providers</h1>
      <section class="card" aria-labelledby="providers-title">
        <h2 id="providers-title">Connected providers</h2>
        <ErrorText error={providers.error} />
        <ul class="services" aria-label="Git providers">
          {providers.data?.map((provider) => (
            <ProviderRow key={provider.gitProviderId} provider={provider} onChanged={providers.reload} />
          ))}
          {providers.data?.length === 0 && <li class="muted">No Git provider connected yet.</li>}
        </ul>
      </section>
      <ProviderForm onDone={providers.reload} />
    </>
  );
}
