/**
 * Opens the database: Postgres through `pg`, at the URL given or on the embedded server in the
 * data directory (started first, stopped on close). Timestamps come back as ISO strings and
 * bigints as numbers.
 *
 * Postgres may go away (restarted, unreachable) under a running control plane: the pool then
 * drops the dead connections without ending the process, every query that cannot reach the
 * server fails with a 503 ApiError (databaseUnavailable), and new connections are made once the
 * server is back.
 */
import {
  CamelCasePlugin,
  Kysely,
  type KyselyPlugin,
  Migrator,
  type PluginTransformResultArgs,
  PostgresDialect,
  type PostgresPool,
  type PostgresPoolClient,
  type QueryResult,
  type RawBuilder,
  sql,
  type UnknownRow,
} from "kysely";
import pg from "pg";
import { ApiError, databaseUnavailable } from "../errors.ts";
import { startEmbeddedPostgres } from "./embedded.ts";
import { migrations } from "./migrations/index.ts";
import type { Database } from "./schema.ts";

export type Db = Kysely<Database>;

const INT8_OID = 20;
const NUMERIC_OID = 1700;

/** Turns every Date in result rows into its ISO string, whatever the driver parsed. */
class DatesAsIsoStrings implements KyselyPlugin {
  transformQuery: KyselyPlugin["transformQuery"] = (args) => args.node;
  async transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    for (const row of args.result.rows) {
      for (const key in row) {
        const value = row[key];
        if (value instanceof Date) row[key] = value.toISOString();
      }
    }
    return args.result;
  }
}

/**
 * A timestamptz as SQL text in the shape DatesAsIsoStrings gives (milliseconds truncated, UTC,
 * "Z"), for JSON that Postgres builds itself (the project tree).
 */
export const isoTimestamp = (column: RawBuilder<unknown>) =>
  sql<string>`to_char(${column} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/**
 * An external server by URL, or the embedded one (db/embedded.ts) in the control plane's data
 * directory, which is then opened by its URL like any other.
 */
export type DatabaseTarget = { kind: "postgres"; url: string } | { kind: "embedded"; dataDir: string };
export type PostgresTarget = Extract<DatabaseTarget, { kind: "postgres" }>;

export interface OpenDatabase {
  db: Db;
  kind: DatabaseTarget["kind"];
  /**
   * Subscribes to a NOTIFY channel. `onChange` runs for every notification, and also whenever
   * notifications may have been missed (the listening connection lost, or made again).
   */
  listen(channel: string, onChange: () => void): Promise<Notifications>;
  close(): Promise<void>;
}

/** A subscription of OpenDatabase.listen. */
export interface Notifications {
  /** False while the listening connection is down: nothing may be trusted to be notified. */
  readonly live: boolean;
  /**
   * Resolves once every notification committed before the call has reached onChange; rejects
   * when the listening connection fails (the caller then asks the database itself).
   */
  fence(): Promise<void>;
  close(): Promise<void>;
}

/**
 * Notifications on Postgres: one dedicated connection LISTENs (outside the pool, so it never
 * waits behind a transaction). Postgres delivers the pending notifications of a listening
 * connection before it answers that connection's next query, so a `select 1` sent after a
 * commit returns only after that commit's notification: that is fence(). Concurrent fences
 * share one round trip: a caller joins the next `select 1` not yet sent. A lost connection is
 * remade every second until it comes back (onChange then runs, as anything may have been missed).
 */
class PostgresNotifications implements Notifications {
  live = false;
  private client: pg.Client | null = null;
  private waiting: Promise<void> | null = null;
  private sending: Promise<void> | null = null;
  private retry: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(
    private readonly url: string,
    private readonly channel: string,
    private readonly onChange: () => void,
  ) {}

  async connect(): Promise<void> {
    const client = new pg.Client({
      connectionString: this.url,
      connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
      query_timeout: CONNECT_TIMEOUT_MS,
      keepAlive: true,
    });
    client.on("notification", () => this.onChange());
    client.on("error", () => this.lost(client));
    client.on("end", () => this.lost(client));
    this.client = client;
    try {
      await client.connect();
      await client.query(`listen ${pg.escapeIdentifier(this.channel)}`);
    } catch {
      this.lost(client);
      return;
    }
    if (this.client !== client || this.closed) return;
    this.live = true;
    this.onChange();
  }

  private lost(client: pg.Client): void {
    if (this.client !== client) return;
    this.client = null;
    this.live = false;
    this.onChange();
    client.end().catch(() => {});
    if (this.closed) return;
    this.retry = setTimeout(() => void this.connect(), 1000);
    this.retry.unref();
  }

  fence(): Promise<void> {
    if (this.waiting) return this.waiting;
    const before = this.sending ?? Promise.resolve();
    const fence: Promise<void> = before
      .catch(() => {})
      .then(async () => {
        // From here on, a new caller needs a later round trip than this one.
        this.waiting = null;
        this.sending = fence;
        const client = this.client;
        if (!client || !this.live) throw new Error("not listening");
        try {
          await client.query("select 1");
        } catch (error) {
          this.lost(client);
          throw error;
        }
      })
      .finally(() => {
        if (this.sending === fence) this.sending = null;
      });
    this.waiting = fence;
    return fence;
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.retry);
    const client = this.client;
    this.client = null;
    this.live = false;
    await client?.end().catch(() => {});
  }
}

/**
 * How long a query waits for a connection (a new one, or a free one of the pool) before it
 * answers 503: long enough for a busy pool, short enough that a silent network does not hang.
 */
export const CONNECT_TIMEOUT_MS = 10_000;

/**
 * Whether a driver error means the server or the connection is gone rather than a fault of the
 * query: socket errors (ECONNREFUSED, ECONNRESET, ETIMEDOUT, ...), SQLSTATE class 08
 * (connection exception), 57P01-57P03 (admin shutdown, crash shutdown, cannot connect now),
 * 53300 (too many connections), and pg's own messages for a lost or timed-out connection.
 */
export function isConnectionError(error: unknown): boolean {
  if (error instanceof AggregateError && error.errors.some(isConnectionError)) return true;
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === "string" && /^(E[A-Z]+|08[0-9A-Z]{3}|57P0[123]|53300)$/.test(code)) return true;
  return /connection terminated|connection timeout|timeout exceeded when trying to connect|not queryable/i.test(
    error.message,
  );
}

type QueryMethod = (...args: unknown[]) => unknown;

/**
 * Puts the pool behind kysely with connection failures turned into databaseUnavailable: any
 * failure to get a connection, and a query failing because its connection died. Query errors
 * (constraint violations, syntax, ...) pass through unchanged.
 */
function guardedPool(pool: pg.Pool): PostgresPool {
  // One wrapper per pg client: kysely keys its connection objects by client.
  const wrappers = new WeakMap<pg.PoolClient, PostgresPoolClient>();
  const wrap = (client: pg.PoolClient): PostgresPoolClient => {
    const query: QueryMethod = (...args) => {
      const result = (client.query as QueryMethod).apply(client, args);
      if (!(result instanceof Promise)) return result; // a cursor (streaming)
      return result.catch((error: unknown) => {
        throw isConnectionError(error) ? databaseUnavailable(error) : error;
      });
    };
    return { query: query as PostgresPoolClient["query"], release: () => client.release() };
  };
  return {
    async connect() {
      let client: pg.PoolClient;
      try {
        client = await pool.connect();
      } catch (error) {
        throw databaseUnavailable(error);
      }
      let wrapper = wrappers.get(client);
      if (!wrapper) {
        wrapper = wrap(client);
        wrappers.set(client, wrapper);
      }
      return wrapper;
    },
    end: () => pool.end(),
  };
}

export interface OpenDatabaseOptions {
  /** Told about connection errors the pool recovered from (a dropped idle or busy connection). */
  onConnectionError?(error: Error): void;
}

export async function openDatabase(
  target: DatabaseTarget,
  options: OpenDatabaseOptions = {},
): Promise<OpenDatabase> {
  const plugins = [new CamelCasePlugin(), new DatesAsIsoStrings()];
  if (target.kind === "postgres") {
    const types = {
      getTypeParser(oid: number, format?: "text" | "binary") {
        if (oid === INT8_OID || oid === NUMERIC_OID) return Number;
        return pg.types.getTypeParser(oid, format);
      },
    };
    const pool = new pg.Pool({
      connectionString: target.url,
      max: 10,
      types: types as pg.CustomTypesConfig,
      connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
      keepAlive: true,
    });
    // Without these listeners a connection lost while idle in the pool, or while checked out
    // between two queries, is an unhandled 'error' event that ends the process. The pool
    // discards such a client itself; the next query opens a new connection.
    // The client's own listener reports it; the pool re-emits an idle client's error.
    pool.on("connect", (client) => client.on("error", (error) => options.onConnectionError?.(error)));
    pool.on("error", () => {});
    const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool: guardedPool(pool) }), plugins });
    const subscriptions = new Set<PostgresNotifications>();
    return {
      db,
      kind: "postgres",
      async listen(channel, onChange) {
        const notifications = new PostgresNotifications(target.url, channel, onChange);
        subscriptions.add(notifications);
        await notifications.connect();
        return notifications;
      },
      async close() {
        for (const notifications of subscriptions) await notifications.close();
        await db.destroy();
      },
    };
  }
  const server = await startEmbeddedPostgres(target.dataDir);
  try {
    const database = await openDatabase({ kind: "postgres", url: server.url }, options);
    return {
      ...database,
      kind: "embedded",
      async close() {
        await database.close();
        await server.stop();
      },
    };
  } catch (error) {
    await server.stop();
    throw error;
  }
}

const migratorOf = (db: Db) => new Migrator({ db, provider: { getMigrations: async () => migrations } });

/** Runs every pending migration; throws with the failing migration's name. */
export async function migrateToLatest(db: Db): Promise<void> {
  const { error, results } = await migratorOf(db).migrateToLatest();
  const failed = results?.find((r) => r.status === "Error");
  // Unreachable is not a failed migration: the caller may wait for the database and retry.
  if (error instanceof ApiError && error.code === "SERVICE_UNAVAILABLE") throw error;
  if (error) {
    throw new Error(`Migration ${failed?.migrationName ?? "(unknown)"} failed: ${String(error)}`);
  }
}

/** Migrates up or down to the migration `name` (tests of what one migration does to the data). */
export async function migrateTo(db: Db, name: string): Promise<void> {
  const { error } = await migratorOf(db).migrateTo(name);
  if (error) throw error;
}

/** Whether `select 1` answers within `timeoutMs` (health checks must not hang on a lost server). */
export async function databaseIsUp(db: Db, timeoutMs = 2000): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), timeoutMs);
  });
  try {
    return await Promise.race([
      sql`select 1`.execute(db).then(
        () => true,
        () => false,
      ),
      timeout,
    ]);
  } finally {
    clearTimeout(timer);
  }
}
