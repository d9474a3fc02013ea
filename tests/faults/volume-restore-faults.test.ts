/**
 * A volume restore under a kill -9 of the control plane, with the real processes
 * (deploy-harness.ts: a restartable control plane and an enrolled agent process) and s3rver
 * behind a TCP proxy (tcp-proxy.ts) as the destination. The application's volume holds content
 * A, is backed up, then holds content B; a restore of the A archive starts, the proxy stalls the
 * download half-way, and the control plane is killed -9 and started again. The restore ends
 * (never left running), the service runs again, and the volume holds A or B whole, never a mix.
 */

import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { dockerCli, requireDocker, TEST_IMAGE, uniqueName } from "../../apps/agent/src/testing/docker.ts";
import { startTestS3, type TestS3 } from "../../packages/object-storage/src/testing/s3.ts";
import { DeployFaultRig, type FaultApp, removeServiceAndVolume } from "./deploy-harness.ts";
import { TcpProxy } from "./tcp-proxy.ts";

const rig = new DeployFaultRig();
let s3: TestS3;
let proxy: TcpProxy;
let app: FaultApp;
let destinationId: string;
let backupFile: string;
const volumeName = uniqueName("vrf-data");
const contents: Record<"A" | "B", string> = { A: "", B: "" };

/** Fills the volume with 16 MiB gzip cannot shrink and a marker; answers its files' checksums. */
async function fill(marker: string): Promise<string> {
  await dockerCli([
    "run",
    "--rm",
    "-v",
    `${volumeName}:/d`,
    TEST_IMAGE,
    "sh",
    "-c",
    `head -c 16777216 /dev/urandom > /d/big.bin && echo ${marker} > /d/marker`,
  ]);
  return checksums();
}

async function checksums(): Promise<string> {
  return dockerCli([
    "run",
    "--rm",
    "-v",
    `${volumeName}:/d:ro`,
    TEST_IMAGE,
    "sh",
    "-c",
    "cd /d && find . -type f | sort | xargs sha256sum",
  ]);
}

async function running(): Promise<number> {
  const ids = await dockerCli(["ps", "-q", "--filter", `label=com.docker.swarm.service.name=${app.appName}`]);
  return ids.split("\n").filter(Boolean).length;
}

beforeAll(async () => {
  await requireDocker();
  s3 = await startTestS3();
  proxy = await TcpProxy.start();
  proxy.forwardTo("127.0.0.1", Number(new URL(s3.endpoint).port));
  await rig.start({ PLATFORM_OUTBOUND_ALLOW: "127.0.0.0/8" });
  app = await rig.createApp();
  await rig.api.mutateOk("mounts.create", {
    type: "volume",
    volumeName,
    mountPath: "/data",
    serviceType: "application",
    serviceId: app.applicationId,
  });
  await rig.deployDone(app, "v1");
  contents.A = await fill("A");
  const destination = await rig.api.mutateOk("destination.create", {
    name: "Proxied S3",
    provider: "Minio",
    accessKey: s3.storage.accessKey,
    secretAccessKey: s3.storage.secretAccessKey,
    bucket: s3.storage.bucket,
    region: "us-east-1",
    endpoint: `http://127.0.0.1:${proxy.port}`,
  });
  destinationId = destination.destinationId;
  const { volumeBackupId } = await rig.api.mutateOk("volumeBackups.create", {
    name: "faults",
    volumeName,
    prefix: "faults/restore",
    cronExpression: "0 0 1 1 *",
    enabled: false,
    applicationId: app.applicationId,
    destinationId,
  });
  await rig.api.mutateOk("volumeBackups.runManually", { volumeBackupId });
  const one = await rig.api.queryOk("volumeBackups.one", { volumeBackupId });
  expect(one.lastRun).toMatchObject({ status: "done" });
  backupFile = one.lastRun.backupFile;
  contents.B = await fill("B");
  expect(contents.B).not.toBe(contents.A);
}, 240_000);

afterAll(async () => {
  await rig.close();
  await removeServiceAndVolume(app?.appName ?? "none", volumeName);
  await proxy?.close();
  await s3?.close();
}, 120_000);

beforeEach(({ onTestFailed }) => {
  onTestFailed(() => console.error(rig.processOutput()));
});

describe("a volume restore under a kill -9 of the control plane", () => {
  it("killed while the archive is half downloaded: the restore ends, the service runs, the volume holds one content whole", async () => {
    proxy.stallAfter(4 * 1024 * 1024);
    const { deploymentId } = await rig.api.mutateOk("volumeBackups.restoreVolumeBackupWithLogs", {
      backupFileName: backupFile,
      destinationId,
      volumeName,
      id: app.applicationId,
      serviceType: "application",
    });
    await rig.until("the download half-way", async () => proxy.stalling, 30_000);
    // Whatever the agent does with the bytes it has (the service stopped, the volume written).
    await new Promise((resolve) => setTimeout(resolve, 3000));
    await rig.controlPlane.stop("SIGKILL");
    await rig.controlPlane.start();
    proxy.release();

    let run: Awaited<ReturnType<typeof rig.deployments>>[number] | undefined;
    await rig.until(
      "the restore to settle",
      async () => {
        run = (await rig.deployments(app)).find((row) => row.deploymentId === deploymentId);
        return run?.status === "done" || run?.status === "error";
      },
      60_000,
    );
    await rig.until("the container running again", async () => (await running()) === 1, 60_000);
    const spec = JSON.parse(
      await dockerCli(["service", "inspect", "--format", "{{json .Spec}}", app.appName]),
    );
    expect(spec.Mode.Replicated.Replicas).toBe(1);
    expect(spec.Labels["platform.volume-backup.replicas"]).toBeUndefined();
    // The user asked for A: the restore is run to its end after the restart.
    const now = await checksums();
    expect([contents.A, contents.B]).toContain(now);
    expect({ status: run!.status, errorMessage: run!.errorMessage }).toEqual({
      status: "done",
      errorMessage: null,
    });
    expect(now).toBe(contents.A);
    const log = await rig.api.followDeploymentLog(deploymentId);
    expect(log.lines.join("\n")).toContain(
      "The control plane restarted during this deployment: it runs again",
    );
  }, 150_000);
});
