/**
 * docker.uploadFileToContainer: `POST /api/docker.uploadFileToContainer` (and under /api/trpc),
 * multipart as Dokploy's form sends it: containerId, file, destinationPath and serverId
 * (optional). The file (any bytes, at most CONTAINER_FILE_LIMIT_BYTES) is written through Docker's
 * archive API like docker.writeContainerFile, after the same ownership check (the router's
 * checkedContainer, then the agent's labels) and path checks. `destinationPath` is the file's path
 * in the container; one ending in `/` is a directory, and the upload keeps its own name in it.
 */
import type { Context, Hono } from "hono";
import { authenticate } from "../auth/caller.ts";
import { credentialsOf } from "../auth/cookie-session.ts";
import type { Caller, ServiceContext } from "../context.ts";
import { errorBodyFor, resultEnvelope } from "../dispatcher.ts";
import { ApiError, badRequest } from "../errors.ts";
import { errorResponse, type OpenApiPathItem } from "../openapi.ts";
import { checkedContainer } from "./container-access.ts";
import {
  CONTAINER_FILE_LIMIT_BYTES,
  containerPathSchema,
  uploadContainerFile,
} from "./container-operations.ts";
import { containerIdSchema, serverIdSchema } from "./container-views.ts";

export const UPLOAD_FILE_PATH = "/api/docker.uploadFileToContainer";

export const uploadFileToContainerOpenApi: OpenApiPathItem = {
  post: {
    operationId: "docker.uploadFileToContainer",
    tags: ["docker"],
    summary: "Upload a file (at most 512 KiB) into a container (Docker's archive API)",
    security: [{ bearer: [] }, { apiKey: [] }],
    requestBody: {
      required: true,
      content: {
        "multipart/form-data": {
          schema: {
            type: "object",
            required: ["containerId", "file", "destinationPath"],
            properties: {
              containerId: { type: "string" },
              file: {
                type: "string",
                format: "binary",
                description: "The file (any content, at most 512 KiB)",
              },
              destinationPath: {
                type: "string",
                description:
                  "The file's path in the container; ending in / a directory the file keeps its name in",
              },
              serverId: { type: "string" },
            },
          },
        },
      },
    },
    responses: {
      "200": {
        description: "The file is written",
        content: {
          "application/json": {
            schema: { type: "object", required: ["success"], properties: { success: { const: true } } },
          },
        },
      },
      default: errorResponse,
    },
  },
};

const tooLarge = () =>
  new ApiError("PAYLOAD_TOO_LARGE", `The file exceeds ${CONTAINER_FILE_LIMIT_BYTES} bytes`, {
    maxBytes: CONTAINER_FILE_LIMIT_BYTES,
    fields: ["file"],
  });

/** A text field of the form checked by `schema`: a 400 naming the field otherwise. */
function field<T>(
  form: FormData,
  name: string,
  schema: { safeParse(value: unknown): { success: true; data: T } | { success: false } },
  optional = false,
): T | undefined {
  const value = form.get(name);
  if ((value === null || value === "") && optional) return undefined;
  const parsed = typeof value === "string" ? schema.safeParse(value) : { success: false as const };
  if (!parsed.success) throw badRequest(`${name}: a valid value is required`, { fields: [name] });
  return parsed.data;
}

async function uploadFile(ctx: ServiceContext, caller: Caller, request: Request) {
  if (!request.headers.get("content-type")?.toLowerCase().startsWith("multipart/form-data")) {
    throw badRequest("Send multipart/form-data with the fields containerId, file and destinationPath", {
      fields: ["file"],
    });
  }
  let form: FormData;
  try {
    form = await request.formData();
  } catch {
    throw badRequest("The multipart body could not be read", { fields: ["file"] });
  }
  const containerId = field(form, "containerId", containerIdSchema) as string;
  const serverId = field(form, "serverId", serverIdSchema, true);
  let destinationPath = field(form, "destinationPath", containerPathSchema) as string;
  const file = form.get("file");
  if (!file || typeof file === "string") {
    throw badRequest("Attach the file in the field file", { fields: ["file"] });
  }
  if (file.size > CONTAINER_FILE_LIMIT_BYTES) throw tooLarge();
  if (destinationPath.endsWith("/")) {
    const name = containerPathSchema.safeParse(file.name);
    if (!name.success || file.name.includes("/") || file.name === "." || file.name === "") {
      throw badRequest("file: its name cannot be a file name in the container; name it in destinationPath", {
        fields: ["file"],
      });
    }
    destinationPath = `${destinationPath}${file.name}`;
  }
  const { agent, containerId: id } = await checkedContainer(ctx, caller, {
    containerId,
    ...(serverId ? { serverId } : {}),
  });
  await uploadContainerFile(agent, id, destinationPath, new Uint8Array(await file.arrayBuffer()));
  return { success: true as const };
}

/** Registers the upload on both API prefixes (before the dispatcher's /api/:path). */
export function registerContainerUploadRoutes(app: Hono, ctx: ServiceContext): void {
  const answerError = (c: Context, error: unknown) => {
    const apiError =
      error instanceof ApiError ? error : new ApiError("INTERNAL_SERVER_ERROR", "Internal server error");
    if (!(error instanceof ApiError)) ctx.logger.error({ err: error }, "container upload failed");
    return c.json(errorBodyFor(c.req.path, apiError), apiError.status as 400);
  };
  for (const [route, trpc] of [
    [UPLOAD_FILE_PATH, false],
    ["/api/trpc/docker.uploadFileToContainer", true],
  ] as const) {
    // Any other method: a clear answer (not "No procedure named"), as the dispatcher gives a mutation.
    app.on(["GET", "PUT", "PATCH", "DELETE"], route, (c) =>
      answerError(
        c,
        new ApiError("METHOD_NOT_SUPPORTED", "docker.uploadFileToContainer is a POST of multipart/form-data"),
      ),
    );
    app.post(route, async (c) => {
      try {
        // Credentials from the headers first: an anonymous client's body is never read.
        const url = new URL(c.req.url);
        const caller = await authenticate(ctx, credentialsOf(c.req.raw), url.searchParams.keys());
        const result = await uploadFile(ctx, caller, c.req.raw);
        return c.json(trpc ? resultEnvelope(result) : result);
      } catch (error) {
        return answerError(c, error);
      }
    });
  }
}
