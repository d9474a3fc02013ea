/**
 * A remote catalogue in Dokploy's layout (PLATFORM_TEMPLATES_URL) served by a local HTTP server
 * on 127.0.0.1: listed beside the built-in templates and rendered; broken ones (500, no answer,
 * invalid JSON, a huge body) and refused ones (loopback not allowed) leave the built-in list
 * intact and log the reason without the remote's body.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { Writable } from "node:stream";
import { jwtVerify } from "jose";
import pino from "pino";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type AllowList, EMPTY_ALLOW_LIST, OutboundRefusedError, parseAllowList } from "../outbound/guard.ts";
import { guardedGetText, OutboundFetchError } from "../outbound/http.ts";
import {
  builtInTemplates,
  clearTemplateCache,
  InvalidTemplateError,
  listTemplates,
  renderTemplate,
  type TemplateContext,
  TemplateNotFoundError,
} from "./catalogue.ts";
import { parseImageOverrides } from "./images.ts";

const MARKER = "REMOTE-BODY-MUST-NOT-BE-LOGGED";
const LOOPBACK = (parseAllowList("127.0.0.0/8") as { list: AllowList }).list;

const remoteMeta = [
  {
    id: "hello-remote",
    name: "Hello Remote",
    version: "1.0.0",
    description: "A template served by the test catalogue.",
    logo: "hello.svg",
    links: { github: "https://example.com/hello", docs: "javascript:alert(1)" },
    tags: ["test"],
  },
  {
    id: "api-stack",
    name: "API stack",
    version: "2",
    description: "Written the way Dokploy's catalogue writes its larger templates.",
    logo: "https://cdn.example.com/api.png",
    links: {},
    tags: [],
  },
  {
    id: "gitea",
    name: "Gitea from the remote",
    version: "0",
    description: "",
    logo: "x.png",
    links: {},
    tags: [],
  },
  { id: "../escape", name: "Bad id", version: "1", description: "", logo: "", links: {}, tags: [] },
  { name: "No id" },
];
const helloCompose = `services:
  hello:
    image: nginx:1.27-alpine
    environment:
      GREETING: \${GREETING}
`;
const helloToml = `[variables]
main_domain = "\${domain}"
greeting = "hello-\${hash:6}"

[[config.domains]]
serviceName = "hello"
port = 80
host = "\${main_domain}"

[config.env]
GREETING = "\${greeting}"
`;

// Dokploy's catalogue's habits: an env list with comments, a JWT over a payload variable that
// holds a timestamp helper, TOML's 8_000, `/volumes/...` mount paths bound as `../files/...`.
const apiCompose = `services:
  gateway:
    image: nginx:1.27-alpine
    volumes:
      - ../files/volumes/gateway/routes.yml:/etc/gateway/routes.yml:ro
    environment:
      ANON_KEY: \${ANON_KEY}
`;
const apiToml = `[variables]
main_domain = "\${domain}"
jwt_secret = "\${password:40}"
anon_payload = """{
  "role": "anon",
  "exp": \${timestamps:2030-01-01T00:00:00Z}
}"""

[[config.domains]]
serviceName = "gateway"
port = 8_000
host = "\${main_domain}"

[config]
env = [
  '# Keys',
  '',
  'JWT_SECRET=\${jwt_secret}',
  'ANON_KEY=\${jwt:jwt_secret:anon_payload}',
  'PREFIX=\${APP_NAME}-api',
]

[[config.mounts]]
filePath = "/volumes/gateway/routes.yml"
content = """
routes:
  - host: \${main_domain}
    key: $ANON_KEY
"""
`;

let server: Server;
let origin: string;
const requests: string[] = [];
const held: import("node:http").ServerResponse[] = [];

beforeAll(async () => {
  server = createServer((request, response) => {
    const url = request.url ?? "";
    requests.push(url);
    const send = (status: number, body: string) => response.writeHead(status).end(body);
    if (url === "/good/meta.json") return send(200, JSON.stringify(remoteMeta));
    if (url === "/good/blueprints/hello-remote/docker-compose.yml") return send(200, helloCompose);
    if (url === "/good/blueprints/hello-remote/template.toml") return send(200, helloToml);
    if (url === "/good/blueprints/api-stack/docker-compose.yml") return send(200, apiCompose);
    if (url === "/good/blueprints/api-stack/template.toml") return send(200, apiToml);
    if (url === "/moved/meta.json") return response.writeHead(302, { location: "/good/meta.json" }).end();
    if (url === "/metadata/meta.json") {
      return response.writeHead(302, { location: "http://169.254.169.254/latest/meta-data" }).end();
    }
    if (url === "/broken/meta.json") return send(500, MARKER);
    if (url === "/invalid/meta.json") return send(200, `{"not": json ${MARKER}`);
    if (url === "/object/meta.json") return send(200, JSON.stringify({ templates: MARKER }));
    if (url === "/huge/meta.json") {
      // 5 MiB without a Content-Length: the cap counts what streams in.
      response.writeHead(200);
      const chunk = `${MARKER}${" ".repeat(64 * 1024)}`;
      for (let index = 0; index < 80; index++) response.write(chunk);
      return response.end();
    }
    if (url === "/declared/meta.json") {
      return response.writeHead(200, { "content-length": String(50 * 1024 * 1024) }).end();
    }
    if (url === "/once-slow/meta.json" && requests.filter((seen) => seen === url).length === 1) {
      held.push(response); // the first request never answers, later ones do
      return;
    }
    if (url === "/once-slow/meta.json") return send(200, JSON.stringify(remoteMeta));
    if (url === "/slow/meta.json") {
      held.push(response); // never answers
      return;
    }
    send(404, "not found");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  for (const response of held) response.destroy();
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});
beforeEach(() => {
  clearTemplateCache();
  requests.length = 0;
});

function servicesFor(
  templatesUrl: string | undefined,
  allow = LOOPBACK,
  templateImages?: TemplateContext["config"]["templateImages"],
) {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      lines.push(String(chunk));
      done();
    },
  });
  const ctx: TemplateContext = {
    config: { templatesUrl, outboundAllow: allow, port: 3000, templateImages },
    logger: pino({ level: "warn" }, stream),
  };
  return { ctx, lines };
}
const generateHost = (service: string) => `${service}-generated.apps.example.test`;

describe("a remote template catalogue", () => {
  it("lists the remote templates after the built-in ones, the built-in winning on a shared id", async () => {
    const { ctx, lines } = servicesFor(`${origin}/good`);
    const list = await listTemplates(ctx);
    const builtIn = builtInTemplates();
    expect(list.slice(0, builtIn.length)).toEqual(builtIn);
    expect(list.slice(builtIn.length)).toEqual([
      {
        id: "hello-remote",
        name: "Hello Remote",
        version: "1.0.0",
        description: "A template served by the test catalogue.",
        logo: `${origin}/good/blueprints/hello-remote/hello.svg`,
        links: { github: "https://example.com/hello" },
        tags: ["test"],
      },
      {
        id: "api-stack",
        name: "API stack",
        version: "2",
        description: "Written the way Dokploy's catalogue writes its larger templates.",
        logo: "https://cdn.example.com/api.png",
        links: {},
        tags: [],
      },
    ]);
    expect(list.filter((template) => template.id === "gitea")).toEqual(
      builtIn.filter((template) => template.id === "gitea"),
    );
    expect(lines).toEqual([]);
    // Cached: a second list asks nothing of the remote.
    await listTemplates(ctx);
    expect(requests).toEqual(["/good/meta.json"]);
  });

  it("renders a remote template, and a shared id from the built-in files", async () => {
    const overrides = parseImageOverrides("nginx=registry.local/nginx") as { overrides: Map<string, string> };
    const { ctx } = servicesFor(`${origin}/good`, LOOPBACK, overrides.overrides);
    const rendered = await renderTemplate(ctx, "hello-remote", {
      generateHost,
      domainHost: "hello.example.com",
    });
    expect(rendered.domains).toEqual([{ serviceName: "hello", port: 80, host: "hello.example.com" }]);
    expect(rendered.envs).toHaveLength(1);
    expect(rendered.envs[0]).toMatch(/^GREETING=hello-[0-9a-f]{6}$/);
    expect(rendered.composeFile).toContain("image: registry.local/nginx:1.27-alpine");
    expect(rendered.mounts).toEqual([]);
    const gitea = await renderTemplate(ctx, "gitea", { generateHost });
    expect(gitea.composeFile).toContain("gitea/gitea:");
    expect(requests.filter((url) => url.includes("/blueprints/gitea/"))).toEqual([]);
    await expect(renderTemplate(ctx, "not-listed", { generateHost })).rejects.toThrow(TemplateNotFoundError);
  });

  it("renders a template written as Dokploy's catalogue writes them", async () => {
    const { ctx } = servicesFor(`${origin}/good`);
    const rendered = await renderTemplate(ctx, "api-stack", { generateHost });
    expect(rendered.domains).toEqual([
      { serviceName: "gateway", port: 8000, host: "gateway-generated.apps.example.test" },
    ]);
    const env = Object.fromEntries(rendered.envs.map((line) => line.split(/=(.*)/s).slice(0, 2)));
    expect(Object.keys(env)).toEqual(["JWT_SECRET", "ANON_KEY", "PREFIX"]);
    const { payload } = await jwtVerify(env.ANON_KEY, new TextEncoder().encode(env.JWT_SECRET));
    expect(payload).toMatchObject({ role: "anon", exp: Date.parse("2030-01-01T00:00:00Z") / 1000 });
    expect(env.PREFIX).toBe(`\${APP_NAME}-api`);
    expect(rendered.mounts).toEqual([
      {
        filePath: "volumes/gateway/routes.yml",
        content: "routes:\n  - host: gateway-generated.apps.example.test\n    key: $ANON_KEY\n",
      },
    ]);
  });

  it("takes a caller's baseUrl in place of PLATFORM_TEMPLATES_URL", async () => {
    const { ctx } = servicesFor(undefined);
    expect((await listTemplates(ctx)).map((template) => template.id)).not.toContain("hello-remote");
    const list = await listTemplates(ctx, { baseUrl: `${origin}/good/` });
    expect(list.map((template) => template.id)).toContain("hello-remote");
    await expect(
      renderTemplate(ctx, "hello-remote", { generateHost, baseUrl: `${origin}/good` }),
    ).resolves.toBeDefined();
  });

  it.each([
    ["answers 500", "broken", /answered HTTP 500/],
    ["answers invalid JSON", "invalid", /is not JSON/],
    ["answers an object", "object", /is not a JSON array/],
    ["streams more than the cap", "huge", /larger than 4194304 bytes/],
    ["declares more than the cap", "declared", /larger than 4194304 bytes/],
    ["does not answer in time", "slow", /no complete answer within 300 ms/],
    ["does not exist", "missing", /answered HTTP 404/],
  ])(
    "when it %s, the list is the built-in one and the log says why, without the body",
    async (_, name, reason) => {
      const { ctx, lines } = servicesFor(`${origin}/${name}`);
      const started = Date.now();
      expect(await listTemplates(ctx, { timeoutMs: 300 })).toEqual(builtInTemplates());
      expect(Date.now() - started).toBeLessThan(5000);
      expect(lines).toHaveLength(1);
      const line = JSON.parse(lines[0]!);
      expect(line.templatesUrl).toBe(`${origin}/${name}`);
      expect(line.reason).toMatch(reason);
      expect(lines.join("")).not.toContain(MARKER);
      // The failure is remembered for a while: the next list does not wait for the remote again.
      const count = requests.length;
      expect(await listTemplates(ctx, { timeoutMs: 300 })).toEqual(builtInTemplates());
      expect(requests.length).toBe(count);
      await expect(renderTemplate(ctx, "hello-remote", { generateHost })).rejects.toThrow(
        TemplateNotFoundError,
      );
    },
  );

  it("does not remember a failure when the caller gave up (its request closed)", async () => {
    const { ctx, lines } = servicesFor(`${origin}/once-slow`);
    const gaveUp = new AbortController();
    setTimeout(() => gaveUp.abort(), 100);
    expect(await listTemplates(ctx, { signal: gaveUp.signal })).toEqual(builtInTemplates());
    expect(JSON.parse(lines[0]!).reason).toMatch(/aborted/);
    // The next caller asks the remote again and gets its templates.
    expect((await listTemplates(ctx)).map((template) => template.id)).toContain("hello-remote");
    expect(requests).toEqual(["/once-slow/meta.json", "/once-slow/meta.json"]);
  });

  it("is refused on a loopback address unless PLATFORM_OUTBOUND_ALLOW covers it", async () => {
    const { ctx, lines } = servicesFor(`${origin}/good`, EMPTY_ALLOW_LIST);
    expect(await listTemplates(ctx)).toEqual(builtInTemplates());
    expect(JSON.parse(lines[0]!).reason).toMatch(/loopback address/);
    expect(requests).toEqual([]);
    await expect(renderTemplate(ctx, "hello-remote", { generateHost })).rejects.toThrow(
      TemplateNotFoundError,
    );
  });

  it("follows a redirect only to an address the guard allows", async () => {
    expect(JSON.parse(await guardedGetText(`${origin}/moved/meta.json`, { allow: LOOPBACK }))).toEqual(
      remoteMeta,
    );
    await expect(guardedGetText(`${origin}/metadata/meta.json`, { allow: LOOPBACK })).rejects.toThrow(
      OutboundRefusedError,
    );
    await expect(guardedGetText("file:///etc/passwd", { allow: LOOPBACK })).rejects.toThrow(
      OutboundFetchError,
    );
    await expect(guardedGetText(`http://user:pw@127.0.0.1:1/`, { allow: LOOPBACK })).rejects.toThrow(
      /credentials/,
    );
  });

  it("connects to the very address the guard checked (no second DNS answer)", async () => {
    const port = new URL(origin).port;
    // catalogue.invalid resolves nowhere but through this resolver: an answer proves the pin.
    const pinned = { resolve: async () => ["127.0.0.1"] };
    const body = await guardedGetText(`http://catalogue.invalid:${port}/good/meta.json`, {
      allow: LOOPBACK,
      resolver: pinned,
    });
    expect(JSON.parse(body)).toEqual(remoteMeta);
    const metadata = { resolve: async () => ["169.254.169.254"] };
    await expect(
      guardedGetText(`http://catalogue.invalid:${port}/good/meta.json`, {
        allow: LOOPBACK,
        resolver: metadata,
      }),
    ).rejects.toThrow(/metadata/);
  });

  it("answers an invalid remote blueprint as an invalid template naming the problem", async () => {
    const { ctx } = servicesFor(`${origin}/good`);
    // Listed, but its files are missing on the server: the error says the files could not be fetched.
    const meta = [
      ...remoteMeta,
      { id: "no-files", name: "No files", version: "1", description: "", logo: "", links: {}, tags: [] },
    ];
    const local = createServer((request, response) => {
      if (request.url === "/meta.json") return response.writeHead(200).end(JSON.stringify(meta));
      response.writeHead(404).end();
    });
    await new Promise<void>((resolve) => local.listen(0, "127.0.0.1", resolve));
    try {
      const base = `http://127.0.0.1:${(local.address() as AddressInfo).port}`;
      const error = await renderTemplate(ctx, "no-files", { generateHost, baseUrl: base }).catch(
        (caught) => caught,
      );
      expect(error).toBeInstanceOf(InvalidTemplateError);
      expect(error.message).toMatch(/no-files is invalid: its files could not be fetched .*HTTP 404/);
    } finally {
      local.closeAllConnections();
      await new Promise((resolve) => local.close(resolve));
    }
  });
});
