/**
 * Routers are thin (issue 38 item 2): they parse, authorize, call a feature function and shape
 * the answer; every query lives in a feature's repository, where its organization filter is
 * written once. No router source builds a query or opens a transaction.
 */
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";

const routers = path.resolve(import.meta.dirname, "../../apps/control-plane/src/routers");
const source = path.resolve(routers, "..");
const ROUTER_IMPORT = /from "(?:\.\.?\/)+routers\//;
const QUERY = /\b(?:selectFrom|insertInto|updateTable|deleteFrom)\b|\bsql`|\btransaction\(\)/;

describe("thin routers (issue 38)", () => {
  it("no router file builds a query or opens a transaction", () => {
    const files = readdirSync(routers).filter((file) => file.endsWith(".ts") && !file.endsWith(".test.ts"));
    expect(files.length).toBeGreaterThan(30);
    const offenders = files.flatMap((file) =>
      readFileSync(path.join(routers, file), "utf8")
        .split("\n")
        .flatMap((line, index) => (QUERY.test(line) ? [`${file}:${index + 1}: ${line.trim()}`] : [])),
    );
    expect(offenders).toEqual([]);
  });

  it("the rule sees each form of a query (it would fail on one)", () => {
    for (const line of [
      'db.selectFrom("projects")',
      'trx.insertInto("domains")',
      'db.updateTable("users")',
      'db.deleteFrom("mounts")',
      "sql`select 1`",
      "db.transaction().execute(",
    ]) {
      expect(QUERY.test(line), line).toBe(true);
    }
    expect(QUERY.test("findProject(db, organizationId, projectId)")).toBe(false);
  });

  it("dependencies point from routers to features: no module but app.ts imports a router file", () => {
    const files = (readdirSync(source, { recursive: true }) as string[]).filter(
      (file) => file.endsWith(".ts") && !file.endsWith(".test.ts") && !file.startsWith(`routers${path.sep}`),
    );
    expect(files.length).toBeGreaterThan(100);
    const offenders = files.filter(
      (file) => file !== "app.ts" && ROUTER_IMPORT.test(readFileSync(path.join(source, file), "utf8")),
    );
    expect(offenders).toEqual([]);
    expect(ROUTER_IMPORT.test('import { checkedContainer } from "../routers/docker.ts";')).toBe(true);
    expect(ROUTER_IMPORT.test('import { toBackupView } from "../backups/views.ts";')).toBe(false);
  });
});
