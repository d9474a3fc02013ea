/**
 * mounts (Dokploy's mount router, issue 27): named volumes, files the platform writes and
 * (instance organization only) host paths, of an application or a database service, and files
 * of a compose stack (written under its `../files/`, where its compose file binds them); they
 * apply on the service's next deploy (its spec changes, never its appName). The rules are in
 * mounts/mounts.ts. A mount or service of another organization is a 404; a second mount at the
 * same mountPath of a service is a 409.
 */
import { z } from "zod";
import { findApplication } from "../applications/repository.ts";
import { idSchema } from "../applications/schemas.ts";
import { loadCallerCompose } from "../compose/repository.ts";
import type { Caller, ServiceContext } from "../context.ts";
import type { DatabaseKind } from "../databases/kinds.ts";
import { findDatabase } from "../databases/repository.ts";
import type { Mount } from "../db/schema.ts";
import { badRequest, notFound } from "../errors.ts";
import { checkMount, type MountFields, type MountOwner } from "../mounts/mounts.ts";
import { dockerMountSchema, namedVolumesOf } from "../mounts/named-volumes.ts";
import { deleteMount, findMount, insertMount, listServiceMounts, updateMount } from "../mounts/repository.ts";
import { defineRouter, mutation, query } from "../procedure.ts";
import { requireApplicationAccess, requireServiceAccess } from "../projects/permissions.ts";
import { type ServiceKind, serviceKinds } from "../projects/workload-kinds.ts";

const mountTypeSchema = z.enum(["volume", "file", "bind"]);
const text = (max: number) => z.string().max(max).nullish();
const fieldsShape = {
  type: mountTypeSchema,
  /** Required but for a compose stack's file mount, which leaves it empty. */
  mountPath: z.string().max(4096).nullish(),
  volumeName: text(255),
  filePath: text(4096),
  content: text(1024 * 1024 + 1),
  hostPath: text(4096),
};

/** Dokploy's mount as its clients read it: one id field per kind, the others null. */
export const mountSchema = z.object({
  mountId: z.string(),
  type: mountTypeSchema,
  volumeName: z.string().nullable(),
  filePath: z.string().nullable(),
  content: z.string().nullable(),
  hostPath: z.string().nullable(),
  mountPath: z.string(),
  serviceType: z.enum(serviceKinds),
  serviceId: z.string(),
  applicationId: z.string().nullable(),
  postgresId: z.string().nullable(),
  mysqlId: z.string().nullable(),
  mariadbId: z.string().nullable(),
  mongoId: z.string().nullable(),
  redisId: z.string().nullable(),
  libsqlId: z.string().nullable(),
  composeId: z.string().nullable(),
  createdAt: z.string(),
});

/**
 * Dokploy's mounts.update also takes the mount's owner (serviceType and the kind's id): a mount
 * never moves, so a given value must be the mount's own (400 naming the field) and is dropped.
 */
const ownerClaimKeys = [
  "serviceType",
  "applicationId",
  "postgresId",
  "mysqlId",
  "mariadbId",
  "mongoId",
  "redisId",
  "libsqlId",
  "composeId",
] as const;
type OwnerClaims = Partial<Record<(typeof ownerClaimKeys)[number], string | null>>;
const ownerClaimShape = {
  serviceType: z.enum(serviceKinds).optional(),
  ...Object.fromEntries(ownerClaimKeys.slice(1).map((key) => [key, idSchema.nullish()])),
};

function withoutOwnerClaims<T extends object>(view: z.input<typeof mountSchema>, input: T & OwnerClaims): T {
  const rest: Record<string, unknown> = { ...input };
  for (const key of ownerClaimKeys) {
    const claimed = rest[key];
    delete rest[key];
    if (claimed !== undefined && claimed !== view[key]) {
      throw badRequest(`Invalid input: ${key}: must be the mount's own (${view[key] ?? "null"})`, {
        fields: [key],
      });
    }
  }
  return rest as T;
}

function toView(row: Mount): z.input<typeof mountSchema> {
  const kind = row.serviceType as ServiceKind;
  const serviceId = row.applicationId ?? row.databaseId ?? row.composeId ?? "";
  const idOf = (k: ServiceKind) => (kind === k ? serviceId : null);
  return {
    mountId: row.mountId,
    type: row.type,
    volumeName: row.volumeName,
    filePath: row.filePath,
    content: row.content,
    hostPath: row.hostPath,
    mountPath: row.mountPath,
    serviceType: kind,
    serviceId,
    applicationId: idOf("application"),
    postgresId: idOf("postgres"),
    mysqlId: idOf("mysql"),
    mariadbId: idOf("mariadb"),
    mongoId: idOf("mongo"),
    redisId: idOf("redis"),
    libsqlId: idOf("libsql"),
    composeId: idOf("compose"),
    createdAt: row.createdAt,
  };
}

/** The service the caller names, when it is the organization's and visible: 404 otherwise. */
async function loadService(
  ctx: ServiceContext,
  caller: Caller,
  kind: ServiceKind,
  serviceId: string,
): Promise<MountOwner> {
  if (kind === "compose") {
    await loadCallerCompose(ctx.db, caller, serviceId);
  } else if (kind === "application") {
    const application = await findApplication(ctx.db, caller.organizationId, serviceId);
    if (!application) throw notFound("Application");
    await requireApplicationAccess(ctx.db, caller, application.applicationId);
  } else {
    const label = `${kind[0]!.toUpperCase()}${kind.slice(1)}`;
    const row = await findDatabase(ctx.db, caller.organizationId, kind as DatabaseKind, serviceId);
    if (!row) throw notFound(label);
    await requireServiceAccess(
      ctx.db,
      caller,
      { serviceId: row.databaseId, environmentId: row.environmentId, projectId: row.projectId },
      label,
    );
  }
  return { organizationId: caller.organizationId, kind, serviceId };
}

/** The mount when the caller may see its service; 404 "Mount" otherwise. */
async function loadMount(
  ctx: ServiceContext,
  caller: Caller,
  mountId: string,
): Promise<{ row: Mount; owner: MountOwner }> {
  const row = await findMount(ctx.db, caller.organizationId, mountId);
  if (!row) throw notFound("Mount");
  try {
    const owner = await loadService(
      ctx,
      caller,
      row.serviceType as ServiceKind,
      row.applicationId ?? row.databaseId ?? row.composeId ?? "",
    );
    return { row, owner };
  } catch (error) {
    if (error instanceof Error && "code" in error && error.code === "NOT_FOUND") throw notFound("Mount");
    throw error;
  }
}

const mountIdInput = z.object({ mountId: idSchema });

export const mountsRouter = defineRouter("mounts", {
  create: mutation({
    summary: "Mount a volume, a file or (instance organization) a host path into a service (next deploy)",
    access: "member",
    input: z.object({
      ...fieldsShape,
      serviceType: z.enum(serviceKinds).default("application"),
      serviceId: idSchema,
    }),
    output: mountSchema,
    handler: async ({ ctx, caller, input }) => {
      const owner = await loadService(ctx, caller, input.serviceType, input.serviceId);
      const checked = await checkMount(ctx.db, owner, input);
      return toView(await insertMount(ctx.db, owner, checked));
    },
  }),

  one: query({
    summary: "One mount",
    access: "member",
    input: mountIdInput,
    output: mountSchema,
    handler: async ({ ctx, caller, input }) => toView((await loadMount(ctx, caller, input.mountId)).row),
  }),

  update: mutation({
    summary: 'Change a mount (next deploy); null or "" clears a field',
    access: "member",
    input: z.object({
      mountId: idSchema,
      ...Object.fromEntries(Object.entries(fieldsShape).map(([key, schema]) => [key, schema.optional()])),
      ...ownerClaimShape,
    }) as z.ZodType<{ mountId: string } & Partial<MountFields> & OwnerClaims>,
    output: mountSchema,
    handler: async ({ ctx, caller, input }) => {
      const { mountId, ...rest } = input;
      const { row, owner } = await loadMount(ctx, caller, mountId);
      // Every service id named must be the caller's to see (404) before any 400.
      for (const key of ownerClaimKeys.slice(1)) {
        const id = (rest as OwnerClaims)[key];
        if (id) await loadService(ctx, caller, key.slice(0, -2) as ServiceKind, id);
      }
      const fields = withoutOwnerClaims(toView(row), rest);
      const typeChanged = fields.type !== undefined && fields.type !== row.type;
      // A new type starts from none of the old type's fields.
      const base: MountFields = typeChanged
        ? { type: fields.type as Mount["type"], mountPath: row.mountPath }
        : {
            type: row.type,
            mountPath: row.mountPath,
            volumeName: row.volumeName,
            filePath: row.filePath,
            content: row.content,
            hostPath: row.hostPath,
          };
      const merged = Object.fromEntries(
        Object.entries({ ...base, ...fields }).filter(([, value]) => value !== undefined),
      ) as unknown as MountFields;
      const checked = await checkMount(ctx.db, owner, merged, row.mountId);
      return toView(await updateMount(ctx.db, row.mountId, checked));
    },
  }),

  listByServiceId: query({
    summary: "The mounts of a service, oldest first",
    access: "member",
    input: z.object({ serviceId: idSchema, serviceType: z.enum(serviceKinds) }),
    output: z.array(mountSchema),
    handler: async ({ ctx, caller, input }) => {
      const owner = await loadService(ctx, caller, input.serviceType, input.serviceId);
      return (await listServiceMounts(ctx.db, owner)).map(toView);
    },
  }),

  allNamedByApplicationId: query({
    summary:
      "The named volumes Docker mounted into the application's running container (none when it runs none)",
    access: "member",
    input: z.object({ applicationId: idSchema }),
    output: z.array(dockerMountSchema),
    handler: async ({ ctx, caller, input }) => {
      const application = await findApplication(ctx.db, caller.organizationId, input.applicationId);
      if (!application) throw notFound("Application");
      await requireApplicationAccess(ctx.db, caller, application.applicationId);
      return namedVolumesOf(ctx, application, caller.organizationId);
    },
  }),

  remove: mutation({
    summary: "Remove a mount (next deploy); a volume's data stays in the volume",
    access: "member",
    input: mountIdInput,
    output: mountSchema,
    handler: async ({ ctx, caller, input }) => {
      const { row } = await loadMount(ctx, caller, input.mountId);
      await deleteMount(ctx.db, row.mountId);
      return toView(row);
    },
  }),
});
