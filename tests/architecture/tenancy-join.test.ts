/**
 * The tenancy join is written once (issue 38 item 2): a workload belongs to an organization only
 * through environments -> projects, and apps/control-plane/src/db/owned.ts is the one
 * place that joins them (`ownedBy` with the organization filter, `withOwner` for the system's
 * own reads). A file that joins environments or projects by hand could forget the filter; this
 * test fails on it. The exceptions below are not tenancy lookups of a caller's input, each with
 * its reason.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";

const src = path.resolve(import.meta.dirname, "../../apps/control-plane/src");
const HELPER = "db/owned.ts";

/** A kysely join of environments or projects, or a raw SQL one, over line breaks too. */
const HAND_JOIN =
  /\b(?:inner|left|right|full|cross)Join\(\s*["'`](?:projects|environments)\b|\bjoin\s+(?:projects|environments)\b/gi;

const EXCEPTIONS: Record<string, string> = {
  "deployments/reconcile.ts":
    "the reconciler's raw statement reads every organization's settled services (no caller, no id of anyone's) to re-check their status; it reads the organization for the owner label only",
};

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    if (statSync(full).isDirectory()) return sources(full);
    return name.endsWith(".ts") && !name.endsWith(".test.ts") ? [full] : [];
  });
}

const handJoins = (text: string) => [...text.matchAll(HAND_JOIN)].map((match) => match[0]);

describe("tenancy join written once (issue 38)", () => {
  it("no control-plane source joins environments or projects outside db/owned.ts", () => {
    const files = sources(src);
    expect(files.length).toBeGreaterThan(100);
    const offenders = files.flatMap((file) => {
      const relative = path.relative(src, file).split(path.sep).join("/");
      if (relative === HELPER || relative in EXCEPTIONS) return [];
      const text = readFileSync(file, "utf8");
      return [...text.matchAll(HAND_JOIN)].map((match) => {
        const line = text.slice(0, match.index).split("\n").length;
        return `${relative}:${line}: ${match[0]} (use ownedBy/withOwner/ownedService of ${HELPER})`;
      });
    });
    expect(offenders).toEqual([]);
  });

  it("each exception still joins by hand (a stale exception is removed) and the helper does", () => {
    for (const file of [HELPER, ...Object.keys(EXCEPTIONS)]) {
      expect(handJoins(readFileSync(path.join(src, file), "utf8")).length, file).toBeGreaterThan(0);
    }
  });

  it("the rule sees each form of the join (it would fail on one)", () => {
    for (const line of [
      '.innerJoin("projects", "projects.projectId", "environments.projectId")',
      '.innerJoin("environments", "environments.environmentId", "applications.environmentId")',
      '.leftJoin("projects", "projects.projectId", "environments.projectId")',
      '.innerJoin(\n      "environments",\n      (join) => join.on("a", "=", "b"))',
      ".innerJoin('projects as p', 'p.projectId', 'e.projectId')",
      "sql`select 1 from compose s join environments e on e.environment_id = s.environment_id`",
      "inner join projects p on p.project_id = e.project_id",
    ]) {
      expect(handJoins(line), line).not.toEqual([]);
    }
    for (const line of [
      'ownedBy(db.selectFrom("applications"), "applications.environmentId", organizationId)',
      'db.selectFrom("projects").where("organizationId", "=", organizationId)',
      '.innerJoin("applications", "applications.applicationId", "ports.applicationId")',
      "// the environments join is written once",
    ]) {
      expect(handJoins(line), line).toEqual([]);
    }
  });
});
