/**
 * How many services (applications, databases, compose stacks) each server carries: server.all
 * shows it as totalSum and server.remove refuses while it is above zero. Each service kind
 * registers a counter for itself in `serviceCountersByKind` (applications do in
 * applications/service-kind.ts).
 */
import type { Db } from "../db/database.ts";
import type { ServiceKind } from "../projects/workload-kinds.ts";

/** Counts the services of one kind per server, in ONE query, for the given servers. */
export type ServerServiceCounter = (
  db: Db,
  serverIds: readonly string[],
) => Promise<Array<{ serverId: string; count: number }>>;

/** The one registration point, next to projects/workload-kinds.ts' serviceKindHooks. */
export const serviceCountersByKind: Partial<Record<ServiceKind, ServerServiceCounter>> = {};

/** Number of services on each given server (0 for a server without any). */
export async function countServicesByServer(
  db: Db,
  serverIds: readonly string[],
): Promise<Map<string, number>> {
  const totals = new Map(serverIds.map((id) => [id, 0]));
  if (serverIds.length === 0) return totals;
  const counts = await Promise.all(
    Object.values(serviceCountersByKind).map((counter) => counter?.(db, serverIds) ?? []),
  );
  for (const { serverId, count } of counts.flat()) {
    if (totals.has(serverId)) totals.set(serverId, totals.get(serverId)! + count);
  }
  return totals;
}

/**
 * How many applications name `serverId` as their build server (applications/build-server.ts):
 * server.remove refuses while above zero, and server.update refuses to make it a deploy server.
 */
export async function countApplicationsBuildingOn(db: Db, serverId: string): Promise<number> {
  const row = await db
    .selectFrom("applications")
    .select((eb) => eb.fn.countAll<string>().as("count"))
    .where("buildServerId", "=", serverId)
    .executeTakeFirst();
  return Number(row?.count ?? 0);
}
