/**
 * The organization's pages: members and invitations (administrators), the caller's API keys
 * (a new key is shown once), and the instance settings (administrators only; the page is not
 * offered to members).
 */
import { useState } from "preact/hooks";
import { mutate, query, type User } from "./api.ts";
import { ErrorText, useLoad, useSubmit } from "./ui.tsx";

interface Invitation {
  invitationId: string;
  email: string;
  role: string;
  token: string;
}

export function MembersPage({ user }: { user: User }) {
  const members = useLoad(() => query<User[]>("user.all"), "members");
  const [email, setEmail] = useState("");
  const [role, setRole] = useState<"member" | "admin">("member");
  const [invited, setInvited] = useState<{ email: string; link: string }>();
  const invite = useSubmit(async () => {
    const invitation = await mutate<Invitation>("organization.inviteMember", { email, role });
    const link = `${location.origin}/#/invite/${encodeURIComponent(invitation.invitationId)}/${encodeURIComponent(invitation.token)}/${encodeURIComponent(invitation.email)}`;
    setInvited({ email: invitation.email, link });
    setEmail("");
  });
  return (
    <>
      <h1>Members</h1>
      <ErrorText error={members.error} />
      <ul class="services" aria-label="Members">
        {members.data?.map((member) => (
          <li key={member.userId}>
            {member.name} <span class="muted">{member.email}</span> <span class="badge">{member.role}</span>
          </li>
        ))}
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
}

export function SettingsPage() {
  const settings = useLoad(() => query<WebServerSettings>("settings.getWebServerSettings"), "settings");
  const s = settings.data;
  return (
    <>
      <h1>Instance settings</h1>
      <ErrorText error={settings.error} />
      {s && (
        <section class="card" aria-labelledby="web-server-title">
          <h2 id="web-server-title">Web server</h2>
          <dl class="facts">
            <dt>Domain of the control plane</dt>
            <dd>{s.host ?? "none (reached by its address)"}</dd>
            <dt>HTTPS</dt>
            <dd>{s.https ? `yes (${s.certificateType})` : "no"}</dd>
            <dt>Let's Encrypt email</dt>
            <dd>{s.letsEncryptEmail ?? "none"}</dd>
            <dt>Server IP</dt>
            <dd>{s.serverIp ?? "unknown"}</dd>
            <dt>Generated domains</dt>
            <dd>{s.wildcardDomain}</dd>
            <dt>Proxy image</dt>
            <dd>{s.traefikImage}</dd>
            <dt>Daily Docker cleanup</dt>
            <dd>{s.enableDockerCleanup ? "on" : "off"}</dd>
          </dl>
          <p class="muted">Change them through the API (settings.*, see API).</p>
        </section>
      )}
    </>
  );
}
