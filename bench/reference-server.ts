/**
 * The same-stack reference for bench/api.ts: the least code that answers `project.all` with the
 * control plane's exact bytes on the same stack (Hono on @hono/node-server, kysely with the same
 * plugins, pg with a pool of 10). Per request it runs the same API-key check as the control
 * plane (SHA-256 of the key, the key row joined to its membership, expiry) and then the 4
 * queries of the tree (projects, environments, applications, project tags), one after another.
 *
 * PORT and DATABASE_URL come from the environment (bench/api.ts starts it).
 */
import { createHash } from "node:crypto";
import { serve } from "@hono/node-server";
import { Hono } from "hono";
import { CamelCasePlugin, Kysely, type KyselyPlugin, PostgresDialect } from "kysely";
import pg from "pg";
import type { Database } from "../apps/control-plane/src/db/schema.ts";

/** The control plane's dates plugin (db/database.ts): timestamps as ISO strings. */
const datesAsIsoStrings: KyselyPlugin = {
  transformQuery: (args) => args.node,
  async transformResult(args) {
    for (const row of args.result.rows) {
      for (const key in row) {
        const value = row[key];
        if (value instanceof Date) row[key] = value.toISOString();
      }
    }
    return args.result;
  },
};

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 10 });
const db = new Kysely<Database>({
  dialect: new PostgresDialect({ pool }),
  plugins: [new CamelCasePlugin(), datesAsIsoStrings],
});

const unauthorized = { error: { code: "UNAUTHORIZED", message: "Invalid API key" } };

const app = new Hono();
app.get("/api/project.all", async (c) => {
  const presented = c.req.header("x-api-key");
  if (!presented) return c.json(unauthorized, 401);
  const caller = await db
    .selectFrom("apiKeys")
    .innerJoin("members", (join) =>
      join
        .onRef("members.userId", "=", "apiKeys.userId")
        .onRef("members.organizationId", "=", "apiKeys.organizationId"),
    )
    .innerJoin("users", "users.userId", "members.userId")
    .select(["apiKeys.organizationId", "apiKeys.expiresAt", "members.role", "users.email"])
    .where("apiKeys.keyHash", "=", createHash("sha256").update(presented).digest("hex"))
    .executeTakeFirst();
  if (!caller || (caller.expiresAt && new Date(caller.expiresAt) <= new Date())) {
    return c.json(unauthorized, 401);
  }

  const projects = await db
    .selectFrom("projects")
    .selectAll()
    .where("organizationId", "=", caller.organizationId)
    .orderBy("createdAt", "desc")
    .orderBy("projectId", "desc")
    .execute();
  const projectIds = projects.map((p) => p.projectId);
  const environments =
    projectIds.length === 0
      ? []
      : await db
          .selectFrom("environments")
          .selectAll()
          .where("projectId", "in", projectIds)
          .orderBy("isDefault", "desc")
          .orderBy("createdAt", "asc")
          .orderBy("name", "asc")
          .execute();
  const environmentIds = environments.map((e) => e.environmentId);
  const applications =
    environmentIds.length === 0
      ? []
      : await db
          .selectFrom("applications")
          .select([
            "applicationId",
            "environmentId",
            "name",
            "appName",
            "description",
            "serverId",
            "applicationStatus",
            "createdAt",
          ])
          .where("environmentId", "in", environmentIds)
          .orderBy("createdAt", "asc")
          .orderBy("applicationId", "asc")
          .execute();

  const tags =
    projectIds.length === 0
      ? []
      : await db
          .selectFrom("projectTags")
          .innerJoin("tags", "tags.tagId", "projectTags.tagId")
          .select([
            "projectTags.id",
            "projectTags.projectId",
            "tags.tagId",
            "tags.name",
            "tags.color",
            "tags.createdAt",
            "tags.organizationId",
          ])
          .where("projectTags.projectId", "in", projectIds)
          .orderBy("tags.name", "asc")
          .execute();

  // Built in the order the control plane's output schema writes the keys.
  const applicationsOf = new Map<string, unknown[]>();
  for (const a of applications) {
    const list = applicationsOf.get(a.environmentId) ?? [];
    list.push({
      applicationId: a.applicationId,
      name: a.name,
      appName: a.appName,
      description: a.description,
      serverId: a.serverId,
      createdAt: a.createdAt,
      applicationStatus: a.applicationStatus,
    });
    applicationsOf.set(a.environmentId, list);
  }
  const environmentsOf = new Map<string, unknown[]>();
  for (const e of environments) {
    const list = environmentsOf.get(e.projectId) ?? [];
    list.push({
      environmentId: e.environmentId,
      projectId: e.projectId,
      name: e.name,
      description: e.description,
      env: e.env,
      isDefault: e.isDefault,
      createdAt: e.createdAt,
      applications: applicationsOf.get(e.environmentId) ?? [],
      postgres: [],
      mysql: [],
      mariadb: [],
      mongo: [],
      redis: [],
      libsql: [],
      compose: [],
    });
    environmentsOf.set(e.projectId, list);
  }
  return c.json(
    projects.map((p) => ({
      projectId: p.projectId,
      organizationId: p.organizationId,
      name: p.name,
      description: p.description,
      env: p.env,
      createdAt: p.createdAt,
      environments: environmentsOf.get(p.projectId) ?? [],
      projectTags: tags
        .filter((t) => t.projectId === p.projectId)
        .map((t) => ({
          id: t.id,
          projectId: t.projectId,
          tagId: t.tagId,
          tag: {
            tagId: t.tagId,
            name: t.name,
            color: t.color,
            createdAt: t.createdAt,
            organizationId: t.organizationId,
          },
        })),
    })),
  );
});
app.get("/health", (c) => c.json({ status: "ok" }));

serve({ fetch: app.fetch, port: Number(process.env.PORT), hostname: "127.0.0.1" });
