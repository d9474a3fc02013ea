/**
 * Every template of the built-in catalogue (apps/control-plane/templates): meta.json and the
 * blueprint directories match, template.toml parses, docker-compose.yml passes the Compose
 * schema before and after the env is interpolated, every `${…}` resolves (only Compose's own
 * interpolation of names the env defines remains), domains name services of the file, mounts
 * stay inside the stack's directory, and two renders share no secret.
 */
import { execFile } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { convertCompose } from "@platform/compose-config";
import { Ajv } from "ajv";
import pino from "pino";
import { parse as parseToml } from "smol-toml";
import { describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import { EMPTY_ALLOW_LIST } from "../outbound/guard.ts";
import {
  builtInTemplates,
  listTemplates,
  renderTemplate,
  type TemplateContext,
  TemplateNotFoundError,
} from "./catalogue.ts";

const root = fileURLToPath(new URL("../../../../", import.meta.url));
const catalogue = path.join(root, "apps/control-plane/templates");
const ctx: TemplateContext = {
  config: { outboundAllow: EMPTY_ALLOW_LIST, port: 3000 },
  logger: pino({ level: "silent" }),
};

function composeValidator() {
  const schema = JSON.parse(
    readFileSync(path.join(root, "packages/compose-config/schemas/compose-spec.json"), "utf8"),
  );
  // It names draft-07 by an https URL ajv does not know by that spelling; ajv's default is draft-07.
  delete schema.$schema;
  return new Ajv({ allErrors: true, strict: false, validateFormats: false }).compile(schema);
}
const validate = composeValidator();
const run = promisify(execFile);

function expectValidCompose(text: string, where: string) {
  const document = parseYaml(text);
  const valid = validate(document);
  expect(
    valid ? [] : validate.errors!.map((error) => `${error.instancePath} ${error.message}`),
    where,
  ).toEqual([]);
  return document;
}

/** Compose's interpolation of `${NAME}` / `${NAME:-x}` from `env` (`$$` is a literal `$`). */
function interpolate(text: string, env: Map<string, string>, where: string): string {
  return text.replace(/\$\$|\$\{([^}]+)\}/g, (match, expression: string | undefined) => {
    if (expression === undefined) return match;
    const [, name, operator, fallback] =
      /^([A-Za-z_][A-Za-z0-9_]*)(?:(:?[-?+])(.*))?$/s.exec(expression) ?? [];
    if (name === undefined) throw new Error(`${where}: ${match} is not Compose interpolation`);
    const value = env.get(name);
    if (value !== undefined) return value;
    if (operator?.endsWith("-")) return fallback!;
    throw new Error(`${where}: ${match} names ${name}, which the template's env does not define`);
  });
}

const generateHost = (service: string) =>
  `${service}-${Math.random().toString(16).slice(2, 8)}.apps.example.test`;
const templates = builtInTemplates();

describe("the built-in catalogue", () => {
  it("lists at least 25 applications, one blueprint directory each, with our own logo", () => {
    expect(templates.length).toBeGreaterThanOrEqual(25);
    const ids = templates.map((template) => template.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(readdirSync(path.join(catalogue, "blueprints")).sort()).toEqual([...ids].sort());
    for (const template of templates) {
      expect(template.id).toMatch(/^[a-z0-9][a-z0-9-]*$/);
      expect(template.name, template.id).not.toBe("");
      expect(template.description.length, template.id).toBeGreaterThan(20);
      expect(template.version, template.id).not.toBe("");
      expect(template.tags.length, template.id).toBeGreaterThan(0);
      expect(template.logo, template.id).toMatch(/^data:image\/svg\+xml;base64,/);
      expect(Buffer.from(template.logo.split(",")[1]!, "base64").toString()).toMatch(/^<svg /);
      expect(Object.values(template.links).length, template.id).toBeGreaterThan(0);
    }
  });

  it("answers compose.templates' list without a remote catalogue, and not-found for an unknown id", async () => {
    expect(await listTemplates(ctx)).toEqual(templates);
    await expect(renderTemplate(ctx, "no-such-template", { generateHost })).rejects.toThrow(
      TemplateNotFoundError,
    );
    await expect(renderTemplate(ctx, "../gitea", { generateHost })).rejects.toThrow(TemplateNotFoundError);
  });

  describe.each(templates.map((template) => [template.id]))("%s", (id) => {
    const directory = path.join(catalogue, "blueprints", id);
    const composeText = readFileSync(path.join(directory, "docker-compose.yml"), "utf8");

    it("parses, passes the Compose schema and resolves every variable", async () => {
      const toml = parseToml(readFileSync(path.join(directory, "template.toml"), "utf8"));
      expect(toml).toBeTypeOf("object");
      const compose = expectValidCompose(composeText, `${id}/docker-compose.yml`);
      const serviceNames = Object.keys(compose.services);

      const rendered = await renderTemplate(ctx, id, { generateHost });
      expect(rendered.composeFile).toBe(composeText);
      const env = new Map(
        rendered.envs.map((line) => [line.slice(0, line.indexOf("=")), line.slice(line.indexOf("=") + 1)]),
      );
      expect(env.size, "env keys are unique").toBe(rendered.envs.length);
      for (const [key, value] of env) {
        // Only Compose's interpolation of names this env defines is left.
        interpolate(value, env, `env ${key}`);
        expect(value, `env ${key}`).not.toMatch(
          /\$\{(domain|password|base64|hash|uuid|jwt|randomPort|email|username|timestamp)/,
        );
      }
      // Every variable of the env is used by the compose file (no typo leaves one unused).
      for (const key of env.keys()) expect(composeText, key).toContain(`\${${key}}`);
      // Every ${NAME} of the compose file is defined by the env (or has a default), and the file
      // stays valid once interpolated.
      expectValidCompose(interpolate(composeText, env, `${id}/docker-compose.yml`), `${id} interpolated`);

      expect(rendered.domains.length, "a template is reachable through a domain").toBeGreaterThan(0);
      for (const domain of rendered.domains) {
        expect(serviceNames).toContain(domain.serviceName);
        expect(domain.host).toMatch(/^[a-z0-9.-]+$/);
        expect(domain.port).toBeGreaterThan(0);
      }
      for (const mount of rendered.mounts) {
        expect(path.posix.isAbsolute(mount.filePath)).toBe(false);
        expect(mount.filePath.split("/")).not.toContain("..");
        // The compose file mounts it from the stack's files directory, beside its own (Dokploy's layout).
        expect(composeText).toContain(`../files/${mount.filePath}:`);
      }
    });

    it("converts for a tenant: no rule of the tenant allowlist refuses it", async () => {
      const rendered = await renderTemplate(ctx, id, { generateHost });
      const env = Object.fromEntries(
        rendered.envs.map((line) => [line.slice(0, line.indexOf("=")), line.slice(line.indexOf("=") + 1)]),
      );
      // What compose.deployTemplate converts for an organization other than the instance's.
      const converted = convertCompose({
        composeFile: rendered.composeFile,
        composeType: "docker-compose",
        appName: `tenant-${id.toLowerCase().replace(/[^a-z0-9-]/g, "-")}`.slice(0, 60),
        labels: { "platform.organization": "org_tenant" },
        env,
        domains: rendered.domains,
        platformNetwork: "platform-network",
        tenant: {
          isOwnedNetwork: () => false,
          isOwnedVolume: () => false,
          refusePublishedPort: () => undefined,
        },
        filesDirectory: "/stack/files",
      });
      expect(converted.services.length).toBeGreaterThan(0);
    });

    it("is accepted by docker stack deploy's own loader with the rendered env, images overridden", async () => {
      const rendered = await renderTemplate(
        {
          ...ctx,
          config: {
            ...ctx.config,
            templateImages: new Map([["postgres", "platform-test/db-postgres"]]),
          },
        },
        id,
        { generateHost },
      );
      const env = Object.fromEntries(
        rendered.envs.map((line) => [line.slice(0, line.indexOf("=")), line.slice(line.indexOf("=") + 1)]),
      );
      const file = path.join(await mkdtemp(path.join(tmpdir(), `template-${id}-`)), "docker-compose.yml");
      await writeFile(file, rendered.composeFile);
      const { stdout, stderr } = await run("docker", ["stack", "config", "--compose-file", file], {
        env: { PATH: process.env.PATH, ...env },
      });
      await rm(path.dirname(file), { recursive: true });
      expect(stderr).toBe("");
      // Every value of the env reached the file (the loader interpolated it).
      for (const [key, value] of Object.entries(env)) expect(stdout, key).toContain(value);
      const converted = parseYaml(stdout);
      expect(Object.keys(converted.services).sort()).toEqual(
        Object.keys(parseYaml(composeText).services).sort(),
      );
      for (const service of Object.values<{ image: string }>(converted.services)) {
        expect(service.image).not.toMatch(/^postgres:/);
      }
    });

    it("generates new secrets at each render and hosts per service", async () => {
      const first = await renderTemplate(ctx, id, { generateHost, domainHost: `${id}.example.com` });
      const second = await renderTemplate(ctx, id, { generateHost });
      expect(first.domains[0]!.host).toBe(`${id}.example.com`);
      const secrets = (envs: string[]) =>
        envs
          .map((line) => line.slice(line.indexOf("=") + 1))
          .filter((value) => /[A-Za-z0-9+/]{16,}/.test(value) && !value.includes("."));
      for (const secret of secrets(first.envs)) expect(second.envs.join("\n")).not.toContain(secret);
    });
  });
});
