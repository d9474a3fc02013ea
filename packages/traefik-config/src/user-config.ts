/**
 * What a tenant may write as an application's own Traefik file (application.updateTraefikConfig
 * by anyone but the instance administrator). Proxies are shared, so the file may only route the
 * application's own hosts to the application's own Swarm service:
 * - only `http` routers, services and middlewares (no tcp/udp, no tls section, no
 *   serversTransports: those name files on the proxy's host or reach other addresses);
 * - a router's rule, read as Traefik reads it (rule-parser.ts), is a conjunction with a Host(...)
 *   of the application's own hosts (no catch-all, no HostRegexp/HostSNI), on the web/websecure
 *   entry points, with a priority below the platform's routers (priorities.ts), naming only
 *   services and middlewares of the same file;
 * - a service is a load balancer over `http(s)://<appName>[:port]` URLs only;
 * - middlewares come from a list without file paths, outbound calls or plugins;
 * - every name carries the appName, so no other application's router, service or middleware is
 *   shadowed.
 * A pure function over the parsed (schema-checked) configuration: every problem is a ConfigIssue
 * naming the key path.
 *
 * @example
 * userConfigIssues(parsed.config, { appName: "shop-x1", hosts: ["shop.example.com"] }) // []
 */
import type { ConfigIssue } from "./errors.ts";
import { implicitRulePriority, MAX_USER_ROUTER_PRIORITY } from "./priorities.ts";
import { HTTP_MATCHER_ARITY, parseTraefikRule, type RuleNode, RuleSyntaxError } from "./rule-parser.ts";

/** Whose names a tenant's references and definitions must be (an application's namespace). */
export interface NamespaceScope {
  /** The application's Swarm service name, the only upstream its file may name. */
  appName: string;
  /**
   * Other applications' names that start with `<appName>-`: their objects' names would also
   * start with it, and Traefik keeps the first definition of a name, so they are refused.
   */
  longerAppNames?: readonly string[];
}

export interface UserConfigScope extends NamespaceScope {
  /** The application's hosts as stored (lower case, punycode); `*.x` allows one label under x. */
  hosts: readonly string[];
}

/** Prefixes of the middlewares the platform generates for an application (`auth-<appName>`…). */
const GENERATED_MIDDLEWARE_PREFIXES = ["auth-", "redirect-to-https-", "stripprefix-", "addprefix-"];

const ENTRY_POINTS = new Set(["web", "websecure"]);
const ROUTER_KEYS = new Set([
  "entryPoints",
  "rule",
  "ruleSyntax",
  "priority",
  "service",
  "middlewares",
  "tls",
]);
const LOAD_BALANCER_KEYS = new Set([
  "servers",
  "passHostHeader",
  "sticky",
  "healthCheck",
  "responseForwarding",
]);
/** Middlewares without file paths (usersFile is checked apart), outbound calls or plugins. */
const MIDDLEWARE_TYPES = new Set([
  "addPrefix",
  "stripPrefix",
  "stripPrefixRegex",
  "replacePath",
  "replacePathRegex",
  "headers",
  "redirectRegex",
  "redirectScheme",
  "basicAuth",
  "digestAuth",
  "compress",
  "rateLimit",
  "inFlightReq",
  "ipAllowList",
  "retry",
  "buffering",
  "chain",
  "circuitBreaker",
  "contentType",
  "grpcWeb",
]);
/** Rule matchers that do not name a host. */
const NON_HOST_MATCHERS = new Set([
  "Path",
  "PathPrefix",
  "PathRegexp",
  "Method",
  "Header",
  "HeaderRegexp",
  "Query",
  "QueryRegexp",
  "ClientIP",
]);

type Issue = (path: string, message: string) => void;
const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** The problems of a tenant's dynamic configuration for one application; [] when it may be written. */
export function userConfigIssues(config: Record<string, unknown>, scope: UserConfigScope): ConfigIssue[] {
  const issues: ConfigIssue[] = [];
  const issue: Issue = (path, message) => issues.push({ path, message });
  for (const key of Object.keys(config)) {
    if (key !== "http")
      issue(key, "is not allowed: an application's file holds http routers, services and middlewares only");
  }
  const http = isObject(config.http) ? config.http : {};
  for (const key of Object.keys(http)) {
    if (!["routers", "services", "middlewares"].includes(key))
      issue(`http.${key}`, "is not allowed in an application's file");
  }
  const routers = isObject(http.routers) ? http.routers : {};
  const services = isObject(http.services) ? http.services : {};
  const middlewares = isObject(http.middlewares) ? http.middlewares : {};
  const ownName = (path: string, name: string, kind: NameKind) => {
    const problem = namespaceProblem(name, kind, scope);
    if (problem) issue(path, problem);
  };

  for (const [name, router] of Object.entries(routers)) {
    const path = `http.routers.${name}`;
    ownName(path, name, "router");
    if (isObject(router)) checkRouter(path, router, scope, services, middlewares, issue);
  }
  for (const [name, service] of Object.entries(services)) {
    const path = `http.services.${name}`;
    ownName(path, name, "service");
    if (isObject(service)) checkService(path, service, scope, issue);
  }
  for (const [name, middleware] of Object.entries(middlewares)) {
    const path = `http.middlewares.${name}`;
    ownName(path, name, "middleware");
    if (isObject(middleware)) checkMiddleware(path, middleware, middlewares, scope, issue);
  }
  return issues;
}

/**
 * The names an application owns in the proxy's namespace of one kind: its appName and
 * `<appName>-…`; a middleware named with a generated prefix (`auth-<appName>`,
 * `stripprefix-<appName>-<key>`…) belongs to the application named after the prefix.
 */
type NameKind = "router" | "service" | "middleware";

function inNamespaceOf(name: string, appName: string, kind: NameKind): boolean {
  const owned = (base: string) => base === appName || base.startsWith(`${appName}-`);
  const prefix =
    kind === "middleware"
      ? GENERATED_MIDDLEWARE_PREFIXES.find((candidate) => name.startsWith(candidate))
      : undefined;
  return prefix ? owned(name.slice(prefix.length)) : owned(name);
}

/** Why `name` is not the application's to define or reference in the proxy's namespace, or null. */
function namespaceProblem(name: string, kind: NameKind, scope: NamespaceScope): string | null {
  const foreign = ["platform", ...(scope.longerAppNames ?? [])].find((other) =>
    inNamespaceOf(name, other, kind),
  );
  if (foreign) return `belongs to ${foreign === "platform" ? "the platform" : `the application ${foreign}`}`;
  return inNamespaceOf(name, scope.appName, kind)
    ? null
    : `must be ${scope.appName}, start with ${scope.appName}- or be one of its generated middlewares (auth-${scope.appName}…)`;
}

/**
 * Why a tenant may not attach this middleware to its application's routers, or null: only a
 * middleware of the application's own namespace, with no `@provider` (`x@docker`, `x@file`,
 * `x@internal` name objects every tenant of the proxy shares). One rule for the routers of
 * application.updateTraefikConfig's files and for domain.middlewares.
 */
export function userMiddlewareReferenceProblem(name: string, scope: NamespaceScope): string | null {
  if (name.includes("@")) return "must name a middleware of the application (no @provider references)";
  return namespaceProblem(name, "middleware", scope);
}

/**
 * Why a tenant's router may not listen on this entry point, or null: web and websecure only
 * (others, such as the dashboard's `traefik`, are the instance's). One rule for
 * application.updateTraefikConfig's files and for domain.customEntrypoint.
 */
export function userEntryPointProblem(entryPoint: unknown): string | null {
  return typeof entryPoint === "string" && ENTRY_POINTS.has(entryPoint) ? null : "must be web or websecure";
}

/** A reference to an object of this file: no `@provider` suffix, and defined here. */
function checkReference(
  path: string,
  reference: unknown,
  defined: Record<string, unknown>,
  what: string,
  issue: Issue,
) {
  if (typeof reference !== "string" || reference.includes("@") || !Object.hasOwn(defined, reference)) {
    issue(path, `must name a ${what} defined in this file (no @provider references)`);
  }
}

function checkMiddlewareReferences(
  path: string,
  names: unknown[],
  middlewares: Record<string, unknown>,
  scope: NamespaceScope,
  issue: Issue,
) {
  for (const [index, name] of names.entries()) {
    const problem = typeof name === "string" ? userMiddlewareReferenceProblem(name, scope) : null;
    if (problem) issue(`${path}.${index}`, problem);
    else checkReference(`${path}.${index}`, name, middlewares, "middleware", issue);
  }
}

function checkRouter(
  path: string,
  router: Record<string, unknown>,
  scope: UserConfigScope,
  services: Record<string, unknown>,
  middlewares: Record<string, unknown>,
  issue: Issue,
) {
  for (const key of Object.keys(router)) {
    if (!ROUTER_KEYS.has(key)) issue(`${path}.${key}`, "is not allowed in an application's router");
  }
  const entryPoints = router.entryPoints;
  if (!Array.isArray(entryPoints) || entryPoints.length === 0) {
    issue(`${path}.entryPoints`, "must list web and/or websecure");
  } else {
    entryPoints.forEach((entryPoint, index) => {
      const problem = userEntryPointProblem(entryPoint);
      if (problem) issue(`${path}.entryPoints.${index}`, problem);
    });
  }
  if (router.priority !== undefined) {
    const priority = router.priority;
    if (
      typeof priority !== "number" ||
      !Number.isInteger(priority) ||
      priority < 0 ||
      priority > MAX_USER_ROUTER_PRIORITY
    ) {
      issue(
        `${path}.priority`,
        `must be an integer from 0 to ${MAX_USER_ROUTER_PRIORITY} (higher priorities are the platform's routers)`,
      );
    }
  }
  if (router.ruleSyntax !== undefined && router.ruleSyntax !== "v3")
    issue(`${path}.ruleSyntax`, "must be v3");
  const ruleProblem =
    typeof router.rule === "string" ? userRuleProblem(router.rule, scope.hosts) : "is required";
  if (ruleProblem) issue(`${path}.rule`, ruleProblem);
  checkReference(`${path}.service`, router.service, services, "service", issue);
  if (router.middlewares !== undefined) {
    if (!Array.isArray(router.middlewares)) issue(`${path}.middlewares`, "must be a list");
    else checkMiddlewareReferences(`${path}.middlewares`, router.middlewares, middlewares, scope, issue);
  }
  if (router.tls !== undefined) {
    if (!isObject(router.tls)) return;
    for (const [key, value] of Object.entries(router.tls)) {
      if (key === "certResolver") continue;
      if (key === "domains" && Array.isArray(value)) {
        value.forEach((entry, index) => {
          const names = isObject(entry)
            ? [entry.main, ...(Array.isArray(entry.sans) ? entry.sans : [])]
            : [entry];
          for (const name of names) {
            if (
              name !== undefined &&
              (typeof name !== "string" || !hostAllowed(name.toLowerCase(), scope.hosts, true))
            ) {
              issue(`${path}.tls.domains.${index}`, "must name the application's own hosts");
            }
          }
        });
        continue;
      }
      issue(
        `${path}.tls.${key}`,
        "is not allowed (tls holds certResolver and the application's own domains only)",
      );
    }
  }
}

function checkService(path: string, service: Record<string, unknown>, scope: UserConfigScope, issue: Issue) {
  for (const key of Object.keys(service)) {
    if (key !== "loadBalancer")
      issue(
        `${path}.${key}`,
        "is not allowed: a service is a loadBalancer over the application's own service",
      );
  }
  const loadBalancer = service.loadBalancer;
  if (!isObject(loadBalancer)) return;
  for (const key of Object.keys(loadBalancer)) {
    if (!LOAD_BALANCER_KEYS.has(key))
      issue(`${path}.loadBalancer.${key}`, "is not allowed in an application's service");
  }
  const servers = Array.isArray(loadBalancer.servers) ? loadBalancer.servers : [];
  if (servers.length === 0) issue(`${path}.loadBalancer.servers`, "must list the application's own service");
  servers.forEach((server, index) => {
    const serverPath = `${path}.loadBalancer.servers.${index}`;
    if (!isObject(server)) return;
    for (const key of Object.keys(server)) {
      if (key !== "url" && key !== "weight") issue(`${serverPath}.${key}`, "is not allowed");
    }
    if (!serviceUrlAllowed(server.url, scope.appName)) {
      issue(`${serverPath}.url`, `must be http://${scope.appName}:<port> (the application's own service)`);
    }
  });
  if (isObject(loadBalancer.healthCheck)) {
    for (const key of ["hostname", "scheme"]) {
      if (key in loadBalancer.healthCheck) issue(`${path}.loadBalancer.healthCheck.${key}`, "is not allowed");
    }
  }
}

function serviceUrlAllowed(value: unknown, appName: string): boolean {
  if (typeof value !== "string") return false;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return false;
  }
  return (
    ["http:", "https:", "h2c:"].includes(url.protocol) &&
    url.hostname === appName.toLowerCase() &&
    url.username === "" &&
    url.password === ""
  );
}

function checkMiddleware(
  path: string,
  middleware: Record<string, unknown>,
  middlewares: Record<string, unknown>,
  scope: NamespaceScope,
  issue: Issue,
) {
  for (const [type, settings] of Object.entries(middleware)) {
    if (!MIDDLEWARE_TYPES.has(type)) {
      issue(
        `${path}.${type}`,
        "is not allowed in an application's file (no plugins, outbound calls or file paths)",
      );
      continue;
    }
    if (!isObject(settings)) continue;
    if ((type === "basicAuth" || type === "digestAuth") && "usersFile" in settings) {
      issue(`${path}.${type}.usersFile`, "is not allowed: it names a file on the proxy's host (give users)");
    }
    if (type === "chain" && Array.isArray(settings.middlewares)) {
      checkMiddlewareReferences(`${path}.chain.middlewares`, settings.middlewares, middlewares, scope, issue);
    }
  }
}

/** Whether `host` is one of `hosts` or (with `wildcards`) a name under one of its `*.x`. */
function hostAllowed(host: string, hosts: readonly string[], wildcards = false): boolean {
  if (hosts.includes(host)) return true;
  const dot = host.indexOf(".");
  return dot > 0 && (wildcards || !host.startsWith("*")) && hosts.includes(`*${host.slice(dot)}`);
}

/**
 * Why a tenant's router rule is refused, or null: read as Traefik reads it (parseTraefikRule),
 * every request it matches must carry one of the application's own hosts, and its length (the
 * priority Traefik gives a router without one) stays within the tenants' priorities.
 */
export function userRuleProblem(rule: string, hosts: readonly string[]): string | null {
  if (implicitRulePriority(rule) > MAX_USER_ROUTER_PRIORITY) {
    return `must be at most ${MAX_USER_ROUTER_PRIORITY} bytes long (Traefik takes its length as the priority of a router without one)`;
  }
  let tree: RuleNode;
  try {
    tree = parseTraefikRule(rule);
  } catch (error) {
    if (error instanceof RuleSyntaxError) return `is not a rule Traefik reads: ${error.message}`;
    throw error;
  }
  const matcherProblem = (node: RuleNode): string | null => {
    switch (node.kind) {
      case "matcher": {
        const arity = HTTP_MATCHER_ARITY[node.name]!;
        if (!arity.includes(node.args.length)) {
          return `gives ${node.name} ${node.args.length} argument(s), Traefik v3 takes ${arity.join(" or ")}`;
        }
        if (node.args.includes("")) return `gives ${node.name} an empty argument`;
        if (node.name === "Host") {
          const host = node.args[0]!;
          return hostAllowed(host.toLowerCase(), hosts)
            ? null
            : `names ${host}, which is not a host of this application`;
        }
        return NON_HOST_MATCHERS.has(node.name)
          ? null
          : `may not use ${node.name} (Host and path, method, header, query or client IP matchers only)`;
      }
      case "not":
        return matcherProblem(node.operand);
      default:
        return matcherProblem(node.left) ?? matcherProblem(node.right);
    }
  };
  const problem = matcherProblem(tree);
  if (problem) return problem;
  // Every request the rule matches must carry one of the application's hosts.
  const restrictsHost = (node: RuleNode): boolean => {
    switch (node.kind) {
      case "matcher":
        return node.name === "Host";
      case "not":
        return false;
      case "and":
        return restrictsHost(node.left) || restrictsHost(node.right);
      case "or":
        return restrictsHost(node.left) && restrictsHost(node.right);
    }
  };
  return restrictsHost(tree)
    ? null
    : "must match only the application's own hosts: combine Host(`…`) with && (no catch-all)";
}
