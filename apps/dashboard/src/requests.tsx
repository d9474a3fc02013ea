/**
 * Requests (issue 42): the proxy's access log of this machine or of a server the caller's
 * organization owns. settings.haveActivateRequests says whether it is on, settings.toggleRequests
 * turns it on or off (the API restarts the proxy), and settings.readStatsLogs answers one page of
 * it, newest first, filtered by a phrase (matched against host, path, method, address and user
 * agent) and a status class. This machine's log is the instance administrators' only: the API
 * answers 403 to anyone else, and the page says so as it answers.
 */
import { useState } from "preact/hooks";
import { type Answer, mutate, query } from "./api.ts";
import { ErrorText, plural, useLoad, useSubmit } from "./ui.tsx";

type Server = { serverId: string; name: string };
type StatsLogs = Answer<"settings.readStatsLogs">;

const PAGE_SIZE = 20;
const STATUS_CLASSES = [
  ["", "Any status"],
  ["2xx", "2xx success"],
  ["3xx", "3xx redirect"],
  ["4xx", "4xx client error"],
  ["5xx", "5xx server error"],
] as const;

/** The server picker every instance page of this kind shares: "" is this machine. */
export function ServerPicker({
  id,
  value,
  onChange,
}: {
  id: string;
  value: string;
  onChange: (serverId: string) => void;
}) {
  const servers = useLoad(() => query<Server[]>("server.all").catch(() => [] as Server[]), "picker-servers");
  return (
    <label for={id}>
      Server
      <select id={id} value={value} onChange={(event) => onChange(event.currentTarget.value)}>
        <option value="">This machine</option>
        {servers.data?.map((server) => (
          <option key={server.serverId} value={server.serverId}>
            {server.name}
          </option>
        ))}
      </select>
    </label>
  );
}

/** Nanoseconds (Traefik's Duration) as milliseconds. */
const milliseconds = (nanoseconds: number) => `${(nanoseconds / 1e6).toFixed(1)} ms`;

function RequestTable({ serverId, round }: { serverId: string; round: number }) {
  const [draft, setDraft] = useState("");
  const [search, setSearch] = useState("");
  const [status, setStatus] = useState("");
  const [pageIndex, setPageIndex] = useState(0);
  const input = {
    page: { pageIndex, pageSize: PAGE_SIZE },
    ...(search ? { search } : {}),
    ...(status ? { status } : {}),
    ...(serverId ? { serverId } : {}),
  };
  const logs = useLoad(
    () => mutate<StatsLogs>("settings.readStatsLogs", input),
    `${JSON.stringify(input)}-${round}`,
  );
  const pages = Math.max(1, Math.ceil((logs.data?.totalCount ?? 0) / PAGE_SIZE));
  const filter = (event: Event) => {
    event.preventDefault();
    setPageIndex(0);
    setSearch(draft.trim());
  };
  return (
    <section class="card" aria-labelledby="requests-log">
      <h2 id="requests-log">Access log</h2>
      <form class="row" onSubmit={filter} aria-label="Filter requests">
        <label>
          Host or path contains
          <input type="search" value={draft} onInput={(event) => setDraft(event.currentTarget.value)} />
        </label>
        <label>
          Status
          <select
            value={status}
            onChange={(event) => {
              setPageIndex(0);
              setStatus(event.currentTarget.value);
            }}
          >
            {STATUS_CLASSES.map(([value, label]) => (
              <option key={value} value={value}>
                {label}
              </option>
            ))}
          </select>
        </label>
        <button type="submit" class="ghost">
          Filter
        </button>
        <button type="button" class="ghost" onClick={logs.reload}>
          Refresh
        </button>
      </form>
      <ErrorText error={logs.error} />
      {logs.data && logs.data.totalCount === 0 && (
        <p class="muted">
          {search || status
            ? "No request matches this filter."
            : "No request recorded yet: requests to the applications this proxy serves appear here."}
        </p>
      )}
      {logs.data && logs.data.data.length > 0 && (
        <>
          <div class="table-scroll">
            <table class="list">
              <caption>{plural(logs.data.totalCount, "request")}, newest first</caption>
              <thead>
                <tr>
                  <th scope="col">Time</th>
                  <th scope="col">Method</th>
                  <th scope="col">Host</th>
                  <th scope="col">Path</th>
                  <th scope="col">Status</th>
                  <th scope="col">Duration</th>
                  <th scope="col">Client</th>
                </tr>
              </thead>
              <tbody>
                {logs.data.data.map((row, index) => (
                  <tr key={`${row.timestamp}-${index}`}>
                    <td>{new Date(row.timestamp).toLocaleString()}</td>
                    <td>{row.method}</td>
                    <td class="wrap-anywhere">{row.host}</td>
                    <td class="wrap-anywhere">{row.path}</td>
                    <td>{row.status}</td>
                    <td>{milliseconds(row.duration)}</td>
                    <td class="wrap-anywhere" title={row.userAgent}>
                      {row.ip}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          <nav class="row" aria-label="Request pages">
            <button
              type="button"
              class="ghost"
              disabled={pageIndex === 0}
              onClick={() => setPageIndex(pageIndex - 1)}
            >
              Newer
            </button>
            <span>
              Page {pageIndex + 1} of {pages}
            </span>
            <button
              type="button"
              class="ghost"
              disabled={pageIndex + 1 >= pages}
              onClick={() => setPageIndex(pageIndex + 1)}
            >
              Older
            </button>
          </nav>
        </>
      )}
    </section>
  );
}

export function RequestsPage() {
  const [serverId, setServerId] = useState("");
  const [round, setRound] = useState(0);
  const state = useLoad(
    () =>
      query<Answer<"settings.haveActivateRequests">>(
        "settings.haveActivateRequests",
        serverId ? { serverId } : undefined,
      ),
    `requests-state-${serverId}-${round}`,
  );
  const enabled = state.data?.enabled === true;
  const toggle = useSubmit(async () => {
    await mutate("settings.toggleRequests", { enable: !enabled, ...(serverId ? { serverId } : {}) });
    setRound((n) => n + 1);
  });
  return (
    <div class="instance-page">
      <h1>Requests</h1>
      <p class="muted">The requests the proxy answered: host, path, status and duration of each.</p>
      <div class="card">
        <ServerPicker id="requests-server" value={serverId} onChange={setServerId} />
        <ErrorText error={state.error} />
        {state.data && (
          <form onSubmit={toggle.onSubmit} class="row">
            <p role="status">
              The access log is <strong>{enabled ? "on" : "off"}</strong>
              {enabled && state.data.filePath ? ` (${state.data.filePath} in the proxy's container)` : ""}.
            </p>
            <button type="submit" class={enabled ? "ghost" : undefined} disabled={toggle.busy}>
              {enabled ? "Turn the access log off" : "Turn the access log on"}
            </button>
          </form>
        )}
        {toggle.busy && <p role="status">Restarting the proxy…</p>}
        <ErrorText error={toggle.error} />
      </div>
      {state.data &&
        (enabled ? (
          <RequestTable serverId={serverId} round={round} />
        ) : (
          <section class="card" aria-labelledby="requests-off">
            <h2 id="requests-off">No access log</h2>
            <p>
              The proxy records requests only while its access log is on. Turn it on above: the proxy restarts
              (a second without traffic) and every request it answers from then on is listed here. Turn it off
              again when you are done, as the log grows with the traffic.
            </p>
          </section>
        ))}
    </div>
  );
}
