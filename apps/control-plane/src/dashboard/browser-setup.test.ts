/**
 * The dashboard's first visit from another machine (issue 37 finding 11), in headless chromium:
 * the control plane trusts a "proxy" on 127.0.0.1 and the browser's requests say they are
 * forwarded for another address, so the page is another machine's. The form asks for the
 * set-up token; a wrong one is refused with the API's message, and the link the control plane
 * printed (/?setup=<token>) fills it in and claims the instance.
 */
import type { AddressInfo } from "node:net";
import { serve } from "@hono/node-server";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { issueSetupToken } from "../auth/setup-token.ts";
import { startTestPlatform, type TestPlatform } from "../testing/harness.ts";
import { launchChromium, offlinePage, stepper } from "./browser-fixture.ts";

let platform: TestPlatform;
let server: ReturnType<typeof serve>;
let base: string;
let browser: Browser;

beforeAll(async () => {
  platform = await startTestPlatform({ PLATFORM_TRUSTED_PROXIES: "127.0.0.1" });
  server = serve({ fetch: platform.app.fetch, hostname: "127.0.0.1", port: 0 });
  await new Promise((resolve) => server.once("listening", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  browser = await launchChromium();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await new Promise((resolve) => server?.close(resolve));
  await platform?.close();
});

const step = stepper("setup-");

describe("the first visit from another machine", () => {
  it("the page asks for the token from another machine only", async () => {
    expect(String((await platform.request("/")).body)).toContain('data-setup-token="none"');
    const remote = await fetch(`${base}/`, { headers: { "x-forwarded-for": "198.51.100.7" } });
    expect(await remote.text()).toContain('data-setup-token="required"');
  });

  it("asks for the set-up token, refuses a wrong one, and the printed link's token claims the instance", async () => {
    const token = await issueSetupToken(platform.ctx);
    const { context, page, elsewhere, problems } = await offlinePage(browser, base);
    await context.setExtraHTTPHeaders({ "x-forwarded-for": "198.51.100.7" });
    const fill = async () => {
      await page.getByLabel("Email").fill("owner@example.com");
      await page.getByLabel("Your name").fill("Owner");
      await page.getByLabel("Password").fill("correct-horse-battery");
    };

    await page.goto(`${base}/`);
    await page.getByRole("heading", { name: "Create the first account" }).waitFor();
    const field = page.getByLabel("Set-up token");
    expect(await field.inputValue()).toBe("");
    await step(page, "asked");
    await fill();
    await field.fill("not-the-token");
    await page.getByRole("button", { name: "Create account" }).click();
    await expect.poll(() => page.getByRole("alert").textContent()).toMatch(/setupToken is not/);
    expect(await platform.ctx.db.selectFrom("users").select("userId").execute()).toEqual([]);

    await page.goto(`${base}/?setup=${token}`);
    await page.getByRole("heading", { name: "Create the first account" }).waitFor();
    expect(await page.getByLabel("Set-up token").inputValue()).toBe(token);
    await fill();
    await page.getByRole("button", { name: "Create account" }).click();
    await page.getByRole("heading", { name: "Projects" }).waitFor();
    await step(page, "claimed");
    expect(await platform.ctx.db.selectFrom("setupTokens").selectAll().execute()).toEqual([]);
    expect(elsewhere).toEqual([]);
    expect(problems).toEqual([]);
    await context.close();
  }, 60_000);
});
