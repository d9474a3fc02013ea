/** What the pages share: links, loading, forms that submit, errors and status badges. */
import { useCallback, useEffect, useState } from "preact/hooks";

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
