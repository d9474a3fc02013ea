/**
 * The one place the control plane parses and converts compose files: every caller goes through
 * parseComposeFile and convertCompose here. Their interface is @platform/compose-config's (built
 * beside this issue); until that package is merged, this module implements the part of it the
 * stacks need (YAML, `${VAR}` interpolation, ownership labels, the platform network and its
 * upstream names, domains naming a service of the file) and is replaced by a re-export of it.
 */
import { parse, stringify } from "yaml";

export interface ComposeIssue {
  path: string;
  message: string;
}

/** An invalid compose file, or one the platform refuses: each issue names where. */
export class ComposeFileError extends Error {
  constructor(readonly issues: ComposeIssue[]) {
    super(issues.map((issue) => `${issue.path}: ${issue.message}`).join("; "));
    this.name = "ComposeFileError";
  }
}

export interface ConvertComposeInput {
  composeFile: string;
  composeType: "docker-compose" | "stack";
  appName: string;
  labels: Record<string, string>;
  env: Record<string, string>;
  domains: { host: string; serviceName: string; port: number; path?: string | null }[];
  platformNetwork: string;
  tenant: null | {
    isOwnedNetwork(name: string): boolean;
    isOwnedVolume(name: string): boolean;
    refusePublishedPort(port: number, protocol: "tcp" | "udp"): string | undefined;
  };
  filesDirectory: string;
}

export interface ConvertedCompose {
  document: Record<string, unknown>;
  yaml: string;
  services: string[];
  upstreams: Record<string, string>;
}

type Dict = Record<string, unknown>;
const isDict = (value: unknown): value is Dict =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** Parses the file: YAML whose `services` is a map of service objects. */
export function parseComposeFile(text: string): Dict {
  let document: unknown;
  try {
    document = parse(text);
  } catch (error) {
    throw new ComposeFileError([{ path: "composeFile", message: (error as Error).message.split("\n")[0]! }]);
  }
  if (!isDict(document))
    throw new ComposeFileError([{ path: "composeFile", message: "must be a YAML mapping" }]);
  const services = document.services;
  if (!isDict(services) || Object.keys(services).length === 0) {
    throw new ComposeFileError([
      { path: "services", message: "must map at least one service name to its definition" },
    ]);
  }
  const issues: ComposeIssue[] = [];
  for (const [name, service] of Object.entries(services)) {
    if (!/^[a-zA-Z0-9._-]+$/.test(name))
      issues.push({ path: `services.${name}`, message: "is not a valid service name" });
    if (!isDict(service)) issues.push({ path: `services.${name}`, message: "must be a mapping" });
    else if (typeof service.image !== "string" && service.build === undefined)
      issues.push({ path: `services.${name}.image`, message: "is required (or build)" });
  }
  if (issues.length > 0) throw new ComposeFileError(issues);
  return document;
}

/** `${VAR}`, `${VAR:-default}`, `${VAR-default}` and `$VAR` as Compose interpolates them; `$$` is `$`. */
function interpolate(text: string, env: Record<string, string>): string {
  return text.replace(
    /\$(\$|\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?-)([^}]*))?\}|([A-Za-z_][A-Za-z0-9_]*))/g,
    (_match, escaped: string, braced?: string, operator?: string, fallback?: string, bare?: string) => {
      if (escaped === "$") return "$";
      const name = (braced ?? bare) as string;
      const value = env[name];
      if (operator === ":-") return value ? value : (fallback ?? "");
      if (operator === "-") return value ?? fallback ?? "";
      return value ?? "";
    },
  );
}

function withLabels(existing: unknown, labels: Record<string, string>): Record<string, string> {
  const base: Record<string, string> = {};
  if (Array.isArray(existing)) {
    for (const entry of existing) {
      const [key, ...rest] = String(entry).split("=");
      base[key!] = rest.join("=");
    }
  } else if (isDict(existing)) {
    for (const [key, value] of Object.entries(existing)) base[key] = String(value ?? "");
  }
  return { ...base, ...labels };
}

/** The file as it will be deployed: the user's file with the platform's additions. */
export function convertCompose(input: ConvertComposeInput): ConvertedCompose {
  const document = parseComposeFile(interpolate(input.composeFile, input.env));
  const services = document.services as Record<string, Dict>;
  const names = Object.keys(services);
  const issues: ComposeIssue[] = [];
  input.domains.forEach((domain, index) => {
    if (!names.includes(domain.serviceName))
      issues.push({
        path: `domains.${index}.serviceName`,
        message: `${domain.serviceName} is not a service of the file`,
      });
  });
  if (issues.length > 0) throw new ComposeFileError(issues);

  const stack = input.composeType === "stack";
  const routed = new Set(input.domains.map((domain) => domain.serviceName));
  const upstreams: Record<string, string> = {};
  for (const name of names) {
    const service = services[name]!;
    service.labels = withLabels(service.labels, input.labels);
    if (stack) {
      const deploy = isDict(service.deploy) ? service.deploy : {};
      deploy.labels = withLabels(deploy.labels, input.labels);
      service.deploy = deploy;
    }
    const alias = `${input.appName}-${name}`;
    upstreams[name] = stack ? `${input.appName}_${name}` : alias;
    if (!routed.has(name)) continue;
    const attach = stack ? {} : { aliases: [alias] };
    if (Array.isArray(service.networks)) {
      service.networks = Object.fromEntries([
        ...service.networks.map((network) => [String(network), null]),
        [input.platformNetwork, attach],
      ]);
    } else if (isDict(service.networks)) {
      service.networks[input.platformNetwork] = attach;
    } else {
      service.networks = { default: null, [input.platformNetwork]: attach };
    }
  }
  const networks = isDict(document.networks) ? document.networks : {};
  for (const [name, network] of Object.entries(networks)) {
    if (isDict(network) && network.external) continue;
    networks[name] = {
      ...(isDict(network) ? network : {}),
      labels: withLabels(isDict(network) ? network.labels : undefined, input.labels),
    };
  }
  networks.default = {
    ...(isDict(networks.default) ? networks.default : {}),
    labels: withLabels(isDict(networks.default) ? networks.default.labels : undefined, input.labels),
  };
  if (routed.size > 0) networks[input.platformNetwork] = { external: true, name: input.platformNetwork };
  document.networks = networks;
  if (isDict(document.volumes)) {
    for (const [name, volume] of Object.entries(document.volumes)) {
      if (isDict(volume) && volume.external) continue;
      document.volumes[name] = {
        ...(isDict(volume) ? volume : {}),
        labels: withLabels(isDict(volume) ? volume.labels : undefined, input.labels),
      };
    }
  }
  if (stack) document.version = "3.8";
  else delete document.version;
  const ordered = stack ? { version: document.version, ...document } : document;
  return { document: ordered, yaml: stringify(ordered), services: names, upstreams };
}
