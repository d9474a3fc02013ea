/**
 * rollback (Dokploy's `rollback` router; the spec leaves it out, issue 27 item 2): deploy a kept
 * rollback of an application again, through the deployment queue with its log and without a
 * build, or delete one (its image untagged on its server). Every successful deployment records
 * one (rollbacks/rollbacks.ts); deployment.all shows each deployment's `rollbackId`. Another
 * organization's rollback, or one of an application the caller may not see, is a 404.
 */
import { z } from "zod";
import { callAgent } from "../agents/errors.ts";
import { idSchema } from "../applications/schemas.ts";
import type { Caller, ServiceContext } from "../context.ts";
import { startApplicationDeployment } from "../deployments/start.ts";
import { conflict, notFound } from "../errors.ts";
import { defineRouter, mutation } from "../procedure.ts";
import { requireApplicationAccess, requireCanDeleteProjects } from "../projects/permissions.ts";
import { checkRollbackImage, findRollback, removeRollbacks } from "../rollbacks/rollbacks.ts";
import { agentServerId } from "../servers/repository.ts";

const rollbackIdInput = z.object({ rollbackId: idSchema });

const rollbackSchema = z.object({
  rollbackId: z.string(),
  applicationId: z.string(),
  /** Null once the deployment's record was removed. */
  deploymentId: z.string().nullable(),
  version: z.number().int(),
  /** platform-rollback/<repository>:<tag> on the application's server. */
  image: z.string(),
  /** The copy pushed to the rollback registry (rollbackActive), if any. */
  registryImage: z.string().nullable(),
  createdAt: z.string(),
});

async function loadRollback(services: ServiceContext, caller: Caller, rollbackId: string) {
  const rollback = await findRollback(services.db, caller.organizationId, rollbackId);
  if (!rollback) throw notFound("Rollback");
  await requireApplicationAccess(services.db, caller, rollback.applicationId, "Rollback");
  return rollback;
}

export const rollbackRouter = defineRouter("rollback", {
  rollback: mutation({
    summary: "Deploy a kept rollback again (queued, with its log, no build); answers its deploymentId",
    access: "member",
    input: rollbackIdInput,
    output: z.object({ success: z.literal(true), deploymentId: z.string() }),
    handler: async ({ services, caller, input }) => {
      const rollback = await loadRollback(services, caller, input.rollbackId);
      const serverId = await agentServerId(services, rollback.organizationId, rollback.applicationServerId);
      const { problem } = await callAgent(
        serverId,
        () => checkRollbackImage(services, rollback, serverId),
        services.logger,
      );
      if (problem) throw conflict(problem, { rollbackId: rollback.rollbackId });
      const { deploymentId } = await startApplicationDeployment(services, {
        applicationId: rollback.applicationId,
        kind: "rollback",
        title: `Rollback to version ${rollback.version}${rollback.deploymentId ? ` (deployment ${rollback.deploymentId})` : ""}`,
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
    handler: async ({ services, caller, input }) => {
      const rollback = await loadRollback(services, caller, input.rollbackId);
      requireCanDeleteProjects(caller, "services");
      await callAgent(
        rollback.serverId ?? "local",
        () => removeRollbacks(services, [rollback], true),
        services.logger,
      );
      return {
        rollbackId: rollback.rollbackId,
        applicationId: rollback.applicationId,
        deploymentId: rollback.deploymentId,
        version: rollback.version,
        image: rollback.image,
        registryImage: rollback.registryImage,
        createdAt: rollback.createdAt,
      };
    },
  }),
});
