/**
 * redirects.* against the in-process local agent writing into a temporary main directory: a
 * redirect becomes a redirectRegex middleware on the application's routers in its own Traefik
 * file (valid against the Traefik schema), changes and removal rewrite it, a regex Traefik cannot
 * read is a 400 naming `regex` with nothing stored, application.one lists them, and another
 * organization's ids are 404s.
 */
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

let test: ProxyTestPlatform;
let app: { applicationId: string; appName: string };
const as = (session = test.owner) => ({ token: session.token });

async function config() {
  const text = await readIfExists(dynamicFile(test, `${app.appName}.yml`));
  expect(text).toBeDefined();
  const parsed = parse(text!);
  expect(validateDynamicConfig(parsed)).toEqual([]);
  return parsed;
}

const rows = () =>
  test.platform.ctx.db
    .selectFrom("redirects")
    .selectAll()
    .where("applicationId", "=", app.applicationId)
    .execute();

beforeAll(async () => {
  test = await startProxyTestPlatform();
  app = await createApplication(test);
  const domain = await test.platform.mutate(
    "domain.create",
    {
      domainType: "application",
      applicationId: app.applicationId,
      host: "www.example.com",
      https: true,
      certificateType: "letsencrypt",
    },
    as(),
  );
  expect(domain.status, JSON.stringify(domain.body)).toBe(200);
}, 60_000);

afterAll(async () => {
  await test?.close();
});

describe("redirects through the application's Traefik file", () => {
  let redirectId: string;

  it("create adds a redirectRegex middleware in front of both routers; one shows it", async () => {
    const created = await test.platform.mutate(
      "redirects.create",
      {
        applicationId: app.applicationId,
        regex: "^https?://www\\.example\\.com/(.*)",
        replacement: "https://example.com/$1",
        permanent: true,
      },
      as(),
    );
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const [row] = await rows();
    redirectId = row!.redirectId;
    const name = `redirect-${app.appName}-${row!.uniqueConfigKey}`;
    const parsed = await config();
    expect(parsed.http.middlewares[name]).toEqual({
      redirectRegex: {
        regex: "^https?://www\\.example\\.com/(.*)",
        replacement: "https://example.com/$1",
        permanent: true,
      },
    });
    const routers = Object.values(parsed.http.routers) as { middlewares?: string[] }[];
    expect(routers).toHaveLength(2);
    for (const router of routers) expect(router.middlewares?.[0]).toBe(name);
    const one = await test.platform.query("redirects.one", { redirectId }, as());
    expect(one.body).toMatchObject({ redirectId, permanent: true, applicationId: app.applicationId });
    // application.one answers them too (as Dokploy's does), fresh after the write.
    const application = await test.platform.query(
      "application.one",
      { applicationId: app.applicationId },
      as(),
    );
    expect(application.body.redirects).toEqual([one.body]);
  });

  it("update rewrites the middleware; a regex Traefik cannot read is a 400 naming regex, nothing changed", async () => {
    await test.platform.mutateOk(
      "redirects.update",
      { redirectId, permanent: false, replacement: "/new/$1" },
      as(),
    );
    const [row] = await rows();
    expect(
      (await config()).http.middlewares[`redirect-${app.appName}-${row!.uniqueConfigKey}`].redirectRegex,
    ).toEqual({
      regex: "^https?://www\\.example\\.com/(.*)",
      replacement: "/new/$1",
      permanent: false,
    });
    for (const regex of ["(unclosed", "^(?!admin)", "(a)\\1", ""]) {
      const refused = await test.platform.mutate("redirects.update", { redirectId, regex }, as());
      expect(refused.status, regex).toBe(400);
      expect(refused.body.error.data.fields).toEqual(["regex"]);
      const bad = await test.platform.mutate(
        "redirects.create",
        { applicationId: app.applicationId, regex, replacement: "/x" },
        as(),
      );
      expect(bad.status, regex).toBe(400);
    }
    expect(await rows()).toHaveLength(1);
    expect((await rows())[0]!.regex).toBe("^https?://www\\.example\\.com/(.*)");
  });

  it("another organization's redirect or application is a 404", async () => {
    const stranger = test.stranger;
    expect((await test.platform.query("redirects.one", { redirectId }, as(stranger))).status).toBe(404);
    expect(
      (await test.platform.mutate("redirects.update", { redirectId, permanent: true }, as(stranger))).status,
    ).toBe(404);
    expect((await test.platform.mutate("redirects.delete", { redirectId }, as(stranger))).status).toBe(404);
    expect(
      (
        await test.platform.mutate(
          "redirects.create",
          { applicationId: app.applicationId, regex: "^/a", replacement: "/b" },
          as(stranger),
        )
      ).status,
    ).toBe(404);
    expect(await rows()).toHaveLength(1);
  });

  it("delete removes the middleware from the file", async () => {
    const one = () => test.platform.query("application.one", { applicationId: app.applicationId }, as());
    expect((await one()).body.redirects).toHaveLength(1);
    await test.platform.mutateOk("redirects.delete", { redirectId }, as());
    // The answer kept by the application details cache is not served after the write.
    expect((await one()).body.redirects).toEqual([]);
    expect(await rows()).toHaveLength(0);
    const parsed = await config();
    expect(
      Object.keys(parsed.http.middlewares ?? {}).filter((name) =>
        name.startsWith(`redirect-${app.appName}-`),
      ),
    ).toEqual([]);
  });
});
