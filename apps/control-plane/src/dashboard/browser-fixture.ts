/**
 * What the dashboard's browser tests share: Debian's chromium, headless and offline (every
 * request that is not to the control plane under test is refused and recorded), axe-core
 * added by the browser on each document (the CSP refuses page scripts), a check of every page
 * for serious or critical violations, and a screenshot of each step in test-artifacts/dashboard
 * (gitignored), named with the file's prefix. The page served is dist/dashboard, which the suite's
 * global setup builds again whenever a source is newer (tests/global-setup.ts).
 */
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { type Browser, type BrowserContext, chromium, type Page } from "playwright-core";
import { expect } from "vitest";

const CHROMIUM = process.env.PLATFORM_TEST_CHROMIUM ?? "/usr/bin/chromium";
export const ARTIFACTS = fileURLToPath(new URL("../../../../test-artifacts/dashboard/", import.meta.url));
const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");

export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`${CHROMIUM} is missing: apt-get install -y chromium (scripts/test-env.sh does it)`);
  }
  mkdirSync(ARTIFACTS, { recursive: true });
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-background-networking",
      "--no-first-run",
    ],
  });
}

/** A page that reaches only `base`; `elsewhere` and `problems` collect what must stay empty. */
export async function offlinePage(browser: Browser, base: string) {
  const context: BrowserContext = await browser.newContext({ viewport: { width: 1200, height: 900 } });
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
    if (
      message.type() === "error" &&
      !/the server responded with a status of (4\d\d|503)/.test(message.text())
    )
      problems.push(message.text());
  });
  return { context, page, elsewhere, problems };
}

/** axe-core on the page as it is: no serious or critical violation. */
export async function checkAccessibility(page: Page, step: string) {
  const violations = await page.evaluate(async () => {
    const result = await (window as any).axe.run(document, { resultTypes: ["violations"] });
    return result.violations
      .filter((v: any) => v.impact === "serious" || v.impact === "critical")
      .map((v: any) => `${v.id} (${v.impact}): ${v.nodes.map((n: any) => n.target.join(" ")).join(", ")}`);
  });
  expect(violations, `axe-core at step ${step}`).toEqual([]);
}

/** Each step: axe-core, then a full-page screenshot `<prefix><nn>-<name>.png`. */
export function stepper(prefix: string) {
  let number = 0;
  return async (page: Page, name: string) => {
    number += 1;
    await checkAccessibility(page, name);
    await page.screenshot({
      path: path.join(ARTIFACTS, `${prefix}${String(number).padStart(2, "0")}-${name}.png`),
      fullPage: true,
    });
  };
}

/** Up to three elements of the page's main content reaching past a 390 px phone's width. */
export function widerThanPhone(page: Page): Promise<string[]> {
  return page.evaluate(() =>
    document.documentElement.scrollWidth <= 390
      ? []
      : [...document.querySelectorAll("main *")]
          .filter((element) => element.getBoundingClientRect().right > 391)
          .slice(0, 3)
          .map(
            (element) => `${element.tagName}.${element.className} ${element.getBoundingClientRect().right}`,
          ),
  );
}

/**
 * Visits each route in the light theme, then the dark one (the header's button), then at 390 px
 * in the dark and (stored, read again on a reload) light themes: axe-core on each visit, and on
 * the phone nothing wider than it. `ready` waits for what a route shows besides its heading.
 * The page is left at 390 px in the light theme.
 */
export async function sweepThemesAndPhone(
  page: Page,
  base: string,
  routes: readonly string[],
  ready: (page: Page) => Promise<void> = async () => {},
) {
  const sweep = async (label: string, phone: boolean) => {
    for (const route of routes) {
      await page.goto(`${base}/${route}`);
      await page.locator("main h1").first().waitFor();
      await ready(page);
      await page.waitForLoadState("networkidle");
      await checkAccessibility(page, `${label} ${route}`);
      if (phone) expect(await widerThanPhone(page), `${route} at 390 px`).toEqual([]);
    }
  };
  await sweep("light", false);
  await page.getByRole("button", { name: "Dark theme" }).click();
  await sweep("dark", false);
  await page.setViewportSize({ width: 390, height: 844 });
  await sweep("phone dark", true);
  // A hash-only goto stays in the document: the light theme is read again on a reload.
  await page.evaluate(() => localStorage.setItem("platform-theme", "light"));
  await page.reload();
  expect(await page.evaluate(() => document.documentElement.dataset.theme)).toBe("light");
  await sweep("phone light", true);
}
