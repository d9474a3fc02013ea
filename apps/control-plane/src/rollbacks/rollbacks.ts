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
 *
 * Compose stacks the same way (one module for both): every successful deployment of a stack
 * keeps the image each of its services runs, by image ID, as
 * platform-rollback/<appName>-<service>:<deploymentId>, and the converted file it ran with those
 * images in place of the originals (no build, no pull) and its file mounts, sealed. A stack's
 * rollback deploys that file again through the deployment queue (no clone, no build); retention
 * is per stack (ROLLBACKS_KEPT_PER_APPLICATION too).
 */
import {
  AgentCommandError,
  AgentTimeoutError,
  AgentUnavailableError,
  type RegistryAuth,
  ROLLBACK_IMAGE_REPOSITORY_PREFIX,
} from "@platform/agent-protocol";
import { pinComposeImages } from "@platform/compose-config";
import { composeOwner } from "@platform/ownership";
import { type Insertable, sql } from "kysely";
import { LOCAL_SERVER_ID } from "../agents/hub.ts";
import type { ServiceContext } from "../context.ts";
import { newId } from "../crypto/ids.ts";
import type { SecretContext } from "../crypto/secret-box.ts";
import type { Db } from "../db/database.ts";
import { ownedBy } from "../db/owned.ts";
import type { Rollback, RollbackTable, StackRollbackImage } from "../db/schema.ts";
import { imageRepositoryOf } from "../deployments/image-names.ts";
import type { ServiceSpecToSend } from "../deployments/service-spec.ts";
import { findRegistryCredentials } from "../registries/repository.ts";

/** Rollbacks each application keeps (its newest ones); docs/decisions.md. */
export const ROLLBACKS_KEPT_PER_APPLICATION = 5;

/** Tagging an image is quick: an agent silent this long went away (it is asked again). */
const AGENT_TIMEOUT_MS = 20_000;
const PUSH_TIMEOUT_MS = 30 * 60_000;
/** How long a rollback's images are asked for again while their agent is away. */
const AGAIN_WHILE_AWAY_MS = 90_000;
const AGAIN_EVERY_MS = 2_000;

/**
 * Keeping a rollback's images tags (and may push) them: doing it twice is harmless, so a call
 * whose agent went away (killed or restarting mid-call: no responder, or no reply) is sent again
 * once it is back, for up to AGAIN_WHILE_AWAY_MS (issue 40 item 6b: before, the deployment ended
 * without a rollback point).
 */
async function againWhileAgentAway<T>(
  serverId: string,
  log: (line: string) => void,
  call: () => Promise<T>,
): Promise<T> {
  const deadline = Date.now() + AGAIN_WHILE_AWAY_MS;
  for (let attempt = 0; ; attempt++) {
    try {
      return await call();
    } catch (error) {
      const away = error instanceof AgentUnavailableError || error instanceof AgentTimeoutError;
      if (!away || Date.now() > deadline) throw error;
      if (attempt === 0) {
        log(
          `The agent of server ${serverId} went away while keeping the rollback images: asking again once it is back`,
        );
      }
      await new Promise((resolve) => setTimeout(resolve, AGAIN_EVERY_MS));
    }
  }
}

/** The tag of a deployment's kept images: its id (a tag may not start with `-` or `.`). */
const rollbackTag = (deploymentId: string) => (/^\w/.test(deploymentId) ? deploymentId : `d${deploymentId}`);

/** `platform-rollback/<repository>:<deploymentId>`. */
export function rollbackImageFor(appName: string, deploymentId: string): string {
  return `${ROLLBACK_IMAGE_REPOSITORY_PREFIX}${imageRepositoryOf(appName)}:${rollbackTag(deploymentId)}`;
}

export const specContext = (rollbackId: string, organizationId: string): SecretContext => ({
  table: "rollbacks",
  rowId: rollbackId,
  organizationId,
});

/** What a rollback row holds besides its ids and its sealed content. */
type KeptRollback = Omit<
  Insertable<RollbackTable>,
  "rollbackId" | "applicationId" | "composeId" | "deploymentId" | "specSealed"
>;

/**
 * Keeps a rollback of a deployment that just succeeded, an application's or a stack's: `keep`
 * keeps its images through the agent and answers the row, what to seal (the spec or the
 * snapshot) and what was kept for the log; the row is stored, the deployment points at it, and
 * the holder's retention is applied. A failure is logged and the deployment stays successful:
 * its service runs; only the way back is missing.
 */
async function keepRollback(
  ctx: ServiceContext,
  deployment: {
    deploymentId: string;
    organizationId: string;
    holder: RollbackHolder;
    log(line: string): void;
  },
  keep: () => Promise<{ row: KeptRollback; sealed: unknown; kept: string; pushedAs?: string }>,
): Promise<void> {
  const { deploymentId, organizationId, holder, log } = deployment;
  try {
    const { row, sealed, kept, pushedAs } = await keep();
    const rollbackId = newId();
    await ctx.db.transaction().execute(async (trx) => {
      await trx
        .insertInto("rollbacks")
        .values({
          ...row,
          ...holder,
          rollbackId,
          deploymentId,
          specSealed: ctx.secrets.encrypt(JSON.stringify(sealed), specContext(rollbackId, organizationId)),
        })
        .execute();
      await trx
        .updateTable("deployments")
        .set({ rollbackId })
        .where("deploymentId", "=", deploymentId)
        .execute();
    });
    log(`Kept ${kept} for rollbacks (rollback ${rollbackId})${pushedAs ? `, pushed as ${pushedAs}` : ""}`);
  } catch (error) {
    const reason =
      error instanceof AgentCommandError
        ? error.agentMessage
        : error instanceof Error
          ? error.message
          : String(error);
    log(`No rollback kept for this deployment: ${reason}`);
    ctx.logger.warn({ err: error, deploymentId }, "rollback not kept");
    return;
  }
  await applyRetention(ctx, holder, log);
}

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
   * The build registry's copy of an image built on a build server (applications/build-server.ts):
   * kept as the rollback's registry copy when no rollback registry got one, so a rollback can
   * still pull it once the server's own copy is gone.
   */
  pushed?: { registryId: string; image: string };
  /** The spec deployed. */
  spec: ServiceSpecToSend;
  log(line: string): void;
  /** Secrets the run masks: the registry's password is added. */
  secrets: string[];
}

/**
 * Keeps the deployment's image and spec as a rollback and applies the retention. A failure is
 * logged and the deployment stays successful: its service runs; only the way back is missing.
 */
export async function recordRollback(ctx: ServiceContext, deployment: SucceededDeployment): Promise<void> {
  const { application, serverId, log } = deployment;
  const image = rollbackImageFor(application.appName, deployment.deploymentId);
  const holder = { applicationId: application.applicationId };
  await keepRollback(ctx, { ...deployment, organizationId: application.organizationId, holder }, async () => {
    let registry: { registryId: string; auth: RegistryAuth; imagePrefix?: string } | undefined;
    if (application.rollbackActive && application.rollbackRegistryId) {
      const credentials = await findRegistryCredentials(
        ctx,
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
    const kept = await againWhileAgentAway(serverId, log, () =>
      ctx.agents.client.keepRollbackImage(
        serverId,
        {
          sourceImage: deployment.localImage,
          image,
          registry: registry?.auth,
          imagePrefix: registry?.imagePrefix,
        },
        registry ? PUSH_TIMEOUT_MS : AGENT_TIMEOUT_MS,
      ),
    );
    const spec: ServiceSpecToSend = { ...deployment.spec, image };
    return {
      row: {
        serverId,
        image,
        imageId: kept.imageId,
        registryId: kept.pushedImage
          ? (registry?.registryId ?? null)
          : (deployment.pushed?.registryId ?? null),
        registryImage: kept.pushedImage || deployment.pushed?.image || null,
      },
      sealed: spec,
      kept: image,
      pushedAs: kept.pushedImage || undefined,
    };
  });
}

/** Whose rollbacks: an application's or a compose stack's. */
export type RollbackHolder = { applicationId: string } | { composeId: string };

const holderColumn = (holder: RollbackHolder) =>
  "applicationId" in holder
    ? (["applicationId", holder.applicationId] as const)
    : (["composeId", holder.composeId] as const);

/** Deletes the holder's rollbacks beyond its newest ROLLBACKS_KEPT_PER_APPLICATION. */
export async function applyRetention(
  ctx: ServiceContext,
  holder: RollbackHolder | string,
  log?: (line: string) => void,
): Promise<void> {
  const [column, id] = holderColumn(typeof holder === "string" ? { applicationId: holder } : holder);
  const newest = ctx.db
    .selectFrom("rollbacks")
    .select("rollbackId")
    .where(column, "=", id)
    .orderBy("createdAt", "desc")
    .orderBy("version", "desc")
    .limit(ROLLBACKS_KEPT_PER_APPLICATION);
  const old = await ctx.db
    .selectFrom("rollbacks")
    .selectAll()
    .where(column, "=", id)
    .where("rollbackId", "not in", newest)
    .execute();
  if (old.length === 0) return;
  await removeRollbacks(ctx, old);
  log?.(
    `Removed ${old.length} older rollback(s): each ${column === "composeId" ? "compose stack" : "application"} keeps its newest ${ROLLBACKS_KEPT_PER_APPLICATION}`,
  );
}

/** The images a rollback keeps on its server: an application's one, a stack's one per service. */
export function imagesOfRollback(rollback: Pick<Rollback, "image" | "stackImages">): string[] {
  return rollback.image ? [rollback.image] : (rollback.stackImages ?? []).map((kept) => kept.image);
}

/**
 * Untags the rollbacks' images through their servers' agents, then deletes the rows whose
 * images are gone. A server whose agent does not answer keeps its rows (and images) for the
 * next try; the failure is logged and, with `strict`, thrown.
 */
export async function removeRollbacks(
  ctx: ServiceContext,
  rollbacks: readonly Pick<Rollback, "rollbackId" | "serverId" | "image" | "stackImages">[],
  strict = false,
): Promise<void> {
  const byServer = new Map<string, typeof rollbacks>();
  for (const rollback of rollbacks) {
    const serverId = rollback.serverId ?? LOCAL_SERVER_ID;
    byServer.set(serverId, [...(byServer.get(serverId) ?? []), rollback]);
  }
  for (const [serverId, rows] of byServer) {
    try {
      await ctx.agents.client.removeRollbackImages(
        serverId,
        rows.flatMap(imagesOfRollback),
        AGENT_TIMEOUT_MS,
      );
    } catch (error) {
      ctx.logger.warn({ err: error, serverId }, "rollback images not removed");
      if (strict) throw error;
      continue;
    }
    await ctx.db
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

/** The stack's rollbacks (compose.delete untags their images before the rows go). */
export function listComposeRollbacks(db: Db, composeId: string) {
  return db.selectFrom("rollbacks").selectAll().where("composeId", "=", composeId).execute();
}

/**
 * A rollback of the organization's applications or compose stacks, with where its service sits
 * (`serviceServerId`: the service's server now).
 */
export function findRollback(db: Db, organizationId: string, rollbackId: string) {
  // A rollback has exactly one service (rollbacks_one_service_check): the environment is its.
  return ownedBy(
    db
      .selectFrom("rollbacks")
      .leftJoin("applications", "applications.applicationId", "rollbacks.applicationId")
      .leftJoin("compose", "compose.composeId", "rollbacks.composeId"),
    sql<string>`coalesce(applications.environment_id, compose.environment_id)`,
    organizationId,
  )
    .selectAll("rollbacks")
    .select((eb) => [
      eb.fn.coalesce("applications.appName", "compose.appName").as("appName"),
      eb.fn.coalesce("applications.serverId", "compose.serverId").as("serviceServerId"),
      "environments.environmentId",
      "projects.projectId",
      "projects.organizationId",
    ])
    .where("rollbacks.rollbackId", "=", rollbackId)
    .executeTakeFirst();
}

/**
 * Whether the rollback's images are on `serverId` (its service's server now), and the reason it
 * cannot be deployed from there when neither that copy nor a registry's is left.
 */
export async function checkRollbackImage(
  ctx: ServiceContext,
  rollback: Pick<Rollback, "image" | "stackImages" | "serverId" | "registryImage">,
  serverId: string,
): Promise<{ onServer: boolean; problem?: string }> {
  const images = imagesOfRollback(rollback);
  const keptHere = (rollback.serverId ?? LOCAL_SERVER_ID) === serverId;
  const missing: string[] = [];
  if (keptHere) {
    for (const image of images) {
      const status = await ctx.agents.client.rollbackImageStatus(serverId, image, AGENT_TIMEOUT_MS);
      if (!status.exists) missing.push(image);
    }
  }
  const onServer = keptHere && missing.length === 0;
  if (onServer || rollback.registryImage) return { onServer };
  const what =
    images.length === 1
      ? `The image of this rollback (${images[0]})`
      : `The images of this rollback (${missing.join(", ")})`;
  return {
    onServer,
    problem: keptHere
      ? `${what} ${missing.length === 1 ? "is" : "are"} gone from its server: it cannot be rolled back to`
      : `${images.length === 1 ? "The image" : "The images"} of this rollback (${images.join(", ")}) ${images.length === 1 ? "is" : "are"} kept on another server than the service's: it cannot be rolled back to`,
  };
}

/** What a stack's rollback deploys again: the converted file with the kept images, and its files. */
export interface ComposeSnapshot {
  composeType: "stack" | "docker-compose";
  composeFile: string;
  files: { filePath: string; content: string }[];
}

/** What recordComposeRollback needs of the stack's deployment that just succeeded. */
export interface SucceededComposeDeployment {
  deploymentId: string;
  compose: {
    composeId: string;
    organizationId: string;
    appName: string;
    composeType: "stack" | "docker-compose";
  };
  serverId: string;
  /** The converted file it deployed (ConvertedCompose.document). */
  document: Record<string, unknown>;
  files: { filePath: string; content: string }[];
  log(line: string): void;
}

/**
 * Keeps the images the stack's services run and the file they ran with as a rollback, then
 * applies the stack's retention. A failure is logged and the deployment stays successful.
 */
export async function recordComposeRollback(
  ctx: ServiceContext,
  deployment: SucceededComposeDeployment,
): Promise<void> {
  const { compose, serverId } = deployment;
  const holder = { composeId: compose.composeId };
  await keepRollback(ctx, { ...deployment, organizationId: compose.organizationId, holder }, async () => {
    const kept = await againWhileAgentAway(serverId, deployment.log, () =>
      ctx.agents.client.keepStackRollbackImages(
        serverId,
        {
          appName: compose.appName,
          composeType: compose.composeType,
          owner: composeOwner(compose.organizationId, compose.composeId),
          tag: rollbackTag(deployment.deploymentId),
        },
        AGENT_TIMEOUT_MS,
      ),
    );
    const snapshot: ComposeSnapshot = {
      composeType: compose.composeType,
      composeFile: pinComposeImages(
        deployment.document,
        Object.fromEntries(kept.images.map((image) => [image.service, image.image])),
      ),
      files: deployment.files,
    };
    const stackImages: StackRollbackImage[] = kept.images.map(({ service, image, imageId }) => ({
      service,
      image,
      imageId,
    }));
    return {
      row: {
        serverId,
        image: null,
        imageId: null,
        stackImages: JSON.stringify(stackImages),
        registryId: null,
        registryImage: null,
      },
      sealed: snapshot,
      kept: stackImages.map((kept) => `${kept.service}: ${kept.image}`).join(", "),
    };
  });
}
