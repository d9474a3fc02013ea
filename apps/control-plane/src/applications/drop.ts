/**
 * Drop deployments: `POST /api/application.dropDeployment` (multipart: applicationId and the
 * archive in the field `zip`, as Dokploy's form sends it; a .zip or a .tar.gz, recognized by
 * its first bytes) stores the archive under the data directory and queues a deployment of it.
 * The agent that builds it fetches it once: the control plane's own agent by a file:// URL, a
 * remote server's agent at GET /agent/artifacts/<one-time token>. The agent unpacks it (no entry
 * may leave the build directory) and checks its SHA-256.
 */
import { createHash, randomBytes } from "node:crypto";
import { createReadStream } from "node:fs";
import { mkdir, readdir, rm, stat, writeFile } from "node:fs/promises";
import path from "node:path";
import { Readable } from "node:stream";
import { pathToFileURL } from "node:url";
import type { ArchiveSource } from "@platform/agent-protocol";
import { type Context, Hono } from "hono";
import { bodyLimit } from "hono/body-limit";
import { LOCAL_SERVER_ID } from "../agents/hub.ts";
import { authenticate } from "../auth/caller.ts";
import { credentialsOf } from "../auth/cookie-session.ts";
import type { Caller, ServiceContext } from "../context.ts";
import { newId } from "../crypto/ids.ts";
import { errorBodyFor, resultEnvelope } from "../dispatcher.ts";
import { ApiError, badRequest, notFound } from "../errors.ts";
import { allowSlowBody } from "../limits.ts";
import { errorResponse, type OpenApiPathItem } from "../openapi.ts";
import { requireApplicationAccess } from "../projects/permissions.ts";
import { controlPlanePublicIp } from "../servers/public-ip.ts";
import { controlPlaneUrlForAgents } from "../servers/ssh-setup.ts";
import { findApplication, updateApplication } from "./repository.ts";
import { startApplicationDeployment } from "./start-deployment.ts";

/** Largest archive accepted by application.dropDeployment. */
export const MAX_DROP_UPLOAD_BYTES = 100 * 1024 * 1024;

export const dropDeploymentOpenApi: OpenApiPathItem = {
  post: {
    operationId: "application.dropDeployment",
    tags: ["application"],
    summary: "Upload a .zip or .tar.gz (at most 100 MiB) and deploy it",
    security: [{ bearer: [] }, { apiKey: [] }],
    requestBody: {
      required: true,
      content: {
        "multipart/form-data": {
          schema: {
            type: "object",
            required: ["applicationId", "zip"],
            properties: {
              applicationId: { type: "string" },
              zip: { type: "string", format: "binary", description: "The archive (.zip or .tar.gz)" },
            },
          },
        },
      },
    },
    responses: {
      "200": {
        description: "The deployment is queued",
        content: {
          "application/json": {
            schema: {
              type: "object",
              required: ["success", "deploymentId"],
              properties: { success: { const: true }, deploymentId: { type: "string" } },
            },
          },
        },
      },
      default: errorResponse,
    },
  },
};
/** How long a remote agent has to fetch an archive offered to it. */
const ARTIFACT_TTL_MS = 60 * 60 * 1000;
/** Archives kept per application (the newest ones; redeploy rebuilds the newest). */
const KEPT_UPLOADS = 3;

export type ArchiveFormat = "zip" | "tar.gz";

/** Archives offered to remote agents: one-time token -> file. Tokens are 256-bit random. */
const offeredArtifacts = new Map<string, { filePath: string; expiresAt: number }>();

function offerArtifact(filePath: string, now: number): string {
  for (const [token, offer] of offeredArtifacts) if (offer.expiresAt < now) offeredArtifacts.delete(token);
  const token = randomBytes(32).toString("base64url");
  offeredArtifacts.set(token, { filePath, expiresAt: now + ARTIFACT_TTL_MS });
  return token;
}

/** The file of a valid token, which stops being valid at once. */
function takeArtifact(token: string, now: number): string | undefined {
  const offer = offeredArtifacts.get(token);
  offeredArtifacts.delete(token);
  return offer && offer.expiresAt >= now ? offer.filePath : undefined;
}

async function sha256OfFile(filePath: string): Promise<string> {
  const hash = createHash("sha256");
  for await (const chunk of createReadStream(filePath)) hash.update(chunk as Buffer);
  return hash.digest("hex");
}

/** The ArchiveSource of a stored upload for the agent of `serverId`. */
export async function archiveSourceFor(
  ctx: ServiceContext,
  serverId: string,
  archive: { path: string; format: ArchiveFormat },
): Promise<ArchiveSource> {
  const sha256 = await sha256OfFile(archive.path).catch(() => {
    throw new Error("The uploaded archive is no longer stored on the control plane: upload it again");
  });
  if (serverId === LOCAL_SERVER_ID) {
    return { url: pathToFileURL(archive.path).href, format: archive.format, sha256 };
  }
  const base = controlPlaneUrlForAgents(ctx, controlPlanePublicIp(ctx.config));
  if (!base) {
    throw new Error("Set PLATFORM_URL so remote servers can download the uploaded archive");
  }
  const token = offerArtifact(archive.path, ctx.now().getTime());
  return { url: `${base}/agent/artifacts/${token}`, format: archive.format, sha256 };
}

function uploadDirectory(ctx: ServiceContext, applicationId: string): string {
  return path.resolve(ctx.config.dataDir, "uploads", applicationId);
}

/** The newest stored upload of the application (a redeploy of a drop source rebuilds it). */
export async function latestUpload(
  ctx: ServiceContext,
  applicationId: string,
): Promise<{ path: string; format: ArchiveFormat } | undefined> {
  const directory = uploadDirectory(ctx, applicationId);
  const names = await readdir(directory).catch(() => [] as string[]);
  const archives = names.filter((name) => name.endsWith(".zip") || name.endsWith(".tar.gz")).sort();
  const newest = archives.at(-1);
  if (!newest) return undefined;
  return { path: path.join(directory, newest), format: newest.endsWith(".zip") ? "zip" : "tar.gz" };
}

/** Removes the application's stored uploads (application.delete). */
export async function removeUploads(ctx: ServiceContext, applicationId: string): Promise<void> {
  await rm(uploadDirectory(ctx, applicationId), { recursive: true, force: true });
}

/** zip or gzip by the first bytes; anything else is refused. */
function formatOf(bytes: Uint8Array): ArchiveFormat | undefined {
  if (bytes[0] === 0x50 && bytes[1] === 0x4b && bytes[2] === 0x03 && bytes[3] === 0x04) return "zip";
  if (bytes[0] === 0x1f && bytes[1] === 0x8b) return "tar.gz";
  return undefined;
}

/** Stores the archive as <dataDir>/uploads/<applicationId>/<time>-<id>.<ext>, keeping the newest few. */
async function storeUpload(
  ctx: ServiceContext,
  applicationId: string,
  bytes: Uint8Array,
  format: ArchiveFormat,
): Promise<string> {
  const directory = uploadDirectory(ctx, applicationId);
  await mkdir(directory, { recursive: true, mode: 0o700 });
  const stamp = ctx.now().getTime().toString().padStart(15, "0");
  const filePath = path.join(directory, `${stamp}-${newId()}.${format}`);
  await writeFile(filePath, bytes, { mode: 0o600 });
  const names = (await readdir(directory)).sort();
  for (const old of names.slice(0, Math.max(0, names.length - KEPT_UPLOADS))) {
    await rm(path.join(directory, old), { force: true });
  }
  return filePath;
}

const tooLarge = () =>
  new ApiError("PAYLOAD_TOO_LARGE", `The archive exceeds ${MAX_DROP_UPLOAD_BYTES} bytes`, {
    maxBytes: MAX_DROP_UPLOAD_BYTES,
    fields: ["zip"],
  });

/** The caller of an upload, from its headers alone: nothing of the body is read before this. */
function uploadCaller(ctx: ServiceContext, request: Request, url: URL): Promise<Caller> {
  return authenticate(ctx, credentialsOf(request), url.searchParams.keys());
}

async function dropDeployment(ctx: ServiceContext, caller: Caller, request: Request) {
  if (!request.headers.get("content-type")?.toLowerCase().startsWith("multipart/form-data")) {
    throw badRequest("Send multipart/form-data with the fields applicationId and zip", {
      fields: ["zip"],
    });
  }
  let form: FormData;
  try {
    form = await request.formData();
  } catch {
    throw badRequest("The multipart body could not be read", { fields: ["zip"] });
  }
  const applicationId = form.get("applicationId");
  if (typeof applicationId !== "string" || applicationId.trim() === "" || applicationId.length > 100) {
    throw badRequest("applicationId is required", { fields: ["applicationId"] });
  }
  const file = form.get("zip");
  if (!file || typeof file === "string") {
    throw badRequest("Attach the archive (.zip or .tar.gz) in the field zip", { fields: ["zip"] });
  }
  if (file.size > MAX_DROP_UPLOAD_BYTES) throw tooLarge();
  const application = await findApplication(ctx.db, caller.organizationId, applicationId);
  if (!application) throw notFound("Application");
  await requireApplicationAccess(ctx.db, caller, application.applicationId);
  const bytes = new Uint8Array(await file.arrayBuffer());
  const format = formatOf(bytes);
  if (!format) throw badRequest("The archive must be a .zip or a .tar.gz file", { fields: ["zip"] });

  const archivePath = await storeUpload(ctx, application.applicationId, bytes, format);
  await updateApplication(ctx.db, application.applicationId, { sourceType: "drop" });
  const { deploymentId } = await startApplicationDeployment(ctx, {
    applicationId: application.applicationId,
    kind: "deploy",
    archive: { path: archivePath, format },
  });
  return { success: true as const, deploymentId };
}

/**
 * Registers the drop upload (both API prefixes) and the artifact download. Call before the
 * general /api body limit: the upload has its own, larger one.
 */
export function registerDropRoutes(app: Hono, ctx: ServiceContext): void {
  const limit = bodyLimit({
    maxSize: MAX_DROP_UPLOAD_BYTES + 64 * 1024,
    onError: (c) => c.json(errorBodyFor(c.req.path, tooLarge()), 413),
  });
  const uploads = new Hono<{ Variables: { caller: Caller } }>();
  const answerError = (c: Context, error: unknown) => {
    const apiError =
      error instanceof ApiError ? error : new ApiError("INTERNAL_SERVER_ERROR", "Internal server error");
    if (!(error instanceof ApiError)) ctx.logger.error({ err: error }, "drop upload failed");
    return c.json(errorBodyFor(c.req.path, apiError), apiError.status as 400);
  };
  for (const [route, trpc] of [
    ["/api/application.dropDeployment", false],
    ["/api/trpc/application.dropDeployment", true],
  ] as const) {
    // Credentials first, then the size limit (which may buffer a chunked body), then the body:
    // an anonymous client gets its 401 before a byte of its upload is read.
    uploads.post(
      route,
      async (c, next) => {
        try {
          c.set("caller", await uploadCaller(ctx, c.req.raw, new URL(c.req.url)));
          allowSlowBody(c.env);
        } catch (error) {
          return answerError(c, error);
        }
        await next();
      },
      limit,
      async (c) => {
        try {
          const result = await dropDeployment(ctx, c.get("caller"), c.req.raw);
          return c.json(trpc ? resultEnvelope(result) : result);
        } catch (error) {
          return answerError(c, error);
        }
      },
    );
  }
  app.route("/", uploads);

  app.get("/agent/artifacts/:token", async (c) => {
    const filePath = takeArtifact(c.req.param("token"), ctx.now().getTime());
    const size = filePath
      ? await stat(filePath)
          .then((s) => s.size)
          .catch(() => undefined)
      : undefined;
    if (!filePath || size === undefined) {
      return c.json(new ApiError("NOT_FOUND", "Unknown or already used artifact").toBody(), 404);
    }
    const body = Readable.toWeb(createReadStream(filePath)) as ReadableStream;
    return c.body(body, 200, {
      "content-type": "application/octet-stream",
      "content-length": String(size),
      "cache-control": "no-store",
    });
  });
}
