/**
 * The pipeline over NATS (NATS_URL set): the queue on JetStream, the agent's commands and its
 * build log stream on NATS subjects. The build output reaches the deployment log line by line.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { jetstreamManager } from "@nats-io/jetstream";
import { connect } from "@nats-io/transport-node";
import { removeDeployedApps, requireDocker, TEST_IMAGE, uniqueName } from "@platform/agent/testing/docker.ts";
import { type GitServer, startGitServer } from "@platform/agent/testing/git-server.ts";
import { freePort, servedBody } from "@platform/agent/testing/net.ts";
import { afterAll, beforeAll, expect, it } from "vitest";
import { type Session, startTestPlatform, type TestPlatform } from "../testing/harness.ts";

const NATS_URL = process.env.TEST_NATS_URL ?? "nats://127.0.0.1:4222";

let platform: TestPlatform;
let git: GitServer;
let owner: Session;
let mainDirectory: string;
const appName = uniqueName("d2-nats");
const queueSuffix = `${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
const queueStream = `D2_PIPELINE_${queueSuffix}`;

beforeAll(async () => {
  await requireDocker();
  git = await startGitServer();
  mainDirectory = await mkdtemp(path.join(tmpdir(), "d2-nats-"));
  platform = await startTestPlatform(
    { NATS_URL, PLATFORM_OUTBOUND_ALLOW: "127.0.0.0/8" },
    {
      agents: { localAgent: { mainDirectory } },
      deployments: { stream: queueStream, subjectPrefix: `d2.pipeline.${queueSuffix}` },
    },
  );
  owner = await platform.registerOwner();
}, 60_000);

afterAll(async () => {
  await platform?.close();
  await git?.close();
  await removeDeployedApps([appName]);
  await rm(mainDirectory, { recursive: true, force: true });
  const connection = await connect({ servers: NATS_URL });
  await (await jetstreamManager(connection)).streams.delete(queueStream).catch(() => {});
  await connection.close();
}, 60_000);

it("deploys a Git repository with the build output forwarded into the deployment log", async () => {
  const auth = { token: owner.token };
  const call = async (name: string, input: Record<string, unknown>) => {
    const response = await platform.mutate(name, input, auth);
    expect(response.status, `${name}: ${JSON.stringify(response.body)}`).toBe(200);
    return response.body;
  };
  await git.createRepo("nats", {
    Dockerfile: `FROM ${TEST_IMAGE}\nRUN echo build-output-over-nats\nCOPY index.html /www/index.html\nCMD ["httpd", "-f", "-p", "8080", "-h", "/www"]\n`,
    "index.html": "served after a NATS deployment",
  });
  const project = await call("project.create", { name: "Nats" });
  const app = await call("application.create", {
    name: "nats",
    appName,
    environmentId: project.environment.environmentId,
  });
  const { applicationId } = app;
  await call("application.saveGitProvider", {
    applicationId,
    customGitUrl: git.url("nats"),
    customGitBranch: "main",
    enableSubmodules: false,
  });
  await call("application.saveBuildType", {
    applicationId,
    buildType: "dockerfile",
    dockerfile: "Dockerfile",
    dockerContextPath: ".",
    dockerBuildStage: "",
  });
  const publishedPort = await freePort();
  await call("port.create", { applicationId, publishedPort, targetPort: 8080 });
  const { deploymentId } = await call("application.deploy", { applicationId });

  const row = await platform.waitForDeployment(deploymentId, 180_000);
  expect(row.status, row.logs).toBe("done");
  expect(row.logs).toMatch(/^\S+ .*build-output-over-nats/m);
  expect(row.logs).toContain("Done");

  expect(await servedBody(publishedPort, "/", "served after a NATS deployment")).toBe(
    "served after a NATS deployment",
  );
}, 240_000);
