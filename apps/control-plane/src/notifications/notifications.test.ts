/**
 * Notifications end to end in one control plane: local receivers on 127.0.0.1 speaking each
 * kind's API (one HTTP server, a path per kind, and an SMTP sink) get a settled deployment's
 * appDeploy and a failed one's appBuildError in their own formats, on the channels toggled for
 * them only; test<Kind> reports failures without the receiver's body; refused addresses are a
 * 400 naming the field; secrets are sealed and redacted; the outbox retries a receiver that was
 * down, two dispatchers deliver once, and pruning keeps the retention.
 */
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { SMTPServer } from "smtp-server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LOCAL_SERVER_ID } from "../agents/hub.ts";
import { recordEvent } from "../deployments/events.ts";
import { loadDeploymentTarget, settleTarget } from "../deployments/targets.ts";
import { storeMonitoringConfig } from "../monitoring/monitoring-config.ts";
import { instanceOrganizationId } from "../organizations/instance.ts";
import { createUserDirectly } from "../projects/test-support.ts";
import { type Session, startTestPlatform, type TestPlatform } from "../testing/harness.ts";
import { NotificationOutbox } from "./outbox.ts";

interface Received {
  path: string;
  headers: IncomingMessage["headers"];
  body: string;
}

let platform: TestPlatform;
let owner: Session;
let receiver: Server;
let base = "";
const received: Received[] = [];
/** Paths that answer 500 (a receiver that is down) or hang (a timeout). */
const failing = new Set<string>();
let smtp: SMTPServer;
let smtpPort = 0;
const mails: Array<{ from: string; to: string[]; raw: string; user: string; pass: string }> = [];
let applicationId = "";
let projectId = "";

const as = () => ({ token: owner.token });

beforeAll(async () => {
  receiver = createServer((request, response) => {
    let body = "";
    request.on("data", (chunk) => {
      body += chunk;
    });
    request.on("end", () => {
      const path = request.url ?? "";
      if ([...failing].some((prefix) => path.startsWith(prefix))) {
        response.writeHead(500, { "content-type": "text/plain" }).end("receiver secret body: do-not-echo");
        return;
      }
      received.push({ path, headers: request.headers, body });
      response.writeHead(200, { "content-type": "application/json" }).end('{"ok":true}');
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;

  smtp = new SMTPServer({
    disabledCommands: ["STARTTLS"],
    allowInsecureAuth: true,
    onAuth(auth, _session, callback) {
      callback(null, { user: `${auth.username}:${auth.password}` });
    },
    onData(stream, session, callback) {
      let raw = "";
      stream.on("data", (chunk) => {
        raw += chunk;
      });
      stream.on("end", () => {
        const [user = "", pass = ""] = String(session.user).split(":");
        mails.push({
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : "",
          to: session.envelope.rcptTo.map((r) => r.address),
          raw,
          user,
          pass,
        });
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => smtp.listen(0, "127.0.0.1", resolve));
  smtpPort = (smtp.server.address() as AddressInfo).port;

  platform = await startTestPlatform({
    PLATFORM_OUTBOUND_ALLOW: "127.0.0.0/8",
    PLATFORM_URL: "http://platform.example.com",
    PLATFORM_TELEGRAM_API_URL: `${base}/telegram`,
    PLATFORM_PUSHOVER_API_URL: `${base}/pushover`,
    PLATFORM_RESEND_API_URL: `${base}/resend`,
    PLATFORM_NOTIFICATION_RETRY_MS: "200",
  });
  owner = await platform.registerOwner();
  const project = await platform.mutateOk("project.create", { name: "shop" }, as());
  projectId = project.project.projectId;
  const application = await platform.mutateOk(
    "application.create",
    { name: "web", environmentId: project.environment.environmentId },
    as(),
  );
  applicationId = application.applicationId;
}, 60_000);

afterAll(async () => {
  await platform?.close();
  receiver?.close();
  smtp?.close();
});

/** Every kind's create input, pointing at the local receivers. */
const channels = (): Record<string, Record<string, unknown>> => ({
  Slack: { webhookUrl: `${base}/slack/T000/B000/XXXX`, channel: "#deploys" },
  Mattermost: { webhookUrl: `${base}/mattermost/hooks/abc`, channel: "town", username: "platform" },
  Discord: { webhookUrl: `${base}/discord/api/webhooks/1/tok`, decoration: true },
  Telegram: { botToken: "123456:ABC-def", chatId: "-1001", messageThreadId: "7" },
  Email: {
    smtpServer: "127.0.0.1",
    smtpPort,
    username: "mailer",
    password: "smtp-secret",
    fromAddress: "platform@example.com",
    toAddresses: ["ops@example.com", "dev@example.com"],
  },
  Resend: { apiKey: "re_secret", fromAddress: "platform@example.com", toAddresses: ["ops@example.com"] },
  Gotify: { serverUrl: `${base}/gotify`, appToken: "gotify-secret", priority: 8, decoration: false },
  Ntfy: { serverUrl: `${base}/ntfy`, topic: "deploys", accessToken: "tk_secret", priority: 4 },
  Pushover: { userKey: "user-secret", apiToken: "app-secret", priority: 2, retry: 60, expire: 3600 },
  Lark: { webhookUrl: `${base}/lark/open-apis/bot/v2/hook/x` },
  Teams: { webhookUrl: `${base}/teams/webhook/x` },
  Custom: { endpoint: `${base}/custom/hook`, headers: { "X-Api-Key": "custom-secret" } },
});

async function until<T>(check: () => T | undefined | Promise<T | undefined>, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    platform.ctx.notifications.kick();
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error("timed out waiting");
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

async function settle(status: "done" | "error") {
  const target = await loadDeploymentTarget(platform.ctx, {
    targetKind: "application",
    targetId: applicationId,
  });
  if (!target) throw new Error("no target");
  await platform.ctx.db
    .transaction()
    .execute((trx) =>
      settleTarget(
        trx,
        target,
        { deploymentId: "notification-test", title: "Manual deployment" },
        status === "done" ? { status } : { status, errorMessage: "the build failed: exit code 1" },
        platform.ctx.now(),
      ),
    );
}

describe("notification channels", () => {
  const ids: Record<string, string> = {};

  it("creates every kind with its defaults; getAll leaves the secrets out and the row holds them sealed", async () => {
    for (const [suffix, fields] of Object.entries(channels())) {
      // appDeploy on every channel; appBuildError only on Slack, Email and Custom.
      const buildError = ["Slack", "Email", "Custom"].includes(suffix);
      const created = await platform.mutateOk(
        `notification.create${suffix}`,
        { name: `${suffix} channel`, appDeploy: true, appBuildError: buildError, ...fields },
        as(),
      );
      ids[suffix] = created.notificationId;
      expect(created.databaseBackup).toBe(false);
    }
    const all = await platform.request("/api/notification.getAll", { token: owner.token });
    expect(all.status).toBe(200);
    const text = JSON.stringify(all.body);
    for (const secret of [
      "smtp-secret",
      "re_secret",
      "gotify-secret",
      "tk_secret",
      "custom-secret",
      "XXXX",
      "123456:ABC",
    ]) {
      expect(text).not.toContain(secret);
    }
    const gotify = (all.body as Array<Record<string, any>>).find((c) => c.notificationType === "gotify")!;
    expect(gotify.gotify).toMatchObject({ serverUrl: `${base}/gotify`, priority: 8 });
    expect(gotify.redacted).toEqual(["appToken"]);
    const rows = await platform.ctx.db.selectFrom("notifications").selectAll().execute();
    expect(JSON.stringify(rows)).not.toContain("smtp-secret");
    expect(JSON.stringify(rows)).not.toContain("custom-secret");
  });

  it("applies the bounds and defaults of spec 8", async () => {
    const bad = [
      ["Gotify", { serverUrl: `${base}/g`, appToken: "t", priority: 11 }, "priority"],
      ["Ntfy", { serverUrl: `${base}/n`, topic: "t", priority: 0 }, "priority"],
      ["Pushover", { userKey: "u", apiToken: "a", priority: 3 }, "priority"],
      ["Pushover", { userKey: "u", apiToken: "a", priority: 2, retry: 10, expire: 60 }, "retry"],
      ["Pushover", { userKey: "u", apiToken: "a", priority: 2, retry: 30, expire: 10801 }, "expire"],
      ["Pushover", { userKey: "u", apiToken: "a", priority: 2, retry: 30 }, "expire"],
      ["Email", { ...channels().Email, smtpPort: 0 }, "smtpPort"],
    ] as const;
    for (const [suffix, fields, field] of bad) {
      const response = await platform.mutate(`notification.create${suffix}`, { name: "x", ...fields }, as());
      expect(response.status, JSON.stringify(response.body)).toBe(400);
      expect(JSON.stringify(response.body)).toContain(field);
    }
    const ntfy = await platform.mutateOk(
      "notification.createNtfy",
      { name: "defaults", serverUrl: `${base}/n`, topic: "t" },
      as(),
    );
    expect(ntfy.ntfy.priority).toBe(3);
    const gotify = await platform.mutateOk(
      "notification.createGotify",
      { name: "defaults", serverUrl: `${base}/g`, appToken: "t" },
      as(),
    );
    expect(gotify.gotify.priority).toBe(5);
    expect(gotify.appDeploy).toBe(false);
    for (const id of [ntfy.notificationId, gotify.notificationId]) {
      await platform.mutateOk("notification.delete", { notificationId: id }, as());
    }
  });

  it("refuses metadata and private addresses with a 400 naming the field, at create, update and test", async () => {
    const create = await platform.mutate(
      "notification.createSlack",
      { name: "x", webhookUrl: "http://169.254.169.254/latest/meta-data" },
      as(),
    );
    expect(create.status).toBe(400);
    expect(create.body.error.data.fields).toEqual(["webhookUrl"]);
    const update = await platform.mutate(
      "notification.updateCustom",
      { notificationId: ids.Custom, endpoint: "http://10.1.2.3/hook" },
      as(),
    );
    expect(update.status).toBe(400);
    expect(update.body.error.data.fields).toEqual(["endpoint"]);
    const test = await platform.mutate(
      "notification.testEmail",
      { ...channels().Email, smtpServer: "169.254.169.254" },
      as(),
    );
    expect(test.status).toBe(400);
    expect(test.body.error.data.fields).toEqual(["smtpServer"]);
  });

  it("delivers appDeploy to every channel toggled for it, each in its own format", async () => {
    received.length = 0;
    mails.length = 0;
    await settle("done");
    await until(() => (received.length >= 11 && mails.length >= 1 ? true : undefined));
    const by = (prefix: string) => received.find((r) => r.path.startsWith(prefix))!;

    const custom = JSON.parse(by("/custom").body);
    expect(Object.keys(custom).sort()).toEqual(["data", "event", "timestamp"]);
    expect(custom.event).toBe("appDeploy");
    expect(new Date(custom.timestamp).toISOString()).toBe(custom.timestamp);
    expect(custom.data).toMatchObject({
      applicationName: "web",
      status: "success",
      message: "Manual deployment: deployed",
      projectName: "shop",
      environmentName: "production",
      projectId,
      serviceId: applicationId,
    });
    expect(custom.data.deploymentUrl).toContain("http://platform.example.com/api/deployment.all?input=");
    expect(by("/custom").headers["x-api-key"]).toBe("custom-secret");

    const slack = JSON.parse(by("/slack/T000/B000/XXXX").body);
    expect(slack.channel).toBe("#deploys");
    expect(slack.attachments[0]).toMatchObject({
      title: "Deployed web",
      text: "Manual deployment: deployed",
    });
    expect(JSON.parse(by("/mattermost").body)).toMatchObject({ channel: "town", username: "platform" });

    const discord = JSON.parse(by("/discord").body);
    expect(discord.embeds[0].title).toContain("Deployed web");
    expect(discord.embeds[0].fields).toContainEqual({ name: "Project", value: "shop", inline: true });

    const telegram = by("/telegram");
    expect(telegram.path).toBe("/telegram/bot123456:ABC-def/sendMessage");
    expect(JSON.parse(telegram.body)).toMatchObject({
      chat_id: "-1001",
      parse_mode: "HTML",
      message_thread_id: 7,
    });

    const resend = by("/resend");
    expect(resend.path).toBe("/resend/emails");
    expect(resend.headers.authorization).toBe("Bearer re_secret");
    expect(JSON.parse(resend.body)).toMatchObject({
      from: "platform@example.com",
      to: ["ops@example.com"],
      subject: "Deployed web",
    });

    const gotify = by("/gotify");
    expect(gotify.path).toBe("/gotify/message");
    expect(gotify.headers["x-gotify-key"]).toBe("gotify-secret");
    expect(JSON.parse(gotify.body)).toMatchObject({ title: "Deployed web", priority: 8 });

    const ntfy = by("/ntfy");
    expect(ntfy.path).toBe("/ntfy/deploys");
    expect(ntfy.headers.priority).toBe("4");
    expect(ntfy.headers.authorization).toBe("Bearer tk_secret");
    expect(ntfy.body).toContain("Manual deployment: deployed");

    const pushover = by("/pushover");
    expect(pushover.path).toBe("/pushover/1/messages.json");
    const form = new URLSearchParams(pushover.body);
    expect(Object.fromEntries(form)).toMatchObject({
      token: "app-secret",
      user: "user-secret",
      priority: "2",
      retry: "60",
      expire: "3600",
    });

    expect(JSON.parse(by("/lark").body)).toMatchObject({ msg_type: "interactive" });
    expect(JSON.parse(by("/teams").body).attachments[0].contentType).toBe(
      "application/vnd.microsoft.card.adaptive",
    );

    expect(mails[0]).toMatchObject({
      to: ["ops@example.com", "dev@example.com"],
      user: "mailer",
      pass: "smtp-secret",
    });
    expect(mails[0]!.raw).toContain("Subject: Deployed web");

    // A delivery is marked delivered once its receiver has answered: the row may lag the receipt.
    const delivered = async () => {
      const deliveries = await platform.request("/api/notification.deliveries", { token: owner.token });
      return (deliveries.body as Array<{ status: string }>).filter((d) => d.status === "delivered");
    };
    await until(async () => ((await delivered()).length >= 12 ? true : undefined));
    expect(await delivered()).toHaveLength(12);
  });

  it("delivers appBuildError only to the channels toggled for it", async () => {
    received.length = 0;
    mails.length = 0;
    await settle("error");
    await until(() => (received.length >= 2 && mails.length >= 1 ? true : undefined));
    await new Promise((resolve) => setTimeout(resolve, 500));
    platform.ctx.notifications.kick();
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(received.map((r) => r.path.split("/")[1]).sort()).toEqual(["custom", "slack"]);
    const custom = JSON.parse(received.find((r) => r.path.startsWith("/custom"))!.body);
    expect(custom).toMatchObject({
      event: "appBuildError",
      data: {
        applicationName: "web",
        status: "error",
        message: "Manual deployment: the build failed: exit code 1",
      },
    });
    expect(mails).toHaveLength(1);
  });

  it("test<Kind> reports a non-2xx answer, a refused connection and a redirect without the body", async () => {
    failing.add("/broken");
    const non2xx = await platform.mutate("notification.testCustom", { endpoint: `${base}/broken` }, as());
    expect(non2xx.status).toBe(400);
    expect(non2xx.body.error.message).toContain("HTTP 500");
    expect(JSON.stringify(non2xx.body)).not.toContain("do-not-echo");
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const port = (closed.address() as AddressInfo).port;
    closed.close();
    const refused = await platform.mutate(
      "notification.testSlack",
      { webhookUrl: `http://127.0.0.1:${port}/x` },
      as(),
    );
    expect(refused.status).toBe(400);
    expect(refused.body.error.message).toContain("connection refused");
    const ok = await platform.mutate("notification.testTeams", { webhookUrl: `${base}/teams/ok` }, as());
    expect(ok.status).toBe(200);
    expect(platform.logLines.join("\n")).not.toContain("do-not-echo");
  });

  it("lets members read the list but not create, and answers 404 for another organization's channel", async () => {
    const member = await platform.addMember(owner, "member");
    const create = await platform.mutate(
      "notification.createSlack",
      { name: "x", webhookUrl: `${base}/slack/x` },
      { token: member.token },
    );
    expect(create.status).toBe(403);
    const other = await createUserDirectly(platform, { email: "other@example.com" });
    const foreign = await platform.mutate(
      "notification.updateSlack",
      { notificationId: ids.Slack, name: "taken" },
      { token: other.token },
    );
    expect(foreign.status).toBe(404);
    const remove = await platform.mutate(
      "notification.delete",
      { notificationId: ids.Slack },
      { token: other.token },
    );
    expect(remove.status).toBe(404);
  });

  it("retries a receiver that was down until it answers, and two dispatchers deliver once", async () => {
    failing.add("/custom");
    received.length = 0;
    await settle("done");
    const second = new NotificationOutbox(platform.ctx, "second-instance", { pollMs: 50 });
    await second.start();
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    const pending = await platform.ctx.db
      .selectFrom("notificationDeliveries")
      .select(["attempts", "lastError", "status"])
      .where("notificationId", "=", ids.Custom as string)
      .where("status", "=", "pending")
      .execute();
    expect(pending.length).toBe(1);
    expect(pending[0]!.attempts).toBeGreaterThan(1);
    expect(pending[0]!.lastError).toContain("HTTP 500");
    failing.delete("/custom");
    await until(() => (received.some((r) => r.path.startsWith("/custom")) ? true : undefined));
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    await second.close();
    expect(received.filter((r) => r.path.startsWith("/custom"))).toHaveLength(1);
    expect(received.filter((r) => r.path.startsWith("/teams"))).toHaveLength(1);
  });

  it("limits a channel to its projects", async () => {
    const other = await platform.mutateOk("project.create", { name: "elsewhere" }, as());
    const limited = await platform.mutateOk(
      "notification.createCustom",
      {
        name: "limited",
        appDeploy: true,
        endpoint: `${base}/limited`,
        projectIds: [other.project.projectId],
      },
      as(),
    );
    expect(limited.projectIds).toEqual([other.project.projectId]);
    received.length = 0;
    await settle("done");
    await until(() => (received.some((r) => r.path.startsWith("/teams")) ? true : undefined));
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(received.some((r) => r.path.startsWith("/limited"))).toBe(false);
  });

  it("delivers platformRestart, dockerCleanup, serverThreshold and volumeBackup only to the channels toggled for each", async () => {
    const toggles = ["platformRestart", "dockerCleanup", "serverThreshold", "volumeBackup"] as const;
    const channelOf: Record<string, string> = {};
    for (const toggle of toggles) {
      const created = await platform.mutateOk(
        "notification.createCustom",
        { name: toggle, [toggle]: true, endpoint: `${base}/only-${toggle}` },
        as(),
      );
      channelOf[toggle] = created.notificationId;
    }
    const recordAll = async (kinds: readonly (typeof toggles)[number][]) => {
      for (const kind of kinds) {
        await recordEvent(
          platform.ctx.db,
          {
            organizationId: owner.user.organizationId,
            kind,
            applicationId: kind === "volumeBackup" ? applicationId : null,
            payload: { applicationName: "web", status: "success", message: `a ${kind}` },
          },
          platform.ctx.now(),
        );
      }
    };
    const eventsAt = (path: string) =>
      received.filter((r) => r.path === path).map((r) => JSON.parse(r.body).event as string);

    received.length = 0;
    await recordAll(toggles);
    await until(() => (toggles.every((t) => eventsAt(`/only-${t}`).length > 0) ? true : undefined));
    await new Promise((resolve) => setTimeout(resolve, 500));
    platform.ctx.notifications.kick();
    await new Promise((resolve) => setTimeout(resolve, 300));
    for (const toggle of toggles) expect(eventsAt(`/only-${toggle}`), toggle).toEqual([toggle]);

    // update<Kind> moves a channel's toggles: dockerCleanup off, serverThreshold on.
    await platform.mutateOk(
      "notification.updateCustom",
      { notificationId: channelOf.dockerCleanup, dockerCleanup: false, serverThreshold: true },
      as(),
    );
    received.length = 0;
    await recordAll(["dockerCleanup", "serverThreshold"]);
    await until(() => (eventsAt("/only-dockerCleanup").length > 0 ? true : undefined));
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(eventsAt("/only-dockerCleanup")).toEqual(["serverThreshold"]);

    const limited = await platform.query(
      "notification.deliveries",
      { notificationId: channelOf.dockerCleanup, limit: 1 },
      as(),
    );
    expect(limited.body).toHaveLength(1);
    expect(limited.body[0].event).toBe("serverThreshold");
    for (const id of Object.values(channelOf)) {
      await platform.mutateOk("notification.delete", { notificationId: id }, as());
    }
  });

  it("takes Dokploy's dokployRestart and dokployBackup (its CLI's names) for platformRestart and platformBackup; a platformBackup event reaches the channels toggled for it", async () => {
    const backups = await platform.mutateOk(
      "notification.createCustom",
      { name: "own-backups", dokployBackup: true, endpoint: `${base}/own-backups` },
      as(),
    );
    expect(backups).toMatchObject({ platformBackup: true, platformRestart: false, databaseBackup: false });
    const restarts = await platform.mutateOk(
      "notification.createCustom",
      { name: "restarts", dokployRestart: true, endpoint: `${base}/restarts` },
      as(),
    );
    expect(restarts).toMatchObject({ platformRestart: true, platformBackup: false });

    // Both names of one toggle, disagreeing: a 400 naming Dokploy's, nothing created or changed.
    const both = await platform.mutate(
      "notification.createCustom",
      { name: "both", platformRestart: true, dokployRestart: false, endpoint: `${base}/both` },
      as(),
    );
    expect(both.status).toBe(400);
    expect(both.body.error.data.fields).toEqual(["dokployRestart"]);
    const clash = await platform.mutate(
      "notification.updateCustom",
      { notificationId: restarts.notificationId, platformBackup: true, dokployBackup: false },
      as(),
    );
    expect(clash.body.error.data.fields).toEqual(["dokployBackup"]);
    // organizationId (Dokploy's update<Kind> sends it) must be the caller's.
    const foreign = await platform.mutate(
      "notification.updateCustom",
      {
        notificationId: restarts.notificationId,
        organizationId: "another-organization",
        dokployBackup: true,
      },
      as(),
    );
    expect(foreign.status).toBe(404);
    const same = await platform.mutate(
      "notification.updateCustom",
      {
        notificationId: restarts.notificationId,
        organizationId: owner.user.organizationId,
        dokployRestart: false,
      },
      as(),
    );
    expect(same.status, JSON.stringify(same.body)).toBe(200);
    const stored = (
      await platform.query("notification.one", { notificationId: restarts.notificationId }, as())
    ).body;
    expect(stored).toMatchObject({ platformRestart: false, platformBackup: false });

    received.length = 0;
    await recordEvent(
      platform.ctx.db,
      {
        organizationId: owner.user.organizationId,
        kind: "platformBackup",
        applicationId: null,
        payload: { applicationName: "Control plane", status: "success", message: "backup done" },
      },
      platform.ctx.now(),
    );
    await until(() => (received.some((r) => r.path === "/own-backups") ? true : undefined));
    expect(JSON.parse(received.find((r) => r.path === "/own-backups")!.body).event).toBe("platformBackup");
    const quiet = await platform.query(
      "notification.deliveries",
      { notificationId: restarts.notificationId },
      as(),
    );
    expect(quiet.body).toEqual([]);
    for (const id of [backups.notificationId, restarts.notificationId]) {
      await platform.mutateOk("notification.delete", { notificationId: id }, as());
    }
  });

  it("limits a channel to its services, at create and at update", async () => {
    const project = await platform.mutateOk("project.create", { name: "services" }, as());
    const otherApp = await platform.mutateOk(
      "application.create",
      { name: "other", environmentId: project.environment.environmentId },
      as(),
    );
    const mine = await platform.mutateOk(
      "notification.createCustom",
      { name: "mine", appDeploy: true, endpoint: `${base}/svc-mine`, serviceIds: [applicationId] },
      as(),
    );
    const other = await platform.mutateOk(
      "notification.createCustom",
      { name: "other", appDeploy: true, endpoint: `${base}/svc-other`, serviceIds: [otherApp.applicationId] },
      as(),
    );
    received.length = 0;
    await settle("done");
    await until(() => (received.some((r) => r.path === "/svc-mine") ? true : undefined));
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(received.some((r) => r.path === "/svc-other")).toBe(false);

    await platform.mutateOk(
      "notification.updateCustom",
      { notificationId: other.notificationId, serviceIds: [applicationId] },
      as(),
    );
    received.length = 0;
    await settle("done");
    await until(() => (received.some((r) => r.path === "/svc-other") ? true : undefined));
    for (const id of [mine.notificationId, other.notificationId]) {
      await platform.mutateOk("notification.delete", { notificationId: id }, as());
    }
  });

  it("update<Kind> takes Dokploy's <kind>Id naming the same channel; another channel's is a 404", async () => {
    const kindIds: Record<string, string> = {
      Slack: "slackId",
      Mattermost: "mattermostId",
      Discord: "discordId",
      Telegram: "telegramId",
      Email: "emailId",
      Resend: "resendId",
      Gotify: "gotifyId",
      Ntfy: "ntfyId",
      Pushover: "pushoverId",
      Lark: "larkId",
      Teams: "teamsId",
      Custom: "customId",
    };
    for (const [suffix, idKey] of Object.entries(kindIds)) {
      const same = await platform.mutate(
        `notification.update${suffix}`,
        { notificationId: ids[suffix], [idKey]: ids[suffix], dockerCleanup: true },
        as(),
      );
      expect(same.status, `${suffix}: ${JSON.stringify(same.body)}`).toBe(200);
      const another = suffix === "Custom" ? ids.Slack : ids.Custom;
      const foreign = await platform.mutate(
        `notification.update${suffix}`,
        { notificationId: ids[suffix], [idKey]: another, dockerCleanup: false },
        as(),
      );
      expect(foreign.status, suffix).toBe(404);
    }
    const all = (await platform.query("notification.getAll", {}, as())).body as Array<Record<string, any>>;
    for (const suffix of Object.keys(kindIds)) {
      expect(all.find((c) => c.notificationId === ids[suffix])!.dockerCleanup, suffix).toBe(true);
    }
  });

  it("test<Kind> sends a test notice through each kind's fields and stores nothing", async () => {
    received.length = 0;
    mails.length = 0;
    const stored = await platform.ctx.db.selectFrom("notifications").select("notificationId").execute();
    for (const [suffix, fields] of Object.entries(channels())) {
      const answer = await platform.mutate(`notification.test${suffix}`, fields, as());
      expect(answer.status, `${suffix}: ${JSON.stringify(answer.body)}`).toBe(200);
    }
    const by = (path: string) => received.find((r) => r.path === path)!;
    expect(received.map((r) => r.path).sort()).toEqual(
      [
        "/slack/T000/B000/XXXX",
        "/mattermost/hooks/abc",
        "/discord/api/webhooks/1/tok",
        "/telegram/bot123456:ABC-def/sendMessage",
        "/resend/emails",
        "/gotify/message",
        "/ntfy/deploys",
        "/pushover/1/messages.json",
        "/lark/open-apis/bot/v2/hook/x",
        "/teams/webhook/x",
        "/custom/hook",
      ].sort(),
    );
    expect(JSON.parse(by("/slack/T000/B000/XXXX").body).channel).toBe("#deploys");
    expect(JSON.parse(by("/mattermost/hooks/abc").body)).toMatchObject({
      channel: "town",
      username: "platform",
    });
    expect(JSON.parse(by("/telegram/bot123456:ABC-def/sendMessage").body)).toMatchObject({
      chat_id: "-1001",
      message_thread_id: 7,
    });
    expect(by("/resend/emails").headers.authorization).toBe("Bearer re_secret");
    expect(JSON.parse(by("/resend/emails").body)).toMatchObject({
      from: "platform@example.com",
      to: ["ops@example.com"],
    });
    expect(by("/gotify/message").headers["x-gotify-key"]).toBe("gotify-secret");
    expect(JSON.parse(by("/gotify/message").body).priority).toBe(8);
    expect(by("/ntfy/deploys").headers).toMatchObject({ authorization: "Bearer tk_secret", priority: "4" });
    expect(Object.fromEntries(new URLSearchParams(by("/pushover/1/messages.json").body))).toMatchObject({
      token: "app-secret",
      user: "user-secret",
      priority: "2",
      retry: "60",
      expire: "3600",
    });
    expect(by("/custom/hook").headers["x-api-key"]).toBe("custom-secret");
    // Only the test notice's mail: a delivery of an earlier test's event may still arrive.
    const testMails = mails.filter((mail) => mail.raw.includes("Test notification"));
    expect(testMails).toHaveLength(1);
    expect(testMails[0]).toMatchObject({
      from: "platform@example.com",
      to: ["ops@example.com", "dev@example.com"],
      user: "mailer",
      pass: "smtp-secret",
    });
    expect(await platform.ctx.db.selectFrom("notifications").select("notificationId").execute()).toEqual(
      stored,
    );
  });

  it("prunes delivered rows past the retention", async () => {
    await platform.ctx.db
      .updateTable("notificationDeliveries")
      .set({ updatedAt: "2000-01-01T00:00:00Z" })
      .where("status", "=", "delivered")
      .execute();
    await platform.ctx.db.updateTable("events").set({ createdAt: "2000-01-01T00:00:00Z" }).execute();
    const pruned = await platform.ctx.notifications.prune();
    expect(pruned.deliveries).toBeGreaterThan(10);
    expect(pruned.events).toBeGreaterThan(0);
  });
});

describe("Dokploy's names: all, one, remove, getEmailProviders, test<Kind>Connection, receiveNotification", () => {
  it("test<Kind>Connection sends each kind's test notice as test<Kind> does, and stores nothing", async () => {
    received.length = 0;
    mails.length = 0;
    const stored = await platform.ctx.db.selectFrom("notifications").select("notificationId").execute();
    for (const [suffix, fields] of Object.entries(channels())) {
      const answer = await platform.mutate(`notification.test${suffix}Connection`, fields, as());
      expect(answer.status, `${suffix}: ${JSON.stringify(answer.body)}`).toBe(200);
    }
    expect(new Set(received.map((r) => r.path.split("/")[1]))).toEqual(
      new Set([
        "slack",
        "mattermost",
        "discord",
        "telegram",
        "resend",
        "gotify",
        "ntfy",
        "pushover",
        "lark",
        "teams",
        "custom",
      ]),
    );
    expect(mails.filter((mail) => mail.raw.includes("Test notification"))).toHaveLength(1);
    const refused = await platform.mutate(
      "notification.testSlackConnection",
      { webhookUrl: "http://169.254.169.254/latest" },
      as(),
    );
    expect(refused.status).toBe(400);
    expect(refused.body.error.data.fields).toContain("webhookUrl");
    expect(await platform.ctx.db.selectFrom("notifications").select("notificationId").execute()).toEqual(
      stored,
    );
  });

  it("all and one answer the channels without secrets, getEmailProviders only the mail kinds, remove deletes", async () => {
    const email = await platform.mutateOk(
      "notification.createEmail",
      { name: "mailer", ...channels().Email },
      as(),
    );
    const resend = await platform.mutateOk(
      "notification.createResend",
      { name: "resender", ...channels().Resend },
      as(),
    );
    const slack = await platform.mutateOk(
      "notification.createSlack",
      { name: "chat", ...channels().Slack },
      as(),
    );

    const all = await platform.request("/api/notification.all", { token: owner.token });
    expect(all.status).toBe(200);
    const allIds = (all.body as Array<{ notificationId: string }>).map((c) => c.notificationId);
    expect(allIds).toEqual(
      expect.arrayContaining([email.notificationId, resend.notificationId, slack.notificationId]),
    );
    expect(JSON.stringify(all.body)).not.toContain("smtp-secret");

    const one = await platform.request(
      `/api/notification.one?input=${encodeURIComponent(JSON.stringify({ notificationId: email.notificationId }))}`,
      { token: owner.token },
    );
    expect(one.status).toBe(200);
    expect(one.body).toMatchObject({
      notificationId: email.notificationId,
      name: "mailer",
      notificationType: "email",
    });
    expect(one.body.redacted).toEqual(["password"]);
    expect(JSON.stringify(one.body)).not.toContain("smtp-secret");

    const providers = await platform.request("/api/notification.getEmailProviders", { token: owner.token });
    expect(providers.status).toBe(200);
    const kinds = new Set(
      (providers.body as Array<{ notificationType: string }>).map((c) => c.notificationType),
    );
    expect(kinds).toEqual(new Set(["email", "resend"]));
    const providerIds = (providers.body as Array<{ notificationId: string }>).map((c) => c.notificationId);
    expect(providerIds).toEqual(expect.arrayContaining([email.notificationId, resend.notificationId]));
    expect(providerIds).not.toContain(slack.notificationId);
    expect(JSON.stringify(providers.body)).not.toContain("re_secret");

    const other = await createUserDirectly(platform, { email: "stranger@example.com" });
    const foreignOne = await platform.request(
      `/api/notification.one?input=${encodeURIComponent(JSON.stringify({ notificationId: email.notificationId }))}`,
      { token: other.token },
    );
    expect(foreignOne.status).toBe(404);
    const foreignRemove = await platform.mutate(
      "notification.remove",
      { notificationId: email.notificationId },
      { token: other.token },
    );
    expect(foreignRemove.status).toBe(404);
    const theirs = await platform.request("/api/notification.getEmailProviders", { token: other.token });
    expect(theirs.body).toEqual([]);

    await platform.mutateOk("notification.remove", { notificationId: slack.notificationId }, as());
    const gone = await platform.request(
      `/api/notification.one?input=${encodeURIComponent(JSON.stringify({ notificationId: slack.notificationId }))}`,
      { token: owner.token },
    );
    expect(gone.status).toBe(404);
  });

  it("receiveNotification records a threshold alert for the server holding the token; another token is a 400", async () => {
    const organizationId = await instanceOrganizationId(platform.ctx.db);
    expect(organizationId).toBe(owner.user.organizationId);
    await storeMonitoringConfig(platform.ctx, organizationId!, LOCAL_SERVER_ID, {
      server: {
        refreshRate: 60,
        port: 4500,
        token: "monitoring-token-of-this-machine",
        urlCallback: "http://127.0.0.1:1/callback",
        retentionDays: 7,
        cronJob: "0 0 * * *",
        thresholds: { cpu: 80, memory: 90 },
      },
      containers: { refreshRate: 60 },
    });
    const alert = {
      ServerType: "Dokploy",
      Type: "CPU",
      Value: 97.5,
      Threshold: 80,
      Message: "CPU usage is above the threshold",
      Timestamp: "2026-11-02T10:00:00.000Z",
    };
    const wrong = await platform.mutate("notification.receiveNotification", {
      ...alert,
      Token: "not-the-token",
    });
    expect(wrong.status).toBe(400);
    // A remote server's alert must hold a remote server's token, not this machine's.
    const remote = await platform.mutate("notification.receiveNotification", {
      ...alert,
      ServerType: "Remote",
      Token: "monitoring-token-of-this-machine",
    });
    expect(remote.status).toBe(400);
    const before = await platform.ctx.db
      .selectFrom("events")
      .select("eventId")
      .where("kind", "=", "serverThreshold")
      .execute();
    const ok = await platform.mutate("notification.receiveNotification", {
      ...alert,
      Token: "monitoring-token-of-this-machine",
    });
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    const events = await platform.ctx.db
      .selectFrom("events")
      .selectAll()
      .where("kind", "=", "serverThreshold")
      .where("organizationId", "=", organizationId!)
      .execute();
    expect(events).toHaveLength(before.length + 1);
    const recorded = events.find((e) => !before.some((b) => b.eventId === e.eventId))!;
    expect(JSON.stringify(recorded.payload)).toContain("CPU usage is above the threshold");
    expect(recorded.payload).toMatchObject({
      type: "CPU",
      value: "97.50",
      threshold: "80",
      serverId: LOCAL_SERVER_ID,
    });
  });
});
