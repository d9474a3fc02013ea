/**
 * Followed runtime logs (FollowServiceLogsCommand): an owner's Swarm service or compose container
 * read through Docker's log API with follow, its lines published as LogChunks (each an encoded
 * ServiceLogs) on agent.<serverId>.logs.<log_stream_id>. Lines are gathered for a few
 * milliseconds (or up to MAX_CHUNK_BYTES) per chunk, so a workload printing as fast as it can
 * costs one NATS message per batch, not per line. A follower lives while the control plane renews
 * its lease (RenewLogFollowCommand); one that is not renewed in time stops by itself, so that an
 * agent never follows for a control plane that went away. At most MAX_FOLLOWERS at once.
 */
import {
  encodeServiceLogs,
  type FollowServiceLogsCommand,
  type LogChunk,
  type LogFollowLease,
  type LogFollowStarted,
  type RenewLogFollowCommand,
  type ServiceLogLine,
} from "@platform/agent-protocol";
import { assertValidName, SERVER_ID_PATTERN } from "@platform/names";
import { isCompleteOwner } from "@platform/ownership";
import type Docker from "dockerode";
import type { Logger } from "pino";
import { CommandError } from "../command-error.ts";
import {
  containerSource,
  LogLineReader,
  type LogSource,
  MAX_TAIL,
  openLogStream,
  serviceSource,
} from "./logs.ts";

export const MAX_FOLLOWERS = 256;
const MAX_CHUNK_BYTES = 256 * 1024;
const BATCH_MS = 20;
const RFC3339 = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(?:\.(\d{1,9}))?(Z|[+-]\d{2}:\d{2})$/;

interface Follower {
  stream: NodeJS.ReadableStream & { destroy?: () => void };
  source: LogSource;
  leaseMs: number;
  lease: NodeJS.Timeout;
  /** Set when the follower was ended on purpose (stop, lease, replaced): no final chunk then. */
  stopped: boolean;
}

/** Docker's `since` (Unix seconds with nanoseconds) of an RFC 3339 time. */
export function dockerSince(time: string): string {
  const match = RFC3339.exec(time);
  const seconds = match ? Date.parse(`${match[1]}${match[3]}`) / 1000 : Number.NaN;
  if (!match || !Number.isFinite(seconds) || seconds < 0) {
    throw new CommandError("INVALID_ARGUMENT", "since_time must be an RFC 3339 time");
  }
  return `${seconds}.${(match[2] ?? "").padEnd(9, "0")}`;
}

export class LogFollowers {
  private readonly followers = new Map<string, Follower>();

  constructor(
    private readonly docker: Docker,
    private readonly publish: (chunk: LogChunk) => void,
    private readonly logger?: Logger,
  ) {}

  get size(): number {
    return this.followers.size;
  }

  async follow(command: FollowServiceLogsCommand): Promise<LogFollowStarted> {
    const owner = command.owner;
    if (!isCompleteOwner(owner)) {
      throw new CommandError("INVALID_ARGUMENT", "owner: organizationId and resource are required");
    }
    const streamId = command.logStreamId;
    if (!SERVER_ID_PATTERN.test(streamId) || streamId.length > 64) {
      throw new CommandError("INVALID_ARGUMENT", "log_stream_id must match ^[a-zA-Z0-9_-]{1,64}$");
    }
    if (!Number.isInteger(command.tail) || command.tail < 0 || command.tail > MAX_TAIL) {
      throw new CommandError("INVALID_ARGUMENT", `tail must be 0 to ${MAX_TAIL}`);
    }
    if (command.leaseSeconds < 5 || command.leaseSeconds > 300) {
      throw new CommandError("INVALID_ARGUMENT", "lease_seconds must be 5 to 300");
    }
    const since = command.sinceTime ? dockerSince(command.sinceTime) : undefined;
    this.stop(streamId);
    if (this.followers.size >= MAX_FOLLOWERS) {
      throw new CommandError("UNAVAILABLE", `this agent already follows ${MAX_FOLLOWERS} logs`);
    }
    const source = command.swarmServiceName
      ? await serviceSource(this.docker, assertValidName(command.swarmServiceName, "swarmServiceName"), owner)
      : await containerSource(this.docker, command, owner);
    const stream = await openLogStream(this.docker, source.path, {
      stdout: true,
      stderr: true,
      timestamps: true,
      details: source.details,
      follow: true,
      tail: since ? "all" : String(command.tail),
      ...(since ? { since } : {}),
    });
    this.stop(streamId);
    const leaseMs = command.leaseSeconds * 1000;
    const follower: Follower = {
      stream,
      source,
      leaseMs,
      stopped: false,
      lease: setTimeout(() => {
        this.logger?.info({ streamId }, "log follower not renewed in time: stopped");
        this.stop(streamId);
      }, leaseMs),
    };
    this.followers.set(streamId, follower);
    this.pump(streamId, follower, command.search.toLowerCase());
    return {};
  }

  renew(command: RenewLogFollowCommand): Promise<LogFollowLease> | LogFollowLease {
    const follower = this.followers.get(command.logStreamId);
    if (!follower) return { following: false };
    if (command.stop) {
      this.stop(command.logStreamId);
      return { following: false };
    }
    follower.lease.refresh();
    // A workload that went: its stream may stay open (Docker keeps a removed service's stream).
    return follower.source.gone().then(
      (gone) => {
        if (!gone) return { following: true };
        follower.stream.destroy?.();
        return { following: false };
      },
      () => ({ following: true }),
    );
  }

  /** Ends a follower without a final chunk (the control plane stopped it or stopped renewing). */
  stop(streamId: string): void {
    const follower = this.followers.get(streamId);
    if (!follower) return;
    this.followers.delete(streamId);
    follower.stopped = true;
    clearTimeout(follower.lease);
    follower.stream.destroy?.();
  }

  stopAll(): void {
    for (const streamId of [...this.followers.keys()]) this.stop(streamId);
  }

  /** Reads the followed stream, publishing batches of lines, and a final chunk when it ends. */
  private pump(streamId: string, follower: Follower, search: string): void {
    let seq = 0;
    let batch: ServiceLogLine[] = [];
    let batchBytes = 0;
    let timer: NodeJS.Timeout | undefined;
    const flush = (final: boolean) => {
      if (timer) clearTimeout(timer);
      timer = undefined;
      if (batch.length === 0 && !final) return;
      const data = encodeServiceLogs({ lines: batch, truncated: false });
      batch = [];
      batchBytes = 0;
      this.publish({ streamId, seq: seq++, data, final });
    };
    const reader = new LogLineReader(follower.source, search, (line) => {
      batch.push(line);
      batchBytes += line.text.length + line.source.length + 48;
      if (batchBytes >= MAX_CHUNK_BYTES) flush(false);
      else timer ??= setTimeout(() => flush(false), BATCH_MS);
    });
    const { stream } = follower;
    stream.on("data", (chunk: Buffer) => {
      if (!follower.stopped) reader.feed(chunk);
    });
    const ended = (error?: Error) => {
      if (error && !follower.stopped) this.logger?.warn({ streamId, err: error }, "log follower failed");
      if (this.followers.get(streamId) === follower) {
        this.followers.delete(streamId);
        clearTimeout(follower.lease);
      }
      if (follower.stopped) {
        if (timer) clearTimeout(timer);
        return;
      }
      follower.stopped = true;
      reader.end();
      flush(true);
    };
    stream.once("end", () => ended());
    stream.once("close", () => ended());
    stream.once("error", (error: Error) => ended(error));
  }
}
