/**
 * The README's "What works today" table stays true: every procedure it says answers is served
 * (anything but "No procedure named" 404), and every one it says is not built yet still answers
 * that 404, so a change either way fails here until the table is updated. The procedures are
 * called through an in-process control plane, the way any client reaches them.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestPlatform, type TestPlatform } from "../../apps/control-plane/src/testing/harness.ts";

const root = path.resolve(import.meta.dirname, "../..");

interface StatusRow {
  area: string;
  status: string;
  answers: string[];
  notYet: string[];
}

/** "project.create, .one, environment.one" → ["project.create", "project.one", "environment.one"]. */
function procedureNames(cell: string): string[] {
  let router = "";
  const names: string[] = [];
  for (const item of cell.split(",").map((part) => part.trim().replace(/`/g, ""))) {
    if (item === "") continue;
    if (item.startsWith(".")) {
      if (!router) throw new Error(`"${item}" has no router before it`);
      names.push(`${router}${item}`);
    } else {
      router = item.split(".")[0]!;
      names.push(item);
    }
  }
  return names;
}

function statusTable(readme: string): StatusRow[] {
  const start = readme.indexOf("## What works today");
  const section = readme.slice(start, readme.indexOf("\n## ", start + 1));
  const lines = section.split("\n").filter((line) => line.startsWith("|"));
  return lines.slice(2).map((line) => {
    const cells = line.split("|").slice(1, -1);
    if (cells.length !== 4) throw new Error(`a status row needs 4 cells: ${line}`);
    const [area, status, answers, notYet] = cells as [string, string, string, string];
    return {
      area: area.trim(),
      status: status.trim(),
      answers: procedureNames(answers),
      notYet: procedureNames(notYet),
    };
  });
}

describe("the README's status table", () => {
  const rows = statusTable(readFileSync(path.join(root, "README.md"), "utf8"));
  let platform: TestPlatform;
  beforeAll(async () => {
    platform = await startTestPlatform();
  });
  afterAll(() => platform.close());

  const missing = async (name: string) => {
    const { status, body } = await platform.request(`/api/${name}`);
    return status === 404 && String(body?.error?.message).startsWith("No procedure named");
  };

  it("is there, with one of three statuses per area", () => {
    expect(rows.length).toBeGreaterThan(10);
    for (const row of rows) {
      expect(row.status, row.area).toMatch(/^(works|partial|not yet)\b/);
      if (row.status.startsWith("works")) expect(row.notYet, row.area).toEqual([]);
      if (row.status.startsWith("not yet")) expect(row.answers, row.area).toEqual([]);
    }
  });

  it("says works only of procedures that answer", async () => {
    const absent: string[] = [];
    for (const name of rows.flatMap((row) => row.answers)) if (await missing(name)) absent.push(name);
    expect(absent, "the README says these answer; update its table").toEqual([]);
  });

  it("says not yet only of procedures that are still missing", async () => {
    const present: string[] = [];
    for (const name of rows.flatMap((row) => row.notYet)) if (!(await missing(name))) present.push(name);
    expect(present, "these answer now; move them in the README's table").toEqual([]);
  });

  it("reads names the way the README writes them", () => {
    expect(procedureNames("project.create, .one, environment.one, .remove")).toEqual([
      "project.create",
      "project.one",
      "environment.one",
      "environment.remove",
    ]);
    expect(() => procedureNames(".one")).toThrow();
  });
});
