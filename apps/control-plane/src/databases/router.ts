/**
 * The procedures of a database router (spec 4.14), the same for the six kinds: routers/
 * postgres.ts, mysql.ts, mariadb.ts, mongo.ts, redis.ts and libsql.ts each make theirs here
 * (libsql, as Dokploy's router for it, has saveExternalPorts for its three ports instead of
 * saveExternalPort, and no changePassword nor search: the kind's `omits`). A service of
 * another organization, or one the caller may not see, is a 404. deploy, reload, rebuild and
 * saveExternalPort queue a deployment (status running, then done | error, with its log);
 * start and stop act on the service at once.
 *
 * Who sees the passwords and connection URLs: `one` answers them to every caller allowed to
 * see the service (as Dokploy does for members with access to it); anyone else gets a 404.
 */
import { databaseOwner } from "@platform/ownership";
import { z } from "zod";
import { LOCAL_SERVER_ID } from "../agents/hub.ts";
import { serverBelongsTo } from "../applications/repository.ts";
import { swarmJsonColumns } from "../applications/validation.ts";
import { listDatabaseBackups } from "../backups/backups.ts";
import { toBackupView } from "../backups/views.ts";
import type { Caller, ServiceContext } from "../context.ts";
import type { DatabaseServiceUpdate } from "../db/schema.ts";
import { startDatabaseDeployment } from "../deployments/start.ts";
import { envSchema } from "../env-vars.ts";
import { badRequest, conflict, notFound } from "../errors.ts";
import {
  type RuntimeLogQuery,
  readRuntimeLogs,
  runtimeLogInput,
  runtimeLogsSchema,
} from "../monitoring/runtime-logs.ts";
import { checkNetworkIds } from "../networks/index.ts";
import { defineRouter, mutation, query, type RouterDef, success, successSchema } from "../procedure.ts";
import {
  grantCreated,
  grantsOf,
  requireCanCreateServices,
  requireCanDeleteServices,
  requireEnvironmentAccess,
  requireServiceAccess,
} from "../projects/permissions.ts";
import { findEnvironment, isUniqueViolation } from "../projects/repository.ts";
import { loadWebServerSettings } from "../proxy/static-config.ts";
import { claimHostPort } from "../servers/host-ports.ts";
import { checkSwarmInput, type SwarmInput } from "../servers/swarm-input.ts";
import { changeDatabaseCredentials } from "./credentials.ts";
import { scaleDatabaseService, teardownDatabase } from "./deploy.ts";
import { type DatabaseKind, databaseKindFacts } from "./kinds.ts";
import {
  appNameTaken,
  DATABASE_APP_NAME_CONSTRAINT,
  deleteDatabase,
  findDatabase,
  insertDatabase,
  type LocatedDatabase,
  newDatabaseId,
  searchDatabases,
  updateDatabase,
} from "./repository.ts";
import {
  changePasswordInputOf,
  changeStatusInputOf,
  createInputOf,
  databaseSearchInput,
  detailSchemaOf,
  externalPortSchema,
  externalPortsInputOf,
  idInputOf,
  moveInputOf,
  searchItemSchemaOf,
  summarySchemaOf,
  updateInputOf,
} from "./schemas.ts";
import { swarmDetailsOf } from "./swarm.ts";
import { openDatabase, sealDatabaseSecret, toDatabaseSummary } from "./views.ts";

const deployStartedSchema = z.object({ success: z.literal(true), deploymentId: z.string() });
const statusAnswerSchema = z.object({
  success: z.literal(true),
  applicationStatus: z.enum(["idle", "running", "done", "error"]),
});

/** The host a database's external URL names: its server's address, else this machine's. */
async function externalHostOf(ctx: ServiceContext, row: LocatedDatabase): Promise<string> {
  if (row.serverId) {
    const server = await ctx.db
      .selectFrom("servers")
      .select("ipAddress")
      .where("serverId", "=", row.serverId)
      .executeTakeFirst();
    if (server) return server.ipAddress;
  }
  return (await loadWebServerSettings(ctx.db)).serverIp ?? "localhost";
}

export function databaseRouter(kind: DatabaseKind): RouterDef {
  const facts = databaseKindFacts[kind];
  const { idKey } = facts;
  const label = `${kind[0]!.toUpperCase()}${kind.slice(1)}`;
  const idInput = idInputOf(kind);
  const summary = (row: Parameters<typeof toDatabaseSummary>[0], ctx: ServiceContext) =>
    toDatabaseSummary(row, ctx.config.defaultDatabaseImages);

  /** The service when it is of this kind, of the caller's organization and visible to the caller. */
  async function load(ctx: ServiceContext, caller: Caller, input: Record<string, unknown>) {
    const row = await findDatabase(ctx.db, caller.organizationId, kind, String(input[idKey]));
    if (!row) throw notFound(label);
    await requireServiceAccess(
      ctx.db,
      caller,
      { serviceId: row.databaseId, environmentId: row.environmentId, projectId: row.projectId },
      label,
    );
    return row;
  }

  async function queue(
    ctx: ServiceContext,
    row: LocatedDatabase,
    deployKind: "deploy" | "rebuild",
    title?: string,
  ) {
    const { deploymentId } = await startDatabaseDeployment(ctx, {
      databaseId: row.databaseId,
      organizationId: row.organizationId,
      serverId: row.serverId,
      kind: deployKind,
      title,
    });
    return { success: true as const, deploymentId };
  }

  const procedures: Record<string, ReturnType<typeof mutation> | ReturnType<typeof query>> = {
    create: mutation({
      summary: `Create a ${kind} service in an environment (status idle; deploy starts it)`,
      access: "member",
      input: createInputOf(kind),
      output: summarySchemaOf(kind),
      handler: async ({ ctx, caller, input }) => {
        const values = input as z.infer<ReturnType<typeof createInputOf>> & {
          databaseName?: string;
          databaseUser?: string;
          databaseRootPassword?: string;
          replicaSets?: boolean;
          sqldNode?: "primary" | "replica";
          sqldPrimaryUrl?: string | null;
          enableNamespaces?: boolean;
        };
        const environment = await findEnvironment(ctx.db, caller.organizationId, values.environmentId);
        if (!environment) throw notFound("Environment");
        requireCanCreateServices(await requireEnvironmentAccess(ctx.db, caller, environment));
        const serverId = values.serverId ?? null;
        if (serverId === null && ctx.config.edition === "cloud") {
          throw badRequest("serverId is required on the cloud edition", { fields: ["serverId"] });
        }
        if (serverId !== null && !(await serverBelongsTo(ctx.db, caller.organizationId, serverId))) {
          throw notFound("Server");
        }
        const taken = () =>
          conflict(`The appName "${values.appName}" is already in use`, { fields: ["appName"] });
        if (await appNameTaken(ctx.db, values.appName)) throw taken();
        const owner = { databaseId: newDatabaseId(), organizationId: caller.organizationId };
        let row: Awaited<ReturnType<typeof insertDatabase>>;
        try {
          row = await insertDatabase(ctx.db, {
            databaseId: owner.databaseId,
            kind,
            name: values.name,
            appName: values.appName,
            description: values.description ?? null,
            environmentId: environment.environmentId,
            serverId,
            dockerImage: values.dockerImage ?? null,
            databaseName: values.databaseName ?? null,
            databaseUser: values.databaseUser ?? null,
            databasePasswordSealed: sealDatabaseSecret(
              ctx.secrets,
              "databasePassword",
              owner,
              values.databasePassword,
            ),
            databaseRootPasswordSealed: values.databaseRootPassword
              ? sealDatabaseSecret(ctx.secrets, "databaseRootPassword", owner, values.databaseRootPassword)
              : null,
            replicaSets: values.replicaSets ?? false,
            ...(facts.fields.sqld
              ? {
                  sqldNode: values.sqldNode ?? "primary",
                  sqldPrimaryUrl: values.sqldNode === "replica" ? (values.sqldPrimaryUrl ?? null) : null,
                  enableNamespaces: values.enableNamespaces ?? false,
                }
              : {}),
          });
        } catch (error) {
          if (isUniqueViolation(error, DATABASE_APP_NAME_CONSTRAINT)) throw taken();
          throw error;
        }
        await grantCreated(ctx.db, caller, "services", row.databaseId);
        return summary(row, ctx);
      },
    }),

    one: query({
      summary: `A ${kind} service with its credentials and connection URLs`,
      access: "member",
      input: idInput,
      output: detailSchemaOf(kind),
      handler: async ({ ctx, caller, input }) => {
        const row = await load(ctx, caller, input);
        const opened = openDatabase(ctx.secrets, row);
        const externalHost = row.externalPort === null ? null : await externalHostOf(ctx, row);
        return {
          ...summary(row, ctx),
          databasePassword: opened.databasePassword,
          ...(facts.fields.databaseRootPassword ? { databaseRootPassword: opened.databaseRootPassword } : {}),
          applicationStatusMessage: row.applicationStatusMessage,
          ...swarmDetailsOf(row),
          internalConnectionUrl: facts.url(opened, row.appName, facts.port),
          externalConnectionUrl:
            externalHost === null || row.externalPort === null
              ? null
              : facts.url(opened, externalHost, row.externalPort),
          environment: {
            environmentId: row.environmentId,
            name: row.environmentName,
            project: { projectId: row.projectId, name: row.projectName },
          },
          backups: await Promise.all(
            (await listDatabaseBackups(ctx.db, caller.organizationId, kind, row.databaseId)).map((backup) =>
              toBackupView(ctx, backup),
            ),
          ),
        };
      },
    }),

    deploy: mutation({
      summary: `Queue a deployment of the ${kind} service; answers at once with its deploymentId`,
      access: "member",
      input: idInput,
      output: deployStartedSchema,
      handler: async ({ ctx, caller, input }) => queue(ctx, await load(ctx, caller, input), "deploy"),
    }),

    readLogs: query({
      summary: `The newest lines the ${kind} service's container printed, one \`<time> <task> | <text>\` line each`,
      access: "member",
      input: idInput.extend(runtimeLogInput),
      output: runtimeLogsSchema,
      handler: async ({ ctx, caller, input, logger }) => {
        const row = await load(ctx, caller, input);
        const target = {
          serverId: row.serverId ?? LOCAL_SERVER_ID,
          owner: databaseOwner(row.organizationId, row.databaseId),
          swarmServiceName: row.appName,
        };
        // The input schema holds runtimeLogInput; its computed id key hides that from the type.
        return readRuntimeLogs(ctx.agents.client, target, input as unknown as RuntimeLogQuery, logger);
      },
    }),

    start: mutation({
      summary: `Start the ${kind} service again (status done)`,
      access: "member",
      input: idInput,
      output: statusAnswerSchema,
      handler: async ({ ctx, caller, input }) => {
        const row = await load(ctx, caller, input);
        await scaleDatabaseService(ctx, row, "START", idKey);
        await updateDatabase(ctx.db, row.databaseId, {
          applicationStatus: "done",
          applicationStatusMessage: null,
        });
        return { success: true as const, applicationStatus: "done" as const };
      },
    }),

    stop: mutation({
      summary: `Stop the ${kind} service: scale it to 0, its data kept (status idle)`,
      access: "member",
      input: idInput,
      output: statusAnswerSchema,
      handler: async ({ ctx, caller, input }) => {
        const row = await load(ctx, caller, input);
        await scaleDatabaseService(ctx, row, "STOP", idKey);
        await updateDatabase(ctx.db, row.databaseId, {
          applicationStatus: "idle",
          applicationStatusMessage: null,
        });
        return { success: true as const, applicationStatus: "idle" as const };
      },
    }),

    update: mutation({
      summary: `Change the ${kind} service's settings (applied by the next deploy or reload; a new user or password at once, in the running database)`,
      access: "member",
      input: updateInputOf(kind),
      output: successSchema,
      handler: async ({ ctx, caller, input }) => {
        const row = await load(ctx, caller, input);
        await checkSwarmInput(
          ctx,
          {
            serverId: (input as { serverId?: string | null }).serverId ?? row.serverId,
            except: { databaseId: row.databaseId },
          },
          input as SwarmInput,
        );
        await checkNetworkIds(
          ctx,
          caller.organizationId,
          { serverId: (input as { serverId?: string | null }).serverId ?? row.serverId, swarm: true },
          (input as { networkIds?: string[] }).networkIds,
        );
        if (facts.fields.sqld) checkSqldUpdate(row, input as SqldUpdate);
        const {
          [idKey]: _id,
          databaseUser,
          databasePassword,
          databaseRootPassword,
          args,
          ...rest
        } = input as Record<string, unknown>;
        const patch: Record<string, unknown> = {};
        for (const [key, value] of Object.entries(rest)) {
          if (value === undefined) continue;
          patch[key] = swarmJsonColumns.has(key) && value !== null ? JSON.stringify(value) : value;
        }
        if (args !== undefined) patch.args = args === null ? null : JSON.stringify(args);
        // A node made primary follows no primary any more.
        if (facts.fields.sqld && patch.sqldNode === "primary") patch.sqldPrimaryUrl = null;
        // Credentials first, in the running database (stored only once it took them).
        await changeDatabaseCredentials(ctx, row, {
          databaseUser: databaseUser as string | undefined,
          databasePassword: databasePassword as string | undefined,
          databaseRootPassword: databaseRootPassword as string | undefined,
        });
        await updateDatabase(ctx.db, row.databaseId, patch as DatabaseServiceUpdate);
        return success;
      },
    }),

    saveExternalPort: mutation({
      summary: `Publish the ${kind} service's port on its server (null removes it); redeploys it`,
      access: "member",
      input: idInput.extend({ externalPort: externalPortSchema }),
      output: deployStartedSchema,
      handler: async ({ ctx, caller, input }) => {
        const row = await load(ctx, caller, input);
        const externalPort = input.externalPort as unknown as number | null;
        if (externalPort === null) {
          await updateDatabase(ctx.db, row.databaseId, { externalPort });
        } else {
          const claim = {
            serverId: row.serverId,
            port: externalPort,
            protocol: "tcp" as const,
            field: "externalPort",
            except: { databaseId: row.databaseId },
          };
          await claimHostPort(ctx, claim, (trx) => updateDatabase(trx, row.databaseId, { externalPort }));
        }
        const title = externalPort === null ? "External port removed" : `External port ${externalPort}`;
        return queue(ctx, { ...row, externalPort }, "deploy", title);
      },
    }),

    saveEnvironment: mutation({
      summary: `Set the ${kind} service's environment variables (applied by the next deploy or reload)`,
      access: "member",
      input: idInput.extend({ env: envSchema.nullable() }),
      output: successSchema,
      handler: async ({ ctx, caller, input }) => {
        const row = await load(ctx, caller, input);
        await updateDatabase(ctx.db, row.databaseId, { env: (input.env as string | null) || null });
        return success;
      },
    }),

    reload: mutation({
      summary: `Restart the ${kind} service with its current configuration (its data kept)`,
      access: "member",
      input: idInput.extend({ appName: z.string().min(1).max(100) }),
      output: deployStartedSchema,
      handler: async ({ ctx, caller, input }) => {
        const row = await load(ctx, caller, input);
        if (input.appName !== row.appName) {
          throw badRequest(`appName is not the ${kind} service's appName`, { fields: ["appName"] });
        }
        return queue(ctx, row, "deploy", "Reload: restarted with the current configuration");
      },
    }),

    rebuild: mutation({
      summary: `Delete the ${kind} service's data and start it fresh`,
      access: "member",
      input: idInput,
      output: deployStartedSchema,
      handler: async ({ ctx, caller, input }) => queue(ctx, await load(ctx, caller, input), "rebuild"),
    }),

    changePassword: mutation({
      summary: facts.fields.databaseRootPassword
        ? `Change the ${kind} service's user password (type root: root's) inside the running database, then store it`
        : `Change the ${kind} service's password inside the running database, then store it`,
      access: "member",
      input: changePasswordInputOf(kind),
      output: successSchema,
      handler: async ({ ctx, caller, input }) => {
        const row = await load(ctx, caller, input);
        const { password, type } = input as unknown as { password: string; type?: "user" | "root" };
        await changeDatabaseCredentials(
          ctx,
          row,
          type === "root" ? { databaseRootPassword: password } : { databasePassword: password },
        );
        return success;
      },
    }),

    changeStatus: mutation({
      summary: `Set the ${kind} service's status by hand (the next deployment, start, stop or observation replaces it)`,
      access: "member",
      input: changeStatusInputOf(kind),
      output: summarySchemaOf(kind),
      handler: async ({ ctx, caller, input }) => {
        const row = await load(ctx, caller, input);
        const applicationStatus = (
          input as unknown as { applicationStatus: LocatedDatabase["applicationStatus"] }
        ).applicationStatus;
        const changed = await updateDatabase(ctx.db, row.databaseId, {
          applicationStatus,
          applicationStatusMessage: null,
        });
        if (!changed) throw notFound(label);
        return summary(changed, ctx);
      },
    }),

    move: mutation({
      summary: `Move the ${kind} service to another environment of the organization (its Swarm service is unchanged)`,
      access: "member",
      input: moveInputOf(kind),
      output: summarySchemaOf(kind),
      handler: async ({ ctx, caller, input }) => {
        const row = await load(ctx, caller, input);
        const targetEnvironmentId = String((input as Record<string, unknown>).targetEnvironmentId);
        const target = await findEnvironment(ctx.db, caller.organizationId, targetEnvironmentId);
        if (!target) throw notFound("Environment");
        requireCanCreateServices(await requireEnvironmentAccess(ctx.db, caller, target));
        const moved = await updateDatabase(ctx.db, row.databaseId, { environmentId: target.environmentId });
        if (!moved) throw notFound(label);
        return summary(moved, ctx);
      },
    }),

    search: query({
      summary: `Search the organization's ${kind} services (a member: those the grants show)`,
      access: "member",
      input: databaseSearchInput,
      output: z.object({ items: z.array(searchItemSchemaOf(kind)), total: z.number().int() }),
      handler: async ({ ctx, caller, input }) => {
        const found = await searchDatabases(
          ctx.db,
          caller.organizationId,
          kind,
          input,
          await grantsOf(ctx.db, caller),
        );
        return {
          items: found.items.map(({ databaseId, ...item }) => ({ [idKey]: databaseId, ...item })),
          total: found.total,
        };
      },
    }),

    remove: mutation({
      summary: `Remove the ${kind} service and its data volume (irreversible)`,
      access: "member",
      input: idInput,
      output: z.object({ [idKey]: z.string(), name: z.string(), appName: z.string() }),
      handler: async ({ ctx, caller, input }) => {
        const row = await load(ctx, caller, input);
        requireCanDeleteServices(await grantsOf(ctx.db, caller));
        await teardownDatabase(ctx, row, `The ${kind} service was removed`);
        await deleteDatabase(ctx.db, row.databaseId);
        return { [idKey]: row.databaseId, name: row.name, appName: row.appName };
      },
    }),
  };

  if (facts.extraPorts) {
    const extras = facts.extraPorts;
    procedures.saveExternalPorts = mutation({
      summary: `Publish the ${kind} service's ports on its server (HTTP ${facts.port}${extras.map((extra) => `, ${extra.field} ${extra.targetPort}`).join("")}; null removes one, an absent one is kept); redeploys it`,
      access: "member",
      input: externalPortsInputOf(kind),
      output: deployStartedSchema,
      handler: async ({ ctx, caller, input }) => {
        const row = await load(ctx, caller, input);
        const values = input as unknown as Record<string, number | null | undefined>;
        if (row.sqldNode === "replica" && values.externalGRPCPort != null) {
          throw badRequest("externalGRPCPort cannot be set on a replica (sqldNode replica)", {
            fields: ["externalGRPCPort"],
          });
        }
        const ports = [
          { field: "externalPort", column: "externalPort" as const },
          ...extras.map((extra) => ({ field: extra.field, column: extra.column })),
        ];
        const given = ports.filter((port) => values[port.field] !== undefined);
        if (given.length === 0) {
          throw badRequest(
            `give ${ports.map((port) => port.field).join(", ")}: a port, or null to remove one`,
            {
              fields: ["externalPort"],
            },
          );
        }
        const numbers = given.map((port) => values[port.field]).filter((port) => port != null);
        if (new Set(numbers).size !== numbers.length) {
          throw badRequest("each published port must differ from the others", {
            fields: given.map((port) => port.field),
          });
        }
        const patch: DatabaseServiceUpdate = {};
        for (const port of given) patch[port.column] = values[port.field] ?? null;
        // Each new port is claimed on the server (another service's port is a 409 naming the field).
        const claims = given.filter(
          (port) => values[port.field] != null && values[port.field] !== row[port.column],
        );
        let applied = false;
        for (const port of claims) {
          const last = port === claims[claims.length - 1];
          await claimHostPort(
            ctx,
            {
              serverId: row.serverId,
              port: values[port.field]!,
              protocol: "tcp" as const,
              field: port.field,
              except: { databaseId: row.databaseId },
            },
            async (trx) => {
              if (last) {
                await updateDatabase(trx, row.databaseId, patch);
                applied = true;
              }
            },
          );
        }
        if (!applied) await updateDatabase(ctx.db, row.databaseId, patch);
        const published = ports
          .map(
            (port) =>
              `${port.field} ${(port.column in patch ? patch[port.column] : row[port.column]) ?? "none"}`,
          )
          .join(", ");
        return queue(ctx, { ...row, ...patch } as LocatedDatabase, "deploy", `External ports: ${published}`);
      },
    });
  }
  for (const omitted of facts.omits ?? []) delete procedures[omitted];
  return defineRouter(kind, procedures);
}

interface SqldUpdate {
  sqldNode?: "primary" | "replica";
  sqldPrimaryUrl?: string | null;
}

/** A replica keeps a primary's URL; a URL is given only with a replica (400 naming sqldPrimaryUrl). */
function checkSqldUpdate(row: LocatedDatabase, input: SqldUpdate): void {
  const node = input.sqldNode ?? row.sqldNode;
  const url = input.sqldPrimaryUrl !== undefined ? input.sqldPrimaryUrl : row.sqldPrimaryUrl;
  if (node === "replica" && !url) {
    throw badRequest("sqldPrimaryUrl is required when sqldNode is replica", { fields: ["sqldPrimaryUrl"] });
  }
  if (node === "primary" && input.sqldPrimaryUrl) {
    throw badRequest("sqldPrimaryUrl is only taken when sqldNode is replica", { fields: ["sqldPrimaryUrl"] });
  }
}
