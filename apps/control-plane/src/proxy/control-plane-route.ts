/**
 * settings.assignDomainServer: the control plane's own host routed by this machine's proxy. The
 * control plane runs beside Traefik on the platform network as the `platform-control-plane`
 * service (as Dokploy's `dokploy` service), so its file sends the host to
 * `http://platform-control-plane:<PORT>`.
 */

import { CERTIFICATES_DIRECTORY } from "@platform/agent/proxy/paths.ts";
import { dynamicConfigFileName, dynamicConfigFor, toYaml } from "@platform/traefik-config";
import { callAgent } from "../agents/errors.ts";
import { LOCAL_SERVER_ID } from "../agents/hub.ts";
import type { ServiceContext } from "../context.ts";
import { badRequest } from "../errors.ts";
import { loadWebServerSettings, staticConfigToInstall } from "./proxy-service.ts";

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
  services: ServiceContext,
  input: ControlPlaneDomain,
): Promise<void> {
  if (input.certificateType === "custom") {
    throw badRequest(
      "Invalid input: certificateType: the control plane's domain takes `letsencrypt` or `none` (no certificate can be uploaded for it)",
      { fields: ["certificateType"] },
    );
  }
  const stored = await loadWebServerSettings(services.db);
  const letsEncryptEmail =
    input.letsEncryptEmail === undefined ? stored.letsEncryptEmail : input.letsEncryptEmail;
  if (input.certificateType === "letsencrypt" && input.https && !letsEncryptEmail) {
    throw badRequest("Invalid input: letsEncryptEmail: is required for Let's Encrypt certificates", {
      fields: ["letsEncryptEmail"],
    });
  }
  const config = dynamicConfigFor(
    {
      appName: CONTROL_PLANE_SERVICE_NAME,
      domains: [
        {
          uniqueConfigKey: CONTROL_PLANE_DOMAIN_KEY,
          host: input.host,
          path: "/",
          port: services.config.port,
          https: input.https,
          certificateType: input.certificateType,
        },
      ],
      credentials: [],
    },
    { certificatesDirectory: CERTIFICATES_DIRECTORY },
  );
  const client = services.agents.client;
  await services.db.transaction().execute(async (trx) => {
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
    await callAgent(
      LOCAL_SERVER_ID,
      () =>
        client.writeProxyFile(
          LOCAL_SERVER_ID,
          "dynamic",
          dynamicConfigFileName(CONTROL_PLANE_SERVICE_NAME),
          toYaml(config!),
          { platformFile: true },
        ),
      services.logger,
    );
    if (letsEncryptEmail !== stored.letsEncryptEmail) {
      // The ACME account email lives in the static configuration: rewrite it and restart the proxy.
      const staticConfig = await staticConfigToInstall(
        services,
        await loadWebServerSettings(trx),
        LOCAL_SERVER_ID,
        stored.dashboardEnabled,
      );
      await callAgent(
        LOCAL_SERVER_ID,
        () => client.writeProxyFile(LOCAL_SERVER_ID, "static", "", staticConfig),
        services.logger,
      );
      await callAgent(LOCAL_SERVER_ID, () => client.reloadProxy(LOCAL_SERVER_ID), services.logger);
    }
  });
}
