/**
 * Push after a build and pull before a deploy against a real registry (Debian's docker-registry
 * with htpasswd auth, started by scripts/start-test-registry.sh), credentials given per command:
 * no `docker login` state is left on disk and the password appears in no log or answer.
 */
import { existsSync, readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { homedir, tmpdir } from "node:os";
import path from "node:path";
import {
  asReceived,
  type BuildImageCommand,
  type CommandInput,
  type CommandReply,
  type Init,
  makeCommandRequest,
} from "@platform/agent-protocol";
import type Docker from "dockerode";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AgentCore } from "../core.ts";
import { dockerCli, requireDocker, TEST_IMAGE, uniqueName } from "../testing/docker.ts";
import { type GitServer, startGitServer } from "../testing/git-server.ts";
import { freePort, waitForHttp } from "../testing/net.ts";
import { startTestRegistries } from "../testing/registry.ts";
import { LogCollector } from "./test-support.ts";

const serverId = "deploy-registry-test";
let registry: string;
let username: string;
let password: string;
let docker: Docker;
let core: AgentCore;
let mainDirectory: string;
let git: GitServer;
const logs = new LogCollector();
const prefix = uniqueName("reg").toLowerCase();
const images: string[] = [];
const services: string[] = [];

function send(command: CommandInput): Promise<CommandReply> {
  return core.handle(asReceived(makeCommandRequest(serverId, command, 600_000)));
}

const dockerConfig = path.join(homedir(), ".docker", "config.json");
const configBefore = existsSync(dockerConfig) ? readFileSync(dockerConfig, "utf8") : undefined;

beforeAll(async () => {
  docker = await requireDocker();
  ({ http: registry, username, password } = await startTestRegistries());
  mainDirectory = await mkdtemp(path.join(tmpdir(), "agent-registry-main-"));
  core = new AgentCore({ serverId, docker, mainDirectory, publishLogChunk: logs.publish });
  git = await startGitServer();
  await git.createRepo("pushed", {
    Dockerfile: `FROM ${TEST_IMAGE}\nRUN echo "pushed image" > /www/index.html\nCMD ["httpd", "-f", "-p", "8080", "-h", "/www"]\n`,
  });
}, 300_000);

afterAll(async () => {
  for (const name of services) await dockerCli(["service", "rm", name]).catch(() => {});
  for (let attempt = 0; attempt < 40; attempt++) {
    const left = await dockerCli(["ps", "-aq", "--filter", `name=${prefix}`]);
    if (!left) break;
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  for (const image of images) await dockerCli(["rmi", "-f", image]).catch(() => {});
  await git?.close();
  if (mainDirectory) await rm(mainDirectory, { recursive: true, force: true });
}, 120_000);

/** A build command as the tests send it. */
type BuildCommand = Init<BuildImageCommand> & Pick<BuildImageCommand, "imageName" | "logStreamId">;

function buildCommand(id: string, pushPassword: string): BuildCommand {
  const imageName = `platform-test/${prefix}-${id}:deploy-${id}`;
  images.push(imageName);
  return {
    jobId: `job-${prefix}-${id}`,
    logStreamId: `stream-${prefix}-${id}`,
    appName: `${prefix}-app`,
    imageName,
    buildType: "dockerfile",
    git: { url: git.url("pushed"), branch: "main" },
    pushRegistry: { serverAddress: registry, username, password: pushPassword },
    pushImagePrefix: "platform-tests",
  };
}

describe("registry push and pull", () => {
  it("pushes the built image with the command's credentials, then deploys it pulled with registryAuth", async () => {
    const command = buildCommand("ok", password);
    const reply = await send({ command: "buildImage", buildImage: command });
    if (reply.result !== "buildImage")
      throw new Error(`${JSON.stringify(reply)}\n${logs.text(command.logStreamId)}`);
    const pushed = `${registry}/platform-tests/${prefix}-app:deploy-ok`;
    expect(reply.buildImage.pushedImage).toBe(pushed);
    images.push(pushed);
    // The registry has the tag (asked with the credentials over its HTTP API).
    const tags = await fetch(`http://${registry}/v2/platform-tests/${prefix}-app/tags/list`, {
      headers: { authorization: `Basic ${Buffer.from(`${username}:${password}`).toString("base64")}` },
    });
    expect(await tags.json()).toMatchObject({ tags: ["deploy-ok"] });
    expect(logs.text(command.logStreamId)).not.toContain(password);
    // No login state was written.
    expect(existsSync(dockerConfig) ? readFileSync(dockerConfig, "utf8") : undefined).toBe(configBefore);

    // Deploy from the registry: the local copy is removed first, so the pull has to work.
    await dockerCli(["rmi", "-f", pushed]);
    const name = `${prefix}-svc`;
    services.push(name);
    const port = await freePort();
    const deploy = await send({
      command: "deployService",
      deployService: {
        jobId: `deploy-${prefix}`,
        logStreamId: `deploy-stream-${prefix}`,
        spec: {
          name,
          image: pushed,
          env: [],
          replicas: 1,
          ports: [{ publishedPort: port, targetPort: 8080, protocol: "tcp", publishMode: "host" }],
        },
        registryAuth: { serverAddress: registry, username, password },
        waitSeconds: 90,
        owner: { organizationId: "org-test", resource: `application:${prefix}` },
      },
    });
    if (deploy.result !== "deployService")
      throw new Error(`${JSON.stringify(deploy)}\n${logs.text(`deploy-stream-${prefix}`)}`);
    expect(logs.text(`deploy-stream-${prefix}`)).toContain(`pulled ${pushed}`);
    expect(logs.text(`deploy-stream-${prefix}`)).not.toContain(password);
    await waitForHttp(
      `http://127.0.0.1:${port}/`,
      (status, body) => status === 200 && body === "pushed image\n",
    );
  }, 240_000);

  it("fails the build with the registry's refusal when the password is wrong, never echoing it", async () => {
    const wrong = "definitely-wrong-pw-42";
    const command = buildCommand("wrong", wrong);
    images.push(`${registry}/platform-tests/${prefix}-app:deploy-wrong`);
    const reply = await send({ command: "buildImage", buildImage: command });
    expect(reply).toMatchObject({ result: "error", error: { code: "FAILED" } });
    if (reply.result === "error") {
      expect(reply.error.message).toMatch(
        /^pushing .* failed: .*(unauthorized|authentication required|no basic auth)/i,
      );
    }
    expect(JSON.stringify(reply)).not.toContain(wrong);
    expect(logs.text(command.logStreamId)).not.toContain(wrong);
  }, 240_000);

  it("also pushes the built image to the rollback registry, whose refusal fails the build", async () => {
    const auth = `Basic ${Buffer.from(`${username}:${password}`).toString("base64")}`;
    const tagsOf = async (repository: string) =>
      (
        await fetch(`http://${registry}/v2/${repository}/tags/list`, { headers: { authorization: auth } })
      ).json();
    const command: BuildCommand = {
      ...buildCommand("rollback", password),
      rollbackRegistry: { serverAddress: registry, username, password },
      rollbackImagePrefix: "platform-rollbacks",
    };
    const pushed = `${registry}/platform-tests/${prefix}-app:deploy-rollback`;
    const stored = `${registry}/platform-rollbacks/${prefix}-app:deploy-rollback`;
    images.push(pushed, stored);
    const reply = await send({ command: "buildImage", buildImage: command });
    if (reply.result !== "buildImage")
      throw new Error(`${JSON.stringify(reply)}\n${logs.text(command.logStreamId)}`);
    expect(reply.buildImage).toMatchObject({ pushedImage: pushed, rollbackImage: stored });
    expect(await tagsOf(`platform-rollbacks/${prefix}-app`)).toMatchObject({ tags: ["deploy-rollback"] });
    expect(await tagsOf(`platform-tests/${prefix}-app`)).toMatchObject({
      tags: expect.arrayContaining(["deploy-rollback"]),
    });
    const text = logs.text(command.logStreamId);
    expect(text).toContain(`pushed ${stored}`);
    expect(text.indexOf(`pushed ${pushed}`)).toBeLessThan(text.indexOf(`pushed ${stored}`));
    expect(text).not.toContain(password);

    // Without a build registry, only the rollback copy is pushed; a wrong password fails the job.
    const wrong = "wrong-rollback-pw-7c1d";
    const refused: BuildCommand = {
      ...buildCommand("rollback-wrong", password),
      pushRegistry: undefined,
      rollbackRegistry: { serverAddress: registry, username, password: wrong },
      rollbackImagePrefix: "platform-rollbacks",
    };
    images.push(`${registry}/platform-rollbacks/${prefix}-app:deploy-rollback-wrong`);
    const failed = await send({ command: "buildImage", buildImage: refused });
    expect(failed).toMatchObject({ result: "error", error: { code: "FAILED" } });
    if (failed.result === "error") {
      expect(failed.error.message).toMatch(
        /^pushing .*\/platform-rollbacks\/.* failed: .*(unauthorized|authentication required|no basic auth)/i,
      );
    }
    expect(JSON.stringify(failed)).not.toContain(wrong);
    expect(logs.text(refused.logStreamId)).not.toContain(wrong);

    // The rollback target is checked like the push target.
    const invalid = await send({
      command: "buildImage",
      buildImage: { ...refused, jobId: `job-${prefix}-bad`, rollbackImagePrefix: "Bad Prefix" },
    });
    expect(invalid).toMatchObject({ result: "error", error: { code: "INVALID_ARGUMENT" } });
    if (invalid.result === "error") expect(invalid.error.message).toContain("rollbackImagePrefix");
  }, 240_000);
});
