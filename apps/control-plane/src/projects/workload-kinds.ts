/**
 * The services an environment holds (spec 2.8): applications, the six database kinds and
 * compose stacks. Projects and environments only see them through the hooks below, so the
 * feature that adds a service kind registers them (registerServiceKindHooks) and project.one,
 * project.all, environment.*, project.duplicate and both removals pick it up.
 */
import type { RawBuilder } from "kysely";
import { z } from "zod";
import type { ServiceContext } from "../context.ts";
import type { SecretBox } from "../crypto/secret-box.ts";
import type { Db } from "../db/database.ts";
import { badRequest } from "../errors.ts";

export const serviceKinds = [
  "application",
  "postgres",
  "mysql",
  "mariadb",
  "mongo",
  "redis",
  "libsql",
  "compose",
] as const;
export type ServiceKind = (typeof serviceKinds)[number];

/** The field of an environment that lists the services of a kind (Dokploy's names). */
export const serviceFields = {
  application: "applications",
  postgres: "postgres",
  mysql: "mysql",
  mariadb: "mariadb",
  mongo: "mongo",
  redis: "redis",
  libsql: "libsql",
  compose: "compose",
} as const satisfies Record<ServiceKind, string>;

/** The id field of a kind's summary: applicationId, postgresId, … composeId. */
export const serviceIdKey = (kind: ServiceKind) => `${kind}Id` as const;

const statusSchema = z.enum(["idle", "running", "done", "error"]);
const summaryBase = {
  name: z.string(),
  appName: z.string(),
  description: z.string().nullable(),
  serverId: z.string().nullable(),
  createdAt: z.string(),
};
const databaseSummary = { ...summaryBase, applicationStatus: statusSchema };

/** What project.one / project.all / environment.one show of each service. */
export const environmentServicesShape = {
  applications: z.array(z.object({ applicationId: z.string(), ...databaseSummary })),
  postgres: z.array(z.object({ postgresId: z.string(), ...databaseSummary })),
  mysql: z.array(z.object({ mysqlId: z.string(), ...databaseSummary })),
  mariadb: z.array(z.object({ mariadbId: z.string(), ...databaseSummary })),
  mongo: z.array(z.object({ mongoId: z.string(), ...databaseSummary })),
  redis: z.array(z.object({ redisId: z.string(), ...databaseSummary })),
  libsql: z.array(z.object({ libsqlId: z.string(), ...databaseSummary })),
  compose: z.array(z.object({ composeId: z.string(), ...summaryBase, composeStatus: statusSchema })),
};
export type EnvironmentServices = {
  [F in keyof typeof environmentServicesShape]: z.input<(typeof environmentServicesShape)[F]>;
};

/** A summary row as a kind's hook returns it: the summary fields plus its environment. */
export type ServiceSummaryRow = { environmentId: string } & Record<string, unknown>;

export interface ServiceKindHooks {
  /** Summaries of this kind in all the given environments, in ONE query (no N+1). */
  listSummaries(db: Db, environmentIds: readonly string[]): Promise<ServiceSummaryRow[]>;
  /**
   * The same summaries as SQL for the one-query project tree (details.ts): a JSON array (never
   * null) of the summaries in the environment whose id is `environmentId`, in snake_case SQL
   * (the tree runs without kysely's plugins) with the output's camelCase keys and timestamps as
   * isoTimestamp. Without it the tree asks listSummaries in a query of its own.
   */
  summaryJson?(environmentId: RawBuilder<unknown>): RawBuilder<unknown>;
  /**
   * The table the summaries are read from. The cached project trees (tree-cache.ts) are used
   * only while every kind names one that NOTIFYs on writes (migration
   * 20261125-20-project-tree-invalidation).
   */
  summaryTable?: string;
  /**
   * Copies the services `ids` (all of this kind in the source environment, already checked)
   * into `targetEnvironmentId`, inside the caller's transaction. `sameProject` tells whether
   * names need a " (copy)" suffix; `secrets` reseals secrets bound to the copied row.
   */
  copy(
    db: Db,
    ids: readonly string[],
    target: { targetEnvironmentId: string; sameProject: boolean; secrets: SecretBox },
  ): Promise<void>;
  /** Stops and removes the running workloads of this kind before their rows are deleted. */
  teardown(ctx: ServiceContext, environmentIds: readonly string[]): Promise<void>;
}

/**
 * The hooks of each kind, registered by its feature from the composition root (features.ts:
 * applications, the six database kinds, compose stacks). A kind without hooks has no rows
 * yet, so it lists, copies and tears down nothing.
 */
export const serviceKindHooks: Partial<Record<ServiceKind, ServiceKindHooks>> = {};

export function registerServiceKindHooks(hooks: Partial<Record<ServiceKind, ServiceKindHooks>>): void {
  for (const [kind, kindHooks] of Object.entries(hooks) as [ServiceKind, ServiceKindHooks][]) {
    if (serviceKindHooks[kind]) throw new Error(`the service kind ${kind} is registered twice`);
    serviceKindHooks[kind] = kindHooks;
  }
}

export const emptyServices = (): EnvironmentServices => ({
  applications: [],
  postgres: [],
  mysql: [],
  mariadb: [],
  mongo: [],
  redis: [],
  libsql: [],
  compose: [],
});

/** Service summaries of every given environment, keyed by environmentId (one query per kind). */
export async function loadServiceSummaries(
  db: Db,
  environmentIds: readonly string[],
): Promise<Map<string, EnvironmentServices>> {
  const byEnvironment = new Map(environmentIds.map((id) => [id, emptyServices()]));
  if (environmentIds.length === 0) return byEnvironment;
  await Promise.all(
    serviceKinds.map(async (kind) => {
      const hooks = serviceKindHooks[kind];
      if (!hooks) return;
      for (const row of await hooks.listSummaries(db, environmentIds)) {
        const services = byEnvironment.get(row.environmentId);
        (services?.[serviceFields[kind]] as unknown[] | undefined)?.push(row);
      }
    }),
  );
  return byEnvironment;
}

export interface ServiceSelection {
  id: string;
  type: ServiceKind;
}

/**
 * project.duplicate's service-copy step. `selection` is "all" (includeServices without a
 * list), "none" (includeServices false) or an explicit list, each of which must be a service
 * of the source environment (else 400 naming `selectedServices.<index>`).
 */
export async function copyServices(
  db: Db,
  args: {
    sourceEnvironmentId: string;
    targetEnvironmentId: string;
    sameProject: boolean;
    selection: "all" | "none" | readonly ServiceSelection[];
    secrets: SecretBox;
  },
): Promise<void> {
  if (args.selection === "none") return;
  const source =
    (await loadServiceSummaries(db, [args.sourceEnvironmentId])).get(args.sourceEnvironmentId) ??
    emptyServices();
  const present = (kind: ServiceKind) =>
    (source[serviceFields[kind]] as Record<string, unknown>[]).map((row) => String(row[serviceIdKey(kind)]));

  const idsByKind = new Map<ServiceKind, string[]>();
  if (args.selection === "all") {
    for (const kind of serviceKinds) idsByKind.set(kind, present(kind));
  } else {
    const missing: string[] = [];
    for (const [index, { id, type }] of args.selection.entries()) {
      if (!present(type).includes(id)) missing.push(`selectedServices.${index}`);
      else idsByKind.set(type, [...new Set([...(idsByKind.get(type) ?? []), id])]);
    }
    if (missing.length > 0) {
      throw badRequest(`Selected services are not in the source environment: ${missing.join(", ")}`, {
        fields: missing,
      });
    }
  }
  for (const [kind, ids] of idsByKind) {
    const hooks = serviceKindHooks[kind];
    if (hooks && ids.length > 0) {
      await hooks.copy(db, ids, {
        targetEnvironmentId: args.targetEnvironmentId,
        sameProject: args.sameProject,
        secrets: args.secrets,
      });
    }
  }
}

/** Stops every service of the environments; called before a project or environment is deleted. */
export async function teardownServices(
  ctx: ServiceContext,
  environmentIds: readonly string[],
): Promise<void> {
  if (environmentIds.length === 0) return;
  for (const kind of serviceKinds) await serviceKindHooks[kind]?.teardown(ctx, environmentIds);
}
