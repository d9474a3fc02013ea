/**
 * The release (.github/workflows/release.yml), which cannot run here: the scripts its steps call
 * run for real (scripts/stamp-install-script.sh writes install.sh with the release's image as its
 * default, scripts/release-checksums.sh the published checksums), and the workflow file parses,
 * triggers on version tags, builds both architectures and calls only scripts that exist, with
 * shell steps bash accepts. deploy/install.sh's own checks of what it is given, which come before
 * it changes anything: no image in the repository's copy, and --from-source/--ref that would
 * reach git as an option or through a shell.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { repoRoot } from "./stack-fixtures.ts";

const INSTALL_SCRIPT = path.join(repoRoot, "deploy/install.sh");
const RELEASE_IMAGE = `ghcr.io/example-owner/platform:v1.2.3@sha256:${"0123456789abcdef".repeat(4)}`;

let work: string;

beforeAll(async () => {
  work = await mkdtemp(path.join(tmpdir(), "platform-release-test-"));
});

afterAll(async () => {
  if (work) await rm(work, { recursive: true, force: true });
});

/** Runs `bash script args`; its exit code and output (never throws). */
function run(script: string, ...args: string[]): { code: number; output: string } {
  const result = spawnSync("bash", [script, ...args], { cwd: repoRoot, encoding: "utf8" });
  return { code: result.status ?? -1, output: `${result.stdout}${result.stderr}` };
}

/** The arguments of an install that would change nothing on this machine if it went ahead. */
function harmless(...args: string[]): string[] {
  return ["--main-directory", path.join(work, "never-made"), "--stack", "release-test", ...args];
}

describe("scripts/stamp-install-script.sh", () => {
  it("writes install.sh with the release's image as its default, changing that one line", async () => {
    const stamped = path.join(work, "install.sh");
    execFileSync("bash", ["scripts/stamp-install-script.sh", RELEASE_IMAGE, stamped], { cwd: repoRoot });
    const original = readFileSync(INSTALL_SCRIPT, "utf8").split("\n");
    const written = (await readFile(stamped, "utf8")).split("\n");
    expect(written).toHaveLength(original.length);
    const changed = written.flatMap((line, index) =>
      line === original[index] ? [] : [[original[index], line]],
    );
    expect(changed).toEqual([["release_image=", `release_image=${RELEASE_IMAGE}`]]);
    expect(readFileSync(stamped).length).toBeGreaterThan(0);
    expect(execFileSync("stat", ["-c", "%a", stamped], { encoding: "utf8" }).trim()).toBe("755");

    // The stamped script goes past the image check with no --image (the next check stops it);
    // the repository's stops there, naming both ways.
    const unstamped = run(INSTALL_SCRIPT, ...harmless("--stack", "Not-Valid"));
    expect(unstamped.code).toBe(1);
    expect(unstamped.output).toMatch(
      /no control plane image: .*--image <control plane image>.*--from-source/s,
    );
    const fromRelease = run(stamped, ...harmless("--stack", "Not-Valid"));
    expect(fromRelease.code).toBe(1);
    expect(fromRelease.output).toMatch(/--stack must be lower-case/);
    expect(fromRelease.output).not.toMatch(/no control plane image/);
    // A release's install.sh builds from source too: its own image is no --image.
    const releaseFromSource = run(stamped, ...harmless("--from-source", repoRoot, "--stack", "Not-Valid"));
    expect(releaseFromSource.output).toMatch(/--stack must be lower-case/);
    expect(existsSync(path.join(work, "never-made"))).toBe(false);
  });

  it("refuses what is not an image reference (it becomes a line of a shell script)", () => {
    for (const image of ["", "ghcr.io/x/y:1; rm -rf /", "$(id)", "ghcr.io/x/y:1\nid", "-x"]) {
      const result = run("scripts/stamp-install-script.sh", image, path.join(work, "refused.sh"));
      expect(result.code, image).toBe(2);
      expect(existsSync(path.join(work, "refused.sh"))).toBe(false);
    }
  });
});

describe("scripts/release-checksums.sh", () => {
  it("writes <file>.sha256 for each file and SHA256SUMS, which sha256sum -c verifies; run again, the same", async () => {
    const directory = path.join(work, "assets");
    execFileSync("mkdir", ["-p", directory]);
    const files = {
      "platform-agent-linux-x64": "an x64 agent",
      "platform-agent-linux-arm64": "an arm64 agent",
      "install.sh": "#!/bin/bash\n",
    };
    for (const [name, contents] of Object.entries(files))
      await writeFile(path.join(directory, name), contents);
    const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");

    execFileSync("bash", ["scripts/release-checksums.sh", directory], { cwd: repoRoot });
    for (const [name, contents] of Object.entries(files)) {
      // sha256sum's format, as the control plane serves GET /agent/<executable>.sha256.
      expect(await readFile(path.join(directory, `${name}.sha256`), "utf8")).toBe(
        `${sha256(contents)}  ${name}\n`,
      );
    }
    const sums = await readFile(path.join(directory, "SHA256SUMS"), "utf8");
    expect(sums.trim().split("\n").sort()).toEqual(
      Object.entries(files)
        .map(([name, contents]) => `${sha256(contents)}  ${name}`)
        .sort(),
    );
    execFileSync("sha256sum", ["-c", "--quiet", "SHA256SUMS"], { cwd: directory });

    // Run again: the checksum files are not checksummed themselves.
    execFileSync("bash", ["scripts/release-checksums.sh", directory], { cwd: repoRoot });
    expect(await readFile(path.join(directory, "SHA256SUMS"), "utf8")).toBe(sums);
    expect((await readdir(directory)).sort()).toEqual(
      [...Object.keys(files), ...Object.keys(files).map((name) => `${name}.sha256`), "SHA256SUMS"].sort(),
    );

    // A file changed after the release no longer verifies.
    await writeFile(path.join(directory, "platform-agent-linux-x64"), "another agent");
    expect(spawnSync("sha256sum", ["-c", "--quiet", "SHA256SUMS"], { cwd: directory }).status).not.toBe(0);
  });
});

describe(".github/workflows/release.yml", () => {
  const text = readFileSync(path.join(repoRoot, ".github/workflows/release.yml"), "utf8");
  const workflow = parse(text);
  const steps = Object.values<any>(workflow.jobs).flatMap((job) => job.steps);
  const runs: string[] = steps.flatMap((step) => (step.run ? [step.run] : []));

  it("runs on version tags and may publish packages and releases", () => {
    expect(workflow.on).toEqual({ push: { tags: ["v*"] } });
    expect(workflow.permissions).toEqual({ contents: "write", packages: "write" });
  });

  it("builds the image on an amd64 and an arm64 runner, after the agent executables", () => {
    const image = workflow.jobs.image;
    expect(image.needs).toEqual(["agents", "builders"]);
    expect(image.strategy.matrix.include.map((entry: any) => entry.platform)).toEqual(["amd64", "arm64"]);
    expect(image["runs-on"]).toMatch(/^\$\{\{ matrix\.runner \}\}$/);
    expect(image.strategy.matrix.include.map((entry: any) => entry.runner)).toEqual([
      "ubuntu-24.04",
      "ubuntu-24.04-arm",
    ]);
    expect(workflow.jobs.release.needs).toEqual(["agents", "image"]);
  });

  it("calls only scripts of the repository that exist, and the release's own scripts", () => {
    const called = [...new Set(runs.flatMap((script) => script.match(/scripts\/[\w.-]+/g) ?? []))].sort();
    expect(called).toEqual([
      "scripts/build-control-plane-image.sh",
      "scripts/release-checksums.sh",
      "scripts/stamp-builder-checksums.sh",
      "scripts/stamp-install-script.sh",
      "scripts/test.sh",
    ]);
    for (const script of called) expect(existsSync(path.join(repoRoot, script)), script).toBe(true);
    expect(runs.join("\n")).toMatch(/PLATFORM_AGENT_ARCHES=x64,arm64 npm run build/);
    expect(runs.join("\n")).toMatch(/build-control-plane-image\.sh .*--agents release\/agents/);
    // The release's files: the stamped install.sh with the agents and their checksums.
    expect(runs.join("\n")).toMatch(
      /stamp-install-script\.sh "\$\(cat release\/control-plane-image\.txt\)" release\/install\.sh/,
    );
    expect(runs.join("\n")).toMatch(/gh release create .* release\/\*/);
  });

  it("has shell steps bash can parse, with the workflow's expressions in place", () => {
    for (const script of runs) {
      const withExpressions = script.replace(/\$\{\{[^}]*\}\}/g, "value");
      const result = spawnSync("bash", ["-n"], { input: withExpressions, encoding: "utf8" });
      expect(result.status, `${script}\n${result.stderr}`).toBe(0);
    }
    for (const step of steps) expect(step.run || step.uses, JSON.stringify(step)).toBeTruthy();
  });
});

describe("the README's Install on a server", () => {
  const readme = readFileSync(path.join(repoRoot, "README.md"), "utf8");
  const section = readme.slice(readme.indexOf("## Install on a server"), readme.indexOf("## Walk-through"));

  it("installs a release's install.sh (what the workflow attaches) or --from-source, with no --image", () => {
    expect(section).toContain(
      "curl -fsSL https://github.com/<owner>/<repository>/releases/download/<version>/install.sh | bash\n",
    );
    expect(section).toMatch(/deploy\/install\.sh \|\n\s+bash -s -- --from-source \S+ \[--ref /);
    for (const option of ["--base-image", "--postgres-image", "--nats-image", "--traefik-image"])
      expect(section).toContain(option);
    const workflow = readFileSync(path.join(repoRoot, ".github/workflows/release.yml"), "utf8");
    expect(workflow).toContain("releases/download/$GITHUB_REF_NAME/install.sh");
  });
});

describe("deploy/install.sh --from-source and --ref", () => {
  it("say in --help what a machine without a registry needs", () => {
    const help = run(INSTALL_SCRIPT, "--help");
    expect(help.code).toBe(0);
    for (const option of [
      "--from-source",
      "--ref",
      "--base-image",
      "--postgres-image",
      "--nats-image",
      "--traefik-image",
    ])
      expect(help.output).toContain(option);
    expect(help.output).toMatch(
      /cannot reach a container registry, --from-source needs a\s+local --base-image/,
    );
  });

  it.each([
    ["--from-source", "--upload-pack=touch /tmp/x", /--from-source takes a git URL/],
    ["--from-source", "-uhttps://example.com/x.git", /--from-source takes a git URL/],
    ["--from-source", "https://example.com/x.git;id", /--from-source takes a git URL/],
    ["--from-source", "https://example.com/$(id).git", /--from-source takes a git URL/],
    ["--from-source", "ext::sh", /--from-source takes a git URL/],
    ["--ref", "--output=/etc/passwd", /--ref takes a commit/],
    ["--ref", "-b", /--ref takes a commit/],
    ["--ref", "main`id`", /--ref takes a commit/],
    ["--ref", "main..other", /--ref takes a commit/],
  ])("refuses %s %j before doing anything", (option, value, message) => {
    const args = option === "--ref" ? ["--from-source", repoRoot, "--ref", value] : [option, value];
    const result = run(INSTALL_SCRIPT, ...harmless(...args));
    expect(result.code, result.output).toBe(1);
    expect(result.output).toMatch(message);
    expect(existsSync(path.join(work, "never-made"))).toBe(false);
  });

  it("refuses --image with --from-source, and --ref or --base-image without it", () => {
    const cases: [string[], RegExp][] = [
      [["--image", "x:1", "--from-source", repoRoot], /exclude each other/],
      [["--image", "x:1", "--ref", "main"], /--ref goes with --from-source/],
      [["--image", "x:1", "--base-image", "debian:bookworm"], /--base-image goes with --from-source/],
    ];
    for (const [args, message] of cases) {
      const result = run(INSTALL_SCRIPT, ...harmless(...args));
      expect(result.code, result.output).toBe(1);
      expect(result.output).toMatch(message);
    }
  });
});
