/**
 * The dashboard's Git providers in a real browser (issue 29), beside browser.test.ts and sharing
 * its fixture, against the Gitea stand-in of the provider tests (Gitea's documented REST API and
 * OAuth token endpoint; its repository acme/web has the branches main and release): the owner
 * connects a Gitea provider with an OAuth application, whose Authorize button sends the browser
 * to Gitea's authorize page with a state minted for the owner (not the provider's id); Gitea's
 * answer (the code and that state, sent back to the callback) lands back on the page, which then
 * shows it authorized and its connection test finds the repository. A provider with
 * a wrong token fails its test with the provider's answer and is removed. The Gitea provider is
 * edited in place (its plain fields prefilled from gitea.one, its secrets left empty): renamed and
 * given an internal URL, and its connection test still works (its token was kept). An application's and
 * a compose stack's source are then picked from the provider's repositories and branches, saved,
 * and read back through application.one and compose.one. Secrets typed in are never shown back.
 * No deployment (the provider clones are deployed in git-providers/e2e.test.ts). axe-core on
 * every step (the providers page in both themes); screenshots in test-artifacts/dashboard with the prefix git-.
 */
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { listen } from "../agents/testing/agents.ts";
import { seedRepo } from "../git-providers/testing/fixtures.ts";
import { type StandIn, startStandIn } from "../git-providers/testing/stand-ins.ts";
import { startTestPlatform, type TestPlatform } from "../testing/harness.ts";
import { launchChromium, offlinePage, stepper } from "./browser-fixture.ts";

const CLIENT_SECRET = "gitea-client-secret-typed";
const WRONG_TOKEN = "gitea-wrong-token-typed";
/** The Gitea provider's name once edited from the page. */
const RENAMED = "acme gitea";

let platform: TestPlatform;
let http: { url: string; close(): Promise<void> };
let browser: Browser;
let gitea: StandIn;

beforeAll(async () => {
  gitea = await startStandIn({
    kind: "gitea",
    gitUsername: "oauth2",
    token: "gitea-token-1",
    refreshToken: "gitea-refresh-1",
    code: "gitea-code",
  });
  await seedRepo(gitea);
  // The stand-in listens on 127.0.0.1, which the control plane may then reach.
  platform = await startTestPlatform({ PLATFORM_OUTBOUND_ALLOW: "127.0.0.0/8" });
  http = await listen(platform);
  browser = await launchChromium();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await http?.close();
  await platform?.close();
  await gitea?.close();
}, 60_000);

const step = stepper("git-");

/** A query through the public API with the page's own session. */
function apiQuery(page: Page, name: string, input: Record<string, unknown>) {
  return page.evaluate(
    async ([name, input]) => {
      const response = await fetch(`/api/${name}?input=${encodeURIComponent(JSON.stringify(input))}`);
      return response.json();
    },
    [name, input] as const,
  );
}

/** Picks the Gitea provider, acme/web and the release branch in the page's source form. */
async function pickRepository(page: Page) {
  const form = page.getByRole("form", { name: "Source" });
  await form.getByRole("combobox", { name: "Source type" }).selectOption("gitea");
  await form.getByRole("combobox", { name: "Gitea provider" }).selectOption({ label: RENAMED });
  const repository = form.getByRole("combobox", { name: "Repository" });
  await repository.getByRole("option", { name: "acme/web" }).waitFor({ state: "attached" });
  await repository.selectOption("acme/web");
  const branch = form.getByRole("combobox", { name: "Branch" });
  await branch.getByRole("option", { name: "release" }).waitFor({ state: "attached" });
  // The repository's default branch is chosen first.
  expect(await branch.inputValue()).toBe("main");
  expect(await branch.getByRole("option").allInnerTexts()).toEqual(["Choose…", "main", "release"]);
  await branch.selectOption("release");
  await form.getByRole("button", { name: "Save source" }).click();
  await form.getByRole("status").getByText("Saved.").waitFor();
}

describe("Git providers in headless chromium", () => {
  it("connects Gitea through its OAuth callback, tests and removes providers, picks an application's and a stack's repository and branch", async () => {
    const base = http.url;
    const { page, context, elsewhere, problems } = await offlinePage(browser, base);
    await page.goto(`${base}/`);
    await page.getByLabel("Email").fill("owner@example.com");
    await page.getByLabel("Password").fill("correct-horse-battery");
    await page.getByLabel("Password").press("Enter");
    await page.getByRole("heading", { name: "Projects" }).waitFor();

    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Git providers" }).click();
    await page.getByRole("heading", { name: "Git providers", level: 1 }).waitFor();
    await page.getByText("No Git provider connected yet.").waitFor();
    await step(page, "providers-empty");

    // A Gitea provider with an OAuth application: not authorized until Gitea calls back.
    const connect = page.getByRole("form", { name: "Connect a Git provider" });
    await connect.getByRole("combobox", { name: "Provider", exact: true }).selectOption("gitea");
    await connect.getByRole("textbox", { name: "Provider name" }).fill("team gitea");
    await connect.getByRole("textbox", { name: "Gitea URL" }).fill(gitea.baseUrl);
    await connect.getByRole("textbox", { name: "OAuth client ID" }).fill("gitea-client");
    await connect.getByLabel("OAuth client secret").fill(CLIENT_SECRET);
    expect(await connect.getByRole("textbox", { name: "Redirect URI" }).inputValue()).toBe(
      `${base}/api/gitea/callback`,
    );
    await step(page, "connect-form");
    await connect.getByRole("button", { name: "Connect provider" }).click();
    const list = page.getByRole("list", { name: "Git providers" });
    await list.getByText("not authorized yet").waitFor();
    // The form forgot what was typed.
    expect(await connect.getByRole("textbox", { name: "Provider name" }).inputValue()).toBe("");
    await list.getByRole("button", { name: "Authorize on Gitea" }).waitFor();

    // Tested before the authorization: the API's reason is shown.
    await page.getByRole("button", { name: "Test connection of team gitea" }).click();
    await page
      .getByRole("alert")
      .getByText(/not authorized yet: complete its OAuth flow/)
      .waitFor();

    // Authorizing sends the browser to Gitea's page with a state the API minted for this member;
    // Gitea (here: its consent answered yes) sends it back with a code and that state. The
    // platform trades the code, the page shows the provider authorized.
    const authorizePages: URL[] = [];
    await page.route(`${gitea.baseUrl}/**`, (route) => {
      const authorize = new URL(route.request().url());
      authorizePages.push(authorize);
      const back = new URL(authorize.searchParams.get("redirect_uri")!);
      back.search = `code=gitea-code&state=${encodeURIComponent(authorize.searchParams.get("state") ?? "")}`;
      return route.fulfill({ status: 302, headers: { location: back.toString() } });
    });
    const callback = page.waitForResponse((response) =>
      response.url().startsWith(`${base}/api/gitea/callback?`),
    );
    await list.getByRole("button", { name: "Authorize on Gitea" }).click();
    expect((await callback).status()).toBe(302);
    await list.getByText("not authorized yet").waitFor({ state: "detached" });
    expect(page.url()).toBe(`${base}/#/git-providers`);
    await page.unroute(`${gitea.baseUrl}/**`);
    const [authorize] = authorizePages;
    expect(authorizePages).toHaveLength(1);
    expect(`${authorize!.origin}${authorize!.pathname}`).toBe(`${gitea.baseUrl}/login/oauth/authorize`);
    expect(authorize!.searchParams.get("client_id")).toBe("gitea-client");
    expect(authorize!.searchParams.get("redirect_uri")).toBe(`${base}/api/gitea/callback`);
    const [stored] = await apiQuery(page, "gitProvider.getAll", {});
    const giteaId: string = stored.gitea.giteaId;
    expect(authorize!.searchParams.get("state")).not.toContain(giteaId);
    await list.getByText("authorized", { exact: false }).waitFor();
    expect(await list.getByText("not authorized yet").count()).toBe(0);
    expect(await list.getByRole("button", { name: "Authorize on Gitea" }).count()).toBe(0);
    await page.getByRole("button", { name: "Test connection of team gitea" }).click();
    await list.getByRole("status").getByText("Found 1 repositories").waitFor();
    await step(page, "providers");

    // A wrong token: the test says what Gitea answered; the provider is removed.
    await connect.getByRole("combobox", { name: "Provider", exact: true }).selectOption("gitea");
    await connect.getByRole("textbox", { name: "Provider name" }).fill("wrong gitea");
    await connect.getByRole("textbox", { name: "Gitea URL" }).fill(gitea.baseUrl);
    await connect.getByLabel("Access token (instead of OAuth)").fill(WRONG_TOKEN);
    await connect.getByRole("button", { name: "Connect provider" }).click();
    await page.getByRole("button", { name: "Test connection of wrong gitea" }).click();
    await list.getByRole("alert").getByText(/401/).waitFor();
    await step(page, "provider-refused");
    await page.getByRole("button", { name: "Remove wrong gitea" }).click();
    await page.getByRole("button", { name: "Remove wrong gitea" }).waitFor({ state: "detached" });
    const remaining = await apiQuery(page, "gitProvider.getAll", {});
    expect(remaining.map((p: { name: string }) => p.name)).toEqual(["team gitea"]);
    await page.reload();
    await list.getByText("team gitea", { exact: true }).waitFor();
    const html = await page.content();
    for (const secret of [CLIENT_SECRET, WRONG_TOKEN, gitea.token]) expect(html).not.toContain(secret);

    // Edited in place: the form shows its plain fields from gitea.one, its secrets empty (unchanged).
    await page.getByRole("button", { name: "Edit team gitea" }).click();
    const edit = page.getByRole("form", { name: "Edit team gitea" });
    expect(await edit.getByRole("textbox", { name: "Provider name" }).inputValue()).toBe("team gitea");
    expect(await edit.getByRole("textbox", { name: "Gitea URL" }).inputValue()).toBe(gitea.baseUrl);
    expect(await edit.getByRole("textbox", { name: "OAuth client ID" }).inputValue()).toBe("gitea-client");
    expect(await edit.getByLabel("OAuth client secret (empty: unchanged)").inputValue()).toBe("");
    expect(await edit.getByLabel("Access token (instead of OAuth) (empty: unchanged)").inputValue()).toBe("");
    await step(page, "provider-edit");
    await edit.getByRole("textbox", { name: "Provider name" }).fill(RENAMED);
    await edit.getByRole("textbox", { name: "Internal URL (optional)" }).fill(gitea.baseUrl);
    await edit.getByRole("button", { name: "Save team gitea" }).click();
    await list.getByText(RENAMED, { exact: true }).waitFor();
    expect(await edit.count()).toBe(0);
    await page.reload();
    await list.getByText(RENAMED, { exact: true }).waitFor();
    expect(await list.getByText("team gitea", { exact: true }).count()).toBe(0);
    expect(await apiQuery(page, "gitea.one", { giteaId })).toMatchObject({
      giteaUrl: gitea.baseUrl,
      giteaInternalUrl: gitea.baseUrl,
      clientId: "gitea-client",
      authorized: true,
      gitProvider: { name: RENAMED },
    });
    // Its token was kept: the connection test still finds the repository.
    await page.getByRole("button", { name: `Test connection of ${RENAMED}` }).click();
    await list.getByRole("status").getByText("Found 1 repositories").waitFor();
    expect(await page.content()).not.toContain(CLIENT_SECRET);
    await step(page, "provider-edited");

    // An application whose source is the provider's repository and branch.
    await page.getByRole("link", { name: "Projects" }).first().click();
    await page.getByRole("textbox", { name: "Project name" }).fill("Shop");
    await page.getByRole("button", { name: "Create project" }).click();
    await page.getByRole("heading", { name: "Environment production" }).waitFor();
    await page.getByRole("textbox", { name: "Application name" }).fill("Web");
    await page.getByRole("textbox", { name: "Docker image" }).fill("nginx:alpine");
    await page.getByRole("button", { name: "Create application" }).click();
    await page.getByRole("heading", { name: /^Web/ }).waitFor();
    const applicationId = decodeURIComponent(page.url().split("/").pop()!);
    await pickRepository(page);
    expect(await apiQuery(page, "application.one", { applicationId })).toMatchObject({
      sourceType: "gitea",
      giteaId,
      giteaOwner: "acme",
      giteaRepository: "web",
      giteaBranch: "release",
      giteaBuildPath: "/",
    });
    await step(page, "application-source");
    // Shown again as saved after a reload.
    await page.reload();
    const source = page.getByRole("form", { name: "Source" });
    await source
      .getByRole("combobox", { name: "Repository" })
      .getByRole("option", { name: "acme/web" })
      .waitFor({
        state: "attached",
      });
    expect(await source.getByRole("combobox", { name: "Source type" }).inputValue()).toBe("gitea");
    expect(await source.getByRole("combobox", { name: "Repository" }).inputValue()).toBe("acme/web");
    await source.getByRole("combobox", { name: "Branch" }).getByRole("option", { name: "release" }).waitFor({
      state: "attached",
    });
    expect(await source.getByRole("combobox", { name: "Branch" }).inputValue()).toBe("release");

    // A compose stack read from the same repository and branch.
    await page.getByRole("link", { name: "Projects" }).first().click();
    await page.getByRole("main").getByRole("link", { name: "Shop" }).click();
    await page.getByRole("textbox", { name: "Stack name" }).fill("Stack");
    await page.getByRole("button", { name: "Create stack" }).click();
    await page.getByRole("heading", { name: /^Stack/ }).waitFor();
    const composeId = decodeURIComponent(page.url().split("/").pop()!);
    await pickRepository(page);
    expect(await apiQuery(page, "compose.one", { composeId })).toMatchObject({
      sourceType: "gitea",
      giteaId,
      giteaOwner: "acme",
      giteaRepository: "web",
      giteaBranch: "release",
      composePath: "./docker-compose.yml",
    });
    await step(page, "compose-source");
    // The providers page in the dark theme.
    await page.getByRole("button", { name: "Dark theme" }).click();
    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Git providers" }).click();
    await page.getByRole("list", { name: "Git providers" }).getByText(RENAMED, { exact: true }).waitFor();
    await step(page, "providers-dark");

    expect(elsewhere).toEqual([]);
    expect(problems).toEqual([]);
    await context.close();
  }, 180_000);
});
