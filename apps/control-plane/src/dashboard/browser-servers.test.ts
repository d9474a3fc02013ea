/**
 * The dashboard's servers page in a real browser (issue 29, item 5), beside browser.test.ts and
 * sharing its fixture: the owner adds a server with a new SSH key (its public key shown), reads
 * its bootstrap command, and the agent started with that command's token enrolls it (JWT NATS,
 * as in production); the page then shows the agent online and, on demand, the validation and
 * security audit as that server's agent answers them, and its monitoring (thresholds) set up
 * from the page with its CPU and memory graph. The set-up over SSH against a port where
 * nothing listens reports its failure with the set-up log. axe-core on every step.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { requireDocker } from "@platform/agent/testing/docker.ts";
import { freePort } from "@platform/agent/testing/net.ts";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { buildDashboard } from "../../../../scripts/build-dashboard.mjs";
import { type AgentProcess, killAgentProcess, listen, startAgentProcess } from "../agents/testing/agents.ts";
import { type JwtNats, startJwtNats } from "../agents/testing/nats-jwt.ts";
import { startTestPlatform, type TestPlatform } from "../testing/harness.ts";
import { launchChromium, offlinePage, stepper } from "./browser-fixture.ts";

let nats: JwtNats;
let platform: TestPlatform;
let http: { url: string; close(): Promise<void> };
let browser: Browser;
let agent: AgentProcess | undefined;
let stateDir: string;

beforeAll(async () => {
  await requireDocker();
  await buildDashboard();
  nats = await startJwtNats();
  // The agent serves its metrics on this machine, which the control plane may then read.
  platform = await startTestPlatform({
    ...nats.env,
    PLATFORM_PUBLIC_IP: "127.0.0.1",
    PLATFORM_OUTBOUND_ALLOW: "127.0.0.0/8",
  });
  http = await listen(platform);
  stateDir = await mkdtemp(path.join(tmpdir(), "dashboard-agent-"));
  browser = await launchChromium();
}, 120_000);

afterAll(async () => {
  await killAgentProcess(agent);
  await browser?.close();
  await http?.close();
  await platform?.close();
  await nats?.stop();
  if (stateDir) await rm(stateDir, { recursive: true, force: true });
}, 60_000);

const step = stepper("servers-");

describe("the servers page in headless chromium", () => {
  it("adds a server, enrolls its agent with the bootstrap command, shows validation and audit, reports a failed SSH set-up with its log", async () => {
    const { context, page, elsewhere, problems } = await offlinePage(browser, http.url);
    await page.goto(`${http.url}/`);
    await page.getByLabel("Email").fill("owner@example.com");
    await page.getByLabel("Password").fill("correct-horse-battery");
    await page.getByLabel("Password").press("Enter");
    await page.getByRole("heading", { name: "Projects" }).waitFor();
    await page.getByRole("link", { name: "Servers" }).click();
    await page.getByRole("heading", { name: "Add a server" }).waitFor();

    // A new SSH key for the organization: its public key is shown, and the form selects it.
    await page.getByRole("button", { name: "New SSH key" }).click();
    expect(await page.getByLabel("Public key").textContent()).toMatch(/^ssh-ed25519 /);
    const closedPort = await freePort();
    await page.getByRole("textbox", { name: "Server name" }).fill("edge");
    await page.getByRole("textbox", { name: "IP address or host name" }).fill("127.0.0.1");
    await page.getByRole("spinbutton", { name: "SSH port" }).fill(String(closedPort));
    await page.getByRole("button", { name: "Add server" }).click();
    const item = page.getByRole("listitem").filter({ has: page.getByRole("heading", { name: /^edge/ }) });
    await item.waitFor();
    const row = await platform.services.db
      .selectFrom("servers")
      .select(["serverId", "sshKeyId", "port", "username"])
      .executeTakeFirstOrThrow();
    expect(row).toMatchObject({ sshKeyId: expect.any(String), port: closedPort, username: "root" });
    await step(page, "added");

    // The bootstrap command; its token enrolls an agent, and the server turns active and online.
    await item.getByRole("button", { name: "Bootstrap command for edge" }).click();
    const command = (await page.getByLabel("Bootstrap command for edge").textContent()) ?? "";
    const token = /--enrollment-token (\S+)/.exec(command)?.[1];
    expect(command).toMatch(/^curl -fsSL http:\/\/127\.0\.0\.1:\d+\/agent\/install\.sh \| sudo sh -s -- /);
    expect(token).toBeTruthy();
    await step(page, "bootstrap");
    agent = startAgentProcess({ stateDir, controlPlaneUrl: http.url, enrollmentToken: token });
    await vi.waitFor(
      async () => {
        expect(agent!.child.exitCode, agent!.logLines.join("\n")).toBeNull();
        const one = await platform.services.db
          .selectFrom("servers")
          .select(["enrolledAt", "lastHeartbeatAt"])
          .executeTakeFirstOrThrow();
        expect(one.enrolledAt).not.toBeNull();
        expect(one.lastHeartbeatAt).not.toBeNull();
      },
      { timeout: 60_000, interval: 500 },
    );
    // The page reads the list again by itself.
    await item.getByText("agent online").waitFor({ timeout: 30_000 });

    // Validation and the security audit, as the server's own agent answers them.
    await item.getByRole("button", { name: "Check edge" }).click();
    await item.getByRole("heading", { name: "Validation" }).waitFor({ timeout: 30_000 });
    await item.getByRole("heading", { name: "Security audit" }).waitFor();
    expect(await item.locator("dt", { hasText: /^docker$/ }).count()).toBe(1);
    expect(await item.locator("dd").first().textContent()).toMatch(/^enabled: yes/);
    expect(await item.locator("dt", { hasText: /^ufw$/ }).count()).toBe(1);
    await step(page, "checked");

    // Its monitoring, with thresholds, set up from the page; then its CPU and memory graph.
    await item.locator("summary", { hasText: "Monitoring of edge" }).click();
    const monitoring = item.getByRole("form", { name: "Monitoring of edge" });
    await monitoring.getByLabel("Refresh every (seconds)").fill("2");
    await monitoring.getByLabel("Metrics port").fill(String(await freePort()));
    await monitoring.getByLabel("CPU threshold % (0: off)").fill("80");
    await monitoring.getByLabel("Alerts to (URL)").fill("http://127.0.0.1:9/threshold");
    await monitoring.getByRole("button", { name: "Save monitoring" }).click();
    await monitoring
      .getByRole("status")
      .getByText(/^Monitoring runs/)
      .waitFor({ timeout: 30_000 });
    await item
      .getByRole("figure", { name: "CPU and memory use of edge" })
      .getByText(/^Now: CPU [\d.]+ %, Memory [\d.]+ %$/)
      .waitFor({ timeout: 30_000 });
    await step(page, "monitoring");

    // The set-up over SSH: nothing listens on that port, so it fails and shows its log.
    await item.getByRole("button", { name: "Set up edge over SSH" }).click();
    const log = item.getByRole("log", { name: "Set-up log of edge" });
    await log.waitFor({ timeout: 60_000 });
    expect(await log.textContent()).toContain(`connecting to root@127.0.0.1:${closedPort}`);
    expect(await log.textContent()).toContain("== setup failed");
    await step(page, "setup-failed");

    expect(elsewhere).toEqual([]);
    expect(problems).toEqual([]);
    await context.close();
  }, 240_000);
});
