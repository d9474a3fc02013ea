/**
 * application.readTraefikConfig / updateTraefikConfig: the application's Traefik file on its
 * server, read as it is, or replaced by YAML the caller wrote once it parses and passes the
 * file-provider schema (otherwise a 400 and the file stays as it was).
 */
import { dynamicConfigFileName, parseDynamicConfig } from "@platform/traefik-config";
import { callAgent } from "../agents/errors.ts";
import type { ServiceContext } from "../context.ts";
import type { Application } from "../db/schema.ts";
import { invalidTraefikConfig, proxyServerOf } from "./sync.ts";

/** The YAML text of the application's file; "" when it has none. */
export async function readApplicationTraefikConfig(
  services: ServiceContext,
  app: Application,
): Promise<string | null> {
  const serverId = proxyServerOf(services, app);
  const file = await callAgent(
    serverId,
    () => services.agents.client.readProxyFile(serverId, "dynamic", dynamicConfigFileName(app.appName)),
    services.logger,
  );
  return file.exists ? file.content : null;
}

export async function updateApplicationTraefikConfig(
  services: ServiceContext,
  app: Application,
  traefikConfig: string,
): Promise<void> {
  const parsed = parseDynamicConfig(traefikConfig);
  if (!parsed.ok) throw invalidTraefikConfig(parsed.errors);
  const serverId = proxyServerOf(services, app);
  await callAgent(
    serverId,
    () =>
      services.agents.client.writeProxyFile(
        serverId,
        "dynamic",
        dynamicConfigFileName(app.appName),
        traefikConfig,
      ),
    services.logger,
  );
}
