/**
 * Notifications: the organization's channels of every kind the API has (create<Kind>,
 * update<Kind>, test<Kind>), with the events each one receives, a Test button, edit and delete.
 * Secrets (webhook URLs, tokens, passwords, custom headers) are write-only: the API never
 * answers them (`redacted` names them), so a form leaves them empty and an empty one is kept.
 */
import { useState } from "preact/hooks";
import { mutate, query } from "./api.ts";
import { ConfirmButton } from "./confirm.tsx";
import { ErrorText, FormButtons, useLoad, useSubmit } from "./ui.tsx";

type FieldType = "text" | "url" | "secret" | "number" | "check" | "emails" | "headers";
interface Field {
  key: string;
  label: string;
  type: FieldType;
  required?: boolean;
}

const KINDS: Record<string, { label: string; suffix: string; fields: Field[] }> = {
  slack: {
    label: "Slack",
    suffix: "Slack",
    fields: [
      { key: "webhookUrl", label: "Webhook URL", type: "secret", required: true },
      { key: "channel", label: "Channel", type: "text" },
    ],
  },
  mattermost: {
    label: "Mattermost",
    suffix: "Mattermost",
    fields: [
      { key: "webhookUrl", label: "Webhook URL", type: "secret", required: true },
      { key: "channel", label: "Channel", type: "text" },
      { key: "username", label: "User name", type: "text" },
    ],
  },
  discord: {
    label: "Discord",
    suffix: "Discord",
    fields: [
      { key: "webhookUrl", label: "Webhook URL", type: "secret", required: true },
      { key: "decoration", label: "Decorate messages", type: "check" },
    ],
  },
  telegram: {
    label: "Telegram",
    suffix: "Telegram",
    fields: [
      { key: "botToken", label: "Bot token", type: "secret", required: true },
      { key: "chatId", label: "Chat id", type: "text", required: true },
      { key: "messageThreadId", label: "Message thread id", type: "text" },
    ],
  },
  email: {
    label: "Email (SMTP)",
    suffix: "Email",
    fields: [
      { key: "smtpServer", label: "SMTP server", type: "text", required: true },
      { key: "smtpPort", label: "SMTP port", type: "number", required: true },
      { key: "username", label: "SMTP user name", type: "text", required: true },
      { key: "password", label: "SMTP password", type: "secret", required: true },
      { key: "fromAddress", label: "From address", type: "text", required: true },
      { key: "toAddresses", label: "To addresses (comma-separated)", type: "emails", required: true },
    ],
  },
  resend: {
    label: "Resend",
    suffix: "Resend",
    fields: [
      { key: "apiKey", label: "API key", type: "secret", required: true },
      { key: "fromAddress", label: "From address", type: "text", required: true },
      { key: "toAddresses", label: "To addresses (comma-separated)", type: "emails", required: true },
    ],
  },
  gotify: {
    label: "Gotify",
    suffix: "Gotify",
    fields: [
      { key: "serverUrl", label: "Server URL", type: "url", required: true },
      { key: "appToken", label: "App token", type: "secret", required: true },
      { key: "priority", label: "Priority (0-10)", type: "number" },
      { key: "decoration", label: "Decorate messages", type: "check" },
    ],
  },
  ntfy: {
    label: "ntfy",
    suffix: "Ntfy",
    fields: [
      { key: "serverUrl", label: "Server URL", type: "url", required: true },
      { key: "topic", label: "Topic", type: "text", required: true },
      { key: "accessToken", label: "Access token", type: "secret" },
      { key: "priority", label: "Priority (1-5)", type: "number" },
    ],
  },
  pushover: {
    label: "Pushover",
    suffix: "Pushover",
    fields: [
      { key: "userKey", label: "User key", type: "secret", required: true },
      { key: "apiToken", label: "API token", type: "secret", required: true },
      { key: "priority", label: "Priority (-2 to 2)", type: "number" },
      { key: "retry", label: "Retry every (seconds, priority 2)", type: "number" },
      { key: "expire", label: "Expire after (seconds, priority 2)", type: "number" },
    ],
  },
  lark: {
    label: "Lark",
    suffix: "Lark",
    fields: [{ key: "webhookUrl", label: "Webhook URL", type: "secret", required: true }],
  },
  teams: {
    label: "Microsoft Teams",
    suffix: "Teams",
    fields: [{ key: "webhookUrl", label: "Webhook URL", type: "secret", required: true }],
  },
  custom: {
    label: "Custom webhook",
    suffix: "Custom",
    fields: [
      { key: "endpoint", label: "Endpoint URL", type: "url", required: true },
      { key: "headers", label: "Headers (Name: value, one a line)", type: "headers" },
    ],
  },
};

const EVENTS = [
  ["appDeploy", "Deployment succeeded"],
  ["appBuildError", "Deployment failed"],
  ["databaseBackup", "Database backup"],
  ["volumeBackup", "Volume backup"],
  ["platformRestart", "Platform restarted"],
  ["dockerCleanup", "Docker cleanup"],
  ["serverThreshold", "Server threshold"],
] as const;
type EventKey = (typeof EVENTS)[number][0];

interface Channel extends Record<EventKey, boolean> {
  notificationId: string;
  name: string;
  notificationType: string;
  redacted: string[];
  [config: string]: unknown;
}

/** The form's text of each field, from a stored channel's configuration (secrets stay empty). */
function initialValues(kind: string, channel?: Channel): Record<string, string> {
  const config = (channel?.[kind] ?? {}) as Record<string, unknown>;
  const values: Record<string, string> = {};
  for (const field of KINDS[kind]!.fields) {
    const value = config[field.key];
    if (field.type === "secret" || field.type === "headers" || value === undefined || value === null) {
      values[field.key] = "";
    } else if (Array.isArray(value)) {
      values[field.key] = value.join(", ");
    } else {
      values[field.key] = String(value);
    }
  }
  return values;
}

/** The API's fields of the form's values: empty optional ones and empty stored secrets left out. */
function fieldsOf(kind: string, values: Record<string, string>): Record<string, unknown> {
  const fields: Record<string, unknown> = {};
  for (const field of KINDS[kind]!.fields) {
    const value = values[field.key] ?? "";
    if (field.type === "check") {
      fields[field.key] = value === "true";
      continue;
    }
    if (value.trim() === "") continue;
    if (field.type === "number") fields[field.key] = Number(value);
    else if (field.type === "emails") fields[field.key] = value.split(/[\s,]+/).filter(Boolean);
    else if (field.type === "headers") {
      fields[field.key] = Object.fromEntries(
        value
          .split("\n")
          .map((line) => line.trim())
          .filter(Boolean)
          .map((line) => {
            const colon = line.indexOf(":");
            return colon === -1 ? [line, ""] : [line.slice(0, colon).trim(), line.slice(colon + 1).trim()];
          }),
      );
    } else fields[field.key] = value;
  }
  return fields;
}

/** What a test needs that the form lacks: the stored secrets are never answered. */
function missingForTest(kind: string, values: Record<string, string>): string[] {
  return KINDS[kind]!.fields.filter((f) => f.required && (values[f.key] ?? "").trim() === "").map(
    (f) => f.label,
  );
}

function ChannelForm({ channel, onDone }: { channel?: Channel; onDone: () => void }) {
  const [kind, setKind] = useState(channel?.notificationType ?? "custom");
  const [name, setName] = useState(channel?.name ?? "");
  const [values, setValues] = useState(() => initialValues(kind, channel));
  const [events, setEvents] = useState<Record<EventKey, boolean>>(
    () =>
      Object.fromEntries(EVENTS.map(([key]) => [key, channel ? Boolean(channel[key]) : true])) as Record<
        EventKey,
        boolean
      >,
  );
  const [tested, setTested] = useState("");
  const def = KINDS[kind]!;
  const save = useSubmit(async () => {
    const body = { name, ...events, ...fieldsOf(kind, values) };
    if (channel)
      await mutate(`notification.update${def.suffix}`, { notificationId: channel.notificationId, ...body });
    else await mutate(`notification.create${def.suffix}`, body);
    onDone();
  });
  const test = useSubmit(async () => {
    setTested("");
    const missing = missingForTest(kind, values);
    if (missing.length > 0) {
      throw new Error(
        `Type ${missing.join(", ")} to send a test: stored secrets are never sent back to the page.`,
      );
    }
    await mutate(`notification.test${def.suffix}`, fieldsOf(kind, values));
    setTested("Test notice sent.");
  });
  const titleId = channel ? `edit-channel-${channel.notificationId}` : "new-channel";
  return (
    <form onSubmit={save.onSubmit} class="card inline" aria-labelledby={titleId}>
      <h3 id={titleId}>{channel ? `Edit channel ${channel.name}` : "New channel"}</h3>
      {!channel && (
        <label>
          Kind
          <select
            value={kind}
            onChange={(e) => {
              setKind(e.currentTarget.value);
              setValues(initialValues(e.currentTarget.value));
            }}
          >
            {Object.entries(KINDS).map(([key, k]) => (
              <option key={key} value={key}>
                {k.label}
              </option>
            ))}
          </select>
        </label>
      )}
      <label>
        Channel name
        <input required value={name} onInput={(e) => setName(e.currentTarget.value)} />
      </label>
      {def.fields.map((field) => {
        const stored = channel?.redacted.includes(field.key);
        const label = `${field.label}${stored ? " (stored; leave empty to keep)" : ""}`;
        const onInput = (e: { currentTarget: HTMLInputElement | HTMLTextAreaElement }) =>
          setValues({ ...values, [field.key]: e.currentTarget.value });
        if (field.type === "check") {
          return (
            <label class="check" key={field.key}>
              <input
                type="checkbox"
                checked={values[field.key] === "true"}
                onChange={(e) => setValues({ ...values, [field.key]: String(e.currentTarget.checked) })}
              />{" "}
              {field.label}
            </label>
          );
        }
        if (field.type === "headers") {
          return (
            <label key={field.key}>
              {label}
              <textarea rows={2} spellcheck={false} value={values[field.key]} onInput={onInput} />
            </label>
          );
        }
        if (field.type === "secret") {
          return (
            <label key={field.key}>
              {label}
              <input
                type="password"
                autocomplete="new-password"
                required={field.required && !stored}
                value={values[field.key]}
                onInput={onInput}
              />
            </label>
          );
        }
        return (
          <label key={field.key}>
            {label}
            <input
              type="text"
              inputMode={field.type === "number" ? "numeric" : undefined}
              autocomplete="off"
              required={field.required}
              value={values[field.key]}
              onInput={onInput}
            />
          </label>
        );
      })}
      <fieldset class="checks">
        <legend>Events this channel receives</legend>
        {EVENTS.map(([key, label]) => (
          <label class="check" key={key}>
            <input
              type="checkbox"
              checked={events[key]}
              onChange={(e) => setEvents({ ...events, [key]: e.currentTarget.checked })}
            />{" "}
            {label}
          </label>
        ))}
      </fieldset>
      <FormButtons noun="channel" editing={!!channel} busy={save.busy} onCancel={onDone}>
        <button type="button" class="ghost" disabled={test.busy} onClick={test.onSubmit}>
          Send a test
        </button>
      </FormButtons>
      <p role="status">{tested}</p>
      <ErrorText error={test.error ?? save.error} />
    </form>
  );
}

function ChannelItem({ channel, onChanged }: { channel: Channel; onChanged: () => void }) {
  const [editing, setEditing] = useState(false);
  const [tested, setTested] = useState("");
  const kind = channel.notificationType;
  const def = KINDS[kind];
  const values = initialValues(kind, channel);
  const test = useSubmit(async () => {
    setTested("");
    const missing = missingForTest(kind, values);
    if (missing.length > 0) {
      throw new Error(
        `The stored ${missing.join(", ")} cannot be sent back to the page: use Edit, type it, then Send a test.`,
      );
    }
    await mutate(`notification.test${def?.suffix}`, fieldsOf(kind, values));
    setTested(`Test notice sent through ${channel.name}.`);
  });
  const on = EVENTS.filter(([key]) => channel[key]).map(([, label]) => label);
  if (editing) {
    return (
      <li>
        <ChannelForm
          channel={channel}
          onDone={() => {
            setEditing(false);
            onChanged();
          }}
        />
      </li>
    );
  }
  return (
    <li>
      <strong>{channel.name}</strong> <span class="badge">{def?.label ?? kind}</span>
      <p class="muted">
        {on.length > 0 ? `Receives: ${on.join(", ")}` : "Receives no event: edit it to choose some."}
      </p>
      <div class="row">
        <button type="button" disabled={test.busy} onClick={test.onSubmit}>
          Test {channel.name}
        </button>
        <button type="button" class="ghost" onClick={() => setEditing(true)}>
          Edit {channel.name}
        </button>
        <ConfirmButton
          label={`Delete channel ${channel.name}`}
          lost={`${channel.name} stops receiving notices, and its pending deliveries are dropped.`}
          action={async () => {
            await mutate("notification.remove", { notificationId: channel.notificationId });
            onChanged();
          }}
        />
        <span role="status">{tested}</span>
      </div>
      <ErrorText error={test.error} />
    </li>
  );
}

export function NotificationsPage() {
  const channels = useLoad(() => query<Channel[]>("notification.getAll"), "channels");
  const [adding, setAdding] = useState(false);
  return (
    <div class="instance-page">
      <h1>Notifications</h1>
      <p class="muted">Channels that receive deployments', backups' and servers' events.</p>
      <ErrorText error={channels.error} />
      {channels.data?.length === 0 && (
        <p class="muted">
          No channel yet: add one below (Slack, Discord, email, a custom webhook…) and send it a test.
        </p>
      )}
      <ul class="services" aria-label="Notification channels">
        {channels.data?.map((channel) => (
          <ChannelItem key={channel.notificationId} channel={channel} onChanged={channels.reload} />
        ))}
      </ul>
      {adding || channels.data?.length === 0 ? (
        <ChannelForm
          onDone={() => {
            setAdding(false);
            channels.reload();
          }}
        />
      ) : (
        <button type="button" class="ghost" onClick={() => setAdding(true)}>
          Add a channel
        </button>
      )}
    </div>
  );
}
