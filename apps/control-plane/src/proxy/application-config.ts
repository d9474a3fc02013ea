/**
 * application.readTraefikConfig / updateTraefikConfig: the application's Traefik file on its
 * server, read as it is, or replaced by YAML the caller wrote once it parses and passes the
 * file-provider schema (otherwise a 400 and the file stays as it was).
 */
import { isValidAppName } from "@platform/names";
import { dynamicConfigFileName, parseDynamicConfig } from "@platform/traefik-config";
import { callAgent } from "../agents/errors.ts";
import { LOCAL_SERVER_ID } from "../agents/hub.ts";
import { ownerOfApplication } from "../applications/ownership.ts";
import type { ServiceContext } from "../context.ts";
import type { Application } from "../db/schema.ts";
import { badRequest } from "../errors.ts";
import { agentServerId } from "../servers/repository.ts";
import { invalidTraefikConfig, proxyServerOf } from "./sync.ts";

/** The YAML text of the application's file; "" when it has none. */
export async function readApplicationTraefikConfig(
  ctx: ServiceContext,
  app: Application,
): Promise<string | null> {
  if (!isValidAppName(app.appName)) return null;
  const serverId = proxyServerOf(ctx, app);
  const file = await callAgent(
    serverId,
    async () =>
      ctx.agents.client.readProxyFile(serverId, "dynamic", dynamicConfigFileName(app.appName), {
        owner: await ownerOfApplication(ctx.db, app),
      }),
    ctx.logger,
  );
  return file.exists ? file.content : null;
}

export async function updateApplicationTraefikConfig(
  ctx: ServiceContext,
  app: Application,
  traefikConfig: string,
): Promise<void> {
  if (!isValidAppName(app.appName)) {
    // A name from before the shared rule (`platform-control-plane`) would name another file.
    throw badRequest(`The appName "${app.appName}" is not valid any more: rename the application first`, {
      fields: ["appName"],
    });
  }
  const parsed = parseDynamicConfig(traefikConfig);
  if (!parsed.ok) throw invalidTraefikConfig(parsed.errors);
  const serverId = proxyServerOf(ctx, app);
  const owner = await ownerOfApplication(ctx.db, app);
  // This machine's proxy routes only the instance organization's applications (agentServerId).
  if (serverId === LOCAL_SERVER_ID) await agentServerId(ctx, owner.organizationId, null);
  await callAgent(
    serverId,
    () =>
      ctx.agents.client.writeProxyFile(
        serverId,
        "dynamic",
        dynamicConfigFileName(app.appName),
        traefikConfig,
        { owner },
      ),
    ctx.logger,
  );
}
