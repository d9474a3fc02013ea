/**
 * Opens the database: Postgres through `pg` when a URL is given, embedded PGlite in the data
 * directory otherwise. Both return timestamps as ISO strings and bigints as numbers, so the
 * rest of the code never sees a driver difference.
 */
import { mkdirSync } from "node:fs";
import path from "node:path";
import { PGlite } from "@electric-sql/pglite";
import {
  CamelCasePlugin,
  Kysely,
  type KyselyPlugin,
  Migrator,
  type PluginTransformResultArgs,
  PostgresDialect,
  type QueryResult,
  sql,
  type UnknownRow,
} from "kysely";
import { PGliteDialect } from "kysely-pglite-dialect";
import pg from "pg";
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

export type DatabaseTarget = { kind: "postgres"; url: string } | { kind: "pglite"; dataDir: string | null };

export interface OpenDatabase {
  db: Db;
  kind: DatabaseTarget["kind"];
  close(): Promise<void>;
}

export function openDatabase(target: DatabaseTarget): OpenDatabase {
  const plugins = [new CamelCasePlugin(), new DatesAsIsoStrings()];
  if (target.kind === "postgres") {
    const types = {
      getTypeParser(oid: number, format?: "text" | "binary") {
        if (oid === INT8_OID || oid === NUMERIC_OID) return Number;
        return pg.types.getTypeParser(oid, format);
      },
    };
    const pool = new pg.Pool({ connectionString: target.url, max: 10, types: types as pg.CustomTypesConfig });
    const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }), plugins });
    return { db, kind: "postgres", close: () => db.destroy() };
  }
  let dataDir: string | undefined;
  if (target.dataDir) {
    dataDir = path.resolve(target.dataDir, "pglite");
    mkdirSync(dataDir, { recursive: true });
  }
  const client = new PGlite(dataDir, {
    parsers: {
      [INT8_OID]: Number,
      [NUMERIC_OID]: Number,
    },
  });
  const db = new Kysely<Database>({ dialect: new PGliteDialect(client), plugins });
  return { db, kind: "pglite", close: () => db.destroy() };
}

/** Runs every pending migration; throws with the failing migration's name. */
export async function migrateToLatest(db: Db): Promise<void> {
  const migrator = new Migrator({
    db,
    provider: { getMigrations: async () => migrations },
  });
  const { error, results } = await migrator.migrateToLatest();
  const failed = results?.find((r) => r.status === "Error");
  if (error) {
    throw new Error(`Migration ${failed?.migrationName ?? "(unknown)"} failed: ${String(error)}`);
  }
}

export async function databaseIsUp(db: Db): Promise<boolean> {
  try {
    await sql`select 1`.execute(db);
    return true;
  } catch {
    return false;
  }
}
