/**
 * Domains (spec 2.7), security credentials (spec 2.2) and the web server settings (spec 4.9,
 * one row for the whole instance). A custom certificate's private key is sealed (SecretBox);
 * a credential keeps only its APR1 hash. Servers get the state of their proxy's dashboard.
 */
import { type Kysely, sql } from "kysely";

// biome-ignore lint/suspicious/noExplicitAny: migrations are frozen in time and never import application types
export async function up(db: Kysely<any>): Promise<void> {
  const now = sql`now()`;
  await db.schema
    .createTable("domains")
    .addColumn("domain_id", "text", (c) => c.primaryKey())
    // ASCII (punycode) form, lower case; a wildcard keeps its leading `*.`.
    .addColumn("host", "text", (c) => c.notNull())
    .addColumn("path", "text", (c) => c.notNull().defaultTo("/"))
    .addColumn("port", "integer", (c) => c.notNull().defaultTo(3000).check(sql`port between 1 and 65535`))
    .addColumn("https", "boolean", (c) => c.notNull().defaultTo(true))
    .addColumn("certificate_type", "text", (c) =>
      c.notNull().check(sql`certificate_type in ('letsencrypt', 'custom', 'none')`),
    )
    .addColumn("custom_cert_resolver", "text")
    // PEM certificate chain (public); the private key is sealed and never returned.
    .addColumn("certificate", "text")
    .addColumn("certificate_key_sealed", "text")
    .addColumn("domain_type", "text", (c) =>
      c.notNull().check(sql`domain_type in ('application', 'compose', 'preview')`),
    )
    .addColumn("application_id", "text", (c) =>
      c.references("applications.application_id").onDelete("cascade"),
    )
    // Compose services do not exist yet: no foreign key until their table does.
    .addColumn("compose_id", "text")
    .addColumn("service_name", "text")
    // Names the domain's routers, services and middlewares; never reused.
    .addColumn("unique_config_key", "serial", (c) => c.notNull().unique())
    .addColumn("strip_path", "boolean", (c) => c.notNull().defaultTo(true))
    .addColumn("internal_path", "text")
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(now))
    .execute();
  await db.schema.createIndex("domains_application_idx").on("domains").column("application_id").execute();
  await db.schema.createIndex("domains_compose_idx").on("domains").column("compose_id").execute();

  await db.schema
    .createTable("security")
    .addColumn("security_id", "text", (c) => c.primaryKey())
    .addColumn("application_id", "text", (c) =>
      c.notNull().references("applications.application_id").onDelete("cascade"),
    )
    .addColumn("username", "text", (c) => c.notNull())
    // `$apr1$salt$hash`, made once when the password is saved.
    .addColumn("password_hash", "text", (c) => c.notNull())
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(now))
    .addUniqueConstraint("security_application_username_unique", ["application_id", "username"])
    .execute();

  await db.schema
    .createTable("web_server_settings")
    // Exactly one row.
    .addColumn("id", "integer", (c) => c.primaryKey().defaultTo(1).check(sql`id = 1`))
    .addColumn("host", "text")
    .addColumn("lets_encrypt_email", "text")
    .addColumn("certificate_type", "text", (c) =>
      c.notNull().defaultTo("none").check(sql`certificate_type in ('letsencrypt', 'custom', 'none')`),
    )
    .addColumn("https", "boolean", (c) => c.notNull().defaultTo(false))
    .addColumn("ssh_private_key_sealed", "text")
    .addColumn("enable_docker_cleanup", "boolean", (c) => c.notNull().defaultTo(false))
    .addColumn("dashboard_enabled", "boolean", (c) => c.notNull().defaultTo(false))
    .addColumn("traefik_image", "text", (c) => c.notNull().defaultTo("traefik:v3"))
    // Host ports the proxy publishes (operator settings, not in the API; tests use free ports).
    .addColumn("proxy_http_port", "integer", (c) => c.notNull().defaultTo(80))
    .addColumn("proxy_https_port", "integer", (c) => c.notNull().defaultTo(443))
    .addColumn("proxy_dashboard_port", "integer", (c) => c.notNull().defaultTo(8080))
    .addColumn("wildcard_domain", "text", (c) => c.notNull().defaultTo("traefik.me"))
    .addColumn("server_ip", "text")
    .addColumn("updated_at", "timestamptz", (c) => c.notNull().defaultTo(now))
    .execute();
  await db.insertInto("web_server_settings").values({ id: 1 }).execute();

  await db.schema
    .alterTable("servers")
    .addColumn("proxy_dashboard_enabled", "boolean", (c) => c.notNull().defaultTo(false))
    .execute();
}

// biome-ignore lint/suspicious/noExplicitAny: see up
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable("servers").dropColumn("proxy_dashboard_enabled").execute();
  await db.schema.dropTable("web_server_settings").execute();
  await db.schema.dropTable("security").execute();
  await db.schema.dropTable("domains").execute();
}
