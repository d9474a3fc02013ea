/**
 * Volume jobs of the agent (backup/volume.ts) on the real Docker Engine:
 * - the mark a volume backup leaves on a service it scaled to 0, on the real Swarm: at its start
 *   an agent scales back what it stopped itself (or what an agent before the stopped-by label
 *   stopped), never a service another agent of the same Swarm is backing up. The services are
 *   created with 0 replicas: no task runs, the labels are all that is read;
 * - a restore cancelled once it writes the volume (s3rver holds the archive): the cancel answers
 *   that the job runs on, the write finishes whole and the restore is done, not cancelled;
 * - a volume labelled for another organization, for the platform itself, or not labelled:
 *   neither archived nor overwritten (the agent's own label check, whatever the API let through).
 */
import { execFile } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { createReadStream } from "node:fs";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import type { CancelJobResult, LogChunk, ResourceOwner } from "@platform/agent-protocol";
import { listObjects, uploadObject } from "@platform/object-storage";
import { startTestS3, type TestS3 } from "@platform/object-storage/testing/s3.ts";
import { INTERNAL_LABEL, ownershipLabels } from "@platform/ownership";
import type Docker from "dockerode";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Deployer } from "../deploy/index.ts";
import { dockerCli, requireDocker, TEST_IMAGE, uniqueName } from "../testing/docker.ts";
import { REPLICAS_LABEL, restartServicesStoppedForVolumes, STOPPED_BY_LABEL } from "./volume.ts";

describe("services stopped for a volume backup", () => {
  let docker: Docker;
  const prefix = uniqueName("vbmark").toLowerCase();
  const names = { mine: `${prefix}-mine`, legacy: `${prefix}-legacy`, other: `${prefix}-other` };
  const agentMark = `${prefix}-agent`;

  async function createStopped(name: string, labels: Record<string, string>): Promise<void> {
    const label = Object.entries(labels).flatMap(([key, value]) => ["--label", `${key}=${value}`]);
    await dockerCli([
      "service",
      "create",
      "--detach",
      "--name",
      name,
      "--replicas",
      "0",
      ...label,
      TEST_IMAGE,
    ]);
  }

  async function state(name: string): Promise<{ replicas: number; labels: Record<string, string> }> {
    const spec = (await docker.getService(name).inspect()).Spec;
    return { replicas: spec.Mode.Replicated.Replicas, labels: spec.Labels ?? {} };
  }

  beforeAll(async () => {
    docker = await requireDocker();
    await createStopped(names.mine, { [REPLICAS_LABEL]: "2", [STOPPED_BY_LABEL]: agentMark });
    await createStopped(names.legacy, { [REPLICAS_LABEL]: "1" });
    await createStopped(names.other, { [REPLICAS_LABEL]: "1", [STOPPED_BY_LABEL]: `${prefix}-elsewhere` });
  }, 60_000);

  afterAll(async () => {
    await dockerCli(["service", "rm", ...Object.values(names)]).catch(() => {});
  });

  it("scales back its own and unmarked services, and leaves another agent's stopped", async () => {
    const started = await restartServicesStoppedForVolumes(docker, agentMark);
    // Another agent of the suite starting meanwhile may scale the unmarked one back first.
    expect(started).toContain(names.mine);
    expect(started).not.toContain(names.other);
    const mine = await state(names.mine);
    expect(mine.replicas).toBe(2);
    expect(mine.labels).not.toHaveProperty(REPLICAS_LABEL);
    expect(mine.labels).not.toHaveProperty(STOPPED_BY_LABEL);
    expect((await state(names.legacy)).replicas).toBe(1);
    const other = await state(names.other);
    expect(other.replicas).toBe(0);
    expect(other.labels[STOPPED_BY_LABEL]).toBe(`${prefix}-elsewhere`);
  });
});

describe("a volume restore cancelled while it writes the volume", () => {
  let docker: Docker;
  let s3: TestS3;
  let workDirectory: string;
  let digest: string;
  const volumeName = uniqueName("vbrestore").toLowerCase();
  const key = "restores/archive.tar.gz";

  beforeAll(async () => {
    docker = await requireDocker();
    s3 = await startTestS3();
    workDirectory = await mkdtemp(path.join(tmpdir(), "agent-volume-restore-"));
    // 32 MiB that gzip cannot shrink: the write into the volume lasts long after its first byte.
    const content = randomBytes(32 * 1024 * 1024);
    digest = createHash("sha256").update(content).digest("hex");
    await mkdir(path.join(workDirectory, "volume"));
    await writeFile(path.join(workDirectory, "volume", "big.bin"), content);
    const archive = path.join(workDirectory, "archive.tar.gz");
    await promisify(execFile)("tar", ["-C", workDirectory, "-czf", archive, "volume"]);
    await uploadObject(s3.storage, key, createReadStream(archive));
  }, 120_000);

  afterAll(async () => {
    await dockerCli(["volume", "rm", "-f", volumeName]).catch(() => {});
    await s3?.close();
    if (workDirectory) await rm(workDirectory, { recursive: true, force: true });
  });

  it("answers that the job runs on, writes the archive whole and ends done", async () => {
    const jobId = `restore-${volumeName}`;
    let cancelAnswer: Promise<CancelJobResult> | undefined;
    const deployer: Deployer = new Deployer({
      docker,
      agentMark: `${volumeName}-server`,
      mainDirectory: workDirectory,
      // Cancelled the moment the agent says it writes: well inside the write of 32 MiB.
      publishLogChunk: (chunk: LogChunk) => {
        if (!cancelAnswer && new TextDecoder().decode(chunk.data).includes("Restoring ")) {
          cancelAnswer = deployer.cancelJob({ jobId, waitMs: 0 });
        }
      },
    });
    const result = await deployer.restoreVolume({
      jobId,
      logStreamId: jobId,
      volumeName,
      owner: { organizationId: "org-restore", resource: `application:${volumeName}` },
      storage: s3.storage,
      key,
    });
    expect(result.created).toBe(true);
    expect(cancelAnswer).toBeDefined();
    expect(await cancelAnswer).toEqual({ cancelled: false, runsOn: true, ended: false });
    const written = await dockerCli([
      "run",
      "--rm",
      "-v",
      `${volumeName}:/d:ro`,
      TEST_IMAGE,
      "sha256sum",
      "/d/big.bin",
    ]);
    expect(written.split(/\s+/)[0]).toBe(digest);
  }, 120_000);
});

describe("volumes that are not the job's owner's", () => {
  let docker: Docker;
  let s3: TestS3;
  let workDirectory: string;
  const prefix = uniqueName("vbforeign").toLowerCase();
  const owner: ResourceOwner = { organizationId: `${prefix}-ours`, resource: `application:${prefix}` };
  const volumes: Record<string, Record<string, string>> = {
    [`${prefix}-theirs`]: ownershipLabels({ organizationId: `${prefix}-theirs`, resource: owner.resource }),
    [`${prefix}-internal`]: { ...ownershipLabels(owner), [INTERNAL_LABEL]: "true" },
    [`${prefix}-unlabelled`]: {},
  };
  const key = "foreign/archive.tar.gz";

  beforeAll(async () => {
    docker = await requireDocker();
    s3 = await startTestS3();
    workDirectory = await mkdtemp(path.join(tmpdir(), "agent-volume-foreign-"));
    await mkdir(path.join(workDirectory, "volume"));
    await writeFile(path.join(workDirectory, "volume", "marker"), "from the archive\n");
    const archive = path.join(workDirectory, "archive.tar.gz");
    await promisify(execFile)("tar", ["-C", workDirectory, "-czf", archive, "volume"]);
    await uploadObject(s3.storage, key, createReadStream(archive));
    for (const [name, labels] of Object.entries(volumes)) {
      const label = Object.entries(labels).flatMap(([k, v]) => ["--label", `${k}=${v}`]);
      await dockerCli(["volume", "create", ...label, name]);
      await dockerCli(["run", "--rm", "-v", `${name}:/d`, TEST_IMAGE, "sh", "-c", "echo own > /d/marker"]);
    }
  }, 120_000);

  afterAll(async () => {
    for (const name of Object.keys(volumes)) await dockerCli(["volume", "rm", "-f", name]).catch(() => {});
    await s3?.close();
    if (workDirectory) await rm(workDirectory, { recursive: true, force: true });
  });

  it("refuses to archive or overwrite each, and leaves its content and the bucket as they were", async () => {
    const deployer = new Deployer({
      docker,
      agentMark: `${prefix}-agent`,
      mainDirectory: workDirectory,
      publishLogChunk: () => {},
    });
    for (const volumeName of Object.keys(volumes)) {
      const job = { logStreamId: volumeName, volumeName, owner, storage: s3.storage };
      await expect(
        deployer.backupVolume({
          ...job,
          jobId: `backup-${volumeName}`,
          key: `foreign/${volumeName}.tar.gz`,
          stopService: true,
        }),
        volumeName,
      ).rejects.toThrow(`the volume ${volumeName} does not belong to this service`);
      await expect(
        deployer.restoreVolume({ ...job, jobId: `restore-${volumeName}`, key }),
        volumeName,
      ).rejects.toThrow(`the volume ${volumeName} does not belong to this service`);
      const content = await dockerCli([
        "run",
        "--rm",
        "-v",
        `${volumeName}:/d:ro`,
        TEST_IMAGE,
        "cat",
        "/d/marker",
      ]);
      expect(content.trim(), volumeName).toBe("own");
    }
    expect((await listObjects(s3.storage, "foreign/")).map((object) => object.key)).toEqual([key]);
  }, 120_000);
});
