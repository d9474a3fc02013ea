import { describe, expect, it } from "vitest";
import {
  dynamicConfigFor,
  parseDynamicConfig,
  storedCertificateConfig,
  storedCertificateConfigFileName,
  TraefikConfigError,
  toYaml,
  validateDynamicConfig,
} from "./index.ts";

const options = { certificatesDirectory: "/etc/traefik/dynamic/certificates" };

describe("storedCertificateConfig", () => {
  it("adds the certificate's PEM files to the TLS store, valid against the Traefik schema", () => {
    const config = storedCertificateConfig({ certificateId: "abc_12-x" }, options);
    expect(config).toEqual({
      tls: {
        certificates: [
          {
            certFile: "/etc/traefik/dynamic/certificates/platform-certificate-abc_12-x.crt",
            keyFile: "/etc/traefik/dynamic/certificates/platform-certificate-abc_12-x.key",
          },
        ],
      },
    });
    expect(validateDynamicConfig(config)).toEqual([]);
    expect(parseDynamicConfig(toYaml(config)).ok).toBe(true);
    expect(storedCertificateConfigFileName("abc_12-x")).toBe("platform-certificate-abc_12-x.yml");
  });

  it("refuses an id that would leave the certificates directory", () => {
    expect(() => storedCertificateConfig({ certificateId: "../x" }, options)).toThrow(TraefikConfigError);
    expect(() => storedCertificateConfig({ certificateId: "a" }, { certificatesDirectory: "rel" })).toThrow(
      TraefikConfigError,
    );
  });

  it("a custom domain using the TLS store gets tls: {} and no certificate files of its own", () => {
    const config = dynamicConfigFor(
      {
        appName: "shop",
        credentials: [],
        domains: [
          {
            uniqueConfigKey: 3,
            host: "*.example.com",
            port: 80,
            https: true,
            certificateType: "custom",
            storedCertificate: true,
          },
        ],
      },
      options,
    );
    expect(config?.http.routers["shop-router-websecure-3"]?.tls).toEqual({});
    expect(config?.tls).toBeUndefined();
    expect(validateDynamicConfig(config)).toEqual([]);
  });
});
