/**
 * settings.readDirectories / readTraefikFile / updateTraefikFile and the two named files
 * (readMiddlewareTraefikConfig …, readWebServerTraefikConfig …): the proxy's dynamic files of a
 * server, for the administrators who may act on that server (routers/settings.ts decides who).
 *
 * A `path` is a file name in the dynamic directory (`shop.yml`); `dynamic/shop.yml` is read the
 * same. Anything else (a `..`, an absolute path, a sub-directory, another extension) is a 400
 * naming `path`, and the agent itself takes plain names only and refuses links
 * (apps/agent/src/proxy/files.ts), so nothing outside the directory is reached.
 *
 * Whose files: the agent records a holder for each file (holders.ts). The caller sees and writes
 * the files its own organization holds, the platform's and those nobody holds; another
 * organization's file (on this machine, shared by the organizations) is neither listed nor read
 * (null, as for no file) and is not written (409). A file an application holds is written through
 * the same checks as application.updateTraefikConfig (checkUserTraefikConfig); every other file
 * through Traefik's file-provider schema (parseDynamicConfig). Traefik's file provider watches the
 * directory (static.ts), so a written file is loaded without a restart.
 */
import type { ProxyFileHolder } from "@platform/agent-protocol";
import { DYNAMIC_DIRECTORY_NAME, dynamicConfigFileName, parseDynamicConfig } from "@platform/traefik-config";
import { callAgent } from "../agents/errors.ts";
import { LOCAL_SERVER_ID } from "../agents/hub.ts";
import { findApplication } from "../applications/repository.ts";
import type { Caller, ServiceContext } from "../context.ts";
import { checkUserTraefikConfig } from "../domains/user-traefik-config.ts";
import { ApiError, badRequest } from "../errors.ts";
import { CONTROL_PLANE_SERVICE_NAME } from "./control-plane-route.ts";
import { invalidTraefikConfig } from "./sync.ts";

const FILE_NAME = /^[a-zA-Z0-9][a-zA-Z0-9._-]{0,254}$/;
const CONFIG_EXTENSION = /\.ya?ml$/i;

/** The file provider's shared middlewares file (Dokploy's middlewares.yml) on this machine. */
export const MIDDLEWARES_FILE_NAME = "middlewares.yml";
/** The control plane's own route on this machine (Dokploy's dokploy.yml). */
export const WEB_SERVER_FILE_NAME = dynamicConfigFileName(CONTROL_PLANE_SERVICE_NAME);

export interface TreeItem {
  id: string;
  name: string;
  type: "file" | "directory";
  children?: TreeItem[];
}

interface VisibleFile {
  fileName: string;
  holder: ProxyFileHolder;
}

/** The file name `path` names in the dynamic directory; a 400 naming `path` otherwise. */
export function dynamicFileName(path: string): string {
  const prefix = `${DYNAMIC_DIRECTORY_NAME}/`;
  const name = path.startsWith(prefix) ? path.slice(prefix.length) : path;
  if (!FILE_NAME.test(name) || name.includes("..") || !CONFIG_EXTENSION.test(name)) {
    throw badRequest(
      "Invalid input: path: must name a .yml or .yaml file in the proxy's dynamic directory " +
        "(a plain file name such as shop.yml, no '..', no absolute path, no sub-directory)",
      { fields: ["path"] },
    );
  }
  return name;
}

/** The dynamic files of the server the caller may see, each with the holder to name. */
async function visibleFiles(ctx: ServiceContext, caller: Caller, serverId: string): Promise<VisibleFile[]> {
  const list = await callAgent(serverId, () => ctx.agents.client.listProxyFiles(serverId), ctx.logger);
  const visible: VisibleFile[] = [];
  for (const file of list.files) {
    if (file.owner?.organizationId) {
      if (file.owner.organizationId !== caller.organizationId) continue;
      visible.push({ fileName: file.fileName, holder: { owner: file.owner } });
    } else {
      // The platform's, or nobody's yet (its next write records the platform).
      visible.push({ fileName: file.fileName, holder: { platformFile: true } });
    }
  }
  return visible;
}

/** settings.readDirectories: the dynamic directory as Dokploy's tree (ids are the `path`s to pass). */
export async function proxyFileTree(
  ctx: ServiceContext,
  caller: Caller,
  serverId: string,
): Promise<TreeItem[]> {
  const files = await visibleFiles(ctx, caller, serverId);
  return [
    {
      id: DYNAMIC_DIRECTORY_NAME,
      name: DYNAMIC_DIRECTORY_NAME,
      type: "directory",
      children: files.map(({ fileName }) => ({
        id: `${DYNAMIC_DIRECTORY_NAME}/${fileName}`,
        name: fileName,
        type: "file" as const,
      })),
    },
  ];
}

/** The file's content; null when there is none or it is another organization's. */
export async function readProxyDynamicFile(
  ctx: ServiceContext,
  caller: Caller,
  serverId: string,
  fileName: string,
): Promise<string | null> {
  const file = (await visibleFiles(ctx, caller, serverId)).find((f) => f.fileName === fileName);
  if (!file) return null;
  const read = await callAgent(
    serverId,
    () => ctx.agents.client.readProxyFile(serverId, "dynamic", fileName, file.holder),
    ctx.logger,
  );
  return read.exists ? read.content : null;
}

/** The application holding a file, when an application of the caller's organization does. */
async function holdingApplication(ctx: ServiceContext, caller: Caller, holder: ProxyFileHolder) {
  const [kind, id] = holder.owner?.resource.split(":") ?? [];
  if (kind !== "application" || !id) return undefined;
  return findApplication(ctx.db, caller.organizationId, id);
}

/**
 * Writes `traefikConfig` as the dynamic file after the checks its holder's files pass; a file
 * nobody holds is written as the platform's. Nothing is written when a check fails.
 */
export async function writeProxyDynamicFile(
  ctx: ServiceContext,
  caller: Caller,
  serverId: string,
  fileName: string,
  traefikConfig: string,
): Promise<void> {
  const parsed = parseDynamicConfig(traefikConfig);
  if (!parsed.ok) throw invalidTraefikConfig(parsed.errors);
  const list = await callAgent(serverId, () => ctx.agents.client.listProxyFiles(serverId), ctx.logger);
  const listed = list.files.find((f) => f.fileName === fileName);
  if (listed?.owner?.organizationId && listed.owner.organizationId !== caller.organizationId) {
    throw new ApiError(
      "CONFLICT",
      `The file ${fileName} belongs to another organization: nothing was written`,
      {
        serverId,
      },
    );
  }
  const holder: ProxyFileHolder = listed?.owner?.organizationId
    ? { owner: listed.owner }
    : { platformFile: true };
  const application = await holdingApplication(ctx, caller, holder);
  if (application) await checkUserTraefikConfig(ctx, caller, application, traefikConfig);
  await callAgent(
    serverId,
    () => ctx.agents.client.writeProxyFile(serverId, "dynamic", fileName, traefikConfig, holder),
    ctx.logger,
  );
}

/** One of this machine's two named platform files ("" when it has none, as readTraefikConfig). */
export async function readLocalPlatformFile(ctx: ServiceContext, fileName: string): Promise<string> {
  const file = await callAgent(
    LOCAL_SERVER_ID,
    () => ctx.agents.client.readProxyFile(LOCAL_SERVER_ID, "dynamic", fileName, { platformFile: true }),
    ctx.logger,
  );
  return file.exists ? file.content : "";
}

export async function writeLocalPlatformFile(
  ctx: ServiceContext,
  fileName: string,
  traefikConfig: string,
): Promise<void> {
  const parsed = parseDynamicConfig(traefikConfig);
  if (!parsed.ok) throw invalidTraefikConfig(parsed.errors);
  await callAgent(
    LOCAL_SERVER_ID,
    () =>
      ctx.agents.client.writeProxyFile(LOCAL_SERVER_ID, "dynamic", fileName, traefikConfig, {
        platformFile: true,
      }),
    ctx.logger,
  );
}
