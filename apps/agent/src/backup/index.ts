/**
 * Database backups and restores on the database's own server (the agent's jobs
 * backupDatabase / restoreDatabase):
 * - backup: the dump tool runs inside the service's running container (docker exec), its
 *   stdout is gzipped in the agent's process and streamed into a multipart upload: no file on
 *   the server's disk, the database keeps serving (pg_dump and --single-transaction read a
 *   snapshot). The upload's last step (CompleteMultipartUpload) is held until the tool exited
 *   0, so a dump that fails, a cancel or a killed agent never leaves an object that looks
 *   complete: the multipart upload is aborted, or left incomplete and invisible.
 * - restore: the object is downloaded, gunzipped and streamed into the restore tool's stdin in
 *   the service's container; with `throwaway`, into a new container of the same image on this
 *   server which is checked (a row count, or the server's own check) and removed.
 */
import { randomBytes } from "node:crypto";
import { PassThrough, pipeline, Transform, type TransformCallback } from "node:stream";
import { createGunzip, createGzip } from "node:zlib";
import type {
  BackupDatabaseCommand,
  BackupDatabaseResult,
  ObjectStorage,
  ResourceOwner,
  RestoreDatabaseCommand,
  RestoreDatabaseResult,
  StackServiceRef,
  ThrowawayDatabase,
} from "@platform/agent-protocol";
import { assertValidName } from "@platform/names";
import { describeStorageError, downloadObject, uploadObject } from "@platform/object-storage";
import { isCompleteOwner, isOwnedBy, ownershipLabels } from "@platform/ownership";
import type Docker from "dockerode";
import { CommandError } from "../command-error.ts";
import { throwIfCancelled } from "../deploy/jobs.ts";
import type { LogStream } from "../deploy/log-stream.ts";
import { SWARM_SERVICE_LABEL } from "../docker/containers.ts";
import { runExec, startExec } from "./exec.ts";
import {
  type BackupKind,
  checkAccess,
  checkCall,
  checkTableName,
  dumpCall,
  readyCall,
  restartsAfterRestore,
  restoreCall,
} from "./tools.ts";

/** How long a throwaway database may take to accept connections. */
const READY_TIMEOUT_MS = 120_000;

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

/** The running container of the service, which must carry the owner's labels. */
export async function serviceContainer(
  docker: Docker,
  serviceName: string,
  owner: ResourceOwner,
): Promise<string> {
  const name = assertValidName(serviceName, "serviceName");
  const containers = await docker.listContainers({
    filters: { label: [`${SWARM_SERVICE_LABEL}=${name}`], status: ["running"] },
  });
  if (containers.some((info) => !isOwnedBy(info.Labels, owner))) {
    throw new CommandError(
      "FAILED_PRECONDITION",
      `the containers of service ${name} do not belong to this database`,
    );
  }
  const container = containers[0];
  if (!container) throw new CommandError("FAILED", `the database service ${name} has no running container`);
  return container.Id;
}

/** A compose service name as a file may hold it (letters, digits, '.', '_', '-'). */
const STACK_SERVICE_NAME = /^[a-zA-Z0-9][a-zA-Z0-9._-]{0,99}$/;

/**
 * The running container of a stack's service (a database inside a compose stack): `stack` type,
 * the Swarm service `<appName>_<service>`; `docker-compose` type, the container of project
 * appName and that service. Every container found must carry the owner's labels.
 */
export async function stackServiceContainer(
  docker: Docker,
  ref: StackServiceRef,
  owner: ResourceOwner,
): Promise<string> {
  const appName = assertValidName(ref.appName, "stackService.appName");
  if (!STACK_SERVICE_NAME.test(ref.serviceName)) {
    throw new CommandError("INVALID_ARGUMENT", "stackService.serviceName must be a compose service name");
  }
  if (ref.composeType !== "stack" && ref.composeType !== "docker-compose") {
    throw new CommandError("INVALID_ARGUMENT", "stackService.composeType must be stack or docker-compose");
  }
  const label =
    ref.composeType === "stack"
      ? [`${SWARM_SERVICE_LABEL}=${appName}_${ref.serviceName}`]
      : [`com.docker.compose.project=${appName}`, `com.docker.compose.service=${ref.serviceName}`];
  const containers = await docker.listContainers({ filters: { label, status: ["running"] } });
  if (containers.some((info) => !isOwnedBy(info.Labels, owner))) {
    throw new CommandError(
      "FAILED_PRECONDITION",
      `the containers of service ${ref.serviceName} of stack ${appName} do not belong to this stack`,
    );
  }
  const container = containers[0];
  if (!container) {
    throw new CommandError(
      "FAILED",
      `the service ${ref.serviceName} of stack ${appName} has no running container`,
    );
  }
  return container.Id;
}

/** Holds a stream's end until `verdict` settles: an error there fails the stream instead. */
class HeldEnd extends Transform {
  constructor(private readonly verdict: Promise<void>) {
    super();
  }
  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    callback(null, chunk);
  }
  override _flush(callback: TransformCallback): void {
    this.verdict.then(
      () => callback(),
      (error: Error) => callback(error),
    );
  }
}

const lastLines = (text: string) => text.trim().split(/\r?\n/).slice(-6).join("\n");

export async function backupDatabase(
  docker: Docker,
  command: BackupDatabaseCommand,
  log: LogStream,
  signal: AbortSignal,
): Promise<BackupDatabaseResult> {
  const database = checkAccess(command.database);
  const storage = checkStorage(command.storage, command.key);
  const owner = checkOwner(command.owner);
  const containerId = command.stackService
    ? await stackServiceContainer(docker, command.stackService, owner)
    : await serviceContainer(docker, command.serviceName, owner);
  throwIfCancelled(signal);
  const call = dumpCall(database);
  log.line(
    `Dumping ${database.kind} ${database.databaseName || ""} with ${call.cmd[0] === "sh" ? call.cmd[3] : call.cmd[0]} in container ${containerId.slice(0, 12)}`,
  );
  let stderr = "";
  const stderrLines = log.lineWriter(`${database.kind}: `);
  const started = await startExec(docker, containerId, call, {
    onStderr: (data) => {
      if (stderr.length < 65_536) stderr += data.toString("utf8");
      stderrLines.write(data);
    },
  });
  const onAbort = () => started.destroy();
  signal.addEventListener("abort", onAbort, { once: true });
  // The upload completes only if the tool exited 0 (and the job was not cancelled).
  const verdict = started.exitCode.then((code) => {
    stderrLines.flush();
    if (signal.aborted) throw new CommandError("CANCELLED", "the job was cancelled");
    if (code !== 0) {
      throw new CommandError(
        "FAILED",
        `the dump exited with code ${code}${stderr ? `: ${lastLines(stderr)}` : ""}`,
      );
    }
  });
  verdict.catch(() => {});
  const body = new PassThrough();
  pipeline(started.stdout, createGzip({ level: 6 }), new HeldEnd(verdict), body, () => {});
  try {
    log.line(`Uploading to ${storage.bucket}/${command.key}`);
    const sizeBytes = await uploadObject(storage, command.key, body, signal);
    await verdict;
    log.line(`Uploaded ${sizeBytes} bytes (${started.stdout.bytes} bytes dumped)`);
    return { sizeBytes, dumpBytes: started.stdout.bytes };
  } catch (error) {
    started.destroy();
    const verdictError = await verdict.then(
      () => undefined,
      (failure: unknown) => failure,
    );
    if (verdictError instanceof CommandError) throw verdictError;
    throw new CommandError("FAILED", `the upload failed: ${describeStorageError(error)}`);
  } finally {
    signal.removeEventListener("abort", onAbort);
  }
}

/** Streams the object into the restore tool of `containerId`; throws with the tool's output. */
async function streamRestore(
  docker: Docker,
  containerId: string,
  command: RestoreDatabaseCommand,
  database: ReturnType<typeof checkAccess>,
  storage: ObjectStorage,
  log: LogStream,
  signal: AbortSignal,
): Promise<number> {
  let download: Awaited<ReturnType<typeof downloadObject>>;
  try {
    download = await downloadObject(storage, command.key, signal);
  } catch (error) {
    throw new CommandError(
      "FAILED",
      `the backup ${command.key} could not be read: ${describeStorageError(error)}`,
    );
  }
  log.line(
    `Restoring ${command.key} (${download.size} bytes) into ${database.kind} ${database.databaseName}`,
  );
  let output = "";
  const lines = log.lineWriter(`${database.kind}: `);
  const started = await startExec(docker, containerId, restoreCall(database), {
    stdin: true,
    onStderr: (data) => {
      if (output.length < 65_536) output += data.toString("utf8");
      lines.write(data);
    },
  });
  started.stdout.on("data", (data: Buffer) => {
    if (output.length < 65_536) output += data.toString("utf8");
    lines.write(data);
  });
  const onAbort = () => {
    download.body.destroy();
    started.destroy();
  };
  signal.addEventListener("abort", onAbort, { once: true });
  let streamError: Error | undefined;
  const stdin = started.stdin as NodeJS.WritableStream;
  await new Promise<void>((resolve) => {
    pipeline(download.body, createGunzip(), stdin, (error) => {
      if (error) {
        streamError = error;
        started.destroy();
      }
      resolve();
    });
  });
  const code = await started.exitCode;
  lines.flush();
  signal.removeEventListener("abort", onAbort);
  throwIfCancelled(signal);
  if (streamError) {
    throw new CommandError("FAILED", `the backup could not be read whole: ${streamError.message}`);
  }
  if (code !== 0) {
    throw new CommandError(
      "FAILED",
      `the restore exited with code ${code}${output ? `: ${lastLines(output)}` : ""}`,
    );
  }
  return download.size;
}

async function waitReady(
  docker: Docker,
  containerId: string,
  database: ReturnType<typeof checkAccess>,
  signal: AbortSignal,
): Promise<void> {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  let last = "";
  let successes = 0;
  while (Date.now() < deadline) {
    throwIfCancelled(signal);
    const state = await docker.getContainer(containerId).inspect();
    if (!state.State.Running) {
      throw new CommandError("FAILED", `the database container stopped (exit code ${state.State.ExitCode})`);
    }
    const probe = await runExec(docker, containerId, readyCall(database)).catch((error: Error) => ({
      exitCode: -1,
      stdout: "",
      stderr: error.message,
    }));
    // Twice in a row: an image's first start may restart its server once after initializing.
    if (probe.exitCode === 0 && ++successes >= 2) return;
    if (probe.exitCode !== 0) successes = 0;
    last = probe.stderr || probe.stdout;
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
  throw new CommandError(
    "FAILED",
    `the database did not accept connections in time${last ? `: ${lastLines(last)}` : ""}`,
  );
}

export async function restoreDatabase(
  docker: Docker,
  command: RestoreDatabaseCommand,
  log: LogStream,
  signal: AbortSignal,
): Promise<RestoreDatabaseResult> {
  const database = checkAccess(command.database);
  const storage = checkStorage(command.storage, command.key);
  const owner = checkOwner(command.owner);
  if (command.throwaway)
    return verifyInThrowaway(docker, command, command.throwaway, database, storage, owner, log, signal);
  const containerId = await serviceContainer(docker, command.serviceName, owner);
  const sizeBytes = await streamRestore(docker, containerId, command, database, storage, log, signal);
  if (restartsAfterRestore(database.kind as BackupKind)) {
    log.line("Restarting the container so the server loads the restored snapshot");
    await docker.getContainer(containerId).restart({ t: 30 });
    await waitReady(docker, containerId, database, signal);
  }
  log.line("Restore done");
  return { sizeBytes, check: "", rows: 0 };
}

async function verifyInThrowaway(
  docker: Docker,
  command: RestoreDatabaseCommand,
  throwaway: ThrowawayDatabase,
  database: ReturnType<typeof checkAccess>,
  storage: ObjectStorage,
  owner: ResourceOwner,
  log: LogStream,
  signal: AbortSignal,
): Promise<RestoreDatabaseResult> {
  const table = throwaway.checkTable ? checkTableName(throwaway.checkTable) : "";
  const name = `${assertValidName(command.serviceName, "serviceName")}-verify-${randomBytes(4).toString("hex")}`;
  log.line(`Starting the throwaway container ${name} from ${throwaway.image}`);
  const container = await docker.createContainer({
    name,
    Image: throwaway.image,
    Env: throwaway.env,
    ...(throwaway.command.length > 0 ? { Entrypoint: throwaway.command } : {}),
    ...(throwaway.args.length > 0 ? { Cmd: throwaway.args } : {}),
    Labels: { ...ownershipLabels(owner), "platform.backupVerify": command.jobId },
    HostConfig: { NetworkMode: "none" },
  });
  try {
    await container.start();
    await waitReady(docker, container.id, database, signal);
    const sizeBytes = await streamRestore(docker, container.id, command, database, storage, log, signal);
    if (restartsAfterRestore(database.kind as BackupKind)) {
      await container.restart({ t: 30 });
      await waitReady(docker, container.id, database, signal);
    }
    const check = await runExec(docker, container.id, checkCall(database, table));
    const text = `${check.stdout}\n${check.stderr}`.trim();
    if (check.exitCode !== 0) throw new CommandError("FAILED", `the check failed: ${lastLines(text)}`);
    const rows = Number(check.stdout.trim().split(/\s+/).pop());
    if (!Number.isFinite(rows)) throw new CommandError("FAILED", `the check answered ${lastLines(text)}`);
    const what = table
      ? `${rows} rows in ${table}`
      : database.kind === "redis"
        ? `integrity check ok: ${rows} keys`
        : `integrity check ok: ${rows} tables`;
    log.line(`Verified: ${what}`);
    return { sizeBytes, check: what, rows };
  } finally {
    await container.remove({ force: true, v: true }).catch(() => {});
    log.line(`Throwaway container ${name} removed`);
  }
}
