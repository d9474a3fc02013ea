/**
 * The dashboard's Requests and Docker pages (issue 42) in headless chromium, on the real Docker
 * Engine (Swarm) and the control plane's in-process agent:
 * - Requests: the empty state says the access log must be turned on; turning it on rewrites the
 *   proxy's traefik.yml (a proxy service of the test's own name: nothing real restarts), the
 *   recorded requests are listed newest first and filtered by status; turning it off again;
 * - Docker: a deployed application's container is listed with a link to its logs; its files are
 *   browsed, a text file is opened, a file is deleted after a confirmation (Cancel keeps it); the
 *   images are listed; the application's named volume is browsed the same way (a directory, a
 *   file the test wrote, a file deleted after its confirmation);
 * - dead ends: this machine without its platform network (PLATFORM_LOCAL_PROXY=false and no
 *   installer): the failed deployment says so and offers its administrator a button that creates
 *   it, after which the deploy succeeds; two replicas publishing one host-mode port on this one node fail at once with the
 *   scheduler's reason, shown on the application's deployments; a server whose agent is not
 *   connected is named by its name, not its id;
 * - axe-core on both pages in both themes and at 390 px, where neither scrolls sideways.
 * Screenshots: test-artifacts/dashboard/docker-*.png.
 */
import { copyFile, mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import {
  dockerCli,
  removeDatabaseServices,
  removeDeployedApps,
  requireDocker,
  uniqueName,
} from "@platform/agent/testing/docker.ts";
import { freePort } from "@platform/agent/testing/net.ts";
import { staticConfigFor, toYaml } from "@platform/traefik-config";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { insertTestServer, listen } from "../agents/testing/agents.ts";
import { startTestPlatform, type TestPlatform } from "../testing/harness.ts";
import {
  checkAccessibility,
  launchChromium,
  offlinePage,
  stepper,
  sweepThemesAndPhone,
} from "./browser-fixture.ts";

const BUSYBOX = "platform-test/busybox:latest";
const ACCESS_LOG_FIXTURE = new URL("../../../agent/src/proxy/fixtures/access.log", import.meta.url);

let platform: TestPlatform;
let http: { url: string; close(): Promise<void> };
let browser: Browser;
let mainDirectory: string;
let owner: { token: string; user: { organizationId: string } };
let environmentId: string;
let applicationId: string;
const appName = uniqueName("docker-page");
/** The application's named volume, mounted at /data (removed with it: `<appName>-data`). */
const volumeName = `${appName}-data`;
/** This machine's platform network, missing until the page's button creates it. */
const network = uniqueName("docker-page-net");
const crowdedName = uniqueName("docker-crowded");

const ok = (name: string, input: Record<string, unknown>) =>
  platform.mutateOk(name, input, { token: owner.token });

beforeAll(async () => {
  await requireDocker();
  // The volume file procedures' helper container: the test image, nothing pulled.
  process.env.PLATFORM_VOLUME_TOOLS_IMAGE = BUSYBOX;
  mainDirectory = await mkdtemp(path.join(tmpdir(), "dashboard-docker-"));
  platform = await startTestPlatform(
    { PLATFORM_NETWORK: network },
    { agents: { localAgent: { mainDirectory, proxyServiceName: uniqueName("no-proxy") } } },
  );
  http = await listen(platform);
  browser = await launchChromium();
  owner = await platform.registerOwner();
  ({ environmentId } = (await ok("project.create", { name: "Engine" })).environment);
  ({ applicationId } = await ok("application.create", { name: "web", appName, environmentId }));
  await ok("application.saveDockerProvider", { applicationId, dockerImage: BUSYBOX });
  await ok("application.update", { applicationId, command: "httpd -f -p 8080 -h /etc" });
  await ok("mounts.create", {
    type: "volume",
    volumeName,
    mountPath: "/data",
    serviceType: "application",
    serviceId: applicationId,
  });
}, 300_000);

afterAll(async () => {
  await browser?.close();
  await http?.close();
  await platform?.close();
  await removeDatabaseServices([appName]);
  await removeDeployedApps([crowdedName]);
  // The network goes once the services' tasks have left it.
  for (let attempt = 0; attempt < 30; attempt++) {
    const removed = await dockerCli(["network", "rm", network]).then(
      () => true,
      (error) => /not found/i.test(String(error)),
    );
    if (removed) break;
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
  if (mainDirectory) await rm(mainDirectory, { recursive: true, force: true });
}, 120_000);

const step = stepper("docker-");

async function signIn(page: Page) {
  await page.goto(`${http.url}/`);
  await page.getByLabel("Email").fill("owner@example.com");
  await page.getByLabel("Password").fill("correct-horse-battery");
  await page.getByLabel("Password").press("Enter");
  await page.getByRole("heading", { name: "Projects" }).waitFor();
}

/** The id of the application's running container, as the engine names it. */
async function containerOf(name: string): Promise<string> {
  return (await dockerCli(["ps", "-q", "--filter", `label=com.docker.swarm.service.name=${name}`])).split(
    "\n",
  )[0]!;
}

describe("the Requests and Docker pages", () => {
  it("a deploy refused for this machine's missing network: the page's button creates it, the next deploy succeeds", async () => {
    const { page, context, elsewhere, problems } = await offlinePage(browser, http.url);
    await signIn(page);
    const refused = await platform.waitForDeployment(
      (await ok("application.deploy", { applicationId })).deploymentId,
      240_000,
    );
    expect(refused.status).toBe("error");
    expect(refused.errorMessage).toContain(`the network ${network} does not exist on this server`);

    await page.goto(`${http.url}/#/application/${applicationId}/deployments`);
    const fix = page.getByRole("form", { name: "Missing platform network" });
    await fix.getByText(`This machine has no network ${network}`).waitFor();
    await step(page, "network-missing");
    await fix.getByRole("button", { name: `Create the network ${network}` }).click();
    await fix.getByText(`Created the network ${network} on this machine: deploy again.`).waitFor();
    expect(await dockerCli(["network", "inspect", network, "--format", "{{.Driver}} {{.Attachable}}"])).toBe(
      "overlay true",
    );
    await step(page, "network-created");

    const deployed = await platform.waitForDeployment(
      (await ok("application.deploy", { applicationId })).deploymentId,
      240_000,
    );
    expect(deployed.status, deployed.logs ?? "").toBe("done");
    // A second call finds it and creates nothing.
    expect(await ok("settings.createPlatformNetwork", {})).toEqual({ name: network, created: false });
    expect(elsewhere).toEqual([]);
    expect(problems).toEqual([]);
    await context.close();
  }, 600_000);

  it("Requests: empty state, turned on, rows filtered by status, turned off", async () => {
    const { page, context, elsewhere, problems } = await offlinePage(browser, http.url);
    await signIn(page);
    const sidebar = page.getByRole("navigation", { name: "Main" });
    expect(await sidebar.getByRole("link", { name: "Requests", exact: true }).getAttribute("href")).toBe(
      "#/requests",
    );
    // The proxy's static file as the installer writes it, without an access log.
    const traefik = path.join(mainDirectory, "traefik");
    await mkdir(traefik, { recursive: true });
    await writeFile(
      path.join(traefik, "traefik.yml"),
      toYaml(
        staticConfigFor({
          letsEncryptEmail: null,
          acmeStoragePath: "/etc/traefik/acme.json",
          dynamicConfigDirectory: "/etc/traefik/dynamic",
          accessLogPath: null,
          dashboardEnabled: false,
        }),
      ),
    );
    await sidebar.getByRole("link", { name: "Requests", exact: true }).click();
    await page.getByRole("heading", { name: "Requests", level: 1 }).waitFor();
    await page.getByRole("heading", { name: "No access log" }).waitFor();
    await page.getByText(/records requests only while its access log is on/).waitFor();
    await step(page, "requests-off");

    await page.getByRole("button", { name: "Turn the access log on" }).click();
    await page.getByRole("button", { name: "Turn the access log off" }).waitFor();
    await page.getByText("No request recorded yet", { exact: false }).waitFor();
    expect(
      (await platform.query("settings.haveActivateRequests", {}, { token: owner.token })).body.enabled,
    ).toBe(true);

    // Requests recorded by the proxy (Traefik's JSON lines) are listed newest first.
    await copyFile(ACCESS_LOG_FIXTURE, path.join(traefik, "access.log"));
    await page.getByRole("button", { name: "Refresh" }).click();
    const table = page.getByRole("table");
    await table.getByRole("caption").getByText("8 requests, newest first").waitFor();
    expect(await table.getByRole("row").nth(1).getByRole("cell").nth(3).textContent()).toBe("/healthz");
    await step(page, "requests-rows");
    await page.getByLabel(/^Status/).selectOption("4xx");
    await table.getByRole("caption").getByText("2 requests, newest first").waitFor();
    await page.getByLabel("Host or path contains").fill("wp-login");
    await page.getByRole("button", { name: "Filter" }).click();
    await table.getByRole("caption").getByText("1 request, newest first").waitFor();
    await page.getByLabel("Host or path contains").fill("nothing-like-this");
    await page.getByRole("button", { name: "Filter" }).click();
    await page.getByText("No request matches this filter.").waitFor();

    await page.getByRole("button", { name: "Turn the access log off" }).click();
    await page.getByRole("heading", { name: "No access log" }).waitFor();
    expect(elsewhere).toEqual([]);
    expect(problems).toEqual([]);
    await context.close();
  }, 300_000);

  it("Docker: the application's container with its logs link and files; a server named in its error", async () => {
    const { page, context, elsewhere, problems } = await offlinePage(browser, http.url);
    await signIn(page);
    const containerId = await containerOf(appName);
    // A file to delete, written through the API.
    await ok("docker.writeContainerFile", { containerId, path: "/etc/delete-me.txt", content: "bye\n" });

    await page
      .getByRole("navigation", { name: "Main" })
      .getByRole("link", { name: "Docker", exact: true })
      .click();
    await page.getByRole("heading", { name: "Docker", level: 1 }).waitFor();
    const containers = page.getByRole("region", { name: "Containers" });
    const row = containers.getByRole("row").filter({ hasText: `${appName}.1.` });
    await row.waitFor();
    expect(await row.getByRole("cell").nth(2).textContent()).toContain("running");
    expect(await row.getByRole("link", { name: /^Logs of web/ }).getAttribute("href")).toBe(
      `#/application/${applicationId}/logs`,
    );
    await page.getByRole("region", { name: "Disk usage" }).getByRole("table").waitFor();
    await step(page, "containers");

    // Its files: a directory, then a text file read as text.
    await row.getByRole("button", { name: /^Files of / }).click();
    const files = page.getByRole("region", { name: /^Files of / });
    await files.getByRole("button", { name: "etc/" }).click();
    await files.getByText("/etc", { exact: true }).waitFor();
    await files.getByRole("button", { name: "hosts", exact: true }).click();
    const text = files.getByRole("region", { name: "Text of /etc/hosts" });
    await text.getByText(/127\.0\.0\.1\s+localhost/).waitFor();
    await step(page, "file-open");

    // Delete: Cancel keeps the file, the confirmation deletes it.
    await files.getByRole("button", { name: "Delete delete-me.txt" }).click();
    const dialog = page.getByRole("dialog", { name: "Delete delete-me.txt?" });
    await dialog.getByText("/etc/delete-me.txt is deleted").waitFor();
    await checkAccessibility(page, "delete-dialog");
    await dialog.getByRole("button", { name: "Cancel" }).click();
    await files.getByRole("button", { name: "delete-me.txt", exact: true }).waitFor();
    await files.getByRole("button", { name: "Delete delete-me.txt" }).click();
    await dialog.getByRole("button", { name: "Yes, delete delete-me.txt" }).click();
    await files.getByRole("button", { name: "delete-me.txt", exact: true }).waitFor({ state: "detached" });
    const listed = await platform.query(
      "docker.listContainerFiles",
      { containerId, path: "/etc" },
      { token: owner.token },
    );
    expect(listed.body.map((entry: { name: string }) => entry.name)).not.toContain("delete-me.txt");

    // Images are listed (the application's image among them).
    await page
      .getByRole("region", { name: "Images" })
      .getByRole("cell", { name: "platform-test/busybox", exact: true })
      .first()
      .waitFor();
    await files.getByRole("button", { name: "Close the files" }).click();

    // The application's volume: a directory, a file the test wrote, a file deleted once confirmed.
    await dockerCli(["exec", containerId, "mkdir", "-p", "/data/site"]);
    await ok("dockerVolume.writeVolumeFile", {
      volumeName,
      path: "/site/index.txt",
      content: "written by the test\n",
    });
    await ok("dockerVolume.writeVolumeFile", { volumeName, path: "/site/old.txt", content: "old\n" });
    const volumeRow = page
      .getByRole("region", { name: "Volumes" })
      .getByRole("row")
      .filter({ hasText: volumeName });
    await volumeRow.getByRole("button", { name: `Files of ${volumeName}` }).click();
    const volumeFiles = page.getByRole("region", { name: `Files of ${volumeName}` });
    await volumeFiles.getByRole("button", { name: "site/" }).click();
    await volumeFiles.getByText("/site", { exact: true }).waitFor();
    await volumeFiles.getByRole("button", { name: "index.txt", exact: true }).click();
    await volumeFiles
      .getByRole("region", { name: "Text of /site/index.txt" })
      .getByText("written by the test")
      .waitFor();
    await step(page, "volume-file-open");
    await volumeFiles.getByRole("button", { name: "Delete old.txt" }).click();
    const volumeDialog = page.getByRole("dialog", { name: "Delete old.txt?" });
    await volumeDialog.getByText(`/site/old.txt is deleted from the volume ${volumeName}`).waitFor();
    await volumeDialog.getByRole("button", { name: "Yes, delete old.txt" }).click();
    await volumeFiles.getByRole("button", { name: "old.txt", exact: true }).waitFor({ state: "detached" });
    const volumeListed = await platform.query(
      "dockerVolume.listVolumeFiles",
      { volumeName, path: "/site" },
      { token: owner.token },
    );
    expect(volumeListed.body).toEqual([{ name: "index.txt", isDirectory: false }]);
    await volumeFiles.getByRole("button", { name: "Up one directory" }).click();
    await volumeFiles.getByRole("button", { name: "site/" }).waitFor();

    // A server whose agent is not connected: its error names it, never by its id.
    const serverId = await insertTestServer(platform, owner.user.organizationId, "edge-paris");
    await page.reload();
    await page.getByLabel("Server").selectOption({ label: "edge-paris" });
    await containers.getByText('The agent of server "edge-paris" is not connected').waitFor();
    expect(await page.getByRole("main").textContent()).not.toContain(serverId);
    await step(page, "server-offline");
    await page.getByLabel("Server").selectOption({ label: "This machine" });
    await row.waitFor();

    expect(elsewhere).toEqual([]);
    expect(problems).toEqual([]);
    await context.close();
  }, 300_000);

  it("two replicas of one host-mode port on this one node fail with the scheduler's reason, shown on the page", async () => {
    const { page, context, elsewhere, problems } = await offlinePage(browser, http.url);
    await signIn(page);
    const { applicationId: crowded } = await ok("application.create", {
      name: "crowded",
      appName: crowdedName,
      environmentId,
    });
    await ok("application.saveDockerProvider", { applicationId: crowded, dockerImage: BUSYBOX });
    await ok("application.update", { applicationId: crowded, command: "httpd -f -p 8080", replicas: 2 });
    await ok("port.create", {
      applicationId: crowded,
      publishedPort: await freePort(),
      targetPort: 8080,
      publishMode: "host",
    });
    const started = await ok("application.deploy", { applicationId: crowded });
    const row = await platform.waitForDeployment(started.deploymentId, 240_000);
    expect(row.status).toBe("error");
    expect(row.errorMessage).toContain("host-mode port already in use");

    await page.goto(`${http.url}/#/application/${crowded}/deployments`);
    await page
      .getByText(/no suitable node \(host-mode port already in use on 1 node\)/)
      .first()
      .waitFor();
    await page
      .getByText(/publish the port in ingress mode/)
      .first()
      .waitFor();
    await step(page, "crowded-deployment");
    expect(elsewhere).toEqual([]);
    expect(problems).toEqual([]);
    await context.close();
  }, 300_000);

  it("both pages are accessible in both themes and do not scroll sideways at 390 px", async () => {
    const { page, context, problems } = await offlinePage(browser, http.url);
    await signIn(page);
    await sweepThemesAndPhone(page, http.url, ["#/requests", "#/docker"]);
    expect(problems).toEqual([]);
    await context.close();
  }, 300_000);
});
