/**
 * The web dashboard (issue 29): a client of the public API, served by the control plane at `/`.
 * Pages (hash routes, so any path under / serves this one file, registered in PAGES below):
 * sign-in (or the first registration), projects, a project's environments and services, the
 * services' tabbed pages, and the instance pages linked from the sidebar.
 */

import type { JSX } from "preact";
import { render } from "preact";
import { useEffect, useRef, useState } from "preact/hooks";
import { ApiKeysPage, MembersPage, SettingsPage } from "./admin.tsx";
import {
  type Answer,
  ApiFailure,
  type Environment,
  isSignedIn,
  mutate,
  type Project,
  query,
  type User,
  whenSignedOut,
} from "./api.ts";
import { ApplicationPage } from "./application.tsx";
import { BackupsPage } from "./backups.tsx";
import { CertificatesPage } from "./certificates.tsx";
import { ComposePage, NewCompose, QueuePage } from "./compose.tsx";
import { DATABASE_KINDS, DatabasePage, NewDatabase } from "./databases.tsx";
import { DockerPage } from "./docker.tsx";
import { GitProvidersPage } from "./git-providers.tsx";
import { NotificationsPage } from "./notifications.tsx";
import { ProfilePage } from "./profile.tsx";
import { RegistriesPage } from "./registries.tsx";
import { RequestsPage } from "./requests.tsx";
import { SchedulesPage } from "./schedules.tsx";
import { ServersPage } from "./servers.tsx";
import { TemplatesPage } from "./templates.tsx";
import { ConfirmButton, ErrorText, href, plural, Saved, Status, useLoad, useSubmit } from "./ui.tsx";
import "./app.css";

// ---- routing -------------------------------------------------------------------------------

function currentRoute(): string[] {
  return location.hash.replace(/^#\/?/, "").split("/").filter(Boolean).map(decodeURIComponent);
}

function useRoute(): string[] {
  const [route, setRoute] = useState(currentRoute);
  useEffect(() => {
    const changed = () => setRoute(currentRoute());
    addEventListener("hashchange", changed);
    return () => removeEventListener("hashchange", changed);
  }, []);
  return route;
}

// ---- theme ---------------------------------------------------------------------------------

function storedTheme(): "light" | "dark" | null {
  const theme = localStorage.getItem("platform-theme");
  return theme === "light" || theme === "dark" ? theme : null;
}

function applyTheme(theme: "light" | "dark" | null) {
  if (theme) document.documentElement.dataset.theme = theme;
  else delete document.documentElement.dataset.theme;
}

function ThemeToggle() {
  const [theme, setTheme] = useState(storedTheme);
  const dark = (theme ?? (matchMedia("(prefers-color-scheme: dark)").matches ? "dark" : "light")) === "dark";
  const toggle = () => {
    const next = dark ? "light" : "dark";
    localStorage.setItem("platform-theme", next);
    applyTheme(next);
    setTheme(next);
  };
  return (
    <button type="button" class="ghost" onClick={toggle} aria-pressed={dark}>
      Dark theme
    </button>
  );
}

// ---- sign-in -------------------------------------------------------------------------------

/** An invitation link's parts: #/invite/<invitationId>/<token>/<email>. */
interface InvitationLink {
  invitationId: string;
  token: string;
  email: string;
}

/** The set-up token of the link the control plane printed at start: /?setup=<token> (or #/?setup=). */
function setupTokenOfUrl(): string {
  const inHash = location.hash.includes("?") ? location.hash.slice(location.hash.indexOf("?")) : "";
  return new URLSearchParams(location.search).get("setup") ?? new URLSearchParams(inHash).get("setup") ?? "";
}

function SignIn({ onSignedIn, invitation }: { onSignedIn: () => void; invitation?: InvitationLink }) {
  const firstRun = document.documentElement.dataset.firstRun === "true";
  // The first account registered from another machine needs the set-up token (auth.register).
  const setupRequired = firstRun && document.documentElement.dataset.setupToken === "required";
  const [register, setRegister] = useState(firstRun || invitation !== undefined);
  const [email, setEmail] = useState(invitation?.email ?? "");
  const [password, setPassword] = useState("");
  const [name, setName] = useState("");
  const [setupToken, setSetupToken] = useState(setupTokenOfUrl);
  // Two-factor sign-in: the password answered a challenge; the code (or a recovery code) ends it.
  const [challengeToken, setChallengeToken] = useState("");
  const [code, setCode] = useState("");
  const [recovery, setRecovery] = useState(false);
  const { busy, error, onSubmit } = useSubmit(async () => {
    if (challengeToken) {
      await mutate(recovery ? "auth.twoFactorVerifyBackupCode" : "auth.twoFactorVerifyTotp", {
        challengeToken,
        code: code.trim(),
      });
    } else if (register) {
      const accepted = invitation ? { invitationId: invitation.invitationId, token: invitation.token } : {};
      const setup = !invitation && setupToken.trim() ? { setupToken: setupToken.trim() } : {};
      await mutate("auth.register", {
        email,
        password,
        name: name.trim() || email.split("@")[0],
        ...accepted,
        ...setup,
      });
    } else {
      const answer = await mutate<{ twoFactorRequired?: boolean; challengeToken?: string }>("auth.login", {
        email,
        password,
      });
      if (answer.twoFactorRequired && answer.challengeToken) {
        setChallengeToken(answer.challengeToken);
        return;
      }
    }
    document.documentElement.dataset.firstRun = "false";
    onSignedIn();
  });
  const title = !register ? "Sign in" : invitation ? "Accept the invitation" : "Create the first account";
  if (challengeToken) {
    return (
      <main class="signin">
        <h1>Platform</h1>
        <form onSubmit={onSubmit} aria-labelledby="signin-title" class="card">
          <h2 id="signin-title">Two-factor sign-in</h2>
          <label>
            {recovery ? "Recovery code" : "Code from your authenticator app"}
            <input
              type="text"
              name="code"
              autocomplete="one-time-code"
              inputMode={recovery ? "text" : "numeric"}
              required
              value={code}
              onInput={(e) => setCode(e.currentTarget.value)}
            />
          </label>
          <ErrorText error={error} />
          <button type="submit" disabled={busy}>
            Sign in
          </button>
          <button type="button" class="link" onClick={() => setRecovery(!recovery)}>
            {recovery ? "Use the authenticator app" : "Use a recovery code"}
          </button>
          <button
            type="button"
            class="link"
            onClick={() => {
              setChallengeToken("");
              setCode("");
            }}
          >
            Start again
          </button>
        </form>
      </main>
    );
  }
  return (
    <main class="signin">
      <h1>Platform</h1>
      <form onSubmit={onSubmit} aria-labelledby="signin-title" class="card">
        <h2 id="signin-title">{title}</h2>
        {register && !invitation && firstRun && (
          <p class="muted">No one has an account yet: the first account owns this instance.</p>
        )}
        {register && invitation && <p class="muted">Choose a password for {invitation.email}.</p>}
        <label>
          Email
          <input
            type="email"
            name="email"
            autocomplete="username"
            required
            value={email}
            onInput={(e) => setEmail(e.currentTarget.value)}
          />
        </label>
        <label>
          Password
          <input
            type="password"
            name="password"
            autocomplete={register ? "new-password" : "current-password"}
            required
            minLength={register ? 8 : 1}
            value={password}
            onInput={(e) => setPassword(e.currentTarget.value)}
          />
        </label>
        {register && !invitation && setupRequired && (
          <label>
            Set-up token
            <input
              type="password"
              name="setupToken"
              autocomplete="off"
              required
              value={setupToken}
              onInput={(e) => setSetupToken(e.currentTarget.value)}
            />
            <span class="muted">
              Printed by the control plane when it started (&quot;Set-up token: …&quot;), and by install.sh at
              its end.
            </span>
          </label>
        )}
        {register && (
          <label>
            Your name
            <input
              type="text"
              name="name"
              autocomplete="name"
              value={name}
              onInput={(e) => setName(e.currentTarget.value)}
            />
          </label>
        )}
        <ErrorText error={error} />
        <button type="submit" disabled={busy}>
          {register ? "Create account" : "Sign in"}
        </button>
        {(register || firstRun) && (
          <button type="button" class="link" onClick={() => setRegister(!register)}>
            {register ? "I have an account: sign in" : "Create the first account"}
          </button>
        )}
      </form>
    </main>
  );
}

// ---- projects ------------------------------------------------------------------------------

function serviceCount(environment: Environment): number {
  return (
    environment.applications.length +
    environment.postgres.length +
    environment.mysql.length +
    environment.mariadb.length +
    environment.mongo.length +
    environment.redis.length +
    environment.compose.length
  );
}

function Projects({ user }: { user: User | undefined }) {
  const projects = useLoad(() => query<Project[]>("project.all"), "projects");
  const [search, setSearch] = useState("");
  const [name, setName] = useState("");
  const create = useSubmit(async () => {
    const created = await mutate<Answer<"project.create">>("project.create", { name });
    location.hash = href("project", created.project.projectId);
  });
  const needle = search.trim().toLowerCase();
  const shown = (projects.data ?? []).filter((p) => p.name.toLowerCase().includes(needle));
  return (
    <>
      <h1>Projects</h1>
      <div class="row">
        <label>
          Search projects{" "}
          <input type="search" value={search} onInput={(e) => setSearch(e.currentTarget.value)} />
        </label>
      </div>
      <ErrorText error={projects.error} />
      {projects.data && projects.data.length === 0 && (
        <p class="muted">No project yet: create one below, then add its services.</p>
      )}
      {projects.data && projects.data.length > 0 && shown.length === 0 && (
        <p class="muted">No project matches “{search.trim()}”.</p>
      )}
      <ul class="cards" aria-label="Projects">
        {shown.map((project) => (
          <li key={project.projectId} class="card">
            <a href={href("project", project.projectId)} class="title">
              {project.name}
            </a>
            {project.description && <p class="muted">{project.description}</p>}
            <p class="muted">
              {plural(project.environments.length, "environment")},{" "}
              {plural(
                project.environments.reduce((n, e) => n + serviceCount(e), 0),
                "service",
              )}
            </p>
          </li>
        ))}
      </ul>
      {user?.canCreateProjects && (
        <form onSubmit={create.onSubmit} class="card inline" aria-labelledby="new-project">
          <h2 id="new-project">New project</h2>
          <label>
            Project name
            <input required value={name} onInput={(e) => setName(e.currentTarget.value)} />
          </label>
          <button type="submit" disabled={create.busy}>
            Create project
          </button>
          <ErrorText error={create.error} />
        </form>
      )}
    </>
  );
}

/** A database summary's id: its kind's own field (postgresId, mysqlId, …). */
function databaseId(summary: object, idKey: string): string {
  return String((summary as Record<string, unknown>)[idKey]);
}

function EnvironmentServices({
  environment,
  user,
  onChanged,
}: {
  environment: Environment;
  user: User | undefined;
  onChanged: () => void;
}) {
  const [name, setName] = useState("");
  const [image, setImage] = useState("");
  const create = useSubmit(async () => {
    const application = await mutate<Answer<"application.create">>("application.create", {
      name,
      environmentId: environment.environmentId,
    });
    await mutate("application.saveDockerProvider", {
      applicationId: application.applicationId,
      dockerImage: image,
    });
    location.hash = href("application", application.applicationId);
  });
  const formId = `new-app-${environment.environmentId}`;
  return (
    <section class="card" aria-labelledby={`env-${environment.environmentId}`}>
      <h2 id={`env-${environment.environmentId}`}>Environment {environment.name}</h2>
      <ul class="services" aria-label={`Services of ${environment.name}`}>
        {environment.applications.map((app) => (
          <li key={String(app.applicationId)}>
            <a href={href("application", String(app.applicationId))}>{app.name}</a>{" "}
            <span class="muted">application</span> <Status value={app.applicationStatus} />
          </li>
        ))}
        {DATABASE_KINDS.flatMap(({ kind, idKey, label }) =>
          environment[kind].map((db) => (
            <li key={databaseId(db, idKey)}>
              <a href={href("database", kind, databaseId(db, idKey))}>{db.name}</a>{" "}
              <span class="muted">{label}</span> <Status value={db.applicationStatus} />
            </li>
          )),
        )}
        {environment.compose.map((compose) => (
          <li key={String(compose.composeId)}>
            <a href={href("compose", String(compose.composeId))}>{compose.name}</a>{" "}
            <span class="muted">compose</span> <Status value={compose.composeStatus} />
          </li>
        ))}
        {serviceCount(environment) === 0 && <li class="muted">No service yet.</li>}
      </ul>
      {user?.canCreateServices && (
        <form onSubmit={create.onSubmit} class="inline" aria-labelledby={formId}>
          <h3 id={formId}>New application from a Docker image</h3>
          <label>
            Application name
            <input required value={name} onInput={(e) => setName(e.currentTarget.value)} />
          </label>
          <label>
            Docker image
            <input
              required
              placeholder="nginx:alpine"
              value={image}
              onInput={(e) => setImage(e.currentTarget.value)}
            />
          </label>
          <button type="submit" disabled={create.busy}>
            Create application
          </button>
          <ErrorText error={create.error} />
        </form>
      )}
      {user?.canCreateServices && <NewDatabase environmentId={environment.environmentId} />}
      {user?.canCreateServices && <NewCompose environmentId={environment.environmentId} />}
      {!environment.isDefault && user?.canDeleteProjects && (
        <ConfirmButton
          label={`Delete environment ${environment.name}`}
          title={`Delete the environment ${environment.name}?`}
          consequence={`This removes ${environment.name} and its ${plural(serviceCount(environment), "service")} with their containers, domains, deployments and database volumes. It cannot be undone.`}
          confirmLabel={`Delete ${environment.name}`}
          action={async () => {
            await mutate("environment.remove", { environmentId: environment.environmentId });
            onChanged();
          }}
        />
      )}
    </section>
  );
}

function ProjectPage({ projectId, user }: { projectId: string; user: User | undefined }) {
  const project = useLoad(() => query<Answer<"project.one">>("project.one", { projectId }), projectId);
  const data = project.data;
  if (project.error && !data) {
    return (
      <>
        <h1>Project not found</h1>
        <ErrorText error={project.error} />
        <p>
          <a href={href()}>Back to the projects</a>
        </p>
      </>
    );
  }
  const services = data?.environments.reduce((n, e) => n + serviceCount(e), 0) ?? 0;
  return (
    <>
      <nav aria-label="Breadcrumb" class="crumbs">
        <a href={href()}>Projects</a> / <span aria-current="page">{data?.name ?? "…"}</span>
      </nav>
      <h1>{data?.name ?? "Project"}</h1>
      <ErrorText error={project.error} />
      {data?.environments.map((environment) => (
        <EnvironmentServices
          key={environment.environmentId}
          environment={environment}
          user={user}
          onChanged={project.reload}
        />
      ))}
      {data && user?.canCreateProjects && <NewEnvironment projectId={projectId} onCreated={project.reload} />}
      {data && (
        <ProjectSettings
          key={projectId}
          project={data}
          services={services}
          canDelete={user?.canDeleteProjects ?? false}
          onSaved={project.reload}
        />
      )}
    </>
  );
}

function NewEnvironment({ projectId, onCreated }: { projectId: string; onCreated: () => void }) {
  const [name, setName] = useState("");
  const create = useSubmit(async () => {
    await mutate("environment.create", { projectId, name: name.trim() });
    setName("");
    onCreated();
  });
  return (
    <form onSubmit={create.onSubmit} class="card inline" aria-labelledby="new-environment">
      <h2 id="new-environment">New environment</h2>
      <label>
        Environment name
        <input required placeholder="staging" value={name} onInput={(e) => setName(e.currentTarget.value)} />
      </label>
      <button type="submit" disabled={create.busy}>
        Create environment
      </button>
      <ErrorText error={create.error} />
    </form>
  );
}

function ProjectSettings({
  project,
  services,
  canDelete,
  onSaved,
}: {
  project: Answer<"project.one">;
  services: number;
  canDelete: boolean;
  onSaved: () => void;
}) {
  const [name, setName] = useState(project.name);
  const [saved, setSaved] = useState("");
  const rename = useSubmit(async () => {
    setSaved("");
    await mutate("project.update", { projectId: project.projectId, name: name.trim() });
    setSaved("Renamed.");
    onSaved();
  });
  return (
    <section class="card" aria-labelledby="project-settings">
      <h2 id="project-settings">Project settings</h2>
      <form onSubmit={rename.onSubmit} class="inline" aria-label="Rename the project">
        <label>
          New project name
          <input required value={name} onInput={(e) => setName(e.currentTarget.value)} />
        </label>
        <button type="submit" disabled={rename.busy}>
          Rename project
        </button>
        <Saved text={saved} />
        <ErrorText error={rename.error} />
      </form>
      {canDelete && (
        <ConfirmButton
          label="Delete project"
          title={`Delete the project ${project.name}?`}
          consequence={`This removes ${project.name}, its ${plural(project.environments.length, "environment")} and ${plural(services, "service")} with their containers, domains, deployments and database volumes. It cannot be undone.`}
          confirmLabel={`Delete ${project.name}`}
          action={async () => {
            await mutate("project.remove", { projectId: project.projectId });
            location.hash = href();
          }}
        />
      )}
    </section>
  );
}

// ---- shell ---------------------------------------------------------------------------------

interface PageProps {
  /** The hash route's segments after the page's own: #/<page>/<args…>. */
  args: string[];
  user: User | undefined;
  instanceAdmin: boolean;
}

/**
 * The route table: #/<key>/… renders PAGES[key]. A new page is one line here, and a link in
 * SIDEBAR_PAGES when it belongs in the sidebar. #/ (and an unknown key) is the projects page.
 */
const PAGES: Record<string, (props: PageProps) => JSX.Element> = {
  project: ({ args: [id], user }) => <ProjectPage projectId={id ?? ""} user={user} />,
  application: ({ args: [id, tab] }) => <ApplicationPage applicationId={id ?? ""} tab={tab} />,
  database: ({ args: [kind, id, tab] }) => <DatabasePage kind={kind ?? ""} id={id ?? ""} tab={tab} />,
  compose: ({ args: [id, tab] }) => <ComposePage composeId={id ?? ""} tab={tab} />,
  "git-providers": () => <GitProvidersPage />,
  queue: () => <QueuePage />,
  servers: ({ user, instanceAdmin }) => <ServersPage user={user} instanceAdmin={instanceAdmin} />,
  members: ({ user }) => (user ? <MembersPage user={user} /> : <Loading />),
  "api-keys": ({ user }) => (user ? <ApiKeysPage user={user} /> : <Loading />),
  templates: () => <TemplatesPage />,
  backups: () => <BackupsPage />,
  schedules: ({ instanceAdmin }) => <SchedulesPage instanceAdmin={instanceAdmin} />,
  notifications: () => <NotificationsPage />,
  certificates: () => <CertificatesPage />,
  settings: ({ user, instanceAdmin }) => (instanceAdmin ? <SettingsPage /> : <Projects user={user} />),
  registries: ({ user }) => <RegistriesPage user={user} />,
  profile: () => <ProfilePage />,
  requests: ({ user, instanceAdmin }) => (instanceAdmin ? <RequestsPage /> : <Projects user={user} />),
  docker: () => <DockerPage />,
};

/** The instance's pages in the sidebar: [route key, link text, who sees it]. */
const SIDEBAR_PAGES: readonly (readonly [string, string, "all" | "administers" | "instance"])[] = [
  ["templates", "Templates", "all"],
  ["backups", "Backups", "all"],
  ["schedules", "Schedules", "all"],
  ["notifications", "Notifications", "all"],
  ["certificates", "Certificates", "all"],
  ["queue", "Queue", "all"],
  ["servers", "Servers", "all"],
  ["git-providers", "Git providers", "all"],
  ["members", "Members", "administers"],
  ["api-keys", "API keys", "all"],
  ["settings", "Settings", "instance"],
  ["registries", "Registries", "all"],
  ["profile", "Profile", "all"],
  ["requests", "Requests", "instance"],
  ["docker", "Docker", "all"],
];

function Loading() {
  return <h1>Loading…</h1>;
}

function Sidebar({
  page,
  projectId,
  user,
  administers,
  instanceAdmin,
  open,
  onSignOut,
}: {
  page: string | undefined;
  projectId: string | undefined;
  user: User | undefined;
  administers: boolean;
  instanceAdmin: boolean;
  open: boolean;
  onSignOut: () => void;
}) {
  const projects = useLoad(() => query<Project[]>("project.all"), `sidebar-${page ?? ""}-${projectId ?? ""}`);
  const current = (key: string) => (page === key ? "page" : undefined);
  return (
    <aside id="sidebar" class={open ? "sidebar open" : "sidebar"} aria-label="Sidebar">
      <a href={href()} class="brand">
        Platform
      </a>
      <nav aria-label="Main">
        <a href={href()} aria-current={page === undefined ? "page" : undefined}>
          Projects
        </a>
        <ul aria-label="Your projects" class="side-projects">
          {projects.data?.map((project) => (
            <li key={project.projectId}>
              <a
                href={href("project", project.projectId)}
                aria-current={page === "project" && projectId === project.projectId ? "page" : undefined}
              >
                {project.name}
              </a>
            </li>
          ))}
        </ul>
        <span class="side-heading" aria-hidden="true">
          Instance
        </span>
        {SIDEBAR_PAGES.filter(
          ([, , who]) =>
            who === "all" || (who === "administers" && administers) || (who === "instance" && instanceAdmin),
        ).map(([key, label]) => (
          <a key={key} href={href(key)} aria-current={current(key)}>
            {label}
          </a>
        ))}
        <a href="/api/docs">API</a>
      </nav>
      <div class="side-account">
        {user && <span class="muted">{user.email}</span>}
        <ThemeToggle />
        <button type="button" class="ghost" onClick={onSignOut}>
          Sign out
        </button>
      </div>
    </aside>
  );
}

function App() {
  const [signedIn, setSignedIn] = useState(isSignedIn);
  const [user, setUser] = useState<User>();
  const route = useRoute();
  const mainRef = useRef<HTMLElement>(null);
  const routeKey = route.join("/");
  // The phone's menu is open on the route it was opened on: following a link closes it in the
  // same render that shows the new page.
  const [menuOpenOn, setMenuOpenOn] = useState<string>();
  const menuOpen = menuOpenOn === routeKey;
  const firstRoute = useRef(true);
  useEffect(() => whenSignedOut(() => setSignedIn(false)), []);
  useEffect(() => {
    if (!signedIn) return;
    query<User>("user.get").then(setUser, (error) => {
      if (!(error instanceof ApiFailure && error.status === 401)) console.error(error);
    });
  }, [signedIn]);
  // After a navigation (not the first load), focus goes to the new page's heading.
  useEffect(() => {
    if (firstRoute.current) {
      firstRoute.current = false;
      return;
    }
    const heading = mainRef.current?.querySelector("h1");
    if (heading) {
      heading.tabIndex = -1;
      heading.focus({ preventScroll: false });
    }
  }, [routeKey]);
  const administers = user !== undefined && user.role !== "member";
  // The instance settings are the instance administrator's alone (owner or administrators of the
  // first organization): offered only when the API answers them to this user.
  const [instanceAdmin, setInstanceAdmin] = useState(false);
  useEffect(() => {
    setInstanceAdmin(false);
    if (!administers) return;
    query("settings.getWebServerSettings").then(
      () => setInstanceAdmin(true),
      () => setInstanceAdmin(false),
    );
  }, [administers, user?.userId]);

  const [page, id, ...rest] = route;
  if (!signedIn) {
    const invitation =
      page === "invite" && id && rest[0] && rest[1]
        ? { invitationId: id, token: rest[0], email: rest[1] }
        : undefined;
    return (
      <SignIn
        key={invitation?.invitationId ?? "sign-in"}
        invitation={invitation}
        onSignedIn={() => {
          location.hash = href();
          setSignedIn(true);
        }}
      />
    );
  }
  const logout = async () => {
    await mutate("auth.logout").catch(() => {});
    setUser(undefined);
    setSignedIn(false);
  };
  const showPage = page ? PAGES[page] : undefined;
  return (
    <div class="shell">
      {/* biome-ignore lint/a11y/useValidAnchor: a skip link is a link by convention; its #main would otherwise be read as a route */}
      <a
        href="#main"
        class="skip"
        onClick={(event) => {
          // The link's own #main would be read as a route: focus the content instead.
          event.preventDefault();
          mainRef.current?.focus();
        }}
      >
        Skip to content
      </a>
      <header class="topbar">
        <a href={href()} class="brand">
          Platform
        </a>
        <button
          type="button"
          class="ghost"
          aria-expanded={menuOpen}
          aria-controls="sidebar"
          onClick={() => setMenuOpenOn(menuOpen ? undefined : routeKey)}
        >
          Menu
        </button>
      </header>
      <Sidebar
        page={page}
        projectId={page === "project" ? id : undefined}
        user={user}
        administers={administers}
        instanceAdmin={instanceAdmin}
        open={menuOpen}
        onSignOut={logout}
      />
      <main id="main" ref={mainRef} tabIndex={-1}>
        {showPage ? (
          showPage({ args: route.slice(1), user, instanceAdmin })
        ) : page ? (
          <NotFound />
        ) : (
          <Projects user={user} />
        )}
      </main>
    </div>
  );
}

function NotFound() {
  return (
    <>
      <h1>Page not found</h1>
      <p>
        Nothing is at this address. <a href={href()}>Back to the projects</a>
      </p>
    </>
  );
}

applyTheme(storedTheme());
render(<App />, document.getElementById("app")!);
