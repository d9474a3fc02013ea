/**
 * The agent's side of patch.*: paths checked again, and applied inside a real directory with fs
 * calls only. A symlink in the clone never leads a write or a delete outside it: a link as the
 * patched file is replaced (or deleted) itself, a linked directory leading out is refused.
 */
import { lstat, mkdir, mkdtemp, readFile, readlink, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import type { SourcePatch } from "@platform/agent-protocol";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { LogStream, SecretMasker } from "./log-stream.ts";
import { applySourcePatches, checkSourcePatches, MAX_PATCH_CONTENT_BYTES } from "./patches.ts";

let root: string;
let clone: string;
let outside: string;
let lines: string[];

const logStream = () =>
  new LogStream(
    "patches",
    (chunk) => lines.push(...new TextDecoder().decode(chunk.data).split("\n").filter(Boolean)),
    new SecretMasker([]),
  );
const patch = (filePath: string, type: string, content = ""): SourcePatch => ({ filePath, type, content });

beforeEach(async () => {
  root = await mkdtemp(path.join(tmpdir(), "agent-patches-"));
  clone = path.join(root, "clone");
  outside = path.join(root, "outside");
  await mkdir(path.join(clone, "src"), { recursive: true });
  await mkdir(outside);
  await writeFile(path.join(clone, "src", "x.ts"), "original");
  await writeFile(path.join(clone, "gone.txt"), "old");
  await writeFile(path.join(outside, "secret.txt"), "outside the clone");
  lines = [];
});

afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

describe("checkSourcePatches", () => {
  it.each([
    ["../escape.txt", "must not contain '..'"],
    ["src/../../escape.txt", "must not contain '..'"],
    ["/etc/passwd", "must be relative"],
    ["\\windows", "must be relative"],
    ["C:/x", "must be relative"],
    ["a\u0000b", "control characters"],
    ["./", "must name a file"],
    [".git/hooks/post-merge", "inside .git"],
  ])("refuses the path %j", (filePath, message) => {
    expect(() => checkSourcePatches([patch(filePath, "update", "x")])).toThrow(message);
  });

  it("refuses an unknown type and over-long content, naming the patch", () => {
    expect(() => checkSourcePatches([patch("a", "update"), patch("b", "rename")])).toThrow("patches[1].type");
    expect(() => checkSourcePatches([patch("a", "create", "x".repeat(MAX_PATCH_CONTENT_BYTES + 1))])).toThrow(
      "patches[0].content",
    );
  });

  it("normalises accepted paths", () => {
    expect(checkSourcePatches([patch("./src//x.ts", "update")])).toEqual(["src/x.ts"]);
  });
});

describe("applySourcePatches", () => {
  it("replaces, creates (with its directories) and deletes files, logging each", async () => {
    await applySourcePatches(
      clone,
      [
        patch("src/x.ts", "update", "patched"),
        patch("deep/new/file.txt", "create", "new"),
        patch("gone.txt", "delete"),
        patch("never-there.txt", "delete"),
      ],
      logStream(),
    );
    expect(await readFile(path.join(clone, "src", "x.ts"), "utf8")).toBe("patched");
    expect(await readFile(path.join(clone, "deep", "new", "file.txt"), "utf8")).toBe("new");
    await expect(lstat(path.join(clone, "gone.txt"))).rejects.toThrow("ENOENT");
    expect(lines).toEqual([
      "Applying 4 patch(es)…",
      "patch: replaced src/x.ts",
      "patch: created deep/new/file.txt",
      "patch: deleted gone.txt",
      "patch: never-there.txt does not exist, nothing to delete",
    ]);
  });

  it("replaces a symlink to a file outside the clone instead of writing through it", async () => {
    await symlink(path.join(outside, "secret.txt"), path.join(clone, "link.txt"));
    await applySourcePatches(clone, [patch("link.txt", "update", "patched")], logStream());
    expect(await readFile(path.join(outside, "secret.txt"), "utf8")).toBe("outside the clone");
    expect((await lstat(path.join(clone, "link.txt"))).isSymbolicLink()).toBe(false);
    expect(await readFile(path.join(clone, "link.txt"), "utf8")).toBe("patched");
  });

  it("deletes a symlink itself, never what it points to", async () => {
    await symlink(path.join(outside, "secret.txt"), path.join(clone, "link.txt"));
    await applySourcePatches(clone, [patch("link.txt", "delete")], logStream());
    await expect(readlink(path.join(clone, "link.txt"))).rejects.toThrow("ENOENT");
    expect(await readFile(path.join(outside, "secret.txt"), "utf8")).toBe("outside the clone");
  });

  it("refuses a path through a linked directory leading out of the clone, before changing anything", async () => {
    await symlink(outside, path.join(clone, "linked"));
    for (const change of [
      patch("linked/secret.txt", "update", "pwned"),
      patch("linked/secret.txt", "delete"),
    ]) {
      await expect(applySourcePatches(clone, [change], logStream())).rejects.toThrow(
        "points outside the source",
      );
    }
    await expect(
      applySourcePatches(clone, [patch("linked/new/dir/file.txt", "create", "pwned")], logStream()),
    ).rejects.toThrow("points outside the source");
    expect(await readFile(path.join(outside, "secret.txt"), "utf8")).toBe("outside the clone");
    await expect(lstat(path.join(outside, "new"))).rejects.toThrow("ENOENT");
  });

  it("refuses to replace a directory of the repository", async () => {
    await expect(applySourcePatches(clone, [patch("src", "update", "x")], logStream())).rejects.toThrow(
      "is a directory",
    );
  });

  it("a refused patch among others leaves the clone untouched (all are checked first)", async () => {
    await expect(
      applySourcePatches(
        clone,
        [patch("src/x.ts", "update", "patched"), patch("../out.txt", "create", "x")],
        logStream(),
      ),
    ).rejects.toThrow("patches[1].filePath");
    expect(await readFile(path.join(clone, "src", "x.ts"), "utf8")).toBe("original");
  });
});
