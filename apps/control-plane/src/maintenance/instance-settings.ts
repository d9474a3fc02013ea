/**
 * Instance settings of issue 39: the deployment queue emptied (settings.cleanAllDeploymentQueue),
 * the release this control plane runs and the newest one known (settings.getReleaseTag,
 * settings.getUpdateData).
 */
import { AGENT_VERSION } from "@platform/agent-protocol";
import { z } from "zod";
import type { Caller, ServiceContext } from "../context.ts";
import { listDeployments } from "../deployments/repository.ts";
import { dropWaitingDeploymentsById } from "../deployments/stop.ts";
import { ApiError } from "../errors.ts";
import { isInstanceAdmin } from "../organizations/instance.ts";
import { guardedGetText } from "../outbound/http.ts";

const QUEUE_CLEANED = "Removed from the queue by settings.cleanAllDeploymentQueue";

/**
 * Drops the waiting deployments the caller's scope owns: every one of the instance for the
 * instance administrator (Dokploy empties its whole queue), else its organization's only.
 * Running deployments go on. Answers how many were dropped.
 */
export async function cleanDeploymentQueue(ctx: ServiceContext, caller: Caller): Promise<number> {
  const ids = (await isInstanceAdmin(ctx.db, caller))
    ? (
        await ctx.db.selectFrom("deployments").select("deploymentId").where("status", "=", "idle").execute()
      ).map((row) => row.deploymentId)
    : (await listDeployments(ctx.db, caller.organizationId))
        .filter((deployment) => deployment.status === "idle")
        .map((deployment) => deployment.deploymentId);
  return dropWaitingDeploymentsById(ctx, ids, QUEUE_CLEANED);
}

/** The tag of the release this control plane runs: PLATFORM_RELEASE_TAG, else its version. */
export function releaseTag(ctx: Pick<ServiceContext, "config">): string {
  return ctx.config.releaseTag ?? AGENT_VERSION;
}

const releaseDocumentSchema = z.object({
  version: z.string().regex(/^v?\d+\.\d+\.\d+$/, "must be a version x.y.z"),
});

/** Compares two x.y.z versions (a leading v allowed). */
export function compareVersions(a: string, b: string): number {
  const parts = (version: string) => version.replace(/^v/, "").split(".").map(Number);
  const [left, right] = [parts(a), parts(b)];
  for (let index = 0; index < 3; index++) {
    const difference = (left[index] ?? 0) - (right[index] ?? 0);
    if (difference !== 0) return Math.sign(difference);
  }
  return 0;
}

export interface UpdateData {
  updateAvailable: boolean;
  latestVersion: string | null;
}

/**
 * Whether a newer release than this one is known: read from PLATFORM_RELEASE_URL through the
 * outbound guard; none configured answers Dokploy's default (no update, no version).
 */
export async function updateData(ctx: Pick<ServiceContext, "config">): Promise<UpdateData> {
  const url = ctx.config.releaseUrl;
  if (!url) return { updateAvailable: false, latestVersion: null };
  let text: string;
  try {
    text = await guardedGetText(url, { allow: ctx.config.outboundAllow, maxBytes: 64 * 1024 });
  } catch (error) {
    throw new ApiError(
      "SERVICE_UNAVAILABLE",
      `The release document could not be read: ${(error as Error).message}`,
    );
  }
  let parsed: z.infer<typeof releaseDocumentSchema>;
  try {
    parsed = releaseDocumentSchema.parse(JSON.parse(text));
  } catch {
    throw new ApiError("SERVICE_UNAVAILABLE", `The release document at ${url} is not {"version": "x.y.z"}`);
  }
  const latestVersion = parsed.version.replace(/^v/, "");
  return { updateAvailable: compareVersions(latestVersion, AGENT_VERSION) > 0, latestVersion };
}
