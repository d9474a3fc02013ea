/**
 * errorMessage of a real failed host-mode update: an application serving on one host port gets a
 * second one that another container already holds; Swarm rolls the update back, and the failed
 * deployment's errorMessage still ends with the engine's cause, with the full reason in its log.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import {
  dockerCli,
  removeDeployedApps,
  requireDocker,
  TEST_IMAGE,
  uniqueName,
} from "@platform/agent/testing/docker.ts";
import { freePort, servedBody } from "@platform/agent/testing/net.ts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Session, startTestPlatform, type TestPlatform } from "../testing/harness.ts";
import { MAX_ERROR_MESSAGE_CHARS } from "./error-message.ts";

const SERVED_PAGE = "platform test image";
const appName = uniqueName("rel-core-customer-portal-frontend");
const holder = uniqueName("rel-core-port-holder");
let platform: TestPlatform;
let owner: Session;
let mainDirectory: string;

beforeAll(async () => {
  await requireDocker();
  mainDirectory = await mkdtemp(path.join(tmpdir(), "rel-core-error-"));
  platform = await startTestPlatform({}, { agents: { localAgent: { mainDirectory } } });
  owner = await platform.registerOwner();
}, 60_000);

afterAll(async () => {
  await dockerCli(["rm", "-f", holder]).catch(() => {});
  await removeDeployedApps([appName]);
  await platform?.close();
  if (mainDirectory) await rm(mainDirectory, { recursive: true, force: true });
}, 60_000);

describe("a failed host-mode update", () => {
  it("keeps the cause at the end of errorMessage and the whole reason in the log", async () => {
    const ok = (name: string, input: Record<string, unknown>) =>
      platform.mutateOk(name, input, { token: owner.token });
    const project = await ok("project.create", { name: "Errors" });
    const { applicationId } = await ok("application.create", {
      name: "portal",
      appName,
      environmentId: project.environment.environmentId,
    });
    await ok("application.saveDockerProvider", { applicationId, dockerImage: TEST_IMAGE });
    await ok("application.update", { applicationId, command: "httpd -f -p 8080 -h /www" });
    const servingPort = await freePort();
    await ok("port.create", {
      applicationId,
      publishedPort: servingPort,
      targetPort: 8080,
      publishMode: "host",
    });
    const first = await ok("application.deploy", { applicationId });
    expect(await platform.waitForDeployment(first.deploymentId)).toMatchObject({ status: "done" });

    // Another container holds the next port: the updated task cannot bind it.
    const takenPort = await freePort();
    await dockerCli(["run", "-d", "--name", holder, "-p", `${takenPort}:8080`, TEST_IMAGE, "sleep", "600"]);
    // Another target port: Swarm may fold two host ports of one target into one binding.
    await ok("port.create", {
      applicationId,
      publishedPort: takenPort,
      targetPort: 8081,
      publishMode: "host",
    });
    const second = await ok("application.deploy", { applicationId });
    const failed = await platform.waitForDeployment(second.deploymentId);

    expect(failed.status, failed.logs ?? "").toBe("error");
    const message = failed.errorMessage ?? "";
    expect(message.length).toBeLessThanOrEqual(MAX_ERROR_MESSAGE_CHARS);
    // The agent's reply or, when it is lost, what Docker shows of the rollback says why.
    expect(message).toMatch(
      /^(Deploy failed: |The new version did not start, the previous one was restored: )/,
    );
    expect(message).toMatch(/port is already allocated$/);
    // The log has the whole reason, every word of errorMessage in it.
    const reasonLine = (failed.logs ?? "").split("\n").find((line) => line.includes("Deployment failed: "));
    expect(reasonLine).toContain("driver failed programming external connectivity on endpoint");
    expect(reasonLine).toMatch(
      new RegExp(`Bind for 0\\.0\\.0\\.0:${takenPort} failed: port is already allocated$`),
    );
    for (const word of message.split(/\s+/)) if (word !== "…") expect(reasonLine).toContain(word);
    // The rollback left the previous version serving.
    expect(await servedBody(servingPort, "/", SERVED_PAGE)).toBe(SERVED_PAGE);
  }, 240_000);
});
