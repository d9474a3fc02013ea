/**
 * dockerVolume.*, dockerImage.* and dockerDiskUsage.* (Dokploy's names, inputs and answer
 * shapes): the named volumes, images and disk usage of a server's engine (this machine when
 * serverId is omitted), through its agent.
 *
 * Tenancy: organizations share engines. A caller acts within a ContainerScope the agent checks
 * itself: the objects labelled for its organization (platform.organization); an owner or admin
 * of the organization owning the server (this machine: the instance organization) also the
 * objects labelled for no organization; the platform's own never. Another organization's volume
 * or image is a 404 and untouched. Images pulled for a service carry no label: a tenant sees
 * them through its containers (the agent's images.ts). A member restricted to some services
 * (accessedServices) sees only volumes and images labelled for those services.
 */
import path from "node:path";
import type { DiskUsage, Volume } from "@platform/agent-protocol";
import { isImageReference } from "@platform/names";
import { z } from "zod";
import { serverIdSchema } from "../agents/container-views.ts";
import { callAgent } from "../agents/errors.ts";
import type { Caller, ServiceContext } from "../context.ts";
import { badRequest, forbidden, notFound } from "../errors.ts";
import { type EngineTarget, grantedTo, resolveEngineTarget } from "../servers/engine-target.ts";

// ---- inputs ----------------------------------------------------------------------------------

/** Docker's volume names; a leading `.` or `-` would be a path or an option elsewhere. */
export const volumeNameSchema = z
  .string()
  .min(1)
  .max(255)
  .regex(/^[a-zA-Z0-9][a-zA-Z0-9_.-]*$/, "Invalid volume name.");

/** The most of a file readVolumeFile answers and writeVolumeFile takes (bytes). */
export const VOLUME_FILE_LIMIT = 512 * 1024;

/** An absolute path inside the volume: no NUL, no `..` segment (refused, never resolved). */
export const volumePathSchema = z
  .string()
  .min(1)
  .max(4096)
  .refine((value) => value.startsWith("/"), "Path must be absolute.")
  .refine((value) => !value.includes("\0"), "Path must not contain NUL.")
  .refine((value) => !value.split("/").includes(".."), "Path must not contain '..'.");

export const volumeContentSchema = z
  .string()
  .refine((value) => Buffer.byteLength(value) <= VOLUME_FILE_LIMIT, `at most ${VOLUME_FILE_LIMIT} bytes`);

export const isVolumeRoot = (value: string) => path.posix.normalize(value) === "/";

const IMAGE_ID_PATTERN = /^(sha256:)?[a-f0-9]{12,64}$/;
/** What removeImage removes must be an image id or reference (checked on the whole input). */
export const isImageIdOrReference = (value: string) =>
  IMAGE_ID_PATTERN.test(value) || isImageReference(value);
export const imageIdSchema = z.string().min(1).max(512);
export const imageRefSchema = z
  .string()
  .min(1)
  .max(512)
  .refine(
    (value) => IMAGE_ID_PATTERN.test(value) || isImageReference(value),
    "must be an image id or reference",
  );
/** A repository or tag as `docker images` shows it; `<none>` (or empty) when there is none. */
export const repositorySchema = z.string().max(255);
export const tagSchema = z.string().max(128);
export const optionalServerId = { serverId: serverIdSchema.optional() };

// ---- answers ---------------------------------------------------------------------------------

export const volumeSchema = z.object({
  Name: z.string(),
  Driver: z.string(),
  Scope: z.string(),
  Mountpoint: z.string(),
  Labels: z.string(),
  CreatedAt: z.string(),
});
export const volumeSizeSchema = z.object({ name: z.string(), size: z.string().nullable() });
export const volumeFileEntrySchema = z.object({ name: z.string(), isDirectory: z.boolean() });
export const volumeFileContentSchema = z.object({
  content: z.string(),
  truncated: z.boolean(),
  binary: z.boolean(),
});
export const imageRowSchema = z.object({
  Repository: z.string(),
  Tag: z.string(),
  ID: z.string(),
  Digest: z.string(),
  CreatedAt: z.string(),
  CreatedSince: z.string(),
  Size: z.string(),
  Containers: z.string(),
});
export const diskUsageItemSchema = z.object({
  type: z.string(),
  totalCount: z.number(),
  active: z.number(),
  size: z.string(),
  reclaimable: z.string(),
  sizeBytes: z.number(),
});
export const buildCacheItemSchema = z.object({
  id: z.string(),
  type: z.string(),
  description: z.string(),
  size: z.string(),
  sizeBytes: z.number(),
  createdSince: z.string(),
  lastUsedSince: z.string(),
  usageCount: z.number(),
  shared: z.boolean(),
  inUse: z.boolean(),
});

// ---- formatting as the docker CLI does (go-units) --------------------------------------------

const SIZE_UNITS = ["B", "kB", "MB", "GB", "TB", "PB"];

/** Docker's HumanSize: decimal units, 4 significant digits ("1.235MB", "0B"). */
export function humanSize(bytes: number): string {
  let size = Math.max(bytes, 0);
  let unit = 0;
  while (size >= 1000 && unit < SIZE_UNITS.length - 1) {
    size /= 1000;
    unit++;
  }
  return `${Number(size.toPrecision(4))}${SIZE_UNITS[unit]}`;
}

/** Docker's HumanDuration of the time since `unixMs`, with " ago" ("2 days ago"). */
export function since(unixMs: number, now = Date.now()): string {
  if (!unixMs) return "";
  const seconds = Math.max(Math.floor((now - unixMs) / 1000), 0);
  const minutes = Math.floor(seconds / 60);
  const hours = Math.floor(minutes / 60);
  const days = Math.floor(hours / 24);
  let text: string;
  if (seconds < 1) text = "Less than a second";
  else if (seconds === 1) text = "1 second";
  else if (seconds < 60) text = `${seconds} seconds`;
  else if (minutes === 1) text = "About a minute";
  else if (minutes < 60) text = `${minutes} minutes`;
  else if (hours === 1) text = "About an hour";
  else if (hours < 48) text = `${hours} hours`;
  else if (days < 14) text = `${days} days`;
  else if (days < 90) text = `${Math.floor(days / 7)} weeks`;
  else if (days < 730) text = `${Math.floor(days / 30)} months`;
  else text = `${Math.floor(days / 365)} years`;
  return `${text} ago`;
}

/** `docker images`' CreatedAt: "2026-11-24 10:00:00 +0000 UTC". */
function createdAt(unixSeconds: number): string {
  return `${new Date(unixSeconds * 1000).toISOString().replace("T", " ").slice(0, 19)} +0000 UTC`;
}

// ---- target and scope ------------------------------------------------------------------------

function run<T>(ctx: ServiceContext, target: EngineTarget, call: () => Promise<T>): Promise<T> {
  return callAgent(target.agentServerId, call, ctx.logger);
}

const labelsText = (labels: Record<string, string>) =>
  Object.entries(labels)
    .map(([key, value]) => `${key}=${value}`)
    .join(",");

// ---- volumes ---------------------------------------------------------------------------------

async function listScopedVolumes(
  ctx: ServiceContext,
  target: EngineTarget,
  withSize: boolean,
): Promise<Volume[]> {
  const { volumes } = await run(ctx, target, () =>
    ctx.agents.client.call(
      target.agentServerId,
      "listVolumes",
      { scope: target.scope, withSize },
      withSize ? 60_000 : undefined,
    ),
  );
  return volumes.filter((volume) => grantedTo(volume.labels, target));
}

export async function getVolumes(ctx: ServiceContext, caller: Caller, serverId?: string) {
  const target = await resolveEngineTarget(ctx, caller, serverId);
  return (await listScopedVolumes(ctx, target, false)).map((volume) => ({
    Name: volume.name,
    Driver: volume.driver,
    Scope: volume.scope,
    Mountpoint: volume.mountpoint,
    Labels: labelsText(volume.labels),
    CreatedAt: volume.createdAt,
  }));
}

export async function getVolumesSize(ctx: ServiceContext, caller: Caller, serverId?: string) {
  const target = await resolveEngineTarget(ctx, caller, serverId);
  return (await listScopedVolumes(ctx, target, true)).map((volume) => ({
    name: volume.name,
    size: volume.sizeBytes < 0 ? null : humanSize(volume.sizeBytes),
  }));
}

/** The volume's inspect data when the caller may see it; a 404 otherwise. */
async function visibleVolume(ctx: ServiceContext, target: EngineTarget, volumeName: string) {
  const { inspectJson } = await run(ctx, target, () =>
    ctx.agents.client.call(target.agentServerId, "inspectVolume", { volumeName, scope: target.scope }),
  );
  const inspect = JSON.parse(inspectJson) as Record<string, unknown> & {
    Labels?: Record<string, string> | null;
  };
  if (!grantedTo(inspect.Labels, target)) throw notFound("Volume");
  return inspect;
}

export async function getVolumeConfig(
  ctx: ServiceContext,
  caller: Caller,
  volumeName: string,
  serverId?: string,
) {
  const target = await resolveEngineTarget(ctx, caller, serverId);
  return visibleVolume(ctx, target, volumeName);
}

export async function removeVolume(
  ctx: ServiceContext,
  caller: Caller,
  volumeName: string,
  serverId?: string,
) {
  const target = await resolveEngineTarget(ctx, caller, serverId);
  await visibleVolume(ctx, target, volumeName);
  await run(ctx, target, () =>
    ctx.agents.client.call(target.agentServerId, "removeVolume", { volumeName, scope: target.scope }, 60_000),
  );
}

type FileOperation = "LIST" | "READ" | "WRITE" | "DELETE";

async function volumeFile(
  ctx: ServiceContext,
  caller: Caller,
  input: { volumeName: string; path: string; serverId?: string },
  operation: FileOperation,
  content?: string,
) {
  const target = await resolveEngineTarget(ctx, caller, input.serverId);
  // Checked once the server is known to be the caller's (another's is a 404 whatever the path).
  if ((operation === "WRITE" || operation === "DELETE") && isVolumeRoot(input.path)) {
    throw badRequest(
      `Invalid input: path: the volume root cannot be ${operation === "WRITE" ? "written" : "deleted"}`,
      {
        fields: ["path"],
      },
    );
  }
  await visibleVolume(ctx, target, input.volumeName);
  return run(ctx, target, () =>
    ctx.agents.client.call(
      target.agentServerId,
      "volumeFile",
      {
        volumeName: input.volumeName,
        scope: target.scope,
        operation,
        path: input.path,
        content: content === undefined ? undefined : Buffer.from(content, "utf8"),
      },
      60_000,
    ),
  );
}

export async function listVolumeFiles(
  ctx: ServiceContext,
  caller: Caller,
  input: { volumeName: string; path: string; serverId?: string },
) {
  const result = await volumeFile(ctx, caller, input, "LIST");
  return result.entries.map((entry) => ({ name: entry.name, isDirectory: entry.isDirectory }));
}

/** True when the bytes are not text: a NUL, or not UTF-8 (a cut last character aside). */
function isBinary(bytes: Uint8Array, truncated: boolean): boolean {
  if (bytes.includes(0)) return true;
  const decoder = new TextDecoder("utf-8", { fatal: true });
  try {
    decoder.decode(bytes, { stream: truncated });
    return false;
  } catch {
    return true;
  }
}

export async function readVolumeFile(
  ctx: ServiceContext,
  caller: Caller,
  input: { volumeName: string; path: string; serverId?: string },
) {
  const result = await volumeFile(ctx, caller, input, "READ");
  const bytes = result.content;
  return {
    content: Buffer.from(bytes).toString("base64"),
    truncated: result.truncated,
    binary: isBinary(bytes, result.truncated),
  };
}

export async function writeVolumeFile(
  ctx: ServiceContext,
  caller: Caller,
  input: { volumeName: string; path: string; content: string; serverId?: string },
) {
  await volumeFile(ctx, caller, input, "WRITE", input.content);
}

export async function deleteVolumeFile(
  ctx: ServiceContext,
  caller: Caller,
  input: { volumeName: string; path: string; serverId?: string },
) {
  await volumeFile(ctx, caller, input, "DELETE");
}

// ---- images ----------------------------------------------------------------------------------

export async function getImages(ctx: ServiceContext, caller: Caller, serverId?: string) {
  const target = await resolveEngineTarget(ctx, caller, serverId);
  const { images } = await run(ctx, target, () =>
    ctx.agents.client.call(target.agentServerId, "listImages", { scope: target.scope }),
  );
  return images
    .filter((image) => grantedTo(image.labels, target))
    .flatMap((image) => {
      const shortId = image.id.replace(/^sha256:/, "").slice(0, 12);
      const digest = image.repoDigests[0]?.split("@")[1] ?? "<none>";
      const row = (repository: string, tag: string) => ({
        Repository: repository,
        Tag: tag,
        ID: shortId,
        Digest: digest,
        CreatedAt: createdAt(image.createdUnix),
        CreatedSince: since(image.createdUnix * 1000),
        Size: humanSize(image.sizeBytes),
        Containers: String(image.containers),
      });
      if (image.repoTags.length === 0) return [row("<none>", "<none>")];
      return image.repoTags.map((reference) => {
        const colon = reference.lastIndexOf(":");
        return row(reference.slice(0, colon), reference.slice(colon + 1));
      });
    });
}

async function visibleImage(ctx: ServiceContext, target: EngineTarget, imageRef: string) {
  const { inspectJson } = await run(ctx, target, () =>
    ctx.agents.client.call(target.agentServerId, "inspectImage", { imageRef, scope: target.scope }),
  );
  const inspect = JSON.parse(inspectJson) as Record<string, unknown> & {
    Config?: { Labels?: Record<string, string> | null };
  };
  if (!grantedTo(inspect.Config?.Labels, target)) throw notFound("Image");
  return inspect;
}

export async function getImageConfig(
  ctx: ServiceContext,
  caller: Caller,
  imageRef: string,
  serverId?: string,
) {
  const target = await resolveEngineTarget(ctx, caller, serverId);
  return visibleImage(ctx, target, imageRef);
}

/** Dokploy's choice of what to remove: repository:tag when both are set, else the id. */
export function imageReference(input: { repository: string; tag: string; id: string }): string {
  const tagged = input.repository && input.tag && input.repository !== "<none>" && input.tag !== "<none>";
  return tagged ? `${input.repository}:${input.tag}` : input.id;
}

export async function removeImage(
  ctx: ServiceContext,
  caller: Caller,
  input: { repository: string; tag: string; id: string; force?: boolean; serverId?: string },
) {
  const target = await resolveEngineTarget(ctx, caller, input.serverId);
  const reference = imageReference(input);
  if (!isImageIdOrReference(reference)) {
    const fields = reference === input.id ? ["id"] : ["repository", "tag"];
    throw badRequest(
      `Invalid input: ${fields.join(", ")}: must name an image (an id, or repository and tag)`,
      {
        fields,
      },
    );
  }
  await visibleImage(ctx, target, reference);
  await run(ctx, target, () =>
    ctx.agents.client.call(
      target.agentServerId,
      "removeImage",
      { reference, force: input.force ?? false, scope: target.scope },
      60_000,
    ),
  );
}

// ---- disk usage ------------------------------------------------------------------------------

async function diskUsage(ctx: ServiceContext, target: EngineTarget, buildCache: boolean): Promise<DiskUsage> {
  return run(ctx, target, () =>
    ctx.agents.client.call(target.agentServerId, "diskUsage", { scope: target.scope, buildCache }, 60_000),
  );
}

export async function getDiskUsage(ctx: ServiceContext, caller: Caller, serverId?: string) {
  const target = await resolveEngineTarget(ctx, caller, serverId);
  const { items } = await diskUsage(ctx, target, false);
  return items.map((item) => {
    const percent = item.sizeBytes > 0 ? Math.floor((item.reclaimableBytes * 100) / item.sizeBytes) : 0;
    return {
      type: item.type,
      totalCount: item.totalCount,
      active: item.active,
      size: humanSize(item.sizeBytes),
      reclaimable: item.sizeBytes > 0 ? `${humanSize(item.reclaimableBytes)} (${percent}%)` : humanSize(0),
      sizeBytes: item.sizeBytes,
    };
  });
}

export async function getBuildCache(ctx: ServiceContext, caller: Caller, serverId?: string) {
  const target = await resolveEngineTarget(ctx, caller, serverId);
  // The build cache carries no owner: only an administrator of the engine sees it.
  if (!target.scope.includeUnmanaged) return [];
  const { buildCache } = await diskUsage(ctx, target, true);
  return buildCache.map((record) => ({
    id: record.id,
    type: record.type,
    description: record.description,
    size: humanSize(record.sizeBytes),
    sizeBytes: record.sizeBytes,
    createdSince: since(record.createdUnixMs),
    lastUsedSince: since(record.lastUsedUnixMs),
    usageCount: record.usageCount,
    shared: record.shared,
    inUse: record.inUse,
  }));
}

export async function pruneBuildCache(ctx: ServiceContext, caller: Caller, serverId?: string) {
  const target = await resolveEngineTarget(ctx, caller, serverId);
  if (!target.scope.includeUnmanaged) {
    throw forbidden("The build cache is shared by the server's engine: only an owner or admin may prune it");
  }
  await run(ctx, target, () => ctx.agents.client.call(target.agentServerId, "cleanBuildCache", {}, 600_000));
}
