/**
 * project.onboardingStatus / completeOnboarding (issue 41): when a member dismissed the getting
 * started steps in an organization.
 */
import type { Kysely } from "kysely";

// biome-ignore lint/suspicious/noExplicitAny: migrations are frozen in time and never import application types
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable("members").addColumn("onboarding_completed_at", "timestamptz").execute();
}

// biome-ignore lint/suspicious/noExplicitAny: see up()
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable("members").dropColumn("onboarding_completed_at").execute();
}
