/**
 * Running a tool inside a container (Docker's exec API, argv only) with its stdout as a stream
 * that keeps backpressure: Docker multiplexes stdout and stderr on one connection (8-byte frame
 * headers); ExecOutput splits them, pushing stdout on and handing stderr to a line callback.
 */

import type { Readable } from "node:stream";
import { Transform, type TransformCallback } from "node:stream";
import type Docker from "dockerode";

/** Splits Docker's multiplexed exec stream: stdout is pushed, stderr goes to `onStderr`. */
export class ExecOutput extends Transform {
  private pending: Buffer = Buffer.alloc(0);
  bytes = 0;

  constructor(private readonly onStderr: (data: Buffer) => void) {
    super();
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    this.pending = this.pending.length ? Buffer.concat([this.pending, chunk]) : chunk;
    while (this.pending.length >= 8) {
      const size = this.pending.readUInt32BE(4);
      if (this.pending.length < 8 + size) break;
      const payload = this.pending.subarray(8, 8 + size);
      if (this.pending[0] === 2) this.onStderr(payload);
      else {
        this.bytes += payload.length;
        this.push(payload);
      }
      this.pending = this.pending.subarray(8 + size);
    }
    callback();
  }
}

export interface StartedExec {
  /** The tool's stdout. */
  stdout: ExecOutput;
  /** Its stdin when asked for (end it to close the tool's input). */
  stdin?: NodeJS.WritableStream & { destroy(error?: Error): void };
  /** Settles with the exit code once the tool ended (the connection closed). */
  exitCode: Promise<number>;
  /** Closes the connection (the tool sees its pipes close). */
  destroy(): void;
}

export async function startExec(
  docker: Docker,
  containerId: string,
  call: { cmd: string[]; env: string[] },
  options: { stdin?: boolean; onStderr: (data: Buffer) => void },
): Promise<StartedExec> {
  const exec = await docker.getContainer(containerId).exec({
    Cmd: call.cmd,
    Env: call.env,
    AttachStdout: true,
    AttachStderr: true,
    AttachStdin: Boolean(options.stdin),
  });
  const stream = (await exec.start({ hijack: true, stdin: Boolean(options.stdin) })) as unknown as Readable &
    NodeJS.WritableStream & { destroy(error?: Error): void };
  const stdout = new ExecOutput(options.onStderr);
  stream.pipe(stdout);
  const closed = new Promise<void>((resolve) => {
    let done = false;
    const finish = () => {
      if (!done) {
        done = true;
        resolve();
      }
    };
    stream.once("end", finish);
    stream.once("close", finish);
    stream.once("error", finish);
  });
  const exitCode = closed.then(async () => {
    // The connection can close a moment before Docker records the exit.
    for (let attempt = 0; attempt < 50; attempt++) {
      const state = await exec.inspect();
      if (!state.Running) return state.ExitCode ?? -1;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    return -1;
  });
  exitCode.catch(() => {});
  return {
    stdout,
    stdin: options.stdin ? stream : undefined,
    exitCode,
    destroy: () => stream.destroy(),
  };
}

/** Runs a tool to its end; answers its exit code and output (stdout and stderr, capped). */
export async function runExec(
  docker: Docker,
  containerId: string,
  call: { cmd: string[]; env: string[] },
): Promise<{ exitCode: number; stdout: string; stderr: string }> {
  let stderr = "";
  let stdout = "";
  const started = await startExec(docker, containerId, call, {
    onStderr: (data) => {
      if (stderr.length < 65_536) stderr += data.toString("utf8");
    },
  });
  started.stdout.on("data", (data: Buffer) => {
    if (stdout.length < 65_536) stdout += data.toString("utf8");
  });
  return { exitCode: await started.exitCode, stdout, stderr };
}
