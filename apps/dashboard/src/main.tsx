/**
 * The web dashboard (issue 29): a client of the public API, served by the control plane at `/`.
 * Pages (hash routes, so any path under / serves this one file): sign-in (or the first
 * registration), projects, a project's environments and services, an application with its
 * deployments, live log and domains.
 */
import { render } from "preact";
import { useEffect, useState } from "preact/hooks";
import { ApiKeysPage, MembersPage, SettingsPage } from "./admin.tsx";
import {
  type Answer,
  ApiFailure,
  type Application,
  type Deployment,
  type Domain,
  type Environment,
  isSignedIn,
  mutate,
  type Project,
  query,
  type User,
  whenSignedOut,
} from "./api.ts";
import { type ApplicationSettings, ApplicationSettingsForms } from "./app-settings.tsx";
import { BackupsPage } from "./backups.tsx";
import { CertificatesPage } from "./certificates.tsx";
import { ComposePage, NewCompose, QueuePage } from "./compose.tsx";
import { DATABASE_KINDS, DatabasePage, NewDatabase } from "./databases.tsx";
import { DeploymentsPanel, useDeployments } from "./deployments.tsx";
import { GitProvidersPage } from "./git-providers.tsx";
import { NotificationsPage } from "./notifications.tsx";
import { RuntimeLogs, ServiceTabs } from "./runtime-logs.tsx";
import { SchedulesPage } from "./schedules.tsx";
import { ServersPage, ServiceContainerGraph } from "./servers.tsx";
import { TemplatesPage } from "./templates.tsx";
import { ErrorText, href, Status, useLoad, useSubmit } from "./ui.tsx";
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
      {projects.data && shown.length === 0 && <p class="muted">No project yet.</p>}
      <ul class="cards" aria-label="Projects">
        {shown.map((project) => (
          <li key={project.projectId} class="card">
            <a href={href("project", project.projectId)} class="title">
              {project.name}
            </a>
            {project.description && <p class="muted">{project.description}</p>}
            <p class="muted">
              {project.environments.length} environment{project.environments.length === 1 ? "" : "s"},{" "}
              {project.environments.reduce((n, e) => n + serviceCount(e), 0)} services
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

function EnvironmentServices({ environment, user }: { environment: Environment; user: User | undefined }) {
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
    </section>
  );
}

function ProjectPage({ projectId, user }: { projectId: string; user: User | undefined }) {
  const project = useLoad(() => query<Answer<"project.one">>("project.one", { projectId }), projectId);
  return (
    <>
      <nav aria-label="Breadcrumb" class="crumbs">
        <a href={href()}>Projects</a> / <span aria-current="page">{project.data?.name ?? "…"}</span>
      </nav>
      <h1>{project.data?.name ?? "Project"}</h1>
      <ErrorText error={project.error} />
      {project.data?.environments.map((environment) => (
        <EnvironmentServices key={environment.environmentId} environment={environment} user={user} />
      ))}
    </>
  );
}

// ---- application ---------------------------------------------------------------------------

function Domains({ applicationId }: { applicationId: string }) {
  const domains = useLoad(() => query<Domain[]>("domain.byApplicationId", { applicationId }), applicationId);
  const [host, setHost] = useState("");
  const [port, setPort] = useState("80");
  const [https, setHttps] = useState(false);
  const add = useSubmit(async () => {
    await mutate("domain.create", { applicationId, host, port: Number(port), https });
    setHost("");
    domains.reload();
  });
  return (
    <section class="card" aria-labelledby="domains-title">
      <h2 id="domains-title">Domains</h2>
      <ErrorText error={domains.error} />
      <ul aria-label="Domains" class="services">
        {domains.data?.map((domain) => (
          <li key={domain.domainId}>
            {domain.https ? "https" : "http"}://{domain.host}
            {domain.path && domain.path !== "/" ? domain.path : ""}{" "}
            <span class="muted">→ port {domain.port ?? "default"}</span>
          </li>
        ))}
        {domains.data?.length === 0 && <li class="muted">No domain yet.</li>}
      </ul>
      <form onSubmit={add.onSubmit} class="inline" aria-label="Add a domain">
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
        <button type="submit" disabled={add.busy}>
          Add domain
        </button>
        <ErrorText error={add.error} />
      </form>
    </section>
  );
}

function EnvironmentVariables({ application, onSaved }: { application: Application; onSaved: () => void }) {
  const [env, setEnv] = useState(application.env ?? "");
  const [saved, setSaved] = useState(false);
  const save = useSubmit(async () => {
    setSaved(false);
    await mutate("application.saveEnvironment", {
      applicationId: application.applicationId,
      env,
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
      <div class="row">
        <button type="submit" disabled={save.busy}>
          Save variables
        </button>
        <span role="status">{saved ? "Saved." : ""}</span>
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

function ApplicationPage({ applicationId, logs }: { applicationId: string; logs: boolean }) {
  const application = useLoad(
    () => query<ApplicationSettings>("application.one", { applicationId }),
    applicationId,
  );
  const deployments = useDeployments(
    () => query<Deployment[]>("deployment.all", { applicationId }),
    applicationId,
  );
  const [action, setAction] = useState<"deploy" | "redeploy">("deploy");
  const deploy = useSubmit(async () => {
    const { deploymentId } = await mutate<{ deploymentId: string }>(`application.${action}`, {
      applicationId,
    });
    deployments.watch(deploymentId);
    deployments.reload();
  });
  const running = deployments.data?.some((d) => d.status === "running" || d.status === "idle");
  const cancel = async () => {
    await mutate("application.cancelDeployment", { applicationId });
    deployments.reload();
  };
  const app = application.data;
  const header = (
    <>
      <nav aria-label="Breadcrumb" class="crumbs">
        <a href={href()}>Projects</a> / <span aria-current="page">{app?.name ?? "…"}</span>
      </nav>
      <h1>
        {app?.name ?? "Application"} <Status value={app?.applicationStatus} />
      </h1>
      <ErrorText error={application.error} />
      <ServiceTabs route={["application", applicationId]} logs={logs} />
    </>
  );
  if (logs) {
    return (
      <>
        {header}
        <RuntimeLogs procedure="application.readLogs" target={{ applicationId }} />
      </>
    );
  }
  return (
    <>
      {header}
      {app && (
        <p class="muted">
          {app.appName} ·{" "}
          {app.sourceType === "docker" ? `image ${app.dockerImage ?? "not set"}` : app.sourceType}
        </p>
      )}
      <form onSubmit={deploy.onSubmit} class="row">
        <button type="submit" disabled={deploy.busy} onClick={() => setAction("deploy")}>
          Deploy
        </button>
        {deployments.data && deployments.data.length > 0 && (
          <button type="submit" class="ghost" disabled={deploy.busy} onClick={() => setAction("redeploy")}>
            Redeploy (rebuild)
          </button>
        )}
        {running && (
          <button type="button" class="ghost" onClick={cancel}>
            Cancel the running deployment
          </button>
        )}
        <ErrorText error={deploy.error} />
      </form>
      <DeploymentsPanel deployments={deployments} onEnd={application.reload} />
      {app && <Ports application={app} onChanged={application.reload} />}
      {app && <EnvironmentVariables key={app.applicationId} application={app} onSaved={application.reload} />}
      <Domains applicationId={applicationId} />
      {app && <ApplicationSettingsForms app={app} onSaved={application.reload} />}
      {app && <ServiceContainerGraph appName={app.appName} />}
    </>
  );
}

// ---- shell ---------------------------------------------------------------------------------

function App() {
  const [signedIn, setSignedIn] = useState(isSignedIn);
  const [user, setUser] = useState<User>();
  const route = useRoute();
  useEffect(() => whenSignedOut(() => setSignedIn(false)), []);
  useEffect(() => {
    if (!signedIn) return;
    query<User>("user.get").then(setUser, (error) => {
      if (!(error instanceof ApiFailure && error.status === 401)) console.error(error);
    });
  }, [signedIn]);

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
  return (
    <>
      <a href="#main" class="skip">
        Skip to content
      </a>
      <header class="top">
        <a href={href()} class="brand">
          Platform
        </a>
        <nav aria-label="Main">
          <a href={href()} aria-current={page === undefined ? "page" : undefined}>
            Projects
          </a>
          {administers && (
            <a href={href("members")} aria-current={page === "members" ? "page" : undefined}>
              Members
            </a>
          )}
          <a href={href("git-providers")} aria-current={page === "git-providers" ? "page" : undefined}>
            Git providers
          </a>
          <a href={href("queue")} aria-current={page === "queue" ? "page" : undefined}>
            Queue
          </a>
          <a href={href("servers")} aria-current={page === "servers" ? "page" : undefined}>
            Servers
          </a>
          <a href={href("api-keys")} aria-current={page === "api-keys" ? "page" : undefined}>
            API keys
          </a>
          {(["templates", "backups", "schedules", "notifications", "certificates"] as const).map((name) => (
            <a key={name} href={href(name)} aria-current={page === name ? "page" : undefined}>
              {name[0]!.toUpperCase() + name.slice(1)}
            </a>
          ))}
          {instanceAdmin && (
            <a href={href("settings")} aria-current={page === "settings" ? "page" : undefined}>
              Settings
            </a>
          )}
          <a href="/api/docs">API</a>
        </nav>
        <span class="spacer" />
        {user && <span class="muted">{user.email}</span>}
        <ThemeToggle />
        <button type="button" class="ghost" onClick={logout}>
          Sign out
        </button>
      </header>
      <main id="main">
        {page === "project" && id ? (
          <ProjectPage projectId={id} user={user} />
        ) : page === "application" && id ? (
          <ApplicationPage applicationId={id} logs={rest[0] === "logs"} />
        ) : page === "database" && id && rest[0] ? (
          <DatabasePage kind={id} id={rest[0]} logs={rest[1] === "logs"} />
        ) : page === "compose" && id ? (
          <ComposePage composeId={id} logs={rest[0] === "logs"} />
        ) : page === "git-providers" ? (
          <GitProvidersPage />
        ) : page === "queue" ? (
          <QueuePage />
        ) : page === "servers" ? (
          <ServersPage user={user} instanceAdmin={instanceAdmin} />
        ) : page === "members" && user ? (
          <MembersPage user={user} />
        ) : page === "api-keys" && user ? (
          <ApiKeysPage user={user} />
        ) : page === "templates" ? (
          <TemplatesPage />
        ) : page === "backups" ? (
          <BackupsPage />
        ) : page === "schedules" ? (
          <SchedulesPage instanceAdmin={instanceAdmin} />
        ) : page === "notifications" ? (
          <NotificationsPage />
        ) : page === "certificates" ? (
          <CertificatesPage />
        ) : page === "settings" && instanceAdmin ? (
          <SettingsPage />
        ) : (
          <Projects user={user} />
        )}
      </main>
    </>
  );
}

applyTheme(storedTheme());
render(<App />, document.getElementById("app")!);
