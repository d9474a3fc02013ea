/**
 * A manual run (backup.manualBackup*, backup.verifyRestore, volumeBackups.runManually) answers
 * once its deployment settled, with its outcome; the run itself is a row of the durable queue.
 */
import { z } from "zod";
import type { ServiceContext } from "../context.ts";
import { notFound } from "../errors.ts";

export const manualAnswer = z.object({
  success: z.boolean(),
  deploymentId: z.string(),
  status: z.enum(["done", "error"]),
  backupFile: z.string().nullable(),
  sizeBytes: z.number().nullable(),
  verification: z.string().nullable(),
  errorMessage: z.string().nullable(),
});

/** How often a manual run's row is read while the caller waits for it. */
const WAIT_POLL_MS = 250;

export async function waitForRun(
  ctx: ServiceContext,
  deploymentId: string,
): Promise<z.infer<typeof manualAnswer>> {
  for (;;) {
    const row = await ctx.db
      .selectFrom("deployments")
      .leftJoin("backupRuns", "backupRuns.deploymentId", "deployments.deploymentId")
      .select(["status", "backupFile", "backupSizeBytes", "backupCheck", "errorMessage"])
      .where("deployments.deploymentId", "=", deploymentId)
      .executeTakeFirst();
    if (!row) throw notFound("Deployment");
    if (row.status === "done" || row.status === "error") {
      return {
        success: row.status === "done",
        deploymentId,
        status: row.status,
        backupFile: row.backupFile,
        sizeBytes: row.backupSizeBytes === null ? null : Number(row.backupSizeBytes),
        verification: row.backupCheck,
        errorMessage: row.errorMessage,
      };
    }
    await new Promise((resolve) => setTimeout(resolve, WAIT_POLL_MS));
  }
}
