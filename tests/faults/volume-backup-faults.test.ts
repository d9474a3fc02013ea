/**
 * Volume backups under faults, with the real processes (deploy-harness.ts: a control plane and
 * an enrolled agent that can be killed -9) and s3rver behind a TCP proxy (tcp-proxy.ts) as the
 * destination. An application's 64 MiB volume is backed up with turnOff; once the service is
 * scaled to 0, the proxy holds the upload's bytes (so the archive cannot be read to its end)
 * and the agent is killed -9 while the service is provably stopped. The run ends failed, no
 * object is at the destination, and the agent, started again, scales the service back: its
 * container runs again.
 */

import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { dockerCli, requireDocker, TEST_IMAGE, uniqueName } from "../../apps/agent/src/testing/docker.ts";
import { listObjects } from "../../packages/object-storage/src/s3.ts";
import { startTestS3, type TestS3 } from "../../packages/object-storage/src/testing/s3.ts";
import { DeployFaultRig, type FaultApp, removeServiceAndVolume } from "./deploy-harness.ts";
import { TcpProxy } from "./tcp-proxy.ts";

const PREFIX = "faults/volume";
const REPLICAS_LABEL = "platform.volume-backup.replicas";

const rig = new DeployFaultRig();
let s3: TestS3;
let proxy: TcpProxy;
let app: FaultApp;
let volumeBackupId: string;
const volumeName = uniqueName("vbf-data");

async function serviceState(): Promise<{
  replicas: number;
  stoppedFor: string | undefined;
  running: number;
}> {
  const spec = JSON.parse(await dockerCli(["service", "inspect", "--format", "{{json .Spec}}", app.appName]));
  const running = (
    await dockerCli(["ps", "-q", "--filter", `label=com.docker.swarm.service.name=${app.appName}`])
  )
    .split("\n")
    .filter(Boolean).length;
  return { replicas: spec.Mode.Replicated.Replicas, stoppedFor: spec.Labels?.[REPLICAS_LABEL], running };
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
  // 64 MiB that gzip cannot shrink: more than the upload's parts in flight.
  await dockerCli([
    "run",
    "--rm",
    "-v",
    `${volumeName}:/d`,
    TEST_IMAGE,
    "sh",
    "-c",
    "head -c 67108864 /dev/urandom > /d/big.bin",
  ]);
  const destination = await rig.api.mutateOk("destination.create", {
    name: "Proxied S3",
    provider: "Minio",
    accessKey: s3.storage.accessKey,
    secretAccessKey: s3.storage.secretAccessKey,
    bucket: s3.storage.bucket,
    region: "us-east-1",
    endpoint: `http://127.0.0.1:${proxy.port}`,
  });
  const created = await rig.api.mutateOk("volumeBackups.create", {
    name: "faults",
    volumeName,
    prefix: PREFIX,
    cronExpression: "0 0 1 1 *",
    enabled: false,
    turnOff: true,
    applicationId: app.applicationId,
    destinationId: destination.destinationId,
  });
  volumeBackupId = created.volumeBackupId;
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

describe("volume backups under faults", () => {
  it("agent kill -9 while the service is stopped for the archive: the run fails, no object, the container runs again", async () => {
    const before = new Set((await rig.deployments(app)).map((row) => row.deploymentId));
    const manual = rig.api.mutate("volumeBackups.runManually", { volumeBackupId }).catch(() => undefined);
    // The service is scaled to 0 before the archive is read: from then on, hold the upload.
    await rig.until(
      "the service stopped for the archive",
      async () => (await serviceState()).stoppedFor === "1",
      60_000,
    );
    proxy.hold();
    await rig.until("the upload in flight", async () => proxy.heldChunks > 0, 30_000);
    expect(await serviceState()).toMatchObject({ replicas: 0, stoppedFor: "1", running: 0 });
    await rig.killAgent();
    await proxy.cut();
    await proxy.restore();
    rig.startAgent();

    let run: Awaited<ReturnType<typeof rig.deployments>>[number] | undefined;
    await rig.until(
      "the volume backup run to settle",
      async () => {
        run = (await rig.deployments(app)).find((row) => !before.has(row.deploymentId));
        return run !== undefined && (run.status === "done" || run.status === "error");
      },
      90_000,
    );
    await manual;
    expect(run!.status).toBe("error");
    expect(run!.errorMessage).toMatch(/lost the volume job|restarted/);
    expect((await listObjects(s3.storage, `${PREFIX}/`)).map((object) => object.key)).toEqual([]);
    await rig.until(
      "the container running again",
      async () => {
        const state = await serviceState();
        return state.replicas === 1 && state.stoppedFor === undefined && state.running === 1;
      },
      60_000,
    );
    const one = await rig.api.queryOk("volumeBackups.one", { volumeBackupId });
    expect(one.lastRun).toMatchObject({ status: "error", backupFile: null });
  }, 180_000);
});
