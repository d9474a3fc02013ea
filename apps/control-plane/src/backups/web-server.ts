/**
 * The control plane's own database as a backup (Dokploy's "web-server" backup, issue 32 item 2):
 * every row of every table of the schema, read in one REPEATABLE READ READ ONLY transaction (a
 * consistent snapshot while the control plane keeps serving), written as gzipped JSON lines
 * straight into a multipart upload (nothing on the control plane's disk; the object exists only
 * once the whole dump was read). Restoring needs an empty database migrated to the same
 * migrations the dump names (the same version of the platform): the rows are inserted with
 * foreign keys unchecked until the end (session_replication_role = replica, which the
 * database's owner must be allowed to set) and sequences set past their columns' values, in one
 * transaction. Sealed secrets stay sealed: the installation rebuilt from a backup needs the same
 * PLATFORM_SECRET_KEY.
 *
 * Format: line 1 `{"format":"platform-web-server/1","migrations":[...],"tables":[...]}`, then for
 * each table `["table","<name>"]` followed by one `["row",{...}]` line per row.
 */
import { createInterface } from "node:readline";
import { PassThrough, pipeline } from "node:stream";
import { createGunzip, createGzip } from "node:zlib";
import type { ObjectStorage } from "@platform/agent-protocol";
import { downloadObject, uploadObject } from "@platform/object-storage";
import { sql } from "kysely";
import type { Db } from "../db/database.ts";

export const WEB_SERVER_FORMAT = "platform-web-server/1";
const MIGRATION_TABLES = ["kysely_migration", "kysely_migration_lock"];
const FETCH = 500;

async function tablesOf(db: Db): Promise<string[]> {
  const result = await sql<{ name: string }>`
    select table_name as name from information_schema.tables
    where table_schema = 'public' and table_type = 'BASE TABLE' order by table_name`.execute(db);
  return result.rows.map((row) => row.name).filter((name) => !MIGRATION_TABLES.includes(name));
}

async function migrationsOf(db: Db): Promise<string[]> {
  const result = await sql<{ name: string }>`select name from kysely_migration order by name`.execute(db);
  return result.rows.map((row) => row.name);
}

const ident = (name: string) => sql.id(name);

/**
 * Dumps the database into `key` of `storage`; answers the bytes uploaded and the rows written.
 * Used by the scheduled and manual runs (web-server-runs.ts) and the command line alike; an
 * aborted `signal` aborts the upload (no object).
 */
export async function backupWebServer(
  db: Db,
  storage: ObjectStorage,
  key: string,
  signal?: AbortSignal,
): Promise<{ sizeBytes: number; rows: number; tables: number }> {
  const body = new PassThrough();
  const gzip = createGzip({ level: 6 });
  gzip.pipe(body);
  const write = (line: unknown) =>
    new Promise<void>((resolve, reject) => {
      const ok = gzip.write(`${JSON.stringify(line)}\n`, (error) => (error ? reject(error) : undefined));
      if (ok) resolve();
      else gzip.once("drain", resolve);
    });
  const upload = uploadObject(storage, key, body);
  let rows = 0;
  let tables: string[] = [];
  try {
    await db
      .transaction()
      .setIsolationLevel("repeatable read")
      .setAccessMode("read only")
      .execute(async (trx) => {
        tables = await tablesOf(trx);
        await write({ format: WEB_SERVER_FORMAT, migrations: await migrationsOf(trx), tables });
        for (const table of tables) {
          await write(["table", table]);
          await sql`declare platform_dump no scroll cursor for select row_to_json(t)::text as row from ${ident(table)} t`.execute(
            trx,
          );
          for (;;) {
            const page = await sql<{
              row: string;
            }>`fetch ${sql.raw(String(FETCH))} from platform_dump`.execute(trx);
            signal?.throwIfAborted();
            for (const row of page.rows) {
              await write(["row", JSON.parse(row.row)]);
              rows++;
            }
            if (page.rows.length < FETCH) break;
          }
          await sql`close platform_dump`.execute(trx);
        }
      });
  } catch (error) {
    // The upload is aborted, never completed: no object that looks whole.
    gzip.destroy(error as Error);
    body.destroy(error as Error);
    await upload.catch(() => {});
    throw error;
  }
  gzip.end();
  const sizeBytes = await upload;
  return { sizeBytes, rows, tables: tables.length };
}

/**
 * Restores a dump into `db`, which must be migrated to the dump's migrations and hold no user
 * yet (a fresh installation). Answers the rows inserted.
 */
export async function restoreWebServer(
  db: Db,
  storage: ObjectStorage,
  key: string,
): Promise<{ rows: number }> {
  const users = await sql<{ n: number }>`select count(*)::int as n from users`.execute(db);
  if ((users.rows[0]?.n ?? 0) > 0)
    throw new Error("The database is not empty: restore into a fresh installation");
  const { body } = await downloadObject(storage, key);
  const gunzip = createGunzip();
  const text = new PassThrough();
  // A read or gunzip error ends the lines; it is thrown once they are read.
  let streamError: Error | undefined;
  pipeline(body, gunzip, text, (error) => {
    if (error) {
      streamError = error;
      lines.close();
    }
  });
  const lines = createInterface({ input: text, crlfDelay: Number.POSITIVE_INFINITY });
  // Iterated from now on: lines read before a loop starts would otherwise be lost.
  const iterator = lines[Symbol.asyncIterator]();
  let rows = 0;
  await db.transaction().execute(async (trx) => {
    await sql`set local session_replication_role = replica`.execute(trx);
    let header: { format: string; migrations: string[]; tables: string[] } | undefined;
    let table: string | undefined;
    let batch: unknown[] = [];
    const flush = async () => {
      if (!table || batch.length === 0) return;
      await sql`insert into ${ident(table)} select * from json_populate_recordset(null::${ident(table)}, ${JSON.stringify(batch)}::json)`.execute(
        trx,
      );
      rows += batch.length;
      batch = [];
    };
    for await (const line of { [Symbol.asyncIterator]: () => iterator }) {
      if (!line) continue;
      if (!header) {
        header = JSON.parse(line);
        if (header?.format !== WEB_SERVER_FORMAT) throw new Error(`Not a ${WEB_SERVER_FORMAT} backup`);
        const here = await migrationsOf(trx);
        if (JSON.stringify(here) !== JSON.stringify(header.migrations)) {
          throw new Error(
            `The backup was made by another version of the platform (its last migration: ${header.migrations.at(-1)}, this one's: ${here.at(-1)}): restore with that version, then upgrade`,
          );
        }
        // A fresh installation's own rows (the instance settings) give way to the backup's.
        for (const name of header.tables) await sql`delete from ${ident(name)}`.execute(trx);
        continue;
      }
      const [kind, value] = JSON.parse(line) as [string, unknown];
      if (kind === "table") {
        await flush();
        table = value as string;
        if (!header.tables.includes(table)) throw new Error(`Unknown table ${table} in the backup`);
      } else {
        batch.push(value);
        if (batch.length >= FETCH) await flush();
      }
    }
    if (streamError) throw new Error(`The backup could not be read whole: ${streamError.message}`);
    await flush();
    if (!header) throw new Error("The backup is empty");
    // Sequences (serial columns) continue after the restored values.
    const sequences = await sql<{ table: string; column: string; sequence: string }>`
      select c.table_name as table, c.column_name as column,
        pg_get_serial_sequence(quote_ident(c.table_name), c.column_name) as sequence
      from information_schema.columns c
      where c.table_schema = 'public' and pg_get_serial_sequence(quote_ident(c.table_name), c.column_name) is not null`.execute(
      trx,
    );
    for (const row of sequences.rows) {
      await sql`select setval(${row.sequence}, coalesce((select max(${ident(row.column)}) from ${ident(row.table)}), 0) + 1, false)`.execute(
        trx,
      );
    }
  });
  return { rows };
}
