/**
 * Rollbacks of applications (issue 27 item 2, Dokploy's `rollback` router). Every successful
 * deployment of an application (whatever `rollbackActive` says) keeps what it ran: its image,
 * tagged by image ID as platform-rollback/<repository>:<deploymentId> on its server (exempt from
 * image cleanups), and the Swarm service spec it deployed, sealed. With `rollbackActive` and a
 * `rollbackRegistryId`, the image is also pushed to that registry. `rollback.rollback` deploys a
 * kept spec and image again through the deployment queue, with its log and no build; a rollback
 * whose image is gone says so before it is queued, and again before the run deploys anything.
 * Each application keeps its newest ROLLBACKS_KEPT_PER_APPLICATION rollbacks: older ones are
 * deleted and their images untagged through the agent.
 */
import {
  AgentCommandError,
  applicationOwner,
  type RegistryAuth,
  ROLLBACK_IMAGE_REPOSITORY_PREFIX,
  type ServiceSpec,
} from "@platform/agent-protocol";
import { LOCAL_SERVER_ID } from "../agents/hub.ts";
import type { ServiceContext } from "../context.ts";
import { newId } from "../crypto/ids.ts";
import type { SecretContext } from "../crypto/secret-box.ts";
import type { Db } from "../db/database.ts";
import type { Rollback } from "../db/schema.ts";
import { deployServiceSpec, fail, runDeploymentSteps } from "../deployments/deploy-service.ts";
import { type DeploymentOutcome, type DeploymentRun, imageRepositoryOf } from "../deployments/pipeline.ts";
import { findRegistryCredentials } from "../registries/repository.ts";
import { agentServerId } from "../servers/repository.ts";

/** Rollbacks each application keeps (its newest ones); docs/decisions.md. */
export const ROLLBACKS_KEPT_PER_APPLICATION = 5;

const AGENT_TIMEOUT_MS = 60_000;
const PUSH_TIMEOUT_MS = 30 * 60_000;

/** `platform-rollback/<repository>:<deploymentId>` (a tag may not start with `-` or `.`). */
export function rollbackImageFor(appName: string, deploymentId: string): string {
  const tag = /^\w/.test(deploymentId) ? deploymentId : `d${deploymentId}`;
  return `${ROLLBACK_IMAGE_REPOSITORY_PREFIX}${imageRepositoryOf(appName)}:${tag}`;
}

const specContext = (rollbackId: string, organizationId: string): SecretContext => ({
  table: "rollbacks",
  rowId: rollbackId,
  organizationId,
});

/** What recordRollback needs of the deployment that just succeeded. */
export interface SucceededDeployment {
  deploymentId: string;
  application: {
    applicationId: string;
    organizationId: string;
    appName: string;
    rollbackActive: boolean;
    rollbackRegistryId: string | null;
  };
  serverId: string;
  /** The image the service runs, as it is named on the server (a local tag or a pulled reference). */
  localImage: string;
  /**
   * The build registry's copy of an image built on a build server (deployments/build-server.ts):
   * kept as the rollback's registry copy when no rollback registry got one, so a rollback can
   * still pull it once the server's own copy is gone.
   */
  pushed?: { registryId: string; image: string };
  /** The spec deployed. */
  spec: ServiceSpec;
  log(line: string): void;
  /** Secrets the run masks: the registry's password is added. */
  secrets: string[];
}

/**
 * Keeps the deployment's image and spec as a rollback and applies the retention. A failure is
 * logged and the deployment stays successful: its service runs; only the way back is missing.
 */
export async function recordRollback(
  services: ServiceContext,
  deployment: SucceededDeployment,
): Promise<void> {
  const { application, serverId, log } = deployment;
  const image = rollbackImageFor(application.appName, deployment.deploymentId);
  let registry: { registryId: string; auth: RegistryAuth; imagePrefix?: string } | undefined;
  try {
    if (application.rollbackActive && application.rollbackRegistryId) {
      const credentials = await findRegistryCredentials(
        services,
        application.organizationId,
        application.rollbackRegistryId,
      );
      if (!credentials) throw new Error("the rollback registry no longer exists");
      deployment.secrets.push(credentials.password);
      registry = {
        registryId: application.rollbackRegistryId,
        auth: {
          serverAddress: credentials.registryUrl,
          username: credentials.username,
          password: credentials.password,
        },
        imagePrefix: credentials.imagePrefix ?? undefined,
      };
      log(`Keeping the image for rollbacks and pushing it to ${credentials.registryUrl}…`);
    }
    const kept = await services.agents.client.keepRollbackImage(
      serverId,
      {
        sourceImage: deployment.localImage,
        image,
        registry: registry?.auth,
        imagePrefix: registry?.imagePrefix,
      },
      registry ? PUSH_TIMEOUT_MS : AGENT_TIMEOUT_MS,
    );
    const rollbackId = newId();
    const spec: ServiceSpec = { ...deployment.spec, image };
    await services.db.transaction().execute(async (trx) => {
      await trx
        .insertInto("rollbacks")
        .values({
          rollbackId,
          applicationId: application.applicationId,
          deploymentId: deployment.deploymentId,
          serverId,
          image,
          imageId: kept.imageId,
          registryId: kept.pushedImage
            ? (registry?.registryId ?? null)
            : (deployment.pushed?.registryId ?? null),
          registryImage: kept.pushedImage || deployment.pushed?.image || null,
          specSealed: services.secrets.encrypt(
            JSON.stringify(spec),
            specContext(rollbackId, application.organizationId),
          ),
        })
        .execute();
      await trx
        .updateTable("deployments")
        .set({ rollbackId })
        .where("deploymentId", "=", deployment.deploymentId)
        .execute();
    });
    log(
      `Kept ${image} for rollbacks (rollback ${rollbackId})${kept.pushedImage ? `, pushed as ${kept.pushedImage}` : ""}`,
    );
  } catch (error) {
    const reason =
      error instanceof AgentCommandError
        ? error.agentMessage
        : error instanceof Error
          ? error.message
          : String(error);
    log(`No rollback kept for this deployment: ${reason}`);
    services.logger.warn({ err: error, deploymentId: deployment.deploymentId }, "rollback not kept");
    return;
  }
  await applyRetention(services, application.applicationId, log);
}

/** Deletes the application's rollbacks beyond the newest ROLLBACKS_KEPT_PER_APPLICATION. */
export async function applyRetention(
  services: ServiceContext,
  applicationId: string,
  log?: (line: string) => void,
): Promise<void> {
  const newest = services.db
    .selectFrom("rollbacks")
    .select("rollbackId")
    .where("applicationId", "=", applicationId)
    .orderBy("createdAt", "desc")
    .orderBy("version", "desc")
    .limit(ROLLBACKS_KEPT_PER_APPLICATION);
  const old = await services.db
    .selectFrom("rollbacks")
    .selectAll()
    .where("applicationId", "=", applicationId)
    .where("rollbackId", "not in", newest)
    .execute();
  if (old.length === 0) return;
  await removeRollbacks(services, old);
  log?.(
    `Removed ${old.length} older rollback(s): each application keeps its newest ${ROLLBACKS_KEPT_PER_APPLICATION}`,
  );
}

/**
 * Untags the rollbacks' images through their servers' agents, then deletes the rows whose
 * images are gone. A server whose agent does not answer keeps its rows (and images) for the
 * next try; the failure is logged and, with `strict`, thrown.
 */
export async function removeRollbacks(
  services: ServiceContext,
  rollbacks: readonly Pick<Rollback, "rollbackId" | "serverId" | "image">[],
  strict = false,
): Promise<void> {
  const byServer = new Map<string, typeof rollbacks>();
  for (const rollback of rollbacks) {
    const serverId = rollback.serverId ?? LOCAL_SERVER_ID;
    byServer.set(serverId, [...(byServer.get(serverId) ?? []), rollback]);
  }
  for (const [serverId, rows] of byServer) {
    try {
      await services.agents.client.removeRollbackImages(
        serverId,
        rows.map((row) => row.image),
        AGENT_TIMEOUT_MS,
      );
    } catch (error) {
      services.logger.warn({ err: error, serverId }, "rollback images not removed");
      if (strict) throw error;
      continue;
    }
    await services.db
      .deleteFrom("rollbacks")
      .where(
        "rollbackId",
        "in",
        rows.map((row) => row.rollbackId),
      )
      .execute();
  }
}

/** The application's rollbacks (application.delete untags their images before the rows go). */
export function listApplicationRollbacks(db: Db, applicationId: string) {
  return db.selectFrom("rollbacks").selectAll().where("applicationId", "=", applicationId).execute();
}

/** A rollback of the organization's applications, with where its application sits. */
export function findRollback(db: Db, organizationId: string, rollbackId: string) {
  return db
    .selectFrom("rollbacks")
    .innerJoin("applications", "applications.applicationId", "rollbacks.applicationId")
    .innerJoin("environments", "environments.environmentId", "applications.environmentId")
    .innerJoin("projects", "projects.projectId", "environments.projectId")
    .selectAll("rollbacks")
    .select([
      "applications.appName",
      "applications.serverId as applicationServerId",
      "projects.organizationId",
    ])
    .where("rollbacks.rollbackId", "=", rollbackId)
    .where("projects.organizationId", "=", organizationId)
    .executeTakeFirst();
}

/**
 * Whether the rollback's image is on `serverId` (the application's server now), and the reason it
 * cannot be deployed from there when neither that copy nor a registry's is left.
 */
export async function checkRollbackImage(
  services: ServiceContext,
  rollback: Pick<Rollback, "image" | "serverId" | "registryImage">,
  serverId: string,
): Promise<{ onServer: boolean; problem?: string }> {
  const keptHere = (rollback.serverId ?? LOCAL_SERVER_ID) === serverId;
  const onServer = keptHere
    ? (await services.agents.client.rollbackImageStatus(serverId, rollback.image, AGENT_TIMEOUT_MS)).exists
    : false;
  if (onServer || rollback.registryImage) return { onServer };
  return {
    onServer,
    problem: keptHere
      ? `The image of this rollback (${rollback.image}) is gone from its server: it cannot be rolled back to`
      : `The image of this rollback (${rollback.image}) is kept on another server than the application's: it cannot be rolled back to`,
  };
}

/** Runs a rollback deployment (kind rollback): the kept spec and image, deployed again without a build. */
export async function runRollbackDeployment(
  services: ServiceContext,
  run: DeploymentRun,
): Promise<DeploymentOutcome> {
  return runDeploymentSteps(services, run, async ({ log, secrets, setServer, setStage, checkAborted }) => {
    checkAborted();
    const row = await services.db
      .selectFrom("deployments")
      .innerJoin("applications", "applications.applicationId", "deployments.applicationId")
      .innerJoin("environments", "environments.environmentId", "applications.environmentId")
      .innerJoin("projects", "projects.projectId", "environments.projectId")
      .leftJoin("rollbacks", "rollbacks.rollbackId", "deployments.restoresRollbackId")
      .select([
        "applications.applicationId",
        "applications.serverId as applicationServerId",
        "projects.organizationId",
        "rollbacks.rollbackId",
        "rollbacks.deploymentId as rolledBackDeploymentId",
        "rollbacks.serverId",
        "rollbacks.image",
        "rollbacks.registryId",
        "rollbacks.registryImage",
        "rollbacks.specSealed",
      ])
      .where("deployments.deploymentId", "=", run.deploymentId)
      .executeTakeFirst();
    if (!row) return fail("The application no longer exists");
    if (!row.rollbackId || !row.image || !row.specSealed) return fail("The rollback no longer exists");
    const serverId = await agentServerId(services, row.organizationId, row.applicationServerId);
    setServer(serverId);
    setStage("check the rollback's image");
    const rollback = { image: row.image, serverId: row.serverId, registryImage: row.registryImage };
    const { onServer, problem } = await checkRollbackImage(services, rollback, serverId);
    if (problem) fail(problem);
    const spec = JSON.parse(
      services.secrets.decrypt(row.specSealed, specContext(row.rollbackId, row.organizationId)),
    ) as ServiceSpec;
    let registryAuth: RegistryAuth | undefined;
    if (!onServer && row.registryImage) {
      // Only the registry's copy is left: Swarm pulls it with the registry's credentials.
      spec.image = row.registryImage;
      const credentials = row.registryId
        ? await findRegistryCredentials(services, row.organizationId, row.registryId)
        : undefined;
      if (credentials) {
        secrets.push(credentials.password);
        registryAuth = {
          serverAddress: credentials.registryUrl,
          username: credentials.username,
          password: credentials.password,
        };
      }
    }
    log(
      `Rolling back to ${row.rolledBackDeploymentId ? `deployment ${row.rolledBackDeploymentId}` : `rollback ${row.rollbackId}`} with ${spec.image} (no build)`,
    );
    checkAborted();
    setStage("deploy");
    run.slot?.giveBack();
    await deployServiceSpec(
      services,
      { ...run, slot: undefined },
      serverId,
      { spec, registryAuth, owner: applicationOwner(row.organizationId, row.applicationId) },
      log,
    );
    // The run deployed this rollback: rolling back to it again is the same rollback.
    await services.db
      .updateTable("deployments")
      .set({ rollbackId: row.rollbackId })
      .where("deploymentId", "=", run.deploymentId)
      .execute();
    log("Done");
    return { imageName: spec.image };
  });
}
