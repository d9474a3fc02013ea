/**
 * The organization's pages: members and invitations (administrators), the caller's API keys
 * (a new key is shown once), and the instance settings (administrators only; the page is not
 * offered to members): domain, daily cleanup, Traefik (dashboard, traefik.yml), monitoring.
 */
import { useState } from "preact/hooks";
import { type Answer, type Member, mutate, query, type User } from "./api.ts";
import { type MetricsToken, MonitoringFields } from "./servers.tsx";
import { ConfirmButton, ErrorText, useLoad, useSubmit } from "./ui.tsx";

interface Invitation {
  invitationId: string;
  email: string;
  role: string;
  token: string;
}

const PERMISSIONS = [
  ["canCreateProjects", "Create projects"],
  ["canDeleteProjects", "Delete projects"],
  ["canCreateEnvironments", "Create environments"],
  ["canDeleteEnvironments", "Delete environments"],
  ["canCreateServices", "Create services"],
  ["canDeleteServices", "Delete services"],
  ["canAccessToDocker", "Docker"],
  ["canAccessToTraefikFiles", "Proxy files"],
  ["canAccessToAPI", "API keys"],
  ["canAccessToSSHKeys", "SSH keys"],
  ["canAccessToGitProviders", "Git providers"],
  ["canAccessAuditLog", "Audit log"],
] as const;
type Permission = (typeof PERMISSIONS)[number][0];

/** The owner edits a member's role and permission flags (user.assignPermissions). */
function Permissions({ member, onSaved }: { member: Member; onSaved: () => void }) {
  const record = member as unknown as Record<Permission, boolean>;
  const [role, setRole] = useState<"member" | "admin">(member.role === "admin" ? "admin" : "member");
  const [flags, setFlags] = useState(
    () =>
      Object.fromEntries(PERMISSIONS.map(([key]) => [key, Boolean(record[key])])) as Record<
        Permission,
        boolean
      >,
  );
  const [saved, setSaved] = useState(false);
  const save = useSubmit(async () => {
    setSaved(false);
    await mutate("user.assignPermissions", { id: member.userId, role, ...flags });
    setSaved(true);
    onSaved();
  });
  return (
    <details>
      <summary>Role and permissions of {member.email}</summary>
      <form onSubmit={save.onSubmit} class="inline" aria-label={`Role and permissions of ${member.email}`}>
        <label>
          Role of {member.email}
          <select value={role} onChange={(e) => setRole(e.currentTarget.value as "member" | "admin")}>
            <option value="member">member</option>
            <option value="admin">admin</option>
          </select>
        </label>
        <fieldset class="checks">
          <legend>Permissions (members; administrators have them all)</legend>
          {PERMISSIONS.map(([key, label]) => (
            <label class="check" key={key}>
              <input
                type="checkbox"
                checked={flags[key]}
                onChange={(e) => setFlags({ ...flags, [key]: e.currentTarget.checked })}
              />{" "}
              {label}
            </label>
          ))}
        </fieldset>
        <button type="submit" disabled={save.busy}>
          Save permissions
        </button>
        <span role="status">{saved ? "Saved." : ""}</span>
        <ErrorText error={save.error} />
      </form>
    </details>
  );
}

export function MembersPage({ user }: { user: User }) {
  const members = useLoad(() => query<Member[]>("user.all"), "members");
  const [email, setEmail] = useState("");
  const [role, setRole] = useState<"member" | "admin">("member");
  const [invited, setInvited] = useState<{ email: string; link: string }>();
  const invitations = useLoad(
    () => query<Answer<"organization.allInvitations">>("organization.allInvitations"),
    "invitations",
  );
  const invite = useSubmit(async () => {
    const invitation = await mutate<Invitation>("organization.inviteMember", { email, role });
    const link = `${location.origin}/#/invite/${encodeURIComponent(invitation.invitationId)}/${encodeURIComponent(invitation.token)}/${encodeURIComponent(invitation.email)}`;
    setInvited({ email: invitation.email, link });
    setEmail("");
    invitations.reload();
  });
  return (
    <>
      <h1>Members</h1>
      <ErrorText error={members.error} />
      <ul class="services" aria-label="Members">
        {members.data?.map((member) => (
          <li key={member.userId}>
            {member.name} <span class="muted">{member.email}</span> <span class="badge">{member.role}</span>
            {user.role === "owner" && member.role !== "owner" && (
              <Permissions key={member.userId} member={member} onSaved={members.reload} />
            )}
            {member.role !== "owner" &&
              member.userId !== user.userId &&
              (user.role === "owner" || member.role === "member") && (
                <ConfirmButton
                  label={`Remove ${member.email}`}
                  title={`Remove ${member.email} from the organization?`}
                  consequence={`${member.name || member.email} loses access to this organization's projects, services and servers at once: their sessions in it end and their API keys for it are deleted. An account that belongs to no other organization is deleted with it. They come back only with a new invitation.`}
                  confirmLabel="Remove member"
                  buttonClass="ghost"
                  action={async () => {
                    await mutate("user.remove", { userId: member.userId });
                    members.reload();
                  }}
                />
              )}
          </li>
        ))}
      </ul>
      <h2 id="invitations-title">Invitations</h2>
      <ErrorText error={invitations.error} />
      <ul class="services" aria-labelledby="invitations-title">
        {invitations.data?.map((invitation) => (
          <li key={invitation.invitationId}>
            {invitation.email} <span class="badge">{invitation.role}</span>{" "}
            <span class={`badge status-${invitation.status}`}>{invitation.status}</span>{" "}
            <span class="muted">until {new Date(invitation.expiresAt).toLocaleDateString()}</span>{" "}
            {invitation.status === "pending" && (
              <ConfirmButton
                label={`Cancel the invitation of ${invitation.email}`}
                title={`Cancel the invitation of ${invitation.email}?`}
                consequence={`The link sent to ${invitation.email} stops working; inviting them again makes a new one.`}
                confirmLabel="Cancel invitation"
                buttonClass="ghost"
                action={async () => {
                  await mutate("organization.removeInvitation", { invitationId: invitation.invitationId });
                  invitations.reload();
                }}
              />
            )}
          </li>
        ))}
        {invitations.data?.length === 0 && <li class="muted">No invitation yet.</li>}
      </ul>
      <form onSubmit={invite.onSubmit} class="card inline" aria-labelledby="invite-title">
        <h2 id="invite-title">Invite a member</h2>
        <label>
          Email of the new member
          <input type="email" required value={email} onInput={(e) => setEmail(e.currentTarget.value)} />
        </label>
        <label>
          Role
          <select value={role} onChange={(e) => setRole(e.currentTarget.value as "member" | "admin")}>
            <option value="member">member</option>
            {user.role === "owner" && <option value="admin">admin</option>}
          </select>
        </label>
        <button type="submit" disabled={invite.busy}>
          Invite
        </button>
        <ErrorText error={invite.error} />
      </form>
      {invited && (
        <section class="card" aria-labelledby="invited-title">
          <h2 id="invited-title">Invitation for {invited.email}</h2>
          <p>Send this link to {invited.email}; it is shown only now and works for 7 days:</p>
          <p>
            <output class="secret" aria-label="Invitation link">
              {invited.link}
            </output>
          </p>
        </section>
      )}
    </>
  );
}

interface ApiKeySummary {
  id: string;
  name: string;
  start: string;
  createdAt: string;
  expiresAt: string | null;
}

export function ApiKeysPage({ user }: { user: User }) {
  const keys = useLoad(() => query<{ apiKeys: ApiKeySummary[] }>("user.get"), "api-keys");
  const [name, setName] = useState("");
  const [created, setCreated] = useState<{ name: string; key: string }>();
  const create = useSubmit(async () => {
    const answer = await mutate<{ key: string; name: string }>("user.createApiKey", {
      name,
      metadata: { organizationId: user.organizationId },
    });
    setCreated({ name: answer.name, key: answer.key });
    setName("");
    keys.reload();
  });
  const remove = async (apiKeyId: string) => {
    await mutate("user.deleteApiKey", { apiKeyId });
    keys.reload();
  };
  return (
    <>
      <h1>API keys</h1>
      {created && (
        <section class="card" aria-labelledby="new-key-title">
          <h2 id="new-key-title">New key {created.name}</h2>
          <p>Copy it now: it is shown only this once. Send it as the x-api-key header.</p>
          <p>
            <output class="secret" aria-label="New API key">
              {created.key}
            </output>
          </p>
        </section>
      )}
      <ErrorText error={keys.error} />
      <ul class="services" aria-label="API keys">
        {keys.data?.apiKeys.map((key) => (
          <li key={key.id}>
            {key.name} <span class="muted">{key.start}…</span>{" "}
            <span class="muted">created {new Date(key.createdAt).toLocaleDateString()}</span>{" "}
            <button type="button" class="ghost" onClick={() => remove(key.id)}>
              Delete {key.name}
            </button>
          </li>
        ))}
        {keys.data?.apiKeys.length === 0 && <li class="muted">No API key yet.</li>}
      </ul>
      <form onSubmit={create.onSubmit} class="card inline" aria-labelledby="create-key-title">
        <h2 id="create-key-title">Create an API key</h2>
        <label>
          Key name
          <input required value={name} onInput={(e) => setName(e.currentTarget.value)} />
        </label>
        <button type="submit" disabled={create.busy}>
          Create key
        </button>
        <ErrorText error={create.error} />
      </form>
    </>
  );
}

interface WebServerSettings {
  host: string | null;
  https: boolean;
  certificateType: string;
  letsEncryptEmail: string | null;
  serverIp: string | null;
  enableDockerCleanup: boolean;
  traefikImage: string;
  wildcardDomain: string;
  enableDashboard: boolean;
}

function DomainForm({ settings, onSaved }: { settings: WebServerSettings; onSaved: () => void }) {
  const [host, setHost] = useState(settings.host ?? "");
  const [https, setHttps] = useState(settings.https);
  const [email, setEmail] = useState(settings.letsEncryptEmail ?? "");
  const [saved, setSaved] = useState(false);
  const save = useSubmit(async () => {
    setSaved(false);
    await mutate("settings.assignDomainServer", {
      host,
      https,
      certificateType: https ? "letsencrypt" : "none",
      letsEncryptEmail: email || null,
    });
    setSaved(true);
    onSaved();
  });
  return (
    <form onSubmit={save.onSubmit} class="card inline" aria-labelledby="domain-title">
      <h2 id="domain-title">Domain of the control plane</h2>
      <label>
        Control plane domain
        <input
          required
          placeholder="platform.example.com"
          value={host}
          onInput={(e) => setHost(e.currentTarget.value)}
        />
      </label>
      <label class="check">
        <input type="checkbox" checked={https} onChange={(e) => setHttps(e.currentTarget.checked)} /> HTTPS
        (Let's Encrypt)
      </label>
      <label>
        Let's Encrypt email
        <input type="email" value={email} onInput={(e) => setEmail(e.currentTarget.value)} />
      </label>
      <button type="submit" disabled={save.busy}>
        Save domain
      </button>
      <span role="status">{saved ? "Domain saved." : ""}</span>
      <ErrorText error={save.error} />
    </form>
  );
}

function ProxyAndCleanup({ settings, onSaved }: { settings: WebServerSettings; onSaved: () => void }) {
  const [cleanup, setCleanup] = useState(settings.enableDockerCleanup);
  const [message, setMessage] = useState("");
  const saveCleanup = useSubmit(async () => {
    setMessage("");
    await mutate("settings.updateDockerCleanup", { enableDockerCleanup: cleanup });
    setMessage(cleanup ? "Daily cleanup on." : "Daily cleanup off.");
    onSaved();
  });
  const reload = useSubmit(async () => {
    setMessage("");
    await mutate("settings.reloadTraefik", {});
    setMessage("Proxy reloaded.");
  });
  return (
    <section class="card" aria-labelledby="proxy-title">
      <h2 id="proxy-title">Proxy and cleanup</h2>
      <dl class="facts">
        <dt>Proxy image</dt>
        <dd>{settings.traefikImage}</dd>
        <dt>Generated domains</dt>
        <dd>{settings.wildcardDomain}</dd>
        <dt>Server IP</dt>
        <dd>{settings.serverIp ?? "unknown"}</dd>
      </dl>
      <form onSubmit={saveCleanup.onSubmit} class="inline" aria-label="Daily Docker cleanup">
        <label class="check">
          <input type="checkbox" checked={cleanup} onChange={(e) => setCleanup(e.currentTarget.checked)} />{" "}
          Daily Docker cleanup (unused images, stopped containers, build cache)
        </label>
        <button type="submit" disabled={saveCleanup.busy}>
          Save cleanup
        </button>
        <button type="button" class="ghost" disabled={reload.busy} onClick={reload.onSubmit}>
          Reload the proxy
        </button>
        <span role="status">{message}</span>
      </form>
      <ErrorText error={saveCleanup.error ?? reload.error} />
    </section>
  );
}

/**
 * This machine's Traefik: its dashboard (settings.toggleDashboard) and its static configuration,
 * traefik.yml, edited as text (settings.readTraefikConfig / updateTraefikConfig, which refuses
 * YAML Traefik would not start with: its message is shown).
 */
function Traefik({ settings, onSaved }: { settings: WebServerSettings; onSaved: () => void }) {
  const [dashboard, setDashboard] = useState(settings.enableDashboard);
  const [message, setMessage] = useState("");
  const file = useLoad(() => query<string>("settings.readTraefikConfig"), "traefik-config");
  const [text, setText] = useState<string>();
  const [fileMessage, setFileMessage] = useState("");
  const toggle = useSubmit(async () => {
    setMessage("");
    await mutate("settings.toggleDashboard", { enableDashboard: dashboard });
    setMessage(dashboard ? "Traefik dashboard on (port 8080)." : "Traefik dashboard off.");
    // The toggle rewrites traefik.yml: show the file as it is now.
    setText(undefined);
    file.reload();
    onSaved();
  });
  const save = useSubmit(async () => {
    setFileMessage("");
    await mutate("settings.updateTraefikConfig", { traefikConfig: text ?? file.data ?? "" });
    setFileMessage("traefik.yml saved; the proxy restarts with it.");
    setText(undefined);
    file.reload();
  });
  return (
    <section class="card" aria-labelledby="traefik-title">
      <h2 id="traefik-title">Traefik</h2>
      <form onSubmit={toggle.onSubmit} class="inline" aria-label="Traefik dashboard">
        <label class="check">
          <input
            type="checkbox"
            checked={dashboard}
            onChange={(e) => setDashboard(e.currentTarget.checked)}
          />{" "}
          Traefik dashboard (port 8080)
        </label>
        <button type="submit" disabled={toggle.busy}>
          Save Traefik dashboard
        </button>
        <span role="status">{message}</span>
        <ErrorText error={toggle.error} />
      </form>
      <form onSubmit={save.onSubmit} aria-label="Traefik configuration">
        <label>
          traefik.yml (static configuration)
          <textarea
            rows={16}
            spellcheck={false}
            value={text ?? file.data ?? ""}
            onInput={(e) => setText(e.currentTarget.value)}
          />
        </label>
        <div class="row">
          <button type="submit" disabled={save.busy || file.loading}>
            Save traefik.yml
          </button>
          <button
            type="button"
            class="ghost"
            onClick={() => {
              setText(undefined);
              file.reload();
            }}
          >
            Read traefik.yml again
          </button>
          <span role="status">{fileMessage}</span>
        </div>
        <ErrorText error={save.error ?? file.error} />
      </form>
    </section>
  );
}

/** This machine's monitoring: refresh rates, thresholds, where alerts go, which services. */
function MonitoringForm() {
  const current = useLoad(() => query<MetricsToken>("user.getMetricsToken"), "monitoring");
  return current.data ? (
    <MonitoringFields
      title="Monitoring of this machine"
      config={current.data.metricsConfig}
      save={(metricsConfig) => mutate<{ message: string }>("admin.setupMonitoring", { metricsConfig })}
      onSaved={current.reload}
    />
  ) : null;
}

export function SettingsPage() {
  const settings = useLoad(() => query<WebServerSettings>("settings.getWebServerSettings"), "settings");
  const s = settings.data;
  return (
    <>
      <h1>Instance settings</h1>
      <ErrorText error={settings.error} />
      {s && (
        <>
          <p class="muted">
            Now: {s.host ? `${s.https ? "https" : "http"}://${s.host}` : "no domain (reached by its address)"}{" "}
            · daily Docker cleanup {s.enableDockerCleanup ? "on" : "off"}
          </p>
          <DomainForm settings={s} onSaved={settings.reload} />
          <ProxyAndCleanup settings={s} onSaved={settings.reload} />
          <Traefik settings={s} onSaved={settings.reload} />
        </>
      )}
      <MonitoringForm />
    </>
  );
}
