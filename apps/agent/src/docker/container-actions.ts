/**
 * Start, stop, kill and remove one container, and the engine's container events, for a caller's
 * scope (agent-protocol ContainerScope). The container is checked first (inspectInScope: another
 * organization's, the platform's own or an unmanaged one without includeUnmanaged is NOT_FOUND,
 * like a missing one) and then acted on by the full id that was checked, never by a name that
 * could by then be another container's.
 */
import type {
  ContainerActionCommand,
  ContainerActionResult,
  ContainerEvent,
  ContainerEventsCommand,
  ContainerScope,
} from "@platform/agent-protocol";
import { isInContainerScope } from "@platform/ownership";
import type Docker from "dockerode";
import { CommandError } from "../command-error.ts";
import { inspectInScope } from "./containers.ts";

/** The HTTP status of an engine error (dockerode sets statusCode). */
function engineStatus(error: unknown): number | undefined {
  return (error as { statusCode?: number } | null)?.statusCode;
}

export async function containerAction(
  docker: Docker,
  command: ContainerActionCommand,
): Promise<ContainerActionResult> {
  const { info } = await inspectInScope(docker, command.containerId, command.scope);
  const container = docker.getContainer(info.Id);
  switch (command.action) {
    case "START":
      // 304: already running, which is what was asked.
      await container.start().catch((error: unknown) => {
        if (engineStatus(error) !== 304) throw error;
      });
      break;
    case "STOP":
      // 304: already stopped.
      await container.stop().catch((error: unknown) => {
        if (engineStatus(error) !== 304) throw error;
      });
      break;
    case "KILL":
      await container.kill().catch((error: unknown) => {
        // 409: the container is not running; nothing was killed.
        if (engineStatus(error) === 409) {
          throw new CommandError("FAILED_PRECONDITION", `container ${info.Id.slice(0, 12)} is not running`);
        }
        throw error;
      });
      // SIGKILL cannot be ignored: wait for the engine to see the container gone.
      await container.wait({ condition: "not-running" });
      break;
    case "REMOVE":
      // Like `docker rm -f`: a running container is killed first; its volumes are kept.
      await container.remove({ force: true });
      return { id: info.Id, state: "removed" };
    default:
      throw new CommandError("INVALID_ARGUMENT", "action: one of START, STOP, KILL, REMOVE is required");
  }
  const after = await container.inspect();
  return { id: after.Id, state: after.State.Status };
}

/** Events answered at most (the newest ones). */
export const MAX_CONTAINER_EVENTS = 1000;
/** The longest window an events command may ask for (one day). */
const MAX_EVENTS_WINDOW_SECONDS = 24 * 60 * 60;

interface EngineEvent {
  Type?: string;
  Action?: string;
  Actor?: { ID?: string; Attributes?: Record<string, string> };
  time?: number;
  timeNano?: number;
}

/**
 * The engine's container events between the command's two times whose container is in scope
 * (the event's attributes carry the container's labels and name), newest first.
 */
export async function containerEvents(
  docker: Docker,
  command: ContainerEventsCommand,
  now = Date.now() / 1000,
): Promise<{ events: ContainerEvent[] }> {
  const scope: ContainerScope | undefined = command.scope;
  if (!scope?.organizationId) throw new CommandError("INVALID_ARGUMENT", "scope: organizationId is required");
  // An `until` in the future would keep the engine's stream open until then; the engine takes
  // fractions of a second, and a whole second would leave out this second's events.
  const until = Math.min(Number(command.untilUnix) || now, now);
  const since = Number(command.sinceUnix);
  if (!(since > 0) || since > until || until - since > MAX_EVENTS_WINDOW_SECONDS) {
    throw new CommandError("INVALID_ARGUMENT", "sinceUnix: a time before untilUnix, at most a day before it");
  }
  // The engine takes the times as strings with fractions of a second (dockerode types them as numbers).
  const stream = (await docker.getEvents({
    since: String(since),
    until: until.toFixed(3),
    filters: { type: ["container"] },
  } as never)) as unknown as AsyncIterable<Buffer>;
  const events: ContainerEvent[] = [];
  let pending = "";
  const take = (line: string) => {
    if (!line.trim()) return;
    let event: EngineEvent;
    try {
      event = JSON.parse(line) as EngineEvent;
    } catch {
      return;
    }
    const attributes = event.Actor?.Attributes ?? {};
    if (!isInContainerScope(attributes, attributes.name ? [attributes.name] : [], scope)) return;
    events.push({
      type: event.Type ?? "",
      action: event.Action ?? "",
      actorId: event.Actor?.ID ?? "",
      attributes,
      time: event.time ?? 0,
      timeNano: event.timeNano ?? 0,
    });
    // Keep the newest ones only: the stream is oldest first.
    if (events.length > MAX_CONTAINER_EVENTS) events.shift();
  };
  for await (const chunk of stream) {
    pending += chunk.toString("utf8");
    const lines = pending.split("\n");
    pending = lines.pop() ?? "";
    for (const line of lines) take(line);
  }
  take(pending);
  return { events: events.reverse() };
}
