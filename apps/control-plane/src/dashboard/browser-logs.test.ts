/**
 * The Logs tab (issue 39, item 7) in headless chromium, on the real Docker Engine (Swarm) and the
 * control plane's in-process agent: an application printing a numbered line every second (and,
 * first, a line of HTML) is opened on its Logs tab, which follows GET /api/runtime.logs live:
 * - a line printed after the tab opened appears (a number above every number shown at first);
 * - the container's `<img src=x onerror=…>` is shown as text, and no element nor handler is made
 *   of it (the CSP would refuse the handler anyway, so the element is what is checked);
 * - a search phrase the API refuses shows the API's 400 message.
 * A compose stack's container (printing alpha and beta lines) and a postgres service have the same
 * tab: their running container's output appears, and a search phrase keeps only its lines.
 * axe-core checks the tab; its screenshots are test-artifacts/dashboard/logs-*.png.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import {
  dockerCli,
  removeDatabaseServices,
  removeDeployedApps,
  requireDocker,
  uniqueName,
} from "@platform/agent/testing/docker.ts";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { listen } from "../agents/testing/agents.ts";
import { startTestPlatform, type TestPlatform } from "../testing/harness.ts";
import { launchChromium, offlinePage, stepper } from "./browser-fixture.ts";

const BUSYBOX = "platform-test/busybox:latest";
const POSTGRES = process.env.PLATFORM_TEST_POSTGRES_IMAGE ?? "platform-test/db-postgres:15";
const IMG = "<img src=x onerror=window.__xss=1>";

let platform: TestPlatform;
let http: { url: string; close(): Promise<void> };
let browser: Browser;
let mainDirectory: string;
let applicationId: string;
let composeId: string;
let postgresId: string;
const appName = uniqueName("logs-tab");
const stackName = uniqueName("logs-tab-stack");
const postgresName = uniqueName("logs-tab-pg");

beforeAll(async () => {
  await requireDocker();
  mainDirectory = await mkdtemp(path.join(tmpdir(), "dashboard-logs-"));
  platform = await startTestPlatform(
    { PLATFORM_DEFAULT_IMAGE_POSTGRES: POSTGRES },
    { agents: { localAgent: { mainDirectory } } },
  );
  http = await listen(platform);
  browser = await launchChromium();
  const owner = await platform.registerOwner();
  const ok = (name: string, input: Record<string, unknown>) =>
    platform.mutateOk(name, input, { token: owner.token });
  const { environmentId } = (await ok("project.create", { name: "Logs" })).environment;
  ({ applicationId } = await ok("application.create", { name: "ticker", appName, environmentId }));
  await ok("application.saveDockerProvider", { applicationId, dockerImage: BUSYBOX });
  await ok("application.update", {
    applicationId,
    command: `sh -c 'echo "${IMG}"; i=0; while true; do echo "logs-tab-marker $i"; i=$((i+1)); sleep 1; done'`,
  });
  ({ composeId } = await ok("compose.create", {
    name: "alphabet",
    appName: stackName,
    environmentId,
    composeType: "stack",
    composeFile: `services:
  ticker:
    image: ${BUSYBOX}
    command: ["sh", "-c", "i=0; while true; do echo compose-alpha $$i; echo compose-beta $$i; i=$$((i+1)); sleep 1; done"]
`,
  }));
  ({ postgresId } = await ok("postgres.create", {
    name: "pg",
    appName: postgresName,
    environmentId,
    databaseName: "app",
    databaseUser: "app",
    databasePassword: "Logs#tab1",
  }));
  await Promise.all(
    [
      ok("application.deploy", { applicationId }),
      ok("compose.deploy", { composeId }),
      ok("postgres.deploy", { postgresId }),
    ].map(async (started) => {
      const row = await platform.waitForDeployment((await started).deploymentId, 240_000);
      expect(row.status, row.logs ?? "").toBe("done");
    }),
  );
}, 300_000);

afterAll(async () => {
  await browser?.close();
  await http?.close();
  await platform?.close();
  await removeDeployedApps([appName]);
  await dockerCli(["stack", "rm", stackName]).catch(() => {});
  await removeDatabaseServices([postgresName]);
  if (mainDirectory) await rm(mainDirectory, { recursive: true, force: true });
}, 90_000);

async function signIn(page: Page, base: string) {
  await page.goto(`${base}/`);
  await page.getByLabel("Email").fill("owner@example.com");
  await page.getByLabel("Password").fill("correct-horse-battery");
  await page.getByLabel("Password").press("Enter");
  await page.getByRole("heading", { name: "Projects" }).waitFor();
}

/** The text of every line the Logs tab shows now. */
const shownLines = async (page: Page) =>
  (await page.getByRole("log", { name: "Runtime log lines" }).locator("div").allTextContents()).filter(
    (line) => line !== "No line yet.",
  );

/**
 * Opens `route`'s Logs tab: `known` appears; searching `phrase` leaves only lines containing it
 * (case-insensitively, as the API searches) and at least one, still following new lines.
 */
async function showsAndSearches(route: string, known: RegExp, phrase: string, screenshot: string) {
  const base = http.url;
  const step = stepper("logs-");
  const { page, context, elsewhere, problems } = await offlinePage(browser, base);
  await signIn(page, base);
  await page.goto(`${base}/#/${route}`);
  await page.getByRole("navigation", { name: "Service views" }).getByRole("link", { name: "Logs" }).click();
  const log = page.getByRole("log", { name: "Runtime log lines" });
  await log.getByText(known).first().waitFor({ timeout: 90_000 });
  expect((await shownLines(page)).some((line) => !line.toLowerCase().includes(phrase.toLowerCase()))).toBe(
    true,
  );

  await page.getByLabel("Search the runtime log").fill(phrase);
  await page.getByRole("button", { name: "Search" }).click();
  // The lines shown before the search go; the searched stream's come.
  await vi.waitFor(
    async () => {
      const lines = await shownLines(page);
      expect(lines.length).toBeGreaterThan(0);
      for (const line of lines) expect(line.toLowerCase()).toContain(phrase.toLowerCase());
    },
    { timeout: 60_000, interval: 200 },
  );
  await page.getByRole("status").filter({ hasText: "Following new lines" }).waitFor();
  await step(page, screenshot);
  expect(elsewhere).toEqual([]);
  expect(problems.filter((problem) => !/status of (4\d\d|503)/.test(problem))).toEqual([]);
  await context.close();
}

describe("an application's Logs tab", () => {
  it("follows the runtime log live, shows HTML as text and the API's refusal of a search", async () => {
    const base = http.url;
    const step = stepper("logs-");
    const { page, context, elsewhere, problems } = await offlinePage(browser, base);
    await signIn(page, base);

    await page.goto(`${base}/#/application/${applicationId}`);
    await page.getByRole("navigation", { name: "Service views" }).getByRole("link", { name: "Logs" }).click();
    const log = page.getByRole("log", { name: "Runtime log lines" });
    await log
      .getByText(/logs-tab-marker \d+/)
      .first()
      .waitFor({ timeout: 60_000 });
    const numbers = async () =>
      (await log.locator("div").allTextContents())
        .map((line) => /logs-tab-marker (\d+)$/.exec(line))
        .filter((match) => match !== null)
        .map((match) => Number(match[1]));
    const firstShown = Math.max(...(await numbers()));
    // A line the container printed after the tab had opened its stream.
    await log.getByText(`logs-tab-marker ${firstShown + 2}`, { exact: false }).waitFor({ timeout: 60_000 });
    await page.getByRole("status").filter({ hasText: "Following new lines" }).waitFor();

    await log.getByText(IMG).waitFor();
    const injected = await page.evaluate(() => ({
      flag: (window as unknown as { __xss?: unknown }).__xss ?? null,
      images: document.querySelectorAll('img[src="x"]').length,
      handlers: [...document.querySelectorAll("[onerror]")].length,
    }));
    expect(injected).toEqual({ flag: null, images: 0, handlers: 0 });
    await step(page, "live");

    await page.getByLabel("Search the runtime log").fill("marker; rm -rf /");
    await page.getByRole("button", { name: "Search" }).click();
    await page.getByRole("alert").filter({ hasText: "search must be a plain phrase" }).waitFor();
    await step(page, "search-refused");

    expect(elsewhere).toEqual([]);
    expect(problems.filter((problem) => !/status of (4\d\d|503)/.test(problem))).toEqual([]);
    await context.close();
  }, 180_000);
});

describe("a compose stack's and a database's Logs tab", () => {
  it("shows the stack's container's output and keeps only the searched lines", async () => {
    await showsAndSearches(`compose/${composeId}`, /compose-alpha \d+/, "compose-BETA", "compose");
  }, 180_000);

  it("shows the postgres service's output and keeps only the searched lines", async () => {
    await showsAndSearches(
      `database/postgres/${postgresId}`,
      /database system is ready to accept connections/,
      "accept connections",
      "postgres",
    );
  }, 180_000);
});
