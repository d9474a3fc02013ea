/**
 * Dokploy's randomize and isolatedDeployment in the conversion: the names they change, the
 * references that follow, the tenant's refusals still applied to the result, and the converted
 * file still valid against the Compose Specification.
 */
import { describe, expect, it } from "vitest";
import { applyCollision } from "./collision.ts";
import { convertCompose } from "./convert.ts";
import { ComposeFileError } from "./errors.ts";
import { parseComposeFile, validateComposeDocument } from "./schema.ts";
import { baseInput, testTenant } from "./testing.ts";

type Doc = Record<string, any>;

const file = `
services:
  web:
    image: nginx:1.27
    depends_on: [db]
    links: ["db:database"]
    volumes: ["data:/data", "./conf:/etc/conf", {type: volume, source: cache, target: /cache}]
    networks: [back]
    configs: [site]
    secrets: [{source: token, target: token}]
  db:
    image: postgres:16
    depends_on: {cache: {condition: service_started}}
    networks: {back: {aliases: [database]}}
  cache:
    image: redis:7
    network_mode: "service:db"
  sidecar:
    image: busybox:1
    volumes_from: ["web:ro", "container:other"]
volumes:
  data: {}
  cache: {}
  outside: {external: true}
networks:
  back: {}
configs:
  site: {file: ../files/site.conf}
secrets:
  token: {file: ../files/token}
`;

describe("randomize", () => {
  const out = applyCollision(parseComposeFile(file), { mode: "randomize", suffix: "x7" }) as Doc;

  it("suffixes every service, volume, network, config and secret, and every reference follows", () => {
    expect(Object.keys(out.services)).toEqual(["web-x7", "db-x7", "cache-x7", "sidecar-x7"]);
    const web = out.services["web-x7"];
    expect(web.depends_on).toEqual(["db-x7"]);
    expect(web.links).toEqual(["db-x7:database"]);
    expect(web.volumes).toEqual([
      "data-x7:/data",
      "./conf:/etc/conf",
      { type: "volume", source: "cache-x7", target: "/cache" },
    ]);
    expect(web.networks).toEqual(["back-x7"]);
    expect(web.configs).toEqual(["site-x7"]);
    expect(web.secrets).toEqual([{ source: "token-x7", target: "token" }]);
    expect(out.services["db-x7"].depends_on).toEqual({ "cache-x7": { condition: "service_started" } });
    expect(out.services["db-x7"].networks).toEqual({ "back-x7": { aliases: ["database"] } });
    expect(out.services["cache-x7"].network_mode).toBe("service:db-x7");
    expect(out.services["sidecar-x7"].volumes_from).toEqual(["web-x7:ro", "container:other"]);
    expect(Object.keys(out.volumes)).toEqual(["data-x7", "cache-x7", "outside-x7"]);
    expect(Object.keys(out.networks)).toEqual(["back-x7"]);
    expect(Object.keys(out.configs)).toEqual(["site-x7"]);
    expect(Object.keys(out.secrets)).toEqual(["token-x7"]);
  });

  it("keeps an external entry pointing at the same Docker object", () => {
    expect(out.volumes["outside-x7"]).toEqual({ external: true, name: "outside" });
  });

  it("converts to a valid file whose Docker names carry the suffix; domains name the renamed services", () => {
    const converted = convertCompose(
      baseInput({
        composeFile: file,
        collision: { mode: "randomize", suffix: "x7" },
        domains: [{ host: "shop.example.com", serviceName: "web-x7", port: 80 }],
      }),
    );
    expect(converted.services).toEqual(["web-x7", "db-x7", "cache-x7", "sidecar-x7"]);
    expect(validateComposeDocument(converted.document)).toEqual([]);
    const document = converted.document as Doc;
    expect(document.volumes["data-x7"].name).toBe("shop-k3x9qa_data-x7");
    expect(document.networks["back-x7"].name).toBe("shop-k3x9qa_back-x7");
    expect(converted.upstreams).toEqual({ "web-x7": "shop-k3x9qa_web-x7" });
    // A domain naming the service as written no longer matches.
    expect(() =>
      convertCompose(
        baseInput({
          composeFile: file,
          collision: { mode: "randomize", suffix: "x7" },
          domains: [{ host: "shop.example.com", serviceName: "web", port: 80 }],
        }),
      ),
    ).toThrow(ComposeFileError);
  });

  it("refuses a suffix that is not one", () => {
    expect(() =>
      convertCompose(baseInput({ collision: { mode: "randomize", suffix: "Bad Suffix" } })),
    ).toThrow(/collision/);
  });
});

describe("isolated deployment", () => {
  it("puts every service on the stack's own network (not one with network_mode) and keeps volumes by default", () => {
    const out = applyCollision(parseComposeFile(file), {
      mode: "isolated",
      network: "shop-k3x9qa",
      volumes: false,
    }) as Doc;
    expect(out.services.web.networks).toEqual(["back", "shop-k3x9qa"]);
    expect(out.services.db.networks).toEqual({ back: { aliases: ["database"] }, "shop-k3x9qa": null });
    expect(out.services.cache.networks).toBeUndefined();
    expect(out.services.sidecar.networks).toEqual(["shop-k3x9qa"]);
    expect(out.networks).toEqual({ back: {}, "shop-k3x9qa": {} });
    expect(Object.keys(out.volumes)).toEqual(["data", "cache", "outside"]);
  });

  it("suffixes the volumes with isolatedDeploymentsVolume", () => {
    const out = applyCollision(parseComposeFile(file), {
      mode: "isolated",
      network: "blue",
      volumes: true,
    }) as Doc;
    expect(Object.keys(out.volumes)).toEqual(["data-blue", "cache-blue", "outside-blue"]);
    expect(out.services.web.volumes[0]).toBe("data-blue:/data");
  });

  it("creates the network with the stack (scoped, labelled) and still refuses a tenant what it refuses", () => {
    const tenant = testTenant();
    const converted = convertCompose(
      baseInput({
        composeFile: "services:\n  web:\n    image: nginx:1.27\n  db:\n    image: postgres:16\n",
        tenant,
        collision: { mode: "isolated", network: "shop-k3x9qa", volumes: false },
      }),
    );
    const document = converted.document as Doc;
    expect(document.networks["shop-k3x9qa"]).toMatchObject({
      name: "shop-k3x9qa_shop-k3x9qa",
      labels: { "platform.organization": "org_acme" },
    });
    expect(document.services.web.networks).toEqual(["shop-k3x9qa"]);
    expect(validateComposeDocument(document)).toEqual([]);
    // The tenancy walk runs on the isolated file: a foreign network is refused as before.
    expect(() =>
      convertCompose(
        baseInput({
          composeFile:
            "services:\n  web:\n    image: nginx:1.27\n    networks: [theirs]\nnetworks:\n  theirs: {external: true}\n",
          tenant,
          collision: { mode: "isolated", network: "shop-k3x9qa", volumes: false },
        }),
      ),
    ).toThrow(ComposeFileError);
  });
});
