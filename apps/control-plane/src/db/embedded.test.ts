/**
 * The embedded PostgreSQL in temporary data directories: control planes starting together on
 * one directory share one server (never two on a directory), and once opened it is Postgres
 * as any other: migrations, a second pool, LISTEN/NOTIFY across them.
 */
import { chmod, mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { sql } from "kysely";
import { afterAll, describe, expect, it } from "vitest";
import { postmasterPid } from "../testing/processes.ts";
import { migrateToLatest, openDatabase } from "./database.ts";
import { startEmbeddedPostgres } from "./embedded.ts";

const directories: string[] = [];

afterAll(async () => {
  for (const dir of directories) await rm(dir, { recursive: true, force: true, maxRetries: 5 });
});

/** A data directory the server's system user can enter when the test runs as root. */
async function dataDirectory(): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), "platform-embedded-db-"));
  await chmod(dir, 0o755);
  directories.push(dir);
  return dir;
}

describe("the embedded PostgreSQL", () => {
  it("serves control planes that start together on one directory from one server", async () => {
    const dir = await dataDirectory();
    await (await startEmbeddedPostgres(dir)).stop();
    const [a, b] = await Promise.all([startEmbeddedPostgres(dir), startEmbeddedPostgres(dir)]);
    try {
      expect(a.url).toBe(b.url);
      const pid = postmasterPid(dir);
      const postmasters = (await readFile(`/proc/${pid}/cmdline`, "utf8")).split("\0");
      expect(postmasters.slice(1, 3)).toEqual(["-D", path.join(dir, "postgres")]);
    } finally {
      await a.stop();
    }
  }, 120_000);

  it("is Postgres once opened: migrations, and a NOTIFY of one pool reaching the other's listener", async () => {
    const dir = await dataDirectory();
    const first = await openDatabase({ kind: "embedded", dataDir: dir });
    const second = await openDatabase({ kind: "embedded", dataDir: dir });
    try {
      expect(first.kind).toBe("embedded");
      await migrateToLatest(first.db);
      let heard = 0;
      const notifications = await second.listen("embedded_test", () => heard++);
      const before = heard;
      await sql`select pg_notify('embedded_test', 'x')`.execute(first.db);
      await notifications.fence();
      expect(heard).toBeGreaterThan(before);
      const { rows } = await sql<{ n: number }>`select count(*)::int as n from kysely_migration`.execute(
        second.db,
      );
      expect(rows[0]?.n).toBeGreaterThan(0);
      await notifications.close();
    } finally {
      await second.close();
      await first.close();
    }
  }, 120_000);
});
