/**
 * compose: the compose stacks of an environment (spec 2.6, 4.3), with Dokploy's field set. A
 * stack is deployed from its file (`raw`) or from a clone of a repository (`git`; the provider
 * kinds are wired by the Git providers issue: their columns are here, without foreign keys to
 * tables that do not exist yet). Deployments and domains may now be of a compose stack.
 */
import { type Kysely, sql } from "kysely";

// biome-ignore lint/suspicious/noExplicitAny: migrations are frozen in time and never import application types
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable("compose")
    .addColumn("compose_id", "text", (c) => c.primaryKey())
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("app_name", "text", (c) => c.notNull())
    .addColumn("description", "text")
    .addColumn("env", "text")
    .addColumn("compose_file", "text", (c) => c.notNull().defaultTo(""))
    .addColumn("refresh_token", "text")
    .addColumn("source_type", "text", (c) =>
      c
        .notNull()
        .defaultTo("raw")
        .check(sql`source_type in ('git', 'github', 'gitlab', 'bitbucket', 'gitea', 'raw')`),
    )
    .addColumn("compose_type", "text", (c) =>
      c.notNull().defaultTo("docker-compose").check(sql`compose_type in ('docker-compose', 'stack')`),
    )
    .addColumn("repository", "text")
    .addColumn("owner", "text")
    .addColumn("branch", "text")
    .addColumn("auto_deploy", "boolean", (c) => c.notNull().defaultTo(true))
    .addColumn("gitlab_project_id", "integer")
    .addColumn("gitlab_repository", "text")
    .addColumn("gitlab_owner", "text")
    .addColumn("gitlab_branch", "text")
    .addColumn("gitlab_path_namespace", "text")
    .addColumn("bitbucket_repository", "text")
    .addColumn("bitbucket_repository_slug", "text")
    .addColumn("bitbucket_owner", "text")
    .addColumn("bitbucket_branch", "text")
    .addColumn("gitea_repository", "text")
    .addColumn("gitea_owner", "text")
    .addColumn("gitea_branch", "text")
    .addColumn("custom_git_url", "text")
    .addColumn("custom_git_branch", "text")
    .addColumn("custom_git_ssh_key_id", "text", (c) =>
      c.references("ssh_keys.ssh_key_id").onDelete("set null"),
    )
    .addColumn("command", "text", (c) => c.notNull().defaultTo(""))
    .addColumn("create_env_file", "boolean", (c) => c.notNull().defaultTo(true))
    .addColumn("enable_submodules", "boolean", (c) => c.notNull().defaultTo(false))
    .addColumn("compose_path", "text", (c) => c.notNull().defaultTo("./docker-compose.yml"))
    .addColumn("suffix", "text", (c) => c.notNull().defaultTo(""))
    .addColumn("randomize", "boolean", (c) => c.notNull().defaultTo(false))
    .addColumn("isolated_deployment", "boolean", (c) => c.notNull().defaultTo(false))
    .addColumn("isolated_deployments_volume", "boolean", (c) => c.notNull().defaultTo(false))
    .addColumn("trigger_type", "text", (c) => c.defaultTo("push").check(sql`trigger_type in ('push', 'tag')`))
    .addColumn("compose_status", "text", (c) =>
      c.notNull().defaultTo("idle").check(sql`compose_status in ('idle', 'running', 'done', 'error')`),
    )
    .addColumn("icon", "text")
    .addColumn("environment_id", "text", (c) =>
      c.notNull().references("environments.environment_id").onDelete("cascade"),
    )
    .addColumn("server_id", "text", (c) => c.references("servers.server_id").onDelete("restrict"))
    .addColumn("paused_at", "text")
    .addColumn("watch_paths", sql`text[]`)
    .addColumn("github_id", "text")
    .addColumn("gitlab_id", "text")
    .addColumn("bitbucket_id", "text")
    .addColumn("gitea_id", "text")
    .addColumn("service_networks", "jsonb", (c) => c.notNull().defaultTo(sql`'[]'::jsonb`))
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .addUniqueConstraint("compose_app_name_unique", ["app_name"])
    .execute();
  await db.schema.createIndex("compose_environment_idx").on("compose").column("environment_id").execute();
  await db.schema.createIndex("compose_server_idx").on("compose").column("server_id").execute();

  await db.schema
    .alterTable("deployments")
    .addColumn("compose_id", "text", (c) => c.references("compose.compose_id").onDelete("cascade"))
    .execute();
  await sql`alter table deployments drop constraint deployments_one_service`.execute(db);
  await sql`alter table deployments add constraint deployments_one_service check (num_nonnulls(application_id, database_id, compose_id) = 1)`.execute(
    db,
  );
  await sql`alter table deployments drop constraint deployments_target`.execute(db);
  await sql`alter table deployments add constraint deployments_target check (
    (target_kind = 'application' and application_id = target_id) or
    (target_kind = 'database' and database_id = target_id) or
    (target_kind = 'compose' and compose_id = target_id))`.execute(db);
  await sql`alter table domains add constraint domains_compose_fk foreign key (compose_id) references compose (compose_id) on delete cascade`.execute(
    db,
  );
  // Project trees list the stacks (tree-cache.ts): a write to them empties the cached trees.
  await sql`create trigger compose_notify_project_trees
    after insert or update or delete or truncate on compose
    for each statement execute function platform_notify_project_trees()`.execute(db);
}

// biome-ignore lint/suspicious/noExplicitAny: see up()
export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop trigger if exists compose_notify_project_trees on compose`.execute(db);
  await sql`alter table domains drop constraint if exists domains_compose_fk`.execute(db);
  await db.deleteFrom("deployments").where("compose_id", "is not", null).execute();
  await sql`alter table deployments drop constraint deployments_target`.execute(db);
  await sql`alter table deployments add constraint deployments_target check (
    (target_kind = 'application' and application_id = target_id and database_id is null) or
    (target_kind = 'database' and database_id = target_id and application_id is null))`.execute(db);
  await sql`alter table deployments drop constraint deployments_one_service`.execute(db);
  await sql`alter table deployments add constraint deployments_one_service check (num_nonnulls(application_id, database_id) = 1)`.execute(
    db,
  );
  await db.schema.alterTable("deployments").dropColumn("compose_id").execute();
  await db.schema.dropTable("compose").ifExists().execute();
}
