/**
 * A deployment's live log: the API's SSE stream (GET /api/deployment.logs, events `log` and
 * `end`), followed until the deployment ends. Lines are coloured by what they say (errors,
 * warnings, steps), searchable, and the view follows the newest line unless the reader scrolls
 * up or turns following off. A failed deployment's cause is shown above the log.
 */
import { useEffect, useRef, useState } from "preact/hooks";

export interface LogEnd {
  status: string;
  errorMessage: string | null;
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: ANSI escape sequences are removed
const ANSI = /\u001b\[[0-9;]*[A-Za-z]/g;

function lineClass(line: string): string {
  if (/\b(error|failed|fatal|denied|panic)\b/i.test(line)) return "log-error";
  if (/\bwarn(ing)?\b/i.test(line)) return "log-warn";
  if (/^(step|#\d+|==>|-->)|\b(done|success(fully)?|started|pulled)\b/i.test(line)) return "log-step";
  return "";
}

export function LiveLog({ deploymentId, onEnd }: { deploymentId: string; onEnd?: (end: LogEnd) => void }) {
  const [lines, setLines] = useState<string[]>([]);
  const [end, setEnd] = useState<LogEnd | null>(null);
  const [search, setSearch] = useState("");
  const [follow, setFollow] = useState(true);
  const box = useRef<HTMLDivElement>(null);
  const endRef = useRef(onEnd);
  endRef.current = onEnd;

  useEffect(() => {
    setLines([]);
    setEnd(null);
    const source = new EventSource(`/api/deployment.logs?deploymentId=${encodeURIComponent(deploymentId)}`);
    source.addEventListener("log", (event) => {
      const line = (event as MessageEvent<string>).data.replace(ANSI, "");
      setLines((previous) => [...previous, line]);
    });
    source.addEventListener("end", (event) => {
      const ended = JSON.parse((event as MessageEvent<string>).data) as LogEnd;
      setEnd(ended);
      source.close();
      endRef.current?.(ended);
    });
    // The stream ends after `end`. A broken connection is made again by the browser, which sends
    // Last-Event-ID: any control plane resumes after the last line shown. A refused one leaves
    // what was read on the page.
    source.onerror = () => {
      if (source.readyState === EventSource.CONNECTING) return;
      source.close();
      setEnd((previous) => previous ?? { status: "unknown", errorMessage: "The log stream was interrupted" });
    };
    return () => source.close();
  }, [deploymentId]);

  useEffect(() => {
    if (follow && box.current) box.current.scrollTop = box.current.scrollHeight;
  }, [lines, follow]);

  const needle = search.trim().toLowerCase();
  const shown = needle ? lines.filter((line) => line.toLowerCase().includes(needle)) : lines;
  const failed = end && end.status !== "done";

  return (
    <section class="log" aria-label="Deployment log">
      {failed && (
        <div class="alert" role="alert">
          <strong>Deployment {end.status === "cancelled" ? "cancelled" : "failed"}:</strong>{" "}
          {end.errorMessage ?? "see the log below"}
        </div>
      )}
      <div class="log-tools">
        <label>
          Search the log{" "}
          <input type="search" value={search} onInput={(e) => setSearch(e.currentTarget.value)} />
        </label>
        <label class="check">
          <input type="checkbox" checked={follow} onChange={(e) => setFollow(e.currentTarget.checked)} />{" "}
          Follow new lines
        </label>
        <span class="log-status" aria-live="polite" data-status={end?.status ?? "running"}>
          {end ? `Finished: ${end.status}` : "Running…"}
        </span>
      </div>
      <div
        class="log-lines"
        ref={box}
        // biome-ignore lint/a11y/noNoninteractiveTabindex: the log scrolls; the keyboard must reach it
        tabIndex={0}
        role="log"
        aria-label="Log lines"
        onWheel={(e) => {
          if (e.deltaY < 0) setFollow(false);
        }}
      >
        {shown.map((line, index) => (
          <div key={index} class={lineClass(line)}>
            {line || "\u00a0"}
          </div>
        ))}
      </div>
      {needle && (
        <p class="muted">
          {shown.length} of {lines.length} lines match
        </p>
      )}
    </section>
  );
}
