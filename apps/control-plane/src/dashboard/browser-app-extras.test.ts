/**
 * What an application's and a compose stack's pages gained in issue 42, in headless chromium on
 * the real Docker Engine (Swarm) and the control plane's in-process agent:
 * - an application's redirects (Advanced): added, edited and deleted (confirmed), each change seen
 *   in the application's Traefik file as application.readTraefikConfig answers it;
 * - its Preview Deployments tab: the empty state says what to do, previews turned on with their
 *   settings, saved as application.one answers them;
 * - a compose stack of type `stack` deployed twice with a changed file, then rolled back to its
 *   first deployment from the Deployments tab (the dialog names what is replaced): its service
 *   runs the first file's configuration again, while the saved file stays the second;
 * - axe-core on each new tab in both themes and at 390 px, where nothing scrolls sideways.
 * Screenshots: test-artifacts/dashboard/app-extras-*.png.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { dockerCli, requireDocker, uniqueName } from "@platform/agent/testing/docker.ts";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { listen } from "../agents/testing/agents.ts";
import type { Session } from "../testing/harness.ts";
import { startTestPlatform, type TestPlatform } from "../testing/harness.ts";
import {
  checkAccessibility,
  launchChromium,
  offlinePage,
  stepper,
  sweepThemesAndPhone,
} from "./browser-fixture.ts";

const BUSYBOX = "platform-test/busybox:latest";

let platform: TestPlatform;
let http: { url: string; close(): Promise<void> };
let browser: Browser;
let mainDirectory: string;
let owner: Session;
let environmentId: string;
/** Stacks of this file, removed at the end whatever happened. */
const stackNames: string[] = [];

beforeAll(async () => {
  await requireDocker();
  mainDirectory = await mkdtemp(path.join(tmpdir(), "dashboard-app-extras-"));
  platform = await startTestPlatform({}, { agents: { localAgent: { mainDirectory } } });
  http = await listen(platform);
  browser = await launchChromium();
  owner = await platform.registerOwner();
  ({ environmentId } = (
    await platform.mutateOk("project.create", { name: "Extras" }, { token: owner.token })
  ).environment);
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await http?.close();
  await platform?.close();
  for (const name of stackNames) await dockerCli(["stack", "rm", name]).catch(() => {});
  if (mainDirectory) await rm(mainDirectory, { recursive: true, force: true });
}, 120_000);

const step = stepper("app-extras-");

const openTab = (page: Page, name: string) =>
  page.getByRole("navigation", { name: "Service views" }).getByRole("link", { name, exact: true }).click();

/** The application's Traefik file as application.readTraefikConfig answers it. */
async function traefikFile(applicationId: string): Promise<string> {
  const answer = await platform.query<string | null>(
    "application.readTraefikConfig",
    { applicationId },
    { token: owner.token },
  );
  expect(answer.status, JSON.stringify(answer.body)).toBe(200);
  return answer.body ?? "";
}

/** The environment variables Swarm gives the stack's service `service`. */
const envOf = async (service: string) =>
  dockerCli(["service", "inspect", service, "--format", "{{json .Spec.TaskTemplate.ContainerSpec.Env}}"]);

const stackFile = (mark: string) =>
  `services:\n  idle:\n    image: ${BUSYBOX}\n    command: ["sleep", "3600"]\n    environment:\n      MARK: ${mark}\n`;

/** Waits for the log shown to say the deployment ended, and answers its status. */
async function shownDeploymentEnds(page: Page) {
  await page.locator(".log-status[data-status='done'], .log-status[data-status='error']").waitFor({
    timeout: 240_000,
  });
  return page.locator(".log-status").getAttribute("data-status");
}

async function newestDeployment(composeId: string) {
  return platform.ctx.db
    .selectFrom("deployments")
    .select(["deploymentId", "status", "kind", "logs"])
    .where("composeId", "=", composeId)
    .orderBy("createdAt", "desc")
    .executeTakeFirst();
}

describe("an application's redirects and previews, a stack's rollbacks", () => {
  it("redirects change the Traefik file; previews' settings are saved; a stack rolls back to its first deployment; accessible, no sideways scroll at 390 px", async () => {
    const { page, elsewhere, problems } = await offlinePage(browser, http.url);
    const base = http.url;
    await page.goto(`${base}/`);
    await page.getByLabel("Email").fill("owner@example.com");
    await page.getByLabel("Password").fill("correct-horse-battery");
    await page.getByLabel("Password").press("Enter");
    await page.getByRole("heading", { name: "Projects" }).waitFor();

    // An application with a domain: its Traefik file has a router the redirects go in front of.
    const app = await platform.mutateOk(
      "application.create",
      { name: "Gateway", environmentId },
      { token: owner.token },
    );
    await platform.mutateOk(
      "domain.create",
      { applicationId: app.applicationId, host: "www.extras.example.com", port: 80, https: false },
      { token: owner.token },
    );

    // Advanced → Redirects: add one.
    await page.goto(`${base}/#/application/${app.applicationId}/advanced`);
    await page.getByRole("heading", { name: "Redirects" }).waitFor();
    const redirects = page.getByRole("list", { name: "Redirects" });
    await redirects.getByText("No redirect: add one below.").waitFor();
    const add = page.getByRole("form", { name: "Add a redirect" });
    await add.getByLabel("Regex").fill("^http://www\\.extras\\.example\\.com/(.*)");
    await add.getByLabel("Replacement").fill("http://extras.example.com/$1");
    await add.getByLabel("Permanent").check();
    await add.getByRole("button", { name: "Add redirect" }).click();
    await redirects.getByText("http://extras.example.com/$1", { exact: true }).waitFor();
    const [row] = await platform.ctx.db
      .selectFrom("redirects")
      .selectAll()
      .where("applicationId", "=", app.applicationId)
      .execute();
    expect(row).toMatchObject({ replacement: "http://extras.example.com/$1", permanent: true });
    const middleware = `redirect-${app.appName}-${row!.uniqueConfigKey}`;
    let file = await traefikFile(app.applicationId);
    expect(file).toContain(middleware);
    expect(file).toContain("http://extras.example.com/$1");
    expect(file).toMatch(/permanent: true/);
    await step(page, "redirect-added");

    // Edit it: a new replacement, no longer permanent.
    await redirects.getByRole("button", { name: /^Edit redirect / }).click();
    const edit = page.getByRole("form", { name: /^Edit redirect / });
    await edit.getByLabel("Replacement").fill("http://moved.example.com/$1");
    await edit.getByLabel("Permanent").uncheck();
    await edit.getByRole("button", { name: "Save redirect" }).click();
    await redirects.getByText("http://moved.example.com/$1", { exact: true }).waitFor();
    file = await traefikFile(app.applicationId);
    expect(file).toContain("http://moved.example.com/$1");
    expect(file).not.toContain("http://extras.example.com/$1");
    expect(file).toMatch(/permanent: false/);
    await checkAccessibility(page, "redirect-editing");

    // Delete asks first; Cancel keeps it, the confirmation removes it from the file.
    await redirects.getByRole("button", { name: /^Delete redirect / }).click();
    const dialog = page.getByRole("dialog", { name: "Delete this redirect?" });
    expect(await dialog.textContent()).toContain("http://moved.example.com/$1");
    await checkAccessibility(page, "redirect-delete-dialog");
    await dialog.getByRole("button", { name: "Cancel" }).click();
    expect(await traefikFile(app.applicationId)).toContain(middleware);
    await redirects.getByRole("button", { name: /^Delete redirect / }).click();
    await dialog.getByRole("button", { name: "Delete redirect" }).click();
    await redirects.getByText("No redirect: add one below.").waitFor();
    expect(
      await platform.ctx.db
        .selectFrom("redirects")
        .select("redirectId")
        .where("applicationId", "=", app.applicationId)
        .execute(),
    ).toHaveLength(0);
    file = await traefikFile(app.applicationId);
    expect(file).not.toContain(middleware);
    expect(file).toContain("www.extras.example.com");

    // Preview Deployments: the empty state says what to do, then previews on with their settings.
    await openTab(page, "Preview Deployments");
    await page.getByRole("heading", { name: "Preview deployments" }).waitFor();
    await page.getByText(/No preview yet\. Previews are made of pull requests/).waitFor();
    await page.getByLabel("Make previews of pull requests").check();
    await page.getByLabel("Wildcard domain").fill("*.preview.extras.example.com");
    await page.getByLabel("Preview container port").fill("8080");
    await page.getByLabel("Preview path").fill("/app");
    await page.getByLabel("Previews at most (the oldest goes)").fill("2");
    await page.getByLabel("Previews over HTTPS").check();
    await page.getByLabel("Preview certificate").selectOption("letsencrypt");
    await page.getByLabel("Preview variables, KEY=value on each line").fill("STAGE=preview");
    await page.getByLabel("Preview build arguments, KEY=value on each line").fill("MODE=preview");
    await page.getByLabel(/^Only pull requests with one of these labels/).fill("preview, qa");
    await page.getByLabel("Only pull requests of the repository's collaborators").check();
    await page.getByRole("button", { name: "Save preview settings" }).click();
    await page.getByText("Saved; applies to the next preview deployment.").waitFor();
    const saved = (
      await platform.query("application.one", { applicationId: app.applicationId }, { token: owner.token })
    ).body;
    expect(saved).toMatchObject({
      isPreviewDeploymentsActive: true,
      previewWildcard: "*.preview.extras.example.com",
      previewPort: 8080,
      previewPath: "/app",
      previewLimit: 2,
      previewHttps: true,
      previewCertificateType: "letsencrypt",
      previewEnv: "STAGE=preview",
      previewBuildArgs: "MODE=preview",
      previewLabels: ["preview", "qa"],
      previewRequireCollaboratorPermissions: true,
      redirects: [],
    });
    // The form shows what was saved after a reload of the page.
    await page.reload();
    await page.getByRole("heading", { name: "Preview deployments" }).waitFor();
    expect(await page.getByLabel("Make previews of pull requests").isChecked()).toBe(true);
    expect(await page.getByLabel("Wildcard domain").inputValue()).toBe("*.preview.extras.example.com");
    await step(page, "previews");

    // A Swarm stack deployed twice, its file changed between the two deployments.
    const stack = await platform.mutateOk(
      "compose.create",
      {
        name: "Pinned",
        appName: uniqueName("pinned"),
        environmentId,
        composeType: "stack",
        composeFile: stackFile("first"),
      },
      { token: owner.token },
    );
    stackNames.push(stack.appName);
    const service = `${stack.appName}_idle`;
    await page.goto(`${base}/#/compose/${stack.composeId}`);
    await page.getByRole("heading", { name: /^Pinned/ }).waitFor();
    await page.getByRole("button", { name: "Deploy stack" }).click();
    expect(await shownDeploymentEnds(page)).toBe("done");
    expect(await envOf(service)).toContain("MARK=first");
    const rollbacks = page.getByRole("list", { name: "Rollbacks" });
    await rollbacks.getByText("Nothing to roll back to yet: deploy the stack twice.").waitFor();
    const first = await newestDeployment(stack.composeId);

    await openTab(page, "General");
    await page.getByLabel("docker-compose.yml (used from the next deployment)").fill(stackFile("second"));
    const fileForm = page.getByRole("form", { name: "Compose file" });
    await fileForm.getByRole("button", { name: "Save compose file" }).click();
    await fileForm.getByRole("status").getByText("Saved.").waitFor();
    await page.getByRole("button", { name: "Deploy stack" }).click();
    await vi.waitFor(
      async () =>
        expect((await newestDeployment(stack.composeId))?.deploymentId).not.toBe(first!.deploymentId),
      { timeout: 30_000 },
    );
    expect(await shownDeploymentEnds(page)).toBe("done");
    await vi.waitFor(async () => expect(await envOf(service)).toContain("MARK=second"), { timeout: 60_000 });

    // Roll back to the first deployment: the dialog names what is replaced.
    const rollBack = rollbacks.getByRole("button", { name: /^Roll back to / });
    await rollBack.waitFor();
    expect(await rollBack.count()).toBe(1);
    await step(page, "stack-rollbacks");
    await rollBack.click();
    const rollbackDialog = page.getByRole("dialog", { name: "Roll back Pinned?" });
    const consequence = (await rollbackDialog.textContent()) ?? "";
    expect(consequence).toContain(stack.appName);
    expect(consequence).toContain("replaced by the images and the compose file of the deployment");
    await checkAccessibility(page, "stack-rollback-dialog");
    await rollbackDialog.getByRole("button", { name: "Roll back", exact: true }).click();
    await vi.waitFor(
      async () => {
        const newest = await newestDeployment(stack.composeId);
        expect(newest?.kind).toBe("rollback");
        expect(newest?.status).toBe("done");
      },
      { timeout: 240_000, interval: 1000 },
    );
    await vi.waitFor(async () => expect(await envOf(service)).toContain("MARK=first"), { timeout: 60_000 });
    // The first deployment's kept image runs (busybox, by its image ID).
    const runs = await dockerCli([
      "service",
      "inspect",
      service,
      "--format",
      "{{.Spec.TaskTemplate.ContainerSpec.Image}}",
    ]);
    expect(runs).toContain(`platform-rollback/${stack.appName}-idle:`);
    const idOf = (image: string) =>
      dockerCli(["image", "inspect", image.split("@")[0]!, "--format", "{{.Id}}"]);
    expect(await idOf(runs.trim())).toBe(await idOf(BUSYBOX));
    // The saved file is still the second: the next deployment uses it again.
    const savedStack = (
      await platform.query("compose.one", { composeId: stack.composeId }, { token: owner.token })
    ).body;
    expect(savedStack.composeFile).toContain("MARK: second");
    await page.getByRole("list", { name: "Deployments" }).getByRole("listitem").nth(2).waitFor();
    await step(page, "stack-rolled-back");

    // The new tabs in both themes, then on a phone: accessible, nothing wider than it.
    const routes = [
      `#/application/${app.applicationId}/advanced`,
      `#/application/${app.applicationId}/previews`,
      `#/compose/${stack.composeId}/deployments`,
    ];
    // A redirect with a long regex in the list for the sweep: it must wrap, not widen the page.
    await platform.mutateOk(
      "redirects.create",
      {
        applicationId: app.applicationId,
        regex: "^https?://www\\.a-rather-long-host-name-for-a-phone\\.extras\\.example\\.com/(.*)$",
        replacement: "https://a-rather-long-host-name-for-a-phone.extras.example.com/$1",
        permanent: false,
      },
      { token: owner.token },
    );
    await sweepThemesAndPhone(page, base, routes, (page) => page.locator("main .card h2").first().waitFor());
    await step(page, "phone");

    expect(elsewhere).toEqual([]);
    expect(problems).toEqual([]);
  }, 900_000);
});
