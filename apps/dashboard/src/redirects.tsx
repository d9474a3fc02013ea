/**
 * An application's redirects (Dokploy's Advanced → Redirects): each a regex over the request's
 * URL and its replacement, permanent (301/308) or not (302/307), applied by the application's
 * Traefik file in the order they were added. application.one answers them; redirects.create,
 * .update and .delete change them.
 */
import { useState } from "preact/hooks";
import { mutate } from "./api.ts";
import type { ApplicationSettings } from "./app-settings.tsx";
import { ConfirmButton, ErrorText, Saved, useSubmit } from "./ui.tsx";

type Redirect = ApplicationSettings["redirects"][number];

export function Redirects({ app, onChanged }: { app: ApplicationSettings; onChanged: () => void }) {
  const [editing, setEditing] = useState<string>();
  return (
    <section class="card" aria-labelledby="redirects-title">
      <h2 id="redirects-title">Redirects</h2>
      <p class="muted">
        A request whose URL matches a regex is sent to its replacement (groups as $1, $2…), checked in order
        before it reaches the application; applied at once.
      </p>
      <ul class="services" aria-label="Redirects">
        {app.redirects.map((redirect) => (
          <li key={redirect.redirectId}>
            <code>{redirect.regex}</code> → <code>{redirect.replacement}</code>{" "}
            <span class="muted">{redirect.permanent ? "permanent" : "temporary"}</span>{" "}
            <button
              type="button"
              class="ghost"
              aria-expanded={editing === redirect.redirectId}
              onClick={() => setEditing(editing === redirect.redirectId ? undefined : redirect.redirectId)}
            >
              Edit redirect {redirect.regex}
            </button>
            <ConfirmButton
              label={`Delete redirect ${redirect.regex}`}
              title="Delete this redirect?"
              consequence={`Requests matching ${redirect.regex} will no longer be sent to ${redirect.replacement}; they reach ${app.name} as they are.`}
              confirmLabel="Delete redirect"
              action={async () => {
                await mutate("redirects.delete", { redirectId: redirect.redirectId });
                onChanged();
              }}
            />
            {editing === redirect.redirectId && (
              <RedirectForm
                redirect={redirect}
                onDone={() => {
                  setEditing(undefined);
                  onChanged();
                }}
              />
            )}
          </li>
        ))}
        {app.redirects.length === 0 && <li class="muted">No redirect: add one below.</li>}
      </ul>
      <RedirectForm applicationId={app.applicationId} onDone={onChanged} />
    </section>
  );
}

/** Adds a redirect to `applicationId`, or edits `redirect`. */
function RedirectForm({
  applicationId,
  redirect,
  onDone,
}: {
  applicationId?: string;
  redirect?: Redirect;
  onDone: () => void;
}) {
  const [regex, setRegex] = useState(redirect?.regex ?? "");
  const [replacement, setReplacement] = useState(redirect?.replacement ?? "");
  const [permanent, setPermanent] = useState(redirect?.permanent ?? false);
  const [saved, setSaved] = useState("");
  const save = useSubmit(async () => {
    setSaved("");
    if (redirect) {
      await mutate("redirects.update", { redirectId: redirect.redirectId, regex, replacement, permanent });
    } else {
      await mutate("redirects.create", { applicationId, regex, replacement, permanent });
      setRegex("");
      setReplacement("");
      setPermanent(false);
      setSaved("Redirect added.");
    }
    onDone();
  });
  const what = redirect ? `Edit redirect ${redirect.regex}` : "Add a redirect";
  return (
    <form onSubmit={save.onSubmit} class="inline" aria-label={what}>
      <label class="wide">
        Regex
        <input
          required
          spellcheck={false}
          placeholder="^https?://www\.example\.com/(.*)"
          value={regex}
          onInput={(e) => setRegex(e.currentTarget.value)}
        />
      </label>
      <label class="wide">
        Replacement
        <input
          required
          spellcheck={false}
          placeholder="https://example.com/$1"
          value={replacement}
          onInput={(e) => setReplacement(e.currentTarget.value)}
        />
      </label>
      <label class="check">
        <input type="checkbox" checked={permanent} onChange={(e) => setPermanent(e.currentTarget.checked)} />{" "}
        Permanent
      </label>
      <button type="submit" disabled={save.busy}>
        {redirect ? "Save redirect" : "Add redirect"}
      </button>
      <Saved text={saved} />
      <ErrorText error={save.error} />
    </form>
  );
}
