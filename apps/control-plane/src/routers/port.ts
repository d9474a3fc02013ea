/**
 * port (Dokploy's application ports): a port of the application's Swarm service published on
 * its server, so the app can be reached without a domain. Ports apply on the next deploy.
 * `publishMode` defaults to `host`: Swarm's ingress routing mesh is not available everywhere
 * (it is not on the test machines), and a host-mode port works on any single node.
 * An application or port of another organization is a 404.
 *
 * A server's host ports are shared by every tenant on it (servers/host-ports.ts): the ports the
 * platform and the host need are refused with a 400, and a port another application or a
 * database already publishes on the same server is a 409 (issue 10).
 */
import { z } from "zod";
import { findApplication } from "../applications/repository.ts";
import { idSchema } from "../applications/schemas.ts";
import type { ServiceContext } from "../context.ts";
import { newId } from "../crypto/ids.ts";
import type { Port } from "../db/schema.ts";
import { conflict, notFound } from "../errors.ts";
import { defineRouter, mutation, query } from "../procedure.ts";
import { requireApplicationAccess } from "../projects/permissions.ts";
import { isUniqueViolation } from "../projects/repository.ts";
import { claimHostPort } from "../servers/host-ports.ts";

const PORT_UNIQUE_CONSTRAINT = "ports_application_published_protocol_unique";

const portNumberSchema = z.number().int().min(1).max(65535);
const protocolSchema = z.enum(["tcp", "udp"]);
const publishModeSchema = z.enum(["host", "ingress"]);

export const portSchema = z.object({
  portId: z.string(),
  applicationId: z.string(),
  publishedPort: z.number().int(),
  targetPort: z.number().int(),
  protocol: protocolSchema,
  publishMode: publishModeSchema,
  createdAt: z.string(),
});

const portIdInput = z.object({ portId: idSchema });

/** The port if its application belongs to the organization. */
function findPort(
  services: ServiceContext,
  organizationId: string,
  portId: string,
): Promise<Port | undefined> {
  return services.db
    .selectFrom("ports")
    .innerJoin("applications", "applications.applicationId", "ports.applicationId")
    .innerJoin("environments", "environments.environmentId", "applications.environmentId")
    .innerJoin("projects", "projects.projectId", "environments.projectId")
    .selectAll("ports")
    .where("ports.portId", "=", portId)
    .where("projects.organizationId", "=", organizationId)
    .executeTakeFirst();
}

/** Runs a write; a taken (publishedPort, protocol) of the application is a 409 naming publishedPort. */
async function withUniquePort<T>(write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (error) {
    if (isUniqueViolation(error, PORT_UNIQUE_CONSTRAINT)) {
      throw conflict("The application already publishes this port with this protocol", {
        fields: ["publishedPort"],
      });
    }
    throw error;
  }
}

export const portRouter = defineRouter("port", {
  create: mutation({
    summary: "Publish a port of the application's service (applies on the next deploy)",
    access: "member",
    input: z.object({
      applicationId: idSchema,
      publishedPort: portNumberSchema,
      targetPort: portNumberSchema,
      protocol: protocolSchema.default("tcp"),
      publishMode: publishModeSchema.default("host"),
    }),
    output: portSchema,
    handler: async ({ services, caller, input }) => {
      const application = await findApplication(services.db, caller.organizationId, input.applicationId);
      if (!application) throw notFound("Application");
      await requireApplicationAccess(services.db, caller, application.applicationId);
      const claim = {
        serverId: application.serverId,
        port: input.publishedPort,
        protocol: input.protocol,
        field: "publishedPort",
        except: { applicationId: application.applicationId },
      };
      return withUniquePort(() =>
        claimHostPort(services, claim, (trx) =>
          trx
            .insertInto("ports")
            .values({ portId: newId(), ...input, applicationId: application.applicationId })
            .returningAll()
            .executeTakeFirstOrThrow(),
        ),
      );
    },
  }),

  one: query({
    summary: "One published port",
    access: "member",
    input: portIdInput,
    output: portSchema,
    handler: async ({ services, caller, input }) => {
      const port = await findPort(services, caller.organizationId, input.portId);
      if (!port) throw notFound("Port");
      await requireApplicationAccess(services.db, caller, port.applicationId, "Port");
      return port;
    },
  }),

  update: mutation({
    summary: "Change a published port (applies on the next deploy)",
    access: "member",
    input: z.object({
      portId: idSchema,
      publishedPort: portNumberSchema.optional(),
      targetPort: portNumberSchema.optional(),
      protocol: protocolSchema.optional(),
      publishMode: publishModeSchema.optional(),
    }),
    output: portSchema,
    handler: async ({ services, caller, input }) => {
      const { portId, ...patch } = input;
      const port = await findPort(services, caller.organizationId, portId);
      if (!port) throw notFound("Port");
      await requireApplicationAccess(services.db, caller, port.applicationId, "Port");
      const changes = Object.fromEntries(Object.entries(patch).filter(([, value]) => value !== undefined));
      if (Object.keys(changes).length === 0) return port;
      const application = await services.db
        .selectFrom("applications")
        .select(["applicationId", "serverId"])
        .where("applicationId", "=", port.applicationId)
        .executeTakeFirstOrThrow();
      const claim = {
        serverId: application.serverId,
        port: input.publishedPort ?? port.publishedPort,
        protocol: input.protocol ?? port.protocol,
        field: "publishedPort",
        except: { applicationId: application.applicationId },
      };
      return withUniquePort(() =>
        claimHostPort(services, claim, (trx) =>
          trx
            .updateTable("ports")
            .set(changes)
            .where("portId", "=", port.portId)
            .returningAll()
            .executeTakeFirstOrThrow(),
        ),
      );
    },
  }),

  delete: mutation({
    summary: "Stop publishing a port (applies on the next deploy); answers the removed port",
    access: "member",
    input: portIdInput,
    output: portSchema,
    handler: async ({ services, caller, input }) => {
      const port = await findPort(services, caller.organizationId, input.portId);
      if (!port) throw notFound("Port");
      await requireApplicationAccess(services.db, caller, port.applicationId, "Port");
      await services.db.deleteFrom("ports").where("portId", "=", port.portId).execute();
      return port;
    },
  }),
});
