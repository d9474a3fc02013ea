import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type GitServer, startGitServer } from "../testing/git-server.ts";

const run = promisify(execFile);

describe("test git server (smart HTTP)", () => {
  let server: GitServer;
  let work: string;

  beforeAll(async () => {
    server = await startGitServer({ username: "bob", password: "s3cret" });
    work = await mkdtemp(path.join(tmpdir(), "git-server-test-"));
  });
  afterAll(async () => {
    await server?.close();
    await rm(work, { recursive: true, force: true });
  });

  const clone = (url: string, dir: string, branch = "main") =>
    run("git", ["clone", "--depth", "1", "--branch", branch, "--", url, dir], {
      env: { ...process.env, GIT_TERMINAL_PROMPT: "0" },
    });

  it("serves a repository over HTTP with basic auth and sees new commits", async () => {
    const first = await server.createRepo("app", { "index.html": "v1", "sub/a.txt": "a" });
    const authed = server.url("app").replace("http://", "http://bob:s3cret@");
    await clone(authed, path.join(work, "one"));
    expect(await readFile(path.join(work, "one", "index.html"), "utf8")).toBe("v1");
    expect(await readFile(path.join(work, "one", "sub/a.txt"), "utf8")).toBe("a");

    const second = await server.commit("app", { "index.html": "v2" }, "second");
    expect(second).not.toBe(first);
    await clone(authed, path.join(work, "two"));
    expect(await readFile(path.join(work, "two", "index.html"), "utf8")).toBe("v2");
    expect(await readFile(path.join(work, "two", "sub/a.txt"), "utf8")).toBe("a");

    await server.commit("app", { "index.html": "other" }, "on a branch", "feature");
    await clone(authed, path.join(work, "three"), "feature");
    expect(await readFile(path.join(work, "three", "index.html"), "utf8")).toBe("other");
  });

  it("refuses a clone without or with wrong credentials", async () => {
    await server.createRepo("private", { a: "b" });
    await expect(clone(server.url("private"), path.join(work, "anon"))).rejects.toThrow();
    const wrong = server.url("private").replace("http://", "http://bob:nope@");
    await expect(clone(wrong, path.join(work, "wrong"))).rejects.toThrow();
    expect(server.refusedRequests).toBeGreaterThanOrEqual(2);
  });
});
