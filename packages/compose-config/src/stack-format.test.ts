/**
 * Stack mode against the Docker CLI's own v3 loader (`docker stack config`): a table of
 * Compose-specification forms, each converted for `stack` and read by the CLI, which refuses any
 * key or type the v3 format does not have.
 */
import { execFileSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { convertCompose } from "./convert.ts";
import { ComposeFileError } from "./errors.ts";
import { validateComposeDocument } from "./schema.ts";
import { bytesOf } from "./stack-format.ts";
import { baseInput } from "./testing.ts";

/** Reads a stack file as `docker stack deploy` will; the CLI's message when it refuses it. */
function dockerStackConfig(yaml: string): string | undefined {
  try {
    execFileSync("docker", ["stack", "config", "--skip-interpolation", "-c", "-"], {
      input: yaml,
      stdio: ["pipe", "pipe", "pipe"],
    });
    return undefined;
  } catch (error) {
    return String((error as { stderr?: Buffer }).stderr ?? error);
  }
}

const forms: [string, string][] = [
  ["booleans in environment and labels", "environment: {DEBUG: true, N: 1}\n    labels: {enabled: false}"],
  ["a tmpfs size with a unit", "volumes: [{type: tmpfs, target: /t, tmpfs: {size: 64m}}]"],
  ["cpus as a number", "deploy: {resources: {limits: {cpus: 0.5, memory: 1g}}}"],
  ["long depends_on", "depends_on: {db: {condition: service_healthy, required: true}}"],
  ["restart and scale", "restart: always\n    scale: 2"],
  ["compose-only resources", "mem_limit: 1g\n    mem_reservation: 256m\n    cpus: 2"],
  [
    "healthcheck with start_interval",
    "healthcheck: {test: [CMD, 'true'], interval: 10s, start_interval: 1s, retries: 3}",
  ],
  ["string port numbers", "ports: [{target: '80', published: '8080', protocol: tcp, mode: host, name: web}]"],
  [
    "advice for Compose",
    "pull_policy: always\n    platform: linux/amd64\n    container_name: web-x\n    attach: false",
  ],
  [
    "bind options",
    "volumes: [{type: bind, source: ../files/a, target: /a, bind: {create_host_path: true, propagation: rprivate}}]",
  ],
  ["network attachment extras", "networks: {default: {priority: 5, aliases: [x]}}"],
  ["a secret mode as text", "secrets: [{source: s, mode: '0400'}]"],
  ["extension keys", "x-note: kept"],
];

describe("stack mode output read by docker stack config", () => {
  it.each(forms)("%s", (_name, lines) => {
    const composeFile = `services:\n  web:\n    image: nginx\n    ${lines}\n  db:\n    image: postgres\nsecrets:\n  s:\n    file: ../files/s\n`;
    const result = convertCompose(baseInput({ composeFile, composeType: "stack" }));
    expect(validateComposeDocument(result.document)).toEqual([]);
    expect(dockerStackConfig(result.yaml)).toBeUndefined();
  });

  it("refuses a short-syntax host address, which the CLI would drop and listen on every address", () => {
    const composeFile = "services:\n  web:\n    image: nginx\n    ports: ['127.0.0.1:8080:80']\n";
    expect(dockerStackConfig(`version: "3.8"\n${composeFile}`)).toBeUndefined(); // the CLI only warns
    expect(() => convertCompose(baseInput({ composeFile, composeType: "stack" }))).toThrow(ComposeFileError);
    expect(() => convertCompose(baseInput({ composeFile, composeType: "docker-compose" }))).not.toThrow();
  });

  it("the check is real: the CLI refuses a key the v3 format does not have", () => {
    expect(
      dockerStackConfig('version: "3.8"\nservices:\n  web:\n    image: nginx\n    pull_policy: always\n'),
    ).toMatch(/pull_policy/);
  });

  it("reads sizes as bytes", () => {
    expect([
      bytesOf("64m"),
      bytesOf("1g"),
      bytesOf("512k"),
      bytesOf("100"),
      bytesOf("12MB"),
      bytesOf("lots"),
    ]).toEqual([64 * 1024 ** 2, 1024 ** 3, 512 * 1024, 100, 12 * 1024 ** 2, "lots"]);
  });
});
