/**
 * Rendering one blueprint (template.toml + docker-compose.yml): variables naming variables,
 * the env as a table or a list, domains and their hosts, mounts kept inside the stack's
 * directory, image overrides, and every error naming what is wrong.
 */
import { jwtVerify } from "jose";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { parseImageOverrides } from "./images.ts";
import { checkMountPath, InvalidTemplateError, type RenderOptions, renderTemplateFiles } from "./render.ts";

const COMPOSE = `services:
  web:
    image: ghcr.io/example/web:1.2.3
    environment:
      SECRET: \${SECRET}
  db:
    image: postgres:16-alpine
  cache:
    image: redis@sha256:${"a".repeat(64)}
`;

function hosts(): RenderOptions & { asked: string[] } {
  const asked: string[] = [];
  let count = 0;
  return {
    asked,
    generateHost: (service) => {
      asked.push(service);
      return `${service}-${++count}.apps.example.test`;
    },
  };
}
const render = (toml: string, options: Partial<RenderOptions> = {}, compose = COMPOSE) =>
  renderTemplateFiles("demo", { composeFile: compose, templateToml: toml }, { ...hosts(), ...options });

describe("renderTemplateFiles", () => {
  it("resolves variables naming variables at any depth, helpers inside them, and a JWT over them", async () => {
    const rendered = render(`
[variables]
url = "https://\${host}/app"
host = "\${main_domain}"
main_domain = "\${domain}"
secret = "\${password:40}"
payload = '{"role":"anon"}'
token = "\${jwt:secret:payload}"
number = 5432

[config.env]
URL = "\${url}"
SECRET = "\${secret}"
TOKEN = "\${token}"
PORT = "\${number}"
DEBUG = false
WORKERS = 4
`);
    const env = Object.fromEntries(
      rendered.envs.map((line) => [line.slice(0, line.indexOf("=")), line.slice(line.indexOf("=") + 1)]),
    );
    expect(env.URL).toBe("https://web-1.apps.example.test/app");
    expect(env.SECRET).toMatch(/^[A-Za-z0-9]{40}$/);
    const { payload } = await jwtVerify(env.TOKEN!, new TextEncoder().encode(env.SECRET));
    expect(payload.role).toBe("anon");
    expect(env).toMatchObject({ PORT: "5432", DEBUG: "false", WORKERS: "4" });
    // The same variable is one value wherever it is used.
    expect(rendered.envs.filter((line) => line.includes(env.SECRET!))).toHaveLength(1);
  });

  it("takes the env as a list of KEY=VALUE strings and tables, in order", () => {
    const rendered = render(`
[variables]
pw = "\${hash:12}"

[config]
env = ["A=\${pw}", { B = "b" }, "C=x=y", { D = 1 }]
`);
    expect(rendered.envs[0]).toMatch(/^A=[0-9a-f]{12}$/);
    expect(rendered.envs.slice(1)).toEqual(["B=b", "C=x=y", "D=1"]);
  });

  it("leaves Compose's own interpolation in the env, and refuses an unknown name", () => {
    const rendered = render(`
[config.env]
USER = "app"
URL = "postgres://\${USER}@db/\${DB_NAME:-app}"
REQUIRED = "\${TOKEN:?set TOKEN}"
`);
    expect(rendered.envs).toContain(`URL=postgres://\${USER}@db/\${DB_NAME:-app}`);
    expect(rendered.envs).toContain(`REQUIRED=\${TOKEN:?set TOKEN}`);
    expect(() => render(`[config.env]\nURL = "\${UNKNOWN}"`)).toThrow(
      /config\.env\.URL: \$\{UNKNOWN\} is neither a variable, a helper nor a variable of the env/,
    );
  });

  it("reads Dokploy's env lists with comments and blank lines, and leaves the stack's APP_NAME to Compose", () => {
    const rendered = render(`
[variables]
prefix = "\${APP_NAME}-supabase"
pw = "\${password:12}"

[config]
env = [
  '############',
  '# Secrets, generated',
  '',
  'CONTAINER_PREFIX=\${prefix}',
  'PASSWORD=\${pw}',
  'URL=http://\${COMPOSE_PROJECT_NAME}:\${PORT:-80}',
]
`);
    expect(rendered.envs).toHaveLength(3);
    expect(rendered.envs[0]).toBe(`CONTAINER_PREFIX=\${APP_NAME}-supabase`);
    expect(rendered.envs[1]).toMatch(/^PASSWORD=[A-Za-z0-9]{12}$/);
    expect(rendered.envs[2]).toBe(`URL=http://\${COMPOSE_PROJECT_NAME}:\${PORT:-80}`);
  });

  it("names an unknown variable or helper, and a cycle", () => {
    expect(() => render(`[variables]\na = "\${b}"`)).toThrow(
      /variables\.a: \$\{b\} is neither a variable nor a helper/,
    );
    expect(() => render(`[variables]\na = "\${password:x}"`)).toThrow(/variables\.a: .*password:x/);
    expect(() => render(`[variables]\na = "\${b}"\nb = "\${c}"\nc = "\${a}"`)).toThrow(
      /refers to itself \(a -> b -> c -> a\)/,
    );
    expect(() => render(`[[config.domains]]\nserviceName = "web"\nport = 80\nhost = "\${nope}"`)).toThrow(
      /config\.domains\[0\]\.host: \$\{nope\}/,
    );
    const error = (() => {
      try {
        render(`[variables]\na = "\${b}"`);
      } catch (caught) {
        return caught;
      }
    })();
    expect(error).toBeInstanceOf(InvalidTemplateError);
    expect((error as Error).message).toMatch(/^Template demo is invalid: /);
  });

  it("gives the caller's host to the first domain, generated hosts (by service) to the others", () => {
    const options = hosts();
    const rendered = render(
      `
[variables]
main = "\${domain}"
api = "\${domain}"

[[config.domains]]
serviceName = "web"
port = 3000
host = "\${main}"

[[config.domains]]
serviceName = "db"
port = 8080
host = "\${api}"
path = "/api"

[[config.domains]]
serviceName = "cache"
port = 9000
`,
      { ...options, domainHost: "Chosen.Example.com" },
    );
    expect(rendered.domains).toEqual([
      { serviceName: "web", port: 3000, host: "chosen.example.com" },
      { serviceName: "db", port: 8080, host: "db-1.apps.example.test", path: "/api" },
      { serviceName: "cache", port: 9000, host: "cache-2.apps.example.test" },
    ]);
    expect(options.asked).toEqual(["db", "cache"]);
  });

  it("refuses a domain of a service the compose file does not have, and bad ports, hosts and paths", () => {
    expect(() => render(`[[config.domains]]\nserviceName = "nope"\nport = 80`)).toThrow(
      /config\.domains\[0\]\.serviceName "nope" is not a service of docker-compose\.yml/,
    );
    expect(() => render(`[[config.domains]]\nserviceName = "web"\nport = 70000`)).toThrow(
      /port must be 1-65535/,
    );
    expect(() => render(`[[config.domains]]\nserviceName = "web"\nport = 80\nhost = "a b"`)).toThrow(
      /is not a host name/,
    );
    expect(() => render(`[[config.domains]]\nserviceName = "web"\nport = 80\npath = "api"`)).toThrow(
      /must start with \//,
    );
  });

  it(`writes mounts inside the stack's directory, replacing variables but keeping the file's own \${…}`, () => {
    const rendered = render(`
[variables]
pw = "\${password:8}"

[[config.mounts]]
filePath = "./config/app.ini"
content = """
password = \${pw}
home = \${HOME}
"""
`);
    expect(rendered.mounts).toHaveLength(1);
    expect(rendered.mounts[0]!.filePath).toBe("config/app.ini");
    expect(rendered.mounts[0]!.content).toMatch(/^password = [A-Za-z0-9]{8}\nhome = \$\{HOME\}\n$/);
    for (const bad of ["../outside", "a/../../b", "/../etc", "a\\\\b", "", ".", "/"]) {
      expect(() => render(`[[config.mounts]]\nfilePath = "${bad}"\ncontent = "x"`), bad).toThrow(
        /must stay inside the stack's files directory/,
      );
    }
    // Dokploy's catalogue writes `/volumes/api/kong.yml` for the files directory's volumes/api/kong.yml.
    expect(checkMountPath("/volumes/api/kong.yml")).toBe("volumes/api/kong.yml");
    expect(() =>
      render(
        `[[config.mounts]]\nfilePath = "a"\ncontent = "x"\n[[config.mounts]]\nfilePath = "./a"\ncontent = "y"`,
      ),
    ).toThrow(/two mounts write a/);
    expect(checkMountPath("a/./b/c.txt")).toBe("a/b/c.txt");
  });

  it("applies PLATFORM_TEMPLATE_IMAGES to the images and keeps the rest of the file", () => {
    const parsed = parseImageOverrides(
      "ghcr.io/example/web:1.2.3=registry.local/web:test,docker.io/library/postgres=registry.local/postgres,redis=registry.local/redis",
    );
    if (!("overrides" in parsed)) throw new Error(parsed.problem);
    const rendered = render("", { imageOverrides: parsed.overrides });
    const compose = parse(rendered.composeFile);
    expect(compose.services.web.image).toBe("registry.local/web:test");
    expect(compose.services.db.image).toBe("registry.local/postgres:16-alpine");
    expect(compose.services.cache.image).toBe(`registry.local/redis@sha256:${"a".repeat(64)}`);
    expect(compose.services.web.environment).toEqual({ SECRET: `\${SECRET}` });
    // Without overrides the file is returned as written, byte for byte.
    expect(render("").composeFile).toBe(COMPOSE);
  });

  it("refuses files that are not a template", () => {
    expect(() => render("[variables\n")).toThrow(/template\.toml is not valid TOML/);
    expect(() => render("", {}, "services: [")).toThrow(/docker-compose\.yml is not valid YAML/);
    expect(() => render("", {}, "version: '3'\n")).toThrow(/has no services/);
    expect(() => render(`[config]\nenv = ["NOEQUALS"]`)).toThrow(/config\.env\[0\] must be KEY=VALUE/);
    expect(() => render(`[config.env]\n"BAD KEY" = "x"`)).toThrow(/not an environment variable name/);
    expect(() => render(`[config.env]\nA = "\${password}\\nB=1"`)).toThrow(/config\.env\.A must be one line/);
    expect(() => render(`[variables]\na = [1]`)).toThrow(/variables\.a must be a string/);
  });
});
