/**
 * The argv of the dump, restore and check tools per kind. MongoDB cannot run on these machines
 * (no image, no binaries): mongo's backup and restore are tested here by their argv only; the
 * other kinds also run end to end (apps/control-plane/src/backups/e2e.test.ts).
 */
import { describe, expect, it } from "vitest";
import { checkAccess, checkCall, checkTableName, dumpCall, readyCall, restoreCall } from "./tools.ts";

const mongo = checkAccess({ kind: "mongo", databaseName: "shop", user: "root", password: "Mongo#1" });
const postgres = checkAccess({ kind: "postgres", databaseName: "shop", user: "app", password: "Pg#1" });

describe("backup tools", () => {
  it("mongo: mongodump --archive of the database, mongorestore --archive --drop of its namespace", () => {
    expect(dumpCall(mongo).cmd).toEqual([
      "mongodump",
      "--archive",
      "--db=shop",
      "--username=root",
      "--password=Mongo#1",
      "--authenticationDatabase=admin",
    ]);
    expect(restoreCall(mongo).cmd).toEqual([
      "mongorestore",
      "--archive",
      "--drop",
      "--nsInclude=shop.*",
      "--username=root",
      "--password=Mongo#1",
      "--authenticationDatabase=admin",
    ]);
    expect(checkCall(mongo, "orders").cmd.at(-1)).toBe('db.getCollection("orders").countDocuments()');
    expect(readyCall(mongo).cmd[0]).toBe("mongosh");
  });

  it("postgres: pg_dump -Fc and pg_restore --clean --if-exists, the password only in the environment", () => {
    const dump = dumpCall(postgres);
    expect(dump.cmd).toEqual(["pg_dump", "-Fc", "--no-password", "-U", "app", "-d", "shop"]);
    expect(dump.env).toEqual(["PGPASSWORD=Pg#1"]);
    expect(restoreCall(postgres).cmd).toEqual(
      expect.arrayContaining(["pg_restore", "--clean", "--if-exists"]),
    );
    expect(restoreCall(postgres).cmd.join(" ")).not.toContain("Pg#1");
    expect(checkCall(postgres, "public.orders").cmd.at(-1)).toBe('SELECT count(*) FROM "public"."orders"');
  });

  it("mysql and mariadb: --single-transaction, root's password in MYSQL_PWD, values as arguments of the shell", () => {
    const dump = dumpCall(
      checkAccess({ kind: "mariadb", databaseName: "shop", user: "root", password: "R#1" }),
    );
    expect(dump.cmd.slice(0, 2)).toEqual(["sh", "-c"]);
    expect(dump.cmd).toContain("--single-transaction");
    expect(dump.cmd.at(-1)).toBe("shop");
    expect(dump.env).toEqual(["MYSQL_PWD=R#1"]);
  });

  it("refuses names that are not names, and unknown kinds", () => {
    expect(() =>
      checkAccess({ kind: "postgres", databaseName: "shop; drop", user: "a", password: "" }),
    ).toThrow(/databaseName/);
    expect(() => checkAccess({ kind: "postgres", databaseName: "-shop", user: "a", password: "" })).toThrow();
    expect(() => checkAccess({ kind: "sqlite", databaseName: "x", user: "a", password: "" })).toThrow(/kind/);
    expect(() => checkTableName('orders"; drop table x; --')).toThrow(/checkTable/);
  });
});
