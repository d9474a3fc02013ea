/**
 * Notifications of real deployments on the real Docker Engine (what notifications.test.ts, which
 * settles deployments by hand, cannot show): an image deployment's appDeploy and a failed
 * Dockerfile build's appBuildError reach local receivers (Custom, Slack, ntfy over HTTP, an SMTP
 * sink) in their formats on the channels toggled for each event, and nothing reaches the others.
 * The per-kind formats are checked in notifications.test.ts.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { removeDeployedApps, requireDocker, TEST_IMAGE, uniqueName } from "@platform/agent/testing/docker.ts";
import { type GitServer, startGitServer } from "@platform/agent/testing/git-server.ts";
import { SMTPServer } from "smtp-server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Session, startTestPlatform, type TestPlatform } from "../testing/harness.ts";

const DEPLOY_WAIT_MS = 120_000;
let platform: TestPlatform;
let git: GitServer;
let owner: Session;
let receiver: Server;
let smtp: SMTPServer;
let base = "";
let smtpPort = 0;
const received: Array<{ path: string; headers: Record<string, unknown>; body: string }> = [];
const mails: Array<{ to: string[]; raw: string }> = [];
const appNames = [uniqueName("notif-e2e-ok"), uniqueName("notif-e2e-fail")];
const as = () => ({ token: owner.token });
const ok = (name: string, input: Record<string, unknown>) => platform.mutateOk(name, input, as());

async function until<T>(check: () => T | undefined, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error("timed out waiting for a notification");
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

beforeAll(async () => {
  await requireDocker();
  receiver = createServer((request, response) => {
    let body = "";
    request.on("data", (chunk) => {
      body += chunk;
    });
    request.on("end", () => {
      received.push({ path: request.url ?? "", headers: request.headers, body });
      response.writeHead(200).end("ok");
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
  smtp = new SMTPServer({
    disabledCommands: ["STARTTLS"],
    allowInsecureAuth: true,
    onAuth: (_auth, _session, callback) => callback(null, { user: "mailer" }),
    onData(stream, session, callback) {
      let raw = "";
      stream.on("data", (chunk) => {
        raw += chunk;
      });
      stream.on("end", () => {
        mails.push({ to: session.envelope.rcptTo.map((r) => r.address), raw });
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => smtp.listen(0, "127.0.0.1", resolve));
  smtpPort = (smtp.server.address() as AddressInfo).port;
  git = await startGitServer();
  platform = await startTestPlatform(
    { PLATFORM_OUTBOUND_ALLOW: "127.0.0.0/8", PLATFORM_URL: "http://platform.example.com" },
    { agents: { localAgent: { mainDirectory: "/nonexistent" } } },
  );
  owner = await platform.registerOwner();
}, 60_000);

afterAll(async () => {
  await platform?.close();
  await git?.close();
  receiver?.close();
  smtp?.close();
  await removeDeployedApps(appNames);
}, 120_000);

describe("notifications of real deployments", () => {
  it("delivers appDeploy and appBuildError to the channels toggled for each, in their formats, and nothing to the others", async () => {
    await ok("notification.createCustom", {
      name: "custom",
      appDeploy: true,
      appBuildError: true,
      endpoint: `${base}/custom`,
      headers: { "X-Token": "custom-secret" },
    });
    await ok("notification.createSlack", {
      name: "slack",
      appDeploy: true,
      webhookUrl: `${base}/slack/T/B/X`,
    });
    await ok("notification.createNtfy", {
      name: "ntfy",
      appBuildError: true,
      serverUrl: `${base}/ntfy`,
      topic: "builds",
    });
    await ok("notification.createEmail", {
      name: "mail",
      appDeploy: true,
      smtpServer: "127.0.0.1",
      smtpPort,
      username: "mailer",
      password: "smtp-secret",
      fromAddress: "platform@example.com",
      toAddresses: ["ops@example.com"],
    });
    // Toggled for other events only: gets nothing here.
    await ok("notification.createCustom", {
      name: "backups only",
      databaseBackup: true,
      endpoint: `${base}/quiet`,
    });

    const project = await ok("project.create", { name: "Shop" });
    const environmentId = project.environment.environmentId;
    const good = await ok("application.create", { name: "web", appName: appNames[0], environmentId });
    await ok("application.saveDockerProvider", {
      applicationId: good.applicationId,
      dockerImage: TEST_IMAGE,
    });
    await ok("application.update", {
      applicationId: good.applicationId,
      command: `sh -c 'trap "exit 0" TERM; sleep 3600 & wait'`,
    });
    const deployed = await ok("application.deploy", { applicationId: good.applicationId });
    const run = await platform.waitForDeployment(deployed.deploymentId, DEPLOY_WAIT_MS);
    expect(run.status, run.logs).toBe("done");

    const customDeploy = await until(() => received.find((r) => r.path === "/custom"));
    const body = JSON.parse(customDeploy.body);
    expect(Object.keys(body).sort()).toEqual(["data", "event", "timestamp"]);
    expect(body.event).toBe("appDeploy");
    expect(body.data).toMatchObject({
      applicationName: "web",
      status: "success",
      projectName: "Shop",
      serviceId: good.applicationId,
      deploymentId: deployed.deploymentId,
    });
    expect(body.data.deploymentUrl).toMatch(/^http:\/\/platform\.example\.com\/api\/deployment\.all\?input=/);
    expect(customDeploy.headers["x-token"]).toBe("custom-secret");
    const slack = JSON.parse((await until(() => received.find((r) => r.path === "/slack/T/B/X"))).body);
    expect(slack.attachments[0]).toMatchObject({ title: "Deployed web", color: "#2eb67d" });
    const mail = await until(() => mails[0]);
    expect(mail.to).toEqual(["ops@example.com"]);
    expect(mail.raw).toContain("Subject: Deployed web");

    const failingSha = await git.createRepo("broken", {
      Dockerfile: `FROM ${TEST_IMAGE}\nRUN echo "the build breaks" && exit 3\n`,
    });
    expect(failingSha).toBeTruthy();
    const bad = await ok("application.create", { name: "worker", appName: appNames[1], environmentId });
    await ok("application.saveGitProvider", {
      applicationId: bad.applicationId,
      customGitUrl: git.url("broken"),
      customGitBranch: "main",
      customGitBuildPath: "/",
      enableSubmodules: false,
    });
    await ok("application.saveBuildType", {
      applicationId: bad.applicationId,
      buildType: "dockerfile",
      dockerfile: "Dockerfile",
      dockerContextPath: ".",
      dockerBuildStage: "",
    });
    const failed = await ok("application.deploy", { applicationId: bad.applicationId });
    const failedRun = await platform.waitForDeployment(failed.deploymentId, DEPLOY_WAIT_MS);
    expect(failedRun.status).toBe("error");

    const ntfy = await until(() => received.find((r) => r.path === "/ntfy/builds"));
    expect(ntfy.headers.tags).toBe("x");
    expect(ntfy.body).toContain("Service: worker");
    const customError = await until(() =>
      received.find((r) => r.path === "/custom" && JSON.parse(r.body).event === "appBuildError"),
    );
    expect(JSON.parse(customError.body).data).toMatchObject({
      applicationName: "worker",
      status: "error",
      deploymentId: failed.deploymentId,
    });

    // Marked delivered just after each receiver answered.
    let statuses: string[] = [];
    for (const deadline = Date.now() + 10_000; Date.now() < deadline; ) {
      const rows = await platform.ctx.db.selectFrom("notificationDeliveries").select("status").execute();
      statuses = rows.map((row) => row.status);
      if (statuses.every((status) => status === "delivered")) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(statuses).toEqual(Array(5).fill("delivered"));
    expect(received.filter((r) => r.path === "/custom")).toHaveLength(2);
    expect(received.filter((r) => r.path.startsWith("/slack"))).toHaveLength(1);
    expect(received.filter((r) => r.path.startsWith("/ntfy"))).toHaveLength(1);
    expect(received.some((r) => r.path === "/quiet")).toBe(false);
    expect(mails).toHaveLength(1);
  }, 300_000);
});
