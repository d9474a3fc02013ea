/**
 * scripts/stamp-builder-checksums.sh, the release step that writes the builders' sha256 into the
 * agent's bootstrap (deploy/agent/install.sh), run for real against a local stand-in of GitHub on
 * 127.0.0.1 (the internet is not reachable here) serving fake builder archives and the checksums
 * in the formats the upstream projects publish:
 *   railpack  GoReleaser's checksums.txt beside the archives (its .goreleaser.yml `checksum:`),
 *             sha256sum lines for every asset of the release;
 *   nixpacks  no checksum file (the checksum step of its release workflow is commented out): the
 *             REST API's release (GET /repos/railwayapp/nixpacks/releases/tags/v<version>) whose
 *             assets carry GitHub's `digest: "sha256:<hex>"`.
 * The archive layouts are the projects' own: nixpacks' a tar.gz of the lone executable, railpack's
 * GoReleaser archive with README.md and LICENSE beside it. Each run works on a copy of the
 * repository's two files and stamps deploy/agent/install.sh in place, as the release workflow's
 * build does: stamped, only the four checksum lines change and the stamped bootstrap installs both
 * builders from that host with no PLATFORM_<TOOL>_SHA256; an archive that does not match what its
 * project publishes, a checksum missing or unreachable, fails the step and leaves the file as it was.
 */
import { execFile, spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { copyFile, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { arch, tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { freePort } from "../../apps/agent/src/testing/net.ts";
import { PINNED_BUILDERS } from "../../packages/agent-protocol/src/builders.ts";

const execFileAsync = promisify(execFile);
const repoRoot = path.resolve(import.meta.dirname, "../..");
const NIXPACKS = PINNED_BUILDERS.nixpacks;
const RAILPACK = PINNED_BUILDERS.railpack;

/** The linux archives install.sh downloads, by tool and this machine's naming of the architecture. */
const ARCHIVES = {
  nixpacks: {
    x64: `nixpacks-v${NIXPACKS}-x86_64-unknown-linux-musl.tar.gz`,
    arm64: `nixpacks-v${NIXPACKS}-aarch64-unknown-linux-musl.tar.gz`,
  },
  railpack: {
    x64: `railpack-v${RAILPACK}-x86_64-unknown-linux-musl.tar.gz`,
    arm64: `railpack-v${RAILPACK}-arm64-unknown-linux-musl.tar.gz`,
  },
} as const;
type Tool = keyof typeof ARCHIVES;
const VERSIONS: Record<Tool, string> = { nixpacks: NIXPACKS, railpack: RAILPACK };
const VARIABLES = {
  nixpacks: { x64: "NIXPACKS_SHA256_X64", arm64: "NIXPACKS_SHA256_ARM64" },
  railpack: { x64: "RAILPACK_SHA256_X64", arm64: "RAILPACK_SHA256_ARM64" },
} as const;
const hostArch = arch() === "arm64" ? "arm64" : "x64";

const sha256 = (data: Buffer | string) => createHash("sha256").update(data).digest("hex");

let work: string;
let server: Server;
let host: string;
/** Every file the stand-in serves, by URL path; tests change it and beforeEach restores it. */
let served: Map<string, { body: Buffer | string; type: string }>;
let pristine: Map<string, { body: Buffer | string; type: string }>;
const archives = new Map<string, Buffer>();
const requests: string[] = [];

const downloadPath = (tool: Tool, name: string) =>
  `/railwayapp/${tool}/releases/download/v${VERSIONS[tool]}/${name}`;
const apiPath = (tool: Tool) => `/repos/railwayapp/${tool}/releases/tags/v${VERSIONS[tool]}`;

/** A fake builder's archive as its project lays it out, the executable answering --version. */
async function makeArchive(tool: Tool, name: string, marker: string): Promise<Buffer> {
  const content = await mkdtemp(path.join(work, "archive-"));
  const executable =
    tool === "nixpacks"
      ? `#!/bin/sh\necho "nixpacks ${NIXPACKS}"\n`
      : `#!/bin/sh\necho "railpack version ${RAILPACK}"\n`;
  await writeFile(path.join(content, tool), `${executable}# ${marker}\n`, { mode: 0o755 });
  const members: string[] = [tool];
  if (tool === "railpack") {
    await writeFile(path.join(content, "README.md"), "# Railpack\n");
    await writeFile(path.join(content, "LICENSE"), "MIT\n");
    members.push("README.md", "LICENSE");
  }
  const file = path.join(work, name);
  await execFileAsync("tar", ["-czf", file, "-C", content, ...members]);
  return readFile(file);
}

/** GitHub's REST answer for a release: assets with their computed digest. */
function releaseJson(
  tool: Tool,
  assets: Record<string, Buffer>,
  digest = (data: Buffer) => `sha256:${sha256(data)}`,
) {
  const tag = `v${VERSIONS[tool]}`;
  return JSON.stringify({
    url: `${host}/repos/railwayapp/${tool}/releases/1`,
    tag_name: tag,
    name: tag,
    draft: false,
    prerelease: false,
    assets: Object.entries(assets).map(([name, data], index) => ({
      id: index + 1,
      name,
      content_type: "application/gzip",
      state: "uploaded",
      size: data.length,
      digest: digest(data),
      browser_download_url: `${host}${downloadPath(tool, name)}`,
    })),
  });
}

/** GoReleaser's checksums.txt: "<sha256>  <name>" for every artifact, sorted by name. */
const checksumsTxt = (assets: Record<string, Buffer>) =>
  `${Object.entries(assets)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([name, data]) => `${sha256(data)}  ${name}`)
    .join("\n")}\n`;

beforeAll(async () => {
  work = await mkdtemp(path.join(tmpdir(), "platform-builder-checksums-"));
  server = createServer((request, response) => {
    const url = (request.url ?? "").replace(/\?.*/, "");
    requests.push(url);
    const file = served.get(url);
    if (file) response.writeHead(200, { "content-type": file.type }).end(file.body);
    else response.writeHead(404, { "content-type": "application/json" }).end('{"message":"Not Found"}');
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  host = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  // The releases: the linux archives install.sh uses, and others the projects publish beside them.
  pristine = new Map();
  const extras: Record<Tool, string[]> = {
    nixpacks: [
      `nixpacks-v${NIXPACKS}-x86_64-apple-darwin.tar.gz`,
      `nixpacks-v${NIXPACKS}-x86_64-unknown-linux-gnu.tar.gz`,
    ],
    railpack: [
      `railpack-v${RAILPACK}-arm64-apple-darwin.tar.gz`,
      `railpack-v${RAILPACK}-x86_64-apple-darwin.tar.gz`,
    ],
  };
  for (const tool of ["nixpacks", "railpack"] as const) {
    const assets: Record<string, Buffer> = {};
    for (const name of [...Object.values(ARCHIVES[tool]), ...extras[tool]]) {
      assets[name] = await makeArchive(tool, name, name);
      archives.set(name, assets[name]);
      pristine.set(downloadPath(tool, name), { body: assets[name], type: "application/octet-stream" });
    }
    if (tool === "railpack") {
      pristine.set(downloadPath(tool, "checksums.txt"), { body: checksumsTxt(assets), type: "text/plain" });
    }
    pristine.set(apiPath(tool), { body: releaseJson(tool, assets), type: "application/json" });
  }
});

beforeEach(() => {
  served = new Map(pristine);
  requests.length = 0;
});

afterAll(async () => {
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  if (work) await rm(work, { recursive: true, force: true });
});

/** A copy of the repository's two files, as the release's checkout holds them. */
async function checkout(): Promise<string> {
  const root = await mkdtemp(path.join(work, "checkout-"));
  await mkdir(path.join(root, "scripts"));
  await mkdir(path.join(root, "deploy/agent"), { recursive: true });
  await copyFile(
    path.join(repoRoot, "scripts/stamp-builder-checksums.sh"),
    path.join(root, "scripts/stamp-builder-checksums.sh"),
  );
  await copyFile(path.join(repoRoot, "deploy/agent/install.sh"), path.join(root, "deploy/agent/install.sh"));
  return root;
}

/** Runs the release step in a checkout, stamping its deploy/agent/install.sh in place. */
function stamp(root: string, env: Record<string, string> = {}): Promise<{ code: number; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn("bash", ["scripts/stamp-builder-checksums.sh", "deploy/agent/install.sh"], {
      cwd: root,
      env: {
        PATH: process.env.PATH ?? "/usr/bin:/bin",
        TMPDIR: path.join(root, "tmp"),
        PLATFORM_BUILDERS_URL: host,
        PLATFORM_BUILDERS_API_URL: host,
        ...env,
      },
    });
    let output = "";
    child.stdout.on("data", (chunk) => (output += chunk));
    child.stderr.on("data", (chunk) => (output += chunk));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code: code ?? -1, output }));
  });
}

async function stampIn(env: Record<string, string> = {}) {
  const root = await checkout();
  await mkdir(path.join(root, "tmp"));
  const before = await readFile(path.join(root, "deploy/agent/install.sh"), "utf8");
  const result = await stamp(root, env);
  const after = await readFile(path.join(root, "deploy/agent/install.sh"), "utf8");
  return { root, before, after, ...result, tmpLeft: await readdir(path.join(root, "tmp")) };
}

/** The builders section of a bootstrap, run on its own with sh against the stand-in. */
async function runBuilderSection(installScript: string, env: Record<string, string> = {}) {
  const begin = installScript.indexOf("# ---- builders (begin)");
  const end = installScript.indexOf("# ---- builders (end)");
  expect(begin).toBeGreaterThan(0);
  expect(end).toBeGreaterThan(begin);
  const dir = await mkdtemp(path.join(work, "bootstrap-"));
  const script = path.join(dir, "builders.sh");
  await writeFile(
    script,
    [
      "set -eu",
      "say() { printf '[platform-install] %s\\n' \"$*\"; }",
      'matches() { printf \'%s\' "$1" | grep -Eq "$2"; }',
      `BUILDERS_URL=${host}`,
      "BUILDERS_DIR=$PLATFORM_BUILDERS_DIR",
      installScript.slice(begin, end),
    ].join("\n"),
  );
  await mkdir(path.join(dir, "bin"));
  await mkdir(path.join(dir, "tmp"));
  const { stdout, stderr } = await execFileAsync("sh", [script], {
    env: {
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      TMPDIR: path.join(dir, "tmp"),
      PLATFORM_BUILDERS_DIR: path.join(dir, "bin"),
      ...env,
    },
    timeout: 60_000,
  });
  return { output: stdout + stderr, bin: path.join(dir, "bin") };
}

describe("scripts/stamp-builder-checksums.sh", () => {
  it("stamps the four archives' sha256, checked against upstream, changing only those lines; the bootstrap then installs both builders", async () => {
    const run = await stampIn();
    expect(run.output).not.toMatch(/stamp-builder-checksums\.sh:/);
    expect(run.code).toBe(0);
    const before = run.before.split("\n");
    const after = run.after.split("\n");
    expect(after).toHaveLength(before.length);
    const changed = after.flatMap((line, index) => (line === before[index] ? [] : [[before[index], line]]));
    const expected = (["nixpacks", "railpack"] as const).flatMap((tool) =>
      (["x64", "arm64"] as const).map((architecture) => {
        const variable = VARIABLES[tool][architecture];
        const override = `PLATFORM_${tool.toUpperCase()}_SHA256`;
        const hash = sha256(archives.get(ARCHIVES[tool][architecture]) as Buffer);
        return [`${variable}=\${${override}:-}`, `${variable}=\${${override}:-${hash}}`];
      }),
    );
    expect(changed).toEqual(expected);
    for (const name of Object.values(ARCHIVES).flatMap((byArch) => Object.values(byArch))) {
      expect(run.output).toContain(
        `${name}: sha256 ${sha256(archives.get(name) as Buffer)} (verified against upstream)`,
      );
    }
    // Each archive and each upstream checksum was fetched; nothing is left in TMPDIR.
    for (const tool of ["nixpacks", "railpack"] as const)
      for (const name of Object.values(ARCHIVES[tool])) expect(requests).toContain(downloadPath(tool, name));
    expect(requests).toContain(apiPath("nixpacks"));
    expect(requests).toContain(downloadPath("railpack", "checksums.txt"));
    expect(run.tmpLeft).toEqual([]);
    expect(await readdir(path.join(run.root, "deploy/agent"))).toEqual(["install.sh"]);
    expect(
      (
        await execFileAsync("stat", ["-c", "%a", path.join(run.root, "deploy/agent/install.sh")])
      ).stdout.trim(),
    ).toBe("755");
    // Stamped twice is refused: no empty line is left to stamp.
    const again = await stamp(run.root);
    expect(again.code).toBe(1);
    expect(again.output).toMatch(
      /has no single line NIXPACKS_SHA256_X64=\$\{PLATFORM_NIXPACKS_SHA256:-\} to stamp/,
    );
    expect(await readFile(path.join(run.root, "deploy/agent/install.sh"), "utf8")).toBe(run.after);

    // The stamped bootstrap installs this machine's archives of both with no PLATFORM_<TOOL>_SHA256
    // (the repository's installs neither); the variable still wins over the stamped value.
    const stamped = await runBuilderSection(run.after);
    const nixpacksSha = sha256(archives.get(ARCHIVES.nixpacks[hostArch]) as Buffer);
    const railpackSha = sha256(archives.get(ARCHIVES.railpack[hostArch]) as Buffer);
    expect(stamped.output).toContain(
      `installed nixpacks ${NIXPACKS} at ${stamped.bin}/nixpacks (sha256 ${nixpacksSha} verified)`,
    );
    expect(stamped.output).toContain(
      `installed railpack ${RAILPACK} at ${stamped.bin}/railpack (sha256 ${railpackSha} verified)`,
    );
    expect((await readdir(stamped.bin)).sort()).toEqual(["nixpacks", "railpack"]);
    expect((await execFileAsync(path.join(stamped.bin, "railpack"), ["--version"])).stdout.trim()).toBe(
      `railpack version ${RAILPACK}`,
    );
    const repository = await runBuilderSection(run.before);
    expect(repository.output).toContain(`nixpacks ${NIXPACKS} not installed: no sha256`);
    expect(repository.output).toContain(`railpack ${RAILPACK} not installed: no sha256`);
    expect(await readdir(repository.bin)).toEqual([]);
    const overridden = await runBuilderSection(run.after, { PLATFORM_NIXPACKS_SHA256: "f".repeat(64) });
    expect(overridden.output).toContain(
      `checksum mismatch for ${ARCHIVES.nixpacks[hostArch]}: expected sha256 ${"f".repeat(64)}`,
    );
    expect(await readdir(overridden.bin)).toEqual(["railpack"]);
  });

  it("fails, leaving install.sh unstamped, when a railpack archive is not the one its checksums.txt names", async () => {
    const name = ARCHIVES.railpack.arm64;
    const tampered = await makeArchive("railpack", name, "tampered");
    served.set(downloadPath("railpack", name), { body: tampered, type: "application/octet-stream" });
    const run = await stampIn();
    expect(run.code).toBe(1);
    expect(run.output).toContain(
      `checksum mismatch for ${name}: upstream publishes sha256 ${sha256(archives.get(name) as Buffer)}, downloaded ${sha256(tampered)}; nothing was stamped`,
    );
    expect(run.after).toBe(run.before);
    expect(run.tmpLeft).toEqual([]);
    expect(await readdir(path.join(run.root, "deploy/agent"))).toEqual(["install.sh"]);
  });

  it("fails, leaving install.sh unstamped, when a nixpacks archive is not the one GitHub's digest names", async () => {
    const name = ARCHIVES.nixpacks.x64;
    const tampered = await makeArchive("nixpacks", name, "tampered");
    served.set(downloadPath("nixpacks", name), { body: tampered, type: "application/octet-stream" });
    const run = await stampIn();
    expect(run.code).toBe(1);
    expect(run.output).toContain(
      `checksum mismatch for ${name}: upstream publishes sha256 ${sha256(archives.get(name) as Buffer)}, downloaded ${sha256(tampered)}`,
    );
    expect(run.after).toBe(run.before);
    expect(run.tmpLeft).toEqual([]);
  });

  it("fails when upstream publishes no checksum for an archive, or cannot be reached", async () => {
    // A release asset uploaded before GitHub computed digests has `digest: null`.
    const nixpacksAssets = Object.fromEntries(
      Object.values(ARCHIVES.nixpacks).map((name) => [name, archives.get(name) as Buffer]),
    );
    served.set(apiPath("nixpacks"), {
      body: releaseJson("nixpacks", nixpacksAssets, () => null as unknown as string),
      type: "application/json",
    });
    const noDigest = await stampIn();
    expect(noDigest.code).toBe(1);
    expect(noDigest.output).toContain(
      `the release v${NIXPACKS} of railwayapp/nixpacks gives no sha256 digest for its asset ${ARCHIVES.nixpacks.x64}`,
    );
    expect(noDigest.after).toBe(noDigest.before);

    // checksums.txt without the arm64 archive's line.
    served = new Map(pristine);
    const sums = String(pristine.get(downloadPath("railpack", "checksums.txt"))?.body);
    served.set(downloadPath("railpack", "checksums.txt"), {
      body: sums
        .split("\n")
        .filter((line) => !line.endsWith(ARCHIVES.railpack.arm64))
        .join("\n"),
      type: "text/plain",
    });
    const noLine = await stampIn();
    expect(noLine.code).toBe(1);
    expect(noLine.output).toContain(
      `railpack's checksums.txt (v${RAILPACK}) has no single line for ${ARCHIVES.railpack.arm64}`,
    );
    expect(noLine.after).toBe(noLine.before);

    // No checksums.txt at all (a 404).
    served = new Map(pristine);
    served.delete(downloadPath("railpack", "checksums.txt"));
    const noFile = await stampIn();
    expect(noFile.code).toBe(1);
    expect(noFile.output).toContain(`could not download ${host}${downloadPath("railpack", "checksums.txt")}`);
    expect(noFile.after).toBe(noFile.before);

    const closed = `http://127.0.0.1:${await freePort()}`;
    const unreachable = await stampIn({ PLATFORM_BUILDERS_URL: closed, PLATFORM_BUILDERS_API_URL: closed });
    expect(unreachable.code).toBe(1);
    expect(unreachable.output).toContain(
      `could not download ${closed}${downloadPath("nixpacks", ARCHIVES.nixpacks.x64)}`,
    );
    expect(unreachable.after).toBe(unreachable.before);
    expect(unreachable.tmpLeft).toEqual([]);
  });
});

describe("the release workflow stamps the bootstrap its images serve", () => {
  const workflow = parse(readFileSync(path.join(repoRoot, ".github/workflows/release.yml"), "utf8"));

  it("runs the step once, and each image build puts its output in place of deploy/agent/install.sh", () => {
    const builders = workflow.jobs.builders;
    const stampStep = builders.steps.find((step: { run?: string }) =>
      step.run?.includes("stamp-builder-checksums.sh"),
    );
    expect(stampStep.run).toMatch(
      /bash scripts\/stamp-builder-checksums\.sh release\/bootstrap\/install\.sh/,
    );
    // biome-ignore lint/suspicious/noTemplateCurlyInString: a GitHub Actions expression
    expect(stampStep.env.GITHUB_TOKEN).toBe("${{ secrets.GITHUB_TOKEN }}");
    const upload = builders.steps.find((step: { uses?: string }) =>
      step.uses?.startsWith("actions/upload-artifact"),
    );
    expect(upload.with).toMatchObject({
      name: "agent-bootstrap",
      path: "release/bootstrap/install.sh",
      "if-no-files-found": "error",
    });

    const image = workflow.jobs.image;
    expect(image.needs).toEqual(["agents", "builders"]);
    const download = image.steps.find(
      (step: { uses?: string; with?: { name?: string } }) =>
        step.uses?.startsWith("actions/download-artifact") && step.with?.name === "agent-bootstrap",
    );
    expect(download.with.path).toBe("release/bootstrap");
    const build = image.steps.find((step: { run?: string }) =>
      step.run?.includes("build-control-plane-image.sh"),
    );
    const copyAt = build.run.indexOf("cp release/bootstrap/install.sh deploy/agent/install.sh");
    expect(copyAt).toBeGreaterThanOrEqual(0);
    expect(copyAt).toBeLessThan(build.run.indexOf("build-control-plane-image.sh"));
  });
});
