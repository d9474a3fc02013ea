/**
 * The dashboard's two-factor sign-in (issue 41 item 8), in headless chromium: an owner with
 * two-factor sign-in enabled types the password, is asked for the authenticator's code (the page
 * shows no project before it), a wrong code is refused with the API's message, the right one
 * signs in; a recovery code works through "Use a recovery code".
 */
import type { AddressInfo } from "node:net";
import { serve } from "@hono/node-server";
import { Secret, TOTP } from "otpauth";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestPlatform, type TestPlatform } from "../testing/harness.ts";
import { launchChromium, offlinePage, stepper } from "./browser-fixture.ts";

let platform: TestPlatform;
let server: ReturnType<typeof serve>;
let base: string;
let browser: Browser;
let secret = "";
let backupCodes: string[] = [];
let offsetMs = 0;

beforeAll(async () => {
  platform = await startTestPlatform();
  platform.ctx.now = () => new Date(Date.now() + offsetMs);
  server = serve({ fetch: platform.app.fetch, hostname: "127.0.0.1", port: 0 });
  await new Promise((resolve) => server.once("listening", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const owner = await platform.registerOwner();
  const enrolment = await platform.mutateOk(
    "auth.twoFactorEnable",
    { password: "correct-horse-battery" },
    { token: owner.token },
  );
  secret = enrolment.secret;
  backupCodes = enrolment.backupCodes;
  await platform.mutateOk("auth.twoFactorConfirm", { code: codeNow() }, { token: owner.token });
  offsetMs += 30_000;
  browser = await launchChromium();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await new Promise((resolve) => server?.close(resolve));
  await platform?.close();
});

function codeNow(stepsFromNow = 0): string {
  return TOTP.generate({
    secret: Secret.fromBase32(secret),
    timestamp: platform.ctx.now().getTime() + stepsFromNow * 30_000,
  });
}

const step = stepper("two-factor-");

describe("two-factor sign-in in the dashboard", () => {
  it("asks for the code after the password, refuses a wrong one, signs in with the right one", async () => {
    const { context, page, elsewhere, problems } = await offlinePage(browser, base);
    const signInWithPassword = async () => {
      await page.getByRole("heading", { name: "Sign in" }).waitFor();
      await page.getByLabel("Email").fill("owner@example.com");
      await page.getByLabel("Password").fill("correct-horse-battery");
      await page.getByRole("button", { name: "Sign in" }).click();
      await page.getByRole("heading", { name: "Two-factor sign-in" }).waitFor();
    };
    await page.goto(`${base}/`);
    await signInWithPassword();
    expect((await context.cookies()).map((cookie) => cookie.name)).not.toContain("platform_session");
    await step(page, "asked");

    await page.getByLabel("Code from your authenticator app").fill(codeNow(5));
    await page.getByRole("button", { name: "Sign in" }).click();
    await expect.poll(() => page.getByRole("alert").textContent()).toMatch(/Invalid two-factor code/);
    await page.getByLabel("Code from your authenticator app").fill(codeNow());
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("heading", { name: "Projects" }).waitFor();
    await step(page, "signed-in");

    await page.getByRole("button", { name: "Sign out" }).click();
    await signInWithPassword();
    await page.getByRole("button", { name: "Use a recovery code" }).click();
    await page.getByLabel("Recovery code").fill(backupCodes[0]!);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("heading", { name: "Projects" }).waitFor();
    expect(elsewhere).toEqual([]);
    expect(problems).toEqual([]);
    await context.close();
  }, 60_000);
});
