/**
 * The dynamic configuration (file provider) of one application or compose service, generated from
 * its stored domains and Basic-auth credentials. Pure: the agent writes the result to
 * `<dynamic directory>/<appName>.yml` (see dynamicConfigFileName) and removes the file when this
 * returns null.
 */
import { isValidName } from "@platform/names";
import { z } from "zod";
import { TraefikConfigError } from "./errors.ts";
import { isApr1Hash } from "./htpasswd.ts";
import {
  addPrefixMiddlewareName,
  basicAuthMiddlewareName,
  customCertificateFiles,
  forwardAuthMiddlewareName,
  LETSENCRYPT_RESOLVER,
  redirectRegexMiddlewareName,
  redirectToHttpsMiddlewareName,
  routerName,
  secureRouterName,
  serviceName,
  storedCertificateFiles,
  stripPrefixMiddlewareName,
  WEB_ENTRYPOINT,
  WEBSECURE_ENTRYPOINT,
} from "./names.ts";
import {
  CONTROL_PLANE_ROUTER_PRIORITY,
  GENERATED_ROUTER_PRIORITY_BASE,
  generatedRouterPriority,
} from "./priorities.ts";
import type { DynamicConfig, HttpMiddleware, HttpRouter, RouterTls, TlsCertificate } from "./types.ts";
import {
  absolutePathSchema,
  certResolverSchema,
  hostSchema,
  hostToAscii,
  isWildcardHost,
  pathProblem,
  portSchema,
  usernameSchema,
  wildcardCertificateProblem,
} from "./validation.ts";
import { zodIssues } from "./zod-issues.ts";

const dockerName = z.string().refine(isValidName, "must match ^[a-zA-Z0-9.\\-_]+$");

/** A routing path where "", "/" and null all mean the root. */
const optionalPath = z
  .string()
  .nullish()
  .superRefine((path, ctx) => {
    if (!path || path === "/") return;
    const message = pathProblem(path);
    if (message) ctx.addIssue({ code: "custom", message });
  });

const domainRouteSchema = z
  .object({
    /** The domain's stable key (its stored uniqueConfigKey); part of the names it gets. */
    uniqueConfigKey: z.union([z.number().int().nonnegative(), z.string().regex(/^[A-Za-z0-9_-]{1,64}$/)]),
    host: hostSchema,
    /** Routing path; "", "/" or null routes the whole host. */
    path: optionalPath,
    /** Container port the traffic goes to. */
    port: portSchema,
    https: z.boolean(),
    certificateType: z.enum(["letsencrypt", "custom", "none"]),
    /** `custom` only: take the certificate from this resolver instead of the domain's PEM files. */
    customCertResolver: certResolverSchema.nullish(),
    /**
     * `custom` without customCertResolver: true when the certificate is one of the proxy's TLS
     * store (the certificates router) rather than files of the domain's own; either way the
     * router gets `tls: {}` and Traefik picks the certificate by SNI.
     */
    storedCertificate: z.boolean().optional(),
    /** Remove `path` before forwarding (default true). */
    stripPath: z.boolean().optional(),
    /** Prefix added to the forwarded path (after stripping); "", "/" or null adds none. */
    internalPath: optionalPath,
    /** The Swarm service the domain sends to when not the service's own (a compose service). */
    swarmServiceName: dockerName.nullish(),
    /** One router on this entry point instead of web (+ websecure with https); Dokploy's customEntrypoint. */
    customEntrypoint: z
      .string()
      .regex(/^[A-Za-z0-9][A-Za-z0-9_-]{0,99}$/, "is not an entry point name")
      .nullish(),
    /** Further middlewares (`name` or `name@provider`) of the serving router, after the platform's own. */
    middlewares: z
      .array(
        z
          .string()
          .regex(/^[A-Za-z0-9][A-Za-z0-9_.-]{0,199}(?:@[a-z][a-z0-9-]*)?$/, "is not a middleware name"),
      )
      .max(20)
      .optional(),
    /**
     * Forward auth (the forwardAuth router): every request of the serving router is first sent to
     * this authentication service's address; a 2xx answer lets it through, any other answer is
     * the client's. The service runs on the platform network (http only).
     */
    forwardAuth: z
      .object({
        address: z
          .string()
          .max(512)
          .regex(
            /^http:\/\/[a-zA-Z0-9.\-_]+:\d{1,5}\/[A-Za-z0-9/._-]*$/,
            "must be http://<service>:<port>/<path>",
          ),
      })
      .nullish(),
  })
  .superRefine((domain, ctx) => {
    const message = wildcardCertificateProblem(domain.host, domain.certificateType);
    if (message) ctx.addIssue({ code: "custom", path: ["certificateType"], message });
  });

/** What the authentication service tells the application about the signed-in user (oauth2-proxy's X-Auth-Request-*). */
export const FORWARD_AUTH_RESPONSE_HEADERS = [
  "X-Auth-Request-User",
  "X-Auth-Request-Email",
  "X-Auth-Request-Preferred-Username",
  "Authorization",
] as const;

const credentialSchema = z.object({
  username: usernameSchema,
  /** The APR1 hash made when the credential was saved (hashPassword). */
  passwordHash: z.string().refine(isApr1Hash, "must be an APR1 hash ($apr1$salt$hash)"),
});

/** A regular expression Go's RE2 (Traefik) and JavaScript both read: no lookaround or backreference. */
/** Whether `text` holds a C0 control character or DEL. */
export function hasControlCharacter(text: string): boolean {
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    if (code < 0x20 || code === 0x7f) return true;
  }
  return false;
}

export function redirectRegexProblem(regex: string): string | undefined {
  if (hasControlCharacter(regex)) return "must not contain control characters";
  if (/\(\?<?[=!]|\\[1-9]|\\k</.test(regex))
    return "lookarounds and backreferences are not supported (Go RE2)";
  try {
    new RegExp(regex);
  } catch (error) {
    return `is not a valid regular expression: ${error instanceof Error ? error.message : String(error)}`;
  }
  return undefined;
}

const redirectSchema = z.object({
  uniqueConfigKey: z.union([z.number().int().nonnegative(), z.string().regex(/^[A-Za-z0-9_-]{1,64}$/)]),
  regex: z
    .string()
    .min(1)
    .max(2048)
    .superRefine((regex, ctx) => {
      const problem = redirectRegexProblem(regex);
      if (problem) ctx.addIssue({ code: "custom", message: problem });
    }),
  replacement: z
    .string()
    .min(1)
    .max(2048)
    .refine((replacement) => !hasControlCharacter(replacement), "must not contain control characters"),
  permanent: z.boolean(),
});

const serviceRoutingSchema = z
  .object({
    /** The service's appName: names its routers, services, middlewares and its file. */
    appName: dockerName,
    /** The Swarm service (DNS name on the platform network) domains send to; default appName. */
    swarmServiceName: dockerName.nullish(),
    domains: z.array(domainRouteSchema),
    credentials: z.array(credentialSchema),
    /** Redirects (redirectRegex middlewares) in front of every router of the service, in order. */
    redirects: z.array(redirectSchema).max(50).optional(),
    /**
     * The priority of every router: only the control plane's own route sets it
     * (CONTROL_PLANE_ROUTER_PRIORITY); applications' routers get generatedRouterPriority.
     */
    routerPriority: z
      .number()
      .int()
      .min(GENERATED_ROUTER_PRIORITY_BASE)
      .max(CONTROL_PLANE_ROUTER_PRIORITY)
      .optional(),
  })
  .superRefine((service, ctx) => {
    reportDuplicates(service.domains, (domain) => String(domain.uniqueConfigKey), "uniqueConfigKey", ctx);
    reportDuplicates(service.credentials, (credential) => credential.username, "username", ctx);
  });

function reportDuplicates<T>(
  items: T[],
  keyOf: (item: T) => string,
  field: string,
  ctx: z.RefinementCtx,
): void {
  const seen = new Set<string>();
  items.forEach((item, index) => {
    const key = keyOf(item);
    if (seen.has(key)) {
      const list = field === "username" ? "credentials" : "domains";
      ctx.addIssue({ code: "custom", path: [list, index, field], message: `duplicate ${field} ${key}` });
    }
    seen.add(key);
  });
}

const optionsSchema = z.object({
  /** Absolute directory (as Traefik sees it) holding custom certificates' PEM files. */
  certificatesDirectory: absolutePathSchema,
});

export type DomainRoute = z.input<typeof domainRouteSchema>;
export type BasicAuthCredential = z.input<typeof credentialSchema>;
export type RedirectRoute = z.input<typeof redirectSchema>;
export type ServiceRouting = z.input<typeof serviceRoutingSchema>;
export type DynamicConfigOptions = z.input<typeof optionsSchema>;

/**
 * The Traefik dynamic configuration of one service, or null when it has no domain (its file
 * should then not exist). Throws TraefikConfigError listing every refused input field.
 */
export function dynamicConfigFor(
  service: ServiceRouting,
  options: DynamicConfigOptions,
): DynamicConfig | null {
  const parsedService = serviceRoutingSchema.safeParse(service);
  const parsedOptions = optionsSchema.safeParse(options);
  const issues = [
    ...(parsedService.success ? [] : zodIssues(parsedService.error)),
    ...(parsedOptions.success ? [] : zodIssues(parsedOptions.error, "options")),
  ];
  if (!parsedService.success || !parsedOptions.success) throw new TraefikConfigError(issues);
  const { appName, swarmServiceName, domains, credentials, redirects, routerPriority } = parsedService.data;
  if (domains.length === 0) return null;

  const config: DynamicConfig = { http: { routers: {}, services: {} } };
  const middlewares: Record<string, HttpMiddleware> = {};
  const certificates: TlsCertificate[] = [];

  const authMiddleware = credentials.length > 0 ? basicAuthMiddlewareName(appName) : undefined;
  if (authMiddleware) {
    middlewares[authMiddleware] = {
      basicAuth: {
        users: credentials.map((credential) => `${credential.username}:${credential.passwordHash}`),
        removeHeader: true,
      },
    };
  }

  const redirecting: string[] = [];
  for (const redirect of redirects ?? []) {
    const name = redirectRegexMiddlewareName(appName, redirect.uniqueConfigKey);
    middlewares[name] = {
      redirectRegex: {
        regex: redirect.regex,
        replacement: redirect.replacement,
        permanent: redirect.permanent,
      },
    };
    redirecting.push(name);
  }

  for (const domain of domains) {
    const key = domain.uniqueConfigKey;
    const path = rootless(domain.path);
    const internalPath = rootless(domain.internalPath);
    const rule = [hostMatcher(hostToAscii(domain.host)), path && `PathPrefix(\`${path}\`)`]
      .filter(Boolean)
      .join(" && ");
    const service = serviceName(appName, key);
    const upstream = domain.swarmServiceName ?? swarmServiceName ?? appName;
    config.http.services[service] = {
      loadBalancer: { servers: [{ url: `http://${upstream}:${domain.port}` }], passHostHeader: true },
    };

    // Middlewares of the router that serves the traffic (websecure, or web without https).
    const serving: string[] = [...redirecting];
    // Authentication first: it sees the path the client asked for, before any rewriting.
    if (domain.forwardAuth) {
      const name = forwardAuthMiddlewareName(appName, key);
      middlewares[name] = {
        forwardAuth: {
          address: domain.forwardAuth.address,
          trustForwardHeader: true,
          authResponseHeaders: [...FORWARD_AUTH_RESPONSE_HEADERS],
        },
      };
      serving.push(name);
    }
    if (path && domain.stripPath !== false) {
      const name = stripPrefixMiddlewareName(appName, key);
      middlewares[name] = { stripPrefix: { prefixes: [path] } };
      serving.push(name);
    }
    if (internalPath) {
      const name = addPrefixMiddlewareName(appName, key);
      middlewares[name] = { addPrefix: { prefix: internalPath } };
      serving.push(name);
    }
    if (authMiddleware) serving.push(authMiddleware);
    serving.push(...(domain.middlewares ?? []));

    const tls = domain.https ? routerTls(domain) : undefined;
    const router = (entryPoint: string, middlewares: string[]): HttpRouter => ({
      entryPoints: [entryPoint],
      rule,
      service,
      ...(middlewares.length > 0 ? { middlewares } : {}),
      priority: routerPriority ?? generatedRouterPriority(rule),
    });
    if (domain.customEntrypoint) {
      config.http.routers[routerName(appName, key)] = {
        ...router(domain.customEntrypoint, serving),
        ...(tls ? { tls } : {}),
      };
    } else if (!tls) {
      config.http.routers[routerName(appName, key)] = router(WEB_ENTRYPOINT, serving);
    } else {
      const redirect = redirectToHttpsMiddlewareName(appName);
      middlewares[redirect] = { redirectScheme: { scheme: "https", permanent: true } };
      config.http.routers[routerName(appName, key)] = router(WEB_ENTRYPOINT, [...redirecting, redirect]);
      config.http.routers[secureRouterName(appName, key)] = {
        ...router(WEBSECURE_ENTRYPOINT, serving),
        tls,
      };
    }
    if (
      tls &&
      domain.certificateType === "custom" &&
      !domain.customCertResolver &&
      !domain.storedCertificate
    ) {
      certificates.push(customCertificateFiles(parsedOptions.data.certificatesDirectory, appName, key));
    }
  }

  if (Object.keys(middlewares).length > 0) config.http.middlewares = middlewares;
  if (certificates.length > 0) config.tls = { certificates };
  return config;
}

function rootless(path: string | null | undefined): string | undefined {
  return path && path !== "/" ? path : undefined;
}

/** `Host(...)`, or for `*.example.com` a HostRegexp matching exactly one label before it. */
function hostMatcher(asciiHost: string): string {
  if (!isWildcardHost(asciiHost)) return `Host(\`${asciiHost}\`)`;
  const parent = asciiHost.slice(2).replaceAll(".", "\\.");
  return `HostRegexp(\`^[a-z0-9-]+\\.${parent}$\`)`;
}

/** The TLS section of a domain's websecure router, or undefined when it is served over HTTP only. */
function routerTls(
  domain: Pick<z.output<typeof domainRouteSchema>, "certificateType" | "customCertResolver" | "host">,
): RouterTls | undefined {
  switch (domain.certificateType) {
    case "none":
      return undefined;
    case "letsencrypt":
      return { certResolver: LETSENCRYPT_RESOLVER };
    case "custom":
      if (!domain.customCertResolver) return {}; // the certificate comes from the tls.certificates files
      return isWildcardHost(domain.host)
        ? { certResolver: domain.customCertResolver, domains: [{ main: hostToAscii(domain.host) }] }
        : { certResolver: domain.customCertResolver };
  }
}

const storedCertificateSchema = z.object({
  certificateId: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, "must be letters, digits, '_' or '-'"),
});

/**
 * The dynamic configuration adding one stored certificate (the certificates router) to Traefik's
 * default TLS store: routers with `tls: {}` get it for the hosts it covers (SNI). No routers:
 * the file only names the PEM files the agent wrote beside it.
 */
export function storedCertificateConfig(
  certificate: z.input<typeof storedCertificateSchema>,
  options: DynamicConfigOptions,
): { tls: { certificates: TlsCertificate[] } } {
  const parsed = storedCertificateSchema.safeParse(certificate);
  const parsedOptions = optionsSchema.safeParse(options);
  const issues = [
    ...(parsed.success ? [] : zodIssues(parsed.error)),
    ...(parsedOptions.success ? [] : zodIssues(parsedOptions.error, "options")),
  ];
  if (!parsed.success || !parsedOptions.success) throw new TraefikConfigError(issues);
  return {
    tls: {
      certificates: [
        storedCertificateFiles(parsedOptions.data.certificatesDirectory, parsed.data.certificateId),
      ],
    },
  };
}

const forwardAuthDomainSchema = z.object({
  /** Names the file's router and service (the forward-auth Swarm service's name). */
  name: dockerName,
  /** The host of the sign-in callbacks (`/oauth2/…`), Dokploy's authDomain. */
  host: hostSchema,
  https: z.boolean(),
  certificateType: z.enum(["letsencrypt", "custom", "none"]),
  customCertResolver: certResolverSchema.nullish(),
  /** The authentication service on the platform network: `http://<service>:<port>`. */
  upstream: z.string().regex(/^http:\/\/[a-zA-Z0-9.\-_]+:\d{1,5}$/, "must be http://<service>:<port>"),
});
export type ForwardAuthDomain = z.input<typeof forwardAuthDomainSchema>;

/**
 * The dynamic configuration of a forward-auth service's own host: `/oauth2/…` of the auth
 * domain (sign-in, callback, sign-out) goes to the authentication service, over HTTPS when
 * `https` (with the HTTP router redirecting), as Dokploy's forward-auth-domain file does.
 */
export function forwardAuthDomainConfig(domain: ForwardAuthDomain): DynamicConfig {
  const parsed = forwardAuthDomainSchema.safeParse(domain);
  if (!parsed.success) throw new TraefikConfigError(zodIssues(parsed.error));
  const { name, host, https, upstream } = parsed.data;
  const rule = `Host(\`${hostToAscii(host)}\`) && PathPrefix(\`/oauth2/\`)`;
  const priority = generatedRouterPriority(rule);
  const service = serviceName(name, "oauth2");
  const config: DynamicConfig = {
    http: {
      routers: {},
      services: { [service]: { loadBalancer: { servers: [{ url: upstream }], passHostHeader: true } } },
    },
  };
  const tls = https ? routerTls(parsed.data) : undefined;
  if (!tls) {
    config.http.routers[routerName(name, "oauth2")] = {
      entryPoints: [WEB_ENTRYPOINT],
      rule,
      service,
      priority,
    };
    return config;
  }
  const redirect = redirectToHttpsMiddlewareName(name);
  config.http.middlewares = { [redirect]: { redirectScheme: { scheme: "https", permanent: true } } };
  config.http.routers[routerName(name, "oauth2")] = {
    entryPoints: [WEB_ENTRYPOINT],
    rule,
    service,
    middlewares: [redirect],
    priority,
  };
  config.http.routers[secureRouterName(name, "oauth2")] = {
    entryPoints: [WEBSECURE_ENTRYPOINT],
    rule,
    service,
    priority,
    tls,
  };
  return config;
}
