/**
 * Renders one blueprint of Dokploy's catalogue format: `template.toml` (parsed with smol-toml)
 * gives `[variables]` and `[config]` (`domains`, `env` as a list or a table, `mounts`), whose
 * strings may call the helpers of helpers.ts and name variables (`${main_domain}`), variables
 * naming variables at any depth (a cycle is an error). `docker-compose.yml` is not templated
 * (Compose interpolates it from the env at deploy time); only its `image:` values change, by the
 * operator's PLATFORM_TEMPLATE_IMAGES.
 *
 * What is unknown is an error naming it: a `${name}` that is neither a variable nor a helper in
 * the variables, the domains or the env (where a name the env itself defines, or Compose's
 * `${NAME:-default}` forms, are left for Compose). Mount contents are files of the application
 * (shell scripts, configuration with its own `${…}`), so only variables and helpers are replaced
 * there and the rest is kept as written.
 */
import path from "node:path";
import { parse as parseToml } from "smol-toml";
import { isMap, isScalar, parseDocument } from "yaml";
import { callHelper, type HelperContext, isHelper, TemplateHelperError } from "./helpers.ts";
import { type ImageOverrides, overrideImage } from "./images.ts";

export interface RenderedDomain {
  host: string;
  port: number;
  serviceName: string;
  path?: string;
}

export interface RenderedTemplate {
  composeFile: string;
  /** `KEY=VALUE` lines for the stack's env. */
  envs: string[];
  domains: RenderedDomain[];
  /** Files the compose file mounts, `filePath` relative to the stack's directory, normalized. */
  mounts: { filePath: string; content: string }[];
}

export interface RenderOptions {
  /** The host the caller chose for the template's (first) domain; generated ones otherwise. */
  domainHost?: string;
  /** A fresh host for a domain of `serviceName` (for example `<app>-<hash>.<wildcard>`). */
  generateHost: (serviceName: string) => string;
  imageOverrides?: ImageOverrides;
  now?: () => number;
}

/** The template's files are not a template this platform can render; the message says why. */
export class InvalidTemplateError extends Error {
  constructor(
    readonly templateId: string,
    problem: string,
  ) {
    super(`Template ${templateId} is invalid: ${problem}`);
    this.name = "InvalidTemplateError";
  }
}

const EXPRESSION = /\$\{([^}]+)\}/g;
/** Compose's own interpolation forms: `${NAME:-x}`, `${NAME-x}`, `${NAME:?x}`, `${NAME:+x}`... */
const COMPOSE_FORM = /^[A-Za-z_][A-Za-z0-9_]*(:?[-?+].*)?$/s;
const ENV_KEY = /^[A-Za-z_][A-Za-z0-9_.-]*$/;
const HOST = /^(?=.{1,253}$)([a-z0-9*]([a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/i;

type Scalar = string | number | boolean;

interface TemplateToml {
  variables: Record<string, Scalar>;
  domains: { serviceName: string; port: number; host?: string; path?: string }[];
  env: [string, Scalar | undefined][];
  mounts: { filePath: string; content: string }[];
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value) && !(value instanceof Date);
const isScalarValue = (value: unknown): value is Scalar =>
  typeof value === "string" || typeof value === "number" || typeof value === "boolean";

/** template.toml's shape, checked (a wrong one throws a plain Error with what is wrong). */
function readToml(text: string): TemplateToml {
  let document: Record<string, unknown>;
  try {
    document = parseToml(text) as Record<string, unknown>;
  } catch (error) {
    throw new Error(`template.toml is not valid TOML: ${(error as Error).message.split("\n")[0]}`);
  }
  const variables = document.variables ?? {};
  if (!isRecord(variables)) throw new Error("[variables] must be a table");
  for (const [name, value] of Object.entries(variables)) {
    if (!isScalarValue(value)) throw new Error(`variables.${name} must be a string, number or boolean`);
  }
  const config = document.config ?? {};
  if (!isRecord(config)) throw new Error("[config] must be a table");
  const domains = config.domains ?? [];
  if (!Array.isArray(domains)) throw new Error("config.domains must be an array of tables");
  const checkedDomains = domains.map((domain, index) => {
    const where = `config.domains[${index}]`;
    if (!isRecord(domain)) throw new Error(`${where} must be a table`);
    if (typeof domain.serviceName !== "string" || domain.serviceName === "") {
      throw new Error(`${where}.serviceName must be a service of docker-compose.yml`);
    }
    const port = Number(domain.port);
    if (!Number.isInteger(port) || port < 1 || port > 65535) throw new Error(`${where}.port must be 1-65535`);
    for (const key of ["host", "path"] as const) {
      if (domain[key] !== undefined && typeof domain[key] !== "string")
        throw new Error(`${where}.${key} must be a string`);
    }
    return {
      serviceName: domain.serviceName,
      port,
      host: domain.host as string | undefined,
      path: domain.path as string | undefined,
    };
  });
  const env: [string, Scalar | undefined][] = [];
  const rawEnv = config.env ?? [];
  const addEnv = (key: string, value: Scalar | undefined, where: string) => {
    if (!ENV_KEY.test(key))
      throw new Error(`${where}: ${JSON.stringify(key)} is not an environment variable name`);
    env.push([key, value]);
  };
  if (Array.isArray(rawEnv)) {
    rawEnv.forEach((entry, index) => {
      const where = `config.env[${index}]`;
      if (typeof entry === "string") {
        // Blank lines and comments document the env in Dokploy's catalogue; they carry no variable.
        if (entry.trim() === "" || entry.trimStart().startsWith("#")) return;
        const equals = entry.indexOf("=");
        if (equals === -1) throw new Error(`${where} must be KEY=VALUE`);
        addEnv(entry.slice(0, equals), entry.slice(equals + 1), where);
      } else if (isRecord(entry)) {
        for (const [key, value] of Object.entries(entry)) {
          if (!isScalarValue(value)) throw new Error(`${where}.${key} must be a string, number or boolean`);
          addEnv(key, value, where);
        }
      } else throw new Error(`${where} must be a KEY=VALUE string or a table`);
    });
  } else if (isRecord(rawEnv)) {
    for (const [key, value] of Object.entries(rawEnv)) {
      if (!isScalarValue(value)) throw new Error(`config.env.${key} must be a string, number or boolean`);
      addEnv(key, value, "config.env");
    }
  } else throw new Error("config.env must be a list of KEY=VALUE or a table");
  const mounts = config.mounts ?? [];
  if (!Array.isArray(mounts)) throw new Error("config.mounts must be an array of tables");
  const checkedMounts = mounts.map((mount, index) => {
    if (!isRecord(mount) || typeof mount.filePath !== "string" || typeof mount.content !== "string") {
      throw new Error(`config.mounts[${index}] must have a string filePath and content`);
    }
    return { filePath: mount.filePath, content: mount.content };
  });
  return {
    variables: variables as Record<string, Scalar>,
    domains: checkedDomains,
    env,
    mounts: checkedMounts,
  };
}

/**
 * A mount's path inside the stack's files directory, normalized: `./a/b` and `/a/b` are both
 * `a/b` (Dokploy's catalogue writes both and means the files directory either way); `..`,
 * backslashes and NUL are refused, naming the path.
 */
export function checkMountPath(filePath: string): string {
  const problem = `the mount path ${JSON.stringify(filePath)} must stay inside the stack's files directory`;
  if (filePath.includes("\0") || filePath.includes("\\") || filePath.split("/").includes("..")) {
    throw new Error(problem);
  }
  const normalized = path.posix.normalize(filePath.replace(/^\/+/, ""));
  if (normalized === "." || normalized === "" || normalized.endsWith("/")) throw new Error(problem);
  return normalized;
}

/**
 * Names a stack's env provides whatever the template says (the compose stack adds them), which
 * the variables and the env may leave for Compose to interpolate.
 */
export const STACK_VARIABLES: readonly string[] = ["APP_NAME", "COMPOSE_PROJECT_NAME"];

/** The service names of a compose file and the file with the image overrides applied. */
function readCompose(
  text: string,
  overrides: ImageOverrides | undefined,
): { services: Set<string>; text: string } {
  const document = parseDocument(text);
  if (document.errors.length > 0) {
    throw new Error(`docker-compose.yml is not valid YAML: ${document.errors[0]!.message.split("\n")[0]}`);
  }
  const services = document.get("services");
  if (!isMap(services) || services.items.length === 0) {
    throw new Error("docker-compose.yml has no services");
  }
  const names = new Set<string>();
  let changed = false;
  for (const item of services.items) {
    const name = isScalar(item.key) ? String(item.key.value) : String(item.key);
    names.add(name);
    if (!isMap(item.value)) continue;
    const image = item.value.get("image", true);
    if (!isScalar(image) || typeof image.value !== "string") continue;
    const replaced = overrideImage(image.value, overrides);
    if (replaced !== image.value) {
      image.value = replaced;
      changed = true;
    }
  }
  return { services: names, text: changed ? document.toString() : text };
}

/** Renders a template's two files; throws InvalidTemplateError (or the helper's error, wrapped). */
export function renderTemplateFiles(
  templateId: string,
  files: { composeFile: string; templateToml: string },
  options: RenderOptions,
): RenderedTemplate {
  try {
    return render(files, options);
  } catch (error) {
    if (error instanceof InvalidTemplateError) throw error;
    throw new InvalidTemplateError(templateId, (error as Error).message);
  }
}

function render(
  files: { composeFile: string; templateToml: string },
  options: RenderOptions,
): RenderedTemplate {
  const template = readToml(files.templateToml);
  const compose = readCompose(files.composeFile, options.imageOverrides);
  for (const [index, domain] of template.domains.entries()) {
    if (!compose.services.has(domain.serviceName)) {
      throw new Error(
        `config.domains[${index}].serviceName ${JSON.stringify(domain.serviceName)} is not a service of docker-compose.yml`,
      );
    }
  }

  // The service a `${domain}` variable is for: the domain whose host names that variable.
  const serviceOfVariable = new Map<string, string>();
  for (const domain of template.domains) {
    for (const [, name] of (domain.host ?? "").matchAll(EXPRESSION)) {
      if (!serviceOfVariable.has(name!)) serviceOfVariable.set(name!, domain.serviceName);
    }
  }
  const fallbackService = template.domains[0]?.serviceName ?? [...compose.services][0]!;
  let givenHostUsed = false;
  const nextHost = (serviceName: string) => {
    if (!givenHostUsed && options.domainHost !== undefined) {
      givenHostUsed = true;
      return options.domainHost;
    }
    return options.generateHost(serviceName);
  };

  // Left for Compose: a variable of the env, one the stack provides, or Compose's own
  // default/required forms (`${NAME:-x}`); anything else unknown is an error naming it.
  const envKeys = new Set(template.env.map(([key]) => key));
  const leftForCompose = (where: string, what: string) => (match: string) => {
    const expression = match.slice(2, -1);
    const name = /^[A-Za-z_][A-Za-z0-9_]*/.exec(expression)?.[0];
    if (
      name !== undefined &&
      COMPOSE_FORM.test(expression) &&
      (envKeys.has(name) || STACK_VARIABLES.includes(name) || name !== expression)
    ) {
      return match;
    }
    throw new Error(`${where}: ${match} is ${what}`);
  };
  const resolved = new Map<string, string>();
  const resolving: string[] = [];
  const now = options.now ?? Date.now;
  const contextFor = (serviceName: string): HelperContext => ({
    nextHost: () => nextHost(serviceName),
    variable: (name) => (name in template.variables ? variable(name) : undefined),
    now,
  });
  const substitute = (
    text: string,
    where: string,
    serviceName: string,
    unknown: (expression: string) => string,
  ): string =>
    text.replace(EXPRESSION, (match, expression: string) => {
      if (Object.hasOwn(template.variables, expression)) return variable(expression);
      if (isHelper(expression)) {
        try {
          return callHelper(expression, contextFor(serviceName));
        } catch (error) {
          if (error instanceof TemplateHelperError) throw new Error(`${where}: ${error.message}`);
          throw error;
        }
      }
      return unknown(match);
    });
  function variable(name: string): string {
    const known = resolved.get(name);
    if (known !== undefined) return known;
    if (resolving.includes(name)) {
      throw new Error(`variables.${name} refers to itself (${[...resolving, name].join(" -> ")})`);
    }
    resolving.push(name);
    const value = substitute(
      String(template.variables[name]),
      `variables.${name}`,
      serviceOfVariable.get(name) ?? fallbackService,
      leftForCompose(`variables.${name}`, "neither a variable nor a helper"),
    );
    resolving.pop();
    resolved.set(name, value);
    return value;
  }
  for (const name of Object.keys(template.variables)) variable(name);

  const domains = template.domains.map((domain, index) => {
    const where = `config.domains[${index}]`;
    const strict = (field: string) => (match: string) => {
      throw new Error(`${where}.${field}: ${match} is neither a variable nor a helper`);
    };
    const host =
      domain.host === undefined
        ? nextHost(domain.serviceName)
        : substitute(domain.host, `${where}.host`, domain.serviceName, strict("host"));
    if (!HOST.test(host)) throw new Error(`${where}.host ${JSON.stringify(host)} is not a host name`);
    const rendered: RenderedDomain = {
      host: host.toLowerCase(),
      port: domain.port,
      serviceName: domain.serviceName,
    };
    if (domain.path !== undefined) {
      const domainPath = substitute(domain.path, `${where}.path`, domain.serviceName, strict("path"));
      if (!domainPath.startsWith("/") || /\s/.test(domainPath)) {
        throw new Error(`${where}.path ${JSON.stringify(domainPath)} must start with / and hold no spaces`);
      }
      rendered.path = domainPath;
    }
    return rendered;
  });

  const envs = template.env.map(([key, value]) => {
    if (typeof value !== "string") return `${key}=${value ?? ""}`;
    const rendered = substitute(
      value,
      `config.env.${key}`,
      fallbackService,
      leftForCompose(`config.env.${key}`, "neither a variable, a helper nor a variable of the env"),
    );
    if (rendered.includes("\n")) throw new Error(`config.env.${key} must be one line`);
    return `${key}=${rendered}`;
  });

  const mounts = template.mounts.map((mount, index) => {
    const where = `config.mounts[${index}]`;
    const filePath = checkMountPath(
      substitute(mount.filePath, `${where}.filePath`, fallbackService, (match) => {
        throw new Error(`${where}.filePath: ${match} is neither a variable nor a helper`);
      }),
    );
    const content = substitute(mount.content, `${where}.content`, fallbackService, (match) => match);
    return { filePath, content };
  });
  const paths = new Set<string>();
  for (const mount of mounts) {
    if (paths.has(mount.filePath)) throw new Error(`two mounts write ${mount.filePath}`);
    paths.add(mount.filePath);
  }

  return { composeFile: compose.text, envs, domains, mounts };
}
