/**
 * The README's start runs built JavaScript: on a fresh copy of the repository (its files, no
 * node_modules, no dist/) the README's two commands install, build and start the control plane,
 * and no process of the tree `npm start` spawns runs a TypeScript loader or a .ts file (read
 * from /proc/<pid>/cmdline of every descendant). Its database is the embedded PostgreSQL, a
 * server from the copy's own node_modules on a data directory in PLATFORM_DATA_DIR.
 */
import { type ChildProcess, execFile } from "node:child_process";
import { chmod, cp, mkdir, mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { spawnNpmStart } from "../support/npm-start.ts";

const execFileAsync = promisify(execFile);
const root = path.resolve(import.meta.dirname, "../..");

/** Process ids and command lines of every live descendant of `pid`. */
async function descendants(pid: number): Promise<{ pid: number; cmdline: string[] }[]> {
  const parents = new Map<number, number[]>();
  for (const entry of await readdir("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = await readFile(`/proc/${entry}/stat`, "utf8");
      // The command name in parentheses may hold spaces: the fields after it are fixed.
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      parents.set(ppid, [...(parents.get(ppid) ?? []), Number(entry)]);
    } catch {
      // the process ended while listing
    }
  }
  const found: { pid: number; cmdline: string[] }[] = [];
  const queue = [pid];
  while (queue.length > 0) {
    const current = queue.shift() as number;
    try {
      const cmdline = (await readFile(`/proc/${current}/cmdline`, "utf8")).split("\0").filter(Boolean);
      found.push({ pid: current, cmdline });
    } catch {
      continue;
    }
    queue.push(...(parents.get(current) ?? []));
  }
  return found;
}

describe("the README's start on a fresh copy", () => {
  let dir: string;
  let child: ChildProcess | undefined;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), "platform-start-"));
    // Entered by the embedded PostgreSQL's system user (the test runs as root): not 0700.
    await chmod(dir, 0o755);
    const { stdout } = await execFileAsync(
      "git",
      ["ls-files", "-z", "--cached", "--others", "--exclude-standard"],
      {
        cwd: root,
        maxBuffer: 64 * 1024 * 1024,
      },
    );
    for (const file of stdout.split("\0").filter(Boolean)) {
      await mkdir(path.join(dir, "copy", path.dirname(file)), { recursive: true });
      await cp(path.join(root, file), path.join(dir, "copy", file), { errorOnExist: false }).catch(
        (error) => {
          // a file deleted in the working tree but still in the index
          if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
        },
      );
    }
  }, 60_000);
  afterAll(async () => {
    if (child?.pid) process.kill(-child.pid, "SIGKILL");
    // The embedded server outlives a killed control plane (the next start would reuse it).
    const pidFile = path.join(dir, "data", "postgres", "postmaster.pid");
    const postmaster = Number((await readFile(pidFile, "utf8").catch(() => "")).split("\n")[0]);
    if (postmaster) process.kill(postmaster, "SIGKILL");
    await rm(dir, { recursive: true, force: true });
  });

  it("installs, builds and runs dist/ under plain node: no TypeScript loader in the process tree", async () => {
    const readme = await readFile(path.join(root, "README.md"), "utf8");
    const quickStart = readme.slice(readme.indexOf("## Set up and run"));
    const [install, start] = (quickStart.match(/```sh\n([^`]*)```/)?.[1] ?? "").trim().split("\n");
    expect(start).toBe("npm start");
    const copy = path.join(dir, "copy");
    const env: NodeJS.ProcessEnv = { ...process.env };
    for (const name of ["npm_config_user_agent", "DATABASE_URL", "NATS_URL", "NATS_CREDS", "NODE_OPTIONS"]) {
      delete env[name];
    }
    const [command, ...args] = (install ?? "").split(" ");
    await execFileAsync(command as string, args, { cwd: copy, env, timeout: 180_000 });

    const started = await spawnNpmStart(copy, env, path.join(dir, "data"));
    child = started.child;
    const { port } = started;
    const output = await started.listening(90_000);
    expect(output).toContain(`Platform control plane listening on http://127.0.0.1:${port}`);
    const health = await fetch(`http://127.0.0.1:${port}/health`);
    expect(health.status).toBe(200);
    expect(await health.json()).toMatchObject({ checks: { database: { status: "up", kind: "embedded" } } });
    const pidFile = path.join(dir, "data", "postgres", "postmaster.pid");
    const postmaster = Number((await readFile(pidFile, "utf8")).split("\n")[0]);
    const server = (await readFile(`/proc/${postmaster}/cmdline`, "utf8")).split("\0");
    expect(server[0]?.startsWith(`${copy}/node_modules/`)).toBe(true);
    expect(server.slice(1, 3)).toEqual(["-D", path.join(dir, "data", "postgres")]);

    const tree = await descendants(child.pid as number);
    const commands = tree.map((process) => process.cmdline.join(" "));
    expect(commands.some((command) => /\bnode\b.* dist\/control-plane\/main\.js$/.test(command))).toBe(true);
    for (const command of commands) {
      expect(command).not.toMatch(/tsx|ts-node|--loader|--import|--experimental-strip-types|\.ts\b/);
    }
  }, 300_000);
});
