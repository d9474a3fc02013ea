import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  dynamicConfigFor,
  generateApr1Salt,
  hashPassword,
  isApr1Hash,
  parseDynamicConfig,
  toYaml,
  verifyPassword,
} from "./index.ts";

// Apache's own htpasswd (Debian apache2-utils) checks the hashes; scripts/install-test-tools.sh
// installs it. Missing, the suite fails rather than skips.
let directory: string;

beforeAll(() => {
  const found = spawnSync("htpasswd", ["-h"], { encoding: "utf8" });
  if (found.error) throw new Error("htpasswd is missing: run scripts/install-test-tools.sh (apache2-utils)");
  directory = mkdtempSync(join(tmpdir(), "traefik-config-htpasswd-"));
});

afterAll(() => {
  if (directory) rmSync(directory, { recursive: true, force: true });
});

/** Whether Apache's `htpasswd -vb` accepts `password` for `username` in a file of `lines`. */
function htpasswdAccepts(lines: string[], username: string, password: string): boolean {
  const file = join(directory, `users-${Math.random().toString(36).slice(2)}`);
  writeFileSync(file, `${lines.join("\n")}\n`);
  const result = spawnSync("htpasswd", ["-vb", file, username, password], { encoding: "utf8" });
  return result.status === 0;
}

const passwords = [
  "secret",
  "pä ss:word",
  "x",
  "with spaces and $pecial \"chars\" `backticks` \\ and 'quotes'",
  "ünïcødé-パスワード-🔑",
  "a".repeat(200),
];

describe("APR1 hashes", () => {
  it.each(passwords)("htpasswd -vb verifies the hash of %j", (password) => {
    const hash = hashPassword(password);
    expect(isApr1Hash(hash)).toBe(true);
    expect(htpasswdAccepts([`user:${hash}`], "user", password)).toBe(true);
    expect(htpasswdAccepts([`user:${hash}`], "user", `${password}!`)).toBe(false);
    expect(verifyPassword(password, hash)).toBe(true);
    expect(verifyPassword(`${password}!`, hash)).toBe(false);
  });

  it("verifies hashes htpasswd made", () => {
    const line = execFileSync("htpasswd", ["-nbm", "user", "pä ss:word"], { encoding: "utf8" }).trim();
    const hash = line.slice("user:".length);
    expect(verifyPassword("pä ss:word", hash)).toBe(true);
    expect(verifyPassword("pa ss:word", hash)).toBe(false);
  });

  it("is deterministic for a given salt and random otherwise", () => {
    expect(hashPassword("secret", "abcdefgh")).toBe("$apr1$abcdefgh$h9FWgUz3n9YxylKLlR5SQ/");
    expect(hashPassword("secret", "abcdefgh")).toBe(hashPassword("secret", "abcdefgh"));
    const salts = new Set(Array.from({ length: 50 }, generateApr1Salt));
    expect(salts.size).toBe(50);
    for (const salt of salts) expect(salt).toMatch(/^[./0-9A-Za-z]{8}$/);
    expect(hashPassword("secret")).not.toBe(hashPassword("secret"));
    expect(() => hashPassword("secret", "bad$salt")).toThrow();
  });

  it("every user line of a generated configuration verifies with htpasswd -vb", () => {
    const credentials = [
      { username: "alice", password: "secret" },
      { username: "bob smith", password: "pä ss:word" },
      { username: "ÿvonne", password: "ünïcødé-🔑" },
    ];
    const config = dynamicConfigFor(
      {
        appName: "protected",
        domains: [
          {
            uniqueConfigKey: 1,
            host: "p.example.com",
            port: 80,
            https: true,
            certificateType: "letsencrypt",
          },
        ],
        credentials: credentials.map(({ username, password }) => ({
          username,
          passwordHash: hashPassword(password),
        })),
      },
      { certificatesDirectory: "/certs" },
    );
    // Read the users back from the YAML Traefik would read.
    const parsed = parseDynamicConfig(toYaml(config!));
    if (!parsed.ok) throw new Error(JSON.stringify(parsed.errors));
    const http = parsed.config.http as { middlewares: Record<string, { basicAuth: { users: string[] } }> };
    const users = http.middlewares["auth-protected"]!.basicAuth.users;
    expect(users).toHaveLength(3);
    for (const { username, password } of credentials) {
      expect(htpasswdAccepts(users, username, password)).toBe(true);
      expect(htpasswdAccepts(users, username, "wrong")).toBe(false);
    }
    expect(htpasswdAccepts(users, "alice", "pä ss:word")).toBe(false);
  });
});
