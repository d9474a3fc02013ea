/**
 * Container registries of the organization (registry.*): the list, a new one tested before it
 * is saved (registry.testRegistry logs in through a server's Docker Engine and stores nothing),
 * edit (an empty password keeps the stored one, which is never shown), a login test of a stored
 * one (registry.testRegistryById) and delete after a dialog naming the applications' loss.
 * Members read; administrators write and test.
 */
import { useState } from "preact/hooks";
import { type Answer, mutate, query, type User } from "./api.ts";
import { ConfirmButton, ErrorText, useLoad, useSubmit } from "./ui.tsx";

type Registry = Answer<"registry.all">[number];
type ServerChoice = Answer<"server.all">[number];

/** Where a login test runs: this machine (empty) or one of the organization's servers. */
function ServerPicker({
  value,
  onChange,
  servers,
  label,
}: {
  value: string;
  onChange: (value: string) => void;
  servers: ServerChoice[] | undefined;
  label: string;
}) {
  return (
    <label>
      {label}
      <select value={value} onChange={(e) => onChange(e.currentTarget.value)}>
        <option value="">this machine</option>
        {servers?.map((server) => (
          <option key={server.serverId} value={server.serverId}>
            {server.name}
          </option>
        ))}
      </select>
    </label>
  );
}

interface Fields {
  registryName: string;
  registryUrl: string;
  username: string;
  password: string;
  imagePrefix: string;
}

/** The form of a new registry (`registry` absent) or of a stored one. */
function RegistryForm({
  registry,
  servers,
  onSaved,
}: {
  registry?: Registry;
  servers: ServerChoice[] | undefined;
  onSaved: () => void;
}) {
  const empty: Fields = { registryName: "", registryUrl: "", username: "", password: "", imagePrefix: "" };
  const [fields, setFields] = useState<Fields>(
    registry
      ? {
          registryName: registry.registryName,
          registryUrl: registry.registryUrl,
          username: registry.username,
          password: "",
          imagePrefix: registry.imagePrefix ?? "",
        }
      : empty,
  );
  const [serverId, setServerId] = useState("");
  const [message, setMessage] = useState("");
  const set = (key: keyof Fields) => (e: { currentTarget: HTMLInputElement }) =>
    setFields({ ...fields, [key]: e.currentTarget.value });
  const what = registry ? registry.registryName : "the new registry";
  const test = useSubmit(async () => {
    setMessage("");
    await mutate("registry.testRegistry", {
      registryName: fields.registryName || undefined,
      registryUrl: fields.registryUrl,
      username: fields.username,
      password: fields.password,
      ...(serverId ? { serverId } : {}),
    });
    setMessage(`Logged in to ${fields.registryUrl}.`);
  });
  const save = useSubmit(async () => {
    setMessage("");
    const common = {
      registryName: fields.registryName,
      registryUrl: fields.registryUrl,
      username: fields.username,
      imagePrefix: fields.imagePrefix || null,
    };
    if (registry) {
      await mutate("registry.update", {
        registryId: registry.registryId,
        ...common,
        ...(fields.password ? { password: fields.password } : {}),
      });
      setMessage(`${fields.registryName} saved.`);
    } else {
      await mutate("registry.create", { ...common, password: fields.password, registryType: "cloud" });
      setFields(empty);
      setMessage(`${common.registryName} added.`);
    }
    onSaved();
  });
  const title = registry ? `Edit ${registry.registryName}` : "Add a registry";
  const id = registry ? `registry-form-${registry.registryId}` : "registry-form-new";
  return (
    <form onSubmit={save.onSubmit} class={registry ? "inline" : "card inline"} aria-labelledby={id}>
      {registry ? <h4 id={id}>{title}</h4> : <h2 id={id}>{title}</h2>}
      <label>
        Registry name
        <input required value={fields.registryName} onInput={set("registryName")} />
      </label>
      <label>
        Registry URL
        <input
          required
          placeholder="registry.example.com"
          value={fields.registryUrl}
          onInput={set("registryUrl")}
        />
      </label>
      <label>
        Registry user
        <input required autocomplete="off" value={fields.username} onInput={set("username")} />
      </label>
      <label>
        {registry ? "New password (empty: keep the stored one)" : "Registry password"}
        <input
          type="password"
          autocomplete="new-password"
          required={!registry}
          value={fields.password}
          onInput={set("password")}
        />
      </label>
      <label>
        Image prefix (optional)
        <input value={fields.imagePrefix} onInput={set("imagePrefix")} />
      </label>
      <ServerPicker value={serverId} onChange={setServerId} servers={servers} label="Test the login from" />
      <button
        type="button"
        class="ghost"
        disabled={test.busy || !fields.password}
        title={fields.password ? undefined : "A login test needs the password"}
        onClick={test.onSubmit}
      >
        Test login to {what}
      </button>
      <button type="submit" disabled={save.busy}>
        {registry ? `Save ${registry.registryName}` : "Add registry"}
      </button>
      <span role="status">{message}</span>
      <ErrorText error={test.error ?? save.error} />
    </form>
  );
}

function RegistryItem({
  registry,
  administers,
  servers,
  onChanged,
}: {
  registry: Registry;
  administers: boolean;
  servers: ServerChoice[] | undefined;
  onChanged: () => void;
}) {
  const [serverId, setServerId] = useState("");
  const [message, setMessage] = useState("");
  const test = useSubmit(async () => {
    setMessage("");
    await mutate("registry.testRegistryById", {
      registryId: registry.registryId,
      ...(serverId ? { serverId } : {}),
    });
    setMessage(`Logged in to ${registry.registryUrl}.`);
  });
  const titleId = `registry-${registry.registryId}`;
  return (
    <li class="card" aria-labelledby={titleId}>
      <h3 id={titleId}>
        {registry.registryName} <span class="muted">{registry.registryUrl}</span>
      </h3>
      <p class="muted">
        User {registry.username}
        {registry.imagePrefix ? `, images under ${registry.imagePrefix}` : ""}
      </p>
      {administers && (
        <>
          <div class="row">
            <ServerPicker
              value={serverId}
              onChange={setServerId}
              servers={servers}
              label={`Test ${registry.registryName} from`}
            />
            <button type="button" class="ghost" disabled={test.busy} onClick={test.onSubmit}>
              Test {registry.registryName}
            </button>
            <ConfirmButton
              label={`Delete ${registry.registryName}`}
              title={`Delete ${registry.registryName}?`}
              consequence={`Its stored login to ${registry.registryUrl} is deleted. Applications that pull from it, build into it or keep rollback images in it lose the reference and use none until another registry is chosen.`}
              confirmLabel="Delete registry"
              action={async () => {
                await mutate("registry.remove", { registryId: registry.registryId });
                onChanged();
              }}
            />
            <span role="status">{message}</span>
          </div>
          <ErrorText error={test.error} />
          <details>
            <summary>Edit {registry.registryName}</summary>
            <RegistryForm registry={registry} servers={servers} onSaved={onChanged} />
          </details>
        </>
      )}
    </li>
  );
}

export function RegistriesPage({ user }: { user: User | undefined }) {
  const registries = useLoad(() => query<Registry[]>("registry.all"), "registries");
  const servers = useLoad(() => query<ServerChoice[]>("server.all"), "registry-servers");
  const administers = user !== undefined && user.role !== "member";
  return (
    <>
      <h1>Registries</h1>
      <ErrorText error={registries.error} />
      <ul class="server-list" aria-label="Registries">
        {registries.data?.map((registry) => (
          <RegistryItem
            key={registry.registryId}
            registry={registry}
            administers={administers}
            servers={servers.data}
            onChanged={registries.reload}
          />
        ))}
        {registries.data?.length === 0 && <li class="muted">No registry yet.</li>}
      </ul>
      {administers && <RegistryForm servers={servers.data} onSaved={registries.reload} />}
    </>
  );
}
