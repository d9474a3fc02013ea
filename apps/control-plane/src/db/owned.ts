/**
 * The tenancy join, written once. A workload (application, compose, database service) belongs to
 * an organization through its environment -> project (projects.organizationId); no table below a
 * project stores the organization itself. Every read that needs a row's organization, or must
 * find only the caller organization's rows, joins through here:
 *
 * - `ownedBy(query, from, organizationId)`: joins environments -> projects and keeps the rows of
 *   that organization (everything done on behalf of a caller). A child table (ports, redirects,
 *   security, domains, mounts, deployments) joins its parent service first and passes the
 *   parent's environmentId.
 * - `withOwner(query, from)`: the same join without the filter, for the system's own callers that
 *   read a row's organization to act for it (webhooks by token, the deployment pipeline, teardown,
 *   the proxy). Never for a caller's input.
 * - `ownedService(db, caller, kind, id)`: the workload row of that kind, or null when it is not the
 *   caller organization's (the caller turns null into a 404).
 *
 * tests/architecture/tenancy-join.test.ts fails when a file elsewhere writes the join by hand.
 */
import type { Expression, SelectQueryBuilder } from "kysely";
import type { Db } from "./database.ts";
import type { Application, Compose, Database, DatabaseKind, DatabaseService } from "./schema.ts";

/** The tables of workloads: each row sits in one environment. */
export type WorkloadTable = "applications" | "compose" | "databaseServices";

/**
 * Where the query's rows sit: `"<workload table>.environmentId"` of a table already in the query,
 * an expression giving an environment id (a child of either an application or a compose), or
 * "environments" when the query reads environments themselves.
 */
export type EnvironmentSource<TB> =
  | `${TB & WorkloadTable}.environmentId`
  | Expression<string | null>
  | ("environments" extends TB ? "environments" : never);

/** The tables of the join; a query may have others, left-joined (nullable) or aliased. */
type Tenancy = Pick<Database, "environments" | "projects">;

/** Joins environments (unless the query reads them) and projects; keeps every row. */
export function withOwner<DB extends Tenancy, TB extends keyof DB, O>(
  query: SelectQueryBuilder<DB, TB, O>,
  from: EnvironmentSource<TB>,
): SelectQueryBuilder<DB, TB | "environments" | "projects", O> {
  // The generic query is cast to one concrete shape: kysely cannot type a join on a table that is
  // only known to be among TB. The result type is exact for every caller.
  const q = query as unknown as SelectQueryBuilder<Database, "applications" | "environments", O>;
  const withEnvironment =
    from === "environments"
      ? q
      : typeof from === "string"
        ? q.innerJoin("environments", "environments.environmentId", from as "applications.environmentId")
        : q.innerJoin("environments", (join) =>
            join.on("environments.environmentId", "=", from as Expression<string>),
          );
  return withEnvironment.innerJoin(
    "projects",
    "projects.projectId",
    "environments.projectId",
  ) as unknown as SelectQueryBuilder<DB, TB | "environments" | "projects", O>;
}

/** Joins environments and projects and keeps the rows of that organization. */
export function ownedBy<DB extends Tenancy, TB extends keyof DB, O>(
  query: SelectQueryBuilder<DB, TB, O>,
  from: EnvironmentSource<TB>,
  organizationId: string,
): SelectQueryBuilder<DB, TB | "environments" | "projects", O> {
  const joined = withOwner(query, from);
  return (joined as unknown as SelectQueryBuilder<Database, "projects", O>).where(
    "projects.organizationId",
    "=",
    organizationId,
  ) as unknown as SelectQueryBuilder<DB, TB | "environments" | "projects", O>;
}

/** The kinds of services a caller names by id. */
export type ServiceKind = "application" | "compose" | DatabaseKind;

export type OwnedService<K extends ServiceKind> = K extends "application"
  ? Application
  : K extends "compose"
    ? Compose
    : DatabaseService;

/** Who asks: a caller (its organization) or an organization id. */
export type Owner = string | { organizationId: string };

const organizationOf = (owner: Owner) => (typeof owner === "string" ? owner : owner.organizationId);

/** The service of that kind and id if the organization owns it; null otherwise (a 404). */
export async function ownedService<K extends ServiceKind>(
  db: Db,
  owner: Owner,
  kind: K,
  id: string,
): Promise<OwnedService<K> | null> {
  const organizationId = organizationOf(owner);
  if (kind === "application") {
    const row = await ownedBy(db.selectFrom("applications"), "applications.environmentId", organizationId)
      .selectAll("applications")
      .where("applications.applicationId", "=", id)
      .executeTakeFirst();
    return (row ?? null) as OwnedService<K> | null;
  }
  if (kind === "compose") {
    const row = await ownedBy(db.selectFrom("compose"), "compose.environmentId", organizationId)
      .selectAll("compose")
      .where("compose.composeId", "=", id)
      .executeTakeFirst();
    return (row ?? null) as OwnedService<K> | null;
  }
  const row = await ownedBy(
    db.selectFrom("databaseServices"),
    "databaseServices.environmentId",
    organizationId,
  )
    .selectAll("databaseServices")
    .where("databaseServices.kind", "=", kind as DatabaseKind)
    .where("databaseServices.databaseId", "=", id)
    .executeTakeFirst();
  return (row ?? null) as OwnedService<K> | null;
}
