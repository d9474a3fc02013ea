/**
 * The dashboard's edit and delete where there is a create (issue 42), in headless chromium against
 * a real control plane and this machine's agent: a server edited and removed (its removal first
 * refused while a service is placed on it, the API's message in the dialog), this machine's Swarm
 * node listed with its actions, a registry added (its login test refused with the API's message),
 * edited, tested and deleted, a member removed, the password changed and used to sign in again,
 * and two-factor sign-in enrolled with a code computed here, its recovery codes shown, and turned
 * off. axe-core on every step, and each new page in both themes and at 390 px without sideways
 * scrolling. Screenshots: test-artifacts/dashboard/admin-*.png.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { requireDocker } from "@platform/agent/testing/docker.ts";
import { freePort } from "@platform/agent/testing/net.ts";
import { Secret, TOTP } from "otpauth";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { listen } from "../agents/testing/agents.ts";
import { type Session, startTestPlatform, type TestPlatform } from "../testing/harness.ts";
import { launchChromium, offlinePage, stepper, sweepThemesAndPhone } from "./browser-fixture.ts";

const PASSWORD = "correct-horse-battery";
const NEW_PASSWORD = "a-new-staple-for-the-horse";

let platform: TestPlatform;
let http: { url: string; close(): Promise<void> };
let browser: Browser;
let mainDirectory: string;
let owner: Session;
let member: Session;
let serverId: string;

beforeAll(async () => {
  await requireDocker();
  mainDirectory = await mkdtemp(path.join(tmpdir(), "dashboard-admin-"));
  platform = await startTestPlatform(
    { PLATFORM_OUTBOUND_ALLOW: "127.0.0.0/8" },
    { agents: { localAgent: { mainDirectory } } },
  );
  http = await listen(platform);
  browser = await launchChromium();
  owner = await platform.registerOwner();
  member = await platform.addMember(owner, "member", "leaving@example.com");
  ({ serverId } = await platform.mutateOk(
    "server.create",
    { name: "edge", ipAddress: "127.0.0.1", port: await freePort(), username: "root", serverType: "deploy" },
    { token: owner.token },
  ));
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await http?.close();
  await platform?.close();
  if (mainDirectory) await rm(mainDirectory, { recursive: true, force: true });
}, 60_000);

const step = stepper("admin-");

async function signIn(page: Page, password: string) {
  await page.goto(`${http.url}/`);
  await page.getByLabel("Email", { exact: true }).fill("owner@example.com");
  await page.getByLabel("Password", { exact: true }).fill(password);
  await page.getByLabel("Password", { exact: true }).press("Enter");
  await page.getByRole("heading", { name: "Projects", level: 1 }).waitFor();
}

/** The open confirmation dialog. */
const dialog = (page: Page) => page.locator("dialog[open]");

describe("edit and delete in the dashboard", () => {
  it("a server, this machine's Swarm node, a registry, a member, the password and two-factor sign-in", async () => {
    const { context, page, elsewhere, problems } = await offlinePage(browser, http.url);
    await signIn(page, PASSWORD);

    // ---- a server: edited, its removal refused while a service is on it, then removed.
    const { environmentId } = (
      await platform.mutateOk("project.create", { name: "Placed" }, { token: owner.token })
    ).environment;
    const placed = await platform.mutateOk(
      "application.create",
      { name: "on-edge", environmentId, serverId },
      { token: owner.token },
    );
    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Servers" }).click();
    const item = page.getByRole("listitem").filter({ has: page.getByRole("heading", { name: /^edge/ }) });
    await item.waitFor();
    await item.locator("summary", { hasText: "Edit edge" }).click();
    const edit = page.getByRole("form", { name: "Edit edge" });
    await edit.getByLabel("Name of edge").fill("edge-two");
    await edit.getByLabel("Description of edge").fill("the second edge");
    await edit.getByLabel("IP address of edge").fill("127.0.0.2");
    await edit.getByLabel("SSH port of edge").fill("2222");
    await edit.getByLabel("SSH user of edge").fill("deploy");
    await edit.getByRole("button", { name: "Save edge" }).click();
    await page.getByRole("heading", { name: /^edge-two/ }).waitFor();
    expect(
      await platform.ctx.db
        .selectFrom("servers")
        .select(["name", "description", "ipAddress", "port", "username"])
        .where("serverId", "=", serverId)
        .executeTakeFirstOrThrow(),
    ).toEqual({
      name: "edge-two",
      description: "the second edge",
      ipAddress: "127.0.0.2",
      port: 2222,
      username: "deploy",
    });
    await step(page, "server-edited");

    const renamed = page
      .getByRole("listitem")
      .filter({ has: page.getByRole("heading", { name: /^edge-two/ }) });
    await renamed.getByRole("button", { name: "Remove edge-two" }).click();
    expect(await dialog(page).textContent()).toContain("edge-two (127.0.0.2)");
    await dialog(page).getByRole("button", { name: "Remove server" }).click();
    await dialog(page).getByRole("alert").waitFor();
    expect(await dialog(page).getByRole("alert").textContent()).toMatch(
      /1 service on it; delete or move them first/,
    );
    expect(await dialog(page).textContent()).not.toContain(serverId);
    await step(page, "server-removal-refused");
    await dialog(page).getByRole("button", { name: "Cancel" }).click();
    // The service leaves the server (its agent was never enrolled, so nothing runs to tear down).
    await platform.ctx.db
      .deleteFrom("applications")
      .where("applicationId", "=", placed.applicationId)
      .execute();
    await renamed.getByRole("button", { name: "Remove edge-two" }).click();
    await dialog(page).getByRole("button", { name: "Remove server" }).click();
    await page.getByText("No remote server yet.").waitFor();
    expect(
      await platform.ctx.db
        .selectFrom("servers")
        .select("serverId")
        .where("serverId", "=", serverId)
        .execute(),
    ).toEqual([]);

    // ---- this machine's Swarm node: listed with its role and state; drain asks first (cancelled).
    const nodes = page.getByRole("list", { name: "Swarm nodes of this machine" });
    await nodes.getByRole("listitem").first().waitFor();
    const node = nodes.getByRole("listitem").first();
    expect(await node.textContent()).toMatch(/manager/);
    expect(await node.textContent()).toMatch(/ready/);
    await node.getByRole("button", { name: /^Drain / }).click();
    expect(await dialog(page).textContent()).toMatch(/moves every task off/);
    await step(page, "node-drain-asks");
    await dialog(page).getByRole("button", { name: "Cancel" }).click();
    expect(await node.getByText("active", { exact: true }).count()).toBe(1);

    // ---- a registry: its login test refused with the API's message, added, edited, tested, deleted.
    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Registries" }).click();
    await page.getByRole("heading", { name: "Registries", level: 1 }).waitFor();
    await page.getByText("No registry yet.").waitFor();
    const closed = `127.0.0.1:${await freePort()}`;
    const add = page.getByRole("form", { name: "Add a registry" });
    await add.getByLabel("Registry name").fill("Local");
    await add.getByLabel("Registry URL").fill(closed);
    await add.getByLabel("Registry user").fill("ci");
    await add.getByLabel("Registry password").fill("s3cret-registry");
    await add.getByRole("button", { name: "Test login to the new registry" }).click();
    await add.getByRole("alert").waitFor({ timeout: 90_000 });
    expect(await add.getByRole("alert").textContent()).toBe(
      `Registry login to ${closed} failed: could not be reached`,
    );
    await step(page, "registry-test-refused");
    await add.getByRole("button", { name: "Add registry" }).click();
    const registry = page
      .getByRole("listitem")
      .filter({ has: page.getByRole("heading", { name: /^Local/ }) });
    await registry.waitFor();
    await registry.locator("summary", { hasText: "Edit Local" }).click();
    const editRegistry = page.getByRole("form", { name: "Edit Local" });
    await editRegistry.getByLabel("Registry name").fill("Local mirror");
    await editRegistry.getByLabel("Registry user").fill("deployer");
    await editRegistry.getByRole("button", { name: "Save Local" }).click();
    await page.getByRole("heading", { name: /^Local mirror/ }).waitFor();
    const stored = await platform.ctx.db
      .selectFrom("registries")
      .select(["registryName", "username", "registryUrl"])
      .executeTakeFirstOrThrow();
    expect(stored).toEqual({ registryName: "Local mirror", username: "deployer", registryUrl: closed });
    const mirror = page
      .getByRole("listitem")
      .filter({ has: page.getByRole("heading", { name: /^Local mirror/ }) });
    await mirror.getByRole("button", { name: "Test Local mirror" }).click();
    await mirror.getByRole("alert").first().waitFor({ timeout: 90_000 });
    expect(await mirror.getByRole("alert").first().textContent()).toBe(
      `Registry login to ${closed} failed: could not be reached`,
    );
    await step(page, "registry-edited");
    await mirror.getByRole("button", { name: "Delete Local mirror" }).click();
    expect(await dialog(page).textContent()).toMatch(/lose the reference/);
    await dialog(page).getByRole("button", { name: "Delete registry" }).click();
    await page.getByText("No registry yet.").waitFor();
    expect(await platform.ctx.db.selectFrom("registries").select("registryId").execute()).toEqual([]);

    // ---- a member removed after a confirmation.
    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Members" }).click();
    await page.getByRole("button", { name: "Remove leaving@example.com" }).click();
    expect(await dialog(page).textContent()).toMatch(/loses access/);
    await step(page, "member-removal-asks");
    await dialog(page).getByRole("button", { name: "Remove member" }).click();
    await page.getByRole("button", { name: "Remove leaving@example.com" }).waitFor({ state: "detached" });
    expect((await platform.query("user.get", {}, { token: member.token })).status).toBe(401);
    await step(page, "member-removed");

    // ---- the password changed, then used to sign in.
    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Profile" }).click();
    await page.getByRole("heading", { name: "Profile", level: 1 }).waitFor();
    const passwordForm = page.getByRole("form", { name: "Password" });
    await passwordForm.getByLabel("Current password").fill(PASSWORD);
    await passwordForm.getByLabel("New password", { exact: true }).fill(NEW_PASSWORD);
    await passwordForm.getByLabel("New password again").fill(NEW_PASSWORD);
    await passwordForm.getByRole("button", { name: "Change password" }).click();
    await passwordForm.getByText(/Password changed/).waitFor();
    await page.getByRole("button", { name: "Sign out" }).click();
    await page.getByLabel("Email", { exact: true }).waitFor();
    await signIn(page, NEW_PASSWORD);

    // ---- two-factor sign-in: enrolled with a code computed here, recovery codes shown, turned off.
    await page.goto(`${http.url}/#/profile`);
    await page.getByRole("heading", { name: "Profile", level: 1 }).waitFor();
    const twoFactor = page.getByRole("region", { name: "Two-factor sign-in" });
    await twoFactor.getByLabel("Password (to enable two-factor sign-in)").fill(NEW_PASSWORD);
    await twoFactor.getByRole("button", { name: "Enable two-factor sign-in" }).click();
    const uri = (await page.getByLabel("Authenticator URI").textContent()) ?? "";
    expect(uri).toMatch(/^otpauth:\/\/totp\//);
    const secret = (await page.getByLabel("Authenticator secret").textContent()) ?? "";
    await step(page, "two-factor-enrolment");
    const code = new TOTP({ secret: Secret.fromBase32(secret), digits: 6, period: 30 }).generate({
      timestamp: platform.ctx.now().getTime(),
    });
    await twoFactor.getByLabel("Code from the authenticator").fill(code);
    await twoFactor.getByRole("button", { name: "Confirm two-factor sign-in" }).click();
    const recovery = page.getByRole("list", { name: "Recovery codes" });
    await recovery.waitFor();
    expect(await recovery.getByRole("listitem").count()).toBe(10);
    await twoFactor
      .getByText("On: sign-in asks for a code from your authenticator.", { exact: true })
      .waitFor();
    await step(page, "two-factor-on");
    const firstCodes = await recovery.getByRole("listitem").allTextContents();
    await twoFactor.getByLabel("Password (for recovery codes or to turn it off)").fill(NEW_PASSWORD);
    await twoFactor.getByRole("button", { name: "New recovery codes" }).click();
    await twoFactor.getByText("New recovery codes: the old ones no longer work.").waitFor();
    const renewed = await recovery.getByRole("listitem").allTextContents();
    expect(renewed).toHaveLength(10);
    expect(renewed.filter((code) => firstCodes.includes(code))).toEqual([]);
    await twoFactor.getByLabel("Password (for recovery codes or to turn it off)").fill(NEW_PASSWORD);
    await twoFactor.getByRole("button", { name: "Turn two-factor sign-in off" }).click();
    expect(await dialog(page).textContent()).toMatch(/recovery codes are deleted/);
    await dialog(page).getByRole("button", { name: "Turn it off" }).click();
    await twoFactor.getByText("Off: sign-in asks for the password only.", { exact: true }).waitFor();
    const user = await platform.ctx.db
      .selectFrom("users")
      .select("email")
      .where("email", "=", "owner@example.com")
      .executeTakeFirstOrThrow();
    expect(user.email).toBe("owner@example.com");
    expect(
      (await platform.mutate("auth.login", { email: "owner@example.com", password: NEW_PASSWORD })).body,
    ).not.toHaveProperty("twoFactorRequired", true);
    await step(page, "two-factor-off");

    // ---- the new pages in both themes, then on a phone: accessible, nothing wider than it.
    const routes = ["#/servers", "#/registries", "#/members", "#/profile"];
    await sweepThemesAndPhone(page, http.url, routes);

    expect(elsewhere).toEqual([]);
    expect(problems).toEqual([]);
    await context.close();
  }, 600_000);
});
