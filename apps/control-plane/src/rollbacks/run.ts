/**
 * Rollback deployments (kind rollback): an application's kept spec and image, or a stack's kept
 * file and images, deployed again through the deployment queue without a clone or a build. What
 * is kept, and how, is rollbacks.ts.
 */
import type { RegistryAuth } from "@platform/agent-protocol";
import { applicationOwner, composeOwner } from "@platform/ownership";
import { deployStackThroughAgent, describeStack } from "../compose/deploy.ts";
import type { ServiceContext } from "../context.ts";
import { withOwner } from "../db/owned.ts";
import { deployServiceSpec, fail, runDeploymentSteps } from "../deployments/deploy-service.ts";
import type { DeploymentOutcome, DeploymentRun } from "../deployments/pipeline.ts";
import type { ServiceSpecToSend } from "../deployments/service-spec.ts";
import { findRegistryCredentials } from "../registries/repository.ts";
import { agentServerId } from "../servers/repository.ts";
import { type ComposeSnapshot, checkRollbackImage, specContext } from "./rollbacks.ts";

/** What a rollback run reads of its rollback: its ids and its sealed content. */
interface RollbackRunRow {
  rollbackId: string;
  rolledBackDeploymentId: string | null;
  organizationId: string;
  specSealed: string;
}

/** The rollback's sealed spec or snapshot, opened. */
function unsealRollback<T>(ctx: ServiceContext, row: RollbackRunRow): T {
  return JSON.parse(
    ctx.secrets.decrypt(row.specSealed, specContext(row.rollbackId, row.organizationId)),
  ) as T;
}

/** The run's first line: what it rolls back to, with which images. */
function rollingBackTo(row: RollbackRunRow, images: string): string {
  return `Rolling back to ${row.rolledBackDeploymentId ? `deployment ${row.rolledBackDeploymentId}` : `rollback ${row.rollbackId}`} with ${images} (no build)`;
}

/** The run deployed this rollback: rolling back to it again is the same rollback. */
async function markRolledBack(
  ctx: ServiceContext,
  run: DeploymentRun,
  row: RollbackRunRow,
  log: (line: string) => void,
): Promise<void> {
  await ctx.db
    .updateTable("deployments")
    .set({ rollbackId: row.rollbackId })
    .where("deploymentId", "=", run.deploymentId)
    .execute();
  log("Done");
}

/** Runs a rollback deployment (kind rollback): the kept spec and image, deployed again without a build. */
export async function runRollbackDeployment(
  ctx: ServiceContext,
  run: DeploymentRun,
): Promise<DeploymentOutcome> {
  return runDeploymentSteps(ctx, run, async ({ log, secrets, setServer, setStage, checkAborted }) => {
    checkAborted();
    const row = await withOwner(
      ctx.db
        .selectFrom("deployments")
        .innerJoin("applications", "applications.applicationId", "deployments.applicationId"),
      "applications.environmentId",
    )
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
    const serverId = await agentServerId(ctx, row.organizationId, row.applicationServerId);
    setServer(serverId);
    setStage("check the rollback's image");
    const rollback = {
      image: row.image,
      stackImages: null,
      serverId: row.serverId,
      registryImage: row.registryImage,
    };
    const { onServer, problem } = await checkRollbackImage(ctx, rollback, serverId);
    if (problem) fail(problem);
    const kept = { ...row, rollbackId: row.rollbackId, specSealed: row.specSealed };
    const spec = unsealRollback<ServiceSpecToSend>(ctx, kept);
    let registryAuth: RegistryAuth | undefined;
    if (!onServer && row.registryImage) {
      // Only the registry's copy is left: Swarm pulls it with the registry's credentials.
      spec.image = row.registryImage;
      const credentials = row.registryId
        ? await findRegistryCredentials(ctx, row.organizationId, row.registryId)
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
    log(rollingBackTo(kept, spec.image));
    checkAborted();
    setStage("deploy");
    run.slot?.giveBack();
    await deployServiceSpec(
      ctx,
      { ...run, slot: undefined },
      serverId,
      { spec, registryAuth, owner: applicationOwner(row.organizationId, row.applicationId) },
      log,
    );
    await markRolledBack(ctx, run, kept, log);
    return { imageName: spec.image };
  });
}

/**
 * Runs a stack's rollback deployment (kind rollback): the kept file, whose services run the kept
 * images, deployed again with its file mounts of then; no clone, no build. Run again from the
 * start after a control plane restart, like a stack's deploy (the deploy converges).
 */
export async function runComposeRollbackDeployment(
  ctx: ServiceContext,
  run: DeploymentRun,
): Promise<DeploymentOutcome> {
  return runDeploymentSteps(ctx, run, async ({ log, setServer, setStage, checkAborted }) => {
    checkAborted();
    const row = await withOwner(
      ctx.db.selectFrom("deployments").innerJoin("compose", "compose.composeId", "deployments.composeId"),
      "compose.environmentId",
    )
      .leftJoin("rollbacks", "rollbacks.rollbackId", "deployments.restoresRollbackId")
      .select([
        "compose.composeId",
        "compose.appName",
        "compose.composeType",
        "compose.serverId as composeServerId",
        "projects.organizationId",
        "rollbacks.rollbackId",
        "rollbacks.deploymentId as rolledBackDeploymentId",
        "rollbacks.serverId",
        "rollbacks.stackImages",
        "rollbacks.specSealed",
      ])
      .where("deployments.deploymentId", "=", run.deploymentId)
      .executeTakeFirst();
    if (!row) return fail("The compose service no longer exists");
    if (!row.rollbackId || !row.stackImages || !row.specSealed) return fail("The rollback no longer exists");
    const serverId = await agentServerId(ctx, row.organizationId, row.composeServerId);
    setServer(serverId);
    setStage("check the rollback's images");
    const { problem } = await checkRollbackImage(
      ctx,
      { image: null, stackImages: row.stackImages, serverId: row.serverId, registryImage: null },
      serverId,
    );
    if (problem) fail(problem);
    const kept = { ...row, rollbackId: row.rollbackId, specSealed: row.specSealed };
    const snapshot = unsealRollback<ComposeSnapshot>(ctx, kept);
    if (snapshot.composeType !== row.composeType) {
      fail(
        `The stack's composeType is ${row.composeType} now, the rollback's is ${snapshot.composeType}: set it back to roll back`,
      );
    }
    log(rollingBackTo(kept, row.stackImages.map((image) => image.image).join(", ")));
    checkAborted();
    setStage("deploy");
    const result = await deployStackThroughAgent(ctx, run, serverId, log, {
      appName: row.appName,
      composeType: snapshot.composeType,
      composeFile: snapshot.composeFile,
      owner: composeOwner(row.organizationId, row.composeId),
      files: snapshot.files,
    });
    log(`Stack running: ${describeStack(result.services)}`);
    await markRolledBack(ctx, run, kept, log);
    return { imageName: "" };
  });
}
