/**
 * The six database kinds as service kinds of environments (projects/workload-kinds.ts): their
 * summaries in project.one/all and environment.*, their copies in project.duplicate, their
 * teardown before an environment or project is removed, and their count per server.
 */
import { sql } from "kysely";
import type { SecretBox } from "../crypto/secret-box.ts";
import { type Db, isoTimestamp } from "../db/database.ts";
import { withOwner } from "../db/owned.ts";
import type { ServiceKindHooks } from "../projects/workload-kinds.ts";
import { serviceCountersByKind } from "../servers/service-count.ts";
import { teardownDatabase } from "./deploy.ts";
import { type DatabaseKind, databaseKindFacts, databaseKinds } from "./kinds.ts";
import {
  appNameTaken,
  countDatabasesByServer,
  insertDatabase,
  listDatabaseSummaries,
  listDatabasesWithOrganization,
  newDatabaseId,
} from "./repository.ts";
import { openDatabaseSecret, sealDatabaseSecret } from "./views.ts";

/** A free appName for a copy: the source's with a random suffix (spec 8's pattern holds). */
async function copyAppName(db: Db, appName: string): Promise<string> {
  for (;;) {
    const suffix = Math.random().toString(36).slice(2, 8).padEnd(6, "0");
    const candidate = `${appName.replace(/-[a-z0-9]{6}$/, "").slice(0, 56)}-${suffix}`;
    if (!(await appNameTaken(db, candidate))) return candidate;
  }
}

/**
 * Copies database services into another environment with their settings and passwords (resealed
 * for the copy), as Dokploy's duplicate does: a new id and appName, status idle, no external
 * port (it is the source's), " (copy)" in the same project. Data is not copied.
 */
async function copyDatabases(
  db: Db,
  secrets: SecretBox,
  ids: readonly string[],
  target: { targetEnvironmentId: string; sameProject: boolean },
): Promise<void> {
  for (const source of await listDatabasesWithOrganization(db, ids)) {
    const copy = { databaseId: newDatabaseId(), organizationId: source.organizationId };
    const reseal = (field: "databasePassword" | "databaseRootPassword", sealed: string) =>
      sealDatabaseSecret(secrets, field, copy, openDatabaseSecret(secrets, field, source, sealed));
    await insertDatabase(db, {
      databaseId: copy.databaseId,
      kind: source.kind,
      name: target.sameProject ? `${source.name} (copy)` : source.name,
      appName: await copyAppName(db, source.appName),
      description: source.description,
      environmentId: target.targetEnvironmentId,
      serverId: source.serverId,
      databaseName: source.databaseName,
      databaseUser: source.databaseUser,
      databasePasswordSealed: reseal("databasePassword", source.databasePasswordSealed),
      databaseRootPasswordSealed:
        source.databaseRootPasswordSealed === null
          ? null
          : reseal("databaseRootPassword", source.databaseRootPasswordSealed),
      dockerImage: source.dockerImage,
      replicaSets: source.replicaSets,
      sqldNode: source.sqldNode,
      sqldPrimaryUrl: source.sqldPrimaryUrl,
      enableNamespaces: source.enableNamespaces,
      externalPort: null,
      memoryLimit: source.memoryLimit,
      memoryReservation: source.memoryReservation,
      cpuLimit: source.cpuLimit,
      cpuReservation: source.cpuReservation,
      env: source.env,
      command: source.command,
      args: source.args === null ? null : JSON.stringify(source.args),
    });
  }
}

function hooksOf(kind: DatabaseKind): ServiceKindHooks {
  const { idKey } = databaseKindFacts[kind];
  return {
    listSummaries: async (db, environmentIds) =>
      (await listDatabaseSummaries(db, kind, environmentIds)).map(({ databaseId, ...row }) => ({
        [idKey]: databaseId,
        ...row,
      })),
    summaryTable: "database_services",
    summaryJson: (environmentId) => sql`coalesce((
      select json_agg(json_build_object(
        ${sql.lit(idKey)}, d.database_id,
        'name', d.name,
        'appName', d.app_name,
        'description', d.description,
        'serverId', d.server_id,
        'createdAt', ${isoTimestamp(sql.ref("d.created_at"))},
        'applicationStatus', d.application_status
      ) order by d.created_at asc, d.database_id asc)
      from database_services d where d.kind = ${sql.lit(kind)} and d.environment_id = ${environmentId}
    ), '[]'::json)`,
    copy: (db, ids, target) => copyDatabases(db, target.secrets, ids, target),
    teardown: async (ctx, environmentIds) => {
      const rows = await withOwner(ctx.db.selectFrom("databaseServices"), "databaseServices.environmentId")
        .selectAll("databaseServices")
        .select("projects.organizationId")
        .where("databaseServices.kind", "=", kind)
        .where("databaseServices.environmentId", "in", environmentIds)
        .execute();
      for (const row of rows)
        await teardownDatabase(ctx, row, `The ${kind} service's environment was deleted`);
    },
  };
}

export const databaseHooks = Object.fromEntries(databaseKinds.map((kind) => [kind, hooksOf(kind)])) as Record<
  DatabaseKind,
  ServiceKindHooks
>;

// One counter for the six kinds: they share a table.
serviceCountersByKind.postgres = countDatabasesByServer;
