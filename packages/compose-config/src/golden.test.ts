/**
 * Golden tests of the conversion (getConvertedCompose): a table of inputs under testdata/golden,
 * each converted and compared with the stored expected YAML, and every output checked against
 * the Compose Specification; stack outputs are also read by `docker stack config`, the Docker
 * CLI's own v3 loader (it refuses any key the v3 format does not have).
 * `UPDATE_GOLDEN=1` rewrites the expected files (review the diff).
 */
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { type ConvertComposeInput, convertCompose } from "./convert.ts";
import { validateComposeDocument } from "./schema.ts";
import { baseInput, readAsCompose, testTenant } from "./testing.ts";

const GOLDEN = new URL("../testdata/golden/", import.meta.url);
const read = (name: string) => readFileSync(new URL(name, GOLDEN), "utf8");

interface GoldenCase {
  name: string;
  input: string;
  overrides: Partial<ConvertComposeInput>;
  /** Upstreams the proxy routing receives. */
  upstreams: Record<string, string>;
}

const shopEnv = { TAG: "2.1.0", DB_PASSWORD: "s3cret", APP_DOMAIN: "shop.example.com" };
const shopDomains = [
  { host: "shop.example.com", serviceName: "web", port: 3000 },
  { host: "www.shop.example.com", serviceName: "web", port: 3000, path: "/" },
];

const cases: GoldenCase[] = [
  {
    name: "web-worker-db.docker-compose",
    input: "web-worker-db.input.yml",
    overrides: { composeType: "docker-compose", env: shopEnv, domains: shopDomains },
    upstreams: { web: "shop-k3x9qa_web" },
  },
  {
    name: "web-worker-db.stack",
    input: "web-worker-db.input.yml",
    overrides: { composeType: "stack", env: shopEnv, domains: shopDomains },
    upstreams: { web: "shop-k3x9qa_web" },
  },
  {
    name: "networks-and-files.docker-compose",
    input: "networks-and-files.input.yml",
    overrides: {
      composeType: "docker-compose",
      platformNetwork: "dokploy-network",
      domains: [
        { host: "app.example.com", serviceName: "app", port: 8080 },
        { host: "app.example.com", serviceName: "admin", port: 9000, path: "/admin" },
      ],
      tenant: testTenant(),
    },
    upstreams: { app: "shop-k3x9qa_app", admin: "shop-k3x9qa_admin" },
  },
  {
    name: "swarm-native.stack",
    input: "swarm-native.input.yml",
    overrides: {
      composeType: "stack",
      env: { API_VERSION: "3.2" },
      domains: [{ host: "api.example.com", serviceName: "api", port: 8080 }],
      tenant: testTenant(),
    },
    upstreams: { api: "shop-k3x9qa_api" },
  },
  {
    name: "swarm-native.docker-compose",
    input: "swarm-native.input.yml",
    overrides: { composeType: "docker-compose", env: { API_VERSION: "3.2", API_REPLICAS: "3" } },
    upstreams: {},
  },
];

const dockerCli = (() => {
  try {
    execFileSync("docker", ["stack", "config", "--help"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
})();

describe("convertCompose golden files", () => {
  for (const testCase of cases) {
    it(testCase.name, () => {
      const result = convertCompose(baseInput({ composeFile: read(testCase.input), ...testCase.overrides }));
      const expectedFile = new URL(`${testCase.name}.expected.yml`, GOLDEN);
      if (process.env.UPDATE_GOLDEN === "1" || !existsSync(expectedFile))
        writeFileSync(expectedFile, result.yaml);
      expect(result.yaml).toBe(readFileSync(expectedFile, "utf8"));
      // Compose reads the YAML as the document (its `$` escaped), and the document is a valid Compose file.
      expect(readAsCompose(result.yaml)).toEqual(result.document);
      expect(validateComposeDocument(result.document)).toEqual([]);
      expect(result.upstreams).toEqual(testCase.upstreams);
      expect(result.services).toEqual(Object.keys(parse(read(testCase.input), { merge: true }).services));
      if (testCase.overrides.composeType === "stack") {
        expect(result.document.version).toBe("3.8");
        if (dockerCli) {
          // The Docker CLI's v3 loader reads the file as docker stack deploy will.
          execFileSync("docker", ["stack", "config", "--skip-interpolation", "-c", "-"], {
            input: result.yaml,
            stdio: ["pipe", "pipe", "pipe"],
          });
        }
      }
    });
  }

  it("has the Docker CLI to check stack files with", () => {
    // The test environment installs Docker; without it the v3 check above would not run.
    expect(dockerCli).toBe(true);
  });
});
