/**
 * buildImage from a git repository over SSH with a private key (a private OpenSSH server on
 * 127.0.0.1 from scripts/start-test-sshd.sh): the key is used through GIT_SSH_COMMAND from a
 * 0600 temp file, the host key is accepted on first use, and the key never reaches the log.
 */
import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import {
  asReceived,
  type CommandInput,
  type CommandReply,
  makeCommandRequest,
} from "@platform/agent-protocol";
import type Docker from "dockerode";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AgentCore } from "../core.ts";
import { dockerCli, requireDocker, TEST_IMAGE, uniqueName } from "../testing/docker.ts";
import { type GitServer, startGitServer } from "../testing/git-server.ts";
import { freePort } from "../testing/net.ts";
import { LogCollector } from "./test-support.ts";

const run = promisify(execFile);
const serverId = "deploy-ssh-test";
const script = path.resolve(import.meta.dirname, "../../../../scripts/start-test-sshd.sh");
let docker: Docker;
let core: AgentCore;
let mainDirectory: string;
let sshDir: string;
let sshPort: number;
let privateKey: string;
let git: GitServer;
const logs = new LogCollector();
const prefix = uniqueName("ssh").toLowerCase();
const images: string[] = [];

function send(command: CommandInput): Promise<CommandReply> {
  return core.handle(asReceived(makeCommandRequest(serverId, command, 600_000)));
}

beforeAll(async () => {
  docker = await requireDocker();
  await run("bash", [script], { timeout: 300_000 });
  sshDir = await mkdtemp(path.join(tmpdir(), "agent-sshd-"));
  await run("ssh-keygen", [
    "-q",
    "-t",
    "ed25519",
    "-N",
    "",
    "-C",
    "deploy-key",
    "-f",
    path.join(sshDir, "client_key"),
  ]);
  privateKey = await readFile(path.join(sshDir, "client_key"), "utf8");
  await writeFile(path.join(sshDir, "authorized_keys"), await readFile(path.join(sshDir, "client_key.pub")));
  sshPort = await freePort();
  await run("bash", [script, "--dir", sshDir, "--port", String(sshPort)]);
  mainDirectory = await mkdtemp(path.join(tmpdir(), "agent-ssh-main-"));
  core = new AgentCore({ serverId, docker, mainDirectory, publishLogChunk: logs.publish });
  git = await startGitServer();
  await git.createRepo("over-ssh", {
    Dockerfile: `FROM ${TEST_IMAGE}\nRUN echo "cloned over ssh" > /from-ssh\n`,
  });
}, 300_000);

afterAll(async () => {
  if (sshDir) {
    const pid = await readFile(path.join(sshDir, "sshd.pid"), "utf8").catch(() => "");
    if (pid.trim()) process.kill(Number(pid.trim()));
    await rm(sshDir, { recursive: true, force: true });
  }
  for (const image of images) await dockerCli(["rmi", "-f", image]).catch(() => {});
  await git?.close();
  if (mainDirectory) await rm(mainDirectory, { recursive: true, force: true });
});

describe("git over ssh", () => {
  it("clones with the given private key and builds; the key is not in the log", async () => {
    const user = (await run("id", ["-un"])).stdout.trim();
    const imageName = `platform-test/${prefix}:v1`;
    images.push(imageName);
    const command = {
      jobId: `job-${prefix}`,
      logStreamId: `stream-${prefix}`,
      appName: `${prefix}-app`,
      imageName,
      buildType: "dockerfile" as const,
      git: {
        url: `ssh://${user}@127.0.0.1:${sshPort}${path.join(git.root, "over-ssh.git")}`,
        branch: "main",
        sshPrivateKey: privateKey,
      },
    };
    const reply = await send({ command: "buildImage", buildImage: command });
    const log = logs.text(command.logStreamId);
    if (reply.result !== "buildImage") throw new Error(`${JSON.stringify(reply)}\n${log}`);
    expect(reply.buildImage.commitHash).toMatch(/^[0-9a-f]{40}$/);
    const name = uniqueName("ssh-run");
    expect(await dockerCli(["run", "--rm", "--name", name, imageName, "cat", "/from-ssh"])).toBe(
      "cloned over ssh",
    );
    const keyBody = privateKey.split("\n")[1] ?? "";
    expect(keyBody.length).toBeGreaterThan(20);
    expect(log).not.toContain(keyBody);
    expect(log).not.toContain("PRIVATE KEY");
  }, 120_000);

  it("fails (no prompt, no hang) without a key the server accepts", async () => {
    const user = (await run("id", ["-un"])).stdout.trim();
    const command = {
      jobId: `job-${prefix}-nokey`,
      logStreamId: `stream-${prefix}-nokey`,
      appName: `${prefix}-app`,
      imageName: `platform-test/${prefix}:nokey`,
      buildType: "dockerfile" as const,
      git: {
        url: `ssh://${user}@127.0.0.1:${sshPort}${path.join(git.root, "over-ssh.git")}`,
        branch: "main",
      },
    };
    const reply = await send({ command: "buildImage", buildImage: command });
    expect(reply).toMatchObject({ result: "error", error: { code: "FAILED" } });
    if (reply.result === "error") expect(reply.error.message).toMatch(/^git clone failed: /);
  }, 60_000);
});
