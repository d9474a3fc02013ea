/**
 * Where a service's code comes from: for an application a Docker image, a Git URL or a
 * repository of a connected Git provider (application.saveDockerProvider / saveGitProvider /
 * save<Kind>Provider); for a compose stack its own file, a Git URL or a provider's repository
 * (compose.update with sourceType and the provider's fields). A provider's repositories and a
 * repository's branches are the lists the provider's procedures answer.
 */
import { useState } from "preact/hooks";
import { type Application, mutate, query } from "./api.ts";
import {
  type GitProvider,
  KIND_NAMES,
  PROVIDER_KINDS,
  type ProviderKind,
  providerIdOf,
  type Repository,
  refOf,
  useGitProviders,
} from "./git-providers.tsx";
import { ErrorText, href, useLoad, useSubmit } from "./ui.tsx";

type Row = Record<string, unknown>;
const text = (value: unknown) => (typeof value === "string" ? value : "");
const isProvider = (kind: string): kind is ProviderKind => (KIND_NAMES as string[]).includes(kind);

/** The provider, repository path and branch a service's stored fields name for `kind`. */
function storedChoice(kind: ProviderKind, row: Row): Choice {
  const join = (owner: unknown, repo: unknown) => (text(owner) && text(repo) ? `${owner}/${repo}` : "");
  const byKind = {
    github: [join(row.owner, row.repository), row.branch],
    gitlab: [text(row.gitlabPathNamespace), row.gitlabBranch],
    gitea: [join(row.giteaOwner, row.giteaRepository), row.giteaBranch],
    bitbucket: [
      join(row.bitbucketOwner, row.bitbucketRepositorySlug ?? row.bitbucketRepository),
      row.bitbucketBranch,
    ],
  }[kind];
  return {
    providerId: text(row[PROVIDER_KINDS[kind].idField]),
    url: text(byKind[0]),
    branch: text(byKind[1]),
  };
}

interface Choice {
  providerId: string;
  url: string;
  branch: string;
  repo?: Repository;
}

/** The provider, then its repository, then the repository's branch, each from the API's lists. */
function ProviderRepository({
  kind,
  providers,
  choice,
  onChange,
}: {
  kind: ProviderKind;
  providers: GitProvider[];
  choice: Choice;
  onChange: (choice: Choice) => void;
}) {
  const def = PROVIDER_KINDS[kind];
  const mine = providers.filter((p) => p.providerType === kind);
  const repositories = useLoad(
    () =>
      choice.providerId
        ? query<Repository[]>(def.repositories, { [def.idField]: choice.providerId })
        : Promise.resolve([]),
    `${kind}/${choice.providerId}`,
  );
  const repo = choice.repo ?? repositories.data?.find((r) => r.url === choice.url);
  const branches = useLoad(
    () => {
      if (!repo) return Promise.resolve([]);
      const [name, input] = def.branches(choice.providerId, refOf(repo));
      return query<{ name: string }[]>(name, input);
    },
    `${kind}/${choice.providerId}/${repo?.url ?? ""}`,
  );
  if (mine.length === 0) {
    return (
      <p class="muted">
        No {def.label} provider connected: <a href={href("git-providers")}>connect one</a>.
      </p>
    );
  }
  return (
    <>
      <label>
        {def.label} provider
        <select
          required
          value={choice.providerId}
          onChange={(e) => onChange({ providerId: e.currentTarget.value, url: "", branch: "" })}
        >
          <option value="">Choose…</option>
          {mine.map((p) => (
            <option key={p.gitProviderId} value={providerIdOf(p)}>
              {p.name}
            </option>
          ))}
        </select>
      </label>
      <label>
        Repository
        <select
          required
          value={choice.url}
          onChange={(e) => {
            const picked = repositories.data?.find((r) => r.url === e.currentTarget.value);
            onChange({
              ...choice,
              url: e.currentTarget.value,
              repo: picked,
              branch: picked?.defaultBranch ?? "",
            });
          }}
        >
          <option value="">{repositories.loading && choice.providerId ? "Loading…" : "Choose…"}</option>
          {repositories.data?.map((r) => (
            <option key={String(r.id)} value={r.url}>
              {r.url}
            </option>
          ))}
        </select>
      </label>
      <label>
        Branch
        <select
          required
          value={choice.branch}
          onChange={(e) => onChange({ ...choice, branch: e.currentTarget.value })}
        >
          <option value="">{branches.loading && repo ? "Loading…" : "Choose…"}</option>
          {branches.data?.map((b) => (
            <option key={b.name} value={b.name}>
              {b.name}
            </option>
          ))}
        </select>
      </label>
      <ErrorText error={repositories.error ?? branches.error} />
    </>
  );
}

/** The fields compose.update and application.save<Kind>Provider share for the chosen repository. */
function providerFields(kind: ProviderKind, choice: Choice, loaded: Repository | undefined): Row {
  const repo = choice.repo ?? loaded;
  if (!repo) throw new Error("Choose a repository");
  return PROVIDER_KINDS[kind].source(choice.providerId, refOf(repo), choice.branch);
}

/**
 * The repository of a stored choice is looked up again at save time when the form was not
 * touched (GitLab's project id comes from the list).
 */
async function repositoryOf(kind: ProviderKind, choice: Choice): Promise<Repository | undefined> {
  if (choice.repo) return choice.repo;
  const def = PROVIDER_KINDS[kind];
  const list = await query<Repository[]>(def.repositories, { [def.idField]: choice.providerId });
  return list.find((r) => r.url === choice.url);
}

function SourceTypeSelect<K extends string>({
  value,
  plain,
  onChange,
}: {
  value: K;
  plain: [K, string][];
  onChange: (kind: K) => void;
}) {
  return (
    <label>
      Source type
      <select value={value} onChange={(e) => onChange(e.currentTarget.value as K)}>
        {plain.map(([k, label]) => (
          <option key={k} value={k}>
            {label}
          </option>
        ))}
        {KIND_NAMES.map((k) => (
          <option key={k} value={k}>
            {PROVIDER_KINDS[k].label} repository
          </option>
        ))}
      </select>
    </label>
  );
}

function Saved({ shown }: { shown: boolean }) {
  return <span role="status">{shown ? "Saved." : ""}</span>;
}

function useSourceForm<K extends string>(
  row: Row,
  initial: K,
  save: (kind: K, choice: Choice) => Promise<void>,
) {
  const [kind, setKind] = useState<K>(initial);
  const [choices, setChoices] = useState<Partial<Record<ProviderKind, Choice>>>(() =>
    Object.fromEntries(KIND_NAMES.map((k) => [k, storedChoice(k, row)])),
  );
  const [saved, setSaved] = useState(false);
  const providers = useGitProviders();
  const choice = isProvider(kind) ? choices[kind]! : undefined;
  const submit = useSubmit(async () => {
    setSaved(false);
    await save(kind, choice!);
    setSaved(true);
  });
  const picker =
    isProvider(kind) && providers.data ? (
      <ProviderRepository
        kind={kind}
        providers={providers.data}
        choice={choice!}
        onChange={(next) => setChoices({ ...choices, [kind]: next })}
      />
    ) : null;
  // A member without access to the Git providers sees their refusal only when choosing one.
  const providersError = isProvider(kind) ? providers.error : undefined;
  return { kind, setKind, submit, saved, picker, providersError };
}

type AppKind = "docker" | "git" | ProviderKind;

export function ApplicationSource({ app, onSaved }: { app: Application; onSaved: () => void }) {
  const row = app as unknown as Row;
  const initial = (["docker", "git", ...KIND_NAMES] as string[]).includes(app.sourceType)
    ? (app.sourceType as AppKind)
    : "docker";
  const [image, setImage] = useState(app.dockerImage ?? "");
  const [url, setUrl] = useState(text(row.customGitUrl));
  const [branch, setBranch] = useState(text(row.customGitBranch) || "main");
  const buildPathOf = (kind: AppKind) =>
    text(
      row[
        kind === "git" ? "customGitBuildPath" : isProvider(kind) ? PROVIDER_KINDS[kind].buildPathField : ""
      ],
    ) || "/";
  const [buildPath, setBuildPath] = useState(buildPathOf(initial));
  const form = useSourceForm<AppKind>(row, initial, async (kind, choice) => {
    const applicationId = app.applicationId;
    if (kind === "docker")
      await mutate("application.saveDockerProvider", { applicationId, dockerImage: image });
    else if (kind === "git") {
      await mutate("application.saveGitProvider", {
        applicationId,
        customGitUrl: url,
        customGitBranch: branch,
        customGitBuildPath: buildPath,
      });
    } else {
      const fields = providerFields(kind, choice, await repositoryOf(kind, choice));
      const name = `application.save${kind[0]!.toUpperCase()}${kind.slice(1)}Provider`;
      await mutate(name, { applicationId, ...fields, [PROVIDER_KINDS[kind].buildPathField]: buildPath });
    }
    onSaved();
  });
  return (
    <form onSubmit={form.submit.onSubmit} class="card inline" aria-labelledby="source-title">
      <h2 id="source-title">Source</h2>
      <SourceTypeSelect
        value={form.kind}
        plain={[
          ["docker", "Docker image"],
          ["git", "Git repository"],
        ]}
        onChange={(kind) => {
          form.setKind(kind);
          setBuildPath(buildPathOf(kind));
        }}
      />
      {form.kind === "docker" ? (
        <label>
          Image
          <input required value={image} onInput={(e) => setImage(e.currentTarget.value)} />
        </label>
      ) : form.kind === "git" ? (
        <GitUrlFields url={url} setUrl={setUrl} branch={branch} setBranch={setBranch} example="app" />
      ) : (
        form.picker
      )}
      {form.kind !== "docker" && (
        <label>
          Build path
          <input required value={buildPath} onInput={(e) => setBuildPath(e.currentTarget.value)} />
        </label>
      )}
      <button type="submit" disabled={form.submit.busy}>
        Save source
      </button>
      <Saved shown={form.saved} />
      <ErrorText error={form.submit.error ?? form.providersError} />
    </form>
  );
}

/** A plain Git source: its URL and branch. */
function GitUrlFields(props: {
  url: string;
  setUrl: (url: string) => void;
  branch: string;
  setBranch: (branch: string) => void;
  example: string;
}) {
  return (
    <>
      <label>
        Repository URL
        <input
          required
          placeholder={`https://example.com/team/${props.example}.git`}
          value={props.url}
          onInput={(e) => props.setUrl(e.currentTarget.value)}
        />
      </label>
      <label>
        Branch
        <input required value={props.branch} onInput={(e) => props.setBranch(e.currentTarget.value)} />
      </label>
    </>
  );
}

type ComposeKind = "raw" | "git" | ProviderKind;

export function ComposeSource({
  stack,
  onSaved,
}: {
  stack: Row & { composeId: string };
  onSaved: () => void;
}) {
  const initial = (["raw", "git", ...KIND_NAMES] as string[]).includes(text(stack.sourceType))
    ? (stack.sourceType as ComposeKind)
    : "raw";
  const [url, setUrl] = useState(text(stack.customGitUrl));
  const [branch, setBranch] = useState(text(stack.customGitBranch) || "main");
  const [composePath, setComposePath] = useState(text(stack.composePath) || "./docker-compose.yml");
  const form = useSourceForm<ComposeKind>(stack, initial, async (kind, choice) => {
    const input: Row = { composeId: stack.composeId, sourceType: kind };
    if (kind === "git") Object.assign(input, { customGitUrl: url, customGitBranch: branch, composePath });
    else if (kind !== "raw")
      Object.assign(input, providerFields(kind, choice, await repositoryOf(kind, choice)), { composePath });
    await mutate("compose.update", input);
    onSaved();
  });
  return (
    <form onSubmit={form.submit.onSubmit} class="card inline" aria-labelledby="compose-source-title">
      <h2 id="compose-source-title">Source</h2>
      <SourceTypeSelect
        value={form.kind}
        plain={[
          ["raw", "The compose file below"],
          ["git", "Git repository"],
        ]}
        onChange={form.setKind}
      />
      {form.kind === "git" && (
        <GitUrlFields url={url} setUrl={setUrl} branch={branch} setBranch={setBranch} example="stack" />
      )}
      {form.picker}
      {form.kind !== "raw" && (
        <label>
          Compose file in the repository
          <input required value={composePath} onInput={(e) => setComposePath(e.currentTarget.value)} />
        </label>
      )}
      <button type="submit" disabled={form.submit.busy}>
        Save source
      </button>
      <Saved shown={form.saved} />
      <ErrorText error={form.submit.error ?? form.providersError} />
    </form>
  );
}
