/**
 * The instance settings' Traefik section and an application's Swarm forms in a real browser
 * (issue 29), sharing browser-fixture.ts: the owner turns the Traefik dashboard on (the proxy
 * service of the Traefik stand-in image is then on the real engine with port 8080), edits
 * traefik.yml in the page (saved on disk as typed) and sees the API's 400 when the YAML is
 * refused (the file stays); then fills an application's Swarm settings as forms and finds every
 * field in application.one and back in the form after a reload. axe-core on every step.
 */
import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { requireDocker } from "@platform/agent/testing/docker.ts";
import { freePort } from "@platform/agent/testing/net.ts";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { listen } from "../agents/testing/agents.ts";
import {
  createApplication,
  type ProxyTestPlatform,
  readIfExists,
  startProxyTestPlatform,
  staticFile,
} from "../proxy/test-support.ts";
import { launchChromium, offlinePage, stepper } from "./browser-fixture.ts";

const run = promisify(execFile);
const STANDIN_IMAGE = "platform-test/traefik-standin:latest";
const buildScript = fileURLToPath(
  new URL("../../../../scripts/build-traefik-standin-image.sh", import.meta.url),
);

let test: ProxyTestPlatform;
let docker: Awaited<ReturnType<typeof requireDocker>>;
let http: { url: string; close(): Promise<void> };
let browser: Browser;
let dashboardPort: number;

beforeAll(async () => {
  docker = await requireDocker();
  await run("bash", [buildScript], { maxBuffer: 16 * 1024 * 1024 });
  test = await startProxyTestPlatform();
  dashboardPort = await freePort();
  await test.platform.ctx.db
    .updateTable("webServerSettings")
    .set({
      traefikImage: STANDIN_IMAGE,
      proxyHttpPort: await freePort(),
      proxyHttpsPort: await freePort(),
      proxyDashboardPort: dashboardPort,
    })
    .where("id", "=", 1)
    .execute();
  http = await listen(test.platform);
  browser = await launchChromium();
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await http?.close();
  if (docker && test)
    await docker
      .getService(test.proxyServiceName)
      .remove()
      .catch(() => {});
  await test?.close();
}, 60_000);

const step = stepper("settings-");
const as = () => ({ token: test.owner.token });

describe("instance settings and Swarm forms in headless chromium", () => {
  it("turns the Traefik dashboard on, edits traefik.yml, shows a refused YAML's 400, and saves Swarm settings as forms", async () => {
    const { context, page, elsewhere, problems } = await offlinePage(browser, http.url);
    await page.goto(`${http.url}/`);
    await page.getByLabel("Email").fill("owner@example.com");
    await page.getByLabel("Password").fill("correct-horse-battery");
    await page.getByLabel("Password").press("Enter");
    await page.getByRole("heading", { name: "Projects" }).waitFor();
    await page.getByRole("link", { name: "Settings" }).click();
    const traefik = page.getByRole("region", { name: "Traefik" });
    await traefik.waitFor();

    // The Traefik dashboard, on: the proxy service publishes its dashboard port.
    await traefik.getByLabel("Traefik dashboard (port 8080)").check();
    await traefik.getByRole("button", { name: "Save Traefik dashboard" }).click();
    await traefik.getByText("Traefik dashboard on (port 8080).").waitFor({ timeout: 60_000 });
    const settings = await test.platform.query("settings.getWebServerSettings", {}, as());
    expect(settings.body.enableDashboard).toBe(true);
    const service: any = await docker.getService(test.proxyServiceName).inspect();
    expect(service.Endpoint.Spec.Ports.map((port: any) => port.PublishedPort)).toContain(dashboardPort);
    await step(page, "traefik-dashboard");

    // traefik.yml as on disk, edited and saved from the page.
    const editor = traefik.getByLabel("traefik.yml (static configuration)");
    await expect.poll(() => editor.inputValue(), { timeout: 10_000 }).toContain("entryPoints:");
    const before = await editor.inputValue();
    expect(before).toBe(await readIfExists(staticFile(test)));
    const edited = `${before.trimEnd()}\nlog:\n  level: DEBUG\n`;
    await editor.fill(edited);
    await traefik.getByRole("button", { name: "Save traefik.yml" }).click();
    await traefik.getByText("traefik.yml saved; the proxy restarts with it.").waitFor({ timeout: 60_000 });
    expect(await readIfExists(staticFile(test))).toBe(edited);
    expect((await test.platform.query("settings.readTraefikConfig", {}, as())).body).toBe(edited);
    await step(page, "traefik-saved");

    // YAML Traefik would refuse: the API's message is shown and the file stays.
    await editor.fill("entryPoints: [\n");
    await traefik.getByRole("button", { name: "Save traefik.yml" }).click();
    const alert = traefik.getByRole("alert");
    await alert.waitFor({ timeout: 30_000 });
    expect(await alert.textContent()).toMatch(/traefikConfig/);
    expect(await readIfExists(staticFile(test))).toBe(edited);
    await step(page, "traefik-refused");

    // An application's Swarm settings as forms.
    const { applicationId } = await createApplication(test);
    const published = await freePort();
    await page.goto(`${http.url}/#/application/${applicationId}/advanced`);
    const swarm = page.getByRole("form", { name: "Swarm settings" });
    await swarm.waitFor();
    await swarm.getByLabel("Service mode").selectOption("global");
    await swarm
      .getByLabel("Health check command (run by a shell)")
      .fill("wget -q -O- http://127.0.0.1/ || exit 1");
    await swarm.getByLabel("Health check interval (seconds)").fill("10");
    await swarm.getByLabel("Health check timeout (seconds)").fill("3");
    await swarm.getByLabel("Health check retries").fill("3");
    await swarm.getByLabel("Restart condition").selectOption("on-failure");
    await swarm.getByLabel("Restart delay (seconds)").fill("2");
    await swarm.getByLabel("Restart attempts at most").fill("5");
    await swarm.getByLabel("Update: parallelism").fill("1");
    await swarm.getByLabel("Update: delay (seconds)").fill("5");
    await swarm.getByLabel("Update: order").selectOption("start-first");
    await swarm.getByLabel("Update: on failure").selectOption("rollback");
    await swarm.getByLabel("Rollback: parallelism").fill("2");
    await swarm
      .getByLabel("Placement constraints (one a line, e.g. node.role==manager)")
      .fill("node.role==manager");
    await swarm.getByLabel("Service labels (key=value, one a line)").fill("team=web\ntier=front");
    await swarm.getByLabel(/^Networks and aliases/).fill("backend: api, web-api");
    await swarm.getByLabel("Stop grace period (seconds)").fill("15");
    await swarm.getByLabel("Endpoint mode").selectOption("vip");
    await swarm.getByLabel(/^Endpoint ports/).fill(`${published}:80/tcp ingress`);
    await swarm
      .getByLabel(/^Other Swarm settings, JSON/)
      .fill('{"ulimitsSwarm":[{"Name":"nofile","Soft":1024,"Hard":2048}]}');
    await swarm.getByRole("button", { name: "Save Swarm settings" }).click();
    await swarm.getByRole("status").getByText("Saved.").waitFor({ timeout: 30_000 });

    const one = (await test.platform.query("application.one", { applicationId }, as())).body;
    expect(one).toMatchObject({
      modeSwarm: { Global: {} },
      healthCheckSwarm: {
        Test: ["CMD-SHELL", "wget -q -O- http://127.0.0.1/ || exit 1"],
        Interval: 10e9,
        Timeout: 3e9,
        Retries: 3,
      },
      restartPolicySwarm: { Condition: "on-failure", Delay: 2e9, MaxAttempts: 5 },
      updateConfigSwarm: { Parallelism: 1, Delay: 5e9, Order: "start-first", FailureAction: "rollback" },
      rollbackConfigSwarm: { Parallelism: 2, Order: "stop-first" },
      placementSwarm: { Constraints: ["node.role==manager"] },
      labelsSwarm: { team: "web", tier: "front" },
      networkSwarm: [{ Target: "backend", Aliases: ["api", "web-api"] }],
      stopGracePeriodSwarm: 15e9,
      endpointSpecSwarm: {
        Mode: "vip",
        Ports: [{ PublishedPort: published, TargetPort: 80, Protocol: "tcp", PublishMode: "ingress" }],
      },
      ulimitsSwarm: [{ Name: "nofile", Soft: 1024, Hard: 2048 }],
    });
    await step(page, "swarm-saved");

    // Every field shown back after a reload.
    await page.reload();
    await swarm.waitFor();
    const value = (label: string | RegExp) => swarm.getByLabel(label).inputValue();
    expect(await value("Service mode")).toBe("global");
    expect(await value("Health check command (run by a shell)")).toBe(
      "wget -q -O- http://127.0.0.1/ || exit 1",
    );
    expect(await value("Health check interval (seconds)")).toBe("10");
    expect(await value("Health check timeout (seconds)")).toBe("3");
    expect(await value("Health check retries")).toBe("3");
    expect(await value("Restart condition")).toBe("on-failure");
    expect(await value("Restart delay (seconds)")).toBe("2");
    expect(await value("Restart attempts at most")).toBe("5");
    expect(await value("Update: parallelism")).toBe("1");
    expect(await value("Update: delay (seconds)")).toBe("5");
    expect(await value("Update: order")).toBe("start-first");
    expect(await value("Update: on failure")).toBe("rollback");
    expect(await value("Rollback: parallelism")).toBe("2");
    expect(await value("Placement constraints (one a line, e.g. node.role==manager)")).toBe(
      "node.role==manager",
    );
    expect(await value("Service labels (key=value, one a line)")).toBe("team=web\ntier=front");
    expect(await value(/^Networks and aliases/)).toBe("backend: api, web-api");
    expect(await value("Stop grace period (seconds)")).toBe("15");
    expect(await value("Endpoint mode")).toBe("vip");
    expect(await value(/^Endpoint ports/)).toBe(`${published}:80/tcp ingress`);
    expect(JSON.parse(await value(/^Other Swarm settings, JSON/))).toEqual({
      ulimitsSwarm: [{ Name: "nofile", Soft: 1024, Hard: 2048 }],
    });
    await step(page, "swarm-reloaded");

    expect(elsewhere).toEqual([]);
    expect(problems).toEqual([]);
    await context.close();
  }, 240_000);
});
