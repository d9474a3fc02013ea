/**
 * Integration harness: a control plane on a fresh database (a new Postgres database per
 * harness, copied from a migrated template), called in-process through
 * `app.request()`. Log lines are kept so tests can check that no secret reaches them.
 */
import { createHash, randomBytes } from "node:crypto";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import pg from "pg";
import pino from "pino";
import type { AgentHubOptions } from "../agents/agent-hub.ts";
import { createApp } from "../app.ts";
import { type Config, loadConfig } from "../config.ts";
import type { ServiceContext } from "../context.ts";
import { buildServiceContext, REDACTED_LOG_PATHS } from "../context-builder.ts";
import { type DatabaseTarget, migrateToLatest, openDatabase, type PostgresTarget } from "../db/database.ts";
import type { DeploymentQueueOptions } from "../deployments/queue.ts";

const adminUrl = process.env.TEST_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";

export interface CallOptions {
  /** Session token or API key, sent as Authorization: Bearer. */
  token?: string;
  apiKey?: string;
  headers?: Record<string, string>;
}

export interface ApiResponse<T = any> {
  status: number;
  body: T;
  headers: Headers;
}

export interface Session {
  token: string;
  user: { id: string; userId: string; email: string; organizationId: string; role: string };
}

export class TestPlatform {
  private counter = 0;

  constructor(
    readonly app: ReturnType<typeof createApp>,
    readonly ctx: ServiceContext,
    readonly logLines: string[],
    private readonly cleanup: () => Promise<void>,
  ) {}

  /** A raw request to the in-process app. */
  async request(pathAndQuery: string, init: RequestInit & CallOptions = {}): Promise<ApiResponse> {
    const headers = new Headers(init.headers);
    if (init.token) headers.set("authorization", `Bearer ${init.token}`);
    if (init.apiKey) headers.set("x-api-key", init.apiKey);
    if (init.body !== undefined && !headers.has("content-type"))
      headers.set("content-type", "application/json");
    const response = await this.app.request(pathAndQuery, { ...init, headers });
    const text = await response.text();
    let body: unknown = text;
    try {
      body = text === "" ? undefined : JSON.parse(text);
    } catch {}
    return { status: response.status, body, headers: response.headers };
  }

  /** GET /api/{name} with the input as plain query parameters. */
  query<T = any>(
    name: string,
    input: Record<string, unknown> = {},
    auth: CallOptions = {},
  ): Promise<ApiResponse<T>> {
    const params = new URLSearchParams();
    for (const [key, value] of Object.entries(input)) {
      if (value === undefined) continue;
      params.set(key, typeof value === "object" ? JSON.stringify(value) : String(value));
    }
    const qs = params.toString();
    return this.request(`/api/${name}${qs ? `?${qs}` : ""}`, { method: "GET", ...auth });
  }

  /** POST /api/{name} with the input as a JSON body. */
  mutate<T = any>(name: string, input: unknown = {}, auth: CallOptions = {}): Promise<ApiResponse<T>> {
    return this.request(`/api/${name}`, { method: "POST", body: JSON.stringify(input), ...auth });
  }

  /** mutate() that throws, with the answer, unless it is a 200; returns the body. */
  async mutateOk<T = any>(name: string, input: unknown, auth: CallOptions): Promise<T> {
    const response = await this.mutate<T>(name, input, auth);
    if (response.status !== 200)
      throw new Error(`${name} answered ${response.status}: ${JSON.stringify(response.body)}`);
    return response.body;
  }

  /** The deployment's row once it has ended (neither idle nor running). */
  async waitForDeployment(deploymentId: string, timeoutMs = 180_000) {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      const row = await this.ctx.db
        .selectFrom("deployments")
        .selectAll()
        .where("deploymentId", "=", deploymentId)
        .executeTakeFirstOrThrow();
      if (row.status !== "idle" && row.status !== "running") return row;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    throw new Error(`deployment ${deploymentId} did not end within ${timeoutMs} ms`);
  }

  /** Registers the first user (owner of the first organization). */
  async registerOwner(email = "owner@example.com", password = "correct-horse-battery"): Promise<Session> {
    const response = await this.mutate("auth.register", { email, password, name: "Owner" });
    if (response.status !== 200) throw new Error(`register failed: ${JSON.stringify(response.body)}`);
    return response.body as Session;
  }

  /** Invites a user into the owner's organization with a role and registers them. */
  async addMember(owner: Session, role: "admin" | "member", email?: string): Promise<Session> {
    const address = email ?? `user${++this.counter}-${role}@example.com`;
    const invited = await this.mutate(
      "organization.inviteMember",
      { email: address, role },
      { token: owner.token },
    );
    if (invited.status !== 200) throw new Error(`invite failed: ${JSON.stringify(invited.body)}`);
    const registered = await this.mutate("auth.register", {
      email: address,
      password: "correct-horse-battery",
      name: `User ${this.counter}`,
      invitationId: invited.body.invitationId,
      token: invited.body.token,
    });
    if (registered.status !== 200) throw new Error(`register failed: ${JSON.stringify(registered.body)}`);
    return registered.body as Session;
  }

  close(): Promise<void> {
    return this.cleanup();
  }
}

/** Waits (up to 5 s) until no session is connected to `name`: a closed pool's may still be ending. */
async function waitUntilUnused(admin: pg.Client, name: string): Promise<void> {
  for (let waited = 0; waited < 5_000; waited += 50) {
    const { rows } = await admin.query("select count(*)::int as n from pg_stat_activity where datname = $1", [
      name,
    ]);
    if (rows[0].n === 0) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const databaseUrl = (name: string) => {
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return url.toString();
};

let migratedTemplate: Promise<string> | undefined;

/**
 * A database every migration ran on, which each platform's database is copied from (CREATE
 * DATABASE … TEMPLATE): migrating every new database again took most of a platform's start.
 * Named after the migrations' contents, made once on the server (under an advisory lock: the
 * suite's workers start together), and never connected to again, as a template must not be.
 */
function templateDatabase(): Promise<string> {
  migratedTemplate ??= (async () => {
    const directory = fileURLToPath(new URL("../db/migrations/", import.meta.url));
    const hash = createHash("sha256");
    for (const file of readdirSync(directory).sort()) {
      hash.update(file).update(readFileSync(path.join(directory, file)));
    }
    const name = `platform_tpl_${hash.digest("hex").slice(0, 16)}`;
    const admin = new pg.Client({ connectionString: adminUrl });
    await admin.connect();
    try {
      await admin.query("select pg_advisory_lock(hashtext('platform test template'))");
      const existing = await admin.query("select 1 from pg_database where datname = $1", [name]);
      if (existing.rowCount === 0) {
        const building = `${name}_${randomBytes(4).toString("hex")}`;
        await admin.query(`create database ${building}`);
        const database = await openDatabase({ kind: "postgres", url: databaseUrl(building) });
        try {
          await migrateToLatest(database.db);
        } finally {
          await database.close();
        }
        await waitUntilUnused(admin, building);
        await admin.query(`alter database ${building} rename to ${name}`);
      }
    } finally {
      await admin.end();
    }
    return name;
  })();
  return migratedTemplate;
}

/**
 * A fresh database on the test Postgres server, and its removal: empty, or with `migrated` a
 * copy of one every migration ran on.
 */
export async function createTestDatabase(
  options: { migrated?: boolean } = {},
): Promise<{ target: PostgresTarget; drop: () => Promise<void> }> {
  const name = `platform_t_${randomBytes(6).toString("hex")}`;
  const template = options.migrated ? ` template ${await templateDatabase()}` : "";
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`create database ${name}${template}`);
  await admin.end();
  const drop = async () => {
    const dropper = new pg.Client({ connectionString: adminUrl });
    await dropper.connect();
    // Forcing the drop while a closed pool's connections are still ending would deliver
    // "terminating connection" errors to clients nobody listens to any more.
    await waitUntilUnused(dropper, name);
    await dropper.query(`drop database if exists ${name} with (force)`);
    await dropper.end();
  };
  return { target: { kind: "postgres", url: databaseUrl(name) }, drop };
}

/**
 * Starts a control plane on a fresh database; `env` overrides configuration variables (NATS_URL,
 * NATS_CREDS, ...) and `options.agents` the agent hub's settings (heartbeat timeout, local agent).
 */
export async function startTestPlatform(
  env: Record<string, string> = {},
  options: { agents?: AgentHubOptions; deployments?: DeploymentQueueOptions; database?: DatabaseTarget } = {},
): Promise<TestPlatform> {
  const dataDir = mkdtempSync(path.join(tmpdir(), "platform-test-"));
  const config: Config = loadConfig({
    PLATFORM_DATA_DIR: dataDir,
    PLATFORM_SECRET_KEY: randomBytes(32).toString("base64"),
    LOG_LEVEL: "info",
    // Tests install a proxy only where they ask for it, under a name of their own.
    PLATFORM_LOCAL_PROXY: "false",
    // Generated suites call hundreds of procedures with one session; limits.test.ts sets it.
    PLATFORM_SESSION_RATE_LIMIT: "off",
    ...env,
  });
  const logLines: string[] = [];
  const logger = pino(
    { level: "info", redact: { paths: REDACTED_LOG_PATHS, censor: "[redacted]" } },
    { write: (line: string) => logLines.push(line) },
  );

  // A database given by the caller outlives the platform (a restart test starts another on it).
  const { target: database, drop: dropDatabase } = options.database
    ? { target: options.database, drop: async () => {} }
    : await createTestDatabase({ migrated: true });
  let running: Awaited<ReturnType<typeof buildServiceContext>>;
  try {
    running = await buildServiceContext(config, {
      logger,
      database,
      agents: options.agents,
      deployments: options.deployments,
    });
  } catch (error) {
    await dropDatabase();
    throw error;
  }
  const app = createApp(running.ctx);
  return new TestPlatform(app, running.ctx, logLines, async () => {
    await running.close();
    await dropDatabase();
    rmSync(dataDir, { recursive: true, force: true });
  });
}

/**
 * Two control planes on one fresh database, sharing the master secret (a session signed by one
 * is read by the other).
 */
export async function startTestPlatformPair(): Promise<{
  a: TestPlatform;
  b: TestPlatform;
  close: () => Promise<void>;
}> {
  const database = await createTestDatabase({ migrated: true });
  const env = { PLATFORM_SECRET_KEY: randomBytes(32).toString("base64") };
  const a = await startTestPlatform(env, { database: database.target });
  const b = await startTestPlatform(env, { database: database.target });
  return {
    a,
    b,
    close: async () => {
      await b.close();
      await a.close();
      await database.drop();
    },
  };
}
