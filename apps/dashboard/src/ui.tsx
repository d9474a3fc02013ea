/** What the pages share: links, loading, forms that submit, errors and status badges. */
import type { ComponentChildren } from "preact";
import { useCallback, useEffect, useId, useRef, useState } from "preact/hooks";

export const href = (...parts: string[]) => `#/${parts.map(encodeURIComponent).join("/")}`;

/** Loads once per key; `reload` asks again. */
export function useLoad<T>(load: () => Promise<T>, key: string) {
  const [state, setState] = useState<{ data?: T; error?: string; loading: boolean }>({ loading: true });
  const [round, setRound] = useState(0);
  useEffect(() => {
    let live = true;
    setState((previous) => ({ ...previous, loading: true }));
    load().then(
      (data) => live && setState({ data, loading: false }),
      (error: Error) => live && setState({ error: error.message, loading: false }),
    );
    return () => {
      live = false;
    };
  }, [key, round]);
  return { ...state, reload: useCallback(() => setRound((n) => n + 1), []) };
}

export function ErrorText({ error }: { error: string | undefined }) {
  return error ? (
    <p class="error" role="alert">
      {error}
    </p>
  ) : null;
}

/** A form whose submit runs `action` and shows its failure. */
export function useSubmit(action: () => Promise<void>) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string>();
  const onSubmit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      await action();
    } catch (failure) {
      setError(failure instanceof Error ? failure.message : String(failure));
    } finally {
      setBusy(false);
    }
  };
  return { busy, error, onSubmit };
}

export function Status({ value }: { value: string | undefined }) {
  return <span class={`badge status-${value ?? "idle"}`}>{value ?? "idle"}</span>;
}

/** `count word` with the word's plural when count is not 1 ("1 service", "2 services"). */
export function plural(count: number, word: string, many = `${word}s`): string {
  return `${count} ${count === 1 ? word : many}`;
}

/**
 * A button that removes or stops something: it opens a dialog saying what will be lost, and
 * `action` runs only when that dialog is confirmed.
 */
export function ConfirmButton({
  label,
  title,
  consequence,
  confirmLabel,
  action,
  danger = true,
  buttonClass,
}: {
  label: string;
  title: string;
  consequence: string;
  confirmLabel: string;
  action: () => Promise<void>;
  danger?: boolean;
  /** The opening button's class when it should not follow `danger` (a quiet button in a list). */
  buttonClass?: string;
}) {
  const dialog = useRef<HTMLDialogElement>(null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string>();
  const id = useId();
  const confirm = async () => {
    setBusy(true);
    setError(undefined);
    try {
      await action();
      dialog.current?.close();
    } catch (failure) {
      setError(failure instanceof Error ? failure.message : String(failure));
    } finally {
      setBusy(false);
    }
  };
  return (
    <>
      <button
        type="button"
        class={buttonClass ?? (danger ? "danger" : "ghost")}
        onClick={() => dialog.current?.showModal()}
      >
        {label}
      </button>
      <dialog ref={dialog} aria-labelledby={`${id}-title`} aria-describedby={`${id}-text`} class="confirm">
        <h2 id={`${id}-title`}>{title}</h2>
        <p id={`${id}-text`}>{consequence}</p>
        <ErrorText error={error} />
        <div class="row">
          <button type="button" class={danger ? "danger" : undefined} disabled={busy} onClick={confirm}>
            {confirmLabel}
          </button>
          <button type="button" class="ghost" onClick={() => dialog.current?.close()}>
            Cancel
          </button>
        </div>
      </dialog>
    </>
  );
}

/** A service page's tabs: links #/<route>/<tab>, the current one marked. */
export function Tabs({
  route,
  tabs,
  current,
}: {
  route: string[];
  tabs: readonly (readonly [slug: string, label: string])[];
  current: string;
}) {
  return (
    <nav aria-label="Service views" class="tabs">
      {tabs.map(([slug, label]) => (
        <a key={slug} href={href(...route, slug)} aria-current={slug === current ? "page" : undefined}>
          {label}
        </a>
      ))}
    </nav>
  );
}

/** A one-line message in a status region ("Saved."), cleared by the caller. */
export function Saved({ text }: { text: string }) {
  return <span role="status">{text}</span>;
}

/**
 * The buttons under a create-or-edit form: submit ("Create <noun>", or "Save <noun>" when
 * editing), the form's own extra buttons (a test), and Cancel when editing.
 */
export function FormButtons({
  noun,
  editing,
  busy,
  onCancel,
  children,
}: {
  noun: string;
  editing: boolean;
  busy: boolean;
  onCancel: () => void;
  children?: ComponentChildren;
}) {
  return (
    <div class="row">
      <button type="submit" disabled={busy}>
        {editing ? `Save ${noun}` : `Create ${noun}`}
      </button>
      {children}
      {editing && (
        <button type="button" class="ghost" onClick={onCancel}>
          Cancel
        </button>
      )}
    </div>
  );
}
