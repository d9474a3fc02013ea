import { describe, expect, it } from "vitest";
import {
  parseStaticConfig,
  type StaticSettings,
  staticConfigFor,
  TraefikConfigError,
  toYaml,
  validateStaticConfig,
} from "./index.ts";

const settings: StaticSettings = {
  letsEncryptEmail: "ops@example.com",
  acmeStoragePath: "/etc/platform/traefik/acme.json",
  dynamicConfigDirectory: "/etc/platform/traefik/dynamic",
  accessLogPath: "/etc/platform/traefik/access.log",
  dashboardEnabled: false,
};

const base = {
  global: { checkNewVersion: false, sendAnonymousUsage: false },
  providers: { file: { directory: "/etc/platform/traefik/dynamic", watch: true } },
};

describe("staticConfigFor", () => {
  it.each([
    {
      name: "dashboard off",
      input: settings,
      expected: {
        ...base,
        entryPoints: { web: { address: ":80" }, websecure: { address: ":443" } },
        certificatesResolvers: {
          letsencrypt: {
            acme: {
              email: "ops@example.com",
              storage: "/etc/platform/traefik/acme.json",
              httpChallenge: { entryPoint: "web" },
            },
          },
        },
        accessLog: { filePath: "/etc/platform/traefik/access.log", format: "json" },
      },
    },
    {
      name: "dashboard on :8080, no email, no access log",
      input: { ...settings, dashboardEnabled: true, letsEncryptEmail: null, accessLogPath: null },
      expected: {
        ...base,
        entryPoints: {
          web: { address: ":80" },
          websecure: { address: ":443" },
          traefik: { address: ":8080" },
        },
        certificatesResolvers: {
          letsencrypt: {
            acme: { storage: "/etc/platform/traefik/acme.json", httpChallenge: { entryPoint: "web" } },
          },
        },
        api: { dashboard: true, insecure: true },
      },
    },
  ])("$name: exact, valid against traefik-v3.json, and stable through YAML", ({ input, expected }) => {
    const config = staticConfigFor(input);
    expect(config).toEqual(expected);
    expect(validateStaticConfig(config)).toEqual([]);
    const yamlText = toYaml(config);
    expect(parseStaticConfig(yamlText)).toEqual({ ok: true, config: expected });
    expect(toYaml(staticConfigFor(input))).toBe(yamlText);
  });

  it("refuses bad settings, naming each field", () => {
    let error: unknown;
    try {
      staticConfigFor({
        letsEncryptEmail: "not-an-email\nevil: x",
        acmeStoragePath: "acme.json",
        dynamicConfigDirectory: "/etc/../root",
        accessLogPath: "/var/log/a b",
        dashboardEnabled: "yes" as unknown as boolean,
      });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(TraefikConfigError);
    expect((error as TraefikConfigError).issues.map((issue) => issue.path).sort()).toEqual([
      "accessLogPath",
      "acmeStoragePath",
      "dashboardEnabled",
      "dynamicConfigDirectory",
      "letsEncryptEmail",
    ]);
  });
});
