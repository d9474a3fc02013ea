/** The agent's own checks of URLs, branches, names and paths (no Docker needed). */
import { mkdir, mkdtemp, rm, symlink } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LogStream, SecretMasker } from "./log-stream.ts";
import { checkBranch, checkGitUrl, checkImageName, checkRelativePath, resolveInside } from "./validate.ts";

describe("checkGitUrl", () => {
  it.each([
    ["https://github.com/org/repo.git", "http"],
    ["http://127.0.0.1:8080/repo.git", "http"],
    ["ssh://git@github.com/org/repo.git", "ssh"],
    ["ssh://git@gitlab.example.com:2222/group/sub/repo.git", "ssh"],
    ["git@github.com:org/repo.git", "ssh"],
    ["github.com:org/repo", "ssh"],
  ])("accepts %s", (url, kind) => {
    expect(checkGitUrl("git.url", url)).toEqual({ kind });
  });

  it.each([
    "ext::sh -c touch% /tmp/x",
    "ext::sh",
    "fd::17",
    "file:///etc/passwd",
    "FILE:///etc",
    "git://example.com/repo",
    "ftp://example.com/repo",
    "--upload-pack=touch /tmp/x",
    "-uhost:repo",
    "https://example.com/--upload-pack=x",
    "https://-example.com/repo",
    "ssh://-oProxyCommand=x/repo",
    "ssh://-user@host/repo",
    "-oProxyCommand=x:repo",
    "user@host:-repo",
    "https://example.com/-repo",
    "https://user:secret@example.com/repo",
    "https://example.com/repo\n",
    "https://example.com/re po",
    "/srv/git/repo.git",
    "",
  ])("refuses %j", (url) => {
    expect(() => checkGitUrl("git.url", url)).toThrow(/^git\.url: /);
  });
});

describe("checkBranch", () => {
  it.each(["main", "feature/new-ui", "release-1.2", "v1.0.0", "user@fix", "a+b"])("accepts %s", (branch) => {
    expect(() => checkBranch("git.branch", branch)).not.toThrow();
  });
  it.each([
    "",
    "-x",
    "a..b",
    "a//b",
    "/a",
    "a/",
    "a.",
    ".a",
    "a/.b",
    "a.lock",
    "@",
    "a@{1}",
    "a b",
    "a;b",
    "a|b",
    "$x",
    "a~1",
    "a^",
    "a:b",
    "a?",
    "a*",
    "a[",
    "a\\b",
  ])("refuses %j", (branch) => {
    expect(() => checkBranch("git.branch", branch)).toThrow(/^git\.branch: /);
  });
});

describe("checkImageName", () => {
  it.each(["platform/app:v1", "127.0.0.1:5050/prefix/app:tag_1", "nginx", "nginx:1.27-alpine", "a/b/c"])(
    "accepts %s",
    (name) => {
      expect(() => checkImageName("imageName", name)).not.toThrow();
    },
  );
  it.each(["App:v1", "app:-x", "-app", "app;rm", "app tag", "app:", ""])("refuses %j", (name) => {
    expect(() => checkImageName("imageName", name)).toThrow(/^imageName: /);
  });
});

describe("relative paths", () => {
  let root: string;
  beforeAll(async () => {
    root = await mkdtemp(path.join(tmpdir(), "validate-test-"));
    await mkdir(path.join(root, "src", "inside"), { recursive: true });
    await symlink("/etc", path.join(root, "src", "out"));
    await symlink("inside", path.join(root, "src", "in"));
  });
  afterAll(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it("normalises harmless forms", () => {
    expect(checkRelativePath("buildPath", undefined)).toBe("");
    expect(checkRelativePath("buildPath", "./")).toBe("");
    expect(checkRelativePath("buildPath", "./apps//web/")).toBe("apps/web");
  });

  it.each(["../x", "a/../../x", "/etc", "\\\\server\\share", "C:/x", "a\u0000b", "a\nb"])(
    "refuses %j",
    (value) => {
      expect(() => checkRelativePath("dockerfile", value)).toThrow(/^dockerfile: /);
    },
  );

  it("resolves symlinks and refuses those leading outside", async () => {
    const src = path.join(root, "src");
    expect(await resolveInside("buildPath", src, src, "in")).toBe(
      path.join(await realRoot(root), "src", "inside"),
    );
    expect(await resolveInside("buildPath", src, src, "missing/file")).toBe(
      path.join(await realRoot(root), "src", "missing", "file"),
    );
    await expect(resolveInside("buildPath", src, src, "out")).rejects.toThrow(
      "buildPath: points outside the source",
    );
    await expect(resolveInside("dockerfile", src, src, "out/passwd")).rejects.toThrow(
      "dockerfile: points outside the source",
    );
  });
});

async function realRoot(dir: string): Promise<string> {
  const { realpath } = await import("node:fs/promises");
  return realpath(dir);
}

describe("log streams", () => {
  it("numbers chunks from 0, ends with one final chunk and masks every secret, line by line", () => {
    const chunks: { seq: number; text: string; final: boolean }[] = [];
    const key = "-----BEGIN KEY-----\nAAAAB3NzaC1yc2EAAAADAQAB\n-----END KEY-----";
    const log = new LogStream(
      "s1",
      (chunk) =>
        chunks.push({ seq: chunk.seq, text: new TextDecoder().decode(chunk.data), final: chunk.final }),
      new SecretMasker(["hunter22", key, "", undefined]),
    );
    log.line("password is hunter22!");
    const writer = log.lineWriter();
    writer.write("partial hun");
    writer.write("ter22 line\nkey line AAAAB3NzaC1yc2EAAAADAQAB here\nrest");
    writer.flush();
    log.close("done");
    log.line("after the end");
    expect(chunks.map((chunk) => chunk.seq)).toEqual([0, 1, 2, 3, 4]);
    expect(chunks.map((chunk) => chunk.final)).toEqual([false, false, false, false, true]);
    const text = chunks.map((chunk) => chunk.text).join("");
    expect(text).toBe("password is ********!\npartial ******** line\nkey line ******** here\nrest\ndone\n");
  });
});
