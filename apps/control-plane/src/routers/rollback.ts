/**
 * rollback (Dokploy's `rollback` router; the spec leaves it out, issue 27 item 2): deploy a kept
 * rollback of an application or a compose stack again, through the deployment queue with its log and without a
 * build, or delete one (its image untagged on its server). Every successful deployment records
 * one (rollbacks/rollbacks.ts); deployment.all and the compose lists show each deployment's
 * `rollbackId`. Another organization's rollback, or one of a service the caller may not see, is a 404.
 */
import { z } from "zod";
import { callAgent } from "../agents/errors.ts";
import { idSchema } from "../applications/schemas.ts";
import { startApplicationDeployment } from "../applications/start-deployment.ts";
import type { Caller, ServiceContext } from "../context.ts";
import { startTargetDeployment } from "../deployments/start.ts";
import { conflict, notFound } from "../errors.ts";
import { defineRouter, mutation } from "../procedure.ts";
import { requireCanDeleteProjects, requireServiceAccess } from "../projects/permissions.ts";
import { checkRollbackImage, findRollback, removeRollbacks } from "../rollbacks/rollbacks.ts";
import { agentServerId } from "../servers/repository.ts";

const rollbackIdInput = z.object({ rollbackId: idSchema });

const rollbackSchema = z.object({
  rollbackId: z.string(),
  /** The application rolled back; null for a compose stack's rollback. */
  applicationId: z.string().nullable(),
  /** The compose stack rolled back; null for an application's rollback. */
  composeId: z.string().nullable(),
  /** Null once the deployment's record was removed. */
  deploymentId: z.string().nullable(),
  version: z.number().int(),
  /** platform-rollback/<repository>:<tag> on the application's server; null for a stack. */
  image: z.string().nullable(),
  /** A stack's kept images, one per service; null for an application. */
  stackImages: z.array(z.object({ service: z.string(), image: z.string() })).nullable(),
  /** The copy pushed to the rollback registry (rollbackActive), if any. */
  registryImage: z.string().nullable(),
  createdAt: z.string(),
});

async function loadRollback(ctx: ServiceContext, caller: Caller, rollbackId: string) {
  const rollback = await findRollback(ctx.db, caller.organizationId, rollbackId);
  if (!rollback) throw notFound("Rollback");
  const serviceId = rollback.applicationId ?? rollback.composeId ?? "";
  await requireServiceAccess(
    ctx.db,
    caller,
    { serviceId, environmentId: rollback.environmentId, projectId: rollback.projectId },
    "Rollback",
  );
  return rollback;
}

export const rollbackRouter = defineRouter("rollback", {
  rollback: mutation({
    summary: "Deploy a kept rollback again (queued, with its log, no build); answers its deploymentId",
    access: "member",
    input: rollbackIdInput,
    output: z.object({ success: z.literal(true), deploymentId: z.string() }),
    handler: async ({ ctx, caller, input }) => {
      const rollback = await loadRollback(ctx, caller, input.rollbackId);
      const serverId = await agentServerId(ctx, rollback.organizationId, rollback.serviceServerId);
      const { problem } = await callAgent(
        serverId,
        () => checkRollbackImage(ctx, rollback, serverId),
        ctx.logger,
      );
      if (problem) throw conflict(problem, { rollbackId: rollback.rollbackId });
      const title = `Rollback to version ${rollback.version}${rollback.deploymentId ? ` (deployment ${rollback.deploymentId})` : ""}`;
      const { deploymentId } = rollback.applicationId
        ? await startApplicationDeployment(ctx, {
            applicationId: rollback.applicationId,
            kind: "rollback",
            title,
            restoresRollbackId: rollback.rollbackId,
          })
        : await startTargetDeployment(ctx, {
            target: { kind: "compose", id: rollback.composeId ?? "" },
            organizationId: rollback.organizationId,
            serverId: rollback.serviceServerId,
            kind: "rollback",
            title,
            restoresRollbackId: rollback.rollbackId,
          });
      return { success: true as const, deploymentId };
    },
  }),

  delete: mutation({
    summary: "Delete a rollback: its image is untagged on its server",
    access: "member",
    input: rollbackIdInput,
    output: rollbackSchema,
    handler: async ({ ctx, caller, input }) => {
      const rollback = await loadRollback(ctx, caller, input.rollbackId);
      requireCanDeleteProjects(caller, "services");
      await callAgent(rollback.serverId ?? "local", () => removeRollbacks(ctx, [rollback], true), ctx.logger);
      return {
        rollbackId: rollback.rollbackId,
        applicationId: rollback.applicationId,
        composeId: rollback.composeId,
        deploymentId: rollback.deploymentId,
        version: rollback.version,
        image: rollback.image,
        stackImages: rollback.stackImages?.map(({ service, image }) => ({ service, image })) ?? null,
        registryImage: rollback.registryImage,
        createdAt: rollback.createdAt,
      };
    },
  }),
});
