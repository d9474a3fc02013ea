/**
 * Configuration from files: `<NAME>_FILE` gives DATABASE_URL, NATS_ACCOUNT_SEED and
 * PLATFORM_SECRET_KEY from a file (the production stack mounts them as Docker secrets).
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { createAccount } from "@nats-io/nkeys";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "./config.ts";

let directory: string;
const file = async (name: string, content: string) => {
  const filePath = path.join(directory, name);
  await writeFile(filePath, content, { mode: 0o600 });
  return filePath;
};

beforeAll(async () => {
  directory = await mkdtemp(path.join(tmpdir(), "config-files-"));
});
afterAll(async () => {
  await rm(directory, { recursive: true, force: true });
});

describe("<NAME>_FILE variables", () => {
  it("read the secret from the file, without its trailing newline", async () => {
    const seed = new TextDecoder().decode(createAccount().getSeed());
    const config = loadConfig({
      DATABASE_URL_FILE: await file("database-url", "postgres://platform:pw@postgres:5432/platform\n"),
      NATS_URL: "nats://nats:4222",
      NATS_ACCOUNT_SEED_FILE: await file("seed", `${seed}\n`),
      PLATFORM_SECRET_KEY_FILE: await file("key", "k".repeat(40)),
    });
    expect(config.databaseUrl).toBe("postgres://platform:pw@postgres:5432/platform");
    expect(config.natsAccountSeed).toBe(seed);
    expect(config.secretKey).toBe("k".repeat(40));
  });

  it("validate the content like the variable itself", async () => {
    expect(() => loadConfig({ DATABASE_URL_FILE: "/nonexistent/database-url" })).toThrow(
      /DATABASE_URL_FILE: cannot read \/nonexistent\/database-url \(ENOENT\)/,
    );
    expect(() => loadConfig({ DATABASE_URL_FILE: "/nonexistent/a", DATABASE_URL: "postgres://x/y" })).toThrow(
      /DATABASE_URL_FILE: cannot be set together with DATABASE_URL/,
    );
    const bad = await file("bad-url", "mysql://nope");
    expect(() => loadConfig({ DATABASE_URL_FILE: bad })).toThrow(ConfigError);
    expect(() => loadConfig({ DATABASE_URL_FILE: bad })).toThrow(/DATABASE_URL: must be a postgres/);
  });
});

describe("this machine's main directory and network (the production stack sets them)", () => {
  it("are passed on as given; the network is left to the agent's default when unset", () => {
    const config = loadConfig({ PLATFORM_MAIN_DIRECTORY: "/srv/platform", PLATFORM_NETWORK: "platform-a_1" });
    expect(config).toMatchObject({ mainDirectory: "/srv/platform", platformNetwork: "platform-a_1" });
    expect(loadConfig({}).platformNetwork).toBeUndefined();
  });

  it("default the main directory to the instance's data directory, so two instances never share it", () => {
    const a = loadConfig({ PLATFORM_DATA_DIR: "/var/lib/platform-a" });
    const b = loadConfig({ PLATFORM_DATA_DIR: "/var/lib/platform-b" });
    expect(a.mainDirectory).toBe("/var/lib/platform-a/main");
    expect(b.mainDirectory).toBe("/var/lib/platform-b/main");
    // Relative data directories (the default ./.platform-data) give an absolute path: host paths in services.
    expect(path.isAbsolute(loadConfig({}).mainDirectory)).toBe(true);
    expect(loadConfig({}).mainDirectory).toBe(path.resolve(".platform-data", "main"));
  });

  it("refuse a relative directory and a network name with other characters, naming the variable", () => {
    expect(() => loadConfig({ PLATFORM_MAIN_DIRECTORY: "etc/platform" })).toThrow(
      /PLATFORM_MAIN_DIRECTORY: must be an absolute path/,
    );
    expect(() => loadConfig({ PLATFORM_NETWORK: "net;rm -rf /" })).toThrow(
      /PLATFORM_NETWORK: must be a Docker network name/,
    );
    expect(() => loadConfig({ PLATFORM_NETWORK: "../host" })).toThrow(/PLATFORM_NETWORK/);
  });
});
