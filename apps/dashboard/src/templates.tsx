/**
 * Templates: the catalogue (compose.templates) as a gallery with a search and tag filters, each
 * with the logo the catalogue ships (data: URLs only: a remote catalogue's logo URLs are never
 * loaded), then a form that deploys the template into an environment (compose.deployTemplate)
 * and lands on the new stack's page.
 */
import { useState } from "preact/hooks";
import { type Answer, mutate, type Project, query } from "./api.ts";
import { ErrorText, href, useLoad, useSubmit } from "./ui.tsx";
import "./instance-pages.css";

type Template = Answer<"compose.templates">[number];
type Server = { serverId: string; name: string };

function Logo({ template }: { template: Template }) {
  // Only a logo shipped inside the answer is shown; a URL would load an image from elsewhere.
  if (template.logo.startsWith("data:image/")) {
    return <img class="template-logo" src={template.logo} alt="" width={40} height={40} />;
  }
  return null;
}

function DeployForm({ template, onCancel }: { template: Template; onCancel: () => void }) {
  const projects = useLoad(() => query<Project[]>("project.all"), "template-projects");
  const servers = useLoad(
    () => query<Server[]>("server.all").catch(() => [] as Server[]),
    "template-servers",
  );
  const environments = (projects.data ?? []).flatMap((project) =>
    project.environments.map((environment) => ({
      id: environment.environmentId,
      label: `${project.name} / ${environment.name}`,
    })),
  );
  const [environmentId, setEnvironmentId] = useState("");
  const [serverId, setServerId] = useState("");
  const chosen = environmentId || environments[0]?.id || "";
  const deploy = useSubmit(async () => {
    const stack = await mutate<Answer<"compose.deployTemplate">>("compose.deployTemplate", {
      environmentId: chosen,
      id: template.id,
      ...(serverId ? { serverId } : {}),
    });
    location.hash = href("compose", stack.composeId);
  });
  const titleId = `deploy-${template.id}`;
  return (
    <form onSubmit={deploy.onSubmit} class="card inline" aria-labelledby={titleId}>
      <h2 id={titleId}>
        <Logo template={template} /> Deploy {template.name}
      </h2>
      <p class="muted wrap-anywhere">{template.description}</p>
      <ErrorText error={projects.error} />
      {projects.data && environments.length === 0 ? (
        <p>
          No project yet: <a href={href()}>create a project</a> first, then deploy the template into one of
          its environments.
        </p>
      ) : (
        <>
          <label>
            Environment
            <select value={chosen} onChange={(e) => setEnvironmentId(e.currentTarget.value)} required>
              {environments.map((environment) => (
                <option key={environment.id} value={environment.id}>
                  {environment.label}
                </option>
              ))}
            </select>
          </label>
          {(servers.data?.length ?? 0) > 0 && (
            <label>
              Server
              <select value={serverId} onChange={(e) => setServerId(e.currentTarget.value)}>
                <option value="">This machine</option>
                {servers.data?.map((server) => (
                  <option key={server.serverId} value={server.serverId}>
                    {server.name}
                  </option>
                ))}
              </select>
            </label>
          )}
          <p class="muted">
            The template's variables (passwords, secrets, its domain) are generated when it is deployed;
            change them afterwards in the stack's environment and deploy again.
          </p>
          <div class="row">
            <button type="submit" disabled={deploy.busy || !chosen}>
              {deploy.busy ? "Deploying…" : `Deploy ${template.name}`}
            </button>
            <button type="button" class="ghost" onClick={onCancel}>
              Back to the templates
            </button>
          </div>
        </>
      )}
      <ErrorText error={deploy.error} />
    </form>
  );
}

export function TemplatesPage() {
  const templates = useLoad(() => query<Template[]>("compose.templates"), "templates");
  const [search, setSearch] = useState("");
  const [tag, setTag] = useState("");
  const [chosen, setChosen] = useState<Template>();
  const tags = [...new Set((templates.data ?? []).flatMap((template) => template.tags))].sort();
  const needle = search.trim().toLowerCase();
  const shown = (templates.data ?? []).filter(
    (template) =>
      (!tag || template.tags.includes(tag)) &&
      (!needle ||
        template.id.includes(needle) ||
        template.name.toLowerCase().includes(needle) ||
        template.description.toLowerCase().includes(needle) ||
        template.tags.some((t) => t.includes(needle))),
  );
  if (chosen) {
    return (
      <div class="instance-page">
        <h1>Templates</h1>
        <DeployForm template={chosen} onCancel={() => setChosen(undefined)} />
      </div>
    );
  }
  return (
    <div class="instance-page">
      <h1>Templates</h1>
      <p class="muted">Ready-made compose stacks: pick one, choose an environment, deploy.</p>
      <div class="row">
        <label>
          Search templates{" "}
          <input type="search" value={search} onInput={(e) => setSearch(e.currentTarget.value)} />
        </label>
        <label>
          Tag
          <select value={tag} onChange={(e) => setTag(e.currentTarget.value)}>
            <option value="">All tags</option>
            {tags.map((t) => (
              <option key={t} value={t}>
                {t}
              </option>
            ))}
          </select>
        </label>
      </div>
      <ErrorText error={templates.error} />
      {templates.loading && !templates.data && <p class="muted">Loading the catalogue…</p>}
      {templates.data && shown.length === 0 && (
        <p class="muted">
          No template matches{needle ? ` "${search.trim()}"` : ""}
          {tag ? ` with the tag ${tag}` : ""}: clear the search or choose another tag.
        </p>
      )}
      <ul class="gallery" aria-label="Templates">
        {shown.map((template) => (
          <li key={template.id}>
            <div class="row">
              <Logo template={template} />
              <h2 class="wrap-anywhere">{template.name}</h2>
            </div>
            <span class="muted">version {template.version}</span>
            <p class="wrap-anywhere">{template.description}</p>
            <ul class="tag-list" aria-label={`Tags of ${template.name}`}>
              {template.tags.map((t) => (
                <li key={t}>
                  <button
                    type="button"
                    class="link"
                    aria-pressed={tag === t}
                    onClick={() => setTag(tag === t ? "" : t)}
                  >
                    {t}
                  </button>
                </li>
              ))}
            </ul>
            <button type="button" onClick={() => setChosen(template)}>
              Deploy {template.name}
            </button>
          </li>
        ))}
      </ul>
    </div>
  );
}
