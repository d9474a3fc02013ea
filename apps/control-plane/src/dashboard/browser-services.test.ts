/**
 * The dashboard's shell and service pages (issue 42) in headless chromium, on the real Docker
 * Engine (Swarm) and the control plane's in-process agent:
 * - the shell: a skip link that focuses the content without navigating, a sidebar with the
 *   instance pages (Templates, Backups, Schedules, Notifications, Certificates…) and the
 *   projects, the current page marked (aria-current), focus on the new page's heading after a
 *   navigation, and on a 390 px phone a short top bar whose Menu opens the sidebar;
 * - an application walked through its tabs: created from an image, a command set (Advanced),
 *   deployed, its running container's output read on the Logs tab, stopped, started, redeployed,
 *   rolled back to its first deployment (confirmed), and deleted (the dialog names what goes;
 *   Cancel keeps it);
 * - a database created with an image chosen (the default cannot be pulled offline), deployed,
 *   then deleted; a compose stack created as a Swarm `stack`, deployed, then deleted;
 * - the projects list's counts and empty search, an unknown application's one "not found";
 * - axe-core on every page touched, in both themes and at 390 px, where no page scrolls sideways.
 * Screenshots: test-artifacts/dashboard/services-*.png.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { dockerCli, removeDeployedApps, requireDocker } from "@platform/agent/testing/docker.ts";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { listen } from "../agents/testing/agents.ts";
import { startTestPlatform, type TestPlatform } from "../testing/harness.ts";
import {
  checkAccessibility,
  launchChromium,
  offlinePage,
  stepper,
  sweepThemesAndPhone,
} from "./browser-fixture.ts";

const BUSYBOX = "platform-test/busybox:latest";
const POSTGRES = process.env.PLATFORM_TEST_POSTGRES_IMAGE ?? "platform-test/db-postgres:15";

let platform: TestPlatform;
let http: { url: string; close(): Promise<void> };
let browser: Browser;
let mainDirectory: string;
let projectId: string;
/** Services of this file, removed at the end whatever happened. */
const appNames: string[] = [];
const stackNames: string[] = [];
const volumes: string[] = [];

beforeAll(async () => {
  await requireDocker();
  mainDirectory = await mkdtemp(path.join(tmpdir(), "dashboard-services-"));
  platform = await startTestPlatform({}, { agents: { localAgent: { mainDirectory } } });
  http = await listen(platform);
  browser = await launchChromium();
  const owner = await platform.registerOwner();
  ({ projectId } = (
    await platform.mutateOk("project.create", { name: "Shop" }, { token: owner.token })
  ).project);
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await http?.close();
  await platform?.close();
  await removeDeployedApps(appNames);
  for (const name of stackNames) await dockerCli(["stack", "rm", name]).catch(() => {});
  for (const volume of volumes) {
    for (let attempt = 0; attempt < 30; attempt++) {
      const removed = await dockerCli(["volume", "rm", volume]).then(
        () => true,
        (error) => /no such volume/i.test(String(error)),
      );
      if (removed) break;
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
  }
  if (mainDirectory) await rm(mainDirectory, { recursive: true, force: true });
}, 120_000);

const step = stepper("services-");

const openTab = (page: Page, name: string) =>
  page.getByRole("navigation", { name: "Service views" }).getByRole("link", { name, exact: true }).click();

/** The replicas the Swarm service `name` asks for. */
const replicasOf = async (name: string) =>
  Number(await dockerCli(["service", "inspect", name, "--format", "{{.Spec.Mode.Replicated.Replicas}}"]));

const focusedTag = (page: Page) => page.evaluate(() => document.activeElement?.tagName ?? "");

/** Waits for the newest deployment of the page's list to end, and answers its status. */
async function newestDeploymentEnds(page: Page) {
  await page.locator(".log-status[data-status='done'], .log-status[data-status='error']").waitFor({
    timeout: 240_000,
  });
  return page.locator(".log-status").getAttribute("data-status");
}

describe("the shell and the service pages", () => {
  it("sidebar, skip link and focus; an application's lifecycle through its tabs; a database with its image; a stack of type stack; accessible and no sideways scroll at 390 px", async () => {
    const { page, context, elsewhere, problems } = await offlinePage(browser, http.url);
    const base = http.url;
    await page.goto(`${base}/`);
    await page.getByLabel("Email").fill("owner@example.com");
    await page.getByLabel("Password").fill("correct-horse-battery");
    await page.getByLabel("Password").press("Enter");
    await page.getByRole("heading", { name: "Projects" }).waitFor();

    // The projects list: its counts read as English, a search without match says so.
    await page.getByRole("main").getByText("1 environment, 0 services").waitFor();
    await page.getByLabel("Search projects").fill("nothing-like-this");
    await page.getByText("No project matches “nothing-like-this”.").waitFor();
    expect(await page.getByText(/No project yet/).count()).toBe(0);
    await page.getByLabel("Search projects").fill("");

    // The skip link focuses the content and stays on this page.
    const hash = new URL(page.url()).hash;
    await page.getByRole("link", { name: "Skip to content" }).focus();
    await page.keyboard.press("Enter");
    expect(await page.evaluate(() => document.activeElement?.id)).toBe("main");
    expect(new URL(page.url()).hash).toBe(hash);
    await page.getByRole("heading", { name: "Projects" }).waitFor();

    // The sidebar: the instance pages by name, on hash routes; the current page marked.
    const sidebar = page.getByRole("navigation", { name: "Main" });
    for (const [name, route] of [
      ["Templates", "#/templates"],
      ["Backups", "#/backups"],
      ["Schedules", "#/schedules"],
      ["Notifications", "#/notifications"],
      ["Certificates", "#/certificates"],
    ]) {
      expect(await sidebar.getByRole("link", { name, exact: true }).getAttribute("href")).toBe(route);
    }
    expect(await sidebar.getByRole("link", { name: "Projects" }).getAttribute("aria-current")).toBe("page");
    await sidebar.getByRole("link", { name: "Servers" }).click();
    await page.getByRole("heading", { name: "Servers", level: 1 }).waitFor();
    expect(await sidebar.getByRole("link", { name: "Servers" }).getAttribute("aria-current")).toBe("page");
    expect(await sidebar.getByRole("link", { name: "Projects" }).getAttribute("aria-current")).toBeNull();
    // Focus is on the new page's heading.
    await vi.waitFor(async () => expect(await focusedTag(page)).toBe("H1"));

    // The project from the sidebar; its page's heading takes the focus.
    await page.getByRole("list", { name: "Your projects" }).getByRole("link", { name: "Shop" }).click();
    await page.getByRole("heading", { name: "Shop", level: 1 }).waitFor();
    await vi.waitFor(async () => expect(await focusedTag(page)).toBe("H1"));
    expect(
      await page
        .getByRole("list", { name: "Your projects" })
        .getByRole("link", { name: "Shop" })
        .getAttribute("aria-current"),
    ).toBe("page");
    await step(page, "project");

    // An application from an image, with a command that prints a line a second.
    await page.getByRole("textbox", { name: "Application name" }).fill("Ticker");
    await page.getByRole("textbox", { name: "Docker image" }).fill(BUSYBOX);
    await page.getByRole("button", { name: "Create application" }).click();
    await page.getByRole("heading", { name: /^Ticker/ }).waitFor();
    const app = await platform.ctx.db
      .selectFrom("applications")
      .select(["applicationId", "appName"])
      .where("name", "=", "Ticker")
      .executeTakeFirstOrThrow();
    appNames.push(app.appName);
    // Its breadcrumbs go through the project.
    await page.getByRole("navigation", { name: "Breadcrumb" }).getByRole("link", { name: "Shop" }).waitFor();
    for (const tab of ["General", "Environment", "Domains", "Deployments", "Logs", "Monitoring", "Advanced"])
      await page
        .getByRole("navigation", { name: "Service views" })
        .getByRole("link", { name: tab, exact: true })
        .waitFor();
    await openTab(page, "Advanced");
    await page
      .getByLabel("Command (empty: the image's own)")
      .fill(
        `sh -c 'echo services-marker-start; i=0; while true; do echo services-tick $i; i=$((i+1)); sleep 1; done'`,
      );
    await page.getByRole("button", { name: "Save command" }).click();
    await page.getByText("Saved; used from the next deployment.").waitFor();
    await step(page, "advanced");

    await page.getByRole("button", { name: "Deploy", exact: true }).click();
    expect(await newestDeploymentEnds(page)).toBe("done");
    expect(await replicasOf(app.appName)).toBe(1);

    // The Logs tab shows the running container's output.
    await openTab(page, "Logs");
    await page
      .getByRole("log", { name: "Runtime log lines" })
      .getByText(/services-tick \d+/)
      .first()
      .waitFor({ timeout: 60_000 });
    await step(page, "logs");

    // Stop scales the service to 0, Start back to 1.
    await page.getByRole("button", { name: "Stop", exact: true }).click();
    await page.getByRole("status").getByText("Stopped.").waitFor({ timeout: 60_000 });
    await vi.waitFor(async () => expect(await replicasOf(app.appName)).toBe(0), { timeout: 30_000 });
    await page.getByRole("button", { name: "Start", exact: true }).click();
    await page.getByRole("status").getByText("Started.").waitFor({ timeout: 60_000 });
    await vi.waitFor(async () => expect(await replicasOf(app.appName)).toBe(1), { timeout: 30_000 });
    await page.getByRole("button", { name: "Reload", exact: true }).click();
    await page.getByRole("status").getByText("Reloaded.").waitFor({ timeout: 60_000 });

    // A second deployment, then a rollback to the first, confirmed in a dialog.
    await page.getByRole("button", { name: "Redeploy (rebuild)" }).click();
    await page.getByRole("list", { name: "Deployments" }).getByRole("listitem").nth(1).waitFor();
    expect(await newestDeploymentEnds(page)).toBe("done");
    const rollbacks = page.getByRole("list", { name: "Rollbacks" });
    await rollbacks
      .getByRole("button", { name: /^Roll back to / })
      .first()
      .click();
    const rollbackDialog = page.getByRole("dialog", { name: "Roll back Ticker?" });
    expect(await rollbackDialog.textContent()).toContain("is replaced by the image of the deployment");
    await checkAccessibility(page, "rollback-dialog");
    const before = await platform.ctx.db
      .selectFrom("deployments")
      .select("deploymentId")
      .where("applicationId", "=", app.applicationId)
      .execute();
    await rollbackDialog.getByRole("button", { name: "Roll back", exact: true }).click();
    await page.getByRole("list", { name: "Deployments" }).getByRole("listitem").nth(before.length).waitFor();
    await vi.waitFor(
      async () => {
        const rows = await platform.ctx.db
          .selectFrom("deployments")
          .select(["status", "title"])
          .where("applicationId", "=", app.applicationId)
          .orderBy("createdAt", "desc")
          .execute();
        expect(rows).toHaveLength(before.length + 1);
        expect(rows[0]!.status).toBe("done");
      },
      { timeout: 240_000, interval: 1000 },
    );
    await step(page, "rolled-back");

    // Delete asks first, naming what goes; Cancel keeps the application.
    await page.getByRole("button", { name: "Delete", exact: true }).click();
    const deleteDialog = page.getByRole("dialog", { name: "Delete Ticker?" });
    const consequence = (await deleteDialog.textContent()) ?? "";
    expect(consequence).toContain(app.appName);
    expect(consequence).toContain("deployments with their logs");
    await step(page, "delete-dialog");
    await deleteDialog.getByRole("button", { name: "Cancel" }).click();
    expect(
      await platform.ctx.db
        .selectFrom("applications")
        .select("applicationId")
        .where("name", "=", "Ticker")
        .execute(),
    ).toHaveLength(1);
    await page.getByRole("button", { name: "Delete", exact: true }).click();
    await deleteDialog.getByRole("button", { name: "Delete Ticker" }).click();
    await page.getByRole("heading", { name: "Shop", level: 1 }).waitFor();
    expect(
      await platform.ctx.db
        .selectFrom("applications")
        .select("applicationId")
        .where("name", "=", "Ticker")
        .execute(),
    ).toHaveLength(0);
    await vi.waitFor(
      async () =>
        expect(await dockerCli(["service", "ls", "-q", "--filter", `name=${app.appName}`])).toBe(""),
      { timeout: 60_000 },
    );

    // An unknown application: one "not found", no buttons.
    await page.goto(`${base}/#/application/no-such-application`);
    await page.getByRole("heading", { name: "Application not found" }).waitFor();
    expect(await page.getByRole("alert").count()).toBe(1);
    expect(await page.getByRole("button", { name: "Deploy" }).count()).toBe(0);
    await page.getByRole("main").getByRole("link", { name: "Back to the projects" }).click();
    await page.getByRole("main").getByRole("link", { name: "Shop" }).click();

    // A database with the image chosen at creation, deployed with it.
    await page.getByRole("combobox", { name: "Database kind" }).selectOption("postgres");
    await page.getByRole("textbox", { name: "Database name" }).fill("Orders");
    await page.getByRole("textbox", { name: /^Database image/ }).fill(POSTGRES);
    await page.getByRole("button", { name: "Create database" }).click();
    await page.getByRole("heading", { name: /^Orders/ }).waitFor();
    const database = await platform.ctx.db
      .selectFrom("databaseServices")
      .select(["appName", "dockerImage"])
      .where("name", "=", "Orders")
      .executeTakeFirstOrThrow();
    appNames.push(database.appName);
    volumes.push(`${database.appName}-data`);
    expect(database.dockerImage).toBe(POSTGRES);
    await page.getByText(`PostgreSQL (${POSTGRES})`).waitFor();
    await page.getByRole("button", { name: "Deploy", exact: true }).click();
    expect(await newestDeploymentEnds(page)).toBe("done");
    await step(page, "database");
    for (const tab of ["Environment", "Logs", "Backups", "Advanced"]) {
      await openTab(page, tab);
      await page.getByRole("heading", { name: /^Orders/ }).waitFor();
      await checkAccessibility(page, `database-${tab}`);
    }
    await page.getByRole("button", { name: "Delete", exact: true }).click();
    const dropDialog = page.getByRole("dialog", { name: "Delete Orders?" });
    expect(await dropDialog.textContent()).toContain(`${database.appName}-data`);
    await dropDialog.getByRole("button", { name: "Delete Orders" }).click();
    await page.getByRole("heading", { name: "Shop", level: 1 }).waitFor();
    expect(
      await platform.ctx.db
        .selectFrom("databaseServices")
        .select("appName")
        .where("name", "=", "Orders")
        .execute(),
    ).toHaveLength(0);

    // A compose stack deployed as a Swarm stack.
    await page.getByRole("textbox", { name: "Stack name" }).fill("Swarmed");
    await page.getByRole("combobox", { name: "Deploy with" }).selectOption("stack");
    await page
      .getByRole("textbox", { name: "Compose file" })
      .fill(`services:\n  idle:\n    image: ${BUSYBOX}\n    command: ["sleep", "3600"]\n`);
    await page.getByRole("button", { name: "Create stack" }).click();
    await page.getByRole("heading", { name: /^Swarmed/ }).waitFor();
    const stack = await platform.ctx.db
      .selectFrom("compose")
      .select(["appName", "composeType"])
      .where("name", "=", "Swarmed")
      .executeTakeFirstOrThrow();
    stackNames.push(stack.appName);
    expect(stack.composeType).toBe("stack");
    await page.getByRole("navigation", { name: "Breadcrumb" }).getByRole("link", { name: "Shop" }).waitFor();
    await page.getByRole("button", { name: "Deploy stack" }).click();
    expect(await newestDeploymentEnds(page)).toBe("done");
    await vi.waitFor(
      async () =>
        expect(await dockerCli(["stack", "services", stack.appName, "--format", "{{.Name}}"])).toContain(
          "idle",
        ),
      { timeout: 60_000 },
    );
    await step(page, "stack");

    // Every page touched, in both themes, then on a phone: accessible, nothing wider than it.
    await page.goto(`${base}/#/project/${projectId}`);
    await page.getByRole("heading", { name: "Shop", level: 1 }).waitFor();
    const composeId = (
      await platform.ctx.db
        .selectFrom("compose")
        .select("composeId")
        .where("name", "=", "Swarmed")
        .executeTakeFirstOrThrow()
    ).composeId;
    const routes = [
      "#/",
      `#/project/${projectId}`,
      `#/compose/${composeId}`,
      `#/compose/${composeId}/environment`,
      `#/compose/${composeId}/deployments`,
      `#/compose/${composeId}/advanced`,
      "#/servers",
      "#/queue",
      "#/git-providers",
      "#/members",
      "#/api-keys",
      "#/settings",
      "#/no-such-page",
    ];
    await sweepThemesAndPhone(page, base, routes);

    // On the phone the top bar is short, and its Menu opens the sidebar, which a link closes.
    const bar = await page.locator("header.topbar").boundingBox();
    expect(bar!.height).toBeLessThan(80);
    const menu = page.getByRole("button", { name: "Menu" });
    expect(await menu.getAttribute("aria-expanded")).toBe("false");
    expect(await page.getByRole("navigation", { name: "Main" }).isVisible()).toBe(false);
    await menu.click();
    expect(await menu.getAttribute("aria-expanded")).toBe("true");
    await step(page, "phone-menu");
    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Servers" }).click();
    await page.getByRole("heading", { name: "Servers", level: 1 }).waitFor();
    expect(await page.getByRole("navigation", { name: "Main" }).isVisible()).toBe(false);
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    await step(page, "phone-servers");

    expect(elsewhere).toEqual([]);
    expect(problems).toEqual([]);
    await context.close();
  }, 900_000);
});
