/**
 * One deployment of an application, from its row to agent commands (the runner of the
 * application target kind, registered in applications/deploy-target.ts): load the application and
 * its inherited variables, pick its server, build the image from its source (or take the
 * Docker image as is), push it when a build registry is set, then create or update its Swarm
 * service and keep what it ran as a rollback (rollbacks/). With a `buildServerId`, the build
 * server's agent builds and pushes to the build registry, and the application's server pulls the
 * pushed image and runs it (build-server.ts). The agent's log stream is
 * forwarded line by line into the deployment's log; an abort of the run cancels the agent's
 * job. A failure throws an Error whose message is the reason (already logged); no secret is
 * ever part of it.
 */
import type { BuildImageCommand, Init, RegistryAuth, ResourceOwner } from "@platform/agent-protocol";
import { applicationOwner } from "@platform/ownership";
import type { ServiceContext } from "../context.ts";
import { withOwner } from "../db/owned.ts";
import { deployServiceSpec, fail, runDeploymentSteps } from "../deployments/deploy-service.ts";
import { imageNameFor } from "../deployments/image-names.ts";
import { forwardAgentLog } from "../deployments/log-forwarder.ts";
import { followAgentJob } from "../deployments/observe.ts";
import type { DeploymentOutcome, DeploymentRun } from "../deployments/pipeline.ts";
import { applicationEnv } from "../deployments/service-spec.ts";
import { parseEnv } from "../env-vars.ts";
import { serviceMountsOf } from "../mounts/mounts.ts";
import { networkDockerNames } from "../networks/index.ts";
import { sourcePatchesFor } from "../patches/repository.ts";
import { findRegistryCredentials } from "../registries/repository.ts";
import { recordRollback } from "../rollbacks/rollbacks.ts";
import { agentServerId } from "../servers/repository.ts";
import { resolveVaultReferences } from "../vaults/index.ts";
import { type BuildServer, buildServerOf, recordBuildServer, runOnBuildServer } from "./build-server.ts";
import { latestUpload } from "./drop.ts";
import { listApplicationPorts } from "./repository.ts";
import { buildServiceSpec } from "./service-spec.ts";
import { type DeployableApplication, deploymentSourceOf } from "./source.ts";
import { openApplicationSecret } from "./views.ts";

export const BUILD_TIMEOUT_MS = 30 * 60_000;
const CLEAN_CACHE_TIMEOUT_MS = 10 * 60_000;

async function loadApplication(ctx: ServiceContext, applicationId: string) {
  return withOwner(ctx.db.selectFrom("applications"), "applications.environmentId")
    .selectAll("applications")
    .select(["projects.organizationId", "projects.env as projectEnv", "environments.env as environmentEnv"])
    .where("applications.applicationId", "=", applicationId)
    .executeTakeFirst();
}

export type LoadedApplication = NonNullable<Awaited<ReturnType<typeof loadApplication>>>;

/**
 * What differs between an application's own deployment and a preview of it (previews/): the
 * owner of what it creates, its build secrets, its ports and mounts, whether it keeps a
 * rollback, and what runs once its service is deployed (a preview's Traefik file).
 */
export interface ApplicationVariant {
  owner: ResourceOwner;
  buildSecrets: string | null;
  ports: Awaited<ReturnType<typeof listApplicationPorts>>;
  mounts: Awaited<ReturnType<typeof serviceMountsOf>>;
  keepRollback: boolean;
  afterDeploy?(serverId: string, log: (line: string) => void): Promise<void>;
}

/** Builds and deploys; throws an Error whose message is the failure reason (already logged). */
export async function runApplicationDeployment(
  ctx: ServiceContext,
  run: DeploymentRun,
): Promise<DeploymentOutcome> {
  return runApplicationVariant(ctx, run, async () => {
    const app = await loadApplication(ctx, run.target.id);
    if (!app) return fail("The application no longer exists");
    return {
      app,
      variant: {
        owner: applicationOwner(app.organizationId, app.applicationId),
        buildSecrets: openApplicationSecret(ctx.secrets, "buildSecrets", app, app.buildSecretsSealed),
        ports: await listApplicationPorts(ctx.db, app.applicationId),
        mounts: await serviceMountsOf(ctx.db, "application", app.applicationId),
        keepRollback: true,
      },
    };
  });
}

/** The application (with its organization and inherited variables) a deployment builds. */
export const loadDeployedApplication = loadApplication;

/**
 * Builds and deploys the application `load` answers (an application, or a preview's view of
 * its application) as `variant` says; throws an Error whose message is the failure reason.
 */
export async function runApplicationVariant(
  ctx: ServiceContext,
  run: DeploymentRun,
  load: () => Promise<{ app: LoadedApplication; variant: ApplicationVariant }>,
): Promise<DeploymentOutcome> {
  const client = ctx.agents.client;
  return runDeploymentSteps(ctx, run, async ({ log, secrets, setServer, setStage, checkAborted }) => {
    checkAborted();
    const { app, variant } = await load();
    if (app.serverId === null && ctx.config.edition === "cloud") {
      fail("The application has no server: set serverId (required on the cloud edition)");
    }
    // This machine runs only the instance organization's applications (agentServerId).
    const serverId = await agentServerId(ctx, app.organizationId, app.serverId);
    setServer(serverId);
    const deployable: DeployableApplication = app;

    // A Docker image is not built: its build server plays no part.
    const builder: BuildServer | undefined =
      app.sourceType === "docker" ? undefined : await buildServerOf(ctx, app);
    /** Where the image is built: the build server, else the application's own server. */
    const buildOn = builder?.serverId ?? serverId;
    const archive =
      run.archive ?? (app.sourceType === "drop" ? await latestUpload(ctx, app.applicationId) : undefined);
    const source = await deploymentSourceOf(ctx, deployable, buildOn, archive);
    const env = await resolveVaultReferences(
      ctx,
      app,
      applicationEnv(app, app.projectEnv, app.environmentEnv),
      log,
      secrets,
    );
    const ports = variant.ports;

    let image: string;
    /** The image as the server names it (a build's local tag even when it was pushed). */
    let localImage: string;
    let registryAuth: RegistryAuth | undefined;
    /** The build registry's copy of a build server's image, kept with the rollback (rollbacks/). */
    let pushed: { registryId: string; image: string } | undefined;
    let outcome: DeploymentOutcome;

    if (source.kind === "image") {
      image = source.image;
      localImage = image;
      registryAuth = source.registryAuth;
      if (registryAuth) secrets.push(registryAuth.password);
      log(`Using the image ${image} (no build)`);
      outcome = { imageName: image };
    } else {
      const sshKey = source.source.git?.sshPrivateKey;
      // A key is many lines; a log line could only ever hold one of them.
      if (sshKey)
        secrets.push(
          ...sshKey.split(/\r?\n/).filter((line) => line.length >= 16 && !line.startsWith("-----")),
        );
      // Build arguments and secrets may name vault secrets too; read now, never stored.
      const fromVault = async (text: string | null) =>
        Object.fromEntries(
          (await resolveVaultReferences(ctx, app, parseEnv(text ?? ""), log, secrets)).map(
            ({ key, value }) => [key, value],
          ),
        );
      const buildArgs = await fromVault(app.buildArgs);
      const buildSecrets = await fromVault(variant.buildSecrets);
      secrets.push(...Object.values(buildSecrets));
      const imageName = imageNameFor(app.appName, run.deploymentId);
      const command: Init<BuildImageCommand> & { logStreamId: string; pushRegistry?: RegistryAuth } = {
        ...source.source,
        jobId: run.deploymentId,
        logStreamId: `${run.deploymentId}-build`,
        owner: variant.owner,
        appName: app.appName,
        imageName,
        buildType: app.buildType,
        buildPath: source.buildPath,
        dockerfile: app.dockerfile ?? undefined,
        dockerContextPath: app.dockerContextPath ?? undefined,
        dockerBuildStage: app.dockerBuildStage ?? undefined,
        buildArgs,
        buildSecrets,
        publishDirectory: app.publishDirectory ?? undefined,
        isStaticSpa: app.isStaticSpa,
        herokuVersion: app.herokuVersion ?? undefined,
        railpackVersion: app.railpackVersion ?? undefined,
        patches: await sourcePatchesFor(ctx.db, { applicationId: app.applicationId }),
      };

      if (run.kind === "redeploy" && app.cleanCache) {
        setStage("clean the build cache");
        log("Cleaning the build cache…");
        const { reclaimedBytes } = await client.cleanBuildCache(buildOn, CLEAN_CACHE_TIMEOUT_MS);
        log(`Build cache cleaned (${reclaimedBytes} bytes reclaimed)`);
        command.noCache = true;
      }
      // buildRegistryId: the registry the agent pushes the built image to (the rollback registry
      // gets the image once the deployment succeeded: rollbacks/).
      const pushTarget = async (registryId: string) => {
        const registry =
          (await findRegistryCredentials(ctx, app.organizationId, registryId)) ??
          fail("The build registry no longer exists");
        secrets.push(registry.password);
        const { registryUrl: serverAddress, username, password } = registry;
        const auth: RegistryAuth = { serverAddress, username, password };
        return [auth, registry.imagePrefix ?? undefined] as const;
      };
      if (app.buildRegistryId)
        [command.pushRegistry, command.pushImagePrefix] = await pushTarget(app.buildRegistryId);

      checkAborted();
      setStage(builder ? `build on the build server ${builder.name}` : "build");
      if (builder) {
        // The build server's agent runs the job: a cancel goes to it until the deploy starts.
        setServer(buildOn);
        await recordBuildServer(ctx, run.deploymentId, builder.serverId);
        log(`Building on the build server ${builder.name} (${builder.serverId})`);
      }
      log(source.source.git ? `Cloning ${source.description}…` : `Unpacking ${source.description}…`);
      log(`Building ${imageName} (${app.buildType})…`);
      if (command.pushRegistry) log(`Pushing to ${command.pushRegistry.serverAddress} after the build…`);
      const build = () =>
        forwardAgentLog(ctx, buildOn, command.logStreamId, log, () =>
          followAgentJob(ctx, {
            serverId: buildOn,
            jobId: run.deploymentId,
            send: (attempt) =>
              client.buildImage(
                buildOn,
                attempt === 0 ? command : { ...command, logStreamId: `${command.logStreamId}-${attempt}` },
                BUILD_TIMEOUT_MS,
              ),
            log,
            signal: run.signal,
            onWaiting: () => run.slot?.giveBack(),
            onResumed: async () => run.slot?.take(),
          }),
        );
      const built = builder ? await runOnBuildServer(builder, build) : await build();
      if (built.commitHash) log(`Built commit ${built.commitHash}`);
      image = imageName;
      localImage = imageName;
      if (built.pushedImage) {
        log(`Pushed ${built.pushedImage}`);
        image = built.pushedImage;
        registryAuth = command.pushRegistry;
      }
      if (builder) {
        // The image exists on the build server only: the application's server pulls the pushed
        // copy (deployService pulls with registryAuth) and names it so.
        if (!built.pushedImage || !app.buildRegistryId)
          return fail(`The build server ${builder.name} pushed no image: nothing was deployed`);
        localImage = built.pushedImage;
        pushed = { registryId: app.buildRegistryId, image: built.pushedImage };
        setServer(serverId);
        log(`The server that runs the application pulls ${built.pushedImage}`);
      }
      outcome = {
        imageName: image,
        commitHash: built.commitHash || undefined,
        commitMessage: built.commitMessage || undefined,
      };
    }

    checkAborted();
    setStage("deploy");
    // The global limit bounds builds, the heavy part. Rolling the service out is Swarm's work and
    // mostly waiting for its tasks to start: holding a slot through it made a burst of prebuilt
    // images start two at a time (bench:burst). One deployment per application still holds.
    run.slot?.giveBack();
    const mounts = variant.mounts;
    const networkNames = await networkDockerNames(ctx, app.organizationId, app.networkIds);
    const spec = buildServiceSpec({ app, image, env, ports, mounts, networkNames });
    log(`Deploying the service ${spec.name} (${spec.replicas} replica${spec.replicas === 1 ? "" : "s"})…`);
    await deployServiceSpec(
      ctx,
      { ...run, slot: undefined },
      serverId,
      { spec, registryAuth, owner: variant.owner },
      log,
    );
    await variant.afterDeploy?.(serverId, log);
    if (variant.keepRollback)
      await recordRollback(ctx, {
        deploymentId: run.deploymentId,
        application: app,
        serverId,
        localImage,
        pushed,
        spec,
        log,
        secrets,
      });
    log("Done");
    return outcome;
  });
}
