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
import { deletePort, findPort, insertPort, updatePort } from "../applications/ports.ts";
import { findApplication } from "../applications/repository.ts";
import { idSchema, portSchema, protocolSchema, publishModeSchema } from "../applications/schemas.ts";
import { notFound } from "../errors.ts";
import { defineRouter, mutation, query } from "../procedure.ts";
import { requireApplicationAccess } from "../projects/permissions.ts";

const portNumberSchema = z.number().int().min(1).max(65535);
const portIdInput = z.object({ portId: idSchema });

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
    handler: async ({ ctx, caller, input }) => {
      const application = await findApplication(ctx.db, caller.organizationId, input.applicationId);
      if (!application) throw notFound("Application");
      await requireApplicationAccess(ctx.db, caller, application.applicationId);
      return insertPort(ctx, application, input);
    },
  }),

  one: query({
    summary: "One published port",
    access: "member",
    input: portIdInput,
    output: portSchema,
    handler: async ({ ctx, caller, input }) => {
      const port = await findPort(ctx.db, caller.organizationId, input.portId);
      if (!port) throw notFound("Port");
      await requireApplicationAccess(ctx.db, caller, port.applicationId, "Port");
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
    handler: async ({ ctx, caller, input }) => {
      const { portId, ...patch } = input;
      const port = await findPort(ctx.db, caller.organizationId, portId);
      if (!port) throw notFound("Port");
      await requireApplicationAccess(ctx.db, caller, port.applicationId, "Port");
      const changes = Object.fromEntries(Object.entries(patch).filter(([, value]) => value !== undefined));
      if (Object.keys(changes).length === 0) return port;
      const application = await findApplication(ctx.db, caller.organizationId, port.applicationId);
      if (!application) throw notFound("Port");
      return updatePort(ctx, application, port, changes);
    },
  }),

  delete: mutation({
    summary: "Stop publishing a port (applies on the next deploy); answers the removed port",
    access: "member",
    input: portIdInput,
    output: portSchema,
    handler: async ({ ctx, caller, input }) => {
      const port = await findPort(ctx.db, caller.organizationId, input.portId);
      if (!port) throw notFound("Port");
      await requireApplicationAccess(ctx.db, caller, port.applicationId, "Port");
      await deletePort(ctx.db, port.portId);
      return port;
    },
  }),
});
