/**
 * security.* against the in-process local agent writing into a temporary main directory: the
 * basicAuth middleware appears with the first credential and goes with the last, every hash
 * verifies with Apache's `htpasswd -vb`, passwords never come back, and injection is refused.
 */
import { execFile } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { validateDynamicConfig } from "@platform/traefik-config";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import {
  createApplication,
  dynamicFile,
  type ProxyTestPlatform,
  readIfExists,
  startProxyTestPlatform,
} from "../proxy/test-support.ts";

const run = promisify(execFile);
let test: ProxyTestPlatform;
let app: { applicationId: string; appName: string };
let scratch: string;
const as = (session = test.owner) => ({ token: session.token });

async function config() {
  const text = await readIfExists(dynamicFile(test, `${app.appName}.yml`));
  expect(text).toBeDefined();
  const parsed = parse(text!);
  expect(validateDynamicConfig(parsed)).toEqual([]);
  return parsed;
}

/** True when `htpasswd -vb` accepts `password` for `username` in the `user:hash` line. */
async function htpasswdVerifies(line: string, username: string, password: string): Promise<boolean> {
  const file = path.join(scratch, `htpasswd-${Math.random().toString(36).slice(2)}`);
  await writeFile(file, `${line}\n`);
  try {
    await run("htpasswd", ["-vb", file, username, password]);
    return true;
  } catch {
    return false;
  }
}

async function credentials() {
  return test.platform.ctx.db
    .selectFrom("security")
    .selectAll()
    .where("applicationId", "=", app.applicationId)
    .orderBy("createdAt")
    .execute();
}

beforeAll(async () => {
  scratch = await mkdtemp(path.join(tmpdir(), "cp-security-"));
  test = await startProxyTestPlatform();
  app = await createApplication(test);
  const domain = await test.platform.mutate(
    "domain.create",
    {
      domainType: "application",
      applicationId: app.applicationId,
      host: "private.example.com",
      https: true,
      certificateType: "letsencrypt",
    },
    as(),
  );
  expect(domain.status, JSON.stringify(domain.body)).toBe(200);
}, 60_000);

afterAll(async () => {
  await test?.close();
  if (scratch) await rm(scratch, { recursive: true, force: true });
});

describe("security credentials protect the application through its Traefik file", () => {
  const auth = () => `auth-${app.appName}`;
  let aliceId: string;

  it("without credentials the application is public", async () => {
    const parsed = await config();
    expect(parsed.http.middlewares?.[auth()]).toBeUndefined();
  });

  it("the first credential adds the basicAuth middleware to the serving router, hash verified by htpasswd", async () => {
    const created = await test.platform.mutate(
      "security.create",
      { applicationId: app.applicationId, username: "alice", password: "s3cret pass wörd" },
      as(),
    );
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    expect(created.body).toBe(true);
    const parsed = await config();
    const users: string[] = parsed.http.middlewares[auth()].basicAuth.users;
    expect(users).toHaveLength(1);
    expect(users[0]).toMatch(/^alice:\$apr1\$[./0-9A-Za-z]{1,8}\$[./0-9A-Za-z]{22}$/);
    expect(await htpasswdVerifies(users[0]!, "alice", "s3cret pass wörd")).toBe(true);
    expect(await htpasswdVerifies(users[0]!, "alice", "wrong")).toBe(false);
    const secure = Object.entries(parsed.http.routers).find(([name]) => name.includes("-router-websecure-"));
    expect((secure![1] as { middlewares: string[] }).middlewares).toContain(auth());
    aliceId = (await credentials())[0]!.securityId;
  });

  it("a second credential joins the same middleware; a repeated username is a 409 naming username", async () => {
    const bob = await test.platform.mutate(
      "security.create",
      { applicationId: app.applicationId, username: "bob", password: "hunter2" },
      as(),
    );
    expect(bob.status).toBe(200);
    const users: string[] = (await config()).http.middlewares[auth()].basicAuth.users;
    expect(users.map((user) => user.split(":")[0])).toEqual(["alice", "bob"]);
    expect(await htpasswdVerifies(users[1]!, "bob", "hunter2")).toBe(true);

    const before = await readIfExists(dynamicFile(test, `${app.appName}.yml`));
    const duplicate = await test.platform.mutate(
      "security.create",
      { applicationId: app.applicationId, username: "bob", password: "other" },
      as(),
    );
    expect(duplicate.status).toBe(409);
    expect(duplicate.body.error.data.fields).toEqual(["username"]);
    expect(duplicate.body.error.message).toContain("bob");
    expect(await credentials()).toHaveLength(2);
    expect(await readIfExists(dynamicFile(test, `${app.appName}.yml`))).toBe(before);
  });

  it("one never shows the password or its hash", async () => {
    const one = await test.platform.query("security.one", { securityId: aliceId }, as());
    expect(one.status).toBe(200);
    expect(one.body).toEqual({
      securityId: aliceId,
      applicationId: app.applicationId,
      username: "alice",
      password: "",
      createdAt: expect.any(String),
    });
    expect(test.platform.logLines.join("\n")).not.toContain("s3cret pass wörd");
    expect(test.platform.logLines.join("\n")).not.toContain("hunter2");
  });

  it("application.one lists the credentials without passwords, beside its domains and ports", async () => {
    const port = await test.platform.mutate(
      "port.create",
      { applicationId: app.applicationId, publishedPort: 18_080, targetPort: 80 },
      as(),
    );
    expect(port.status, JSON.stringify(port.body)).toBe(200);
    const one = await test.platform.query("application.one", { applicationId: app.applicationId }, as());
    expect(one.status, JSON.stringify(one.body)).toBe(200);
    expect(one.body.security.map((s: { username: string }) => s.username).sort()).toEqual(["alice", "bob"]);
    expect(one.body.security.every((s: { password: string }) => s.password === "")).toBe(true);
    expect(JSON.stringify(one.body)).not.toContain("$apr1$");
    expect(one.body.domains.map((d: { host: string }) => d.host)).toEqual(
      (
        await test.platform.query("domain.byApplicationId", { applicationId: app.applicationId }, as())
      ).body.map((d: { host: string }) => d.host),
    );
    expect(one.body.domains.length).toBeGreaterThan(0);
    expect(one.body.ports).toEqual([port.body]);
    expect((await test.platform.mutate("port.delete", { portId: port.body.portId }, as())).status).toBe(200);
  });

  it.each([
    ["a username with `:` (htpasswd field injection)", { username: "eve:x" }, "username"],
    ["a username with a newline (htpasswd line injection)", { username: "eve\nmallory" }, "username"],
    ["an empty username", { username: "" }, "username"],
    ["a password with a newline", { username: "eve", password: "a\nb" }, "password"],
    ["an empty password", { username: "eve", password: "" }, "password"],
  ])("%s is a 400 naming the field and changes nothing", async (_case, input, field) => {
    const before = await readIfExists(dynamicFile(test, `${app.appName}.yml`));
    const response = await test.platform.mutate(
      "security.create",
      { applicationId: app.applicationId, password: "pw", ...input },
      as(),
    );
    expect(response.status, JSON.stringify(response.body)).toBe(400);
    expect(response.body.error.data.fields).toEqual([field]);
    expect(await credentials()).toHaveLength(2);
    expect(await readIfExists(dynamicFile(test, `${app.appName}.yml`))).toBe(before);
  });

  it("update changes the username and re-hashes the password", async () => {
    const updated = await test.platform.mutate(
      "security.update",
      { securityId: aliceId, username: "alice2", password: "new password" },
      as(),
    );
    expect(updated.status, JSON.stringify(updated.body)).toBe(200);
    const users: string[] = (await config()).http.middlewares[auth()].basicAuth.users;
    const line = users.find((user) => user.startsWith("alice2:"))!;
    expect(await htpasswdVerifies(line, "alice2", "new password")).toBe(true);
    expect(await htpasswdVerifies(line, "alice2", "s3cret pass wörd")).toBe(false);
    const clash = await test.platform.mutate(
      "security.update",
      { securityId: aliceId, username: "bob" },
      as(),
    );
    expect(clash.status).toBe(409);
    expect(clash.body.error.data.fields).toEqual(["username"]);
    const injected = await test.platform.mutate(
      "security.update",
      { securityId: aliceId, username: "x:y" },
      as(),
    );
    expect(injected.status).toBe(400);
  });

  it("another organization's credential or application is a 404", async () => {
    const stranger = test.stranger;
    expect((await test.platform.query("security.one", { securityId: aliceId }, as(stranger))).status).toBe(
      404,
    );
    expect(
      (
        await test.platform.mutate(
          "security.update",
          { securityId: aliceId, password: "taken" },
          as(stranger),
        )
      ).status,
    ).toBe(404);
    expect(
      (await test.platform.mutate("security.delete", { securityId: aliceId }, as(stranger))).status,
    ).toBe(404);
    expect(
      (
        await test.platform.mutate(
          "security.create",
          { applicationId: app.applicationId, username: "mallory", password: "x" },
          as(stranger),
        )
      ).status,
    ).toBe(404);
    expect(await credentials()).toHaveLength(2);
  });

  it("deleting the last credential makes the application public again", async () => {
    const [first, second] = await credentials();
    expect(
      (await test.platform.mutate("security.delete", { securityId: first!.securityId }, as())).status,
    ).toBe(200);
    expect((await config()).http.middlewares[auth()].basicAuth.users).toHaveLength(1);
    expect(
      (await test.platform.mutate("security.delete", { securityId: second!.securityId }, as())).status,
    ).toBe(200);
    const parsed = await config();
    expect(parsed.http.middlewares?.[auth()]).toBeUndefined();
    for (const router of Object.values(parsed.http.routers) as Array<{ middlewares?: string[] }>) {
      expect(router.middlewares ?? []).not.toContain(auth());
    }
    expect((await test.platform.query("security.one", { securityId: first!.securityId }, as())).status).toBe(
      404,
    );
  });

  it("deleting the application deletes its credentials", async () => {
    const other = await createApplication(test);
    const created = await test.platform.mutate(
      "security.create",
      { applicationId: other.applicationId, username: "carol", password: "pw" },
      as(),
    );
    expect(created.status).toBe(200);
    expect(
      (await test.platform.mutate("application.delete", { applicationId: other.applicationId }, as())).status,
    ).toBe(200);
    const left = await test.platform.ctx.db
      .selectFrom("security")
      .select("securityId")
      .where("applicationId", "=", other.applicationId)
      .execute();
    expect(left).toEqual([]);
  });
});
