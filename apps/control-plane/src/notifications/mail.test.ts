/**
 * What the Email and Resend channels carry besides events: user.sendInvitation's secret accept
 * link and the confirmation link of a changed account email; and the backup events
 * (databaseBackup from a settled backup run, the volumeBackup hook) reaching the channels
 * toggled for them through the outbox, and no others; no header is added to a mail by CR/LF in
 * what reaches its subject or addresses (refused by the API, and folded by the mailer for a
 * stored value that holds them).
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { SMTPServer } from "smtp-server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadDeploymentTarget, settleTarget } from "../deployments/targets.ts";
import { createUserDirectly } from "../projects/test-support.ts";
import { type Session, startTestPlatform, type TestPlatform } from "../testing/harness.ts";
import { recordBackupEvent } from "./backup-events.ts";

let platform: TestPlatform;
let owner: Session;
let receiver: Server;
let base = "";
const received: Array<{ path: string; body: string }> = [];
let smtp: SMTPServer;
let smtpPort = 0;
const mails: Array<{ to: string[]; raw: string }> = [];

const as = (session: Session = owner) => ({ token: session.token });

/** The text of a quoted-printable mail, soft line breaks joined. */
const decodeQuotedPrintable = (raw: string) =>
  raw
    .replace(/=\r?\n/g, "")
    .replace(/=([0-9A-F]{2})/g, (_, hex) => String.fromCharCode(Number.parseInt(hex, 16)));

async function until<T>(check: () => T | undefined, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    platform.ctx.notifications.kick();
    const value = check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error("timed out waiting");
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

beforeAll(async () => {
  receiver = createServer((request, response) => {
    let body = "";
    request.on("data", (chunk) => {
      body += chunk;
    });
    request.on("end", () => {
      received.push({ path: request.url ?? "", body });
      response.writeHead(200, { "content-type": "application/json" }).end('{"id":"x"}');
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
        mails.push({ to: session.envelope.rcptTo.map((r) => r.address), raw: decodeQuotedPrintable(raw) });
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => smtp.listen(0, "127.0.0.1", resolve));
  smtpPort = (smtp.server.address() as AddressInfo).port;
  platform = await startTestPlatform({
    PLATFORM_OUTBOUND_ALLOW: "127.0.0.0/8",
    PLATFORM_URL: "http://platform.example.com/",
    PLATFORM_RESEND_API_URL: `${base}/resend`,
    PLATFORM_NOTIFICATION_RETRY_MS: "200",
  });
  owner = await platform.registerOwner();
}, 60_000);

afterAll(async () => {
  await platform?.close();
  receiver?.close();
  smtp?.close();
});

const emailChannel = () => ({
  smtpServer: "127.0.0.1",
  smtpPort,
  username: "mailer",
  password: "smtp-secret",
  fromAddress: "platform@example.com",
  toAddresses: ["ops@example.com"],
});

describe("header injection", () => {
  const injected = "Acme\r\nBcc: attacker@example.com\r\nX-Injected: yes";

  it("refuses CR/LF in an organization name, a sender, a recipient or an invited address (400 naming it)", async () => {
    const { organizationId } = owner.user;
    const renamed = await platform.mutate("organization.update", { organizationId, name: injected }, as());
    expect(renamed.status).toBe(400);
    expect(renamed.body.error.data.fields).toEqual(["name"]);
    const channel = emailChannel();
    for (const [field, fields] of [
      ["fromAddress", { fromAddress: "platform@example.com\r\nBcc: attacker@example.com" }],
      ["toAddresses", { toAddresses: ["ops@example.com\r\nX-Injected: yes"] }],
    ] as const) {
      const created = await platform.mutate(
        "notification.createEmail",
        { name: "smtp", ...channel, ...fields },
        as(),
      );
      expect(created.status, field).toBe(400);
      expect(created.body.error.data.fields.join(), field).toContain(field);
    }
    const invited = await platform.mutate(
      "organization.inviteMember",
      { email: "x@example.com\r\nBcc: attacker@example.com", role: "member" },
      as(),
    );
    expect(invited.status).toBe(400);
    expect(invited.body.error.data.fields).toEqual(["email"]);
  });

  it("adds no header and no recipient for a stored name holding CR/LF (the invitation's subject)", async () => {
    const email = await platform.mutateOk(
      "notification.createEmail",
      { name: "smtp", ...emailChannel() },
      as(),
    );
    const invited = await platform.mutateOk(
      "organization.inviteMember",
      { email: "header-check@example.com", role: "member" },
      as(),
    );
    // A row written before names were checked (or by an import): the API never stores one.
    const { organizationId } = owner.user;
    const { name } = await platform.ctx.db
      .selectFrom("organizations")
      .select("name")
      .where("organizationId", "=", organizationId)
      .executeTakeFirstOrThrow();
    await platform.ctx.db
      .updateTable("organizations")
      .set({ name: injected })
      .where("organizationId", "=", organizationId)
      .execute();
    mails.length = 0;
    try {
      await platform.mutateOk(
        "user.sendInvitation",
        { invitationId: invited.id, notificationId: email.notificationId },
        as(),
      );
    } finally {
      await platform.ctx.db
        .updateTable("organizations")
        .set({ name })
        .where("organizationId", "=", organizationId)
        .execute();
      // The later tests mail through the organization's oldest channel: not this one.
      await platform.mutateOk("notification.delete", { notificationId: email.notificationId }, as());
    }
    expect(mails).toHaveLength(1);
    expect(mails[0]!.to).toEqual(["header-check@example.com"]);
    const headers = mails[0]!.raw.split(/\r?\n\r?\n/)[0]!;
    // Every header line is a header of the mailer's (or a folded continuation of one).
    const names = headers
      .split(/\r?\n/)
      .filter((line) => !/^[ \t]/.test(line))
      .map((line) => line.split(":")[0]!.toLowerCase());
    expect(names).not.toContain("bcc");
    expect(names).not.toContain("x-injected");
    expect(names.filter((header) => header === "subject")).toHaveLength(1);
  });
});

describe("user.sendInvitation", () => {
  it("mails the invitation with a new secret accept link through a Resend channel; the link accepts it", async () => {
    const resend = await platform.mutateOk(
      "notification.createResend",
      {
        name: "mail",
        apiKey: "re_secret",
        fromAddress: "platform@example.com",
        toAddresses: ["ops@example.com"],
      },
      as(),
    );
    const invited = await platform.mutateOk(
      "organization.inviteMember",
      { email: "newcomer@example.com", role: "member" },
      as(),
    );
    received.length = 0;
    await platform.mutateOk(
      "user.sendInvitation",
      { invitationId: invited.id, notificationId: resend.notificationId },
      as(),
    );
    expect(received).toHaveLength(1);
    expect(received[0]!.path).toBe("/resend/emails");
    const mail = JSON.parse(received[0]!.body);
    expect(mail.to).toEqual(["newcomer@example.com"]);
    expect(mail.from).toBe("platform@example.com");
    const token = /http:\/\/platform\.example\.com\/invitation\?token=([A-Za-z0-9_-]+)/.exec(mail.text)?.[1];
    expect(token).toBeDefined();
    expect(mail.html).toContain(`/invitation?token=${token}`);
    // The token answered by inviteMember is replaced; the mailed one works.
    const stale = await platform.mutate("auth.register", {
      email: "newcomer@example.com",
      password: "correct-horse-battery",
      name: "Newcomer",
      token: invited.token,
    });
    expect(stale.status).toBe(404);
    const registered = await platform.mutate("auth.register", {
      email: "newcomer@example.com",
      password: "correct-horse-battery",
      name: "Newcomer",
      token,
    });
    expect(registered.status).toBe(200);
  });

  it("sends through an Email channel, refuses other kinds, and answers 404 for another organization's ids", async () => {
    const email = await platform.mutateOk(
      "notification.createEmail",
      { name: "smtp", ...emailChannel() },
      as(),
    );
    const slack = await platform.mutateOk(
      "notification.createSlack",
      { name: "chat", webhookUrl: `${base}/slack/x` },
      as(),
    );
    const invited = await platform.mutateOk(
      "organization.inviteMember",
      { email: "second@example.com", role: "member" },
      as(),
    );
    mails.length = 0;
    await platform.mutateOk(
      "user.sendInvitation",
      { invitationId: invited.id, notificationId: email.notificationId },
      as(),
    );
    expect(mails).toHaveLength(1);
    expect(mails[0]!.to).toEqual(["second@example.com"]);
    expect(mails[0]!.raw).toMatch(/http:\/\/platform\.example\.com\/invitation\?token=[A-Za-z0-9_-]{20,}/);

    const wrongKind = await platform.mutate(
      "user.sendInvitation",
      { invitationId: invited.id, notificationId: slack.notificationId },
      as(),
    );
    expect(wrongKind.status).toBe(400);
    expect(wrongKind.body.error.data.fields).toEqual(["notificationId"]);

    const stranger = await createUserDirectly(platform, { email: "stranger@example.com" });
    const foreignInvitation = await platform.mutate(
      "user.sendInvitation",
      { invitationId: invited.id, notificationId: email.notificationId },
      as(stranger),
    );
    expect(foreignInvitation.status).toBe(404);
    const theirs = await platform.mutateOk(
      "organization.inviteMember",
      { email: "theirs@example.com", role: "member" },
      as(stranger),
    );
    const foreignChannel = await platform.mutate(
      "user.sendInvitation",
      { invitationId: theirs.id, notificationId: email.notificationId },
      as(stranger),
    );
    expect(foreignChannel.status).toBe(404);
    expect(foreignChannel.body.error.message).toMatch(/Notification/);

    const member = await platform.addMember(owner, "member");
    const denied = await platform.mutate(
      "user.sendInvitation",
      { invitationId: invited.id, notificationId: email.notificationId },
      as(member),
    );
    expect(denied.status).toBe(403);

    // A mail server that cannot be reached: a 400 saying so, and the old link still works.
    const before = await platform.ctx.db
      .selectFrom("invitations")
      .select("tokenHash")
      .where("invitationId", "=", invited.id)
      .executeTakeFirstOrThrow();
    smtp.close();
    const down = await platform.mutate(
      "user.sendInvitation",
      { invitationId: invited.id, notificationId: email.notificationId },
      as(),
    );
    expect(down.status).toBe(400);
    const after = await platform.ctx.db
      .selectFrom("invitations")
      .select("tokenHash")
      .where("invitationId", "=", invited.id)
      .executeTakeFirstOrThrow();
    expect(after.tokenHash).toBe(before.tokenHash);
    await new Promise<void>((resolve) => smtp.listen(smtpPort, "127.0.0.1", resolve));
  });
});

describe("email confirmation", () => {
  it("mails the link confirming a new address to it; user.confirmEmail applies it", async () => {
    const member = await platform.addMember(owner, "member", "before@example.com");
    received.length = 0;
    await platform.mutateOk(
      "user.update",
      { email: "after@example.com", currentPassword: "correct-horse-battery" },
      as(member),
    );
    // The organization's oldest mail channel is the Resend one.
    expect(received.map((r) => JSON.parse(r.body).to)).toEqual([["after@example.com"]]);
    const token = /http:\/\/platform\.example\.com\/confirm-email\?token=([A-Za-z0-9_-]+)/.exec(
      JSON.parse(received[0]!.body).text,
    )?.[1];
    expect(token).toBeDefined();

    const wrong = await platform.mutate("user.confirmEmail", { token: "not-the-token" }, as(member));
    expect(wrong.status).toBe(404);
    expect(wrong.body.error.data.fields).toEqual(["token"]);
    // Only the user who asked can use it.
    expect((await platform.mutate("user.confirmEmail", { token }, as())).status).toBe(404);

    await platform.mutateOk("user.confirmEmail", { token }, as(member));
    const me = (await platform.query("user.get", {}, as(member))).body;
    expect(me.email).toBe("after@example.com");
    expect(me.pendingEmail).toBeNull();
    expect((await platform.mutate("user.confirmEmail", { token }, as(member))).status).toBe(404);
  });
});

describe("backup events", () => {
  it("delivers a backup run's databaseBackup and the volumeBackup hook to the channels toggled for them only", async () => {
    const project = await platform.mutateOk("project.create", { name: "Shop" }, as());
    const { postgresId } = await platform.mutateOk(
      "postgres.create",
      {
        name: "Orders",
        appName: "notif-backup-pg",
        environmentId: project.environment.environmentId,
        databaseName: "shop",
        databaseUser: "shop",
        databasePassword: "Pg#notif1",
      },
      as(),
    );
    await platform.mutateOk(
      "notification.createCustom",
      { name: "backups", databaseBackup: true, volumeBackup: true, endpoint: `${base}/custom/backups` },
      as(),
    );
    await platform.mutateOk(
      "notification.createCustom",
      { name: "deploys", appDeploy: true, appBuildError: true, endpoint: `${base}/custom/deploys` },
      as(),
    );
    received.length = 0;
    const target = await loadDeploymentTarget(platform.ctx, {
      targetKind: "database",
      targetId: postgresId,
      kind: "backup",
    });
    if (!target) throw new Error("no target");
    await platform.ctx.db
      .transaction()
      .execute((trx) =>
        settleTarget(
          trx,
          target,
          { deploymentId: "backup-run", title: "Scheduled backup" },
          { status: "error", errorMessage: "the destination refused the upload" },
          platform.ctx.now(),
        ),
      );
    const notice = await until(() => received.find((r) => r.path === "/custom/backups"));
    const body = JSON.parse(notice.body);
    expect(body.event).toBe("databaseBackup");
    expect(body.data).toMatchObject({
      applicationName: "Orders",
      status: "error",
      message: "Scheduled backup: backup failed: the destination refused the upload",
      projectName: "Shop",
      serviceId: postgresId,
      deploymentId: "backup-run",
    });

    const { organizationId } = target;
    await recordBackupEvent(
      platform.ctx.db,
      {
        kind: "volumeBackup",
        organizationId,
        serviceName: "uploads",
        ok: true,
        message: "uploads: volume backup done",
        details: { backupFile: "uploads-1.tar.gz" },
      },
      platform.ctx.now(),
    );
    const volume = await until(() =>
      received.find((r) => r.path === "/custom/backups" && r.body.includes("volumeBackup")),
    );
    expect(JSON.parse(volume.body).data).toMatchObject({
      applicationName: "uploads",
      status: "success",
      backupFile: "uploads-1.tar.gz",
    });
    // Marked delivered just after the receiver answered.
    let statuses: string[] = [];
    for (const deadline = Date.now() + 10_000; Date.now() < deadline; ) {
      const rows = await platform.ctx.db.selectFrom("notificationDeliveries").select("status").execute();
      statuses = rows.map((row) => row.status);
      if (statuses.every((status) => status === "delivered")) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(statuses).toEqual(["delivered", "delivered"]);
    expect(received.some((r) => r.path === "/custom/deploys")).toBe(false);
  });
});
