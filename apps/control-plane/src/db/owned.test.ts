/**
 * The tenancy join written once (db/owned.ts): ownedService finds a workload of the
 * caller's organization and answers null for another organization's id (or a database of
 * another kind); ownedBy scopes a child table through its parent service; withOwner reads the
 * organization of any row, for the system's own reads.
 */
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { newId } from "../crypto/ids.ts";
import { createUserDirectly } from "../projects/test-support.ts";
import { type Session, startTestPlatform, type TestPlatform } from "../testing/harness.ts";
import { ownedBy, ownedService, withOwner } from "./owned.ts";

type Made = { applicationId: string; composeId: string; postgresId: string; portId: string };

describe("tenancy join (db/owned.ts)", () => {
  let platform: TestPlatform;
  let owner: Session;
  let stranger: Session;
  let ours: Made;
  let theirs: Made;
  const as = (session: Session) => ({ token: session.token });

  async function make(session: Session, label: string, publishedPort: number): Promise<Made> {
    const project = await platform.mutateOk("project.create", { name: `${label} shop` }, as(session));
    const environmentId = project.environment.environmentId as string;
    const app = await platform.mutateOk(
      "application.create",
      { name: `${label} web`, environmentId },
      as(session),
    );
    const stack = await platform.mutateOk(
      "compose.create",
      {
        name: `${label} stack`,
        appName: `${label}-stack`,
        environmentId,
        composeFile: "services:\n  web:\n    image: busybox\n",
      },
      as(session),
    );
    const postgres = await platform.mutateOk(
      "postgres.create",
      {
        name: `${label} db`,
        appName: `${label}-db`,
        environmentId,
        databasePassword: "fixture-Pass1",
        databaseName: "shop",
        databaseUser: "shopper",
      },
      as(session),
    );
    const portId = newId();
    await platform.ctx.db
      .insertInto("ports")
      .values({ portId, applicationId: app.applicationId, publishedPort, targetPort: 80 })
      .execute();
    return {
      applicationId: app.applicationId,
      composeId: stack.composeId,
      postgresId: postgres.postgresId,
      portId,
    };
  }

  beforeAll(async () => {
    platform = await startTestPlatform();
    owner = await platform.registerOwner();
    stranger = await createUserDirectly(platform, { email: "owned-stranger@example.com" });
    ours = await make(owner, "ours", 18091);
    theirs = await make(stranger, "theirs", 18092);
  }, 120_000);

  afterAll(async () => {
    await platform?.close();
  });

  it("ownedService finds each kind of the organization's services, by caller or organization id", async () => {
    const db = platform.ctx.db;
    const organizationId = owner.user.organizationId;
    expect((await ownedService(db, organizationId, "application", ours.applicationId))?.applicationId).toBe(
      ours.applicationId,
    );
    expect((await ownedService(db, { organizationId }, "compose", ours.composeId))?.composeId).toBe(
      ours.composeId,
    );
    expect((await ownedService(db, organizationId, "postgres", ours.postgresId))?.databaseId).toBe(
      ours.postgresId,
    );
  });

  it("ownedService answers null for another organization's id and for a database of another kind", async () => {
    const db = platform.ctx.db;
    const organizationId = owner.user.organizationId;
    expect(await ownedService(db, organizationId, "application", theirs.applicationId)).toBeNull();
    expect(await ownedService(db, organizationId, "compose", theirs.composeId)).toBeNull();
    expect(await ownedService(db, organizationId, "postgres", theirs.postgresId)).toBeNull();
    // Our own postgres asked for as a redis is not a redis of ours.
    expect(await ownedService(db, organizationId, "redis", ours.postgresId)).toBeNull();
    // The rows exist: the null comes from the organization, not from a missing row.
    expect(
      await ownedService(db, stranger.user.organizationId, "application", theirs.applicationId),
    ).not.toBeNull();
  });

  it("ownedBy scopes a child table through its parent service", async () => {
    const db = platform.ctx.db;
    const ports = (organizationId: string) =>
      ownedBy(
        db.selectFrom("ports").innerJoin("applications", "applications.applicationId", "ports.applicationId"),
        "applications.environmentId",
        organizationId,
      )
        .select("ports.portId")
        .where("ports.portId", "in", [ours.portId, theirs.portId])
        .execute();
    expect((await ports(owner.user.organizationId)).map((row) => row.portId)).toEqual([ours.portId]);
    expect((await ports(stranger.user.organizationId)).map((row) => row.portId)).toEqual([theirs.portId]);
  });

  it("ownedBy takes an environment expression (a child of an application or a compose stack)", async () => {
    const db = platform.ctx.db;
    const found = await ownedBy(
      db.selectFrom("compose as c").leftJoin("applications", (join) => join.on(sql<boolean>`false`)),
      sql<string>`coalesce(applications.environment_id, c.environment_id)`,
      owner.user.organizationId,
    )
      .select("c.composeId")
      .where("c.composeId", "in", [ours.composeId, theirs.composeId])
      .execute();
    expect(found.map((row) => row.composeId)).toEqual([ours.composeId]);
  });

  it("withOwner reads the organization of any organization's row (the system's own reads)", async () => {
    const rows = await withOwner(platform.ctx.db.selectFrom("compose"), "compose.environmentId")
      .select(["compose.composeId", "projects.organizationId"])
      .where("compose.composeId", "in", [ours.composeId, theirs.composeId])
      .execute();
    expect(Object.fromEntries(rows.map((row) => [row.composeId, row.organizationId]))).toEqual({
      [ours.composeId]: owner.user.organizationId,
      [theirs.composeId]: stranger.user.organizationId,
    });
  });
});
