/**
 * The migrations after BASELINE only add (expand), so that through an upgrade the copies of the
 * previous release (install.sh --upgrade replaces them one at a time) run on the new schema: no
 * table or column dropped or renamed, no column's type changed or made NOT NULL, no NOT NULL
 * column added to an existing table without a default (the old code's inserts do not set it).
 * A contraction (dropping what the code no longer uses) goes in the release after the one that
 * stopped using it. Walks the up() of every migration index.ts lists after BASELINE.
 * tests/install/stack.test.ts runs the previous release's code on the new schema for real: the
 * old copies keep answering while the first new one has applied its migration.
 */
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { migrations } from "../../apps/control-plane/src/db/migrations/index.ts";

const MIGRATIONS = path.resolve(import.meta.dirname, "../../apps/control-plane/src/db/migrations");
/**
 * The last migration that contracted (it moved the backup runs' columns off `deployments` into
 * `backup_runs` and dropped them in the same release, docs/decisions.md): from the next one on,
 * every migration is additive.
 */
const BASELINE = "20261201-10-backup-runs";

/** The source of a migration's up(): from `function up` to the next exported function. */
function upSource(source: string): string {
  const start = source.search(/export\s+(async\s+)?function\s+up\b/);
  if (start < 0) return "";
  const rest = source.slice(start + 1);
  const end = rest.search(/\nexport\s+(async\s+)?function\s/);
  return end < 0 ? rest : rest.slice(0, end);
}

const CONTRACTIONS: [RegExp, string][] = [
  [/\.dropTable\(/, "drops a table"],
  [/\.dropColumn\(/, "drops a column"],
  [/\.renameColumn\(/, "renames a column"],
  [/\.renameTo\(/, "renames a table"],
  [/\.setDataType\(/, "changes a column's type"],
  [/\.setNotNull\(/, "makes a column NOT NULL"],
  [/\.dropConstraint\(/, "drops a constraint"],
  [/\bdrop\s+(table|column)\b/i, "drops a table or column (SQL)"],
  [/\brename\s+(to|column)\b/i, "renames (SQL)"],
  [/\balter\s+column\s+\S+\s+(set\s+data\s+)?type\b/i, "changes a column's type (SQL)"],
  [/\bset\s+not\s+null\b/i, "makes a column NOT NULL (SQL)"],
];

/** What in an up() would break the previous release's code on the new schema. */
function contractions(up: string): string[] {
  const found = CONTRACTIONS.filter(([pattern]) => pattern.test(up)).map(([, what]) => what);
  // A NOT NULL column without a default added to an existing table: the old code's inserts fail.
  for (const statement of up.split(/\.execute\(/)) {
    if (!/\.alterTable\(/.test(statement)) continue;
    for (const column of statement.split(/\.addColumn\(/).slice(1)) {
      if (/\bnotNull\(\)/.test(column) && !/\bdefaultTo\(/.test(column)) {
        found.push(`adds a NOT NULL column without a default: ${column.split(",")[0]}`);
      }
    }
  }
  for (const match of up.matchAll(/\badd\s+column\s+[^,;`]*/gi)) {
    if (/\bnot\s+null\b/i.test(match[0]) && !/\bdefault\b/i.test(match[0])) {
      found.push(`adds a NOT NULL column without a default (SQL): ${match[0].trim()}`);
    }
  }
  return found;
}

describe("migrations after the baseline only add (old and new releases share the schema)", () => {
  const names = Object.keys(migrations);

  it("lists every migration file, in order, the baseline among them", () => {
    const files = readdirSync(MIGRATIONS)
      .filter((name) => /^\d{8}-.*\.ts$/.test(name) && !name.endsWith(".test.ts"))
      .map((name) => name.replace(/\.ts$/, ""))
      .sort();
    expect(names).toEqual(files);
    expect(names).toContain(BASELINE);
  });

  it("finds no contraction in up() after the baseline", () => {
    const checked = names.slice(names.indexOf(BASELINE) + 1);
    expect(checked.length).toBeGreaterThan(0);
    const found = Object.fromEntries(
      checked
        .map((name): [string, string[]] => [
          name,
          contractions(upSource(readFileSync(path.join(MIGRATIONS, `${name}.ts`), "utf8"))),
        ])
        .filter(([, what]) => what.length > 0),
    );
    expect(found).toEqual({});
  });

  it("the check is real: the baseline itself, and each kind of contraction, are found", () => {
    expect(contractions(upSource(readFileSync(path.join(MIGRATIONS, `${BASELINE}.ts`), "utf8")))).toContain(
      "drops a column",
    );
    const up = (body: string) =>
      upSource(`export async function up(db) {\n${body}\n}\nexport async function down(db) {}`);
    expect(contractions(up(`await db.schema.alterTable("a").renameColumn("b", "c").execute();`))).toEqual([
      "renames a column",
    ]);
    expect(contractions(up("await sql`alter table a drop column b`.execute(db);"))).toEqual([
      "drops a table or column (SQL)",
    ]);
    expect(contractions(up("await sql`alter table a alter column b type bigint`.execute(db);"))).toEqual([
      "changes a column's type (SQL)",
    ]);
    expect(
      contractions(
        up(`await db.schema.alterTable("a").addColumn("b", "text", (c) => c.notNull()).execute();`),
      ),
    ).toEqual(['adds a NOT NULL column without a default: "b"']);
    expect(contractions(up("await sql`alter table a add column b text not null`.execute(db);"))).toEqual([
      "adds a NOT NULL column without a default (SQL): add column b text not null",
    ]);
    // What only adds passes: new tables, nullable columns, NOT NULL with a default, dropped NOT NULL.
    expect(
      contractions(
        up(`await db.schema.createTable("t").addColumn("id", "text", (c) => c.notNull()).execute();
await db.schema.alterTable("a").addColumn("b", "text").addColumn("c", "boolean", (c) => c.notNull().defaultTo(false)).execute();
await sql\`alter table a alter column d drop not null\`.execute(db);
await sql\`alter table a add column e text not null default ''\`.execute(db);`),
      ),
    ).toEqual([]);
    // down() is not checked: it runs only to go back.
    expect(
      contractions(
        upSource(
          `export async function up(db) {}\nexport async function down(db) {\n  await db.schema.dropTable("t").execute();\n}`,
        ),
      ),
    ).toEqual([]);
  });
});
