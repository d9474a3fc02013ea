/**
 * Getting started (project.onboardingStatus, project.completeOnboarding): the steps a new member
 * has taken in the organization, read from what they see, and whether they dismissed the steps.
 * Dokploy's answer was not in the sources we could read; this shape is ours (docs/decisions.md).
 */
import { z } from "zod";
import type { Caller } from "../context.ts";
import type { Db } from "../db/database.ts";
import type { homeStatsSchema } from "./overview.ts";

export const onboardingStatusSchema = z.object({
  completed: z.boolean(),
  completedAt: z.string().nullable(),
  steps: z.object({
    createProject: z.boolean(),
    createService: z.boolean(),
    deployService: z.boolean(),
  }),
});

export async function onboardingStatusOf(
  db: Db,
  caller: Caller,
  stats: z.infer<typeof homeStatsSchema>,
): Promise<z.infer<typeof onboardingStatusSchema>> {
  const member = await db
    .selectFrom("members")
    .select("onboardingCompletedAt")
    .where("organizationId", "=", caller.organizationId)
    .where("userId", "=", caller.userId)
    .executeTakeFirst();
  const completedAt = member?.onboardingCompletedAt
    ? new Date(member.onboardingCompletedAt).toISOString()
    : null;
  return {
    completed: completedAt !== null,
    completedAt,
    steps: {
      createProject: stats.projects > 0,
      createService: stats.services > 0,
      deployService: stats.status.running > 0,
    },
  };
}

/** Records that the caller dismissed the steps; the first time only. */
export async function completeOnboarding(db: Db, caller: Caller): Promise<void> {
  await db
    .updateTable("members")
    .set({ onboardingCompletedAt: new Date().toISOString() })
    .where("organizationId", "=", caller.organizationId)
    .where("userId", "=", caller.userId)
    .where("onboardingCompletedAt", "is", null)
    .execute();
}
