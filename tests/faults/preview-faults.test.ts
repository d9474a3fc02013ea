/**
 * A preview deployment under a control-plane crash, with the real processes of deploy-harness.ts
 * (a control plane, an enrolled agent, a private NATS with JetStream) and the GitHub stand-in
 * (API and Git over HTTP): a signed pull_request event is answered, the control plane is killed
 * with SIGKILL at once (before the preview's deployment ran), started again, and the provider's
 * redelivery of the same event arrives. The preview ends deployed once: one deployment, done,
 * and the Swarm service carries that deployment; the redelivery queued nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { dockerCli, requireDocker, TEST_IMAGE } from "../../apps/agent/src/testing/docker.ts";
import {
  providerCases,
  type StandIns,
  standInEnv,
  startStandIns,
} from "../../apps/control-plane/src/git-providers/testing/fixtures.ts";
import { HOOK_SECRET, requestEvent } from "../../apps/control-plane/src/previews/testing.ts";
import { DeployFaultRig } from "./deploy-harness.ts";

const rig = new DeployFaultRig();
let stands: StandIns;
const previewNames: string[] = [];

beforeAll(async () => {
  await requireDocker();
  stands = await startStandIns();
  await rig.start(standInEnv(stands));
}, 180_000);

afterAll(async () => {
  for (const name of previewNames) await dockerCli(["service", "rm", name]).catch(() => {});
  await rig.close();
  for (const stand of Object.values(stands ?? {})) await stand.close();
}, 120_000);

describe("a preview's event and a control-plane kill -9", () => {
  it("ends with the preview deployed once", async () => {
    await stands.github.git.createRepo("web", {
      Dockerfile: `FROM ${TEST_IMAGE}\nCOPY index.html /www/index.html\nCMD ["httpd", "-f", "-p", "8080", "-h", "/www"]\n`,
      "index.html": "main",
    });
    await stands.github.git.commit("web", { "index.html": "release" }, "release", "release");
    const sha = await stands.github.git.commit("web", { "index.html": "preview" }, "feature", "feature");
    const github = providerCases(stands)[0]!;
    const provider = await rig.api.mutateOk("github.create", github.create());
    const app = await rig.api.mutateOk("application.create", {
      name: "faults previews",
      appName: `faults-pv-${process.pid}`,
      environmentId: rig.environmentId,
      serverId: rig.serverId,
    });
    const [saveName, saveInput] = github.save(provider.githubId) as [string, Record<string, unknown>];
    await rig.api.mutateOk(saveName, { applicationId: app.applicationId, ...saveInput });
    await rig.api.mutateOk("application.saveBuildType", {
      applicationId: app.applicationId,
      buildType: "dockerfile",
      dockerfile: "Dockerfile",
      dockerContextPath: ".",
      dockerBuildStage: "",
    });
    await rig.api.mutateOk("application.update", {
      applicationId: app.applicationId,
      webhookSecret: HOOK_SECRET,
      isPreviewDeploymentsActive: true,
      previewWildcard: "*.faults.test",
      previewPort: 8080,
      previewRequireCollaboratorPermissions: false,
    });
    const event = requestEvent("github", { action: "open", number: 9, branch: "feature", sha });
    const deliver = () =>
      fetch(
        `${rig.controlPlane.url}/api/deploy/github/${app.applicationId}?refreshToken=${encodeURIComponent(app.refreshToken)}`,
        { method: "POST", body: event.body, headers: event.headers, signal: AbortSignal.timeout(30_000) },
      );

    const first = await deliver();
    expect(first.status).toBe(200);
    await rig.controlPlane.stop("SIGKILL");
    await rig.controlPlane.start();
    const again = await deliver();
    expect(again.status).toBe(200);
    expect(((await again.json()) as { message: string }).message).toMatch(/already queued/);

    const [preview] = await rig.api.queryOk("previewDeployment.all", { applicationId: app.applicationId });
    previewNames.push(preview.appName);
    let deployments: Array<{ deploymentId: string; status: string; errorMessage: string | null }> = [];
    await rig.until(
      "the preview's deployment final",
      async () => {
        deployments = await rig.api.queryOk("deployment.allByType", {
          id: preview.previewDeploymentId,
          type: "previewDeployment",
        });
        return deployments.every((row) => row.status !== "idle" && row.status !== "running");
      },
      180_000,
    );
    expect(deployments, rig.processOutput()).toHaveLength(1);
    expect(deployments[0]!.status, `${deployments[0]!.errorMessage}\n${rig.processOutput()}`).toBe("done");
    const label = await dockerCli([
      "service",
      "inspect",
      preview.appName,
      "--format",
      '{{index .Spec.Labels "platform.deployment-id"}}',
    ]);
    expect(label.trim()).toBe(deployments[0]!.deploymentId);
    expect(
      (await rig.api.queryOk("previewDeployment.one", { previewDeploymentId: preview.previewDeploymentId }))
        .previewStatus,
    ).toBe("done");
  }, 420_000);
});
