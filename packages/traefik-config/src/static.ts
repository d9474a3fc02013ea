/**
 * The static configuration of the platform's Traefik (traefik.yml): entry points web (:80) and
 * websecure (:443), the file provider watching the dynamic configuration directory, the
 * `letsencrypt` ACME HTTP-01 resolver, a JSON access log, and the dashboard on :8080 only when
 * enabled.
 */
import { z } from "zod";
import { TraefikConfigError } from "./errors.ts";
import { DASHBOARD_ENTRYPOINT, LETSENCRYPT_RESOLVER, WEB_ENTRYPOINT, WEBSECURE_ENTRYPOINT } from "./names.ts";
import type { StaticConfig } from "./types.ts";
import { absolutePathSchema } from "./validation.ts";
import { zodIssues } from "./zod-issues.ts";

/** The dashboard's port (spec 8: proxy dashboard port). */
export const DASHBOARD_PORT = 8080;

const staticSettingsSchema = z.object({
  /** ACME account email; without one the resolver registers an account without contact. */
  letsEncryptEmail: z.email().nullish(),
  /** File (inside the Traefik container) where ACME keeps its account and certificates. */
  acmeStoragePath: absolutePathSchema,
  /** Directory (inside the Traefik container) the file provider watches. */
  dynamicConfigDirectory: absolutePathSchema,
  /** File (inside the Traefik container) of the JSON access log; null turns the access log off. */
  accessLogPath: absolutePathSchema.nullable(),
  /** Serve the dashboard and API on :8080 (settings.toggleDashboard). */
  dashboardEnabled: z.boolean(),
});

export type StaticSettings = z.input<typeof staticSettingsSchema>;

/** The static configuration for `settings`; throws TraefikConfigError listing refused fields. */
export function staticConfigFor(settings: StaticSettings): StaticConfig {
  const parsed = staticSettingsSchema.safeParse(settings);
  if (!parsed.success) throw new TraefikConfigError(zodIssues(parsed.error));
  const { letsEncryptEmail, acmeStoragePath, dynamicConfigDirectory, accessLogPath, dashboardEnabled } =
    parsed.data;

  const config: StaticConfig = {
    global: { checkNewVersion: false, sendAnonymousUsage: false },
    entryPoints: {
      [WEB_ENTRYPOINT]: { address: ":80" },
      [WEBSECURE_ENTRYPOINT]: { address: ":443" },
      ...(dashboardEnabled ? { [DASHBOARD_ENTRYPOINT]: { address: `:${DASHBOARD_PORT}` } } : {}),
    },
    providers: { file: { directory: dynamicConfigDirectory, watch: true } },
    certificatesResolvers: {
      [LETSENCRYPT_RESOLVER]: {
        acme: {
          ...(letsEncryptEmail ? { email: letsEncryptEmail } : {}),
          storage: acmeStoragePath,
          httpChallenge: { entryPoint: WEB_ENTRYPOINT },
        },
      },
    },
  };
  if (accessLogPath) config.accessLog = { filePath: accessLogPath, format: "json" };
  // `insecure` serves the dashboard on the `traefik` entry point (:8080) without a router; the
  // port is only published while the dashboard is enabled.
  if (dashboardEnabled) config.api = { dashboard: true, insecure: true };
  return config;
}
