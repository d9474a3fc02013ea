/**
 * The builders section of the agent's bootstrap (deploy/agent/install.sh, between "builders
 * (begin)" and "builders (end)"), run on its own with sh: against a local HTTP stand-in of the
 * release host serving a fake nixpacks archive, it installs the builder only when the archive's
 * sha256 is the pinned one, refuses a mismatch leaving nothing behind (no executable, no
 * temporary file), does nothing on a second run, and, where the release host cannot be reached
 * (a closed port, and the real default host, which this machine cannot reach), installs nothing
 * and says what deploys will need. The pinned versions are the ones the agent and
 * server.validate name (PINNED_BUILDERS).
 */
import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { arch, tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort } from "../../apps/agent/src/testing/net.ts";
import { PINNED_BUILDERS } from "../../packages/agent-protocol/src/builders.ts";

const execFileAsync = promisify(execFile);
const repoRoot = path.resolve(import.meta.dirname, "../..");
const installScript = path.join(repoRoot, "deploy/agent/install.sh");
const triple = arch() === "arm64" ? "aarch64-unknown-linux-musl" : "x86_64-unknown-linux-musl";
const version = PINNED_BUILDERS.nixpacks;
const archiveName = `nixpacks-v${version}-${triple}.tar.gz`;
const archivePath = `/railwayapp/nixpacks/releases/download/v${version}/${archiveName}`;

let work: string;
let archive: Buffer;
let archiveSha: string;
let script: string;
let server: Server;
let releaseUrl: string;
const requests: string[] = [];

/** The builders section of install.sh with the few helpers it uses, as a script of its own. */
async function builderSection(): Promise<string> {
  const text = await readFile(installScript, "utf8");
  const begin = text.indexOf("# ---- builders (begin)");
  const end = text.indexOf("# ---- builders (end)");
  expect(begin).toBeGreaterThan(0);
  expect(end).toBeGreaterThan(begin);
  return [
    "set -eu",
    "say() { printf '[platform-install] %s\\n' \"$*\"; }",
    'matches() { printf \'%s\' "$1" | grep -Eq "$2"; }',
    // biome-ignore lint/suspicious/noTemplateCurlyInString: a shell parameter expansion
    "BUILDERS_URL=${PLATFORM_BUILDERS_URL:-https://github.com}",
    "BUILDERS_DIR=$PLATFORM_BUILDERS_DIR",
    text.slice(begin, end),
  ].join("\n");
}

interface Run {
  output: string;
  binDir: string;
  tmpDir: string;
}

/** Runs the section with a fresh install directory and TMPDIR (or the given ones). */
async function runSection(
  env: Record<string, string>,
  dirs?: { binDir: string; tmpDir: string },
): Promise<Run> {
  const binDir = dirs?.binDir ?? (await mkdtemp(path.join(work, "bin-")));
  const tmpDir = dirs?.tmpDir ?? (await mkdtemp(path.join(work, "tmp-")));
  const { stdout, stderr } = await execFileAsync("sh", [script], {
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", TMPDIR: tmpDir, PLATFORM_BUILDERS_DIR: binDir, ...env },
    timeout: 60_000,
  });
  return { output: stdout + stderr, binDir, tmpDir };
}

beforeAll(async () => {
  work = await mkdtemp(path.join(tmpdir(), "platform-builders-"));
  // The fake release: a nixpacks that answers --version like the real one.
  const content = path.join(work, "release");
  await mkdir(content);
  await writeFile(path.join(content, "nixpacks"), `#!/bin/sh\necho "nixpacks ${version}"\n`, { mode: 0o755 });
  await execFileAsync("tar", ["-czf", path.join(work, archiveName), "-C", content, "nixpacks"]);
  archive = await readFile(path.join(work, archiveName));
  archiveSha = createHash("sha256").update(archive).digest("hex");
  script = path.join(work, "builders.sh");
  await writeFile(script, await builderSection());
  server = createServer((request, response) => {
    requests.push(request.url ?? "");
    if (request.url === archivePath) {
      response.writeHead(200, { "content-type": "application/gzip" }).end(archive);
    } else {
      response.writeHead(404).end("not found");
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  releaseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  if (work) await rm(work, { recursive: true, force: true });
});

describe("install.sh installs the pinned builders", () => {
  it("pins the versions the agent and server.validate name", async () => {
    const text = await readFile(installScript, "utf8");
    expect(text).toContain(`NIXPACKS_VERSION=${PINNED_BUILDERS.nixpacks}\n`);
    expect(text).toContain(`RAILPACK_VERSION=${PINNED_BUILDERS.railpack}\n`);
  });

  it("installs nixpacks from the release host when its sha256 is the pinned one, once", async () => {
    requests.length = 0;
    const first = await runSection({
      PLATFORM_BUILDERS_URL: releaseUrl,
      PLATFORM_NIXPACKS_SHA256: archiveSha,
    });
    expect(first.output).toContain(
      `installed nixpacks ${version} at ${first.binDir}/nixpacks (sha256 ${archiveSha} verified)`,
    );
    const { stdout } = await execFileAsync(path.join(first.binDir, "nixpacks"), ["--version"]);
    expect(stdout.trim()).toBe(`nixpacks ${version}`);
    expect(await readdir(first.binDir)).toEqual(["nixpacks"]);
    expect(await readdir(first.tmpDir)).toEqual([]);
    // railpack has no recorded checksum here: it is not even downloaded.
    expect(first.output).toContain(`railpack ${PINNED_BUILDERS.railpack} not installed: no sha256`);
    expect(requests).toEqual([archivePath]);

    const again = await runSection(
      { PLATFORM_BUILDERS_URL: releaseUrl, PLATFORM_NIXPACKS_SHA256: archiveSha },
      { binDir: first.binDir, tmpDir: first.tmpDir },
    );
    expect(again.output).toContain(`nixpacks ${version} is installed`);
    expect(requests).toEqual([archivePath]);
  });

  it("refuses an archive whose sha256 is not the pinned one, leaving nothing behind", async () => {
    const wrong = "0".repeat(64);
    const run = await runSection({ PLATFORM_BUILDERS_URL: releaseUrl, PLATFORM_NIXPACKS_SHA256: wrong });
    expect(run.output).toContain(
      `error: checksum mismatch for ${archiveName}: expected sha256 ${wrong}, downloaded ${archiveSha}; nixpacks was not installed`,
    );
    expect(await readdir(run.binDir)).toEqual([]);
    expect(await readdir(run.tmpDir)).toEqual([]);
  });

  it("installs nothing, and says what deploys will need, where the release host cannot be reached", async () => {
    const closed = `http://127.0.0.1:${await freePort()}`;
    const run = await runSection({ PLATFORM_BUILDERS_URL: closed, PLATFORM_NIXPACKS_SHA256: archiveSha });
    expect(run.output).toContain(
      `nixpacks ${version} not installed: could not download ${closed}${archivePath}`,
    );
    expect(run.output).toContain(
      `deploys of the nixpacks build type fail until it is installed: run the setup again where ${closed} is reachable`,
    );
    expect(await readdir(run.binDir)).toEqual([]);
    expect(await readdir(run.tmpDir)).toEqual([]);
  });

  it("the default release host, which this machine cannot reach, installs nothing either", async () => {
    const run = await runSection({ PLATFORM_NIXPACKS_SHA256: archiveSha });
    expect(run.output).toContain(
      `nixpacks ${version} not installed: could not download https://github.com/railwayapp/nixpacks/releases/download/v${version}/${archiveName}`,
    );
    expect(await readdir(run.binDir)).toEqual([]);
    expect(await readdir(run.tmpDir)).toEqual([]);
  }, 60_000);
});
