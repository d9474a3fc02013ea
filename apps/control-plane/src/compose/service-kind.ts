/**
 * Compose stacks as a service kind of environments (projects/workload-kinds.ts): their summaries in
 * project.one/all and environment.*, their copies in project.duplicate, their teardown before an
 * environment or project is removed (organization deletion goes through it too), and their
 * count per server (server.remove refuses a server that still carries one).
 */
import { sql } from "kysely";
import { newId } from "../crypto/ids.ts";
import { appNameTaken } from "../databases/repository.ts";
import { type Db, isoTimestamp } from "../db/database.ts";
import type { ServiceKindHooks } from "../projects/workload-kinds.ts";
import { serviceCountersByKind } from "../servers/service-count.ts";
import { teardownCompose } from "./deploy.ts";
import { insertCompose, listComposeIn, listComposeSummaries, newComposeId } from "./repository.ts";

/** A free appName for a copy: the source's with a random suffix. */
async function copyAppName(db: Db, appName: string): Promise<string> {
  for (;;) {
    const suffix = Math.random().toString(36).slice(2, 8).padEnd(6, "0");
    const candidate = `${appName.replace(/-[a-z0-9]{6}$/, "").slice(0, 56)}-${suffix}`;
    if (!(await appNameTaken(db, candidate))) return candidate;
  }
}

/**
 * Copies stacks into another environment with their file, type, variables and source, as
 * Dokploy's duplicate does: a new id and appName (so its objects never collide with the
 * source's), status idle, " (copy)" in the same project, with its file mounts. Volumes and
 * domains are not copied, nor the claim on the source's host ports (the copy's deploy fails on
 * them until its file changes).
 */
async function copyCompose(
  db: Db,
  ids: readonly string[],
  target: { targetEnvironmentId: string; sameProject: boolean },
): Promise<void> {
  const sources = await db.selectFrom("compose").selectAll().where("composeId", "in", ids).execute();
  for (const source of sources) {
    const {
      composeId: _id,
      createdAt: _created,
      composeStatus: _status,
      serviceNetworks,
      publishedPorts: _ports,
      ...fields
    } = source;
    const copy = await insertCompose(db, {
      ...fields,
      serviceNetworks: JSON.stringify(serviceNetworks ?? []),
      composeId: newComposeId(),
      name: target.sameProject ? `${source.name} (copy)` : source.name,
      appName: await copyAppName(db, source.appName),
      environmentId: target.targetEnvironmentId,
    });
    // Its file mounts too: the copied file binds them as ../files/<filePath>.
    const mounts = await db
      .selectFrom("mounts")
      .selectAll()
      .where("composeId", "=", source.composeId)
      .execute();
    if (mounts.length > 0) {
      await db
        .insertInto("mounts")
        .values(
          mounts.map(({ mountId: _id, createdAt: _created, ...mount }) => ({
            ...mount,
            mountId: newId(),
            composeId: copy.composeId,
          })),
        )
        .execute();
    }
  }
}

export const composeHooks: ServiceKindHooks = {
  listSummaries: (db, environmentIds) => listComposeSummaries(db, environmentIds),
  summaryTable: "compose",
  summaryJson: (environmentId) => sql`coalesce((
    select json_agg(json_build_object(
      'composeId', c.compose_id,
      'name', c.name,
      'appName', c.app_name,
      'description', c.description,
      'serverId', c.server_id,
      'createdAt', ${isoTimestamp(sql.ref("c.created_at"))},
      'composeStatus', c.compose_status
    ) order by c.created_at asc, c.compose_id asc)
    from compose c where c.environment_id = ${environmentId}
  ), '[]'::json)`,
  copy: (db, ids, target) => copyCompose(db, ids, target),
  teardown: async (ctx, environmentIds) => {
    for (const row of await listComposeIn(ctx.db, environmentIds)) {
      // Removing the environment removes its stacks with their volumes: nothing is left to reuse them.
      await teardownCompose(ctx, row, "The compose service's environment was deleted", true);
    }
  },
};

serviceCountersByKind.compose = async (db, serverIds) => {
  if (serverIds.length === 0) return [];
  const rows = await db
    .selectFrom("compose")
    .select((eb) => ["serverId", eb.fn.countAll<number>().as("count")])
    .where("serverId", "in", serverIds)
    .groupBy("serverId")
    .execute();
  return rows.map((row) => ({ serverId: row.serverId!, count: Number(row.count) }));
};
