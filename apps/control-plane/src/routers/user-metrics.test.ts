/**
 * user.getContainerMetrics and user.getServerMetrics against the in-process agent of this
 * machine and the real Docker Engine: the container series of one service is read through
 * server.getServerMetrics' function (the agent's own answers for a service it does not collect,
 * its token refusal, the outbound guard), and getServerMetrics shows this machine's monitoring
 * configuration with its token to instance administrators only.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { dockerCli, requireDocker, TEST_IMAGE, uniqueName } from "@platform/agent/testing/docker.ts";
import { freePort } from "@platform/agent/testing/net.ts";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { type Session, startTestPlatform, type TestPlatform } from "../testing/harness.ts";
import { createOtherOrganization } from "../users/test-support.ts";

let platform: TestPlatform;
let owner: Session;
let mainDirectory: string;
let port: number;
const token = "user-metrics-token-abcdef0123456789";
const appName = uniqueName("user-metrics");
const as = (session: Session) => ({ token: session.token });

/** In tRPC's `?input=` form: a plain `?token=` is refused like any credential in a query string. */
const getContainerMetrics = (input: Record<string, string>, session: Session) =>
  platform.request(`/api/user.getContainerMetrics?input=${encodeURIComponent(JSON.stringify(input))}`, {
    token: session.token,
  });

beforeAll(async () => {
  await requireDocker();
  mainDirectory = await mkdtemp(path.join(tmpdir(), "cp-user-metrics-"));
  port = await freePort();
  platform = await startTestPlatform(
    { PLATFORM_OUTBOUND_ALLOW: "127.0.0.0/8" },
    { agents: { localAgent: { mainDirectory, metricsListenHost: "127.0.0.1" } } },
  );
  owner = await platform.registerOwner();
  await dockerCli([
    "service",
    "create",
    "--detach",
    "--name",
    appName,
    "--container-label",
    `platform.organization=${owner.user.organizationId}`,
    TEST_IMAGE,
    "sleep",
    "600",
  ]);
  const setup = await platform.mutate(
    "admin.setupMonitoring",
    {
      metricsConfig: {
        server: {
          refreshRate: 2,
          port,
          token,
          urlCallback: "http://127.0.0.1:9/threshold",
          retentionDays: 7,
          cronJob: "0 3 * * *",
          thresholds: { cpu: 0, memory: 0 },
        },
        containers: { refreshRate: 2, services: { include: [appName] } },
      },
    },
    as(owner),
  );
  if (setup.status !== 200) throw new Error(`setupMonitoring failed: ${JSON.stringify(setup.body)}`);
}, 90_000);

afterAll(async () => {
  await dockerCli(["service", "rm", appName]).catch(() => {});
  await platform?.close();
  await rm(mainDirectory, { recursive: true, force: true });
});

describe("user.getContainerMetrics", () => {
  it("reads the agent's series of one service's containers at <url>/metrics/containers", async () => {
    const records = await vi.waitFor(
      async () => {
        const response = await getContainerMetrics(
          { url: `http://127.0.0.1:${port}`, token, appName, dataPoints: "all" },
          owner,
        );
        expect(response.status, JSON.stringify(response.body)).toBe(200);
        expect(response.body.length).toBeGreaterThan(0);
        return response.body;
      },
      { timeout: 60_000, interval: 1000 },
    );
    expect(JSON.stringify(records)).toContain(appName);
  }, 90_000);

  it("answers the agent's own refusals: a service it does not collect, a wrong token; the guard refuses the url", async () => {
    const notIncluded = await getContainerMetrics(
      { url: `http://127.0.0.1:${port}`, token, appName: "not-collected", dataPoints: "5" },
      owner,
    );
    expect(notIncluded.status).toBe(400);
    expect(notIncluded.body.error.message).toBe("Service not included");
    const wrongToken = await getContainerMetrics(
      { url: `http://127.0.0.1:${port}`, token: "wrong", appName, dataPoints: "5" },
      owner,
    );
    expect(wrongToken.status).toBe(400);
    expect(wrongToken.body.error.data.fields).toEqual(["token"]);
    const metadata = await getContainerMetrics(
      { url: "http://169.254.169.254", token, appName, dataPoints: "5" },
      owner,
    );
    expect(metadata.status).toBe(400);
    expect(metadata.body.error.data.fields).toEqual(["url"]);
    const badName = await getContainerMetrics(
      { url: `http://127.0.0.1:${port}`, token, appName: "../etc", dataPoints: "5" },
      owner,
    );
    expect(badName.status).toBe(400);
    expect(badName.body.error.data.fields).toEqual(["appName"]);
    const badPoints = await getContainerMetrics(
      { url: `http://127.0.0.1:${port}`, token, appName, dataPoints: "0" },
      owner,
    );
    expect(badPoints.body.error.data.fields).toEqual(["dataPoints"]);
    expect((await platform.request("/api/user.getContainerMetrics")).status).toBe(401);
  });
});

describe("user.getServerMetrics", () => {
  it("shows the caller with this machine's monitoring configuration, the token to instance administrators only", async () => {
    const mine = await platform.query("user.getServerMetrics", {}, as(owner));
    expect(mine.status).toBe(200);
    expect(mine.body).toMatchObject({ id: owner.user.id, enabledFeatures: false });
    expect(mine.body.metricsConfig.server).toMatchObject({ port, token });

    const member = await platform.addMember(owner, "member");
    const theirs = await platform.query("user.getServerMetrics", {}, as(member));
    expect(theirs.body).toMatchObject({ id: member.user.id, metricsConfig: null });
    const other = await createOtherOrganization(platform);
    const stranger = await platform.query("user.getServerMetrics", {}, as(other));
    expect(stranger.body.metricsConfig).toBeNull();
    expect(JSON.stringify(stranger.body)).not.toContain(token);
    expect((await platform.query("user.getServerMetrics")).status).toBe(401);
  });
});
