/**
 * The dashboard's servers page in a real browser (issue 29, item 5), beside browser.test.ts and
 * sharing its fixture: the owner adds a server with a new SSH key (its public key shown), reads
 * its bootstrap command, and the agent started with that command's token enrolls it (JWT NATS,
 * as in production); the page then shows the agent online and, on demand, the validation and
 * security audit as that server's agent answers them, and its monitoring (thresholds) set up
 * from the page with its CPU and memory graph, graphed again after a reload (server.one answers
 * the configuration, its token to administrators only), and a cleanup of its stopped containers
 * from its row, which removes only the organization's own (the page's user is not the instance
 * administrator, so the shared engine is never pruned whole), and its daily Docker cleanup turned
 * on from its row (settings.updateDockerCleanup with its serverId), checked after a reload and in
 * server.one / server.all. The set-up over SSH against a port
 * where nothing listens reports its failure with the set-up log. axe-core on every step.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { dockerCli, requireDocker, TEST_IMAGE, uniqueName } from "@platform/agent/testing/docker.ts";
import { freePort } from "@platform/agent/testing/net.ts";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { type AgentProcess, killAgentProcess, listen, startAgentProcess } from "../agents/testing/agents.ts";
import { type JwtNats, startJwtNats } from "../agents/testing/nats-jwt.ts";
import { type Session, startTestPlatform, type TestPlatform } from "../testing/harness.ts";
import { createOtherOrganization } from "../users/test-support.ts";
import { launchChromium, offlinePage, stepper } from "./browser-fixture.ts";

let nats: JwtNats;
let platform: TestPlatform;
let http: { url: string; close(): Promise<void> };
let browser: Browser;
let agent: AgentProcess | undefined;
let stateDir: string;
let owner: Session & { organizationId: string };
const containers: string[] = [];

beforeAll(async () => {
  await requireDocker();
  nats = await startJwtNats();
  // The agent serves its metrics on this machine, which the control plane may then read.
  platform = await startTestPlatform({
    ...nats.env,
    PLATFORM_PUBLIC_IP: "127.0.0.1",
    PLATFORM_OUTBOUND_ALLOW: "127.0.0.0/8",
  });
  http = await listen(platform);
  // The instance administrator is someone else: owner@example.com's organization cleans only its own.
  await platform.registerOwner("instance-admin@example.com");
  owner = await createOtherOrganization(platform, "owner@example.com", "Edge organization");
  stateDir = await mkdtemp(path.join(tmpdir(), "dashboard-agent-"));
  browser = await launchChromium();
}, 120_000);

afterAll(async () => {
  await killAgentProcess(agent);
  for (const name of containers) await dockerCli(["rm", "-f", name]).catch(() => {});
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
    const row = await platform.ctx.db
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
        const one = await platform.ctx.db
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
    await item.getByRole("heading", { name: "Validation" }).waitFor({ timeout: 120_000 });
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

    // server.one answers the configuration: its token to administrators, redacted to members.
    const shown = await platform.query("server.one", { serverId: row.serverId }, { token: owner.token });
    expect(shown.body.metricsConfig.server).toMatchObject({
      refreshRate: 2,
      thresholds: { cpu: 80, memory: 0 },
    });
    const metricsToken = shown.body.metricsConfig.server.token as string;
    expect(metricsToken).toMatch(/^[0-9a-f]{48}$/);
    const member = await platform.addMember(owner, "member");
    const seen = await platform.query("server.one", { serverId: row.serverId }, { token: member.token });
    expect(seen.body.metricsConfig.server.token).toBe("[redacted]");
    expect(JSON.stringify(seen.body)).not.toContain(metricsToken);

    // After a reload the page graphs the server again, from server.one's configuration.
    await page.reload();
    await item
      .getByRole("figure", { name: "CPU and memory use of edge" })
      .getByText(/^Now: CPU [\d.]+ %, Memory [\d.]+ %$/)
      .waitFor({ timeout: 30_000 });
    await item.locator("summary", { hasText: "Monitoring of edge" }).click();
    expect(await monitoring.getByLabel("CPU threshold % (0: off)").inputValue()).toBe("80");
    await step(page, "monitoring-reloaded");

    // A cleanup of edge's stopped containers from its row: the organization's own go, another's stay.
    const own = uniqueName("dash-cleanup-own");
    const others = uniqueName("dash-cleanup-other");
    containers.push(own, others);
    await dockerCli([
      "create",
      "--name",
      own,
      "--label",
      "platform.managed=true",
      "--label",
      `platform.organization=${owner.organizationId}`,
      TEST_IMAGE,
      "true",
    ]);
    await dockerCli([
      "create",
      "--name",
      others,
      "--label",
      "platform.managed=true",
      "--label",
      "platform.organization=someone-else",
      TEST_IMAGE,
      "true",
    ]);
    await item.getByLabel("What to clean on edge").selectOption("cleanStoppedContainers");
    await item.getByRole("button", { name: "Clean up edge now" }).click();
    // Nothing is removed before the dialog naming what goes is confirmed.
    const confirm = page.getByRole("dialog", { name: "Clean up Docker on edge?" });
    expect(await confirm.textContent()).toContain("stopped containers on edge");
    await confirm.getByRole("button", { name: "Clean up", exact: true }).click();
    await item
      .getByRole("status")
      .getByText(
        /^Cleaned: [\d.]+ MB freed, [1-9]\d* containers, 0 images, 0 volumes removed \(only this organization's objects\)\.$/,
      )
      .waitFor({ timeout: 60_000 });
    expect(await dockerCli(["ps", "-aq", "--filter", `name=^${own}$`])).toBe("");
    expect(await dockerCli(["ps", "-aq", "--filter", `name=^${others}$`])).not.toBe("");
    await step(page, "cleanup");

    // Its daily Docker cleanup: off as server.one answers it, turned on from its row, kept after a reload.
    const daily = item.getByRole("form", { name: "Daily Docker cleanup of edge" });
    const dailySwitch = daily.getByRole("checkbox", { name: /^Daily Docker cleanup of edge/ });
    expect(await dailySwitch.isChecked()).toBe(false);
    await dailySwitch.check();
    await daily.getByRole("button", { name: "Save daily cleanup of edge" }).click();
    await daily.getByRole("status").getByText("Daily cleanup on.").waitFor();
    const cleaned = await platform.query("server.one", { serverId: row.serverId }, { token: owner.token });
    expect(cleaned.body.enableDockerCleanup).toBe(true);
    const listed = await platform.query("server.all", {}, { token: owner.token });
    expect(listed.body.map((s: { enableDockerCleanup: boolean }) => s.enableDockerCleanup)).toEqual([true]);
    await page.reload();
    await dailySwitch.waitFor();
    expect(await dailySwitch.isChecked()).toBe(true);
    await step(page, "daily-cleanup");

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
