/**
 * A database service's `update` of databaseUser, databasePassword or databaseRootPassword: the
 * change is made inside the running database first (the agent runs the database's own client in
 * its container), and stored only once the database took it, so `one` never shows credentials
 * the database would reject. A failure leaves the stored credentials as they were.
 *
 * - A service that was never deployed (no Swarm service) has no data yet: the values are stored
 *   and its first deploy initialises the database with them.
 * - A stopped service (no running task) is a 409: the data volume holds the old credentials and
 *   only a running database can change them (docs/decisions.md).
 * - mongo cannot rename a user: a new databaseUser is a 400 once the service exists.
 * - mysql/mariadb without a root password of their own: root was given the user's password at
 *   initialisation and keeps it; the service then records it as its root password.
 */
import { AgentCommandError } from "@platform/agent-protocol";
import { databaseOwner } from "@platform/ownership";
import { callAgent } from "../agents/errors.ts";
import type { ServiceContext } from "../context.ts";
import type { DatabaseServiceUpdate } from "../db/schema.ts";
import { badRequest, conflict } from "../errors.ts";
import { agentServerId } from "../servers/repository.ts";
import type { LocatedDatabase } from "./repository.ts";
import { updateDatabase } from "./repository.ts";
import { openDatabase, sealDatabaseSecret } from "./views.ts";

const CHANGE_TIMEOUT_MS = 90_000;

export interface RequestedCredentials {
  databaseUser?: string | undefined;
  databasePassword?: string | undefined;
  databaseRootPassword?: string | undefined;
}

const ENGINE = {
  postgres: "POSTGRES",
  mysql: "MYSQL",
  mariadb: "MARIADB",
  mongo: "MONGO",
  redis: "REDIS",
} as const;

/**
 * Applies the requested credentials to the running database and stores each change once it is
 * made; answers false when nothing was asked to change. Throws (an ApiError) with nothing stored
 * for the failed part.
 */
export async function changeDatabaseCredentials(
  ctx: ServiceContext,
  row: LocatedDatabase,
  requested: RequestedCredentials,
): Promise<boolean> {
  const opened = openDatabase(ctx.secrets, row);
  const mysqlFamily = row.kind === "mysql" || row.kind === "mariadb";
  const newUser =
    requested.databaseUser !== undefined && requested.databaseUser !== opened.databaseUser
      ? requested.databaseUser
      : undefined;
  const newPassword =
    requested.databasePassword !== undefined && requested.databasePassword !== opened.databasePassword
      ? requested.databasePassword
      : undefined;
  const rootNow = opened.databaseRootPassword ?? opened.databasePassword;
  const newRootPassword =
    mysqlFamily && requested.databaseRootPassword !== undefined && requested.databaseRootPassword !== rootNow
      ? requested.databaseRootPassword
      : undefined;
  if (newUser === undefined && newPassword === undefined && newRootPassword === undefined) return false;
  if (row.kind === "libsql") {
    // sqld reads its basic-auth credentials from SQLD_HTTP_AUTH at start: the next deploy applies them.
    const patch: DatabaseServiceUpdate = {};
    if (newUser !== undefined) patch.databaseUser = newUser;
    if (newPassword !== undefined) {
      patch.databasePasswordSealed = sealDatabaseSecret(
        ctx.secrets,
        "databasePassword",
        { databaseId: row.databaseId, organizationId: row.organizationId },
        newPassword,
      );
    }
    await updateDatabase(ctx.db, row.databaseId, patch);
    return true;
  }

  const deployments = await ctx.db
    .selectFrom("deployments")
    .select("status")
    .where("databaseId", "=", row.databaseId)
    .execute();
  if (deployments.some((deployment) => deployment.status === "running" || deployment.status === "idle")) {
    throw conflict(
      "A deployment of the service is queued or running: change its credentials once it is over",
      {
        fields: ["databasePassword"],
      },
    );
  }
  // Never deployed: no database holds the old credentials; the first deploy uses the new ones.
  const everDeployed = deployments.length > 0;
  const owner = { databaseId: row.databaseId, organizationId: row.organizationId };
  const seal = (field: "databasePassword" | "databaseRootPassword", value: string) =>
    sealDatabaseSecret(ctx.secrets, field, owner, value);
  const serverId = everDeployed ? await agentServerId(ctx, row.organizationId, row.serverId) : "";
  const base = {
    serviceName: row.appName,
    owner: databaseOwner(row.organizationId, row.databaseId),
    engine: ENGINE[row.kind],
    database: opened.databaseName ?? "",
  };
  /** The change made in the database; false when the service does not exist (never deployed). */
  const apply = async (change: {
    adminUser: string;
    adminPassword: string;
    user: string;
    newUser?: string | undefined;
    newPassword?: string | undefined;
  }): Promise<boolean> => {
    if (!everDeployed) return false;
    try {
      await callAgent(serverId, async () => {
        try {
          await ctx.agents.client.changeDatabaseCredentials(
            serverId,
            { ...base, ...change, newUser: change.newUser ?? "", newPassword: change.newPassword ?? "" },
            CHANGE_TIMEOUT_MS,
          );
        } catch (error) {
          if (error instanceof AgentCommandError && error.code === "NOT_FOUND") throw new NotDeployed();
          throw error;
        }
      });
      return true;
    } catch (error) {
      if (error instanceof NotDeployed) return false;
      throw error;
    }
  };

  if (newUser !== undefined || newPassword !== undefined) {
    if (
      newUser !== undefined &&
      row.kind === "mongo" &&
      everDeployed &&
      (await serviceExists(ctx, serverId, row))
    ) {
      throw badRequest("databaseUser: mongo cannot rename its root user; create a new mongo service", {
        fields: ["databaseUser"],
      });
    }
    const admin = mysqlFamily
      ? { adminUser: "root", adminPassword: rootNow }
      : row.kind === "postgres"
        ? { adminUser: opened.databaseUser ?? "", adminPassword: "" }
        : { adminUser: opened.databaseUser ?? "", adminPassword: opened.databasePassword };
    const deployed = await apply({ ...admin, user: opened.databaseUser ?? "", newUser, newPassword });
    const patch: DatabaseServiceUpdate = {};
    if (newUser !== undefined) patch.databaseUser = newUser;
    if (newPassword !== undefined) patch.databasePasswordSealed = seal("databasePassword", newPassword);
    // root keeps the password it was initialised with (the user's, when it had none of its own).
    if (deployed && mysqlFamily && opened.databaseRootPassword === null && newPassword !== undefined) {
      patch.databaseRootPasswordSealed = seal("databaseRootPassword", opened.databasePassword);
    }
    await updateDatabase(ctx.db, row.databaseId, patch);
  }
  if (newRootPassword !== undefined) {
    await apply({ adminUser: "root", adminPassword: rootNow, user: "root", newPassword: newRootPassword });
    await updateDatabase(ctx.db, row.databaseId, {
      databaseRootPasswordSealed: seal("databaseRootPassword", newRootPassword),
    });
  }
  return true;
}

class NotDeployed extends Error {}

async function serviceExists(ctx: ServiceContext, serverId: string, row: LocatedDatabase) {
  const observed = await callAgent(serverId, () =>
    ctx.agents.client.observeServices(serverId, {
      serviceNames: [row.appName],
      jobIds: [],
      owners: { [row.appName]: databaseOwner(row.organizationId, row.databaseId) },
    }),
  );
  return observed.services.some((service) => service.name === row.appName && service.found);
}
