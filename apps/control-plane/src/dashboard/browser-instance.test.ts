/**
 * The instance pages of the dashboard (issue 42 items 3 and 4) in a real browser, sharing
 * browser-fixture.ts, against a real control plane, the real Docker Engine, s3rver as the S3
 * stand-in and a local HTTP receiver: a template from the built-in catalogue deployed (its image
 * replaced by a local test image) landing on the stack's page; a destination created and tested,
 * a postgres database's backup scheduled and run, its file listed, the table dropped and restored
 * from the page (with the confirmation) and its row read back; a scheduled job run on this
 * machine with its log; a custom notification channel tested before and after it is saved; a
 * certificate added and deleted with the confirmation. Then each of the five pages shows its
 * list, with axe-core (light and dark themes, a 390 px phone) and no horizontal scroll.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { serve } from "@hono/node-server";
import {
  dockerCli,
  removeComposeProjects,
  removeDatabaseServices,
  requireDocker,
} from "@platform/agent/testing/docker.ts";
import { freePort } from "@platform/agent/testing/net.ts";
import { startTestS3, type TestS3 } from "@platform/object-storage/testing/s3.ts";
import pg from "pg";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { issuedCertificate } from "../proxy/test-support.ts";
import { type Session, startTestPlatform, type TestPlatform } from "../testing/harness.ts";
import { ARTIFACTS, checkAccessibility, launchChromium, offlinePage, stepper } from "./browser-fixture.ts";

const POSTGRES_IMAGE = process.env.PLATFORM_TEST_POSTGRES_IMAGE ?? "platform-test/db-postgres:15";
const STATIC_HTTPD = "platform-test/static-httpd:latest";
const WAIT_MS = 240_000;

let platform: TestPlatform;
let owner: Session;
let s3: TestS3;
let receiver: Server;
let receiverUrl: string;
const received: Array<{ path: string; body: string }> = [];
let server: ReturnType<typeof serve>;
let base: string;
let browser: Browser;
let mainDirectory: string;
let environmentId: string;
const databases: string[] = [];
const stacks: string[] = [];

const as = () => ({ token: owner.token });
const ok = (name: string, input: Record<string, unknown>) => platform.mutateOk(name, input, as());

beforeAll(async () => {
  await requireDocker();
  for (const image of [POSTGRES_IMAGE, STATIC_HTTPD]) await dockerCli(["image", "inspect", image]);
  s3 = await startTestS3();
  receiver = createServer((request, response) => {
    let body = "";
    request.on("data", (chunk) => {
      body += chunk;
    });
    request.on("end", () => {
      received.push({ path: request.url ?? "", body });
      response.writeHead(200).end("ok");
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
  mainDirectory = await mkdtemp(path.join(tmpdir(), "dashboard-instance-"));
  platform = await startTestPlatform(
    {
      PLATFORM_OUTBOUND_ALLOW: "127.0.0.0/8",
      PLATFORM_DEFAULT_IMAGE_POSTGRES: POSTGRES_IMAGE,
      PLATFORM_TEMPLATE_IMAGES: `corentinth/it-tools=${STATIC_HTTPD}`,
    },
    { agents: { localAgent: { mainDirectory } } },
  );
  owner = await platform.registerOwner();
  environmentId = (await ok("project.create", { name: "Shop" })).environment.environmentId;
  server = serve({ fetch: platform.app.fetch, hostname: "127.0.0.1", port: 0 });
  await new Promise((resolve) => server.once("listening", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  browser = await launchChromium();
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await new Promise((resolve) => server?.close(resolve));
  await removeDatabaseServices(databases);
  await removeComposeProjects(stacks);
  await platform?.close();
  receiver?.close();
  await s3?.close();
  if (mainDirectory) await rm(mainDirectory, { recursive: true, force: true });
}, 180_000);

const step = stepper("instance-");

async function signIn(page: Page) {
  await page.goto(`${base}/`);
  await page.getByLabel("Email").fill("owner@example.com");
  await page.getByLabel("Password").fill("correct-horse-battery");
  await page.getByLabel("Password").press("Enter");
  await page.getByRole("heading", { name: "Projects" }).waitFor();
}

async function openPage(page: Page, link: string) {
  await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: link, exact: true }).click();
  await page.getByRole("heading", { name: link, level: 1 }).waitFor();
}

/** A postgres database deployed with an external port, and a client of it. */
async function deployedPostgres() {
  const created = await ok("postgres.create", {
    name: "orders-db",
    appName: `orders-${Date.now().toString(36)}`,
    databaseName: "shop",
    databaseUser: "shop",
    databasePassword: "shop-password-1",
    environmentId,
  });
  databases.push(created.appName);
  const port = await freePort();
  const { deploymentId } = await ok("postgres.saveExternalPort", {
    postgresId: created.postgresId,
    externalPort: port,
  });
  const deployed = await platform.waitForDeployment(deploymentId, WAIT_MS);
  expect(deployed.status, deployed.logs).toBe("done");
  const connect = async () => {
    for (let attempt = 0; ; attempt++) {
      const client = new pg.Client({
        host: "127.0.0.1",
        port,
        user: "shop",
        password: "shop-password-1",
        database: "shop",
      });
      try {
        await client.connect();
        return client;
      } catch (error) {
        await client.end().catch(() => {});
        if (attempt > 60) throw error;
        await new Promise((resolve) => setTimeout(resolve, 1000));
      }
    }
  };
  return { postgresId: created.postgresId as string, connect };
}

describe("templates, backups, schedules, notifications and certificates in headless chromium", () => {
  it("deploys a template, backs up and restores a database, runs a schedule, tests a channel, adds a certificate", async () => {
    const { page, elsewhere, problems, context } = await offlinePage(browser, base);
    try {
      await walk(page);
    } catch (error) {
      await page.screenshot({ path: path.join(ARTIFACTS, "instance-failed.png"), fullPage: true });
      throw error;
    }
    expect(elsewhere).toEqual([]);
    expect(problems).toEqual([]);
    await context.close();
  }, 900_000);
});

async function walk(page: Page) {
  await signIn(page);

  // A template from the built-in catalogue: searched, deployed, and the stack's page opened.
  await openPage(page, "Templates");
  const gallery = page.getByRole("list", { name: "Templates" });
  await page.getByLabel("Search templates").fill("it-tools");
  await gallery.getByRole("heading", { name: "IT Tools" }).waitFor();
  expect(await gallery.locator(":scope > li").count()).toBe(1);
  // The logo is the one the catalogue ships, inside the answer.
  expect(await gallery.locator("img").first().getAttribute("src")).toMatch(/^data:image\/svg\+xml;base64,/);
  await step(page, "templates-search");
  await gallery.getByRole("button", { name: /^Deploy / }).click();
  const deployForm = page.getByRole("form", { name: /^Deploy / });
  await deployForm.getByLabel("Environment").selectOption({ label: "Shop / production" });
  await step(page, "template-form");
  await deployForm.getByRole("button", { name: /^Deploy / }).click();
  await page.waitForURL(/#\/compose\//, { timeout: 60_000 });
  const composeId = decodeURIComponent(page.url().split("#/compose/")[1]!.split("/")[0]!);
  const stack = await platform.query("compose.one", { composeId }, as());
  expect(stack.status).toBe(200);
  stacks.push(stack.body.appName);
  const [run] = (await platform.query("deployment.allByCompose", { composeId }, as())).body;
  const deployed = await platform.waitForDeployment(run.deploymentId, WAIT_MS);
  expect(deployed.status, deployed.logs).toBe("done");
  const image = await dockerCli([
    "ps",
    "--filter",
    `label=com.docker.compose.project=${stack.body.appName}`,
    "--format",
    "{{.Image}}",
  ]);
  expect(image.trim()).toBe(STATIC_HTTPD);

  // A destination, tested from the page; then a database backup run and a restore.
  const { postgresId, connect } = await deployedPostgres();
  const client = await connect();
  await client.query("CREATE TABLE orders (id int primary key, item text)");
  await client.query("INSERT INTO orders VALUES (1, 'teapot'), (2, 'kettle')");
  await client.end();

  await openPage(page, "Backups");
  await page.getByText("No destination yet").waitFor();
  const newDestination = page.getByRole("form", { name: "New destination" });
  await newDestination.getByLabel("Destination name").fill("Local S3");
  await newDestination.getByLabel("Provider").fill("Minio");
  await newDestination.getByLabel("Endpoint (empty for AWS)").fill(s3.endpoint);
  await newDestination.getByLabel("Bucket").fill(s3.storage.bucket);
  await newDestination.getByLabel("Access key", { exact: true }).fill(s3.storage.accessKey);
  await newDestination.getByLabel("Secret access key").fill(s3.storage.secretAccessKey);
  await newDestination.getByRole("button", { name: "Test connection" }).click();
  await newDestination.getByText(/Connection to .* works/).waitFor({ timeout: 30_000 });
  await newDestination.getByRole("button", { name: "Create destination" }).click();
  const destinations = page.getByRole("list", { name: "Destinations" });
  await destinations.getByText("Local S3", { exact: true }).waitFor();
  // The secret access key is never sent back to the page.
  expect(await page.content()).not.toContain(s3.storage.secretAccessKey);
  await destinations.getByRole("button", { name: "Test connection of Local S3" }).click();
  await destinations.getByText("Connection works.").waitFor({ timeout: 30_000 });

  const newBackup = page.getByRole("form", { name: "New database backup" });
  await newBackup
    .getByRole("combobox", { name: /^Database/ })
    .selectOption({ label: "orders-db (postgres, Shop / production)" });
  await newBackup.getByLabel("Prefix in the bucket").fill("orders");
  expect(await newBackup.getByLabel("Database name").inputValue()).toBe("shop");
  await newBackup.getByRole("button", { name: "Create backup" }).click();
  const backups = page.getByRole("list", { name: "Database backups" });
  await backups.getByText("Local S3/orders").waitFor();
  await step(page, "backup-created");
  await backups.getByRole("button", { name: "Run backup of orders-db now" }).click();
  const backupLog = page.getByRole("region", { name: "Backup log of orders-db to Local S3" });
  await backupLog.getByText("Finished: done").waitFor({ timeout: WAIT_MS });
  const stored = (await platform.query("postgres.one", { postgresId }, as())).body.backups;
  expect(stored).toHaveLength(1);
  expect(stored[0].lastRun.status).toBe("done");
  const file: string = stored[0].lastRun.backupFile;
  expect(file).toMatch(/^orders\/shop-.*\.dump\.gz$/);
  // The file is in the bucket, as the page lists it.
  await destinations.getByRole("button", { name: "Files of Local S3" }).click();
  await page.getByRole("region", { name: "Files in Local S3" }).getByText(file).waitFor();
  await step(page, "backup-ran");

  const dropper = await connect();
  await dropper.query("DROP TABLE orders");
  await dropper.end();
  await backups.getByRole("button", { name: "Restore orders-db…" }).click();
  const restore = page.getByRole("region", { name: "Restore orders-db" });
  await restore.getByLabel("File to restore").selectOption(file);
  await restore.getByRole("button", { name: "Restore orders-db" }).click();
  const confirm = page.getByRole("dialog", { name: "Restore orders-db?" });
  await confirm.getByText(/data written since that file was made is lost/).waitFor();
  await step(page, "restore-confirm");
  await confirm.getByRole("button", { name: "Yes, restore orders-db" }).click();
  const restoreLog = page.getByRole("region", { name: "Restore log of orders-db" });
  await restoreLog.getByText("Finished: done").waitFor({ timeout: WAIT_MS });
  const reader = await connect();
  const rows = await reader.query("SELECT item FROM orders ORDER BY id");
  await reader.end();
  expect(rows.rows.map((row) => row.item)).toEqual(["teapot", "kettle"]);
  await step(page, "restored");

  // A scheduled job on this machine, run now, with its log.
  await openPage(page, "Schedules");
  await page.getByText("No scheduled job yet").waitFor();
  const newSchedule = page.getByRole("form", { name: "New scheduled job" });
  await newSchedule.getByLabel("Runs in").selectOption({ label: "This machine (the control plane's host)" });
  await newSchedule.getByLabel("Job name").fill("Nightly report");
  await newSchedule.getByLabel("Schedule (cron: minute hour day month weekday)").fill("0 0 1 1 *");
  await newSchedule.getByLabel("Command").fill('echo "report-$((40+2))"');
  await newSchedule.getByRole("button", { name: "Create schedule" }).click();
  const jobs = page.getByRole("list", { name: "Scheduled jobs" });
  await jobs.getByRole("button", { name: "Run Nightly report now" }).click();
  const scheduleLog = page.getByRole("region", { name: /^Log of Nightly report/ });
  await scheduleLog.getByText("report-42").waitFor({ timeout: 60_000 });
  await scheduleLog.getByText("Finished: done").waitFor({ timeout: 60_000 });
  await step(page, "schedule-ran");

  // A custom channel to a local receiver: a test from the form, then from the saved channel.
  await openPage(page, "Notifications");
  const newChannel = page.getByRole("form", { name: "New channel" });
  await newChannel.getByLabel("Kind").selectOption("custom");
  await newChannel.getByLabel("Channel name").fill("Ops hook");
  await newChannel.getByLabel("Endpoint URL").fill(`${receiverUrl}/hook`);
  await newChannel.getByRole("checkbox", { name: "Docker cleanup" }).uncheck();
  await newChannel.getByRole("button", { name: "Send a test" }).click();
  await newChannel.getByText("Test notice sent.").waitFor({ timeout: 30_000 });
  expect(received.filter((r) => r.path === "/hook")).toHaveLength(1);
  expect(JSON.parse(received[0]!.body)).toMatchObject({ event: "test" });
  await newChannel.getByRole("button", { name: "Create channel" }).click();
  const channels = page.getByRole("list", { name: "Notification channels" });
  await channels.getByRole("button", { name: "Test Ops hook" }).click();
  await channels.getByText("Test notice sent through Ops hook.").waitFor({ timeout: 30_000 });
  expect(received.filter((r) => r.path === "/hook")).toHaveLength(2);
  const [channel] = (await platform.query("notification.getAll", {}, as())).body;
  expect(channel).toMatchObject({
    name: "Ops hook",
    notificationType: "custom",
    dockerCleanup: false,
    appDeploy: true,
  });
  await step(page, "notification-tested");

  // A certificate: its key is never shown again; delete asks first.
  await openPage(page, "Certificates");
  await page.getByText("No certificate yet").waitFor();
  const pair = issuedCertificate(["shop.example.com"]);
  await page.getByLabel("Certificate name").fill("Shop");
  await page.getByLabel("Certificate chain (PEM, the leaf first)").fill(pair.chain);
  await page.getByLabel(/^Private key/).fill(pair.key);
  await page.getByRole("button", { name: "Add certificate" }).click();
  const certificates = page.getByRole("list", { name: "Certificates" });
  await certificates.getByText("Hosts: shop.example.com").waitFor({ timeout: 30_000 });
  expect(await page.getByLabel(/^Private key/).inputValue()).toBe("");
  await certificates.getByRole("button", { name: "Delete certificate Shop" }).click();
  await page
    .getByRole("dialog", { name: "Delete certificate Shop?" })
    .getByRole("button", { name: "Cancel" })
    .click();
  expect((await platform.query("certificates.all", {}, as())).body).toHaveLength(1);
  await step(page, "certificate");

  // Each page shows its list: axe-core in both themes and on a phone, nothing wider than it.
  const lists: Record<string, string> = {
    Templates: "Templates",
    Backups: "Database backups",
    Schedules: "Scheduled jobs",
    Notifications: "Notification channels",
    Certificates: "Certificates",
  };
  for (const [link, list] of Object.entries(lists)) {
    await openPage(page, link);
    await page.getByRole("list", { name: list }).locator("li").first().waitFor();
    await checkAccessibility(page, `${link} light`);
    await page.getByRole("button", { name: "Dark theme" }).click();
    await checkAccessibility(page, `${link} dark`);
    await page.setViewportSize({ width: 390, height: 844 });
    const wide = await page.evaluate(() =>
      [...document.querySelectorAll("body *")]
        .filter((element) => element.getBoundingClientRect().right > 390)
        .map(
          (element) =>
            `${element.tagName.toLowerCase()}.${element.className} ${Math.round(element.getBoundingClientRect().right)}`,
        )
        .slice(0, 5),
    );
    expect(
      await page.evaluate(() => document.documentElement.scrollWidth),
      `${link}: ${wide.join("; ")}`,
    ).toBeLessThanOrEqual(390);
    await step(page, `${link.toLowerCase()}-phone-dark`);
    // On a phone the theme button is in the closed sidebar: the light theme is read again on a reload.
    await page.evaluate(() => localStorage.setItem("platform-theme", "light"));
    await page.reload();
    await page.getByRole("list", { name: list }).locator("li").first().waitFor();
    await checkAccessibility(page, `${link} phone light`);
    await page.setViewportSize({ width: 1200, height: 900 });
  }
}
