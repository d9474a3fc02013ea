/**
 * readRepositoryFile: a compose stack's file read from a branch by the agent (a shallow clone
 * with the source's credentials, removed afterwards), its path kept inside the repository.
 */
import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { asReceived, type CommandInput, makeCommandRequest } from "@platform/agent-protocol";
import Docker from "dockerode";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AgentCore } from "../core.ts";
import { type GitServer, startGitServer } from "../testing/git-server.ts";
import { LogCollector } from "./test-support.ts";

const serverId = "read-repository-file-test";
let core: AgentCore;
let git: GitServer;
let mainDirectory: string;
let commit: string;

beforeAll(async () => {
  mainDirectory = await mkdtemp(path.join(tmpdir(), "agent-read-file-"));
  // The command never reaches Docker: a client that is never connected.
  core = new AgentCore({
    serverId,
    docker: new Docker({ socketPath: "/nonexistent" }),
    mainDirectory,
    publishLogChunk: new LogCollector().publish,
  });
  git = await startGitServer({ username: "deploy", password: "the-repository-token" });
  commit = await git.createRepo("shop", {
    "deploy/docker-compose.yml": "services:\n  web:\n    image: web\n",
    "README.md": "shop\n",
  });
});

afterAll(async () => {
  await git?.close();
  if (mainDirectory) await rm(mainDirectory, { recursive: true, force: true });
});

function read(filePath: string, password = "the-repository-token") {
  const command: CommandInput = {
    command: "readRepositoryFile",
    readRepositoryFile: {
      git: { url: git.url("shop"), branch: "main", httpUsername: "deploy", httpPassword: password },
      path: filePath,
    },
  };
  return core.handle(asReceived(makeCommandRequest(serverId, command, 60_000)));
}

describe("readRepositoryFile", () => {
  it("answers the file and the commit of the branch, and leaves no clone behind", async () => {
    const before = await readdir(tmpdir());
    expect(await read("deploy/docker-compose.yml")).toMatchObject({
      result: "repositoryFile",
      repositoryFile: { content: "services:\n  web:\n    image: web\n", commit },
    });
    const left = (await readdir(tmpdir())).filter(
      (name) => name.startsWith("platform-read-") && !before.includes(name),
    );
    expect(left).toEqual([]);
  });

  it("refuses a path leaving the repository, and names a missing file", async () => {
    for (const outside of ["../../etc/passwd", "deploy/../../x"]) {
      const reply = await read(outside);
      expect(reply, outside).toMatchObject({ result: "error", error: { code: "INVALID_ARGUMENT" } });
      if (reply.result === "error") expect(reply.error.message).toMatch(/path/);
    }
    const missing = await read("docker-compose.yml");
    expect(missing).toMatchObject({ result: "error", error: { code: "INVALID_ARGUMENT" } });
    if (missing.result === "error") expect(missing.error.message).toContain("is not a file of main");
  });

  it("fails with a wrong token without saying it", async () => {
    const reply = await read("deploy/docker-compose.yml", "a-wrong-token-value");
    expect(reply.result).toBe("error");
    expect(JSON.stringify(reply)).not.toContain("a-wrong-token-value");
  });
});
