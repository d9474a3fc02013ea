/**
 * compose (spec 2.6, 4.3): compose stacks, the third service kind. A stack of another
 * organization, or one the caller may not see, is a 404. The file is parsed and converted on
 * create and update (an invalid file is a 400 naming where, and nothing is stored); deploy and
 * redeploy queue a deployment (status running, then done | error, with its log); start, stop
 * and delete act on the stack's own Docker objects at once through its server's agent.
 * templates lists the catalogues (templates/); deployTemplate creates a stack from one (its
 * env, its file mounts as mount rows the agent writes under `../files/`, its domains) and
 * queues its deployment.
 */
import { randomBytes } from "node:crypto";
import { composeUpArgs, STACK_FILE_NAME, stackDeployArgs } from "@platform/agent-protocol";
import { applyCollision, ComposeFileError, parseComposeFile } from "@platform/compose-config";
import { stringify as stringifyYaml } from "yaml";
import { z } from "zod";
import { containerIdSchema } from "../agents/container-views.ts";
import { checkGitSource } from "../applications/git-source-checks.ts";
import { newRefreshToken, searchServices, serverBelongsTo } from "../applications/repository.ts";
import { idSchema, searchFields } from "../applications/schemas.ts";
import {
  collisionOf,
  composeFileError,
  composeServerOf,
  composeStackAction,
  convertedComposeOf,
  ownerOfCompose,
  readComposeSource,
  removeComposeProxy,
  teardownCompose,
} from "../compose/deploy.ts";
import { composeServiceVolumes } from "../compose/mounts.ts";
import { claimComposePorts } from "../compose/ports.ts";
import {
  COMPOSE_APP_NAME_CONSTRAINT,
  deleteCompose,
  findCompose,
  insertCompose,
  insertComposeFileMounts,
  type LocatedCompose,
  loadCallerCompose,
  newComposeId,
  updateCompose,
} from "../compose/repository.ts";
import {
  composeIdInput,
  composeSchema,
  composeSummarySchema,
  createComposeInput,
  DISCONNECTED_COMPOSE_GIT,
  deployComposeInput,
  randomizeComposeInput,
  saveComposeEnvironmentInput,
  toComposeView,
  updateComposeInput,
} from "../compose/schemas.ts";
import type { Caller, ServiceContext } from "../context.ts";
import { appNameTaken } from "../databases/repository.ts";
import type { ComposeUpdate } from "../db/schema.ts";
import { deleteFinishedDeployments } from "../deployments/repository.ts";
import type { DeploymentKind } from "../deployments/start.ts";
import { startTargetDeployment } from "../deployments/start.ts";
import {
  cancelServiceDeployment,
  dropWaitingDeployments,
  stopRunningDeployment,
} from "../deployments/stop.ts";
import { composeDomainIds } from "../domains/repository.ts";
import { addComposeDomain, generateHostFor } from "../domains/service.ts";
import { deleteComposeDomain } from "../domains/writes.ts";
import { badRequest, conflict, notFound } from "../errors.ts";
import { readRuntimeLogs, runtimeLogInput, runtimeLogsSchema } from "../monitoring/runtime-logs.ts";
import { MAX_FILE_MOUNT_BYTES } from "../mounts/mounts.ts";
import { dockerMountSchema } from "../mounts/named-volumes.ts";
import { deleteComposeMounts } from "../mounts/repository.ts";
import { checkNetworkIds } from "../networks/index.ts";
import { defineRouter, mutation, query, success, successSchema } from "../procedure.ts";
import {
  grantCreated,
  grantsOf,
  requireCanCreateServices,
  requireCanDeleteServices,
  requireEnvironmentAccess,
} from "../projects/permissions.ts";
import { findEnvironment, findProject, isUniqueViolation } from "../projects/repository.ts";
import { agentServerId } from "../servers/repository.ts";
import {
  InvalidTemplateError,
  listTemplates,
  type RenderedTemplate,
  renderTemplate,
  renderTemplateFiles,
  TemplateNotFoundError,
} from "../templates/index.ts";

const deployStartedSchema = z.object({ success: z.literal(true), deploymentId: z.string() });
const statusAnswerSchema = z.object({
  success: z.literal(true),
  composeStatus: z.enum(["idle", "running", "done", "error"]),
});

/** The stack when it is of the caller's organization and visible to the caller; else 404. */
function load(ctx: ServiceContext, caller: Caller, composeId: string): Promise<LocatedCompose> {
  return loadCallerCompose(ctx.db, caller, composeId);
}

/**
 * A file the conversion refuses (a tenant's `privileged`, a domain's missing service, ...): 400
 * naming where. Answers the converted document (undefined: no file yet).
 */
async function refusedConversion(
  ctx: ServiceContext,
  row: LocatedCompose,
): Promise<Record<string, unknown> | undefined> {
  // A repository's file is read, converted and checked at each deploy.
  if (row.sourceType !== "raw" || row.composeFile.trim() === "") return undefined;
  return (await convertedComposeOf(ctx, row)).document;
}

/** A file that does not parse is a 400 naming where; nothing is stored. */
function checkFile(composeFile: string | undefined): void {
  if (composeFile === undefined || composeFile.trim() === "") return;
  try {
    parseComposeFile(composeFile);
  } catch (error) {
    if (error instanceof ComposeFileError) throw composeFileError(error);
    throw error;
  }
}

async function queue(
  ctx: ServiceContext,
  row: LocatedCompose,
  kind: DeploymentKind,
  input: { title?: string; description?: string; freshVolumes?: boolean },
) {
  if (!row.composeFile.trim() && row.sourceType === "raw") {
    throw badRequest("The compose service has no file yet: set composeFile first", {
      fields: ["composeFile"],
    });
  }
  const { deploymentId } = await startTargetDeployment(ctx, {
    target: { kind: "compose", id: row.composeId },
    organizationId: row.organizationId,
    serverId: row.serverId,
    kind,
    title: input.title,
    description: input.description,
    freshVolumes: input.freshVolumes,
  });
  return { success: true as const, deploymentId };
}

/** Changes the caller's stack by `patch` (a 404 when it is not the caller's). */
async function patchCompose(ctx: ServiceContext, caller: Caller, composeId: string, patch: ComposeUpdate) {
  const row = await load(ctx, caller, composeId);
  if (!(await updateCompose(ctx.db, row.composeId, patch))) throw notFound("Compose");
  return success;
}

/** The command the stack's agent deploys it with (getDefaultCommand). */
function deployCommandOf(row: LocatedCompose): string {
  const file = row.sourceType === "raw" ? STACK_FILE_NAME : row.composePath;
  const args =
    row.composeType === "stack"
      ? stackDeployArgs(file, row.appName)
      : ["compose", ...composeUpArgs(row.appName, file)];
  return `docker ${args.join(" ")}`;
}

async function targetEnvironment(ctx: ServiceContext, caller: Caller, environmentId: string) {
  const target = await findEnvironment(ctx.db, caller.organizationId, environmentId);
  if (!target) throw notFound("Environment");
  await requireEnvironmentAccess(ctx.db, caller, target);
  return target;
}

/** The server a new stack runs on: the caller's organization's, or this machine (not on cloud). */
async function targetServer(
  ctx: ServiceContext,
  caller: Caller,
  serverId: string | null | undefined,
): Promise<string | null> {
  if (!serverId && ctx.config.edition === "cloud") {
    throw badRequest("serverId is required on the cloud edition", { fields: ["serverId"] });
  }
  if (serverId && !(await serverBelongsTo(ctx.db, caller.organizationId, serverId))) {
    throw notFound("Server");
  }
  return serverId || null;
}

const LABEL_ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789";

/** A free appName for a template's stack: `<project>-<template>-<6 random>`, as Dokploy names it. */
async function templateAppName(ctx: ServiceContext, projectName: string, templateId: string) {
  const base =
    `${projectName} ${templateId}`
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, "-")
      .replace(/^-+|-+$/g, "")
      .slice(0, 56)
      .replace(/-+$/, "") || "template";
  for (;;) {
    const suffix = [...randomBytes(6)].map((byte) => LABEL_ALPHABET[byte % LABEL_ALPHABET.length]).join("");
    const candidate = `${base}-${suffix}`;
    if (!(await appNameTaken(ctx.db, candidate))) return candidate;
  }
}

/** A template the catalogues do not have is a 404; one that cannot be rendered a 400 naming `id`. */
async function renderedTemplate(
  ctx: ServiceContext,
  caller: Caller,
  input: { id: string; baseUrl?: string },
  options: { generateHost: (serviceName: string) => string },
): Promise<RenderedTemplate> {
  try {
    return await renderTemplate(ctx, input.id, {
      baseUrl: input.baseUrl,
      organizationId: caller.organizationId,
      generateHost: options.generateHost,
    });
  } catch (error) {
    if (error instanceof TemplateNotFoundError) throw notFound("Template");
    if (error instanceof InvalidTemplateError) throw badRequest(error.message, { fields: ["id"] });
    throw error;
  }
}

/** A template a caller sends (processTemplate, previewTemplate): base64 of JSON {compose, config}. */
const templateBase64Schema = z
  .string()
  .min(1)
  .max(4 * 1024 * 1024);

/** Decodes Dokploy's exported template: base64 of `{compose, config}` (config: template.toml's text). */
function decodeTemplate(base64: string): { composeFile: string; templateToml: string } {
  const invalid = (why: string) =>
    badRequest(`Invalid template: ${why}; it must be base64 of JSON {compose, config}`, {
      fields: ["base64"],
    });
  let data: unknown;
  try {
    data = JSON.parse(Buffer.from(base64, "base64").toString("utf8"));
  } catch {
    throw invalid("not base64 of JSON");
  }
  const { compose, config } = (data ?? {}) as { compose?: unknown; config?: unknown };
  if (typeof compose !== "string" || !compose.trim() || typeof config !== "string") {
    throw invalid("compose and config must be strings");
  }
  return { composeFile: compose, templateToml: config };
}

/** Renders a caller's template for a stack named `appName` (nothing is stored). */
async function renderSentTemplate(
  ctx: ServiceContext,
  caller: Caller,
  input: { base64: string; appName: string; serverId: string | null },
) {
  const files = decodeTemplate(input.base64);
  const generateHost = await generateHostFor(ctx, caller, input.appName, input.serverId ?? undefined);
  try {
    const rendered = renderTemplateFiles("sent", files, {
      generateHost,
      imageOverrides: ctx.config.templateImages,
    });
    // A file that does not parse is refused now; the tenancy walk runs where a file is stored.
    checkFile(rendered.composeFile);
    return {
      compose: files.composeFile,
      template: { envs: rendered.envs, domains: rendered.domains, mounts: rendered.mounts },
    };
  } catch (error) {
    if (error instanceof InvalidTemplateError) {
      throw badRequest(error.message.replace("Template sent is invalid", "Invalid template"), {
        fields: ["base64"],
      });
    }
    throw error;
  }
}

/** A file's text with Dokploy's collision rule applied (not interpolated: the file as its owner writes it). */
function collidedText(composeFile: string, collision: Parameters<typeof applyCollision>[1]): string {
  if (!composeFile.trim()) {
    throw badRequest("The compose service has no file yet: set composeFile first", {
      fields: ["composeFile"],
    });
  }
  let document: Record<string, unknown>;
  try {
    document = parseComposeFile(composeFile);
  } catch (error) {
    if (error instanceof ComposeFileError) throw composeFileError(error);
    throw error;
  }
  return stringifyYaml(applyCollision(document, collision), { lineWidth: 0 });
}

/**
 * randomize, suffix, isolatedDeployment and isolatedDeploymentsVolume as they would be stored:
 * a combination of which one field would do nothing is a 400 naming it (randomize without a
 * suffix, randomize beside isolatedDeployment, which wins; isolatedDeploymentsVolume alone).
 */
function checkCollisionFields(
  input: {
    suffix?: string;
    randomize?: boolean;
    isolatedDeployment?: boolean;
    isolatedDeploymentsVolume?: boolean;
  },
  next: Pick<LocatedCompose, "suffix" | "randomize" | "isolatedDeployment" | "isolatedDeploymentsVolume">,
): void {
  const sent = ["suffix", "randomize", "isolatedDeployment", "isolatedDeploymentsVolume"] as const;
  if (!sent.some((field) => input[field] !== undefined)) return;
  if (next.randomize && next.isolatedDeployment) {
    throw badRequest(
      "randomize and isolatedDeployment exclude each other: an isolated deployment is not randomized",
      {
        fields: ["randomize", "isolatedDeployment"],
      },
    );
  }
  if (next.randomize && !next.suffix) {
    throw badRequest("randomize needs a suffix: the names are suffixed with it", { fields: ["suffix"] });
  }
  if (next.isolatedDeploymentsVolume && !next.isolatedDeployment) {
    throw badRequest(
      "isolatedDeploymentsVolume applies to an isolated deployment: set isolatedDeployment too",
      {
        fields: ["isolatedDeploymentsVolume"],
      },
    );
  }
}

/** Dokploy's generateRandomHash: 8 hex digits. */
const randomSuffix = () => randomBytes(4).toString("hex");

const processedTemplateSchema = z.object({
  compose: z.string(),
  template: z.object({
    envs: z.array(z.string()),
    domains: z.array(
      z.object({ host: z.string(), port: z.number(), serviceName: z.string(), path: z.string().optional() }),
    ),
    mounts: z.array(z.object({ filePath: z.string(), content: z.string() })),
  }),
});

export const templateSummarySchema = z.object({
  id: z.string(),
  name: z.string(),
  version: z.string(),
  description: z.string(),
  logo: z.string(),
  links: z.object({
    github: z.string().optional(),
    website: z.string().optional(),
    docs: z.string().optional(),
  }),
  tags: z.array(z.string()),
});

const baseUrlSchema = z
  .string()
  .trim()
  .max(2000)
  .refine((url) => /^https?:\/\/[^\s]+$/.test(url), "must be an http(s) URL");

export const composeRouter = defineRouter("compose", {
  create: mutation({
    summary: "Create a compose stack in an environment (status idle; deploy starts it)",
    access: "member",
    input: createComposeInput,
    output: composeSchema,
    handler: async ({ ctx, caller, input }) => {
      const environment = await targetEnvironment(ctx, caller, input.environmentId);
      requireCanCreateServices(await grantsOf(ctx.db, caller));
      const serverId = await targetServer(ctx, caller, input.serverId);
      checkFile(input.composeFile);
      const taken = () =>
        conflict(`The appName "${input.appName}" is already in use`, { fields: ["appName"] });
      if (await appNameTaken(ctx.db, input.appName)) throw taken();
      let row: Awaited<ReturnType<typeof insertCompose>>;
      try {
        row = await insertCompose(ctx.db, {
          composeId: newComposeId(),
          name: input.name,
          appName: input.appName,
          description: input.description ?? null,
          environmentId: environment.environmentId,
          serverId,
          composeType: input.composeType ?? "docker-compose",
          composeFile: input.composeFile ?? "",
          sourceType: input.sourceType ?? "raw",
          refreshToken: newRefreshToken(),
        });
      } catch (error) {
        if (isUniqueViolation(error, COMPOSE_APP_NAME_CONSTRAINT)) throw taken();
        throw error;
      }
      // The conversion (the tenant's refusals too) needs the stored row: a file it refuses is
      // taken back at once.
      const located = await findCompose(ctx.db, caller.organizationId, row.composeId);
      if (located) {
        try {
          const document = await refusedConversion(ctx, located);
          await claimComposePorts(ctx, located, document, async () => undefined);
        } catch (error) {
          await deleteCompose(ctx.db, row.composeId);
          throw error;
        }
      }
      await grantCreated(ctx.db, caller, "services", row.composeId);
      return toComposeView(row);
    },
  }),

  one: query({
    summary: "A compose stack",
    access: "member",
    input: composeIdInput,
    output: composeSchema,
    handler: async ({ ctx, caller, input }) => toComposeView(await load(ctx, caller, input.composeId)),
  }),

  update: mutation({
    summary: "Change a compose stack's file, type, variables or source (applied by the next deploy)",
    access: "member",
    input: updateComposeInput,
    output: composeSchema,
    handler: async ({ ctx, caller, input }) => {
      const row = await load(ctx, caller, input.composeId);
      checkFile(input.composeFile);
      const { composeId, customGitSSHKeyId, ...fields } = input;
      const patch: ComposeUpdate = {};
      for (const [key, value] of Object.entries(fields)) {
        if (value !== undefined) (patch as Record<string, unknown>)[key] = value;
      }
      await checkGitSource(ctx, caller, input);
      const next = { ...row, ...(patch as Partial<LocatedCompose>) };
      if (input.networkIds !== undefined || input.composeType !== undefined) {
        await checkNetworkIds(
          ctx,
          caller.organizationId,
          { serverId: row.serverId, swarm: next.composeType === "stack" },
          next.networkIds,
        );
      }
      checkCollisionFields(input, next);
      if (customGitSSHKeyId !== undefined) patch.customGitSshKeyId = customGitSSHKeyId;
      if (patch.env === "") patch.env = null;
      Object.assign(next, patch);
      const document = await refusedConversion(ctx, next);
      const updated = await claimComposePorts(ctx, next, document, (trx) =>
        updateCompose(trx, row.composeId, patch),
      );
      if (!updated) throw notFound("Compose");
      return toComposeView(updated);
    },
  }),

  deploy: mutation({
    summary: "Queue a deployment of the stack; answers at once with its deploymentId",
    access: "member",
    input: deployComposeInput,
    output: deployStartedSchema,
    handler: async ({ ctx, caller, input }) =>
      queue(ctx, await load(ctx, caller, input.composeId), "deploy", input),
  }),

  redeploy: mutation({
    summary: "Queue a new deployment of the stack from its current file",
    access: "member",
    input: deployComposeInput,
    output: deployStartedSchema,
    handler: async ({ ctx, caller, input }) =>
      queue(ctx, await load(ctx, caller, input.composeId), "redeploy", input),
  }),

  start: mutation({
    summary: "Start the stack's services again (status done)",
    access: "member",
    input: composeIdInput,
    output: statusAnswerSchema,
    handler: async ({ ctx, caller, input }) => {
      const row = await load(ctx, caller, input.composeId);
      await composeStackAction(ctx, row, "START");
      await updateCompose(ctx.db, row.composeId, { composeStatus: "done" });
      return { success: true as const, composeStatus: "done" as const };
    },
  }),

  stop: mutation({
    summary: "Stop the stack's services (scaled to 0, volumes kept; status idle)",
    access: "member",
    input: composeIdInput,
    output: statusAnswerSchema,
    handler: async ({ ctx, caller, input }) => {
      const row = await load(ctx, caller, input.composeId);
      await composeStackAction(ctx, row, "STOP");
      await updateCompose(ctx.db, row.composeId, { composeStatus: "idle" });
      return { success: true as const, composeStatus: "idle" as const };
    },
  }),

  delete: mutation({
    summary: "Delete the stack: its services and networks, and with deleteVolumes its volumes",
    access: "member",
    input: composeIdInput.extend({ deleteVolumes: z.boolean().default(false) }),
    output: composeSchema,
    handler: async ({ ctx, caller, input }) => {
      const row = await load(ctx, caller, input.composeId);
      requireCanDeleteServices(await grantsOf(ctx.db, caller));
      await teardownCompose(ctx, row, "The compose service was deleted", input.deleteVolumes);
      await deleteCompose(ctx.db, row.composeId);
      return toComposeView(row);
    },
  }),

  loadServices: query({
    summary: "The service names of the stack's file",
    access: "member",
    input: composeIdInput.extend({ type: z.enum(["stack", "docker-compose"]).optional() }),
    output: z.array(z.string()),
    handler: async ({ ctx, caller, input }) => {
      const row = await load(ctx, caller, input.composeId);
      if (!row.composeFile.trim()) return [];
      const converted = await convertedComposeOf(ctx, {
        ...row,
        composeType: input.type ?? row.composeType,
      });
      return converted.services;
    },
  }),

  readLogs: query({
    summary:
      "The newest lines one container of the stack printed (docker.getContainersByAppNameMatch lists them), one `<time> <container> | <text>` line each",
    access: "member",
    input: composeIdInput.extend({ containerId: containerIdSchema, ...runtimeLogInput }),
    output: runtimeLogsSchema,
    handler: async ({ ctx, caller, input, logger }) => {
      const row = await load(ctx, caller, input.composeId);
      const target = {
        serverId: composeServerOf(row),
        owner: ownerOfCompose(row),
        containerId: input.containerId,
        stackName: row.appName,
      };
      return readRuntimeLogs(ctx.agents.client, target, input, logger);
    },
  }),

  getConvertedCompose: query({
    summary: "The file as it will be deployed: the stack's file with the platform's additions",
    access: "member",
    input: composeIdInput,
    output: z.string(),
    handler: async ({ ctx, caller, input }) => {
      const row = await load(ctx, caller, input.composeId);
      if (!row.composeFile.trim()) {
        throw badRequest("The compose service has no file yet: set composeFile first", {
          fields: ["composeFile"],
        });
      }
      return (await convertedComposeOf(ctx, row)).yaml;
    },
  }),

  move: mutation({
    summary: "Move the stack to another environment of the organization",
    access: "member",
    input: z.object({
      composeId: z.string().min(1).max(100),
      targetEnvironmentId: z.string().min(1).max(100),
    }),
    output: composeSchema,
    handler: async ({ ctx, caller, input }) => {
      const row = await load(ctx, caller, input.composeId);
      const target = await targetEnvironment(ctx, caller, input.targetEnvironmentId);
      const moved = await updateCompose(ctx.db, row.composeId, { environmentId: target.environmentId });
      if (!moved) throw notFound("Compose");
      return toComposeView(moved);
    },
  }),

  templates: query({
    summary: "The templates: the built-in catalogue, then the remote one (PLATFORM_TEMPLATES_URL or baseUrl)",
    access: "member",
    input: z.object({ baseUrl: baseUrlSchema.optional() }).optional(),
    output: z.array(templateSummarySchema),
    handler: async ({ ctx, caller, input }) =>
      listTemplates(ctx, { baseUrl: input?.baseUrl, organizationId: caller.organizationId }),
  }),

  deployTemplate: mutation({
    summary:
      "Create a compose stack from a template (variables generated, file mounts and domains created) and deploy it",
    access: "member",
    input: z.object({
      environmentId: idSchema,
      id: z.string().min(1).max(100),
      serverId: idSchema.nullish(),
      baseUrl: baseUrlSchema.optional(),
    }),
    output: composeSchema,
    handler: async ({ ctx, caller, input }) => {
      const environment = await targetEnvironment(ctx, caller, input.environmentId);
      requireCanCreateServices(await grantsOf(ctx.db, caller));
      const serverId = await targetServer(ctx, caller, input.serverId);
      // It deploys at once: a server its agent runs on is needed now, before anything is stored.
      await agentServerId(ctx, caller.organizationId, serverId);
      const project = await findProject(ctx.db, caller.organizationId, environment.projectId);
      if (!project) throw notFound("Environment");
      const appName = await templateAppName(ctx, project.name, input.id);
      const generateHost = await generateHostFor(ctx, caller, appName, serverId ?? undefined);
      const template = await renderedTemplate(ctx, caller, input, { generateHost });
      const summary = (await listTemplates(ctx, { baseUrl: input.baseUrl })).find(
        (entry) => entry.id === input.id,
      );
      for (const mount of template.mounts) {
        if (Buffer.byteLength(mount.content) > MAX_FILE_MOUNT_BYTES) {
          throw badRequest(`Template ${input.id}: the mount ${mount.filePath} is over 1 MiB`, {
            fields: ["id"],
          });
        }
      }
      const row = await insertCompose(ctx.db, {
        composeId: newComposeId(),
        name: input.id,
        appName,
        description: summary?.description.slice(0, 500) || null,
        environmentId: environment.environmentId,
        serverId,
        composeType: "docker-compose",
        composeFile: template.composeFile,
        sourceType: "raw",
        env: template.envs.join("\n") || null,
        icon: summary?.logo || null,
        refreshToken: newRefreshToken(),
      });
      const located = await findCompose(ctx.db, caller.organizationId, row.composeId);
      if (!located) throw notFound("Compose");
      try {
        await insertComposeFileMounts(ctx.db, located, template.mounts);
        // The tenant's refusals before anything reaches the proxy or the server.
        await convertedComposeOf(ctx, located);
        for (const domain of template.domains) {
          await addComposeDomain(ctx, caller, row.composeId, domain);
        }
      } catch (error) {
        await removeComposeProxy(ctx, located).catch(() => {});
        await deleteCompose(ctx.db, row.composeId);
        throw error;
      }
      await grantCreated(ctx.db, caller, "services", row.composeId);
      await queue(ctx, located, "deploy", { title: `Template ${input.id}` });
      return toComposeView((await findCompose(ctx.db, caller.organizationId, row.composeId)) ?? row);
    },
  }),

  search: query({
    summary: "Search the organization's compose stacks the caller may see, newest first",
    access: "member",
    input: z
      .object({
        q: searchFields.q,
        name: searchFields.name,
        appName: searchFields.appName,
        description: searchFields.description,
        projectId: searchFields.projectId,
        environmentId: searchFields.environmentId,
        limit: searchFields.limit,
        offset: searchFields.offset,
      })
      .prefault({}),
    output: z.object({ items: z.array(composeSummarySchema), total: z.number().int() }),
    handler: async ({ ctx, caller, input }) =>
      searchServices(ctx.db, "compose", caller.organizationId, input, await grantsOf(ctx.db, caller)),
  }),

  saveEnvironment: mutation({
    summary: "Set the stack's variables (the file is interpolated with them at the next deploy)",
    access: "member",
    input: saveComposeEnvironmentInput,
    output: successSchema,
    handler: ({ ctx, caller, input }) =>
      patchCompose(ctx, caller, input.composeId, { env: input.env === "" ? null : input.env }),
  }),

  cancelDeployment: mutation({
    summary: "Stop the stack's running deployment (every edition)",
    access: "member",
    input: composeIdInput,
    output: z.object({ success: z.boolean(), message: z.string() }),
    handler: async ({ ctx, caller, input }) => {
      const row = await load(ctx, caller, input.composeId);
      return cancelServiceDeployment(ctx, row.composeId, "compose");
    },
  }),

  killBuild: mutation({
    summary: "Stop the stack's running deployment and what it runs on the server (a build, a pull)",
    access: "member",
    input: composeIdInput,
    output: successSchema,
    handler: async ({ ctx, caller, input }) => {
      const row = await load(ctx, caller, input.composeId);
      await stopRunningDeployment(ctx, row.composeId, "Killed by compose.killBuild");
      return success;
    },
  }),

  cleanQueues: mutation({
    summary: "Drop the stack's waiting deployments (a running one goes on)",
    access: "member",
    input: composeIdInput,
    output: z.object({ success: z.literal(true), message: z.string() }),
    handler: async ({ ctx, caller, input }) => {
      const row = await load(ctx, caller, input.composeId);
      await dropWaitingDeployments(ctx, row.composeId, "Removed from the queue by compose.cleanQueues");
      return { success: true as const, message: "Queues cleaned successfully" };
    },
  }),

  clearDeployments: mutation({
    summary: "Delete the stack's finished deployments except the newest successful one",
    access: "member",
    input: composeIdInput,
    output: successSchema,
    handler: async ({ ctx, caller, input }) => {
      const row = await load(ctx, caller, input.composeId);
      requireCanDeleteServices(await grantsOf(ctx.db, caller));
      await deleteFinishedDeployments(ctx.db, { composeId: row.composeId });
      return success;
    },
  }),

  disconnectGitProvider: mutation({
    summary: "Remove the stack's repository source: back to a raw file, every Git field to its default",
    access: "member",
    input: composeIdInput,
    output: successSchema,
    handler: ({ ctx, caller, input }) => patchCompose(ctx, caller, input.composeId, DISCONNECTED_COMPOSE_GIT),
  }),

  getDefaultCommand: query({
    summary: "The command the stack's server deploys it with (`docker stack deploy` or `docker compose up`)",
    access: "member",
    input: composeIdInput,
    output: z.string(),
    handler: async ({ ctx, caller, input }) => deployCommandOf(await load(ctx, caller, input.composeId)),
  }),

  getTags: query({
    summary: "The tags of the templates (built-in catalogue and remote one), each once",
    access: "member",
    input: z.object({ baseUrl: baseUrlSchema.optional() }).optional(),
    output: z.array(z.string()),
    handler: async ({ ctx, caller, input }) => {
      const templates = await listTemplates(ctx, {
        baseUrl: input?.baseUrl,
        organizationId: caller.organizationId,
      });
      return [...new Set(templates.flatMap((template) => template.tags))];
    },
  }),

  refreshToken: mutation({
    summary: "Replace the stack's webhook token (the old webhook URL stops working)",
    access: "member",
    input: composeIdInput,
    output: successSchema,
    handler: ({ ctx, caller, input }) =>
      patchCompose(ctx, caller, input.composeId, { refreshToken: newRefreshToken() }),
  }),

  processTemplate: mutation({
    summary:
      "Render a template (base64 of JSON {compose, config}, Dokploy's export) for the stack: its env, domains and file mounts; nothing is stored",
    access: "member",
    input: z.object({ base64: templateBase64Schema, composeId: idSchema }),
    output: processedTemplateSchema,
    handler: async ({ ctx, caller, input }) => {
      const row = await load(ctx, caller, input.composeId);
      return renderSentTemplate(ctx, caller, {
        base64: input.base64,
        appName: row.appName,
        serverId: row.serverId,
      });
    },
  }),

  previewTemplate: mutation({
    summary:
      "Render a template (base64 of JSON {compose, config}) for a stack to be named appName, on serverId or this machine; nothing is stored",
    access: "member",
    input: z.object({
      base64: templateBase64Schema,
      appName: z.string().min(1).max(63),
      serverId: idSchema.optional(),
    }),
    output: processedTemplateSchema,
    handler: async ({ ctx, caller, input }) => {
      if (input.serverId && !(await serverBelongsTo(ctx.db, caller.organizationId, input.serverId))) {
        throw notFound("Server");
      }
      return renderSentTemplate(ctx, caller, {
        base64: input.base64,
        appName: input.appName,
        serverId: input.serverId ?? null,
      });
    },
  }),

  randomizeCompose: mutation({
    summary:
      "The stack's file with every service, volume, network, config and secret name suffixed (suffix, else 8 random hex digits); nothing is stored (randomize and suffix on compose.update apply it at deploy)",
    access: "member",
    input: randomizeComposeInput,
    output: z.string(),
    handler: async ({ ctx, caller, input }) => {
      const row = await load(ctx, caller, input.composeId);
      return collidedText(row.composeFile, { mode: "randomize", suffix: input.suffix || randomSuffix() });
    },
  }),

  isolatedDeployment: mutation({
    summary:
      "The stack's file (read from its source) as an isolated deployment deploys it: every service on the stack's own network keyed by suffix (else the stack's suffix, else the appName), volumes suffixed with isolatedDeploymentsVolume; unchanged when isolatedDeployment is off; nothing is stored",
    access: "member",
    input: randomizeComposeInput,
    output: z.string(),
    handler: async ({ ctx, caller, input }) => {
      const row = await load(ctx, caller, input.composeId);
      const { composeFile } = await readComposeSource(ctx, row);
      const collision = row.isolatedDeployment
        ? collisionOf({ ...row, suffix: input.suffix || row.suffix })
        : undefined;
      return collidedText(composeFile, collision);
    },
  }),

  fetchSourceType: mutation({
    summary:
      "Read the stack's file from its source now (a fresh clone of its branch for a repository) and answer the sourceType; a source that cannot be read is a 400",
    access: "member",
    input: composeIdInput,
    output: z.string(),
    handler: async ({ ctx, caller, input }) => {
      const row = await load(ctx, caller, input.composeId);
      await readComposeSource(ctx, row);
      return row.sourceType;
    },
  }),

  loadMountsByService: query({
    summary:
      "The named volumes Docker mounted into a running container of one service of the stack (none when it runs no container)",
    access: "member",
    input: z.object({ composeId: idSchema, serviceName: z.string().min(1).max(200) }),
    output: z.array(dockerMountSchema),
    handler: async ({ ctx, caller, input }) => {
      const row = await load(ctx, caller, input.composeId);
      return composeServiceVolumes(ctx, row, input.serviceName);
    },
  }),

  import: mutation({
    summary:
      "Replace the stack's file, variables, mounts and domains with a template's (base64 of JSON {compose, config}); the source becomes raw; deploy applies it",
    access: "member",
    input: z.object({ base64: templateBase64Schema, composeId: idSchema }),
    output: z.object({ success: z.literal(true), message: z.string() }),
    handler: async ({ ctx, caller, input }) => {
      const row = await load(ctx, caller, input.composeId);
      const files = decodeTemplate(input.base64);
      const generateHost = await generateHostFor(ctx, caller, row.appName, row.serverId ?? undefined);
      let rendered: RenderedTemplate;
      try {
        rendered = renderTemplateFiles("sent", files, {
          generateHost,
          imageOverrides: ctx.config.templateImages,
        });
      } catch (error) {
        if (error instanceof InvalidTemplateError) {
          throw badRequest(error.message.replace("Template sent is invalid", "Invalid template"), {
            fields: ["base64"],
          });
        }
        throw error;
      }
      for (const mount of rendered.mounts) {
        if (Buffer.byteLength(mount.content) > MAX_FILE_MOUNT_BYTES) {
          throw badRequest(`Invalid template: the mount ${mount.filePath} is over 1 MiB`, {
            fields: ["base64"],
          });
        }
      }
      const patch: ComposeUpdate = {
        composeFile: rendered.composeFile,
        sourceType: "raw",
        env: rendered.envs.join("\n") || null,
      };
      const next = { ...row, ...patch } as LocatedCompose;
      // The template's file and domains pass the conversion (the tenant's refusals too) before
      // anything of the stack is replaced.
      checkFile(rendered.composeFile);
      const document = (
        await convertedComposeOf(
          ctx,
          next,
          rendered.composeFile,
          rendered.domains.map((domain) => ({
            host: domain.host,
            serviceName: domain.serviceName,
            port: domain.port,
            path: domain.path ?? "/",
          })),
        )
      ).document;
      for (const domainId of await composeDomainIds(ctx.db, row.composeId)) {
        await deleteComposeDomain(ctx, domainId, row.composeId);
      }
      await deleteComposeMounts(ctx.db, row.composeId);
      const updated = await claimComposePorts(ctx, next, document, (trx) =>
        updateCompose(trx, row.composeId, patch),
      );
      if (!updated) throw notFound("Compose");
      await insertComposeFileMounts(ctx.db, row, rendered.mounts);
      for (const domain of rendered.domains) await addComposeDomain(ctx, caller, row.composeId, domain);
      return { success: true as const, message: "Template imported successfully" };
    },
  }),
});
