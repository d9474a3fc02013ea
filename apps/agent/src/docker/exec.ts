/**
 * One command run in a container through the Engine's exec API: an argument vector, never a
 * shell, so no value in it is ever parsed as shell syntax.
 */
import { PassThrough } from "node:stream";
import type Docker from "dockerode";
import { CommandError } from "../command-error.ts";

/** How long an exec may run before it is given up on. */
export const EXEC_TIMEOUT_MS = 60_000;

export interface ExecOutcome {
  exitCode: number;
  output: string;
}

/** Runs `cmd` in the container (no shell), its output collected; never throws on a non-zero exit. */
export async function execIn(
  docker: Docker,
  containerId: string,
  cmd: string[],
  options: { env?: string[]; user?: string } = {},
): Promise<ExecOutcome> {
  const exec = await docker.getContainer(containerId).exec({
    Cmd: cmd,
    Env: options.env ?? [],
    ...(options.user !== undefined ? { User: options.user } : {}),
    AttachStdout: true,
    AttachStderr: true,
    AttachStdin: false,
  });
  const stream = await exec.start({ hijack: true, stdin: false });
  const chunks: Buffer[] = [];
  const sink = new PassThrough();
  sink.on("data", (chunk: Buffer) => chunks.push(chunk));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      stream.destroy();
      reject(new CommandError("FAILED", `${cmd[0]} did not finish within ${EXEC_TIMEOUT_MS / 1000} s`));
    }, EXEC_TIMEOUT_MS);
    docker.modem.demuxStream(stream, sink, sink);
    stream.on("end", () => {
      clearTimeout(timer);
      resolve();
    });
    stream.on("error", (error) => {
      clearTimeout(timer);
      reject(error);
    });
  });
  const { ExitCode } = await exec.inspect();
  return { exitCode: ExitCode ?? -1, output: Buffer.concat(chunks).toString("utf8") };
}
