/**
 * What the tests/ha files share: starting a control-plane copy on the file's database with its own
 * instance id and data directory, and waiting for a condition while showing every copy's last
 * lines when it does not come.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import {
  ApiClient,
  type ControlPlaneProcess,
  startControlPlaneProcess,
  tail,
} from "../support/control-plane.ts";

/** An application command that serves /tmp/w over HTTP on 8080 and stops cleanly on TERM. */
export const SERVING_COMMAND = `sh -c 'trap "exit 0" TERM; mkdir -p /tmp/w && echo ok > /tmp/w/index.html && httpd -f -p 8080 -h /tmp/w & wait'`;

/** The copies of one test file and what removes their data directories. */
export interface CopySet {
  /** Names the data directories (`<prefix><name>-…` in the temporary directory). */
  prefix: string;
  copies: ControlPlaneProcess[];
  cleanups: (() => Promise<unknown>)[];
}

/** Starts copy `name` on `database`: PLATFORM_INSTANCE_ID and PLATFORM_DATA_DIR its own, the rest `env`. */
export async function startCopy(
  set: CopySet,
  name: string,
  env: Record<string, string>,
  database: { target: { url: string } },
): Promise<{ copy: ControlPlaneProcess; api: ApiClient }> {
  const dataDir = await mkdtemp(path.join(tmpdir(), `${set.prefix}${name}-`));
  set.cleanups.push(() => rm(dataDir, { recursive: true, force: true }));
  const copy = await startControlPlaneProcess(
    { ...env, PLATFORM_INSTANCE_ID: name, PLATFORM_DATA_DIR: dataDir },
    { database },
  );
  set.copies.push(copy);
  return { copy, api: new ApiClient(copy.url) };
}

/** Thrown by a check of `waitFor` that knows waiting longer is useless. */
export class Stop extends Error {}

/**
 * Resolves once `check` answers true (a check that throws counts as false, but for `Stop`);
 * otherwise fails after `timeoutMs` with the last lines of every copy and of `context`.
 */
export async function waitFor(
  copies: ControlPlaneProcess[],
  what: string,
  check: () => Promise<boolean>,
  { timeoutMs, context = () => "" }: { timeoutMs: number; context?: () => string },
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (
      await check().catch((error: unknown) => {
        if (error instanceof Stop) throw error;
        return false;
      })
    )
      return;
    if (Date.now() > deadline) {
      throw new Error(
        `${what}: not within ${timeoutMs / 1000} s\n${copies.map((c) => tail(c.output, 40)).join("\n---\n")}${context()}`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}
