/**
 * The dashboard in a real browser (issue 29): Debian's chromium, headless and offline (every
 * request that is not to this control plane is refused and recorded), walks a new user through
 * registration → a project → an application from a local test image → deploy and its live log
 * until it is done → a domain, listed → a failed deployment's cause above its log → sign out
 * and sign in again with the keyboard → an API key shown once → the instance settings → this
 * machine's metrics graph → invite
 * a member, who registers from the invitation link and is not offered the settings. axe-core
 * checks every page visited (light and dark themes) for serious or critical violations; a
 * screenshot of each step is kept in test-artifacts/dashboard (gitignored). The page's CSP is
 * never violated, the session cookie is HttpOnly and SameSite=Strict (plain http on 127.0.0.1,
 * so not Secure), and a mutation the page sends without its CSRF token is a 403.
 */
import { existsSync, mkdirSync, readFileSync, rmSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { createRequire } from "node:module";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { serve } from "@hono/node-server";
import { removeDeployedApps, requireDocker } from "@platform/agent/testing/docker.ts";
import { freePort } from "@platform/agent/testing/net.ts";
import { type Browser, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { buildDashboard } from "../../../../scripts/build-dashboard.mjs";
import { SESSION_COOKIE } from "../auth/cookie-session.ts";
import { startTestPlatform, type TestPlatform } from "../testing/harness.ts";

const CHROMIUM = process.env.PLATFORM_TEST_CHROMIUM ?? "/usr/bin/chromium";
/** A local image whose default command serves HTTP on port 80 (scripts/build-static-test-image.sh). */
const IMAGE = "platform-test/static-httpd:latest";
const ARTIFACTS = fileURLToPath(new URL("../../../../test-artifacts/dashboard/", import.meta.url));
const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");

let platform: TestPlatform;
let server: ReturnType<typeof serve>;
let base: string;
let browser: Browser;
let mainDirectory: string;
const appNames: string[] = [];

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`${CHROMIUM} is missing: apt-get install -y chromium (scripts/test-env.sh does it)`);
  }
  await requireDocker();
  await buildDashboard();
  rmSync(ARTIFACTS, { recursive: true, force: true });
  mkdirSync(ARTIFACTS, { recursive: true });
  mainDirectory = await mkdtemp(path.join(tmpdir(), "dashboard-e2e-"));
  // This machine's agent serves its metrics on 127.0.0.1, which the control plane may read.
  platform = await startTestPlatform(
    { PLATFORM_OUTBOUND_ALLOW: "127.0.0.0/8", PLATFORM_PUBLIC_IP: "127.0.0.1" },
    { agents: { localAgent: { mainDirectory, metricsListenHost: "127.0.0.1" } } },
  );
  server = serve({ fetch: platform.app.fetch, hostname: "127.0.0.1", port: 0 });
  await new Promise((resolve) => server.once("listening", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-background-networking",
      "--no-first-run",
    ],
  });
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await new Promise((resolve) => server?.close(resolve));
  await removeDeployedApps(appNames);
  await platform?.close();
  if (mainDirectory) await rm(mainDirectory, { recursive: true, force: true });
}, 120_000);

/** axe-core on the page as it is: no serious or critical violation. */
async function checkAccessibility(page: Page, step: string) {
  const violations = await page.evaluate(async () => {
    const result = await (window as any).axe.run(document, { resultTypes: ["violations"] });
    return result.violations
      .filter((v: any) => v.impact === "serious" || v.impact === "critical")
      .map((v: any) => `${v.id} (${v.impact}): ${v.nodes.map((n: any) => n.target.join(" ")).join(", ")}`);
  });
  expect(violations, `axe-core at step ${step}`).toEqual([]);
}

let stepNumber = 0;
async function step(page: Page, name: string) {
  stepNumber += 1;
  await checkAccessibility(page, name);
  await page.screenshot({
    path: path.join(ARTIFACTS, `${String(stepNumber).padStart(2, "0")}-${name}.png`),
    fullPage: true,
  });
}

describe("the dashboard in headless chromium", () => {
  it("register → project → application from a local image → deploy with its live log → domain; all offline, accessible, under the CSP", async () => {
    const context = await browser.newContext({ viewport: { width: 1200, height: 900 } });
    // axe-core is added by the browser itself on each document (the CSP refuses page scripts).
    await context.addInitScript({ content: AXE_SOURCE });
    const page = await context.newPage();
    const elsewhere: string[] = [];
    await page.route("**/*", (route) => {
      const url = route.request().url();
      if (url.startsWith(`${base}/`)) return route.continue();
      elsewhere.push(url);
      return route.abort();
    });
    const problems: string[] = [];
    page.on("pageerror", (error) => problems.push(error.message));
    page.on("console", (message) => {
      if (message.type() === "error" && !/the server responded with a status of 4\d\d/.test(message.text()))
        problems.push(message.text());
    });

    // The first visit: no user yet, the form registers the first one; Enter submits it.
    const first = await page.goto(`${base}/`);
    expect(first?.headers()["content-security-policy"]).toContain("script-src 'self'");
    await page.getByRole("heading", { name: "Create the first account" }).waitFor();
    await step(page, "register");
    await page.getByLabel("Email").fill("owner@example.com");
    await page.getByLabel("Your name").fill("Owner");
    await page.getByLabel("Password").fill("correct-horse-battery");
    await page.getByLabel("Password").press("Enter");
    await page.getByRole("heading", { name: "Projects" }).waitFor();
    await step(page, "projects-empty");

    const [session] = (await context.cookies()).filter((cookie) => cookie.name === SESSION_COOKIE);
    expect(session).toMatchObject({ httpOnly: true, sameSite: "Strict", secure: false });
    // The page's own fetch, without the CSRF token: refused.
    const forged = await page.evaluate(async () => {
      const response = await fetch("/api/project.create", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ name: "Forged" }),
      });
      return response.status;
    });
    expect(forged).toBe(403);

    await page.getByRole("textbox", { name: "Project name" }).fill("Shop");
    await page.getByRole("button", { name: "Create project" }).click();
    await page.getByRole("heading", { name: "Environment production" }).waitFor();
    await step(page, "project");

    await page.getByRole("textbox", { name: "Application name" }).fill("Web");
    await page.getByRole("textbox", { name: "Docker image" }).fill(IMAGE);
    await page.getByRole("button", { name: "Create application" }).click();
    await page.getByRole("button", { name: "Deploy" }).waitFor();
    const application = await platform.services.db
      .selectFrom("applications")
      .select(["appName", "dockerImage"])
      .executeTakeFirstOrThrow();
    appNames.push(application.appName);
    expect(application.dockerImage).toBe(IMAGE);
    await step(page, "application");
    // A published port, which the deployment then serves on.
    const publishedPort = await freePort();
    await page.getByRole("spinbutton", { name: "Published port" }).fill(String(publishedPort));
    await page.getByRole("button", { name: "Publish port" }).click();
    await page.getByRole("list", { name: "Ports" }).getByText(`${publishedPort} → 80/tcp`).waitFor();
    // Variables, saved before the first deployment, which then runs with them.
    await page.getByLabel(/^Variables, KEY=value/).fill("GREETING=hello\nTARGET=world");
    await page.getByRole("button", { name: "Save variables" }).click();
    await page.getByRole("status").getByText("Saved.").waitFor();
    const saved = await platform.services.db
      .selectFrom("applications")
      .select("env")
      .executeTakeFirstOrThrow();
    expect(saved.env).toBe("GREETING=hello\nTARGET=world");

    await page.getByRole("button", { name: "Deploy" }).click();
    await page.getByRole("log").waitFor();
    await page.locator('.log-status[data-status="done"]').waitFor({ timeout: 180_000 });
    const lines = await page.getByRole("log").locator("div").allInnerTexts();
    expect(lines.at(-1)).toContain("Deployment done");
    expect(await page.getByRole("alert").count()).toBe(0);
    // The container answers on the published port (busybox httpd: any HTTP answer will do).
    await vi.waitFor(
      async () => expect((await fetch(`http://127.0.0.1:${publishedPort}/`)).status).toBeGreaterThan(0),
      {
        timeout: 15_000,
        interval: 250,
      },
    );
    // The log follows its newest line.
    const scrolled = await page
      .getByRole("log")
      .evaluate((box) => box.scrollTop + box.clientHeight >= box.scrollHeight - 2);
    expect(scrolled).toBe(true);
    await step(page, "deployed");
    // A redeploy is a new deployment with its own live log.
    await page.getByRole("button", { name: "Redeploy (rebuild)" }).click();
    await page.getByRole("list", { name: "Deployments" }).getByRole("listitem").nth(1).waitFor();
    await page.locator('.log-status[data-status="done"]').waitFor({ timeout: 180_000 });
    const rows = await platform.services.db.selectFrom("deployments").select(["status", "title"]).execute();
    expect(rows.map((row) => row.status)).toEqual(["done", "done"]);
    // Searching keeps the matching lines only.
    await page.getByLabel("Search the log").fill("Deployment done");
    expect(await page.getByRole("log").locator("div").count()).toBe(1);
    await page.getByLabel("Search the log").fill("");

    await page.getByRole("textbox", { name: "Host" }).fill("shop.example.com");
    await page.getByRole("button", { name: "Add domain" }).click();
    await page.getByRole("list", { name: "Domains" }).getByText("http://shop.example.com").waitFor();
    await step(page, "domain");

    // A deployment that fails shows its cause above its log.
    await page.getByRole("link", { name: "Projects" }).first().click();
    await page.getByRole("link", { name: "Shop" }).click();
    await page.getByRole("textbox", { name: "Application name" }).fill("Broken");
    await page.getByRole("textbox", { name: "Docker image" }).fill("platform-test/no-such-image:latest");
    await page.getByRole("button", { name: "Create application" }).click();
    await page.getByRole("heading", { name: /^Broken/ }).waitFor();
    const broken = await platform.services.db
      .selectFrom("applications")
      .select("appName")
      .where("name", "=", "Broken")
      .executeTakeFirstOrThrow();
    appNames.push(broken.appName);
    await page.getByRole("button", { name: "Deploy" }).click();
    await page.locator('.log-status[data-status="error"]').waitFor({ timeout: 180_000 });
    const alert = page.locator(".log .alert");
    expect(await alert.textContent()).toMatch(/^Deployment failed: .*no-such-image/s);
    // Above the log's lines.
    const [alertBox, logBox] = [await alert.boundingBox(), await page.getByRole("log").boundingBox()];
    expect(alertBox!.y).toBeLessThan(logBox!.y);
    await step(page, "failed");

    // A database service: created with a generated password, its connection URL shown.
    await page.getByRole("link", { name: "Projects" }).first().click();
    await page.getByRole("link", { name: "Shop" }).click();
    await page.getByRole("textbox", { name: "Database name" }).fill("Orders");
    await page.getByRole("button", { name: "Create database" }).click();
    await page.getByRole("heading", { name: /^Orders/ }).waitFor();
    const url = (await page.getByLabel("Internal connection URL").textContent()) ?? "";
    const database = await platform.services.db
      .selectFrom("databaseServices")
      .select("appName")
      .where("name", "=", "Orders")
      .executeTakeFirstOrThrow();
    expect(url).toMatch(new RegExp(`^postgresql://app:[A-Za-z0-9]{24}@${database.appName}:5432/app$`));
    await step(page, "database");

    // Dark theme: the same page, still readable.
    await page.getByRole("button", { name: "Dark theme" }).click();
    expect(await page.evaluate(() => document.documentElement.dataset.theme)).toBe("dark");
    await step(page, "failed-dark");

    // Sign out ends the session; signing in again (keyboard only) lists the project by name.
    await page.getByRole("button", { name: "Sign out" }).click();
    await page.getByRole("heading", { name: "Sign in" }).waitFor();
    await step(page, "signin");
    expect(
      (await platform.services.db.selectFrom("sessions").select("revokedAt").execute()).every(
        (row) => row.revokedAt !== null,
      ),
    ).toBe(true);
    await page.getByLabel("Email").fill("owner@example.com");
    await page.keyboard.press("Tab");
    await page.keyboard.type("correct-horse-battery");
    await page.keyboard.press("Enter");
    await page.getByRole("link", { name: "Shop" }).waitFor();
    await step(page, "projects");

    // An API key is shown once, then only its name and first characters.
    await page.getByRole("link", { name: "API keys" }).click();
    await page.getByRole("textbox", { name: "Key name" }).fill("ci");
    await page.getByRole("button", { name: "Create key" }).click();
    const key = (await page.getByLabel("New API key").textContent()) ?? "";
    const listed = await platform.request("/api/project.all", { apiKey: key });
    expect(listed.status).toBe(200);
    await page.getByRole("list", { name: "API keys" }).getByText("ci").waitFor();
    await step(page, "api-key");
    await page.reload();
    await page.getByRole("list", { name: "API keys" }).getByText("ci").waitFor();
    expect(await page.content()).not.toContain(key);

    // The owner sees the instance settings, and invites a member.
    await page.getByRole("link", { name: "Settings" }).click();
    await page.getByRole("heading", { name: "Instance settings" }).waitFor();
    await page.getByText("Domain of the control plane").waitFor();
    await step(page, "settings");

    // This machine's metrics as a graph, once monitoring is set up.
    const ownerSession = await platform.mutateOk(
      "auth.login",
      { email: "owner@example.com", password: "correct-horse-battery" },
      {},
    );
    await platform.mutateOk(
      "admin.setupMonitoring",
      {
        metricsConfig: {
          server: {
            refreshRate: 2,
            port: await freePort(),
            token: "dashboard-metrics-token-0123456789",
            urlCallback: "http://127.0.0.1:9/threshold",
            retentionDays: 1,
            cronJob: "0 3 * * *",
            thresholds: { cpu: 0, memory: 0 },
          },
          containers: { refreshRate: 2, services: { include: ["nothing-here"] } },
        },
      },
      { token: ownerSession.token },
    );
    await page.getByRole("link", { name: "Servers" }).click();
    await page.getByText(/^Now: CPU [\d.]+ %, memory [\d.]+ %$/).waitFor({ timeout: 30_000 });
    expect(await page.locator(".metrics canvas").count()).toBe(1);
    await step(page, "servers");
    await page.getByRole("link", { name: "Members" }).click();
    await page.getByLabel("Email of the new member").fill("member@example.com");
    await page.getByRole("button", { name: "Invite" }).click();
    const link = (await page.getByLabel("Invitation link").textContent()) ?? "";
    expect(link.startsWith(`${base}/#/invite/`)).toBe(true);
    await step(page, "members");
    await page.getByRole("button", { name: "Sign out" }).click();
    await page.getByRole("heading", { name: "Sign in" }).waitFor();

    // The member follows the link, chooses a password, and is not offered the settings.
    await page.goto(link);
    await page.getByRole("heading", { name: "Accept the invitation" }).waitFor();
    expect(await page.getByLabel("Email").inputValue()).toBe("member@example.com");
    await page.getByLabel("Password").fill("member-horse-battery");
    await page.getByLabel("Password").press("Enter");
    await page.getByRole("heading", { name: "Projects" }).waitFor();
    await page.getByText("member@example.com").waitFor();
    const navigation = page.getByRole("navigation", { name: "Main" });
    expect(await navigation.getByRole("link", { name: "Settings" }).count()).toBe(0);
    expect(await navigation.getByRole("link", { name: "Members" }).count()).toBe(0);
    await step(page, "member");
    // Not by its address either: the projects are shown instead.
    await page.goto(`${base}/#/settings`);
    await page.getByRole("heading", { name: "Projects" }).waitFor();
    expect(await page.getByRole("heading", { name: "Instance settings" }).count()).toBe(0);

    // On a phone: one column, nothing wider than the screen.
    await page.setViewportSize({ width: 390, height: 844 });
    await page.getByRole("link", { name: "Shop" }).click();
    await page.getByRole("heading", { name: "Environment production" }).waitFor();
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    await step(page, "phone");

    expect(elsewhere).toEqual([]);
    expect(problems).toEqual([]);
    await context.close();
  }, 300_000);
});
