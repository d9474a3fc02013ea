/**
 * A compose stack on its server: its converted file (what getConvertedCompose shows), its
 * deployments (run by the deployment worker like every kind's: deploy and redeploy go through
 * the queue, in the frame runDeploymentSteps gives every kind), and its start, stop and removal
 * through the agent (stackAction). The agent deploys with the real tools (`docker stack deploy`,
 * Compose) and answers once every service runs its tasks; a lost reply or a restarted agent is
 * followed by observation and the command sent again (it is idempotent), and a deployment a
 * stopped control plane left running runs again: each settles as what Docker shows.
 */
import type {
  DeployStackCommand,
  DeployStackResult,
  GitSource,
  Init,
  ResourceOwner,
  StackService,
} from "@platform/agent-protocol";
import {
  type ComposeCollision,
  ComposeFileError,
  type ComposeTenant,
  type ConvertedCompose,
  convertCompose,
} from "@platform/compose-config";
import { composeOwner } from "@platform/ownership";
import { dynamicConfigFileName } from "@platform/traefik-config";
import { callAgent } from "../agents/errors.ts";
import { LOCAL_SERVER_ID } from "../agents/hub.ts";
import { repositoryGitSource } from "../applications/source.ts";
import type { ServiceContext } from "../context.ts";
import type { ApplicationStatus } from "../db/schema.ts";
import { fail, runDeploymentSteps } from "../deployments/deploy-service.ts";
import { forwardAgentLog } from "../deployments/log-forwarder.ts";
import { followAgentJob } from "../deployments/observe.ts";
import type { DeploymentOutcome, DeploymentRun } from "../deployments/pipeline.ts";
import { removeServiceOf } from "../deployments/runtime.ts";
import { applicationEnv, PLATFORM_NETWORK } from "../deployments/service-spec.ts";
import { teardownTarget } from "../deployments/stop.ts";
import type { DeploymentTarget } from "../deployments/targets.ts";
import { badRequest, conflict } from "../errors.ts";
import { serviceMountsOf } from "../mounts/mounts.ts";
import { networkDockerNames } from "../networks/index.ts";
import { isInstanceOrganization } from "../organizations/instance.ts";
import { sourcePatchesFor } from "../patches/repository.ts";
import { listComposeRollbacks, recordComposeRollback, removeRollbacks } from "../rollbacks/rollbacks.ts";
import { hostPortTaken, reservedHostPorts } from "../servers/host-ports.ts";
import { agentServerId } from "../servers/repository.ts";
import { findComposeWithOrganization, type LocatedCompose } from "./repository.ts";

const DEPLOY_TIMEOUT_MS = 15 * 60_000;
const STACK_ACTION_TIMEOUT_MS = 180_000;
const DEPLOY_WAIT_SECONDS = 300;
/** A shallow clone of one branch, to read the stack's file before converting it. */
const READ_REPOSITORY_TIMEOUT_MS = 120_000;
/**
 * What `../files/` names for the conversion's checks. The converted file keeps `../files/<x>`
 * (Dokploy's layout): the agent runs it from `<version>/code/` beside `<version>/files/`, in the
 * stack's directory under its own main directory (agent deploy/stack.ts), which the control
 * plane does not know for a remote server.
 */
const STACK_FILES_ANCHOR = "/stack/files";

export const ownerOfCompose = (row: Pick<LocatedCompose, "organizationId" | "composeId">): ResourceOwner =>
  composeOwner(row.organizationId, row.composeId);

/** The server the stack runs on: its serverId, else this machine (self-hosted only). */
export function composeServerOf(row: { serverId: string | null }): string {
  return row.serverId ?? LOCAL_SERVER_ID;
}

/** serverOf for a request: cloud needs a server; this machine runs only the instance organization's. */
async function serverFor(ctx: ServiceContext, row: LocatedCompose): Promise<string> {
  if (row.serverId === null && ctx.config.edition === "cloud") {
    throw badRequest("The compose service has no server: set serverId (required on the cloud edition)", {
      fields: ["serverId"],
    });
  }
  return agentServerId(ctx, row.organizationId, row.serverId);
}

/** The variables the file is interpolated with: project < environment < compose, and Dokploy's. */
export function composeEnv(row: LocatedCompose): Record<string, string> {
  const merged = applicationEnv(row, row.projectEnv ?? "", row.environmentEnv ?? "");
  return {
    APP_NAME: row.appName,
    COMPOSE_PROJECT_NAME: row.appName,
    ...Object.fromEntries(merged.map(({ key, value }) => [key, value])),
  };
}

/** The domains of the stack, as the conversion routes them. */
export async function composeDomains(ctx: ServiceContext, composeId: string) {
  return ctx.db
    .selectFrom("domains")
    .selectAll()
    .where("composeId", "=", composeId)
    .orderBy("uniqueConfigKey")
    .execute();
}

/**
 * The file as it will be deployed (getConvertedCompose): the stored file with the platform's
 * additions. A file or a domain the conversion refuses is a 400 naming where.
 */
export async function convertedComposeOf(
  ctx: ServiceContext,
  row: LocatedCompose,
  composeFile = row.composeFile,
  /** The domains to route instead of the stored ones (compose.import checks a template's before storing it). */
  withDomains?: readonly { host: string; serviceName: string | null; port: number; path: string | null }[],
): Promise<ConvertedCompose> {
  const domains = withDomains ?? (await composeDomains(ctx, row.composeId));
  const tenancy = await tenantOf(ctx, row);
  let converted: ConvertedCompose;
  try {
    converted = convertCompose({
      composeFile,
      composeType: row.composeType,
      appName: row.appName,
      labels: ownershipLabelsOf(row),
      env: composeEnv(row),
      domains: domains.map((domain) => ({
        host: domain.host,
        serviceName: domain.serviceName ?? "",
        port: domain.port,
        path: domain.path,
      })),
      platformNetwork: ctx.config.platformNetwork ?? PLATFORM_NETWORK,
      extraNetworks: await networkDockerNames(ctx, row.organizationId, row.networkIds),
      tenant: tenancy?.tenant ?? null,
      filesDirectory: STACK_FILES_ANCHOR,
      collision: collisionOf(row),
    });
  } catch (error) {
    if (error instanceof ComposeFileError) throw composeFileError(error);
    throw error;
  }
  for (const { port, protocol } of tenancy?.published ?? []) {
    const claim = {
      serverId: row.serverId,
      port,
      protocol,
      field: "composeFile",
      except: { composeId: row.composeId },
    };
    if (await hostPortTaken(ctx.db, claim)) {
      throw conflict(`Invalid compose file: port ${port}/${protocol} is already published on this server`, {
        fields: ["composeFile"],
      });
    }
  }
  return converted;
}

/**
 * Dokploy's collision rules (addDomainToCompose): isolatedDeployment first (the stack's own
 * network keyed by the suffix, else the appName; volumes suffixed with isolatedDeploymentsVolume),
 * else randomize with a suffix (every name suffixed); neither without them.
 */
export function collisionOf(
  row: Pick<
    LocatedCompose,
    "appName" | "suffix" | "randomize" | "isolatedDeployment" | "isolatedDeploymentsVolume"
  >,
): ComposeCollision | undefined {
  if (row.isolatedDeployment) {
    return { mode: "isolated", network: row.suffix || row.appName, volumes: row.isolatedDeploymentsVolume };
  }
  if (row.randomize && row.suffix) return { mode: "randomize", suffix: row.suffix };
  return undefined;
}

/**
 * What a tenant's file may use on the shared engine (null: the instance organization, which is
 * not refused anything): no network but the platform's (the platform creates none for tenants
 * yet), the volumes of its own mounts, and host ports neither reserved (checked during the
 * conversion) nor published by another service of the server (checked after it, `published`).
 */
async function tenantOf(
  ctx: ServiceContext,
  row: LocatedCompose,
): Promise<{ tenant: ComposeTenant; published: { port: number; protocol: "tcp" | "udp" }[] } | null> {
  if (await isInstanceOrganization(ctx.db, row.organizationId)) return null;
  const reserved = await reservedHostPorts(ctx, ctx.db, row.serverId);
  const volumes = await ctx.db
    .selectFrom("mounts")
    .select("volumeName")
    .where("organizationId", "=", row.organizationId)
    .where("type", "=", "volume")
    .execute();
  const ownVolumes = new Set(volumes.map((mount) => mount.volumeName));
  const published: { port: number; protocol: "tcp" | "udp" }[] = [];
  const tenant: ComposeTenant = {
    isOwnedNetwork: () => false,
    isOwnedVolume: (name) => ownVolumes.has(name),
    refusePublishedPort: (port, protocol) => {
      const holder = reserved.get(port);
      if (holder !== undefined) return `${port} is reserved for ${holder}`;
      published.push({ port, protocol });
      return undefined;
    },
  };
  return { tenant, published };
}

/**
 * A refused file: 400 naming the input field (composeFile, or serviceName for a domain naming no
 * service of the file) and then each place of the file (`services.web.post_start`).
 */
export function composeFileError(error: ComposeFileError) {
  const first = error.issues[0];
  const places = error.issues
    .map((issue) => issue.path)
    .filter((path) => path !== "" && !path.startsWith("domains"));
  return badRequest(`Invalid compose file: ${error.message}`, {
    fields: [...new Set([first?.path.startsWith("domains") ? "serviceName" : "composeFile", ...places])],
    issues: error.issues,
  });
}

function ownershipLabelsOf(row: LocatedCompose): Record<string, string> {
  const owner = ownerOfCompose(row);
  return {
    "platform.managed": "true",
    "platform.organization": owner.organizationId,
    "platform.resource": owner.resource,
  };
}

/**
 * The stack's file as its source holds it now: the stored text (raw), else the file at
 * composePath of a fresh shallow clone of its branch, read through its server's agent (the clone
 * fails for a source that cannot be reached: a 400 naming sourceType).
 */
export async function readComposeSource(
  ctx: ServiceContext,
  row: LocatedCompose,
): Promise<{ composeFile: string; commit?: string }> {
  if (row.sourceType === "raw") return { composeFile: row.composeFile };
  const serverId = await serverFor(ctx, row);
  const git = await repositoryGitSource(ctx, row, "compose service");
  try {
    const read = await callAgent(
      serverId,
      () =>
        ctx.agents.client.readRepositoryFile(
          serverId,
          { git, path: row.composePath },
          READ_REPOSITORY_TIMEOUT_MS,
        ),
      ctx.logger,
    );
    return { composeFile: read.content, commit: read.commit };
  } catch (error) {
    const message = [git.httpPassword, git.sshPrivateKey]
      .filter((value): value is string => !!value)
      .reduce((text, secret) => text.split(secret).join("***"), (error as Error).message);
    throw badRequest(`Could not read ${row.composePath} from the repository: ${message}`, {
      fields: ["sourceType"],
    });
  }
}

/** Runs one deployment of a stack (deploy or redeploy); throws with the reason. */
export async function runComposeDeployment(
  ctx: ServiceContext,
  run: DeploymentRun,
): Promise<DeploymentOutcome> {
  const client = ctx.agents.client;
  return runDeploymentSteps(ctx, run, async ({ log, secrets, setServer, setStage, checkAborted }) => {
    setStage("deploy");
    const row = await findComposeWithOrganization(ctx.db, run.target.id);
    if (!row) return fail("The compose service no longer exists");
    const serverId = await serverFor(ctx, row);
    setServer(serverId);
    // The stack's name is no secret: masking it would hide every object name in the log.
    secrets.push(
      ...Object.values(composeEnv(row)).filter((value) => value.length >= 8 && value !== row.appName),
    );
    let composeFile = row.composeFile;
    let git: Init<GitSource> | undefined;
    if (row.sourceType !== "raw") {
      git = await repositoryGitSource(ctx, row, "compose service");
      secrets.push(...[git.httpPassword, git.sshPrivateKey].filter((value): value is string => !!value));
      log(`Reading ${row.composePath} of ${git.url} (branch ${git.branch})…`);
      const read = await callAgent(
        serverId,
        () => client.readRepositoryFile(serverId, { git, path: row.composePath }, READ_REPOSITORY_TIMEOUT_MS),
        ctx.logger,
      ).catch((error: unknown) =>
        fail(`Could not read ${row.composePath} from the repository: ${(error as Error).message}`),
      );
      log(`Read ${row.composePath} at commit ${read.commit}`);
      composeFile = read.content;
      checkAborted();
    }
    const converted = await convertedComposeOf(ctx, row, composeFile).catch((error: unknown) => {
      if (error instanceof Error) return fail(error.message);
      throw error;
    });
    checkAborted();
    const collision = collisionOf(row);
    if (collision?.mode === "randomize") log(`Names suffixed with -${collision.suffix} (randomize)`);
    if (collision?.mode === "isolated") {
      log(
        `Isolated deployment: every service joins the stack's network ${collision.network}${collision.volumes ? `, volumes suffixed with -${collision.network}` : ""}`,
      );
    }
    if (await deploysWithFreshVolumes(ctx, run.deploymentId)) {
      await removeStackWithVolumes(ctx, row, serverId, log);
      checkAborted();
    }
    const tool = row.composeType === "stack" ? "docker stack deploy" : "Compose";
    log(`Deploying the ${converted.services.length} service(s) of ${row.appName} with ${tool}…`);
    const files = (await serviceMountsOf(ctx.db, "compose", row.composeId))
      .filter((mount) => mount.type === "file")
      .map((mount) => ({ filePath: mount.source ?? "", content: mount.content ?? "" }));
    if (files.length > 0) log(`Writing ${files.length} file mount(s) under ../files/…`);
    const result = await deployStackThroughAgent(ctx, run, serverId, log, {
      appName: row.appName,
      composeType: row.composeType,
      composeFile: converted.yaml,
      owner: ownerOfCompose(row),
      files,
      ...(git
        ? {
            git,
            composePath: row.composePath,
            patches: await sourcePatchesFor(ctx.db, { composeId: row.composeId }),
          }
        : {}),
    });
    log(`Stack running: ${describeStack(result.services)}`);
    // What it ran is kept for rollback.rollback (a failure to keep it is logged, the deploy stays done).
    await recordComposeRollback(ctx, {
      deploymentId: run.deploymentId,
      compose: row,
      serverId,
      document: converted.document,
      files,
      log,
    });
    return { imageName: "" };
  });
}

async function deploysWithFreshVolumes(ctx: ServiceContext, deploymentId: string): Promise<boolean> {
  const deployment = await ctx.db
    .selectFrom("deployments")
    .select("freshVolumes")
    .where("deploymentId", "=", deploymentId)
    .executeTakeFirst();
  return deployment?.freshVolumes ?? false;
}

/** The agent's command removing the stack's own objects (its volumes too with `removeVolumes`). */
function removeStackCommand(row: LocatedCompose, removeVolumes: boolean) {
  return {
    appName: row.appName,
    composeType: row.composeType,
    action: "REMOVE" as const,
    owner: ownerOfCompose(row),
    removeVolumes,
  };
}

/**
 * compose.deploy/redeploy freshVolumes: the stack is removed with its volumes before it is
 * deployed again, so it starts on empty ones. The agent removes only the volumes labelled as this
 * stack's organization's and names the others it left (never a failure: they are not ours).
 */
async function removeStackWithVolumes(
  ctx: ServiceContext,
  row: LocatedCompose,
  serverId: string,
  log: (line: string) => void,
): Promise<void> {
  log(`Fresh volumes: removing the stack ${row.appName} and its volumes first…`);
  const result = await callAgent(
    serverId,
    () => ctx.agents.client.stackAction(serverId, removeStackCommand(row, true), STACK_ACTION_TIMEOUT_MS),
    ctx.logger,
  ).catch((error: unknown) => fail(`Could not remove the stack's volumes: ${(error as Error).message}`));
  log(
    result.volumesRemoved.length > 0
      ? `Removed volume(s): ${result.volumesRemoved.join(", ")}`
      : "The stack had no volume to remove",
  );
  if (result.kept.length > 0) log(`Left in place (not this organization's): ${result.kept.join(", ")}`);
}

/**
 * Deploys a stack's file through the agent and waits until its services run (a lost reply or a
 * restarted agent is followed by observation and the command sent again): a stack's deployment
 * and its rollback (rollbacks/).
 */
export async function deployStackThroughAgent(
  ctx: ServiceContext,
  run: DeploymentRun,
  serverId: string,
  log: (line: string) => void,
  stack: Omit<Init<DeployStackCommand>, "jobId" | "logStreamId" | "waitSeconds"> & { appName: string },
): Promise<DeployStackResult> {
  const client = ctx.agents.client;
  const logStreamId = `${run.deploymentId}-stack`;
  const command = { ...stack, jobId: run.deploymentId, waitSeconds: DEPLOY_WAIT_SECONDS };
  return forwardAgentLog(ctx, serverId, logStreamId, log, () =>
    followAgentJob(ctx, {
      serverId,
      jobId: run.deploymentId,
      send: (attempt) =>
        client.deployStack(
          serverId,
          { ...command, logStreamId: attempt === 0 ? logStreamId : `${logStreamId}-${attempt}` },
          DEPLOY_TIMEOUT_MS,
        ),
      log,
      signal: run.signal,
      onWaiting: () => run.slot?.giveBack(),
      onResumed: async () => run.slot?.take(),
    }),
  );
}

export function describeStack(services: StackService[]): string {
  return services
    .map((service) => `${service.name} ${service.runningTasks}/${service.desiredTasks}`)
    .join(", ");
}

/** The deployment worker's view of a stack (deployments/targets.ts). */
export async function loadComposeTarget(
  ctx: ServiceContext,
  composeId: string,
): Promise<DeploymentTarget | undefined> {
  const row = await findComposeWithOrganization(ctx.db, composeId);
  if (!row) return undefined;
  return {
    kind: "compose",
    serviceId: row.composeId,
    name: row.name,
    organizationId: row.organizationId,
    status: row.composeStatus,
    eventService: { composeId: row.composeId, type: "compose" },
    run: runComposeDeployment,
    // `docker stack deploy` and `compose up` converge to the file whatever ran before: a
    // deployment a stopped control plane left running runs again and settles from what Docker does.
    recovery: "runAgain",
    setStatus: async (db, status: ApplicationStatus) => {
      await db
        .updateTable("compose")
        .set({ composeStatus: status })
        .where("composeId", "=", composeId)
        .execute();
    },
  };
}

/** start, stop or read the stack's services; a stack never deployed is a 400 (start, stop). */
export async function composeStackAction(
  ctx: ServiceContext,
  row: LocatedCompose,
  action: "START" | "STOP" | "STATUS",
) {
  const serverId = await serverFor(ctx, row);
  const result = await callAgent(
    serverId,
    () =>
      ctx.agents.client.stackAction(
        serverId,
        { appName: row.appName, composeType: row.composeType, action, owner: ownerOfCompose(row) },
        STACK_ACTION_TIMEOUT_MS,
      ),
    ctx.logger,
  );
  if (!result.found && action !== "STATUS") {
    throw badRequest("The compose service has no running stack yet: deploy it first", {
      fields: ["composeId"],
    });
  }
  return result;
}

/**
 * Removes the stack's services and networks (and, with deleteVolumes, its volumes): only its own
 * objects. A server whose agent cannot be reached does not block the deletion (the leftover is
 * logged), as for applications.
 */
export async function removeComposeStack(
  ctx: ServiceContext,
  row: LocatedCompose,
  deleteVolumes: boolean,
): Promise<void> {
  const serverId = composeServerOf(row);
  const result = await removeServiceOf(ctx, serverId, row.appName, "compose", () =>
    ctx.agents.client.stackAction(serverId, removeStackCommand(row, deleteVolumes), STACK_ACTION_TIMEOUT_MS),
  );
  if ((result?.kept ?? []).length > 0) {
    ctx.logger.warn(
      { composeId: row.composeId, kept: result?.kept },
      "objects named after the stack belong to someone else: left in place",
    );
  }
}

/** Stops the stack's deployments, then removes its objects. */
export async function teardownCompose(
  ctx: ServiceContext,
  row: LocatedCompose,
  reason: string,
  deleteVolumes: boolean,
): Promise<void> {
  await teardownTarget(ctx, row.composeId, reason, async () => {
    await removeComposeProxy(ctx, row);
    await removeComposeStack(ctx, row, deleteVolumes);
    // Kept rollback images are exempt from image cleanups: untagged here or never.
    await removeRollbacks(ctx, await listComposeRollbacks(ctx.db, row.composeId));
  });
}

/**
 * Removes the stack's Traefik file (before the stack goes). Best effort: a server that cannot be
 * reached must not keep a stack from being deleted; the leftover is logged.
 */
export async function removeComposeProxy(
  ctx: ServiceContext,
  row: { composeId: string; appName: string; serverId: string | null; organizationId: string },
): Promise<void> {
  if (!row.serverId && ctx.config.edition === "cloud") return;
  const serverId = composeServerOf(row);
  try {
    const has = await ctx.db
      .selectFrom("domains")
      .select("domainId")
      .where("composeId", "=", row.composeId)
      .limit(1)
      .executeTakeFirst();
    if (!has) return;
    await callAgent(
      serverId,
      () =>
        ctx.agents.client.removeProxyFile(serverId, "dynamic", dynamicConfigFileName(row.appName), {
          owner: ownerOfCompose(row),
        }),
      ctx.logger,
    );
  } catch (error) {
    ctx.logger.warn({ err: error, composeId: row.composeId }, "the stack's proxy file could not be removed");
  }
}
