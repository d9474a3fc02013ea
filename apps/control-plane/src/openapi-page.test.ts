/**
 * The reference page (/api/docs) in a real browser: Debian's chromium (installed by
 * scripts/test-env.sh), headless, loads it from a control plane on 127.0.0.1 and must list
 * every spec router, with every request it makes answered by that control plane alone (the
 * page works offline: no CDN, no validator badge, no fonts from elsewhere).
 */
import { existsSync } from "node:fs";
import type { AddressInfo } from "node:net";
import { serve } from "@hono/node-server";
import { type Browser, chromium } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { allRouters } from "./routers/index.ts";
import { startTestPlatform, type TestPlatform } from "./testing/harness.ts";

const CHROMIUM = process.env.PLATFORM_TEST_CHROMIUM ?? "/usr/bin/chromium";

describe("API reference page in headless chromium", () => {
  let platform: TestPlatform;
  let server: ReturnType<typeof serve>;
  let base: string;
  let browser: Browser;

  beforeAll(async () => {
    if (!existsSync(CHROMIUM)) {
      throw new Error(`${CHROMIUM} is missing: apt-get install -y chromium (scripts/test-env.sh does it)`);
    }
    platform = await startTestPlatform();
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
        "--disable-component-update",
        "--no-first-run",
      ],
    });
  });

  afterAll(async () => {
    await browser?.close();
    await new Promise((resolve) => server?.close(resolve));
    await platform?.close();
  });

  it("lists every spec router, loading nothing from anywhere but this control plane", async () => {
    const page = await browser.newPage();
    const elsewhere: string[] = [];
    // Anything not addressed to this control plane is refused and recorded: offline means offline.
    await page.route("**/*", (route) => {
      const url = route.request().url();
      if (url.startsWith(`${base}/`)) return route.continue();
      elsewhere.push(url);
      return route.abort();
    });
    const errors: string[] = [];
    page.on("pageerror", (error) => errors.push(error.message));

    const response = await page.goto(`${base}/api/docs`);
    expect(response?.status()).toBe(200);
    // Swagger UI virtualises a long list of operations: only what is near the viewport is in the
    // page, so the tags and paths are collected while scrolling through it.
    await page.waitForSelector("[data-tag]", { timeout: 20_000 });
    const tags = new Set<string | null>();
    const paths = new Set<string | null>();
    for (let step = 0; step < 2000; step++) {
      for (const tag of await page.$$eval("[data-tag]", (all) => all.map((e) => e.getAttribute("data-tag"))))
        tags.add(tag);
      for (const path of await page.$$eval(".opblock-summary-path", (all) =>
        all.map((e) => e.getAttribute("data-path")),
      ))
        paths.add(path);
      const atEnd = await page.evaluate(() => {
        window.scrollBy(0, window.innerHeight / 2);
        return window.scrollY + window.innerHeight >= document.documentElement.scrollHeight - 2;
      });
      if (atEnd && step > 0) break;
      await page.waitForTimeout(20);
    }
    for (const router of allRouters) expect([...tags], router.name).toContain(router.name);
    expect([...tags]).toContain("trpc");
    // Tags are expanded by default: their operations are listed with their paths.
    expect([...paths]).toContain("/api/project.create");
    expect([...paths]).toContain("/api/trpc/{path}");
    expect(elsewhere).toEqual([]);
    expect(errors).toEqual([]);
    await page.close();
  });
});
