/**
 * settings.readDirectories, readTraefikFile, updateTraefikFile and the middlewares / web server
 * files of this machine's proxy, through the in-process local agent and its (temporary) main
 * directory read back from disk: what is written lands in the dynamic directory Traefik's file
 * provider watches, passes Traefik's schema first, never leaves the directory (names, `..`,
 * absolute paths, planted links) and never reaches another organization's file.
 */
import { mkdir, readFile, rename, symlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { TRAEFIK_CONTAINER_DIRECTORY } from "@platform/traefik-config";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LOCAL_SERVER_ID } from "../agents/hub.ts";
import { generatedStaticConfig, loadWebServerSettings } from "./static-config.ts";
import { dynamicFile, type ProxyTestPlatform, readIfExists, startProxyTestPlatform } from "./test-support.ts";

let test: ProxyTestPlatform;
const as = (session = test.owner) => ({ token: session.token });

const ROUTE = `http:
  routers:
    extra-router:
      rule: Host(\`extra.example.com\`)
      entryPoints: [web]
      service: extra-service
  services:
    extra-service:
      loadBalancer:
        servers:
          - url: http://extra-app:3000
`;

beforeAll(async () => {
  test = await startProxyTestPlatform();
}, 60_000);

afterAll(async () => {
  await test?.close();
});

const update = (input: Record<string, unknown>, session = test.owner) =>
  test.platform.mutate("settings.updateTraefikFile", input, as(session));
const read = (input: Record<string, unknown>, session = test.owner) =>
  test.platform.query("settings.readTraefikFile", input, as(session));
const tree = async (session = test.owner) => {
  const response = await test.platform.query("settings.readDirectories", {}, as(session));
  expect(response.status, JSON.stringify(response.body)).toBe(200);
  return response.body as { id: string; name: string; type: string; children: { id: string }[] }[];
};

describe("settings.updateTraefikFile / readTraefikFile / readDirectories on this machine", () => {
  it("readDirectories shows an empty dynamic directory before anything is written", async () => {
    expect(await tree()).toEqual([{ id: "dynamic", name: "dynamic", type: "directory", children: [] }]);
  });

  it("updateTraefikFile writes the file into the dynamic directory the proxy's file provider watches; it is listed and read back", async () => {
    const written = await update({ path: "extra.yml", traefikConfig: ROUTE });
    expect(written.status, JSON.stringify(written.body)).toBe(200);
    expect(await readFile(dynamicFile(test, "extra.yml"), "utf8")).toBe(ROUTE);

    // Traefik loads it without a restart: the proxy's static configuration has its file provider
    // watch the directory the proxy's directory is mounted at (/etc/traefik/dynamic).
    const settings = await loadWebServerSettings(test.platform.ctx.db);
    expect(generatedStaticConfig(settings, false).providers).toEqual({
      file: { directory: `${TRAEFIK_CONTAINER_DIRECTORY}/dynamic`, watch: true },
    });

    expect((await tree())[0]?.children).toEqual([
      { id: "dynamic/extra.yml", name: "extra.yml", type: "file" },
    ]);
    for (const path of ["extra.yml", "dynamic/extra.yml"]) {
      const response = await read({ path });
      expect(response.status, JSON.stringify(response.body)).toBe(200);
      expect(response.body).toBe(ROUTE);
    }
    expect((await read({ path: "missing.yml" })).body).toBeNull();
  });

  it("refuses traefikConfig that fails Traefik's file-provider schema with a 400 naming it, leaving the file as it was", async () => {
    for (const traefikConfig of [
      "http:\n  routers:\n    r:\n      rule: 42\n",
      "http: [\n",
      "tcp:\n  nonsense: 1\n",
    ]) {
      const response = await update({ path: "extra.yml", traefikConfig });
      expect(response.status, traefikConfig).toBe(400);
      expect(response.body.error.data.fields).toEqual(["traefikConfig"]);
    }
    expect(await readFile(dynamicFile(test, "extra.yml"), "utf8")).toBe(ROUTE);
  });

  it("refuses a path outside the dynamic directory (.., absolute, sub-directory, other extension) with a 400 naming path, writing nothing", async () => {
    for (const path of [
      "../traefik.yml",
      "dynamic/../traefik.yml",
      "..yml",
      "/etc/passwd.yml",
      "certificates/x.yml",
      "sub/x.yml",
      "x.txt",
      "x.toml",
      ".hidden.yml",
    ]) {
      const written = await update({ path, traefikConfig: ROUTE });
      expect(written.status, path).toBe(400);
      expect(written.body.error.data.fields, path).toEqual(["path"]);
      const readBack = await read({ path });
      expect(readBack.status, path).toBe(400);
      expect(readBack.body.error.data.fields, path).toEqual(["path"]);
    }
    expect(await readIfExists(path.join(test.mainDirectory, "traefik", "traefik.yml.tmp"))).toBeUndefined();
    expect((await tree())[0]?.children.map((child) => child.id)).toEqual(["dynamic/extra.yml"]);
  });

  it("never follows a link planted in the dynamic directory: not listed, not read, not written through", async () => {
    const outside = path.join(test.mainDirectory, "outside.yml");
    await writeFile(outside, "original: secret\n");
    await symlink(outside, dynamicFile(test, "planted.yml"));
    expect((await tree())[0]?.children.map((child) => child.id)).not.toContain("dynamic/planted.yml");
    const readBack = await read({ path: "planted.yml" });
    expect(JSON.stringify(readBack.body)).not.toContain("secret");
    const written = await update({ path: "planted.yml", traefikConfig: ROUTE });
    expect(written.status, JSON.stringify(written.body)).toBe(400);
    expect(await readFile(outside, "utf8")).toBe("original: secret\n");
  });

  it("another organization's file on this shared machine is neither listed, read nor overwritten (409)", async () => {
    const theirs = "http:\n  routers: {}\n";
    const owner = { organizationId: test.stranger.user.organizationId, resource: "application:their-app" };
    await test.platform.ctx.agents.client.writeProxyFile(LOCAL_SERVER_ID, "dynamic", "theirs.yml", theirs, {
      owner,
    });
    expect((await tree())[0]?.children.map((child) => child.id)).not.toContain("dynamic/theirs.yml");
    expect((await read({ path: "theirs.yml" })).body).toBeNull();
    const written = await update({ path: "theirs.yml", traefikConfig: ROUTE });
    expect(written.status, JSON.stringify(written.body)).toBe(409);
    expect(await readFile(dynamicFile(test, "theirs.yml"), "utf8")).toBe(theirs);
  });

  it("is the administrators': a member gets 403, another organization's owner 403 for this machine; nothing is written", async () => {
    const member = await test.platform.addMember(test.owner, "member");
    for (const session of [member, test.stranger]) {
      expect((await update({ path: "sneaky.yml", traefikConfig: ROUTE }, session)).status).toBe(403);
      expect((await read({ path: "extra.yml" }, session)).status).toBe(403);
      expect((await test.platform.query("settings.readDirectories", {}, as(session))).status).toBe(403);
    }
    expect(await readIfExists(dynamicFile(test, "sneaky.yml"))).toBeUndefined();
  });
});

describe("settings.read/updateMiddlewareTraefikConfig and read/updateWebServerTraefikConfig", () => {
  const cases = [
    ["MiddlewareTraefikConfig", "middlewares.yml"],
    ["WebServerTraefikConfig", "platform-control-plane.yml"],
  ] as const;
  for (const [suffix, fileName] of cases) {
    it(`update${suffix} writes dynamic/${fileName} after Traefik's schema; read${suffix} answers it`, async () => {
      const before = await readIfExists(dynamicFile(test, fileName));
      const empty = await test.platform.query(`settings.read${suffix}`, {}, as());
      expect(empty.status, JSON.stringify(empty.body)).toBe(200);
      expect(empty.body).toBe(before ?? "");

      const invalid = await test.platform.mutate(
        `settings.update${suffix}`,
        { traefikConfig: "http:\n  middlewares:\n    m:\n      redirectScheme: 7\n" },
        as(),
      );
      expect(invalid.status).toBe(400);
      expect(invalid.body.error.data.fields).toEqual(["traefikConfig"]);
      expect(await readIfExists(dynamicFile(test, fileName))).toBe(before);

      const config =
        "http:\n  middlewares:\n    shared-https:\n      redirectScheme:\n        scheme: https\n";
      const written = await test.platform.mutate(`settings.update${suffix}`, { traefikConfig: config }, as());
      expect(written.status, JSON.stringify(written.body)).toBe(200);
      expect(await readFile(dynamicFile(test, fileName), "utf8")).toBe(config);
      expect((await test.platform.query(`settings.read${suffix}`, {}, as())).body).toBe(config);

      const stranger = await test.platform.mutate(
        `settings.update${suffix}`,
        { traefikConfig: ROUTE },
        as(test.stranger),
      );
      expect(stranger.status).toBe(403);
      expect(await readFile(dynamicFile(test, fileName), "utf8")).toBe(config);
    });
  }
});

describe("a dynamic directory that is a link", () => {
  it("is refused, and nothing outside is listed", async () => {
    // Last: replaces the dynamic directory of this platform with a link.
    const outside = path.join(test.mainDirectory, "elsewhere");
    await mkdir(outside);
    await writeFile(path.join(outside, "elsewhere-secret.yml"), "x: 1\n");
    const dynamic = path.join(test.mainDirectory, "traefik", "dynamic");
    await rename(dynamic, `${dynamic}.moved`);
    await symlink(outside, dynamic);
    const response = await test.platform.query("settings.readDirectories", {}, as());
    expect(response.status).toBe(400);
    expect(JSON.stringify(response.body)).not.toContain("elsewhere-secret");
  });
});
