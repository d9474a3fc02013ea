/**
 * Shallow clone of one branch of a Git repository into a build's work directory: execFile-style
 * argv only, no prompts, only the https, http and ssh transports (submodules too: git reads
 * GIT_ALLOW_PROTOCOL in every process it starts), no HTTP redirects (the control plane checked
 * the host the URL names, not where a redirect would lead); credentials through GIT_ASKPASS or
 * an SSH key file, never in the URL, argv or logs.
 */
import { chmod, lstat, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import type {
  GitSource,
  ListRepositoryFilesCommand,
  ReadRepositoryFileCommand,
  RepositoryFile,
  RepositoryFileList,
} from "@platform/agent-protocol";
import type { LogStream } from "./log-stream.ts";
import { runOrFail, runProcess } from "./process.ts";
import { checkBranch, checkGitUrl, checkRelativePath, invalid, resolveInside } from "./validate.ts";

export interface ClonedCommit {
  commitHash: string;
  commitMessage: string;
}

// A helper git runs for every credential prompt, answered from the environment. git names the
// origin it asks for ("Username for 'https://host'", "Password for 'https://user@host'"): only
// the repository's own origin gets an answer, so a submodule on another host (which anyone who
// can push to the repository may add) never receives the application's credentials.
const ASKPASS_SCRIPT = `#!/bin/sh
origin=\${1#*\\'}
origin=\${origin%\\'*}
host=\${origin#*://}
host=\${host%%/*}
host=\${host##*@}
asked=$(printf '%s://%s' "\${origin%%://*}" "$host" | tr '[:upper:]' '[:lower:]')
[ "$asked" = "$PLATFORM_GIT_ORIGIN" ] || exit 1
case "$1" in
  Username*) printf '%s\\n' "$PLATFORM_GIT_USERNAME" ;;
  *) printf '%s\\n' "$PLATFORM_GIT_PASSWORD" ;;
esac
`;

/** The origin git names in its credential prompts for `url`: scheme and host[:port], lower case. */
export function gitOrigin(url: string): string {
  const { protocol, host } = new URL(url);
  return `${protocol}//${host}`.toLowerCase();
}

/** Checks the source before anything runs (INVALID_ARGUMENT). */
export function checkGitSource(source: GitSource): void {
  checkGitUrl("git.url", source.url);
  checkBranch("git.branch", source.branch);
}

export async function cloneRepository(
  source: GitSource,
  directory: string,
  log: LogStream,
  signal: AbortSignal,
): Promise<ClonedCommit> {
  const { kind } = checkGitUrl("git.url", source.url);
  checkBranch("git.branch", source.branch);
  const secretsDir = await mkdtemp(path.join(tmpdir(), "platform-git-"));
  try {
    const env: NodeJS.ProcessEnv = {
      PATH: process.env.PATH,
      HOME: secretsDir,
      GIT_TERMINAL_PROMPT: "0",
      GIT_CONFIG_NOSYSTEM: "1",
      GIT_CONFIG_GLOBAL: "/dev/null",
      GIT_ALLOW_PROTOCOL: "https:http:ssh",
      LANG: "C.UTF-8",
    };
    if (kind === "ssh") {
      // git runs GIT_SSH_COMMAND through a shell: every path in it is single-quoted. No user ssh
      // config, no agent, and no key of the server's own user: only the application's key.
      const knownHosts = path.join(secretsDir, "known_hosts");
      const sshOptions = ["-F", "/dev/null", "-o", "IdentitiesOnly=yes", "-o", "IdentityAgent=none"];
      sshOptions.push(
        "-o",
        "StrictHostKeyChecking=accept-new",
        "-o",
        `UserKnownHostsFile=${shellQuote(knownHosts)}`,
      );
      sshOptions.push("-o", "BatchMode=yes");
      if (source.sshPrivateKey) {
        const keyFile = path.join(secretsDir, "id_key");
        const key = source.sshPrivateKey.endsWith("\n") ? source.sshPrivateKey : `${source.sshPrivateKey}\n`;
        await writeFile(keyFile, key, { mode: 0o600 });
        sshOptions.unshift("-i", shellQuote(keyFile));
      } else {
        sshOptions.push("-o", "PubkeyAuthentication=no");
      }
      env.GIT_SSH_COMMAND = ["ssh", ...sshOptions].join(" ");
    } else if (source.httpUsername || source.httpPassword) {
      const askpass = path.join(secretsDir, "askpass.sh");
      await writeFile(askpass, ASKPASS_SCRIPT, { mode: 0o700 });
      await chmod(askpass, 0o700);
      env.GIT_ASKPASS = askpass;
      env.PLATFORM_GIT_ORIGIN = gitOrigin(source.url);
      env.PLATFORM_GIT_USERNAME = source.httpUsername || "x-access-token";
      env.PLATFORM_GIT_PASSWORD = source.httpPassword ?? "";
    }

    const args = ["-c", "protocol.ext.allow=never", "-c", "protocol.file.allow=never"];
    args.push("-c", "http.followRedirects=false");
    args.push("clone", "--depth", "1", "--branch", source.branch);
    if (source.enableSubmodules) args.push("--recurse-submodules", "--shallow-submodules");
    args.push("--", source.url, directory);
    log.line(`$ git ${args.join(" ")}`);
    await runOrFail("git", args, { env, signal, log }, "git clone");
    const show = await runProcess("git", ["log", "-1", "--format=%H%n%B"], {
      cwd: directory,
      env,
      signal,
      log,
      captureStdout: true,
    });
    const [hash = "", ...message] = show.stdout.split("\n");
    const commit = { commitHash: hash.trim(), commitMessage: log.mask(message.join("\n").trim()) };
    log.line(`checked out ${commit.commitHash} (${source.branch})`);
    return commit;
  } finally {
    await rm(secretsDir, { recursive: true, force: true });
  }
}

/** The largest repository file readRepositoryFile answers (a compose file). */
export const REPOSITORY_FILE_LIMIT = 1024 * 1024;

/**
 * Reads one file of a branch: a shallow clone into a directory of its own under `workRoot`,
 * removed afterwards. The path stays inside the clone once symlinks are followed.
 */
export async function readRepositoryFile(
  command: ReadRepositoryFileCommand,
  workRoot: string,
  log: LogStream,
  signal: AbortSignal,
): Promise<RepositoryFile> {
  if (!command.git) throw invalid("git", "is required");
  const relative = checkRelativePath("path", command.path);
  if (!relative) throw invalid("path", "must name a file of the repository");
  const workDir = await mkdtemp(path.join(workRoot, "platform-read-"));
  try {
    const clone = path.join(workDir, "repository");
    const { commitHash } = await cloneRepository(command.git, clone, log, signal);
    const file = await resolveInside("path", clone, clone, relative);
    const found = await lstat(file).catch(() => undefined);
    if (!found?.isFile()) throw invalid("path", `${relative} is not a file of ${command.git.branch}`);
    if (found.size > REPOSITORY_FILE_LIMIT) {
      throw invalid("path", `${relative} is larger than ${REPOSITORY_FILE_LIMIT / 1024} KiB`);
    }
    return { content: await readFile(file, "utf8"), commit: commitHash };
  } finally {
    await rm(workDir, { recursive: true, force: true });
  }
}

/** The most paths listRepositoryFiles answers. */
export const REPOSITORY_LIST_LIMIT = 20_000;

/**
 * The paths of a branch: a shallow clone into a directory of its own under `workRoot`, walked
 * without following symlinks (a link is listed as a file), `.git` left out, removed afterwards.
 */
export async function listRepositoryFiles(
  command: ListRepositoryFilesCommand,
  workRoot: string,
  log: LogStream,
  signal: AbortSignal,
): Promise<RepositoryFileList> {
  if (!command.git) throw invalid("git", "is required");
  const workDir = await mkdtemp(path.join(workRoot, "platform-list-"));
  try {
    const clone = path.join(workDir, "repository");
    const { commitHash } = await cloneRepository(command.git, clone, log, signal);
    const paths: string[] = [];
    let truncated = false;
    const walk = async (relative: string): Promise<void> => {
      const entries = await readdir(path.join(clone, relative), { withFileTypes: true });
      entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
      for (const entry of entries) {
        if (relative === "" && entry.name === ".git") continue;
        const child = relative ? `${relative}/${entry.name}` : entry.name;
        if (entry.isDirectory()) await walk(child);
        else if (paths.length < REPOSITORY_LIST_LIMIT) paths.push(child);
        else truncated = true;
        if (truncated) return;
      }
    };
    await walk("");
    return { paths, commit: commitHash, truncated };
  } finally {
    await rm(workDir, { recursive: true, force: true });
  }
}

function shellQuote(value: string): string {
  return `'${value.replaceAll("'", `'\\''`)}'`;
}
