/**
 * The dashboard in a real browser (issue 29): Debian's chromium, headless and offline (every
 * request that is not to this control plane is refused and recorded), walks a new user through
 * registration → a project → an application from a local test image → deploy and its live log
 * until it is done → a domain, listed → the application's settings (Basic credentials, Swarm
 * replicas, build type, a new registry, a Git source) → a failed deployment's cause above its
 * log → a database (its URL, an external port) → a compose stack (file edited, deployed with
 * its log) → the deployment queue → sign out and sign in again with the keyboard → an API key
 * shown once → the instance settings edited (domain, daily cleanup, monitoring thresholds) →
 * this machine's metrics graph and a service's container graph → invite a member, who
 * registers from the invitation link and is offered neither the settings nor adding servers
 * nor cleanup → the owner edits the member's role and permissions. axe-core checks every page
 * visited (light and dark themes, a phone's width) for serious or critical violations; a
 * screenshot of each step is kept in test-artifacts/dashboard (gitignored). The page's CSP is
 * never violated, the session cookie is HttpOnly and SameSite=Strict (plain http on 127.0.0.1,
 * so not Secure), and a mutation the page sends without its CSRF token is a 403. Adding servers
 * is walked in browser-servers.test.ts.
 */
import { mkdtemp, rm } from "node:fs/promises";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { serve } from "@hono/node-server";
import {
  removeComposeProjects,
  removeDatabaseServices,
  removeDeployedApps,
  requireDocker,
} from "@platform/agent/testing/docker.ts";
import { freePort } from "@platform/agent/testing/net.ts";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { SESSION_COOKIE } from "../auth/cookie-session.ts";
import { startTestPlatform, type TestPlatform } from "../testing/harness.ts";
import { launchChromium, offlinePage, stepper } from "./browser-fixture.ts";

/** A local image whose default command serves HTTP on port 80 (scripts/build-static-test-image.sh). */
const IMAGE = "platform-test/static-httpd:latest";

let platform: TestPlatform;
let server: ReturnType<typeof serve>;
let base: string;
let browser: Browser;
let mainDirectory: string;
const appNames: string[] = [];
const stacks: string[] = [];
/** Database services the test deployed (saving an external port redeploys): removed with their data volume. */
const databases: string[] = [];

beforeAll(async () => {
  await requireDocker();
  mainDirectory = await mkdtemp(path.join(tmpdir(), "dashboard-e2e-"));
  // This machine's agent serves its metrics on 127.0.0.1, which the control plane may read.
  platform = await startTestPlatform(
    { PLATFORM_OUTBOUND_ALLOW: "127.0.0.0/8", PLATFORM_PUBLIC_IP: "127.0.0.1" },
    { agents: { localAgent: { mainDirectory, metricsListenHost: "127.0.0.1" } } },
  );
  server = serve({ fetch: platform.app.fetch, hostname: "127.0.0.1", port: 0 });
  await new Promise((resolve) => server.once("listening", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  browser = await launchChromium();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await new Promise((resolve) => server?.close(resolve));
  await removeDeployedApps(appNames);
  await removeDatabaseServices(databases);
  await removeComposeProjects(stacks);
  await platform?.close();
  if (mainDirectory) await rm(mainDirectory, { recursive: true, force: true });
}, 120_000);

const step = stepper("");

/** Opens a tab of a service's page (General, Environment, Domains, Deployments, Logs…). */
const openTab = (page: import("playwright-core").Page, name: string) =>
  page.getByRole("navigation", { name: "Service views" }).getByRole("link", { name, exact: true }).click();

describe("the dashboard in headless chromium", () => {
  it("register → project → application from a local image → deploy with its live log → domain; all offline, accessible, under the CSP", async () => {
    const { context, page, elsewhere, problems } = await offlinePage(browser, base);

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
    const application = await platform.ctx.db
      .selectFrom("applications")
      .select(["appName", "dockerImage"])
      .executeTakeFirstOrThrow();
    appNames.push(application.appName);
    expect(application.dockerImage).toBe(IMAGE);
    await step(page, "application");
    // A published port, which the deployment then serves on.
    await openTab(page, "Advanced");
    const publishedPort = await freePort();
    await page.getByRole("spinbutton", { name: "Published port" }).fill(String(publishedPort));
    await page.getByRole("button", { name: "Publish port" }).click();
    await page.getByRole("list", { name: "Ports" }).getByText(`${publishedPort} → 80/tcp`).waitFor();
    // Variables, saved before the first deployment, which then runs with them.
    await openTab(page, "Environment");
    await page.getByLabel(/^Variables, KEY=value/).fill("GREETING=hello\nTARGET=world");
    await page.getByRole("button", { name: "Save variables" }).click();
    await page.getByRole("status").getByText("Saved.").waitFor();
    const saved = await platform.ctx.db.selectFrom("applications").select("env").executeTakeFirstOrThrow();
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
    const rows = await platform.ctx.db.selectFrom("deployments").select(["status", "title"]).execute();
    expect(rows.map((row) => row.status)).toEqual(["done", "done"]);
    // Searching keeps the matching lines only.
    await page.getByLabel("Search the log").fill("Deployment done");
    expect(await page.getByRole("log").locator("div").count()).toBe(1);
    await page.getByLabel("Search the log").fill("");

    await openTab(page, "Domains");
    await page.getByRole("textbox", { name: "Host" }).fill("shop.example.com");
    await page.getByRole("button", { name: "Add domain" }).click();
    await page.getByRole("list", { name: "Domains" }).getByText("http://shop.example.com").waitFor();
    await step(page, "domain");

    // The application's settings, each saved through its procedure.
    await openTab(page, "General");
    await page.getByRole("combobox", { name: "Build with" }).selectOption("nixpacks");
    await page.getByRole("button", { name: "Save build type" }).click();
    await page.getByRole("form", { name: "Build type" }).getByRole("status").getByText("Saved.").waitFor();
    await openTab(page, "Advanced");
    await page.getByRole("textbox", { name: "User name" }).fill("admin");
    await page.getByLabel("Password", { exact: true }).fill("basic-secret-1");
    await page.getByRole("button", { name: "Add credentials" }).click();
    await page.getByRole("list", { name: "Basic credentials" }).getByText("admin").waitFor();
    await page.getByRole("spinbutton", { name: "Replicas" }).fill("2");
    await page.getByRole("button", { name: "Save Swarm settings" }).click();
    await page.getByText("Add a registry").click();
    await page.getByRole("textbox", { name: "Registry name" }).fill("Private");
    await page.getByRole("textbox", { name: "Registry URL" }).fill("registry.example.com");
    await page.getByRole("textbox", { name: "Registry user" }).fill("deployer");
    await page.getByLabel("Registry password").fill("registry-secret-1");
    await page.getByRole("button", { name: "Add registry" }).click();
    await page.getByRole("option", { name: "Private (registry.example.com)" }).waitFor({ state: "attached" });
    await page.getByRole("button", { name: "Use registry" }).click();
    await vi.waitFor(
      async () => {
        const row = await platform.ctx.db
          .selectFrom("applications")
          .select(["replicas", "buildType", "registryId"])
          .where("appName", "=", application.appName)
          .executeTakeFirstOrThrow();
        const registry = await platform.ctx.db
          .selectFrom("registries")
          .select("registryId")
          .executeTakeFirstOrThrow();
        expect(row).toEqual({ replicas: 2, buildType: "nixpacks", registryId: registry.registryId });
      },
      { timeout: 10_000, interval: 200 },
    );
    expect(await platform.ctx.db.selectFrom("security").select("username").executeTakeFirstOrThrow()).toEqual(
      { username: "admin" },
    );
    await openTab(page, "General");
    await page.getByRole("combobox", { name: "Source type" }).selectOption("git");
    await page.getByRole("textbox", { name: "Repository URL" }).fill("https://git.example.com/team/shop.git");
    await page.getByRole("button", { name: "Save source" }).click();
    await vi.waitFor(
      async () => {
        const row = await platform.ctx.db
          .selectFrom("applications")
          .select(["sourceType", "customGitUrl", "customGitBranch"])
          .where("appName", "=", application.appName)
          .executeTakeFirstOrThrow();
        expect(row).toEqual({
          sourceType: "git",
          customGitUrl: "https://git.example.com/team/shop.git",
          customGitBranch: "main",
        });
      },
      { timeout: 10_000, interval: 200 },
    );
    await step(page, "application-settings");

    // A deployment that fails shows its cause above its log.
    await page.getByRole("link", { name: "Projects" }).first().click();
    await page.getByRole("main").getByRole("link", { name: "Shop" }).click();
    await page.getByRole("textbox", { name: "Application name" }).fill("Broken");
    await page.getByRole("textbox", { name: "Docker image" }).fill("platform-test/no-such-image:latest");
    await page.getByRole("button", { name: "Create application" }).click();
    await page.getByRole("heading", { name: /^Broken/ }).waitFor();
    const broken = await platform.ctx.db
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
    await page.getByRole("main").getByRole("link", { name: "Shop" }).click();
    await page.getByRole("textbox", { name: "Database name" }).fill("Orders");
    await page.getByRole("button", { name: "Create database" }).click();
    await page.getByRole("heading", { name: /^Orders/ }).waitFor();
    const url = (await page.getByLabel("Internal connection URL").textContent()) ?? "";
    const database = await platform.ctx.db
      .selectFrom("databaseServices")
      .select("appName")
      .where("name", "=", "Orders")
      .executeTakeFirstOrThrow();
    databases.push(database.appName);
    expect(url).toMatch(new RegExp(`^postgresql://app:[A-Za-z0-9]{24}@${database.appName}:5432/app$`));
    await step(page, "database");
    const externalPort = await freePort();
    await page.getByRole("spinbutton", { name: /^External port/ }).fill(String(externalPort));
    await page.getByRole("button", { name: "Save external port" }).click();
    await page.getByRole("status").getByText("Saved; deploy to apply.").waitFor();
    expect(
      await platform.ctx.db
        .selectFrom("databaseServices")
        .select("externalPort")
        .where("name", "=", "Orders")
        .executeTakeFirstOrThrow(),
    ).toEqual({ externalPort });

    // A compose stack: created with its file, the file edited, deployed with its live log.
    await page.getByRole("link", { name: "Projects" }).first().click();
    await page.getByRole("main").getByRole("link", { name: "Shop" }).click();
    await page.getByRole("textbox", { name: "Stack name" }).fill("Stack");
    await page
      .getByRole("textbox", { name: "Compose file" })
      .fill(`services:\n  web:\n    image: ${IMAGE}\n`);
    await page.getByRole("button", { name: "Create stack" }).click();
    await page.getByRole("heading", { name: /^Stack/ }).waitFor();
    const stack = await platform.ctx.db
      .selectFrom("compose")
      .select(["appName", "composeFile"])
      .executeTakeFirstOrThrow();
    stacks.push(stack.appName);
    const edited = `services:\n  web:\n    image: ${IMAGE}\n    environment:\n      GREETING: hello\n`;
    await page.getByLabel(/^docker-compose.yml/).fill(edited);
    await page.getByRole("button", { name: "Save compose file" }).click();
    await page.getByRole("status").getByText("Saved.").waitFor();
    await page.getByRole("button", { name: "Deploy stack" }).click();
    await page.getByRole("log").waitFor();
    await page.locator('.log-status[data-status="done"]').waitFor({ timeout: 180_000 });
    expect(
      (await platform.ctx.db.selectFrom("compose").select("composeFile").executeTakeFirstOrThrow())
        .composeFile,
    ).toBe(edited);
    await step(page, "compose");

    // The deployment queue: the finished jobs, each linked to its service.
    await page.getByRole("link", { name: "Queue" }).click();
    const queue = page.getByRole("table", { name: "Deployment queue" });
    await queue.getByRole("link", { name: "Web" }).first().waitFor();
    await queue.getByRole("link", { name: "Stack" }).first().waitFor();
    expect(await queue.getByText("completed").count()).toBeGreaterThanOrEqual(3);
    await step(page, "queue");

    // Dark theme: the same page, still readable.
    await page.getByRole("button", { name: "Dark theme" }).click();
    expect(await page.evaluate(() => document.documentElement.dataset.theme)).toBe("dark");
    await step(page, "failed-dark");

    // Sign out ends the session; signing in again (keyboard only) lists the project by name.
    await page.getByRole("button", { name: "Sign out" }).click();
    await page.getByRole("heading", { name: "Sign in" }).waitFor();
    await step(page, "signin");
    expect(
      (await platform.ctx.db.selectFrom("sessions").select("revokedAt").execute()).every(
        (row) => row.revokedAt !== null,
      ),
    ).toBe(true);
    await page.getByLabel("Email").fill("owner@example.com");
    await page.keyboard.press("Tab");
    await page.keyboard.type("correct-horse-battery");
    await page.keyboard.press("Enter");
    await page.getByRole("main").getByRole("link", { name: "Shop" }).waitFor();
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
    // The domain of the control plane, the daily cleanup and this machine's monitoring, edited.
    await page.getByRole("textbox", { name: "Control plane domain" }).fill("platform.example.com");
    await page.getByRole("button", { name: "Save domain" }).click();
    await page.getByRole("status").getByText("Domain saved.").waitFor();
    await page.getByRole("checkbox", { name: /^Daily Docker cleanup/ }).check();
    await page.getByRole("button", { name: "Save cleanup" }).click();
    await page.getByRole("status").getByText("Daily cleanup on.").waitFor();
    expect(
      await platform.ctx.db
        .selectFrom("webServerSettings")
        .select(["host", "https", "enableDockerCleanup"])
        .executeTakeFirstOrThrow(),
    ).toEqual({ host: "platform.example.com", https: false, enableDockerCleanup: true });
    const monitoring = page.getByRole("form", { name: "Monitoring of this machine" });
    await monitoring.getByLabel("Refresh every (seconds)").fill("2");
    await monitoring.getByLabel("Metrics port").fill(String(await freePort()));
    await monitoring.getByLabel("CPU threshold % (0: off)").fill("90");
    await monitoring.getByLabel("Memory threshold % (0: off)").fill("95");
    await monitoring.getByLabel("Alerts to (URL)").fill("http://127.0.0.1:9/threshold");
    await monitoring.getByLabel(/^Services whose containers/).fill(application.appName);
    await page.getByRole("button", { name: "Save monitoring" }).click();
    await monitoring
      .getByRole("status")
      .getByText(/^Monitoring runs/)
      .waitFor({ timeout: 30_000 });
    await step(page, "settings");

    // This machine's metrics as a graph, its thresholds, and the deployed service's containers.
    await page.getByRole("link", { name: "Servers" }).click();
    await page.getByText(/^Now: CPU [\d.]+ %, Memory [\d.]+ %$/).waitFor({ timeout: 30_000 });
    expect(await page.locator(".metrics canvas").count()).toBe(1);
    await page.getByText(/^Thresholds: CPU 90 %, memory 95 %/).waitFor();
    // Cleaning the shared Docker engine is offered, not run here (other tests use it).
    await page.getByRole("button", { name: "Clean up Docker now" }).waitFor();
    await page.getByRole("textbox", { name: "Service (app name)" }).fill(application.appName);
    await page.getByRole("button", { name: "Show container metrics" }).click();
    await page
      .getByRole("figure", { name: `CPU and memory use of ${application.appName}'s containers` })
      .getByText(/^Now: CPU [\d.]+ %, Memory [\d.]+ %$/)
      .waitFor({ timeout: 30_000 });
    expect(await page.locator(".metrics canvas").count()).toBe(2);
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
    // The servers page offers a member neither adding a server nor a cleanup.
    await page.getByRole("link", { name: "Servers" }).click();
    await page.getByRole("heading", { name: "Remote servers" }).waitFor();
    expect(await page.getByRole("heading", { name: "Add a server" }).count()).toBe(0);
    expect(await page.getByRole("button", { name: "Clean up Docker now" }).count()).toBe(0);
    await page.getByRole("link", { name: "Projects" }).first().click();

    // On a phone: one column, nothing wider than the screen.
    await page.setViewportSize({ width: 390, height: 844 });
    await page.getByRole("main").getByRole("link", { name: "Shop" }).click();
    await page.getByRole("heading", { name: "Environment production" }).waitFor();
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    await step(page, "phone");

    // The owner gives the member a role and permissions.
    await page.setViewportSize({ width: 1200, height: 900 });
    await page.getByRole("button", { name: "Sign out" }).click();
    await page.getByLabel("Email").fill("owner@example.com");
    await page.getByLabel("Password").fill("correct-horse-battery");
    await page.getByLabel("Password").press("Enter");
    await page.getByRole("link", { name: "Members" }).click();
    await page.getByText("Role and permissions of member@example.com").click();
    const grants = page.getByRole("form", { name: "Role and permissions of member@example.com" });
    await grants.getByRole("checkbox", { name: "Delete projects" }).check();
    await grants.getByRole("checkbox", { name: "Create services" }).uncheck();
    await grants.getByRole("button", { name: "Save permissions" }).click();
    await grants.getByRole("status").getByText("Saved.").waitFor();
    const memberRow = await platform.ctx.db
      .selectFrom("members")
      .innerJoin("users", "users.userId", "members.userId")
      .select(["members.role", "members.canDeleteProjects", "members.canCreateServices"])
      .where("users.email", "=", "member@example.com")
      .executeTakeFirstOrThrow();
    expect(memberRow).toEqual({ role: "member", canDeleteProjects: true, canCreateServices: false });
    await step(page, "permissions");

    expect(elsewhere).toEqual([]);
    expect(problems).toEqual([]);
    await context.close();
  }, 600_000);
});
