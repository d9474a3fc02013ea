/**
 * preview_deployments.expires_at goes: Dokploy declares the column but never sets or reads it
 * (no preview expires there), and nothing here set it either. previewDeployment answers keep
 * Dokploy's `expiresAt` field, always null (docs/decisions.md).
 */
import type { Kysely } from "kysely";

// biome-ignore lint/suspicious/noExplicitAny: migrations are frozen in time and never import application types
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable("preview_deployments").dropColumn("expires_at").execute();
}

// biome-ignore lint/suspicious/noExplicitAny: see up()
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable("preview_deployments").addColumn("expires_at", "timestamptz").execute();
}
