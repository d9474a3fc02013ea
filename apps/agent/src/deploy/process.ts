/**
 * Child processes of builds (git, docker, nixpacks, ...): argv only (never a shell), output
 * streamed line by line to the job's log, killed with their whole process group on cancel.
 */
import { spawn } from "node:child_process";
import { CommandError } from "../command-error.ts";
import { cancelled } from "./jobs.ts";
import type { LogStream } from "./log-stream.ts";

export interface RunOptions {
  cwd?: string;
  env: NodeJS.ProcessEnv;
  signal: AbortSignal;
  log: LogStream;
  /** Data written to stdin, then closed. */
  input?: string;
  /** Keep stdout instead of logging it (e.g. `git log` output). */
  captureStdout?: boolean;
}

export interface RunResult {
  exitCode: number;
  stdout: string;
  /** The last lines of output, for a short failure reason. */
  tail: string[];
}

const TAIL_LINES = 20;

export function runProcess(command: string, args: string[], options: RunOptions): Promise<RunResult> {
  const { signal, log } = options;
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(cancelled());
    const child = spawn(command, args, {
      cwd: options.cwd,
      env: options.env,
      // Its own process group, so a cancel also stops what it started (git-remote-http, ssh).
      detached: true,
      stdio: ["pipe", "pipe", "pipe"],
      shell: false,
    });
    const tail: string[] = [];
    let stdout = "";
    const logged = log.lineWriter();
    const remember = (data: Buffer) => {
      for (const line of data.toString("utf8").split(/\r?\n|\r/)) {
        if (!line.trim()) continue;
        tail.push(line);
        if (tail.length > TAIL_LINES) tail.shift();
      }
    };
    child.stdout.on("data", (data: Buffer) => {
      if (options.captureStdout) stdout += data.toString("utf8");
      else {
        logged.write(data);
        remember(data);
      }
    });
    child.stderr.on("data", (data: Buffer) => {
      logged.write(data);
      remember(data);
    });
    child.stdin.on("error", () => {});
    child.stdin.end(options.input ?? "");

    const kill = () => {
      try {
        if (child.pid) process.kill(-child.pid, "SIGTERM");
      } catch {
        child.kill("SIGTERM");
      }
      // Anything that ignores SIGTERM goes a few seconds later.
      setTimeout(() => {
        try {
          if (child.pid) process.kill(-child.pid, "SIGKILL");
        } catch {}
      }, 3000).unref();
    };
    signal.addEventListener("abort", kill, { once: true });

    child.on("error", (error) => {
      signal.removeEventListener("abort", kill);
      reject(error);
    });
    child.on("close", (code) => {
      signal.removeEventListener("abort", kill);
      logged.flush();
      if (signal.aborted) return reject(cancelled());
      resolve({ exitCode: code ?? -1, stdout, tail });
    });
  });
}

/**
 * Runs the process like runProcess; when it exits with another code than 0, throws FAILED
 * "<what> failed: <reason>", the reason being the last error line of its output (masked).
 */
export async function runOrFail(
  command: string,
  args: string[],
  options: RunOptions,
  what: string,
): Promise<RunResult> {
  const result = await runProcess(command, args, options);
  if (result.exitCode !== 0) throw processFailure(what, result, options.log);
  return result;
}

/** FAILED "<what> failed: <reason>", the reason being the last error line of the output (masked). */
export function processFailure(what: string, result: RunResult, log: LogStream): CommandError {
  return new CommandError(
    "FAILED",
    `${what} failed: ${log.mask(lastLine(result.tail, `exit code ${result.exitCode}`))}`,
  );
}

export function lastLine(tail: string[], fallback: string): string {
  const line = [...tail].reverse().find((entry) => /error|fatal|failed/i.test(entry)) ?? tail.at(-1);
  return (line ?? fallback).trim().slice(0, 300);
}
