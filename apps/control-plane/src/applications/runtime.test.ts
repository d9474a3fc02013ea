/**
 * removeServiceOf: deleting an application or a database service whose server's agent cannot be
 * reached succeeds, and the leftover Swarm service is logged for each, naming what owned it.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Session, startTestPlatform, type TestPlatform } from "../testing/harness.ts";

let platform: TestPlatform;
let owner: Session;
let environmentId: string;
let serverId: string;
const as = (session: Session) => ({ token: session.token });

beforeAll(async () => {
  platform = await startTestPlatform({}, { agents: { localAgent: false } });
  owner = await platform.registerOwner();
  const project = await platform.mutateOk("project.create", { name: "Leftovers" }, as(owner));
  environmentId = project.environment.environmentId;
  const server = await platform.mutateOk(
    "server.create",
    { name: "unreachable", ipAddress: "203.0.113.22", port: 22, username: "root" },
    as(owner),
  );
  serverId = server.serverId;
});
afterAll(() => platform?.close());

const leftoverWarnings = (appName: string) =>
  platform.logLines
    .map((line) => JSON.parse(line) as { msg: string; appName?: string; serverId?: string })
    .filter((entry) => entry.appName === appName && /could not be removed/.test(entry.msg));

describe("removing the service of something deleted on an unreachable server", () => {
  it("deletes the application and logs its leftover service", async () => {
    const app = await platform.mutateOk(
      "application.create",
      { name: "gone", appName: "leftover-app", environmentId, serverId },
      as(owner),
    );
    expect(
      (await platform.mutate("application.delete", { applicationId: app.applicationId }, as(owner))).status,
    ).toBe(200);
    expect(
      (await platform.query("application.one", { applicationId: app.applicationId }, as(owner))).status,
    ).toBe(404);
    expect(leftoverWarnings("leftover-app")).toEqual([
      expect.objectContaining({
        serverId,
        msg: "the application's service could not be removed: its server's agent is unreachable",
      }),
    ]);
  });

  it("removes the database service and logs its leftover service", async () => {
    const created = await platform.mutateOk(
      "postgres.create",
      {
        name: "gone db",
        appName: "leftover-db",
        environmentId,
        serverId,
        databaseName: "shop",
        databaseUser: "shopper",
        databasePassword: "s3cret-Pass@1",
      },
      as(owner),
    );
    expect(
      (await platform.mutate("postgres.remove", { postgresId: created.postgresId }, as(owner))).status,
    ).toBe(200);
    expect((await platform.query("postgres.one", { postgresId: created.postgresId }, as(owner))).status).toBe(
      404,
    );
    expect(leftoverWarnings("leftover-db")).toEqual([
      expect.objectContaining({
        serverId,
        msg: "the database's service could not be removed: its server's agent is unreachable",
      }),
    ]);
  });
});
