/**
 * Applications (spec 2.3): Dokploy's fields in snake_case. The registry password and the build
 * secrets are stored sealed (SecretBox); lists (watch paths, args, preview labels) and the
 * Swarm health check and restart policy are jsonb.
 */
import { type Kysely, sql } from "kysely";

// biome-ignore lint/suspicious/noExplicitAny: migrations are frozen in time and never import application types
export async function up(db: Kysely<any>): Promise<void> {
  const now = sql`now()`;
  await db.schema
    .createTable("applications")
    .addColumn("application_id", "text", (c) => c.primaryKey())
    .addColumn("name", "text", (c) => c.notNull())
    // Becomes the Swarm service name; unique across organizations because applications without
    // a server share the control plane's own Docker engine.
    .addColumn("app_name", "text", (c) => c.notNull())
    .addColumn("description", "text")
    .addColumn("environment_id", "text", (c) =>
      c.notNull().references("environments.environment_id").onDelete("cascade"),
    )
    // A server with applications cannot be deleted. NO ACTION rather than RESTRICT: the check waits
    // for the end of the statement, so an organization's deletion cascading to both still works.
    .addColumn("server_id", "text", (c) => c.references("servers.server_id").onDelete("no action"))
    .addColumn("application_status", "text", (c) =>
      c.notNull().defaultTo("idle").check(sql`application_status in ('idle', 'running', 'done', 'error')`),
    )
    .addColumn("source_type", "text", (c) =>
      c
        .notNull()
        .defaultTo("github")
        .check(sql`source_type in ('github', 'gitlab', 'bitbucket', 'gitea', 'docker', 'git', 'drop')`),
    )
    .addColumn("build_type", "text", (c) =>
      c
        .notNull()
        .defaultTo("nixpacks")
        .check(
          sql`build_type in ('dockerfile', 'nixpacks', 'heroku_buildpacks', 'paketo_buildpacks', 'railpack', 'static')`,
        ),
    )
    // GitHub
    .addColumn("github_id", "text")
    .addColumn("repository", "text")
    .addColumn("owner", "text")
    .addColumn("branch", "text")
    .addColumn("build_path", "text", (c) => c.notNull().defaultTo("/"))
    .addColumn("trigger_type", "text", (c) =>
      c.notNull().defaultTo("push").check(sql`trigger_type in ('push', 'tag')`),
    )
    .addColumn("watch_paths", "jsonb")
    .addColumn("enable_submodules", "boolean", (c) => c.notNull().defaultTo(false))
    // GitLab
    .addColumn("gitlab_id", "text")
    .addColumn("gitlab_project_id", "integer")
    .addColumn("gitlab_repository", "text")
    .addColumn("gitlab_owner", "text")
    .addColumn("gitlab_branch", "text")
    .addColumn("gitlab_build_path", "text", (c) => c.notNull().defaultTo("/"))
    .addColumn("gitlab_path_namespace", "text")
    // Bitbucket
    .addColumn("bitbucket_id", "text")
    .addColumn("bitbucket_repository", "text")
    .addColumn("bitbucket_repository_slug", "text")
    .addColumn("bitbucket_owner", "text")
    .addColumn("bitbucket_branch", "text")
    .addColumn("bitbucket_build_path", "text", (c) => c.notNull().defaultTo("/"))
    // Gitea
    .addColumn("gitea_id", "text")
    .addColumn("gitea_repository", "text")
    .addColumn("gitea_owner", "text")
    .addColumn("gitea_branch", "text")
    .addColumn("gitea_build_path", "text", (c) => c.notNull().defaultTo("/"))
    // Custom Git
    .addColumn("custom_git_url", "text")
    .addColumn("custom_git_branch", "text")
    .addColumn("custom_git_build_path", "text")
    .addColumn("custom_git_ssh_key_id", "text", (c) =>
      c.references("ssh_keys.ssh_key_id").onDelete("set null"),
    )
    // Docker image
    .addColumn("docker_image", "text")
    .addColumn("username", "text")
    .addColumn("password_sealed", "text")
    .addColumn("registry_url", "text")
    // Build
    .addColumn("dockerfile", "text", (c) => c.defaultTo("Dockerfile"))
    .addColumn("docker_context_path", "text")
    .addColumn("docker_build_stage", "text")
    .addColumn("publish_directory", "text")
    .addColumn("is_static_spa", "boolean", (c) => c.notNull().defaultTo(false))
    .addColumn("heroku_version", "text", (c) => c.defaultTo("24"))
    .addColumn("railpack_version", "text")
    .addColumn("clean_cache", "boolean", (c) => c.notNull().defaultTo(false))
    // Environment
    .addColumn("env", "text")
    .addColumn("build_args", "text")
    .addColumn("build_secrets_sealed", "text")
    .addColumn("create_env_file", "boolean", (c) => c.notNull().defaultTo(true))
    // Run
    .addColumn("memory_limit", "text")
    .addColumn("memory_reservation", "text")
    .addColumn("cpu_limit", "text")
    .addColumn("cpu_reservation", "text")
    .addColumn("command", "text")
    .addColumn("args", "jsonb")
    .addColumn("replicas", "integer", (c) => c.notNull().defaultTo(1))
    .addColumn("health_check_swarm", "jsonb")
    .addColumn("restart_policy_swarm", "jsonb")
    .addColumn("auto_deploy", "boolean", (c) => c.notNull().defaultTo(true))
    // Webhook deployments authenticate with ?refreshToken=…; rotated by application.refreshToken.
    .addColumn("refresh_token", "text", (c) => c.notNull())
    // Preview deployments
    .addColumn("is_preview_deployments_active", "boolean", (c) => c.notNull().defaultTo(false))
    .addColumn("preview_limit", "integer", (c) => c.notNull().defaultTo(3))
    .addColumn("preview_wildcard", "text")
    .addColumn("preview_path", "text", (c) => c.notNull().defaultTo("/"))
    .addColumn("preview_env", "text")
    .addColumn("preview_build_args", "text")
    .addColumn("preview_port", "integer", (c) => c.notNull().defaultTo(3000))
    .addColumn("preview_https", "boolean", (c) => c.notNull().defaultTo(false))
    .addColumn("preview_labels", "jsonb")
    .addColumn("preview_require_collaborator_permissions", "boolean", (c) => c.notNull().defaultTo(true))
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(now))
    .addUniqueConstraint("applications_app_name_unique", ["app_name"])
    .execute();
  await db.schema
    .createIndex("applications_environment_idx")
    .on("applications")
    .column("environment_id")
    .execute();
  await db.schema.createIndex("applications_server_idx").on("applications").column("server_id").execute();
}

// biome-ignore lint/suspicious/noExplicitAny: see up()
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable("applications").ifExists().execute();
}
