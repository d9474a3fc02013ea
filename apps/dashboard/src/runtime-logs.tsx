/**
 * The Logs tab of an application, a compose stack (one container of it, picked from
 * docker.getContainersByAppNameMatch) and a database: the service's runtime log. Live, it follows
 * GET /api/runtime.logs (server-sent `log` events, each one readLogs line; the browser's
 * EventSource reconnects by itself and resumes after the last line through Last-Event-ID; `end`
 * when the service is removed); otherwise it reads `<kind>.readLogs` once. A tail size
 * (100/1000/10000) and a search phrase are sent to the API, whose 400 (the phrase allows letters,
 * digits, spaces and ._-) is shown as it says. Lines are text nodes only, never HTML: a container
 * printing markup shows it as text. The view follows the newest line until the reader scrolls up.
 */
import { useEffect, useRef, useState } from "preact/hooks";
import { type Answer, query } from "./api.ts";
import { ErrorText, useLoad } from "./ui.tsx";

const TAILS = [100, 1000, 10000] as const;
/** Lines arriving live are shown in batches at most this often (a 10,000-line tail is one render). */
const FLUSH_MS = 100;

/** One readLogs line, `<time> <source> | <text>`, as its parts (all of it as text when it is not one). */
function LogLine({ line }: { line: string }) {
  const parts = /^(\S+) (\S+) \| (.*)$/s.exec(line);
  if (!parts) return <div>{line || "\u00a0"}</div>;
  return (
    <div>
      <span class="log-time">{parts[1]}</span> <span class="log-source">{parts[2]}</span>{" "}
      {parts[3] || "\u00a0"}
    </div>
  );
}

/**
 * A service's runtime log. `procedure` is its readLogs (application.readLogs, postgres.readLogs,
 * compose.readLogs…) and `target` the service's id (with containerId for compose), the same
 * parameters GET /api/runtime.logs takes.
 */
export function RuntimeLogs({ procedure, target }: { procedure: string; target: Record<string, string> }) {
  const [tail, setTail] = useState<number>(100);
  const [draft, setDraft] = useState("");
  const [search, setSearch] = useState("");
  const [live, setLive] = useState(true);
  const [round, setRound] = useState(0);
  const [lines, setLines] = useState<string[]>([]);
  const [state, setState] = useState("");
  const [error, setError] = useState<string>();
  const [follow, setFollow] = useState(true);
  const box = useRef<HTMLDivElement>(null);
  const key = JSON.stringify(target);

  /** What readLogs says of these inputs: the lines, or the API's refusal (400, 404) as an error. */
  const read = () =>
    query<string>(procedure, { ...target, tail, since: "all", ...(search ? { search } : {}) });

  useEffect(() => {
    setLines([]);
    setError(undefined);
    setFollow(true);
    let open = true;
    if (!live) {
      setState("Reading…");
      read().then(
        (text) => {
          if (!open) return;
          setLines(text.split("\n").filter((line, index, all) => line !== "" || index < all.length - 1));
          setState("");
        },
        (failure: Error) => {
          if (!open) return;
          setError(failure.message);
          setState("");
        },
      );
      return () => {
        open = false;
      };
    }
    let source: EventSource | undefined;
    let flush: ReturnType<typeof setInterval> | undefined;
    const openStream = () => {
      const parameters = new URLSearchParams({ ...target, tail: String(tail) });
      if (search) parameters.set("search", search);
      const stream = new EventSource(`/api/runtime.logs?${parameters}`);
      source = stream;
      let pending: string[] = [];
      const cap = Math.max(tail, 1000);
      flush = setInterval(() => {
        if (pending.length === 0) return;
        const arrived = pending;
        pending = [];
        setLines((previous) => {
          const next = previous.concat(arrived);
          return next.length > cap ? next.slice(next.length - cap) : next;
        });
      }, FLUSH_MS);
      stream.onopen = () => setState("Following new lines");
      stream.addEventListener("log", (event) => pending.push((event as MessageEvent<string>).data));
      stream.addEventListener("end", (event) => {
        stream.close();
        let reason = "ended";
        try {
          reason = (JSON.parse((event as MessageEvent<string>).data) as { reason?: string }).reason ?? reason;
        } catch {}
        setState(`The log ended: the service was ${reason}`);
      });
      stream.onerror = () => {
        if (stream.readyState === EventSource.CONNECTING) {
          // The browser reconnects by itself, from the last line seen (Last-Event-ID).
          setState("Reconnecting…");
          return;
        }
        // Refused (a 400 or 404 answer): readLogs says why in words.
        setState("Stopped");
        read().then(
          () => open && setError("The live log could not be followed; try again"),
          (failure: Error) => open && setError(failure.message),
        );
      };
    };
    setState("Connecting…");
    if (search) {
      // A phrase the API refuses is a 400 whose words an EventSource cannot read: readLogs is
      // asked first (one line), and its refusal shown.
      query<string>(procedure, { ...target, tail: 1, since: "all", search }).then(
        () => open && openStream(),
        (failure: Error) => {
          if (!open) return;
          setError(failure.message);
          setState("");
        },
      );
    } else openStream();
    return () => {
      open = false;
      clearInterval(flush);
      source?.close();
    };
  }, [procedure, key, tail, search, live, round]);

  useEffect(() => {
    if (follow && box.current) box.current.scrollTop = box.current.scrollHeight;
  }, [lines, follow]);

  return (
    <section class="card log" aria-labelledby="runtime-logs-title">
      <h2 id="runtime-logs-title">Logs</h2>
      <form
        class="log-tools"
        aria-label="Log options"
        onSubmit={(event) => {
          event.preventDefault();
          setSearch(draft.trim());
          setRound((n) => n + 1);
        }}
      >
        <label>
          Lines{" "}
          <select value={String(tail)} onChange={(e) => setTail(Number(e.currentTarget.value))}>
            {TAILS.map((n) => (
              <option key={n} value={String(n)}>
                {n}
              </option>
            ))}
          </select>
        </label>
        <label>
          Search the runtime log{" "}
          <input type="search" value={draft} onInput={(e) => setDraft(e.currentTarget.value)} />
        </label>
        <button type="submit" class="ghost">
          {live ? "Search" : "Search and refresh"}
        </button>
        <label class="check">
          <input type="checkbox" checked={live} onChange={(e) => setLive(e.currentTarget.checked)} /> Live
        </label>
        <span class="log-status" role="status">
          {state}
        </span>
      </form>
      <ErrorText error={error} />
      <div
        class="log-lines"
        ref={box}
        // biome-ignore lint/a11y/noNoninteractiveTabindex: the log scrolls; the keyboard must reach it
        tabIndex={0}
        role="log"
        aria-label="Runtime log lines"
        onScroll={(e) => {
          const element = e.currentTarget;
          setFollow(element.scrollHeight - element.scrollTop - element.clientHeight < 8);
        }}
      >
        {lines.map((line, index) => (
          <LogLine key={index} line={line} />
        ))}
        {lines.length === 0 && !error && <div>No line yet.</div>}
      </div>
      {!follow && (
        <button type="button" class="ghost" onClick={() => setFollow(true)}>
          Follow the newest line
        </button>
      )}
    </section>
  );
}

type Container = Answer<"docker.getContainersByAppNameMatch">[number];

/** A compose stack's Logs tab: a container of the stack (running ones first), then its log. */
export function ComposeLogs(props: {
  composeId: string;
  appName: string;
  composeType: string;
  serverId?: string | null;
}) {
  const containers = useLoad(
    () =>
      query<Container[]>("docker.getContainersByAppNameMatch", {
        appName: props.appName,
        appType: props.composeType === "stack" ? "stack" : "docker-compose",
        ...(props.serverId ? { serverId: props.serverId } : {}),
      }),
    `${props.composeId}-containers`,
  );
  const list = [...(containers.data ?? [])].sort(
    (a, b) => Number(b.state === "running") - Number(a.state === "running"),
  );
  const [picked, pick] = useState<string>();
  const containerId = picked ?? list[0]?.containerId;
  return (
    <>
      <div class="row">
        <label>
          Container{" "}
          <select value={containerId ?? ""} onChange={(e) => pick(e.currentTarget.value)}>
            {list.map((c) => (
              <option key={c.containerId} value={c.containerId}>
                {c.name} ({c.state})
              </option>
            ))}
          </select>
        </label>
        <button type="button" class="ghost" onClick={containers.reload}>
          Refresh the containers
        </button>
      </div>
      <ErrorText error={containers.error} />
      {containers.data && list.length === 0 && (
        <p class="muted">No container of this stack: deploy it first.</p>
      )}
      {containerId && (
        <RuntimeLogs
          key={containerId}
          procedure="compose.readLogs"
          target={{ composeId: props.composeId, containerId }}
        />
      )}
    </>
  );
}
