/**
 * Runtime logs of an owner's workload (readServiceLogs): a Swarm service's output (every task,
 * whichever node runs it; Docker's service log API gathers them) or one container of a compose
 * stack, read through Docker's log API, never a shell. What is read is bounded: Docker is asked
 * for the newest `tail` lines (of each task), no more than MAX_READ_BYTES are read, a line is cut
 * at MAX_LINE_BYTES and the answer holds at most MAX_ANSWER_BYTES of text (the newest lines),
 * so that it fits in one NATS message whatever the workload printed.
 */
import {
  escapeLogText,
  type ReadServiceLogsCommand,
  type ResourceOwner,
  type ServiceLogLine,
  type ServiceLogs,
} from "@platform/agent-protocol";
import { assertValidName } from "@platform/names";
import { isCompleteOwner, isLegacyOwnedBy, isOwnedBy } from "@platform/ownership";
import type Docker from "dockerode";
import { CommandError } from "../command-error.ts";
import { COMPOSE_PROJECT_LABEL, STACK_NAMESPACE_LABEL } from "./containers.ts";

export const MAX_TAIL = 10_000;
const MAX_LINE_BYTES = 8 * 1024;
const MAX_ANSWER_BYTES = 768 * 1024;
const MAX_READ_BYTES = 32 * 1024 * 1024;
const TASK_ID_ATTRIBUTE = "com.docker.swarm.task.id";
const TIMESTAMP = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:\d{2})) ?/;

export interface LogSource {
  /** The Docker API path of the log endpoint. */
  path: string;
  /** False when the workload runs with a TTY: its output is one raw stream, not framed. */
  multiplexed: boolean;
  /** Service logs: the line's details name its task. */
  details: boolean;
  /** The source of a line (its task id when Docker gave one). */
  sourceOf(taskId: string | undefined): string;
  /** True once the service or container is no longer there. */
  gone(): Promise<boolean>;
}

const isGone = (inspect: () => Promise<unknown>) =>
  inspect().then(
    () => false,
    (error) => {
      if ((error as { statusCode?: number }).statusCode === 404) return true;
      throw error;
    },
  );

const notFound = (what: string) => new CommandError("NOT_FOUND", `${what} not found`);

/** The newest lines of the workload the command names, after checking it is the owner's. */
export async function readServiceLogs(docker: Docker, command: ReadServiceLogsCommand): Promise<ServiceLogs> {
  const owner = command.owner;
  if (!isCompleteOwner(owner)) {
    throw new CommandError("INVALID_ARGUMENT", "owner: organizationId and resource are required");
  }
  if (!Number.isInteger(command.tail) || command.tail < 1 || command.tail > MAX_TAIL) {
    throw new CommandError("INVALID_ARGUMENT", `tail must be 1 to ${MAX_TAIL}`);
  }
  const source = command.swarmServiceName
    ? await serviceSource(docker, assertValidName(command.swarmServiceName, "swarmServiceName"), owner)
    : await containerSource(docker, command, owner);
  const stream = await openLogStream(docker, source.path, {
    stdout: true,
    stderr: true,
    timestamps: true,
    details: source.details,
    tail: String(command.tail),
    // 0 is "from the start"; a window reaching before 1970 is that too.
    since: command.sinceSeconds ? Math.max(1, Math.floor(Date.now() / 1000) - command.sinceSeconds) : 0,
  });
  const lines = new LogLines(source, command.search.toLowerCase());
  await lines.read(stream);
  return lines.answer(command.tail);
}

/** A Swarm service of the owner (by its labels): its tasks' output. */
export async function serviceSource(docker: Docker, name: string, owner: ResourceOwner): Promise<LogSource> {
  let service: Docker.Service & { Spec?: { Labels?: Record<string, string> } };
  try {
    service = await docker.getService(name).inspect();
  } catch (error) {
    if ((error as { statusCode?: number }).statusCode === 404) throw notFound(`service ${name}`);
    throw error;
  }
  const labels = service.Spec?.Labels;
  // Another owner's service is answered as a missing one: its existence is not disclosed.
  if (!isOwnedBy(labels, owner) && !isLegacyOwnedBy(labels, owner)) throw notFound(`service ${name}`);
  const tasks = await docker.listTasks({ filters: { service: [service.ID] } });
  const slots = new Map(tasks.map((task) => [task.ID as string, task.Slot as number | undefined]));
  const tty = Boolean(
    (service.Spec as { TaskTemplate?: { ContainerSpec?: { TTY?: boolean } } }).TaskTemplate?.ContainerSpec
      ?.TTY,
  );
  return {
    // By the id that was checked, never by a name that could now be another service's.
    path: `/services/${service.ID}/logs`,
    multiplexed: !tty,
    details: true,
    sourceOf: (taskId) => {
      if (!taskId) return name;
      const slot = slots.get(taskId);
      return `${name}.${slot ?? "?"}.${taskId.slice(0, 12)}`;
    },
    gone: () => isGone(() => docker.getService(service.ID).inspect()),
  };
}

/** A container of the owner's compose stack `stackName` (compose project or stack namespace). */
export async function containerSource(
  docker: Docker,
  command: Pick<ReadServiceLogsCommand, "containerId" | "stackName">,
  owner: ResourceOwner,
): Promise<LogSource> {
  if (!command.containerId || !command.stackName) {
    throw new CommandError(
      "INVALID_ARGUMENT",
      "swarmServiceName, or containerId and stackName, are required",
    );
  }
  const id = assertValidName(command.containerId, "containerId");
  const stack = assertValidName(command.stackName, "stackName");
  let info: Docker.ContainerInspectInfo;
  try {
    info = await docker.getContainer(id).inspect();
  } catch (error) {
    if ((error as { statusCode?: number }).statusCode === 404) throw notFound(`container ${id}`);
    throw error;
  }
  const labels = info.Config?.Labels ?? {};
  const ofStack = labels[COMPOSE_PROJECT_LABEL] === stack || labels[STACK_NAMESPACE_LABEL] === stack;
  if (!ofStack || !isOwnedBy(labels, owner)) throw notFound(`container ${id}`);
  const name = info.Name.replace(/^\//, "");
  return {
    path: `/containers/${info.Id}/logs`,
    multiplexed: !info.Config?.Tty,
    details: false,
    sourceOf: () => name,
    gone: () => isGone(() => docker.getContainer(info.Id).inspect()),
  };
}

export function openLogStream(
  docker: Docker,
  path: string,
  query: Record<string, string | number | boolean>,
): Promise<NodeJS.ReadableStream> {
  return new Promise((resolve, reject) => {
    docker.modem.dial(
      {
        // docker-modem appends `options` as the query string to a path ending with "?".
        path: `${path}?`,
        options: query,
        method: "GET",
        isStream: true,
        statusCodes: {
          200: true,
          404: "no such service or container",
          500: "server error",
          503: "node is not part of a swarm",
        },
      },
      (error, stream) => (error ? reject(error) : resolve(stream as NodeJS.ReadableStream)),
    );
  });
}

interface KeptLine extends ServiceLogLine {
  bytes: number;
}

/**
 * Turns the chunks of a Docker log stream (framed, or raw with a TTY) into lines: time, source
 * (task or container), stream and text (cut at MAX_LINE_BYTES, control characters escaped),
 * handing on those that contain the phrase. Fed chunk by chunk (a followed stream never ends).
 */
export class LogLineReader {
  /** True once a line was cut. */
  truncated = false;
  private pending: Buffer = Buffer.alloc(0);
  private readonly partial = { stdout: "", stderr: "" };
  private readonly decoder = { stdout: new TextDecoder(), stderr: new TextDecoder() };

  constructor(
    private readonly source: LogSource,
    private readonly search: string,
    private readonly emit: (line: ServiceLogLine) => void,
  ) {}

  feed(chunk: Buffer): void {
    if (!this.source.multiplexed) {
      this.text("stdout", this.decoder.stdout.decode(chunk, { stream: true }));
      return;
    }
    let pending = this.pending.length ? Buffer.concat([this.pending, chunk]) : chunk;
    while (pending.length >= 8) {
      const size = pending.readUInt32BE(4);
      if (pending.length < 8 + size) break;
      const name = pending[0] === 2 ? "stderr" : "stdout";
      this.text(name, this.decoder[name].decode(pending.subarray(8, 8 + size), { stream: true }));
      pending = pending.subarray(8 + size);
    }
    this.pending = pending;
  }

  /** The stream ended: its unfinished lines are lines. */
  end(): void {
    for (const name of ["stdout", "stderr"] as const) {
      if (this.partial[name]) this.line(name, this.partial[name]);
      this.partial[name] = "";
    }
  }

  private text(stream: "stdout" | "stderr", text: string): void {
    const parts = (this.partial[stream] + text).split("\n");
    this.partial[stream] = parts.pop() ?? "";
    if (this.partial[stream].length > MAX_LINE_BYTES * 4) {
      // A line without an end yet: keep its start only.
      this.partial[stream] = this.partial[stream].slice(0, MAX_LINE_BYTES * 4);
    }
    for (const part of parts) this.line(stream, part);
  }

  private line(stream: "stdout" | "stderr", raw: string): void {
    let rest = raw.endsWith("\r") ? raw.slice(0, -1) : raw;
    const stamp = TIMESTAMP.exec(rest);
    const time = stamp?.[1] ?? "";
    if (stamp) rest = rest.slice(stamp[0].length);
    let taskId: string | undefined;
    if (this.source.details) {
      // `<key>=<value>,… <text>` (URL-encoded attributes), or ` <text>` without attributes.
      const space = rest.indexOf(" ");
      const attributes = space === -1 ? rest : rest.slice(0, space);
      rest = space === -1 ? "" : rest.slice(space + 1);
      for (const pair of attributes.split(",")) {
        const [key, value] = pair.split("=");
        if (key === TASK_ID_ATTRIBUTE && value) taskId = decodeURIComponent(value);
      }
    }
    if (this.search && !rest.toLowerCase().includes(this.search)) return;
    let text = rest;
    if (Buffer.byteLength(text) > MAX_LINE_BYTES) {
      text = Buffer.from(text)
        .subarray(0, MAX_LINE_BYTES)
        .toString()
        .replace(/\uFFFD$/, "");
      this.truncated = true;
    }
    this.emit({ time, source: this.source.sourceOf(taskId), stream, text: escapeLogText(text) });
  }
}

/** Reads the log stream to its end, keeps the lines with the phrase, and bounds what it holds. */
class LogLines {
  private readonly kept: KeptLine[] = [];
  private keptBytes = 0;
  private truncated = false;
  private readBytes = 0;
  private readonly reader: LogLineReader;

  constructor(source: LogSource, search: string) {
    this.reader = new LogLineReader(source, search, (line) => this.keep(line));
  }

  async read(stream: NodeJS.ReadableStream): Promise<void> {
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      this.readBytes += chunk.length;
      this.reader.feed(chunk);
      if (this.readBytes > MAX_READ_BYTES) {
        this.truncated = true;
        (stream as NodeJS.ReadableStream & { destroy?: () => void }).destroy?.();
        break;
      }
    }
    this.reader.end();
  }

  private keep(line: ServiceLogLine): void {
    const kept = {
      ...line,
      bytes: Buffer.byteLength(line.text) + line.source.length + line.time.length + 16,
    };
    this.kept.push(kept);
    this.keptBytes += kept.bytes;
    // Tasks' lines arrive interleaved: trim (newest kept) only once well over the answer's size.
    if (this.keptBytes > MAX_ANSWER_BYTES * 2) this.trim(Number.MAX_SAFE_INTEGER);
  }

  /** Oldest first; keeps the newest `tail` lines within MAX_ANSWER_BYTES. */
  private trim(tail: number): void {
    this.kept.sort((a, b) => (a.time < b.time ? -1 : a.time > b.time ? 1 : 0));
    let drop = Math.max(0, this.kept.length - tail);
    let bytes = this.kept.slice(drop).reduce((sum, line) => sum + line.bytes, 0);
    while (bytes > MAX_ANSWER_BYTES && drop < this.kept.length) {
      bytes -= this.kept[drop]!.bytes;
      drop++;
      this.truncated = true;
    }
    this.kept.splice(0, drop);
    this.keptBytes = bytes;
  }

  answer(tail: number): ServiceLogs {
    this.trim(tail);
    return {
      lines: this.kept.map(({ time, source, stream, text }) => ({ time, source, stream, text })),
      truncated: this.truncated || this.reader.truncated,
    };
  }
}
