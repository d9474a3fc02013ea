/**
 * Volume backups and restores on the volume's own server (the agent's jobs backupVolume /
 * restoreVolume):
 * - the volume must carry its owner's labels (the agent creates every volume of a service, a
 *   stack or a database with them): a name alone never reaches another organization's data;
 * - its files are read and written through Docker's archive API on a helper container that is
 *   created but never started (its image is an empty one the agent imports itself, nothing is
 *   pulled), which mounts the volume at /volume: no shell, no tool inside the container;
 * - backup: the tar is gzipped in the agent's process and streamed into a multipart upload,
 *   nothing written to the server's disk; the upload is completed only once the archive was
 *   read whole (and, with stopService, the services were scaled back), otherwise aborted, so a
 *   failed, cancelled or killed run never leaves an object that looks complete;
 * - restore: the archive is downloaded whole and checked before the volume is written (a
 *   failed or cancelled download changes nothing); once the write starts, a cancel neither cuts
 *   it nor changes its outcome (the job answers that it runs on);
 * - stopService: the owner's Swarm services mounting the volume are scaled to 0 while it is read
 *   and back as soon as its last byte is read. Each carries REPLICAS_LABEL and STOPPED_BY_LABEL
 *   (the agent's mark: its server id) meanwhile, so an agent killed in between scales it back when it starts
 *   (restartServicesStoppedForVolumes), and only that agent: another agent on the same Swarm (a
 *   second manager) starting meanwhile leaves a backup in progress alone.
 */
import { randomBytes } from "node:crypto";
import { createReadStream, createWriteStream } from "node:fs";
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import path from "node:path";
import { PassThrough, pipeline, Readable, Writable } from "node:stream";
import { pipeline as pipelineAsync } from "node:stream/promises";
import { createGunzip, createGzip } from "node:zlib";
import type {
  BackupVolumeCommand,
  BackupVolumeResult,
  ObjectStorage,
  ResourceOwner,
  RestoreVolumeCommand,
  RestoreVolumeResult,
} from "@platform/agent-protocol";
import { assertValidName } from "@platform/names";
import { describeStorageError, downloadObject, uploadObject } from "@platform/object-storage";
import { isCompleteOwner, isOwnedBy, ownershipLabels } from "@platform/ownership";
import type Docker from "dockerode";
import { CommandError } from "../command-error.ts";
import { type RunningJob, throwIfCancelled } from "../deploy/jobs.ts";
import type { LogStream } from "../deploy/log-stream.ts";

/** The empty image helper containers are created from (imported from an empty tar, never pulled). */
export const HELPER_IMAGE = "platform-volume-helper:1";
/** On a service scaled to 0 for a volume backup: its replicas before. */
export const REPLICAS_LABEL = "platform.volume-backup.replicas";
/** On a service scaled to 0 for a volume backup: the mark of the agent that did it (DeployerOptions.agentMark). */
export const STOPPED_BY_LABEL = "platform.volume-backup.stopped-by";
const SWARM_SERVICE_ID_LABEL = "com.docker.swarm.service.id";
/** How long the containers of a service scaled to 0 may take to exit. */
const STOP_TIMEOUT_MS = 120_000;

function checkStorage(storage: ObjectStorage | undefined, key: string): ObjectStorage {
  if (!storage?.bucket) throw new CommandError("INVALID_ARGUMENT", "storage.bucket is required");
  if (!key || key.length > 1024 || key.startsWith("/") || key.split("/").includes("..")) {
    throw new CommandError("INVALID_ARGUMENT", "key must be a relative object key without '..'");
  }
  return storage;
}

function checkOwner(owner: ResourceOwner | undefined): ResourceOwner {
  if (!isCompleteOwner(owner))
    throw new CommandError("INVALID_ARGUMENT", "owner: organizationId and resource are required");
  return owner;
}

const statusOf = (error: unknown) => (error as { statusCode?: number })?.statusCode;

/** The volume's labels; undefined when it does not exist. */
async function volumeLabels(docker: Docker, name: string): Promise<Record<string, string> | undefined> {
  try {
    const info = await docker.getVolume(name).inspect();
    return (info.Labels ?? {}) as Record<string, string>;
  } catch (error) {
    if (statusOf(error) === 404) return undefined;
    throw error;
  }
}

function refuseForeign(name: string, labels: Record<string, string>, owner: ResourceOwner): void {
  if (!isOwnedBy(labels, owner)) {
    throw new CommandError("FAILED_PRECONDITION", `the volume ${name} does not belong to this service`);
  }
}

export async function ensureHelperImage(docker: Docker): Promise<void> {
  try {
    await docker.getImage(HELPER_IMAGE).inspect();
    return;
  } catch (error) {
    if (statusOf(error) !== 404) throw error;
  }
  // An empty tar (two zero blocks): an image with an empty filesystem.
  const [repo, tag] = HELPER_IMAGE.split(":");
  const progress = (await docker.importImage(Readable.from([Buffer.alloc(1024)]) as never, {
    repo,
    tag,
  })) as unknown as NodeJS.ReadableStream;
  await new Promise<void>((resolve, reject) => {
    docker.modem.followProgress(progress, (error: Error | null) => (error ? reject(error) : resolve()));
  });
}

/** A created, never started container of HELPER_IMAGE with the volume at /volume. */
async function helperContainer(
  docker: Docker,
  volumeName: string,
  owner: ResourceOwner,
  jobId: string,
  readOnly: boolean,
): Promise<Docker.Container> {
  await ensureHelperImage(docker);
  return docker.createContainer({
    name: `${volumeName.slice(0, 40)}-volume-${randomBytes(4).toString("hex")}`,
    Image: HELPER_IMAGE,
    Cmd: ["none"],
    Labels: { ...ownershipLabels(owner), "platform.volumeJob": jobId },
    HostConfig: {
      NetworkMode: "none",
      Mounts: [{ Type: "volume", Source: volumeName, Target: "/volume", ReadOnly: readOnly }],
    },
  });
}

interface StoppedService {
  id: string;
  name: string;
}

/** The owner's replicated Swarm services that mount `volumeName`, scaled to 0 (and waited for). */
async function stopUsers(
  docker: Docker,
  volumeName: string,
  owner: ResourceOwner,
  agentMark: string,
  log: LogStream,
  signal: AbortSignal,
): Promise<StoppedService[]> {
  const stopped: StoppedService[] = [];
  const services = await docker.listServices();
  for (const service of services) {
    const spec = service.Spec;
    const task = spec?.TaskTemplate as { ContainerSpec?: { Mounts?: { Source?: string }[] } } | undefined;
    const mounts = task?.ContainerSpec?.Mounts ?? [];
    if (!spec || !isOwnedBy(spec.Labels, owner) || !mounts.some((mount) => mount.Source === volumeName)) {
      continue;
    }
    const replicated = spec.Mode?.Replicated;
    if (!replicated) {
      throw new CommandError(
        "FAILED_PRECONDITION",
        `the service ${spec.Name} is not replicated: it cannot be stopped`,
      );
    }
    const replicas = replicated.Replicas ?? 1;
    log.line(`Stopping ${spec.Name} (${replicas} replicas) for the archive`);
    await docker.getService(service.ID).update({
      ...spec,
      version: service.Version?.Index,
      Labels: { ...spec.Labels, [REPLICAS_LABEL]: String(replicas), [STOPPED_BY_LABEL]: agentMark },
      Mode: { Replicated: { Replicas: 0 } },
    });
    stopped.push({ id: service.ID, name: spec.Name ?? service.ID });
  }
  const deadline = Date.now() + STOP_TIMEOUT_MS;
  for (const service of stopped) {
    for (;;) {
      throwIfCancelled(signal);
      const running = await docker.listContainers({
        filters: {
          label: [`${SWARM_SERVICE_ID_LABEL}=${service.id}`],
          status: ["running", "paused", "restarting"],
        },
      });
      if (running.length === 0) break;
      if (Date.now() > deadline)
        throw new CommandError("FAILED", `the containers of ${service.name} did not stop in time`);
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  }
  return stopped;
}

/** Scales a service stopped by stopUsers back to its replicas (read from REPLICAS_LABEL). */
async function startAgain(docker: Docker, serviceId: string): Promise<string | undefined> {
  const service = await docker.getService(serviceId).inspect();
  const spec = service.Spec;
  const replicas = Number(spec?.Labels?.[REPLICAS_LABEL]);
  if (!spec || !Number.isInteger(replicas)) return undefined;
  const { [REPLICAS_LABEL]: _replicas, [STOPPED_BY_LABEL]: _stoppedBy, ...labels } = spec.Labels ?? {};
  await docker.getService(serviceId).update({
    ...spec,
    version: service.Version?.Index,
    Labels: labels,
    Mode: { Replicated: { Replicas: replicas } },
  });
  return spec.Name;
}

async function startAllAgain(docker: Docker, stopped: StoppedService[], log: LogStream): Promise<void> {
  const failures: string[] = [];
  for (const service of stopped) {
    try {
      await startAgain(docker, service.id);
      log.line(`Started ${service.name} again`);
    } catch (error) {
      failures.push(`${service.name}: ${(error as Error).message}`);
    }
  }
  if (failures.length > 0) {
    throw new CommandError("FAILED", `services could not be started again: ${failures.join("; ")}`);
  }
}

/**
 * At the agent's start: the services this agent (`agentMark`) scaled to 0 for a volume backup and
 * never scaled back (it was killed meanwhile) are scaled back; one stopped by another agent is
 * that agent's. A mark without STOPPED_BY_LABEL (an agent before it existed) counts as this
 * agent's. Answers their names.
 */
export async function restartServicesStoppedForVolumes(docker: Docker, agentMark: string): Promise<string[]> {
  const services = await docker.listServices({ filters: { label: [REPLICAS_LABEL] } });
  const started: string[] = [];
  for (const service of services) {
    const stoppedBy = service.Spec?.Labels?.[STOPPED_BY_LABEL];
    if (stoppedBy !== undefined && stoppedBy !== agentMark) continue;
    const name = await startAgain(docker, service.ID);
    if (name) started.push(name);
  }
  return started;
}

/** Holds a stream's end until `verdict` settles: an error there fails the stream instead. */
function heldEnd(verdict: () => Promise<void>): PassThrough {
  const stream = new PassThrough({
    flush(callback) {
      verdict().then(
        () => callback(),
        (error: Error) => callback(error),
      );
    },
  });
  return stream;
}

/** `agentMark`: the mark of the agent running the job (STOPPED_BY_LABEL). */
export async function backupVolume(
  docker: Docker,
  agentMark: string,
  command: BackupVolumeCommand,
  log: LogStream,
  signal: AbortSignal,
): Promise<BackupVolumeResult> {
  const storage = checkStorage(command.storage, command.key);
  const owner = checkOwner(command.owner);
  const volumeName = assertValidName(command.volumeName, "volumeName");
  const labels = await volumeLabels(docker, volumeName);
  if (!labels) throw new CommandError("NOT_FOUND", `the volume ${volumeName} does not exist`);
  refuseForeign(volumeName, labels, owner);
  const helper = await helperContainer(docker, volumeName, owner, command.jobId, true);
  let stopped: StoppedService[] = [];
  let startedAgain: Promise<void> | undefined;
  const startOnce = () => {
    startedAgain ??= startAllAgain(docker, stopped, log);
    return startedAgain;
  };
  try {
    if (command.stopService) stopped = await stopUsers(docker, volumeName, owner, agentMark, log, signal);
    throwIfCancelled(signal);
    const archive = (await helper.getArchive({ path: "/volume" })) as unknown as Readable;
    let archiveBytes = 0;
    archive.on("data", (chunk: Buffer) => {
      archiveBytes += chunk.length;
    });
    // The services run again the moment the archive was read whole, before the upload's end.
    archive.once("end", () => {
      log.line(`Archive of ${volumeName} read (${archiveBytes} bytes)`);
      startOnce().catch(() => {});
    });
    const body = new PassThrough();
    pipeline(archive, createGzip({ level: 6 }), heldEnd(startOnce), body, (error) => {
      if (error) body.destroy(error);
    });
    const onAbort = () => archive.destroy(new Error("cancelled"));
    signal.addEventListener("abort", onAbort, { once: true });
    log.line(`Uploading the archive of ${volumeName} to ${storage.bucket}/${command.key}`);
    let sizeBytes: number;
    try {
      sizeBytes = await uploadObject(storage, command.key, body, signal);
    } catch (error) {
      throwIfCancelled(signal);
      if (error instanceof CommandError) throw error;
      throw new CommandError("FAILED", `the upload failed: ${describeStorageError(error)}`);
    } finally {
      signal.removeEventListener("abort", onAbort);
    }
    throwIfCancelled(signal);
    log.line(`Uploaded ${sizeBytes} bytes`);
    return { sizeBytes, archiveBytes, stoppedServices: stopped.map((service) => service.name) };
  } finally {
    if (stopped.length > 0) await startOnce().catch(() => {});
    await helper.remove({ force: true }).catch(() => {});
  }
}

/**
 * The archive `key` downloaded whole into `file`, its gzip read to its end (checksum included):
 * nothing is written into a volume from a download that could still fail half-way.
 */
async function downloadWhole(
  storage: ObjectStorage,
  key: string,
  file: string,
  signal: AbortSignal,
): Promise<number> {
  try {
    const download = await downloadObject(storage, key, signal);
    await pipelineAsync(download.body, createWriteStream(file), { signal });
    await pipelineAsync(
      createReadStream(file),
      createGunzip(),
      new Writable({ write: (_chunk, _encoding, callback) => callback() }),
      { signal },
    );
    return download.size;
  } catch (error) {
    throwIfCancelled(signal);
    throw new CommandError("FAILED", `the backup ${key} could not be read: ${describeStorageError(error)}`);
  }
}

/**
 * Restores an archive into a volume. The archive is downloaded whole and checked first (a
 * cancel or a failed download leaves the volume as it was); only then are the services using it
 * stopped and the archive written, and from there a cancel waits for the write's end: a volume
 * holds its old content or the archive's, never part of it.
 */
export async function restoreVolume(
  docker: Docker,
  agentMark: string,
  command: RestoreVolumeCommand,
  log: LogStream,
  signal: AbortSignal,
  job: RunningJob,
  spoolDirectory: string,
): Promise<RestoreVolumeResult> {
  const storage = checkStorage(command.storage, command.key);
  const owner = checkOwner(command.owner);
  const volumeName = assertValidName(command.volumeName, "volumeName");
  const labels = await volumeLabels(docker, volumeName);
  if (labels) refuseForeign(volumeName, labels, owner);
  await mkdir(spoolDirectory, { recursive: true, mode: 0o700 });
  const spool = await mkdtemp(path.join(spoolDirectory, "restore-"));
  try {
    const file = path.join(spool, "archive.tar.gz");
    log.line(`Downloading ${command.key}`);
    const size = await downloadWhole(storage, command.key, file, signal);
    throwIfCancelled(signal);
    if (!labels) {
      await docker.createVolume({ Name: volumeName, Labels: ownershipLabels(owner) });
      log.line(`Created the volume ${volumeName}`);
    }
    const helper = await helperContainer(docker, volumeName, owner, command.jobId, false);
    const stopped = await stopUsers(docker, volumeName, owner, agentMark, log, signal).catch(
      async (error) => {
        await helper.remove({ force: true }).catch(() => {});
        throw error;
      },
    );
    try {
      // Cut in the middle, the volume would hold half of the archive: from here a cancel lets the
      // write finish, and the restore is reported done.
      job.pastPointOfNoReturn();
      log.line(`Restoring ${command.key} (${size} bytes) into ${volumeName}`);
      try {
        // The archive's entries are volume/...: extracted at / of the helper, they land in the volume.
        await helper.putArchive(createReadStream(file).pipe(createGunzip()) as never, { path: "/" });
      } catch (error) {
        throw new CommandError(
          "FAILED",
          `the archive could not be written into ${volumeName}: ${(error as Error).message}`,
        );
      }
      log.line("Restore done");
      return { sizeBytes: size, created: !labels, stoppedServices: stopped.map((service) => service.name) };
    } finally {
      await startAllAgain(docker, stopped, log).catch((error: Error) => log.line(error.message));
      await helper.remove({ force: true }).catch(() => {});
    }
  } finally {
    await rm(spool, { recursive: true, force: true });
  }
}
