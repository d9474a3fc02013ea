/** Query counts and equivalence of the nested views, and the service-kind extension point, at the repository level. */
import type { KyselyPlugin } from "kysely";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { insertApplication } from "../applications/repository.ts";
import type { Db } from "../db/database.ts";
import { type Session, startTestPlatform, type TestPlatform } from "../testing/harness.ts";
import { loadProjectTrees, withEnvironments } from "./details.ts";
import { insertEnvironment, insertProject, listEnvironments, listProjects } from "./repository.ts";
import { projectDetailSchema } from "./schemas.ts";
import { copyServices, type ServiceKindHooks, serviceKindHooks } from "./workload-kinds.ts";

function counting(db: Db): { db: Db; queries: string[] } {
  const queries: string[] = [];
  const plugin: KyselyPlugin = {
    transformQuery: (args) => {
      queries.push(args.node.kind);
      return args.node;
    },
    transformResult: async (args) => args.result,
  };
  const counted = db.withPlugin(plugin);
  // The tree runs without kysely's plugins: keep counting there too.
  const withoutPlugins = () => counted.withoutPlugins().withPlugin(plugin);
  return {
    db: new Proxy(counted, {
      get: (target, name) => (name === "withoutPlugins" ? withoutPlugins : Reflect.get(target, name)),
    }),
    queries,
  };
}

describe("project details", () => {
  let platform: TestPlatform;
  let owner: Session;
  beforeAll(async () => {
    platform = await startTestPlatform();
    owner = await platform.registerOwner();
    const db = platform.ctx.db;
    for (let i = 0; i < 100; i++) {
      const project = await insertProject(db, {
        organizationId: owner.user.organizationId,
        name: `Project ${i}`,
        description: null,
        env: "",
      });
      for (const [name, isDefault] of [
        ["production", true],
        ["staging", false],
      ] as const) {
        await insertEnvironment(db, {
          projectId: project.projectId,
          name,
          description: null,
          env: "",
          isDefault,
        });
      }
    }
  });
  afterAll(() => platform.close());
  // Read once the platform registered its features (buildServiceContext).
  let redisHooks: ServiceKindHooks | undefined;
  beforeAll(() => {
    redisHooks = serviceKindHooks.redis;
  });
  afterEach(() => {
    serviceKindHooks.redis = redisHooks;
  });

  it("reads 100 projects with their environments and services in one query (no N+1)", async () => {
    const { db, queries } = counting(platform.ctx.db);
    const details = await loadProjectTrees(db, owner.user.organizationId);
    expect(details).toHaveLength(100);
    expect(details.every((p) => p.environments.map((e) => e.name).join() === "production,staging")).toBe(
      true,
    );
    expect(queries).toEqual(["RawNode"]);

    const response = await platform.query("project.all", {}, { token: owner.token });
    expect(response.status).toBe(200);
    expect(response.body).toHaveLength(100);
  });

  it("builds the same tree as the per-level reads, dates and order included", async () => {
    const db = platform.ctx.db;
    const organizationId = owner.user.organizationId;
    const [project] = await listProjects(db, organizationId);
    const [environment] = await listEnvironments(db, [project!.projectId]);
    await insertApplication(db, {
      name: "tree app",
      appName: `tree-app-${Date.now()}`,
      description: "in the tree",
      environmentId: environment!.environmentId,
      serverId: null,
    });
    for (const kind of ["postgres", "redis"] as const) {
      await platform.mutateOk(
        `${kind}.create`,
        {
          name: `tree ${kind}`,
          appName: `tree-${kind}-${Date.now()}`,
          environmentId: environment!.environmentId,
          databasePassword: "s3cret-Pass@1",
          ...(kind === "postgres" ? { databaseName: "shop", databaseUser: "shopper" } : {}),
        },
        { token: owner.token },
      );
    }
    const perLevel = await withEnvironments(db, await listProjects(db, organizationId));
    const tree = await loadProjectTrees(db, organizationId);
    const view = z.array(projectDetailSchema);
    expect(view.parse(tree)).toEqual(view.parse(perLevel));
    expect(tree[0]!.environments[0]!.applications).toHaveLength(1);
    expect(tree[0]!.environments[0]!.postgres).toHaveLength(1);
    expect(tree[0]!.environments[0]!.redis).toHaveLength(1);
    const [one] = await loadProjectTrees(db, organizationId, project!.projectId);
    expect(view.parse([one])).toEqual(view.parse([perLevel[0]]));
    expect(await loadProjectTrees(db, "another-organization", project!.projectId)).toEqual([]);
  });

  it("asks each registered service kind once for all environments and nests the rows", async () => {
    const calls: (readonly string[])[] = [];
    const projects = await listProjects(platform.ctx.db, owner.user.organizationId);
    const target = projects[0]!;
    const hooks: ServiceKindHooks = {
      listSummaries: async (_db, environmentIds) => {
        calls.push(environmentIds);
        const first = environmentIds[0]!;
        return [
          {
            environmentId: first,
            redisId: "r1",
            name: "cache",
            appName: "cache-abc",
            description: null,
            serverId: null,
            createdAt: "2026-01-01T00:00:00.000Z",
            applicationStatus: "idle",
            internalOnly: "stripped by the output schema",
          },
        ];
      },
      copy: async () => {},
      teardown: async () => {},
    };
    serviceKindHooks.redis = hooks;

    const details = await loadProjectTrees(platform.ctx.db, owner.user.organizationId, target.projectId);
    expect(calls).toHaveLength(1);
    expect(calls[0]).toHaveLength(2);
    const withCache = details[0]!.environments.find((e) => e.environmentId === calls[0]![0]);
    expect(withCache?.redis).toHaveLength(1);

    const one = await platform.query("project.one", { projectId: target.projectId }, { token: owner.token });
    const nested = one.body.environments.flatMap((e: any) => e.redis);
    expect(nested).toEqual([
      {
        redisId: "r1",
        name: "cache",
        appName: "cache-abc",
        description: null,
        serverId: null,
        createdAt: "2026-01-01T00:00:00.000Z",
        applicationStatus: "idle",
      },
    ]);
  });

  it("copies the selected (or all) services of the source environment through the kind's hook", async () => {
    const copied: { ids: readonly string[]; target: string }[] = [];
    serviceKindHooks.redis = {
      listSummaries: async (_db, environmentIds) =>
        environmentIds.map((environmentId) => ({ environmentId, redisId: `redis-of-${environmentId}` })),
      copy: async (_db, ids, target) => {
        copied.push({ ids, target: target.targetEnvironmentId });
      },
      teardown: async () => {},
    };
    const db = platform.ctx.db;
    const args = {
      sourceEnvironmentId: "src",
      targetEnvironmentId: "dst",
      sameProject: false,
      secrets: platform.ctx.secrets,
    };
    await copyServices(db, { ...args, selection: "all" });
    await copyServices(db, { ...args, selection: [{ id: "redis-of-src", type: "redis" }] });
    await copyServices(db, { ...args, selection: "none" });
    expect(copied).toEqual([
      { ids: ["redis-of-src"], target: "dst" },
      { ids: ["redis-of-src"], target: "dst" },
    ]);
    await expect(
      copyServices(db, { ...args, selection: [{ id: "redis-of-other", type: "redis" }] }),
    ).rejects.toMatchObject({ code: "BAD_REQUEST", data: { fields: ["selectedServices.0"] } });
  });
});
