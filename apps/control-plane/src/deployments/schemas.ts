/** A deployment as the API answers it (deployment.*, previewDeployment.*, schedule.*). */
import { z } from "zod";

const deploymentStatuses = ["idle", "running", "done", "error"] as const;

export const deploymentSchema = z.object({
  deploymentId: z.string(),
  /** Null for a deployment of a database service. */
  applicationId: z.string().nullable(),
  title: z.string(),
  description: z.string().nullable(),
  status: z.enum(deploymentStatuses),
  logPath: z.string(),
  logs: z.string(),
  errorMessage: z.string().nullable(),
  commitHash: z.string().nullable(),
  commitMessage: z.string().nullable(),
  imageName: z.string().nullable(),
  serverId: z.string().nullable(),
  /** The build server whose agent built the image; null: built where it runs (or not built). */
  buildServerId: z.string().nullable(),
  createdAt: z.string(),
  startedAt: z.string().nullable(),
  completedAt: z.string().nullable(),
  /** The rollback this deployment recorded (or, a rollback run, deployed): rollback.rollback. */
  rollbackId: z.string().nullable(),
});
