/**
 * docker (spec 4.13): container inspection through the agent of a server, or of the control
 * plane's own machine when serverId is omitted. Container ids and app names must match
 * ^[a-zA-Z0-9.\-_]+$ in the input schema, so a bad one is a 400 that never reaches an agent.
 * A server of another organization is a 404.
 *
 * Tenancy (issue 10): a caller sees and acts on the containers labelled for its organization
 * (@platform/ownership); unmanaged containers (no organization label) only when it is
 * an owner or admin of the organization that owns the server (this machine: the instance
 * organization); the platform's own containers never. Anything else is a 404, as unknown.
 * A member restricted to some services (accessedServices, issue 22) sees only the containers
 * labelled for those services (platform.resource), as deployments and the log stream do.
 */
import type { Init, ListContainersCommand } from "@platform/agent-protocol";
import { z } from "zod";
import {
  checkedContainer,
  isVisible,
  listContainers,
  resolveTarget,
  taskContainers,
  visibleContainer,
} from "../agents/container-access.ts";
import {
  actOnContainer,
  containerEvents,
  containerFileEntrySchema,
  containerFileSchema,
  containerPathSchema,
  deletablePathSchema,
  deleteContainerFile,
  dockerEventsSchema,
  fileContentSchema,
  listContainerFiles,
  MAX_EVENT_MINUTES,
  readContainerFile,
  writeContainerFile,
} from "../agents/container-operations.ts";
import {
  appContainerSchema,
  appNameSchema,
  containerIdSchema,
  containerSummarySchema,
  labelledContainerSchema,
  serverIdSchema,
  taskContainerSchema,
  toAppContainer,
  toContainerSummary,
  toLabelledContainer,
} from "../agents/container-views.ts";
import { callAgent } from "../agents/errors.ts";
import {
  DEFAULT_SINCE_HOURS,
  MAX_SINCE_HOURS,
  serverHealth,
  serverHealthSchema,
} from "../monitoring/server-health.ts";
import { defineRouter, mutation, query, success, successSchema } from "../procedure.ts";
import { agentServerId } from "../servers/repository.ts";

const serverIdInput = { serverId: serverIdSchema.optional() };

/** docker.startContainer, stopContainer, killContainer, removeContainer: one container, by its checked id. */
const containerAction = (summary: string, action: "START" | "STOP" | "KILL" | "REMOVE") =>
  mutation({
    summary,
    access: "member",
    input: z.object({ containerId: containerIdSchema, ...serverIdInput }),
    output: successSchema,
    handler: async ({ ctx, caller, input }) => {
      const { agent, containerId } = await checkedContainer(ctx, caller, input);
      await actOnContainer(agent, containerId, action);
      return success;
    },
  });

const fileInput = { containerId: containerIdSchema, path: containerPathSchema, ...serverIdInput };

export const dockerRouter = defineRouter("docker", {
  getServerHealth: query({
    summary:
      "The server's health (this machine's, or serverId's): its engine now and the stored system metrics of the last sinceHours hours",
    access: "admin",
    input: z
      .object({
        ...serverIdInput,
        sinceHours: z.number().int().min(1).max(MAX_SINCE_HOURS).optional(),
      })
      .optional(),
    output: serverHealthSchema,
    handler: async ({ ctx, caller, input }) => {
      const serverId = await agentServerId(ctx, caller.organizationId, input?.serverId);
      return serverHealth(ctx, serverId, input?.sinceHours ?? DEFAULT_SINCE_HOURS);
    },
  }),

  getContainers: query({
    summary: "Every container of the server (running or not)",
    access: "member",
    input: z.object(serverIdInput).optional(),
    output: z.array(containerSummarySchema),
    handler: async ({ ctx, caller, input }) => {
      const { target, containers } = await listContainers(ctx, caller, input?.serverId, { all: true });
      return containers.map((container) => toContainerSummary(container, target.serverId));
    },
  }),

  restartContainer: mutation({
    summary: "Restart one container",
    access: "member",
    input: z.object({ containerId: containerIdSchema, ...serverIdInput }),
    output: successSchema,
    handler: async ({ ctx, caller, input }) => {
      const target = await resolveTarget(ctx, caller, input.serverId);
      const { agentServerId } = target;
      // Restart by the full id that was checked, never by a name that could now be another's.
      const { Id } = await visibleContainer(ctx, caller, target, input.containerId);
      await callAgent(
        agentServerId,
        () =>
          ctx.agents.client.restartContainer(
            agentServerId,
            Id,
            { organizationId: caller.organizationId, includeUnmanaged: target.seesUnmanaged },
            { timeoutMs: 60_000 },
          ),
        ctx.logger,
      );
      return success;
    },
  }),

  startContainer: containerAction("Start one container", "START"),
  stopContainer: containerAction("Stop one container", "STOP"),
  killContainer: containerAction("Kill one container (SIGKILL)", "KILL"),
  removeContainer: containerAction(
    "Remove one container (forced, like docker rm -f; its volumes are kept)",
    "REMOVE",
  ),

  listContainerFiles: query({
    summary: "The entries of a directory of a container (Docker's archive API)",
    access: "member",
    input: z.object(fileInput),
    output: z.array(containerFileEntrySchema),
    handler: async ({ ctx, caller, input }) => {
      const { agent, containerId } = await checkedContainer(ctx, caller, input);
      return listContainerFiles(agent, containerId, input.path);
    },
  }),

  readContainerFile: query({
    summary: "The text of a file of a container, base64-encoded (at most 512 KiB; binary files refused)",
    access: "member",
    input: z.object(fileInput),
    output: containerFileSchema,
    handler: async ({ ctx, caller, input }) => {
      const { agent, containerId } = await checkedContainer(ctx, caller, input);
      return readContainerFile(agent, containerId, input.path);
    },
  }),

  writeContainerFile: mutation({
    summary: "Write a text file of a container (at most 512 KiB; its directory must exist)",
    access: "member",
    input: z.object({ ...fileInput, content: fileContentSchema }),
    output: successSchema,
    handler: async ({ ctx, caller, input }) => {
      const { agent, containerId } = await checkedContainer(ctx, caller, input);
      await writeContainerFile(agent, containerId, input.path, input.content);
      return success;
    },
  }),

  deleteContainerFile: mutation({
    summary:
      "Delete a file or directory (recursively) of a running container: rm -rf through the exec API, no shell",
    access: "member",
    input: z.object({ ...fileInput, path: deletablePathSchema }),
    output: successSchema,
    handler: async ({ ctx, caller, input }) => {
      const { agent, containerId } = await checkedContainer(ctx, caller, input);
      await deleteContainerFile(agent, containerId, input.path);
      return success;
    },
  }),

  getEvents: query({
    summary: "The engine's events of the caller's containers in the last minutes (default 15)",
    access: "member",
    input: z
      .object({ minutes: z.number().int().min(1).max(MAX_EVENT_MINUTES).default(15), ...serverIdInput })
      .optional(),
    output: dockerEventsSchema,
    handler: async ({ ctx, caller, input }) => {
      const target = await resolveTarget(ctx, caller, input?.serverId);
      const agent = {
        ctx,
        agentServerId: target.agentServerId,
        scope: { organizationId: caller.organizationId, includeUnmanaged: target.seesUnmanaged },
      };
      const answer = await containerEvents(agent, input?.minutes ?? 15, ctx.now());
      // The agent answered the organization's containers; a member sees its granted services' only.
      const events = answer.events.filter((event) =>
        isVisible(
          {
            labels: event.Actor.Attributes,
            names: event.Actor.Attributes.name ? [event.Actor.Attributes.name] : [],
          },
          caller,
          target,
        ),
      );
      return { events, fetchedAt: answer.fetchedAt };
    },
  }),

  getConfig: query({
    summary: "The full configuration of one container (docker inspect)",
    access: "member",
    input: z.object({ containerId: containerIdSchema, ...serverIdInput }),
    output: z.record(z.string(), z.unknown()),
    handler: async ({ ctx, caller, input }) => {
      const target = await resolveTarget(ctx, caller, input.serverId);
      return visibleContainer(ctx, caller, target, input.containerId);
    },
  }),

  getContainersByAppNameMatch: query({
    summary: "Containers whose name contains appName, or of the compose project or stack appName",
    access: "member",
    input: z.object({
      appName: appNameSchema,
      appType: z.enum(["stack", "docker-compose"]).optional(),
      ...serverIdInput,
    }),
    output: z.array(appContainerSchema),
    handler: async ({ ctx, caller, input }) => {
      const filter: Init<ListContainersCommand> =
        input.appType === "stack"
          ? { all: true, stackNamespace: input.appName }
          : input.appType === "docker-compose"
            ? { all: true, composeProject: input.appName }
            : { all: true, nameMatch: input.appName };
      const { containers } = await listContainers(ctx, caller, input.serverId, filter);
      return containers.map(toAppContainer);
    },
  }),

  getContainersByAppLabel: query({
    summary: "Running containers of the Swarm service appName, or whose name contains appName",
    access: "member",
    input: z.object({ appName: appNameSchema, type: z.enum(["standalone", "swarm"]), ...serverIdInput }),
    output: z.array(labelledContainerSchema),
    handler: async ({ ctx, caller, input }) => {
      const filter: Init<ListContainersCommand> =
        input.type === "swarm" ? { swarmServiceName: input.appName } : { nameMatch: input.appName };
      const { containers } = await listContainers(ctx, caller, input.serverId, filter);
      return containers.map(toLabelledContainer);
    },
  }),

  getStackContainersByAppName: query({
    summary: "Containers of the stack appName on the server",
    access: "member",
    input: z.object({ appName: appNameSchema, ...serverIdInput }),
    output: z.array(taskContainerSchema),
    handler: ({ ctx, caller, input }) =>
      taskContainers(ctx, caller, input.serverId, { all: true, stackNamespace: input.appName }),
  }),

  getServiceContainersByAppName: query({
    summary: "Containers of the Swarm service appName on the server",
    access: "member",
    input: z.object({ appName: appNameSchema, ...serverIdInput }),
    output: z.array(taskContainerSchema),
    handler: ({ ctx, caller, input }) =>
      taskContainers(ctx, caller, input.serverId, { all: true, swarmServiceName: input.appName }),
  }),
});
