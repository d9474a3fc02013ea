/** Test helper: starts the local test registries (scripts/start-test-registry.sh) and says where they are. */
import { execFile } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

const script = path.resolve(
  path.dirname(fileURLToPath(import.meta.url)),
  "../../../../scripts/start-test-registry.sh",
);

export interface TestRegistries {
  /** 127.0.0.1:<port>, plain HTTP with htpasswd auth. */
  http: string;
  /** 198.51.100.2:<port> in a network namespace of the tests, TLS with a self-signed certificate. */
  tls: string;
  username: string;
  password: string;
}

export async function startTestRegistries(): Promise<TestRegistries> {
  const { stdout } = await promisify(execFile)("bash", [script], { timeout: 300_000 });
  const values = new Map(
    stdout
      .split("\n")
      .map((line) => line.match(/^(TEST_REGISTRY\w*)=(.*)$/))
      .filter((match) => match !== null)
      .map((match) => [match[1], match[2]]),
  );
  const value = (key: string) => {
    const found = values.get(key);
    if (!found) throw new Error(`${script} did not print ${key}`);
    return found;
  };
  return {
    http: value("TEST_REGISTRY"),
    tls: value("TEST_REGISTRY_TLS"),
    username: value("TEST_REGISTRY_USERNAME"),
    password: value("TEST_REGISTRY_PASSWORD"),
  };
}
