/**
 * Stored XSS through the names the dashboard shows (security issue 37, finding 12), in one
 * headless chromium session beside browser.test.ts and sharing its fixture: every object a
 * user names (organization, user, project, application, database, compose stack, server, SSH
 * key, notification channel, destination, Git provider, API key, scheduled job) is named with
 * an HTML payload, and every page showing them is visited. The CSP refuses inline handlers, so
 * window.__xss alone could not fail: each page is also checked for an element the payload
 * would have made (an event handler attribute, an <img src=x>, an <svg>) and for a javascript:
 * link, and must show the payload as text. A javascript: URL is refused where a URL is stored
 * (a Git provider's URL, the authorization link's base).
 */
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { listen } from "../agents/testing/agents.ts";
import { type Session, startTestPlatform, type TestPlatform } from "../testing/harness.ts";
import { launchChromium, offlinePage } from "./browser-fixture.ts";

const IMG = "<img src=x onerror=window.__xss=1>";
const SVG = '"><svg onload=window.__xss=1>';

let platform: TestPlatform;
let http: { url: string; close(): Promise<void> };
let browser: Browser;
let owner: Session;
const ids: Record<string, string> = {};

beforeAll(async () => {
  platform = await startTestPlatform({ PLATFORM_OUTBOUND_ALLOW: "127.0.0.0/8" });
  http = await listen(platform);
  browser = await launchChromium();
  owner = await platform.registerOwner();
  const auth = { token: owner.token };
  const ok = (name: string, input: Record<string, unknown>) => platform.mutateOk(name, input, auth);
  const { organizationId } = owner.user;
  await ok("organization.update", { organizationId, name: `Org ${IMG}` });
  await ok("user.update", { name: `User ${SVG}` });
  const project = await ok("project.create", { name: `Project ${IMG}`, description: SVG });
  ids.projectId = project.project.projectId;
  const environmentId = project.environment.environmentId;
  ids.applicationId = (
    await ok("application.create", {
      name: `App ${SVG}`,
      appName: "xss-app",
      environmentId,
      description: IMG,
    })
  ).applicationId;
  ids.postgresId = (
    await ok("postgres.create", {
      name: `Db ${IMG}`,
      appName: "xss-db",
      environmentId,
      databaseName: "shop",
      databaseUser: "shop",
      databasePassword: "Pg-xss-1",
    })
  ).postgresId;
  ids.composeId = (
    await ok("compose.create", {
      name: `Stack ${SVG}`,
      appName: "xss-stack",
      environmentId,
      composeFile: "services:\n  web:\n    image: busybox\n",
    })
  ).composeId;
  await ok("schedule.create", {
    name: `Job ${IMG}`,
    cronExpression: "0 3 * * *",
    command: "true",
    scheduleType: "application",
    applicationId: ids.applicationId,
    enabled: false,
  });
  const pair = await ok("sshKey.generate", { type: "ed25519" });
  const { sshKeyId } = await ok("sshKey.create", {
    name: `Key ${SVG}`,
    privateKey: pair.privateKey,
    publicKey: pair.publicKey,
  });
  await ok("server.create", {
    name: `Server ${IMG}`,
    description: SVG,
    ipAddress: "127.0.0.1",
    port: 22,
    username: "root",
    sshKeyId,
    serverType: "deploy",
  });
  await ok("notification.createCustom", {
    name: `Hook ${SVG}`,
    endpoint: `${http.url}/nowhere`,
    appDeploy: true,
  });
  await ok("destination.create", {
    name: `Bucket ${IMG}`,
    provider: "Minio",
    accessKey: "AK",
    secretAccessKey: "SK",
    bucket: "xss",
    region: "us-east-1",
    endpoint: "http://127.0.0.1:9",
  });
  await ok("gitea.create", {
    name: `Gitea ${IMG}`,
    giteaUrl: "http://127.0.0.1:9",
    clientId: "client",
    clientSecret: "secret",
  });
  await ok("user.createApiKey", { name: `Key ${IMG}`, metadata: { organizationId } });
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await http?.close();
  await platform?.close();
}, 60_000);

/** What an executed or injected payload leaves in the page. */
async function injected(page: Page) {
  return page.evaluate(() => ({
    flag: (window as unknown as { __xss?: unknown }).__xss ?? null,
    handlers: [...document.querySelectorAll("*")]
      .filter((element) => [...element.attributes].some((attribute) => /^on/i.test(attribute.name)))
      .map((element) => element.outerHTML.slice(0, 200)),
    elements: [...document.querySelectorAll('img[src="x"], svg')]
      .filter((element) => !element.closest("[data-chart], .uplot"))
      .map((element) => element.outerHTML.slice(0, 200)),
    links: [...document.querySelectorAll("a[href], area[href], iframe[src], form[action]")]
      .map((element) => element.getAttribute("href") ?? element.getAttribute("src") ?? "")
      .filter((url) => /^\s*(javascript|data|vbscript):/i.test(url)),
  }));
}

describe("names holding HTML in headless chromium", () => {
  it("refuses a javascript: URL where one is stored", async () => {
    for (const [name, input, field] of [
      ["gitea.create", { name: "g", giteaUrl: "javascript:window.__xss=1//" }, "giteaUrl"],
      ["gitlab.create", { name: "g", gitlabUrl: "javascript:window.__xss=1//" }, "gitlabUrl"],
    ] as const) {
      const refused = await platform.mutate(name, input, { token: owner.token });
      expect(refused.status, name).toBe(400);
      expect(refused.body.error.data.fields, name).toContain(field);
    }
  });

  it("shows every payload as text on every page, and runs or injects none", async () => {
    const base = http.url;
    const { page, context, elsewhere, problems } = await offlinePage(browser, base);
    const dialogs: string[] = [];
    page.on("dialog", (dialog) => {
      dialogs.push(dialog.message());
      dialog.dismiss().catch(() => {});
    });
    await page.goto(`${base}/`);
    await page.getByLabel("Email").fill("owner@example.com");
    await page.getByLabel("Password").fill("correct-horse-battery");
    await page.getByLabel("Password").press("Enter");
    await page.getByRole("heading", { name: "Projects" }).waitFor();

    const pages: Array<[string, string[]]> = [
      ["#/", [`Project ${IMG}`]],
      [`#/project/${ids.projectId}`, [`App ${SVG}`, `Db ${IMG}`, `Stack ${SVG}`]],
      [`#/application/${ids.applicationId}`, [`App ${SVG}`]],
      [`#/database/postgres/${ids.postgresId}`, [`Db ${IMG}`]],
      [`#/compose/${ids.composeId}`, [`Stack ${SVG}`]],
      ["#/servers", [`Server ${IMG}`, `Key ${SVG}`]],
      ["#/git-providers", [`Gitea ${IMG}`]],
      ["#/members", [`User ${SVG}`]],
      ["#/api-keys", [`Key ${IMG}`]],
      ["#/queue", []],
      ["#/settings", []],
    ];
    for (const [hash, shown] of pages) {
      await page.goto(`${base}/${hash}`);
      await page.locator("main").waitFor();
      for (const text of shown)
        await page.getByText(text).first().waitFor({ state: "attached", timeout: 10_000 });
      await page.waitForLoadState("networkidle");
      expect(await injected(page), hash).toEqual({ flag: null, handlers: [], elements: [], links: [] });
    }
    expect(dialogs).toEqual([]);
    expect(elsewhere).toEqual([]);
    expect(problems.filter((problem) => !/status of (4\d\d|503)/.test(problem))).toEqual([]);
    await context.close();
  }, 120_000);
});
