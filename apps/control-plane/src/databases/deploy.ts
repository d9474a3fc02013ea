/**
 * A database service's Swarm service: its spec from the row and the kind's facts, its
 * deployments (run by the deployment worker like an application's: deploy, reload and rebuild
 * go through the queue) and its start, stop and removal through the agent. The data lives in
 * the `<appName>-data` volume, labelled with the service's owner; a rebuild and a removal
 * delete it (the agent deletes only a volume carrying that owner's labels).
 */
import type { Init, ServiceMount } from "@platform/agent-protocol";
import { databaseOwner } from "@platform/ownership";
import { callAgent } from "../agents/errors.ts";
import { LOCAL_SERVER_ID } from "../agents/hub.ts";
import { memoryBytes, nanoCpus } from "../applications/validation.ts";
import type { ServiceContext } from "../context.ts";
import type { ApplicationStatus, DatabaseService } from "../db/schema.ts";
import { deployServiceSpec, fail, runDeploymentSteps } from "../deployments/deploy-service.ts";
import type { DeploymentOutcome, DeploymentRun } from "../deployments/pipeline.ts";
import { removeServiceOf } from "../deployments/runtime.ts";
import {
  applySwarmFields,
  PLATFORM_NETWORK,
  type ServiceSpecToSend,
  splitCommandLine,
} from "../deployments/service-spec.ts";
import { teardownTarget } from "../deployments/stop.ts";
import type { DeploymentTarget } from "../deployments/targets.ts";
import { parseEnv } from "../env-vars.ts";
import { badRequest } from "../errors.ts";
import { serviceMountsOf } from "../mounts/mounts.ts";
import { networkDockerNames } from "../networks/index.ts";
import { agentServerId } from "../servers/repository.ts";
import { databaseKindFacts, dataVolumeOf, imageOf, type OpenedDatabase } from "./kinds.ts";
import { findDatabaseWithOrganization } from "./repository.ts";
import { databaseSwarmFields } from "./swarm.ts";
import { openDatabase } from "./views.ts";

const SERVICE_ACTION_TIMEOUT_MS = 120_000;
/** How long the agent waits for the database's task to run before failing the deployment. */
const DEPLOY_WAIT_SECONDS = 300;

type OwnedDatabase = DatabaseService & { organizationId: string };

/** The Swarm service of the database, from its row (passwords opened) and its kind's facts. */
export function buildDatabaseSpec(
  row: DatabaseService,
  opened: OpenedDatabase,
  defaultImages: ServiceContext["config"]["defaultDatabaseImages"],
  mounts: readonly Init<ServiceMount>[] = [],
  networkNames: readonly string[] = [],
): ServiceSpecToSend {
  const facts = databaseKindFacts[row.kind];
  // The kind's variables first: the user's env may add to them or replace one on purpose.
  const env: Record<string, string> = { ...facts.env(opened) };
  for (const { key, value } of row.env ? parseEnv(row.env) : []) env[key] = value;
  const image = imageOf(row, defaultImages);
  const spec: ServiceSpecToSend = {
    name: row.appName,
    image,
    env: Object.entries(env).map(([key, value]) => `${key}=${value}`),
    replicas: 1,
    labels: { "platform.databaseId": row.databaseId, "platform.appName": row.appName },
    networks: [PLATFORM_NETWORK],
    mounts: [
      { type: "volume", source: dataVolumeOf(row.appName), target: facts.mountPath(image) },
      ...mounts,
    ],
    ports: [
      { publishedPort: row.externalPort, targetPort: facts.port },
      ...(facts.extraPorts ?? []).map((extra) => ({
        publishedPort: row[extra.column],
        targetPort: extra.targetPort,
      })),
    ].flatMap(({ publishedPort, targetPort }) =>
      publishedPort === null ? [] : [{ publishedPort, targetPort, protocol: "tcp", publishMode: "host" }],
    ),
  };
  const defaults = facts.defaultCommand?.(opened);
  const command = row.command?.trim() ? splitCommandLine(row.command) : (defaults?.command ?? []);
  const args =
    row.args && row.args.length > 0 ? [...row.args] : row.command?.trim() ? [] : (defaults?.args ?? []);
  if (command.length > 0) spec.command = command;
  if (args.length > 0) spec.args = args;
  if (row.memoryLimit) spec.memoryLimitBytes = memoryBytes(row.memoryLimit);
  if (row.memoryReservation) spec.memoryReservationBytes = memoryBytes(row.memoryReservation);
  if (row.cpuLimit) spec.nanoCpusLimit = nanoCpus(row.cpuLimit);
  if (row.cpuReservation) spec.nanoCpusReservation = nanoCpus(row.cpuReservation);
  return applySwarmFields(spec, { ...databaseSwarmFields(row), networkNames });
}

/** The server the database runs on, checked as for applications (cloud: a server is required). */
async function serverFor(ctx: ServiceContext, row: OwnedDatabase): Promise<string> {
  if (row.serverId === null && ctx.config.edition === "cloud") {
    throw badRequest("The database has no server: set serverId (required on the cloud edition)", {
      fields: ["serverId"],
    });
  }
  return agentServerId(ctx, row.organizationId, row.serverId);
}

function removeOptions(row: OwnedDatabase, withVolume: boolean) {
  return {
    timeoutMs: SERVICE_ACTION_TIMEOUT_MS,
    owner: databaseOwner(row.organizationId, row.databaseId),
    removeVolumes: withVolume ? [dataVolumeOf(row.appName)] : [],
  };
}

/** Runs one deployment of a database service (deploy, reload or rebuild); throws with the reason. */
export async function runDatabaseDeployment(
  ctx: ServiceContext,
  run: DeploymentRun,
): Promise<DeploymentOutcome> {
  const client = ctx.agents.client;
  return runDeploymentSteps(ctx, run, async ({ log, secrets, setServer, setStage, checkAborted }) => {
    setStage("deploy");
    const row = await findDatabaseWithOrganization(ctx.db, run.target.id);
    if (!row) return fail("The database service no longer exists");
    const serverId = await serverFor(ctx, row);
    setServer(serverId);
    const opened = openDatabase(ctx.secrets, row);
    secrets.push(
      opened.databasePassword,
      ...(opened.databaseRootPassword ? [opened.databaseRootPassword] : []),
    );
    const owner = databaseOwner(row.organizationId, row.databaseId);

    if (run.kind === "rebuild") {
      log(`Removing the service ${row.appName} and its data volume ${dataVolumeOf(row.appName)}…`);
      const removed = await client.serviceAction(serverId, row.appName, "REMOVE", removeOptions(row, true));
      for (const volume of removed.volumesRemoved ?? []) log(`Volume ${volume} deleted`);
      for (const volume of removed.volumesKept ?? [])
        fail(`The volume ${volume} belongs to someone else: it was not deleted, nothing was rebuilt`);
    }
    checkAborted();

    const mounts = await serviceMountsOf(ctx.db, row.kind, row.databaseId);
    const networkNames = await networkDockerNames(ctx, row.organizationId, row.networkIds);
    const spec = buildDatabaseSpec(row, opened, ctx.config.defaultDatabaseImages, mounts, networkNames);
    log(`Deploying the ${row.kind} service ${spec.name} with ${spec.image}…`);
    await deployServiceSpec(ctx, run, serverId, { spec, waitSeconds: DEPLOY_WAIT_SECONDS, owner }, log);
    return { imageName: spec.image };
  });
}

/** The deployment worker's view of a database service (deployments/targets.ts). */
export async function loadDatabaseTarget(
  ctx: ServiceContext,
  databaseId: string,
): Promise<DeploymentTarget | undefined> {
  const row = await findDatabaseWithOrganization(ctx.db, databaseId);
  if (!row) return undefined;
  return {
    kind: "database",
    serviceId: row.databaseId,
    name: row.name,
    organizationId: row.organizationId,
    status: row.applicationStatus,
    eventService: { databaseId: row.databaseId, type: row.kind },
    run: runDatabaseDeployment,
    // Each step (remove for a rebuild, create or update the service) is idempotent: a deployment
    // a stopped control plane left running runs again and settles from what Docker then does.
    recovery: "runAgain",
    setStatus: async (db, status: ApplicationStatus) => {
      await db
        .updateTable("databaseServices")
        .set({ applicationStatus: status, applicationStatusMessage: null })
        .where("databaseId", "=", databaseId)
        .execute();
    },
  };
}

/** start (scale to its replicas) or stop (scale to 0); a service never deployed is a 400. */
export async function scaleDatabaseService(
  ctx: ServiceContext,
  row: OwnedDatabase,
  action: "START" | "STOP",
  idKey: string,
): Promise<void> {
  const serverId = await serverFor(ctx, row);
  const { found } = await callAgent(
    serverId,
    () =>
      ctx.agents.client.serviceAction(serverId, row.appName, action, {
        replicas: row.replicas,
        timeoutMs: SERVICE_ACTION_TIMEOUT_MS,
        owner: databaseOwner(row.organizationId, row.databaseId),
      }),
    ctx.logger,
  );
  if (!found) {
    throw badRequest("The database has no service yet: deploy it first", { fields: [idKey] });
  }
}

/**
 * Removes the service and its data volume. A server whose agent cannot be reached does not
 * block the removal (the leftover is logged), as for applications.
 */
export async function removeDatabaseService(ctx: ServiceContext, row: OwnedDatabase): Promise<void> {
  const serverId = row.serverId ?? LOCAL_SERVER_ID;
  const result = await removeServiceOf(ctx, serverId, row.appName, "database", () =>
    ctx.agents.client.serviceAction(serverId, row.appName, "REMOVE", removeOptions(row, true)),
  );
  if ((result?.volumesKept ?? []).length > 0) {
    ctx.logger.warn(
      { databaseId: row.databaseId, volumes: result?.volumesKept },
      "a volume named after the database belongs to someone else: left in place",
    );
  }
}

/** Stops the service's deployments, then removes its service and data volume. */
export async function teardownDatabase(
  ctx: ServiceContext,
  row: OwnedDatabase,
  reason: string,
): Promise<void> {
  await teardownTarget(ctx, row.databaseId, reason, () => removeDatabaseService(ctx, row));
}
