/**
 * Test helper: bare git repositories on disk served over git's smart HTTP protocol on 127.0.0.1
 * (node:http running `git http-backend` as a CGI program, no shell), optionally behind HTTP basic
 * auth. Repositories are made from a map of files and can receive more commits afterwards.
 *
 *   const git = await startGitServer({ username: "bob", password: "s3cret" });
 *   await git.createRepo("app", { "Dockerfile": "FROM ...", "index.html": "v1" });
 *   git.url("app") // http://127.0.0.1:<port>/app.git
 *   await git.commit("app", { "index.html": "v2" }, "second version");
 *   await git.close();
 */
import { execFile, spawn } from "node:child_process";
import { timingSafeEqual } from "node:crypto";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);

export interface GitServerOptions {
  /** With username and password, every request needs HTTP basic auth. */
  username?: string;
  password?: string;
}

/** File path (relative, "/"-separated) -> content. */
export type RepoFiles = Record<string, string | Uint8Array>;

export interface GitServer {
  /** Base URL, e.g. http://127.0.0.1:41234 */
  readonly baseUrl: string;
  /** Directory holding the bare repositories (<root>/<name>.git). */
  readonly root: string;
  /** Clone URL of a repository (without credentials). */
  url(repoName: string): string;
  /** Creates a bare repository with one commit holding `files` on `branch` (default "main"); returns the commit hash. */
  createRepo(name: string, files: RepoFiles, branch?: string): Promise<string>;
  /** Adds a commit writing `files` on `branch` (created when missing); returns the commit hash. */
  commit(name: string, files: RepoFiles, message: string, branch?: string): Promise<string>;
  /**
   * Adds a commit on `branch` recording `submoduleUrl` (at the head of `submoduleBranch` of the
   * local repository `submoduleRepo`) as a submodule at `subPath`; returns the commit hash.
   */
  addSubmodule(
    name: string,
    subPath: string,
    submoduleRepo: string,
    submoduleUrl: string,
    branch?: string,
    submoduleBranch?: string,
  ): Promise<string>;
  /** Number of HTTP requests refused for missing or wrong credentials. */
  readonly refusedRequests: number;
  close(): Promise<void>;
}

const REPO_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;
const GIT_AUTHOR_ENV = {
  GIT_AUTHOR_NAME: "Platform Test",
  GIT_AUTHOR_EMAIL: "test@platform.invalid",
  GIT_COMMITTER_NAME: "Platform Test",
  GIT_COMMITTER_EMAIL: "test@platform.invalid",
  GIT_CONFIG_NOSYSTEM: "1",
  GIT_TERMINAL_PROMPT: "0",
};

async function git(args: string[], cwd?: string): Promise<string> {
  const { stdout } = await run("git", args, {
    cwd,
    env: { ...process.env, ...GIT_AUTHOR_ENV, HOME: tmpdir() },
    maxBuffer: 16 * 1024 * 1024,
  });
  return stdout.trim();
}

function sameSecret(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

export async function startGitServer(options: GitServerOptions = {}): Promise<GitServer> {
  const root = await mkdtemp(path.join(tmpdir(), "platform-git-"));
  const reposDir = path.join(root, "repos");
  await mkdir(reposDir);
  const httpBackend = path.join(await git(["--exec-path"]), "git-http-backend");
  const needsAuth = options.username !== undefined && options.password !== undefined;
  let refused = 0;

  function authorized(req: IncomingMessage): boolean {
    if (!needsAuth) return true;
    const header = req.headers.authorization ?? "";
    if (!header.startsWith("Basic ")) return false;
    const decoded = Buffer.from(header.slice(6), "base64").toString("utf8");
    const colon = decoded.indexOf(":");
    if (colon < 0) return false;
    // Evaluate both comparisons so the time does not reveal which one failed.
    const userOk = sameSecret(decoded.slice(0, colon), options.username as string);
    const passwordOk = sameSecret(decoded.slice(colon + 1), options.password as string);
    return userOk && passwordOk;
  }

  function handle(req: IncomingMessage, res: ServerResponse): void {
    if (!authorized(req)) {
      refused++;
      res.writeHead(401, { "WWW-Authenticate": 'Basic realm="git"', "Content-Type": "text/plain" });
      res.end("authentication required\n");
      return;
    }
    const url = new URL(req.url ?? "/", "http://127.0.0.1");
    const pathInfo = decodeURIComponent(url.pathname);
    if (pathInfo.includes("..") || pathInfo.includes("\0")) {
      res.writeHead(400).end();
      return;
    }
    const env: NodeJS.ProcessEnv = {
      PATH: process.env.PATH,
      GIT_PROJECT_ROOT: reposDir,
      GIT_HTTP_EXPORT_ALL: "1",
      GIT_CONFIG_NOSYSTEM: "1",
      HOME: root,
      REQUEST_METHOD: req.method ?? "GET",
      PATH_INFO: pathInfo,
      QUERY_STRING: url.search.replace(/^\?/, ""),
      CONTENT_TYPE: req.headers["content-type"] ?? "",
      REMOTE_ADDR: req.socket.remoteAddress ?? "127.0.0.1",
      REMOTE_USER: needsAuth ? (options.username as string) : "",
      SERVER_PROTOCOL: "HTTP/1.1",
    };
    if (req.headers["content-length"]) env.CONTENT_LENGTH = req.headers["content-length"];
    if (req.headers["content-encoding"]) env.HTTP_CONTENT_ENCODING = req.headers["content-encoding"];
    if (req.headers["git-protocol"]) env.GIT_PROTOCOL = String(req.headers["git-protocol"]);

    const child = spawn(httpBackend, [], { env, stdio: ["pipe", "pipe", "pipe"] });
    req.pipe(child.stdin);
    child.stdin.on("error", () => {});
    child.stderr.resume();

    // CGI output: headers, a blank line, then the body streamed as is.
    let head = Buffer.alloc(0);
    let headersDone = false;
    child.stdout.on("data", (data: Buffer) => {
      if (headersDone) {
        res.write(data);
        return;
      }
      head = Buffer.concat([head, data]);
      let end = head.indexOf("\r\n\r\n");
      let separatorLength = 4;
      if (end < 0) {
        end = head.indexOf("\n\n");
        separatorLength = 2;
      }
      if (end < 0) return;
      headersDone = true;
      let status = 200;
      const headers: Record<string, string> = {};
      for (const line of head.subarray(0, end).toString("latin1").split(/\r?\n/)) {
        const colon = line.indexOf(":");
        if (colon < 0) continue;
        const name = line.slice(0, colon).trim();
        const value = line.slice(colon + 1).trim();
        if (name.toLowerCase() === "status") status = Number.parseInt(value, 10) || 500;
        else headers[name] = value;
      }
      res.writeHead(status, headers);
      res.write(head.subarray(end + separatorLength));
    });
    child.on("close", () => {
      if (!headersDone) res.writeHead(502);
      res.end();
    });
    child.on("error", () => {
      if (!res.headersSent) res.writeHead(500);
      res.end();
    });
    // The client went away before the answer was complete.
    res.on("close", () => {
      if (!res.writableFinished) child.kill();
    });
  }

  const server = createServer(handle);
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  const baseUrl = `http://127.0.0.1:${port}`;

  function bareDir(name: string): string {
    if (!REPO_NAME.test(name) || name.includes("..")) throw new Error(`invalid repository name: ${name}`);
    return path.join(reposDir, `${name}.git`);
  }

  async function commit(
    name: string,
    files: RepoFiles,
    message: string,
    branch = "main",
    /** Runs after `git add --all`, before the commit. */
    stageMore?: (work: string) => Promise<void>,
  ): Promise<string> {
    const bare = bareDir(name);
    const work = await mkdtemp(path.join(root, "work-"));
    try {
      await git(["clone", "--quiet", "--no-hardlinks", bare, work]);
      const remoteBranches = await git(["branch", "-r", "--list", `origin/${branch}`], work);
      if (remoteBranches) await git(["checkout", "--quiet", "-B", branch, `origin/${branch}`], work);
      else await git(["checkout", "--quiet", "--orphan", branch], work);
      for (const [file, content] of Object.entries(files)) {
        const target = path.resolve(work, file);
        if (!target.startsWith(`${work}${path.sep}`))
          throw new Error(`file path escapes the repository: ${file}`);
        await mkdir(path.dirname(target), { recursive: true });
        await writeFile(target, content);
      }
      await git(["add", "--all"], work);
      await stageMore?.(work);
      await git(["commit", "--quiet", "--allow-empty", "-m", message], work);
      await git(["push", "--quiet", "origin", `HEAD:refs/heads/${branch}`], work);
      return await git(["rev-parse", "HEAD"], work);
    } finally {
      await rm(work, { recursive: true, force: true });
    }
  }

  return {
    baseUrl,
    root: reposDir,
    url: (repoName) => `${baseUrl}/${repoName}.git`,
    async createRepo(name, files, branch = "main") {
      const bare = bareDir(name);
      await git(["init", "--quiet", "--bare", `--initial-branch=${branch}`, bare]);
      return commit(name, files, "initial commit", branch);
    },
    commit: (name, files, message, branch) => commit(name, files, message, branch),
    async addSubmodule(
      name,
      subPath,
      submoduleRepo,
      submoduleUrl,
      branch = "main",
      submoduleBranch = "main",
    ) {
      const head = await git([
        "--git-dir",
        bareDir(submoduleRepo),
        "rev-parse",
        `refs/heads/${submoduleBranch}`,
      ]);
      const gitmodules = `[submodule "${subPath}"]\n\tpath = ${subPath}\n\turl = ${submoduleUrl}\n`;
      return commit(name, { ".gitmodules": gitmodules }, `add submodule ${subPath}`, branch, (work) =>
        git(["update-index", "--add", "--cacheinfo", `160000,${head},${subPath}`], work).then(() => {}),
      );
    },
    get refusedRequests() {
      return refused;
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await rm(root, { recursive: true, force: true });
    },
  };
}
