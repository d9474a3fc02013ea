/**
 * Deployments on this server: image builds, the Swarm services of applications, and the jobs
 * (builds and deploys) that cancelJob can stop.
 */
import { mkdir, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import type {
  AwaitJobCommand,
  AwaitJobResult,
  BackupDatabaseCommand,
  BackupDatabaseResult,
  BackupVolumeCommand,
  BackupVolumeResult,
  BuildImageCommand,
  BuildImageResult,
  BuildSource,
  BuildType,
  CancelJobCommand,
  CancelJobResult,
  CleanBuildCacheResult,
  DeployServiceCommand,
  DeployServiceResult,
  DeployStackCommand,
  DeployStackResult,
  ListRepositoryFilesCommand,
  LogChunk,
  ObservedServices,
  ObserveServicesCommand,
  ReadRepositoryFileCommand,
  RegistryAuth,
  RepositoryFile,
  RepositoryFileList,
  RestoreDatabaseCommand,
  RestoreDatabaseResult,
  RestoreVolumeCommand,
  RestoreVolumeResult,
  RunHostScriptCommand,
  RunScheduleCommand,
  ScheduledCommandResult,
  ServiceActionCommand,
  ServiceActionResult,
  StackActionCommand,
  StackActionResult,
} from "@platform/agent-protocol";
import { ownershipLabels } from "@platform/ownership";
import type Docker from "dockerode";
import type { Logger } from "pino";
import { backupDatabase, restoreDatabase } from "../backup/index.ts";
import { backupVolume, restartServicesStoppedForVolumes, restoreVolume } from "../backup/volume.ts";
import { CommandError } from "../command-error.ts";
import { pruneBuildCache } from "../docker/cleanup.ts";
import { DEFAULT_DOCKER_SOCKET, engineMessage } from "../docker/engine.ts";
import { runHostScript, runSchedule } from "../schedule/index.ts";
import { PLATFORM_NETWORK } from "../validate/engine-facts.ts";
import {
  type ArchiveLimits,
  checkArchiveSource,
  DEFAULT_ARCHIVE_LIMITS,
  fetchArchive,
  unpackArchive,
} from "./archive.ts";
import {
  builderTool,
  cliBuild,
  type DockerCli,
  dockerBuild,
  findDockerCli,
  findTool,
  labelImage,
  prepareStaticContext,
  pushImage,
  staticImageFromEnv,
} from "./build.ts";
import { checkGitSource, cloneRepository, listRepositoryFiles, readRepositoryFile } from "./git.ts";
import { type JobOutcome, JobRegistry, type RunningJob, throwIfCancelled } from "./jobs.ts";
import { LogStream, SecretMasker } from "./log-stream.ts";
import { observeServices } from "./observe.ts";
import { applySourcePatches, checkSourcePatches } from "./patches.ts";
import { deployService, requireOwner, serviceAction } from "./service.ts";
import { deployStack, stackAction } from "./stack.ts";
import {
  checkAppName,
  checkBuildStage,
  checkImageName,
  checkKeys,
  checkRelativePath,
  invalid,
  resolveInside,
} from "./validate.ts";

export interface DeployerOptions {
  docker: Docker;
  /**
   * This agent's mark on what it changes of an engine other agents may share (a service stopped
   * for a volume backup): its server id, or AgentCoreOptions.agentMark.
   */
  agentMark: string;
  /** The platform's main directory on the server. */
  mainDirectory: string;
  /** The overlay network a spec's platform-network stands for (default platform-network). */
  platformNetwork?: string;
  /** Publishes one chunk of a log stream (agent.<serverId>.logs.<streamId>). */
  publishLogChunk: (chunk: LogChunk) => void;
  logger?: Logger;
  /** Where nixpacks, railpack and pack are looked for (default: PATH). */
  toolSearchPath?: string;
  archiveLimits?: ArchiveLimits;
}

const BUILD_TYPES: ReadonlySet<string> = new Set<BuildType>([
  "dockerfile",
  "static",
  "nixpacks",
  "railpack",
  "heroku_buildpacks",
  "paketo_buildpacks",
]);

/** A build command checkBuildCommand accepted: a known build type and one source. */
type CheckedBuildCommand = BuildImageCommand & { buildType: BuildType } & BuildSource;

export class Deployer {
  private readonly jobs = new JobRegistry();
  private cli?: Promise<DockerCli>;

  constructor(readonly options: DeployerOptions) {}

  async buildImage(command: BuildImageCommand): Promise<BuildImageResult> {
    const log = this.logStream(command.logStreamId, [
      ...Object.values(command.buildSecrets ?? {}),
      command.pushRegistry?.password,
      command.rollbackRegistry?.password,
      command.git?.sshPrivateKey,
      command.git?.httpPassword,
    ]);
    try {
      checkBuildCommand(command);
    } catch (error) {
      log.close(`error (INVALID_ARGUMENT): ${log.mask((error as Error).message)}`);
      throw error;
    }
    return this.runJob(command.jobId, log, async (signal) => {
      const workDir = path.join(this.options.mainDirectory, "builds", command.appName, command.jobId);
      await rm(workDir, { recursive: true, force: true });
      await mkdir(workDir, { recursive: true, mode: 0o700 });
      try {
        return await this.build(command, workDir, log, signal);
      } finally {
        await rm(workDir, { recursive: true, force: true });
      }
    });
  }

  private async build(
    command: CheckedBuildCommand,
    workDir: string,
    log: LogStream,
    signal: AbortSignal,
  ): Promise<BuildImageResult> {
    const sourceDir = path.join(workDir, "source");
    let commit = { commitHash: "", commitMessage: "" };
    if (command.git) {
      commit = await cloneRepository(command.git, sourceDir, log, signal);
    } else {
      const archiveFile = path.join(workDir, `source.${command.archive.format}`);
      log.line(`fetching the ${command.archive.format} archive`);
      await fetchArchive(command.archive, archiveFile, this.archiveLimits, signal);
      await unpackArchive(archiveFile, command.archive.format, sourceDir, this.archiveLimits, log);
      await rm(archiveFile, { force: true });
    }
    throwIfCancelled(signal);
    await applySourcePatches(sourceDir, command.patches ?? [], log);

    const buildRoot = await resolveInside(
      "buildPath",
      sourceDir,
      sourceDir,
      checkRelativePath("buildPath", command.buildPath),
    );
    const cli = await this.dockerCli();
    const labels = {
      "platform.app": command.appName,
      ...(command.owner ? ownershipLabels(requireOwner(command.owner)) : {}),
    };
    const buildType = await this.effectiveBuildType(command, buildRoot, log);
    if (buildType === "dockerfile") {
      // As in Dokploy: the Dockerfile is relative to the build path, the context to the source
      // root, and without a context the Dockerfile's directory is the context.
      const dockerfile = await resolveInside(
        "dockerfile",
        sourceDir,
        buildRoot,
        checkRelativePath("dockerfile", command.dockerfile) || "Dockerfile",
      );
      const contextPath = checkRelativePath("dockerContextPath", command.dockerContextPath);
      const contextDir = contextPath
        ? await resolveInside("dockerContextPath", sourceDir, sourceDir, contextPath)
        : path.dirname(dockerfile);
      await dockerBuild({
        cli,
        command,
        contextDir,
        dockerfile,
        secretsDir: path.join(workDir, "secrets"),
        log,
        signal,
        extraLabels: labels,
      });
    } else if (buildType === "static") {
      const publishDir = await resolveInside(
        "publishDirectory",
        sourceDir,
        buildRoot,
        checkRelativePath("publishDirectory", command.publishDirectory),
      );
      // Base image: PLATFORM_STATIC_IMAGE / _FLAVOR, else nginx:1.27-alpine.
      const staticImage = staticImageFromEnv();
      log.line(
        `serving ${command.publishDirectory || "."} with ${staticImage.image}${command.isStaticSpa ? " (SPA fallback to index.html)" : ""}`,
      );
      const contextDir = path.join(workDir, "static");
      const dockerfile = await prepareStaticContext(
        publishDir,
        contextDir,
        staticImage,
        Boolean(command.isStaticSpa),
      );
      await dockerBuild({
        cli,
        command: { ...command, dockerBuildStage: "", buildArgs: {}, buildSecrets: {} },
        contextDir,
        dockerfile,
        secretsDir: path.join(workDir, "secrets"),
        log,
        signal,
        extraLabels: labels,
      });
    } else {
      await cliBuild(buildType, command, buildRoot, cli, this.options.toolSearchPath, log, signal, labels);
      await labelImage(cli, command.imageName, labels, workDir, log, signal);
    }
    throwIfCancelled(signal);

    const image = (await this.options.docker.getImage(command.imageName).inspect()) as { Id: string };
    log.line(`built ${command.imageName} (${image.Id})`);
    const push = (registry: RegistryAuth | undefined, prefix: string | undefined) =>
      registry?.serverAddress
        ? pushImage(
            this.options.docker,
            command.imageName,
            registry,
            prefix ?? "",
            command.appName,
            log,
            signal,
          )
        : Promise.resolve("");
    const pushedImage = await push(command.pushRegistry, command.pushImagePrefix);
    const rollbackImage = await push(command.rollbackRegistry, command.rollbackImagePrefix);
    return { imageName: command.imageName, imageId: image.Id, pushedImage, rollbackImage, ...commit };
  }

  /**
   * The build type to run. A CLI builder (nixpacks, railpack, pack) that this server lacks gives
   * way to the repository's Dockerfile when there is one, so that a new application, whose
   * build type is Dokploy's default nixpacks, deploys on a server without these tools
   * (docs/decisions.md). Without a Dockerfile, cliBuild names the missing tool.
   */
  private async effectiveBuildType(
    command: CheckedBuildCommand,
    buildRoot: string,
    log: LogStream,
  ): Promise<BuildType> {
    const tool = builderTool(command.buildType);
    if (!tool || (await findTool(tool, this.options.toolSearchPath))) return command.buildType;
    const dockerfile = path.join(
      buildRoot,
      checkRelativePath("dockerfile", command.dockerfile) || "Dockerfile",
    );
    const hasDockerfile = await stat(dockerfile).then(
      (found) => found.isFile(),
      () => false,
    );
    if (!hasDockerfile) return command.buildType;
    log.line(
      `${tool} is not installed on this server: building with the repository's ${path.relative(buildRoot, dockerfile)} instead of ${command.buildType}`,
    );
    return "dockerfile";
  }

  async deployService(command: DeployServiceCommand): Promise<DeployServiceResult> {
    const log = this.logStream(command.logStreamId, [command.registryAuth?.password]);
    if (!command.spec) throw invalid("spec", "is required");
    const { platformNetwork } = this.options;
    const spec =
      platformNetwork && command.spec.networks
        ? {
            ...command.spec,
            networks: command.spec.networks.map((name) =>
              name === PLATFORM_NETWORK ? platformNetwork : name,
            ),
          }
        : command.spec;
    return this.runJob(command.jobId, log, (signal) =>
      deployService(
        this.options.docker,
        this.options.mainDirectory,
        { ...command, spec },
        log,
        signal,
        platformNetwork ?? PLATFORM_NETWORK,
      ),
    );
  }

  async serviceAction(command: ServiceActionCommand): Promise<ServiceActionResult> {
    const outcome = await serviceAction(
      this.options.docker,
      this.options.mainDirectory,
      command.serviceName,
      command.action,
      command.replicas,
      command.owner,
      command.removeVolumes,
    );
    return { volumesRemoved: [], volumesKept: [], ...outcome };
  }

  /** Deploys a compose stack (stack.ts) as the job `jobId`. */
  async deployStack(command: DeployStackCommand): Promise<DeployStackResult> {
    const log = this.logStream(command.logStreamId, [
      ...(command.registryAuth ?? []).map((registry) => registry.password),
      command.git?.sshPrivateKey,
      command.git?.httpPassword,
    ]);
    return this.runJob(command.jobId, log, async (signal) =>
      deployStack(
        this.options.docker,
        await this.dockerCli(),
        this.options.mainDirectory,
        command,
        log,
        signal,
      ),
    );
  }

  /** The paths of a repository's branch (patch.readRepoDirectories). */
  async listRepositoryFiles(command: ListRepositoryFilesCommand): Promise<RepositoryFileList> {
    const log = this.logStream("", [command.git?.sshPrivateKey, command.git?.httpPassword]);
    try {
      return await listRepositoryFiles(command, tmpdir(), log, new AbortController().signal);
    } catch (error) {
      if (error instanceof Error) error.message = log.mask(error.message);
      throw error;
    }
  }

  /** One file of a repository's branch (a compose stack's file from its git source). */
  async readRepositoryFile(command: ReadRepositoryFileCommand): Promise<RepositoryFile> {
    const log = this.logStream("", [command.git?.sshPrivateKey, command.git?.httpPassword]);
    // Nobody reads this stream: a failure's reason is in the error, masked.
    try {
      return await readRepositoryFile(command, tmpdir(), log, new AbortController().signal);
    } catch (error) {
      if (error instanceof Error) error.message = log.mask(error.message);
      throw error;
    }
  }

  stackAction(command: StackActionCommand): Promise<StackActionResult> {
    return stackAction(this.options.docker, this.options.mainDirectory, command);
  }

  observeServices(command: ObserveServicesCommand): Promise<ObservedServices> {
    return observeServices(this.options.docker, command, (jobId) => this.jobs.has(jobId));
  }

  /** A database dumped into object storage, as a job (backup/index.ts). */
  backupDatabase(command: BackupDatabaseCommand): Promise<BackupDatabaseResult> {
    const log = this.logStream(command.logStreamId, [
      command.database?.password,
      command.storage?.secretAccessKey,
    ]);
    return this.runJob(
      command.jobId,
      log,
      (signal) => backupDatabase(this.options.docker, command, log, signal),
      (result) => ({ backupDatabase: result }),
    );
  }

  /** A backup restored into its database or a throwaway container, as a job (backup/index.ts). */
  restoreDatabase(command: RestoreDatabaseCommand): Promise<RestoreDatabaseResult> {
    const log = this.logStream(command.logStreamId, [
      command.database?.password,
      command.storage?.secretAccessKey,
    ]);
    return this.runJob(
      command.jobId,
      log,
      (signal) => restoreDatabase(this.options.docker, command, log, signal),
      (result) => ({ restoreDatabase: result }),
    );
  }

  /** A schedule's command in its service's container, as a job (schedule/index.ts). */
  runSchedule(command: RunScheduleCommand): Promise<ScheduledCommandResult> {
    const log = this.logStream(command.logStreamId, []);
    return this.runJob(
      command.jobId,
      log,
      (signal) => runSchedule(this.options.docker, command, log, signal),
      (result) => ({ scheduledCommand: result }),
    );
  }

  /** An instance administrator's script on this server, as a job (schedule/index.ts). */
  runHostScript(command: RunHostScriptCommand): Promise<ScheduledCommandResult> {
    const log = this.logStream(command.logStreamId, []);
    return this.runJob(
      command.jobId,
      log,
      (signal) => runHostScript(command, log, signal),
      (result) => ({ scheduledCommand: result }),
    );
  }

  /** A named volume archived into object storage, as a job (backup/volume.ts). */
  backupVolume(command: BackupVolumeCommand): Promise<BackupVolumeResult> {
    const log = this.logStream(command.logStreamId, [command.storage?.secretAccessKey]);
    return this.runJob(
      command.jobId,
      log,
      (signal) => backupVolume(this.options.docker, this.options.agentMark, command, log, signal),
      (result) => ({ backupVolume: result }),
    );
  }

  /** A volume archive restored into a named volume, as a job (backup/volume.ts). */
  restoreVolume(command: RestoreVolumeCommand): Promise<RestoreVolumeResult> {
    const log = this.logStream(command.logStreamId, [command.storage?.secretAccessKey]);
    return this.runJob(
      command.jobId,
      log,
      (signal, job) =>
        restoreVolume(
          this.options.docker,
          this.options.agentMark,
          command,
          log,
          signal,
          job,
          path.join(this.options.mainDirectory, "restores"),
        ),
      (result) => ({ restoreVolume: result }),
    );
  }

  /** Services a killed agent left scaled to 0 for a volume backup, scaled back (at start). */
  restartServicesStoppedForVolumes(): Promise<string[]> {
    return restartServicesStoppedForVolumes(this.options.docker, this.options.agentMark);
  }

  async cancelJob(command: CancelJobCommand): Promise<CancelJobResult> {
    const outcome = this.jobs.cancel(command.jobId);
    const ended =
      outcome === "uncuttable"
        ? false
        : await this.jobs.ended(command.jobId, Math.min(command.waitMs, 60_000));
    return { cancelled: outcome === "cancelled", runsOn: outcome === "uncuttable", ended };
  }

  /** A job's outcome once it ended (kept for a while), waiting at most `waitMs` while it runs. */
  awaitJob(command: AwaitJobCommand): Promise<AwaitJobResult> {
    return this.jobs.awaitOutcome(command.jobId, command.waitMs);
  }

  async cleanBuildCache(): Promise<CleanBuildCacheResult> {
    try {
      return { reclaimedBytes: await pruneBuildCache(this.options.docker) };
    } catch (error) {
      throw new CommandError("FAILED", `pruning the build cache failed: ${engineMessage(error)}`);
    }
  }

  private get archiveLimits(): ArchiveLimits {
    return this.options.archiveLimits ?? DEFAULT_ARCHIVE_LIMITS;
  }

  /** The docker CLI to build with: PLATFORM_DOCKER_CLI, else the first with BuildKit. */
  private dockerCli(): Promise<DockerCli> {
    const socketPath =
      (this.options.docker.modem as { socketPath?: string }).socketPath ?? DEFAULT_DOCKER_SOCKET;
    this.cli ??= findDockerCli(socketPath, process.env.PLATFORM_DOCKER_CLI);
    this.cli.catch(() => {
      this.cli = undefined;
    });
    return this.cli;
  }

  private logStream(streamId: string, secrets: (string | undefined)[]): LogStream {
    return new LogStream(streamId, this.options.publishLogChunk, new SecretMasker(secrets));
  }

  /** Runs a job's work, logs its failure, and ends its log stream in every case. */
  private async runJob<T>(
    jobId: string,
    log: LogStream,
    work: (signal: AbortSignal, job: RunningJob) => Promise<T>,
    outcome?: (result: T) => JobOutcome,
  ): Promise<T> {
    try {
      const kept = outcome ? { outcome, mask: (message: string) => log.mask(message) } : undefined;
      const result = await this.jobs.run(jobId, work, kept);
      log.close("done");
      return result;
    } catch (error) {
      const commandError =
        error instanceof CommandError
          ? error
          : new CommandError("INTERNAL", log.mask((error as Error)?.message ?? String(error)));
      const message = log.mask(commandError.message);
      this.options.logger?.warn({ jobId, code: commandError.code, message }, "job failed");
      log.close(`error (${commandError.code}): ${message}`);
      throw new CommandError(commandError.code, message);
    }
  }
}

function checkBuildCommand(command: BuildImageCommand): asserts command is CheckedBuildCommand {
  checkAppName("appName", command.appName);
  if (!command.jobId || !/^[A-Za-z0-9_-]+$/.test(command.jobId))
    throw invalid("jobId", "must match ^[A-Za-z0-9_-]+$");
  checkImageName("imageName", command.imageName);
  if (!BUILD_TYPES.has(command.buildType)) throw invalid("buildType", "is not a known build type");
  if (command.git) checkGitSource(command.git);
  else if (command.archive) checkArchiveSource(command.archive);
  else throw invalid("source", "a git or archive source is required");
  checkRelativePath("buildPath", command.buildPath);
  checkRelativePath("dockerfile", command.dockerfile);
  checkRelativePath("dockerContextPath", command.dockerContextPath);
  checkRelativePath("publishDirectory", command.publishDirectory);
  if (command.dockerBuildStage) checkBuildStage("dockerBuildStage", command.dockerBuildStage);
  checkKeys("buildArgs", command.buildArgs);
  checkKeys("buildSecrets", command.buildSecrets);
  checkSourcePatches(command.patches ?? []);
  if (command.railpackVersion && !/^[0-9]+\.[0-9]+\.[0-9]+$/.test(command.railpackVersion)) {
    throw invalid("railpackVersion", "must be a version like 0.15.4");
  }
  if (command.herokuVersion && !/^[0-9]+$/.test(command.herokuVersion))
    throw invalid("herokuVersion", "must be a number");
  checkPushTarget(command.pushRegistry, "pushRegistry", command.pushImagePrefix, "pushImagePrefix");
  checkPushTarget(
    command.rollbackRegistry,
    "rollbackRegistry",
    command.rollbackImagePrefix,
    "rollbackImagePrefix",
  );
}

function checkPushTarget(
  registry: RegistryAuth | undefined,
  registryField: string,
  prefix: string | undefined,
  prefixField: string,
): void {
  if (registry?.serverAddress && !/^[A-Za-z0-9.-]+(:[0-9]+)?$/.test(registry.serverAddress)) {
    throw invalid(`${registryField}.serverAddress`, "must be host[:port]");
  }
  if (prefix && !/^[a-z0-9]+(?:[._/-][a-z0-9]+)*$/.test(prefix)) {
    throw invalid(prefixField, "is not a valid repository prefix");
  }
}
