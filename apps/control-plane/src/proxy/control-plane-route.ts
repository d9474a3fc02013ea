/**
 * settings.assignDomainServer: the control plane's own host routed by this machine's proxy. The
 * control plane runs beside Traefik on the platform network as the `platform-control-plane`
 * service (as Dokploy's `dokploy` service), so its file sends the host to
 * `http://platform-control-plane:<PORT>`.
 */

import {
  CERTIFICATES_DIRECTORY,
  CONTROL_PLANE_ROUTER_PRIORITY,
  dynamicConfigFileName,
  dynamicConfigFor,
  toYaml,
} from "@platform/traefik-config";
import { callAgent } from "../agents/errors.ts";
import { LOCAL_SERVER_ID } from "../agents/hub.ts";
import type { ServiceContext } from "../context.ts";
import { badRequest } from "../errors.ts";
import { loadWebServerSettings, staticConfigToInstall } from "./static-config.ts";

/** The control plane's Swarm service (DNS name on the platform network) and its file's name. */
export const CONTROL_PLANE_SERVICE_NAME = "platform-control-plane";
/** The uniqueConfigKey of the control plane's one domain (its router is `platform-control-plane-router-dashboard`). */
const CONTROL_PLANE_DOMAIN_KEY = "dashboard";

export interface ControlPlaneDomain {
  host: string;
  certificateType: "letsencrypt" | "custom" | "none";
  https: boolean;
  /** undefined keeps the stored email, null clears it. */
  letsEncryptEmail?: string | null | undefined;
}

export async function assignControlPlaneDomain(
  ctx: ServiceContext,
  input: ControlPlaneDomain,
): Promise<void> {
  if (input.certificateType === "custom") {
    throw badRequest(
      "Invalid input: certificateType: the control plane's domain takes `letsencrypt` or `none` (no certificate can be uploaded for it)",
      { fields: ["certificateType"] },
    );
  }
  const stored = await loadWebServerSettings(ctx.db);
  const letsEncryptEmail =
    input.letsEncryptEmail === undefined ? stored.letsEncryptEmail : input.letsEncryptEmail;
  if (input.certificateType === "letsencrypt" && input.https && !letsEncryptEmail) {
    throw badRequest("Invalid input: letsEncryptEmail: is required for Let's Encrypt certificates", {
      fields: ["letsEncryptEmail"],
    });
  }
  const routeYaml = controlPlaneRouteYaml(ctx, input.host, input.certificateType, input.https);
  const client = ctx.agents.client;
  await ctx.db.transaction().execute(async (trx) => {
    await trx
      .updateTable("webServerSettings")
      .set({
        host: input.host,
        certificateType: input.certificateType,
        https: input.https,
        letsEncryptEmail,
        updatedAt: new Date().toISOString(),
      })
      .where("id", "=", 1)
      .execute();
    await writeControlPlaneRoute(ctx, routeYaml);
    if (letsEncryptEmail !== stored.letsEncryptEmail) {
      // The ACME account email lives in the static configuration: rewrite it and restart the proxy.
      const staticConfig = await staticConfigToInstall(
        ctx,
        await loadWebServerSettings(trx),
        LOCAL_SERVER_ID,
        stored.dashboardEnabled,
      );
      await callAgent(
        LOCAL_SERVER_ID,
        () => client.writeProxyFile(LOCAL_SERVER_ID, "static", "", staticConfig),
        ctx.logger,
      );
      await callAgent(LOCAL_SERVER_ID, () => client.reloadProxy(LOCAL_SERVER_ID), ctx.logger);
    }
  });
}

/** The file routing `host` to the control plane, above every other router of the proxy. */
function controlPlaneRouteYaml(
  ctx: ServiceContext,
  host: string,
  certificateType: "letsencrypt" | "none",
  https: boolean,
): string {
  const config = dynamicConfigFor(
    {
      appName: CONTROL_PLANE_SERVICE_NAME,
      domains: [
        {
          uniqueConfigKey: CONTROL_PLANE_DOMAIN_KEY,
          host,
          path: "/",
          port: ctx.config.port,
          https,
          certificateType,
        },
      ],
      credentials: [],
      // Above every router of every tenant and application: the control plane's sign-in and tokens.
      routerPriority: CONTROL_PLANE_ROUTER_PRIORITY,
    },
    { certificatesDirectory: CERTIFICATES_DIRECTORY },
  );
  return toYaml(config!);
}

/**
 * At start: rewrites the control plane's route from the stored settings, so a file written by
 * an earlier version (without the priority above every tenant's router) is brought up to date.
 * Nothing when no host is assigned.
 */
export async function rewriteControlPlaneRoute(ctx: ServiceContext): Promise<void> {
  const settings = await loadWebServerSettings(ctx.db);
  if (!settings.host) return;
  // assignDomainServer never stores `custom` (no certificate can be given for the control plane).
  const certificateType = settings.certificateType === "custom" ? "none" : settings.certificateType;
  const routeYaml = controlPlaneRouteYaml(ctx, settings.host, certificateType, settings.https);
  await writeControlPlaneRoute(ctx, routeYaml);
}

/** Writes the route file on this machine's proxy, as the platform's own file. */
async function writeControlPlaneRoute(ctx: ServiceContext, routeYaml: string): Promise<void> {
  await callAgent(
    LOCAL_SERVER_ID,
    () =>
      ctx.agents.client.writeProxyFile(
        LOCAL_SERVER_ID,
        "dynamic",
        dynamicConfigFileName(CONTROL_PLANE_SERVICE_NAME),
        routeYaml,
        { platformFile: true },
      ),
    ctx.logger,
  );
}
