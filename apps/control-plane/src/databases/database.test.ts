/**
 * The database routers without Docker: validation (400 naming the field, nothing created), the
 * rows and their sealed passwords, `one`'s URLs, another organization's 404, host-port rules,
 * the `/api/<kind>/<operation>` form, and the project views and duplicate that include them.
 * Deployments on real Docker: databases/e2e.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createUserDirectly } from "../projects/test-support.ts";
import { type Session, startTestPlatform, type TestPlatform } from "../testing/harness.ts";
import { buildDatabaseSpec } from "./deploy.ts";
import { databaseKindFacts, databaseKinds } from "./kinds.ts";

let platform: TestPlatform;
let owner: Session;
let stranger: Session;
let environmentId: string;
let projectId: string;
const as = (session: Session) => ({ token: session.token });
let counter = 0;
const appName = (kind: string) => `t-${kind}-${++counter}`;

/** A valid create input of each kind. */
function createInput(kind: (typeof databaseKinds)[number]): Record<string, unknown> {
  const input: Record<string, unknown> = {
    name: `${kind} db`,
    appName: appName(kind),
    environmentId,
    databasePassword: "s3cret-Pass@1",
  };
  const { fields } = databaseKindFacts[kind];
  if (fields.databaseName) input.databaseName = "shop";
  if (fields.databaseUser) input.databaseUser = "shopper";
  if (fields.databaseRootPassword === "required") input.databaseRootPassword = "r00t-Pass";
  if (fields.sqld) input.sqldNode = "primary";
  return input;
}

/** Whether the kind serves `procedure` (libsql, as Dokploy's, has no changePassword nor search). */
const serves = (kind: (typeof databaseKinds)[number], procedure: string) =>
  !(databaseKindFacts[kind].omits ?? []).some((omitted) => omitted === procedure);

async function countRows(): Promise<number> {
  const row = await platform.ctx.db
    .selectFrom("databaseServices")
    .select((eb) => eb.fn.countAll<number>().as("count"))
    .executeTakeFirstOrThrow();
  return Number(row.count);
}

beforeAll(async () => {
  platform = await startTestPlatform({}, { agents: { localAgent: false } });
  owner = await platform.registerOwner();
  stranger = await createUserDirectly(platform, { email: "stranger@example.com" });
  const project = await platform.mutateOk("project.create", { name: "Shop" }, as(owner));
  environmentId = project.environment.environmentId;
  projectId = project.project.projectId;
});
afterAll(() => platform?.close());

describe.each(databaseKinds)("%s", (kind) => {
  const { idKey } = databaseKindFacts[kind];

  it("creates a service (idle, the default image) and shows it with its credentials and URLs", async () => {
    const input = createInput(kind);
    const created = await platform.mutateOk(`${kind}.create`, input, as(owner));
    expect(created).toMatchObject({
      name: input.name,
      appName: input.appName,
      applicationStatus: "idle",
      dockerImage: databaseKindFacts[kind].defaultImage,
      externalPort: null,
    });
    const id = created[idKey];
    const one = await platform.query(`${kind}.one`, { [idKey]: id }, as(owner));
    expect(one.status).toBe(200);
    expect(one.body.databasePassword).toBe("s3cret-Pass@1");
    expect(one.body.internalConnectionUrl).toContain(`@${input.appName}:${databaseKindFacts[kind].port}`);
    expect(one.body.externalConnectionUrl).toBeNull();
    expect(one.body.environment.project.projectId).toBe(projectId);

    // At rest the password is sealed, never stored as given.
    const row = await platform.ctx.db
      .selectFrom("databaseServices")
      .selectAll()
      .where("databaseId", "=", id)
      .executeTakeFirstOrThrow();
    expect(row.databasePasswordSealed).not.toContain("s3cret");

    // The project shows it under its kind's field.
    const project = await platform.query("project.one", { projectId }, as(owner));
    const field = kind === "postgres" ? "postgres" : kind;
    expect(project.body.environments[0][field].map((s: Record<string, string>) => s[idKey])).toContain(id);
  });

  it("refuses a password outside the pattern, a bad appName and a missing field: 400 naming it, nothing created", async () => {
    const before = await countRows();
    const cases: [Record<string, unknown>, string][] = [
      [{ ...createInput(kind), databasePassword: "has space" }, "databasePassword"],
      [{ ...createInput(kind), databasePassword: "quote'" }, "databasePassword"],
      [{ ...createInput(kind), appName: "../etc" }, "appName"],
      [{ ...createInput(kind), appName: "a b;rm -rf" }, "appName"],
    ];
    for (const required of Object.keys(createInput(kind)).filter((key) => key !== "environmentId")) {
      const input = createInput(kind);
      delete input[required];
      cases.push([input, required]);
    }
    for (const [input, field] of cases) {
      const answer = await platform.mutate(`${kind}.create`, input, as(owner));
      expect(answer.status, `${field}: ${JSON.stringify(answer.body)}`).toBe(400);
      expect(JSON.stringify(answer.body)).toContain(field);
    }
    expect(await countRows()).toBe(before);
  });

  it("is a 404 to another organization for every procedure, and changes nothing", async () => {
    const created = await platform.mutateOk(`${kind}.create`, createInput(kind), as(owner));
    const id = created[idKey];
    const calls: [string, Record<string, unknown>][] = [
      ["deploy", {}],
      ["start", {}],
      ["stop", {}],
      ["update", { name: "taken" }],
      ["saveExternalPort", { externalPort: 25432 }],
      ["saveEnvironment", { env: "A=1" }],
      ["reload", { appName: created.appName }],
      ["rebuild", {}],
      ["changePassword", { password: "0ther-Pass" }],
      ["changeStatus", { applicationStatus: "error" }],
      ["move", { targetEnvironmentId: environmentId }],
      ["remove", {}],
    ].filter(([operation]) => serves(kind, operation as string)) as [string, Record<string, unknown>][];
    if (databaseKindFacts[kind].extraPorts) calls.push(["saveExternalPorts", { externalPort: 25433 }]);
    expect((await platform.query(`${kind}.one`, { [idKey]: id }, as(stranger))).status).toBe(404);
    for (const [operation, extra] of calls) {
      const answer = await platform.mutate(`${kind}.${operation}`, { [idKey]: id, ...extra }, as(stranger));
      expect(answer.status, `${operation}: ${JSON.stringify(answer.body)}`).toBe(404);
    }
    const one = await platform.query(`${kind}.one`, { [idKey]: id }, as(owner));
    expect(one.body).toMatchObject({
      name: created.name,
      externalPort: null,
      env: null,
      applicationStatus: "idle",
      environmentId,
      databasePassword: "s3cret-Pass@1",
    });
    if (serves(kind, "search")) {
      const search = await platform.query(`${kind}.search`, { q: created.appName }, as(stranger));
      expect(search.body).toEqual({ items: [], total: 0 });
    }
    const deployments = await platform.query("deployment.allByType", { id, type: kind }, as(owner));
    expect(deployments.body).toEqual([]);
    expect((await platform.query("deployment.allByType", { id, type: kind }, as(stranger))).status).toBe(404);
  });

  it("updates settings and refuses a bad password on update", async () => {
    const created = await platform.mutateOk(`${kind}.create`, createInput(kind), as(owner));
    const id = created[idKey];
    const bad = await platform.mutate(
      `${kind}.update`,
      { [idKey]: id, databasePassword: "no spaces" },
      as(owner),
    );
    expect(bad.status).toBe(400);
    expect(JSON.stringify(bad.body)).toContain("databasePassword");
    await platform.mutateOk(
      `${kind}.update`,
      { [idKey]: id, name: "renamed", memoryLimit: "256m", cpuLimit: "0.5", databasePassword: "n3w-Pass" },
      as(owner),
    );
    await platform.mutateOk(`${kind}.saveEnvironment`, { [idKey]: id, env: "EXTRA=1" }, as(owner));
    const one = (await platform.query(`${kind}.one`, { [idKey]: id }, as(owner))).body;
    expect(one).toMatchObject({ name: "renamed", memoryLimit: "256m", cpuLimit: "0.5", env: "EXTRA=1" });
    expect(one.databasePassword).toBe("n3w-Pass");
  });
});

describe.each(databaseKinds)("%s changePassword, changeStatus, move and search", (kind) => {
  const { idKey, fields } = databaseKindFacts[kind];

  it.runIf(serves(kind, "changePassword"))(
    "changePassword stores the password of a never deployed service (its first deploy uses it) and refuses a bad one",
    async () => {
      const created = await platform.mutateOk(`${kind}.create`, createInput(kind), as(owner));
      const id = created[idKey];
      const bad = await platform.mutate(
        `${kind}.changePassword`,
        { [idKey]: id, password: "no spaces" },
        as(owner),
      );
      expect(bad.status).toBe(400);
      expect(JSON.stringify(bad.body)).toContain("password");
      await platform.mutateOk(`${kind}.changePassword`, { [idKey]: id, password: "Chang3d-Pass" }, as(owner));
      let one = (await platform.query(`${kind}.one`, { [idKey]: id }, as(owner))).body;
      expect(one.databasePassword).toBe("Chang3d-Pass");
      expect(one.internalConnectionUrl).toContain("Chang3d-Pass");
      if (fields.databaseRootPassword) {
        await platform.mutateOk(
          `${kind}.changePassword`,
          { [idKey]: id, password: "R00t-Changed", type: "root" },
          as(owner),
        );
        one = (await platform.query(`${kind}.one`, { [idKey]: id }, as(owner))).body;
        expect(one).toMatchObject({ databasePassword: "Chang3d-Pass", databaseRootPassword: "R00t-Changed" });
      } else {
        const typed = await platform.mutate(
          `${kind}.changePassword`,
          { [idKey]: id, password: "R00t-Changed", type: "root" },
          as(owner),
        );
        expect(typed.status).toBe(400);
        expect(JSON.stringify(typed.body)).toContain("type");
      }
    },
  );

  it("changeStatus sets the status by hand and refuses an unknown one", async () => {
    const created = await platform.mutateOk(`${kind}.create`, createInput(kind), as(owner));
    const id = created[idKey];
    const changed = await platform.mutateOk(
      `${kind}.changeStatus`,
      { [idKey]: id, applicationStatus: "error" },
      as(owner),
    );
    expect(changed).toMatchObject({ [idKey]: id, applicationStatus: "error" });
    expect((await platform.query(`${kind}.one`, { [idKey]: id }, as(owner))).body.applicationStatus).toBe(
      "error",
    );
    const bad = await platform.mutate(
      `${kind}.changeStatus`,
      { [idKey]: id, applicationStatus: "paused" },
      as(owner),
    );
    expect(bad.status).toBe(400);
    expect(JSON.stringify(bad.body)).toContain("applicationStatus");
  });

  it("move takes the service to another environment of the organization; another organization's is a 404", async () => {
    const created = await platform.mutateOk(`${kind}.create`, createInput(kind), as(owner));
    const id = created[idKey];
    const other = await platform.mutateOk(
      "project.create",
      { name: `Elsewhere ${kind} ${++counter}` },
      as(owner),
    );
    const target = other.environment.environmentId as string;
    const moved = await platform.mutateOk(
      `${kind}.move`,
      { [idKey]: id, targetEnvironmentId: target },
      as(owner),
    );
    expect(moved).toMatchObject({ [idKey]: id, environmentId: target });
    const one = (await platform.query(`${kind}.one`, { [idKey]: id }, as(owner))).body;
    expect(one.environment).toMatchObject({
      environmentId: target,
      project: { projectId: other.project.projectId },
    });
    const foreign = await platform.mutateOk("project.create", { name: `Foreign ${kind}` }, as(stranger));
    const refused = await platform.mutate(
      `${kind}.move`,
      { [idKey]: id, targetEnvironmentId: foreign.environment.environmentId },
      as(owner),
    );
    expect(refused.status, JSON.stringify(refused.body)).toBe(404);
    expect((await platform.query(`${kind}.one`, { [idKey]: id }, as(owner))).body.environmentId).toBe(target);
  });

  it.runIf(serves(kind, "search"))(
    "search matches name, appName and description partially, filters by project and environment, and pages",
    async () => {
      const tag = `srch${++counter}`;
      const ids: string[] = [];
      for (const [name, description] of [
        [`Orders ${tag}`, "primary store"],
        [`Ledger ${tag}`, `the ${tag} books`],
        ["Unrelated", null],
      ] as const) {
        const created = await platform.mutateOk(
          `${kind}.create`,
          { ...createInput(kind), name, description },
          as(owner),
        );
        ids.push(created[idKey]);
      }
      const byQ = (await platform.query(`${kind}.search`, { q: tag.toUpperCase() }, as(owner))).body;
      expect(byQ.total).toBe(2);
      // Newest first, the kind's id key, no secret.
      expect(byQ.items.map((item: Record<string, string>) => item[idKey])).toEqual([ids[1], ids[0]]);
      expect(byQ.items[0]).toMatchObject({ name: `Ledger ${tag}`, environmentId, projectId });
      expect(JSON.stringify(byQ)).not.toContain("s3cret-Pass@1");
      const byName = (await platform.query(`${kind}.search`, { name: `orders ${tag}` }, as(owner))).body;
      expect(byName.items.map((item: Record<string, string>) => item[idKey])).toEqual([ids[0]]);
      const byDescription = (
        await platform.query(`${kind}.search`, { description: "books", q: tag }, as(owner))
      ).body;
      expect(byDescription.total).toBe(1);
      const paged = (await platform.query(`${kind}.search`, { q: tag, limit: 1, offset: 1 }, as(owner))).body;
      expect(paged).toMatchObject({ total: 2, items: [{ [idKey]: ids[0] }] });
      const elsewhere = await platform.mutateOk("project.create", { name: `Empty ${tag}` }, as(owner));
      const none = await platform.query(
        `${kind}.search`,
        { q: tag, projectId: elsewhere.project.projectId },
        as(owner),
      );
      expect(none.body).toEqual({ items: [], total: 0 });
      const inEnvironment = await platform.query(`${kind}.search`, { q: tag, environmentId }, as(owner));
      expect(inEnvironment.body.total).toBe(2);
      // Only this kind's services.
      const otherKind = databaseKinds.find((k) => k !== kind && serves(k, "search"))!;
      expect((await platform.query(`${otherKind}.search`, { q: tag }, as(owner))).body.total).toBe(0);
      const bad = await platform.query(`${kind}.search`, { limit: 0 }, as(owner));
      expect(bad.status).toBe(400);
      expect(JSON.stringify(bad.body)).toContain("limit");
    },
  );
});

describe.each(databaseKinds)("%s update with Dokploy's fields", (kind) => {
  const { idKey, fields } = databaseKindFacts[kind];
  const swarm = {
    replicas: 2,
    labelsSwarm: { team: "data" },
    restartPolicySwarm: { Condition: "on-failure", MaxAttempts: 3 },
    placementSwarm: { Constraints: ["node.role==manager"] },
    updateConfigSwarm: { Parallelism: 1, Order: "stop-first" },
    stopGracePeriodSwarm: 5_000_000_000,
  };

  it("stores databaseName/databaseUser (kinds that have them) and the Swarm fields; one shows them", async () => {
    const created = await platform.mutateOk(`${kind}.create`, createInput(kind), as(owner));
    const id = created[idKey];
    const names = {
      ...(fields.databaseName ? { databaseName: "orders" } : {}),
      ...(fields.databaseUser ? { databaseUser: "clerk" } : {}),
    };
    await platform.mutateOk(`${kind}.update`, { [idKey]: id, ...names, ...swarm }, as(owner));
    const one = (await platform.query(`${kind}.one`, { [idKey]: id }, as(owner))).body;
    expect(one).toMatchObject({ ...names, ...swarm });
    expect(one.healthCheckSwarm).toBeNull();
    // null clears a Swarm field.
    await platform.mutateOk(`${kind}.update`, { [idKey]: id, labelsSwarm: null }, as(owner));
    expect((await platform.query(`${kind}.one`, { [idKey]: id }, as(owner))).body.labelsSwarm).toBeNull();
  });

  it("refuses a bad value: 400 naming the field, nothing changed", async () => {
    const created = await platform.mutateOk(`${kind}.create`, createInput(kind), as(owner));
    const id = created[idKey];
    await platform.mutateOk(`${kind}.update`, { [idKey]: id, ...swarm }, as(owner));
    const before = (await platform.query(`${kind}.one`, { [idKey]: id }, as(owner))).body;
    const cases: [Record<string, unknown>, string][] = [
      [{ replicas: 0 }, "replicas"],
      [{ restartPolicySwarm: { Condition: "sometimes" } }, "restartPolicySwarm"],
      [{ labelsSwarm: { team: 7 } }, "labelsSwarm"],
      [{ updateConfigSwarm: { Parallelism: 1, Order: "sideways" } }, "updateConfigSwarm"],
      [{ stopGracePeriodSwarm: -1 }, "stopGracePeriodSwarm"],
      [{ name: "new name", placementSwarm: { Constraints: "node.role==manager" } }, "placementSwarm"],
    ];
    if (fields.databaseName) cases.push([{ databaseName: "a b;drop" }, "databaseName"]);
    if (fields.databaseUser) cases.push([{ name: "new name", databaseUser: "" }, "databaseUser"]);
    // Kinds without them (Dokploy's redis; mongo has no databaseName) refuse them by name.
    if (!fields.databaseName) cases.push([{ databaseName: "orders" }, "databaseName"]);
    for (const [input, field] of cases) {
      const answer = await platform.mutate(`${kind}.update`, { [idKey]: id, ...input }, as(owner));
      expect(answer.status, `${field}: ${JSON.stringify(answer.body)}`).toBe(400);
      expect(JSON.stringify(answer.body)).toContain(field);
    }
    expect((await platform.query(`${kind}.one`, { [idKey]: id }, as(owner))).body).toEqual(before);
  });
});

describe("create fields as Dokploy's", () => {
  it("libsql does not serve changePassword, search nor saveExternalPort (Dokploy's libsql router has none)", async () => {
    for (const procedure of ["changePassword", "search", "saveExternalPort"]) {
      const answer = await platform.mutate(`libsql.${procedure}`, { libsqlId: "x" }, as(owner));
      expect(answer.status, procedure).toBe(404);
    }
  });

  it("libsql: a replica needs sqldPrimaryUrl, a primary takes none; enableNamespaces defaults to false", async () => {
    const before = await countRows();
    const cases: [Record<string, unknown>, string][] = [
      [{ ...createInput("libsql"), sqldNode: "replica" }, "sqldPrimaryUrl"],
      [{ ...createInput("libsql"), sqldPrimaryUrl: "http://primary:8080" }, "sqldPrimaryUrl"],
      [{ ...createInput("libsql"), sqldNode: "replica", sqldPrimaryUrl: "ftp://x" }, "sqldPrimaryUrl"],
      [{ ...createInput("libsql"), sqldNode: "leader" }, "sqldNode"],
    ];
    for (const [input, field] of cases) {
      const answer = await platform.mutate("libsql.create", input, as(owner));
      expect(answer.status, `${field}: ${JSON.stringify(answer.body)}`).toBe(400);
      expect(JSON.stringify(answer.body)).toContain(field);
    }
    expect(await countRows()).toBe(before);
    const primary = await platform.mutateOk("libsql.create", createInput("libsql"), as(owner));
    expect(primary).toMatchObject({ sqldNode: "primary", sqldPrimaryUrl: null, enableNamespaces: false });
    const replica = await platform.mutateOk(
      "libsql.create",
      {
        ...createInput("libsql"),
        sqldNode: "replica",
        sqldPrimaryUrl: "http://primary-db:5001",
        enableNamespaces: true,
      },
      as(owner),
    );
    expect(replica).toMatchObject({
      sqldNode: "replica",
      sqldPrimaryUrl: "http://primary-db:5001",
      enableNamespaces: true,
    });
    // update: a primary made replica without a URL is a 400; made primary, it follows none.
    const refused = await platform.mutate(
      "libsql.update",
      { libsqlId: primary.libsqlId, sqldNode: "replica" },
      as(owner),
    );
    expect(refused.status).toBe(400);
    expect(refused.body.error.data.fields).toEqual(["sqldPrimaryUrl"]);
    await platform.mutateOk("libsql.update", { libsqlId: replica.libsqlId, sqldNode: "primary" }, as(owner));
    const one = (await platform.query("libsql.one", { libsqlId: replica.libsqlId }, as(owner))).body;
    expect(one).toMatchObject({ sqldNode: "primary", sqldPrimaryUrl: null, enableNamespaces: true });
    expect(one.internalConnectionUrl).toBe(`http://shopper:s3cret-Pass%401@${replica.appName}:8080`);
  });

  it("libsql.saveExternalPorts: at least one port, none twice, no gRPC port on a replica, a taken port 409", async () => {
    const primary = await platform.mutateOk("libsql.create", createInput("libsql"), as(owner));
    const replica = await platform.mutateOk(
      "libsql.create",
      { ...createInput("libsql"), sqldNode: "replica", sqldPrimaryUrl: "http://primary-db:5001" },
      as(owner),
    );
    const cases: [string, Record<string, unknown>, number, string][] = [
      [
        primary.libsqlId,
        { externalPort: null, externalGRPCPort: null, externalAdminPort: null },
        400,
        "externalPort",
      ],
      [primary.libsqlId, {}, 400, "externalPort"],
      [primary.libsqlId, { externalPort: 28080, externalAdminPort: 28080 }, 400, "externalAdminPort"],
      [primary.libsqlId, { externalAdminPort: 22 }, 400, "externalAdminPort"],
      [replica.libsqlId, { externalGRPCPort: 28081 }, 400, "externalGRPCPort"],
    ];
    for (const [libsqlId, ports, status, field] of cases) {
      const answer = await platform.mutate("libsql.saveExternalPorts", { libsqlId, ...ports }, as(owner));
      expect(answer.status, `${field}: ${JSON.stringify(answer.body)}`).toBe(status);
      expect(JSON.stringify(answer.body)).toContain(field);
    }
    // Another service's admin port is taken for every port of every kind on the server.
    await platform.ctx.db
      .updateTable("databaseServices")
      .set({ externalAdminPort: 28090 })
      .where("databaseId", "=", replica.libsqlId)
      .execute();
    const taken = await platform.mutate(
      "libsql.saveExternalPorts",
      { libsqlId: primary.libsqlId, externalGRPCPort: 28090 },
      as(owner),
    );
    expect(taken.status).toBe(409);
    expect(taken.body.error.data.fields).toEqual(["externalGRPCPort"]);
    const postgres = await platform.mutateOk("postgres.create", createInput("postgres"), as(owner));
    const overLibsql = await platform.mutate(
      "postgres.saveExternalPort",
      { postgresId: postgres.postgresId, externalPort: 28090 },
      as(owner),
    );
    expect(overLibsql.status).toBe(409);
    const one = (await platform.query("libsql.one", { libsqlId: primary.libsqlId }, as(owner))).body;
    expect(one).toMatchObject({ externalPort: null, externalGRPCPort: null, externalAdminPort: null });
  });

  it("mysql takes no root password (root gets the user's); mongo's replicaSets defaults to false", async () => {
    const mysqlInput = createInput("mysql");
    delete mysqlInput.databaseRootPassword;
    const created = await platform.mutateOk("mysql.create", mysqlInput, as(owner));
    const one = (await platform.query("mysql.one", { mysqlId: created.mysqlId }, as(owner))).body;
    expect(one.databaseRootPassword).toBeNull();
    const mongo = await platform.mutateOk("mongo.create", createInput("mongo"), as(owner));
    expect(mongo.replicaSets).toBe(false);
  });
});

describe("host ports", () => {
  it("refuses a reserved port (400) and one another service publishes on the server (409)", async () => {
    const first = await platform.mutateOk("postgres.create", createInput("postgres"), as(owner));
    const second = await platform.mutateOk("redis.create", createInput("redis"), as(owner));
    // 3000 and the control plane's PORT too (issue 22 finding 3): this machine runs the control plane.
    const controlPlane = [3000, platform.ctx.config.port].filter((port) => port > 0);
    for (const port of [22, 80, 443, 5432, 4222, ...controlPlane]) {
      const answer = await platform.mutate(
        "postgres.saveExternalPort",
        { postgresId: first.postgresId, externalPort: port },
        as(owner),
      );
      expect(answer.status).toBe(400);
      expect(answer.body.error.data.fields).toEqual(["externalPort"]);
    }
    await platform.ctx.db
      .updateTable("databaseServices")
      .set({ externalPort: 26379 })
      .where("databaseId", "=", second.redisId)
      .execute();
    const taken = await platform.mutate(
      "postgres.saveExternalPort",
      { postgresId: first.postgresId, externalPort: 26379 },
      as(owner),
    );
    expect(taken.status).toBe(409);
    // A port an application publishes is taken too.
    const application = await platform.mutateOk(
      "application.create",
      { name: "Web", environmentId },
      as(owner),
    );
    await platform.mutateOk(
      "port.create",
      { applicationId: application.applicationId, publishedPort: 26380, targetPort: 80 },
      as(owner),
    );
    const fromApplication = await platform.mutate(
      "postgres.saveExternalPort",
      { postgresId: first.postgresId, externalPort: 26380 },
      as(owner),
    );
    expect(fromApplication.status).toBe(409);
    // And an application may not publish a database's external port (tcp; udp is another port).
    const overDatabase = await platform.mutate(
      "port.create",
      { applicationId: application.applicationId, publishedPort: 26379, targetPort: 80 },
      as(owner),
    );
    expect(overDatabase.status).toBe(409);
    expect(overDatabase.body.error.data.fields).toEqual(["publishedPort"]);
    await platform.mutateOk(
      "port.create",
      { applicationId: application.applicationId, publishedPort: 26379, targetPort: 80, protocol: "udp" },
      as(owner),
    );
  });

  it("refuses an appName another service (application or database) has: 409", async () => {
    const application = await platform.mutateOk(
      "application.create",
      { name: "Api", environmentId },
      as(owner),
    );
    const answer = await platform.mutate(
      "redis.create",
      { ...createInput("redis"), appName: application.appName },
      as(owner),
    );
    expect(answer.status).toBe(409);
    const db = await platform.mutateOk("redis.create", createInput("redis"), as(owner));
    const again = await platform.mutate(
      "mysql.create",
      { ...createInput("mysql"), appName: db.appName },
      as(owner),
    );
    expect(again.status).toBe(409);
  });
});

describe("the /api/<kind>/<operation> form", () => {
  it("answers the lifecycle operations as the dotted procedures do", async () => {
    const created = await platform.mutateOk("mariadb.create", createInput("mariadb"), as(owner));
    const stranger404 = await platform.request("/api/mariadb/rebuild", {
      method: "POST",
      body: JSON.stringify({ mariadbId: created.mariadbId }),
      token: stranger.token,
    });
    expect(stranger404.status).toBe(404);
    const reload = await platform.request("/api/mariadb/reload", {
      method: "POST",
      body: JSON.stringify({ mariadbId: created.mariadbId, appName: "not-its-name" }),
      token: owner.token,
    });
    expect(reload.status).toBe(400);
    expect(reload.body.error.data.fields).toEqual(["appName"]);
    const unknown = await platform.request("/api/mariadb/format", {
      method: "POST",
      body: "{}",
      token: owner.token,
    });
    expect(unknown.status).toBe(404);
  });
});

describe("server.remove", () => {
  it("refuses while a database service is on the server, and counts it in server.all", async () => {
    const server = await platform.mutateOk(
      "server.create",
      { name: "db host", ipAddress: "203.0.113.20", port: 22, username: "root" },
      as(owner),
    );
    const created = await platform.mutateOk(
      "redis.create",
      { ...createInput("redis"), serverId: server.serverId },
      as(owner),
    );
    const all = await platform.query("server.all", {}, as(owner));
    expect(all.body.find((row: { serverId: string }) => row.serverId === server.serverId).totalSum).toBe(1);
    const refused = await platform.mutate("server.remove", { serverId: server.serverId }, as(owner));
    expect(refused.status).toBe(409);
    // Its external URL names the server's address.
    await platform.ctx.db
      .updateTable("databaseServices")
      .set({ externalPort: 26400 })
      .where("databaseId", "=", created.redisId)
      .execute();
    const one = await platform.query("redis.one", { redisId: created.redisId }, as(owner));
    expect(one.body.externalConnectionUrl).toBe("redis://:s3cret-Pass%401@203.0.113.20:26400");
  });
});

describe("project.duplicate", () => {
  it("copies the database services with a new appName, their passwords resealed", async () => {
    // Its own name: other tests leave postgres services in this environment, one with a changed password.
    const source = await platform.mutateOk(
      "postgres.create",
      { ...createInput("postgres"), name: "duplicated source" },
      as(owner),
    );
    const copy = await platform.mutateOk(
      "project.duplicate",
      { sourceEnvironmentId: environmentId, name: "Copy", includeServices: true },
      as(owner),
    );
    const project = await platform.query("project.one", { projectId: copy.projectId }, as(owner));
    const copied = project.body.environments[0].postgres.find(
      (row: { name: string }) => row.name === source.name,
    );
    expect(copied.appName).not.toBe(source.appName);
    const one = await platform.query("postgres.one", { postgresId: copied.postgresId }, as(owner));
    expect(one.body.databasePassword).toBe("s3cret-Pass@1");
  });
});

describe("the service spec", () => {
  it("sets the kind's environment, the data volume, the external port and redis' password argument", () => {
    const row = {
      databaseId: "d1",
      kind: "mysql" as const,
      name: "db",
      appName: "shop-db",
      description: null,
      environmentId: "e",
      serverId: null,
      databaseName: "shop",
      databaseUser: "root",
      databasePasswordSealed: "",
      databaseRootPasswordSealed: null,
      dockerImage: null,
      replicaSets: false,
      sqldNode: "primary" as const,
      sqldPrimaryUrl: null as string | null,
      enableNamespaces: false,
      applicationStatus: "idle" as const,
      applicationStatusMessage: null,
      externalPort: 23306,
      externalGrpcPort: null as number | null,
      externalAdminPort: null as number | null,
      memoryLimit: "512m",
      memoryReservation: null,
      cpuLimit: null,
      cpuReservation: null,
      env: "EXTRA=1",
      command: null,
      args: null,
      replicas: 1,
      healthCheckSwarm: null,
      restartPolicySwarm: null,
      placementSwarm: null,
      updateConfigSwarm: null,
      rollbackConfigSwarm: null,
      modeSwarm: null,
      labelsSwarm: null,
      networkSwarm: null,
      networkIds: [],
      stopGracePeriodSwarm: null,
      endpointSpecSwarm: null,
      ulimitsSwarm: null,
      createdAt: "",
    };
    const opened = {
      appName: "shop-db",
      databaseName: "shop",
      databaseUser: "root",
      databasePassword: "pw",
      databaseRootPassword: "rootpw",
      replicaSets: false,
      sqldNode: "primary" as const,
      sqldPrimaryUrl: null,
      enableNamespaces: false,
    };
    const mysql = buildDatabaseSpec(row, opened, { mysql: "local/mysql:test" });
    expect(mysql.image).toBe("local/mysql:test");
    // The user is root: MYSQL_USER and MYSQL_PASSWORD are left out (spec 2.9).
    expect(mysql.env?.sort()).toEqual(["EXTRA=1", "MYSQL_DATABASE=shop", "MYSQL_ROOT_PASSWORD=rootpw"]);
    expect(mysql.mounts).toEqual([{ type: "volume", source: "shop-db-data", target: "/var/lib/mysql" }]);
    expect(mysql.ports).toEqual([
      { publishedPort: 23306, targetPort: 3306, protocol: "tcp", publishMode: "host" },
    ]);
    expect(mysql.memoryLimitBytes).toBe(512 * 1024 * 1024);
    // Without Swarm settings of the user's: one task, stop-first (never two on one data directory).
    expect(mysql.replicas).toBe(1);
    expect(JSON.parse(mysql.swarmSettingsJson ?? "{}")).toEqual({
      UpdateConfig: { Order: "stop-first" },
      RollbackConfig: { Order: "stop-first" },
    });

    const mariadb = buildDatabaseSpec(
      { ...row, kind: "mariadb", databaseUser: "shopper" },
      { ...opened, databaseUser: "shopper" },
      {},
    );
    expect(mariadb.image).toBe("mariadb:11");
    expect(mariadb.env?.sort()).toEqual([
      "EXTRA=1",
      "MARIADB_DATABASE=shop",
      "MARIADB_PASSWORD=pw",
      "MARIADB_ROOT_PASSWORD=rootpw",
      "MARIADB_USER=shopper",
    ]);

    const redis = buildDatabaseSpec({ ...row, kind: "redis", externalPort: null }, opened, {});
    expect(redis.command).toBeUndefined();
    expect(redis.args?.slice(0, 3)).toEqual(["redis-server", "--requirepass", "pw"]);
    expect(redis.mounts?.[0]?.target).toBe("/data");

    const mongo = buildDatabaseSpec({ ...row, kind: "mongo", databaseName: null }, opened, {});
    expect(mongo.env?.sort()).toEqual([
      "EXTRA=1",
      "MONGO_INITDB_ROOT_PASSWORD=pw",
      "MONGO_INITDB_ROOT_USERNAME=root",
    ]);
    // libsql: sqld's variables (basic auth of user:password), its three ports, its command line.
    const libsqlRow = {
      ...row,
      kind: "libsql" as const,
      databaseName: null,
      databaseUser: "admin",
      sqldNode: "replica" as const,
      sqldPrimaryUrl: "http://primary:5001",
      enableNamespaces: true,
      externalPort: 28080,
      externalGrpcPort: 28081,
      externalAdminPort: null,
    };
    const libsqlOpened = {
      ...opened,
      databaseUser: "admin",
      sqldNode: "replica" as const,
      sqldPrimaryUrl: "http://primary:5001",
      enableNamespaces: true,
    };
    const libsql = buildDatabaseSpec(libsqlRow, libsqlOpened, { libsql: "local/sqld:test" });
    expect(libsql.env?.sort()).toEqual([
      "EXTRA=1",
      `SQLD_HTTP_AUTH=basic:${Buffer.from("admin:pw").toString("base64")}`,
      "SQLD_NODE=replica",
      "SQLD_PRIMARY_URL=http://primary:5001",
    ]);
    expect(libsql.ports).toEqual([
      { publishedPort: 28080, targetPort: 8080, protocol: "tcp", publishMode: "host" },
      { publishedPort: 28081, targetPort: 5001, protocol: "tcp", publishMode: "host" },
    ]);
    expect(libsql.mounts?.[0]).toEqual({ type: "volume", source: "shop-db-data", target: "/var/lib/sqld" });
    expect(libsql.command?.slice(0, 2)).toEqual(["/bin/sh", "-c"]);
    expect(libsql.command?.[2]).toMatch(
      /^exec sqld --db-path \/var\/lib\/sqld\/iku\.db .*--enable-namespaces$/,
    );
    const primaryLibsql = buildDatabaseSpec(
      { ...libsqlRow, sqldNode: "primary", sqldPrimaryUrl: null, enableNamespaces: false },
      { ...libsqlOpened, sqldNode: "primary", sqldPrimaryUrl: null, enableNamespaces: false },
      {},
    );
    expect(primaryLibsql.image).toBe("ghcr.io/tursodatabase/libsql-server:v0.24.32");
    expect(primaryLibsql.env?.some((entry) => entry.startsWith("SQLD_PRIMARY_URL"))).toBe(false);
    expect(primaryLibsql.command?.[2]).not.toContain("--enable-namespaces");
    expect(databaseKindFacts.postgres.mountPath("postgres:18")).toBe("/var/lib/postgresql");
    expect(databaseKindFacts.postgres.mountPath("postgres")).toBe("/var/lib/postgresql");
    expect(databaseKindFacts.postgres.mountPath("postgres:17-alpine")).toBe("/var/lib/postgresql/data");
    expect(databaseKindFacts.postgres.mountPath("registry:5000/team/postgres:15")).toBe(
      "/var/lib/postgresql/data",
    );
    expect(databaseKindFacts.mongo.url(opened, "shop-db", 27017)).toBe("mongodb://root:pw@shop-db:27017/");
    expect(databaseKindFacts.redis.url(opened, "h", 6379)).toBe("redis://:pw@h:6379");
    expect(databaseKindFacts.postgres.url({ ...opened, databasePassword: "p@ss:1" }, "h", 5432)).toBe(
      "postgresql://root:p%40ss%3A1@h:5432/shop",
    );
  });
});

describe("the deployment procedures", () => {
  it("list a running database deployment, kill and remove it, and answer 404 to who may not see the service", async () => {
    const server = await platform.mutateOk(
      "server.create",
      { name: "unreachable", ipAddress: "203.0.113.21", port: 22, username: "root" },
      as(owner),
    );
    const created = await platform.mutateOk(
      "postgres.create",
      { ...createInput("postgres"), serverId: server.serverId },
      as(owner),
    );
    const postgresId = created.postgresId as string;
    // No agent answers for that server: the deployment runs, waiting for it.
    const { deploymentId } = await platform.mutateOk("postgres.deploy", { postgresId }, as(owner));
    const status = async () => {
      const rows = await platform.query(
        "deployment.allByType",
        { id: postgresId, type: "postgres" },
        as(owner),
      );
      return rows.body.find((row: { deploymentId: string }) => row.deploymentId === deploymentId)?.status;
    };
    for (let tries = 0; (await status()) !== "running"; tries++) {
      expect(tries).toBeLessThan(100);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }

    const byServer = await platform.query("deployment.allByServer", { serverId: server.serverId }, as(owner));
    expect(byServer.body.map((row: { deploymentId: string }) => row.deploymentId)).toEqual([deploymentId]);
    expect(byServer.body[0]).toMatchObject({ applicationId: null, serverId: server.serverId });
    const centralized = await platform.query("deployment.allCentralized", {}, as(owner));
    expect(
      centralized.body.find((row: { deploymentId: string }) => row.deploymentId === deploymentId),
    ).toMatchObject({
      application: null,
      database: { databaseId: postgresId, type: "postgres", name: created.name, appName: created.appName },
    });
    const queue = await platform.query("deployment.queueList", {}, as(owner));
    expect(queue.body.find((job: { id: string }) => job.id === deploymentId)).toMatchObject({
      state: "active",
      serviceType: "postgres",
      applicationId: null,
      databaseId: postgresId,
      appName: created.appName,
      applicationName: created.name,
    });

    // Another organization: 404, not listed, and the deployment goes on.
    for (const procedure of ["deployment.killProcess", "deployment.removeDeployment"]) {
      expect((await platform.mutate(procedure, { deploymentId }, as(stranger))).status, procedure).toBe(404);
    }
    expect(
      (await platform.query("deployment.allByServer", { serverId: server.serverId }, as(stranger))).status,
    ).toBe(404);
    const theirs = await platform.query("deployment.allCentralized", {}, as(stranger));
    expect(theirs.body.map((row: { deploymentId: string }) => row.deploymentId)).not.toContain(deploymentId);
    const theirLog = await platform.request(
      `/api/deployment.logs?deploymentId=${deploymentId}`,
      as(stranger),
    );
    expect(theirLog.status).toBe(404);

    // A member restricted to other services of the project: the same.
    const member = await platform.addMember(owner, "member");
    const assign = (accessedServices: string[]) =>
      platform.mutateOk(
        "user.assignPermissions",
        { id: member.user.id, accessedProjects: [projectId], accessedServices, canDeleteProjects: true },
        as(owner),
      );
    await assign([]);
    for (const procedure of ["deployment.killProcess", "deployment.removeDeployment"]) {
      expect((await platform.mutate(procedure, { deploymentId }, as(member))).status, procedure).toBe(404);
    }
    const ids = async (procedure: string, input: Record<string, unknown> = {}) =>
      (await platform.query(procedure, input, as(member))).body.map(
        (row: { deploymentId: string }) => row.deploymentId,
      );
    expect(await ids("deployment.allByServer", { serverId: server.serverId })).toEqual([]);
    expect(await ids("deployment.allCentralized")).not.toContain(deploymentId);
    expect(await ids("deployment.queueList")).not.toContain(deploymentId);
    const memberLog = await platform.request(`/api/deployment.logs?deploymentId=${deploymentId}`, as(member));
    expect(memberLog.status).toBe(404);
    expect(await status()).toBe("running");
    await assign([postgresId]);
    expect(await ids("deployment.allCentralized")).toContain(deploymentId);

    // A running deployment is not removed; killed, it ends in error and the service is as it was.
    expect((await platform.mutate("deployment.removeDeployment", { deploymentId }, as(owner))).status).toBe(
      409,
    );
    expect(await platform.mutateOk("deployment.killProcess", { deploymentId }, as(owner))).toEqual({
      success: true,
      message: "Deployment killed",
    });
    const rows = await platform.query(
      "deployment.allByType",
      { id: postgresId, type: "postgres" },
      as(owner),
    );
    expect(rows.body[0]).toMatchObject({ status: "error", errorMessage: "Killed by deployment.killProcess" });
    const one = await platform.query("postgres.one", { postgresId }, as(owner));
    expect(one.body.applicationStatus).toBe("idle");
    expect(await platform.mutateOk("deployment.removeDeployment", { deploymentId }, as(member))).toEqual({
      success: true,
    });
    const left = await platform.query(
      "deployment.allByType",
      { id: postgresId, type: "postgres" },
      as(owner),
    );
    expect(left.body).toEqual([]);
  });
});
