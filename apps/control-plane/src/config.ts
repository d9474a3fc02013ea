/**
 * Configuration from environment variables, parsed once at start by one zod schema.
 * A bad value stops the process with a message naming the variable.
 */
import { readFileSync } from "node:fs";
import { hostname } from "node:os";
import path from "node:path";
import { fromSeed } from "@nats-io/nkeys";
import { z } from "zod";
import { isAddressOrCidr } from "./auth/client-address.ts";
import { SESSION_RATE_LIMIT } from "./limits.ts";
import { type AllowList, EMPTY_ALLOW_LIST, parseAllowList } from "./outbound/guard.ts";
import { type ImageOverrides, parseImageOverrides } from "./templates/images.ts";

export const editions = ["self-hosted", "cloud"] as const;
export type Edition = (typeof editions)[number];

const natsUrlSchema = z.string().regex(/^(nats|tls|wss?):\/\//, "must be a nats://, tls:// or ws(s):// URL");

/** True when `seed` is an nkey seed of an account (SA...), the key that signs agents' user JWTs. */
function isAccountSeed(seed: string): boolean {
  try {
    return seed.startsWith("SA") && fromSeed(new TextEncoder().encode(seed)).getPublicKey().startsWith("A");
  } catch {
    return false;
  }
}

/** A Docker image reference (the agent checks it again before use). */
const imageSetting = z
  .string()
  .regex(/^[a-z0-9][a-z0-9._/:@-]*$/i, "must be a Docker image reference such as postgres:18")
  .max(512)
  .optional();

/** An http(s) base URL without a trailing slash. */
const providerBaseUrl = z
  .string()
  .regex(/^https?:\/\/[^\s?#]+$/, "must be an http(s) URL")
  .transform((url) => url.replace(/\/+$/, ""));

const configSchema = z.object({
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  HOST: z.string().min(1).default("0.0.0.0"),
  DATABASE_URL: z
    .string()
    .regex(/^postgres(ql)?:\/\//, "must be a postgres:// or postgresql:// URL")
    .optional(),
  PLATFORM_DATA_DIR: z.string().min(1).default("./.platform-data"),
  NATS_URL: natsUrlSchema.optional(),
  /** The control plane's own NATS credentials (.creds file: user JWT + nkey seed). */
  NATS_CREDS: z.string().min(1).optional(),
  /** Seed of the NATS account whose users the agents become (signs their user JWTs). */
  NATS_ACCOUNT_SEED: z
    .string()
    .refine(isAccountSeed, "must be an nkey account seed (starts with SA, for example from `nsc`)")
    .optional(),
  /** The NATS URL handed to agents at enrollment (default: NATS_URL). */
  NATS_AGENT_URL: natsUrlSchema.optional(),
  PLATFORM_SECRET_KEY: z
    .string()
    .min(32, "must be at least 32 characters (for example: openssl rand -base64 32)")
    .optional(),
  PLATFORM_EDITION: z.enum(editions).default("self-hosted"),
  LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
  SESSION_TTL_SECONDS: z.coerce
    .number()
    .int()
    .min(60)
    .default(7 * 24 * 3600),
  PLATFORM_URL: z
    .string()
    .regex(/^https?:\/\/[^\s'"`$;&|<>\\]+$/, "must be an http:// or https:// URL")
    .optional(),
  /** Deployments that may run at once across all applications (one at a time per application). */
  DEPLOYMENT_CONCURRENCY: z.coerce.number().int().min(1).max(64).default(2),
  /** A deployment whose agent answers but shows no progress for this long fails (a silent agent does not count). */
  DEPLOYMENT_WATCHDOG_MS: z.coerce.number().int().min(1000).default(180_000),
  /** How often every application's service is compared with what it should be (0: never). */
  RECONCILE_INTERVAL_MS: z.coerce.number().int().min(0).default(30_000),
  PLATFORM_INSTANCE_ID: z.string().min(1).optional(),
  // The image a database service of each kind runs when it sets no dockerImage (spec 2.9's defaults).
  PLATFORM_DEFAULT_IMAGE_POSTGRES: imageSetting,
  PLATFORM_DEFAULT_IMAGE_MYSQL: imageSetting,
  PLATFORM_DEFAULT_IMAGE_MARIADB: imageSetting,
  PLATFORM_DEFAULT_IMAGE_MONGO: imageSetting,
  PLATFORM_DEFAULT_IMAGE_REDIS: imageSetting,
  PLATFORM_DEFAULT_IMAGE_LIBSQL: imageSetting,
  /** The image application.deployNginxQuickstart runs (it serves on port 80). */
  PLATFORM_QUICKSTART_IMAGE: imageSetting,
  /** The authentication service forwardAuth.deployOnServer runs (oauth2-proxy's command line and variables). */
  PLATFORM_FORWARD_AUTH_IMAGE: imageSetting,
  PLATFORM_PUBLIC_IP: z.union([z.ipv4(), z.ipv6()], { error: "must be an IPv4 or IPv6 address" }).optional(),
  /** Requests per session: `<max>/<seconds>` (default 600/60), or `off`. */
  PLATFORM_SESSION_RATE_LIMIT: z
    .string()
    .regex(/^(off|[1-9]\d{0,6}\/[1-9]\d{0,5})$/, "must be <requests>/<seconds> such as 600/60, or off")
    .transform((text) => {
      if (text === "off") return null;
      const [max, seconds] = text.split("/").map(Number);
      return { max: max!, timeWindowSeconds: seconds! };
    })
    .optional(),
  /** GitHub's API and Git hosts (GitHub Enterprise Server, or a stand-in in tests). */
  PLATFORM_GITHUB_API_URL: providerBaseUrl.default("https://api.github.com"),
  PLATFORM_GITHUB_URL: providerBaseUrl.default("https://github.com"),
  /** Bitbucket Cloud's API and Git hosts. */
  PLATFORM_BITBUCKET_API_URL: providerBaseUrl.default("https://api.bitbucket.org/2.0"),
  PLATFORM_BITBUCKET_URL: providerBaseUrl.default("https://bitbucket.org"),
  /** Cloudflare's v4 API (DNS providers; a stand-in in tests). */
  PLATFORM_CLOUDFLARE_API_URL: providerBaseUrl.default("https://api.cloudflare.com/client/v4"),
  /** Days delivered and abandoned notification deliveries (and their events) are kept. */
  PLATFORM_NOTIFICATION_RETENTION_DAYS: z.coerce.number().int().min(1).max(3650).default(7),
  /** The first retry delay of a failed notification delivery, doubled per attempt (ms). */
  PLATFORM_NOTIFICATION_RETRY_MS: z.coerce.number().int().min(100).max(3_600_000).default(10_000),
  /** Base URLs of the fixed notification APIs (a relay or a test receiver may stand in). */
  PLATFORM_TELEGRAM_API_URL: z
    .url({ protocol: /^https?$/, error: "must be an http:// or https:// URL" })
    .default("https://api.telegram.org"),
  PLATFORM_PUSHOVER_API_URL: z
    .url({ protocol: /^https?$/, error: "must be an http:// or https:// URL" })
    .default("https://api.pushover.net"),
  PLATFORM_RESEND_API_URL: z
    .url({ protocol: /^https?$/, error: "must be an http:// or https:// URL" })
    .default("https://api.resend.com"),
  /** CIDRs of loopback or private addresses outbound requests (Git, registries) may reach. */
  PLATFORM_OUTBOUND_ALLOW: z
    .string()
    .transform((text, context) => {
      const parsed = parseAllowList(text);
      if ("list" in parsed) return parsed.list;
      context.addIssue({ code: "custom", message: parsed.problem });
      return z.NEVER;
    })
    .optional(),
  /**
   * This machine's main directory (Traefik's files, builds), the same path on the host and in the
   * control plane's container; unset: `<PLATFORM_DATA_DIR>/main`, this instance's own (two control
   * planes on one machine never share Traefik's files).
   */
  PLATFORM_MAIN_DIRECTORY: z
    .string()
    .regex(/^\/[^\0\n]*$/, "must be an absolute path")
    .optional(),
  /** The overlay network of this machine's applications and proxy (default platform-network). */
  PLATFORM_NETWORK: z
    .string()
    .regex(/^[A-Za-z0-9][A-Za-z0-9_.-]*$/, "must be a Docker network name")
    .optional(),
  /** Installs (or updates) this machine's Traefik proxy at start on the self-hosted edition. */
  PLATFORM_LOCAL_PROXY: z.enum(["true", "false"], { error: "must be true or false" }).default("true"),
  /** Where server.setup has servers download the builders' releases (install.sh --builders-url). */
  PLATFORM_BUILDERS_URL: z
    .string()
    .regex(
      /^https?:\/\/[A-Za-z0-9.:_%/[\]-]+$/,
      "must be an http:// or https:// URL of a host, port and path",
    )
    .transform((url) => url.replace(/\/+$/, ""))
    .optional(),
  /** A remote template catalogue in Dokploy's layout (meta.json, blueprints/<id>/...), beside the built-in one. */
  PLATFORM_TEMPLATES_URL: z
    .string()
    .regex(/^https?:\/\/[^\s'"`<>\\]+$/, "must be an http:// or https:// URL")
    .transform((url) => url.replace(/\/+$/, ""))
    .optional(),
  /**
   * A JSON document `{"version": "x.y.z"}` naming this platform's newest release
   * (settings.getUpdateData), fetched through the outbound guard; unset: no update is known.
   */
  PLATFORM_RELEASE_URL: z
    .string()
    .regex(/^https?:\/\/[^\s'"`<>\\]+$/, "must be an http:// or https:// URL")
    .optional(),
  /** The tag of the release this control plane runs (settings.getReleaseTag); default its version. */
  PLATFORM_RELEASE_TAG: z
    .string()
    .regex(/^[A-Za-z0-9_.-]{1,128}$/, "must be an image tag ([A-Za-z0-9_.-], up to 128 characters)")
    .optional(),
  /**
   * The control plane's Swarm service (settings.reloadServer, settings.updateServer); unset: the
   * service of the container it runs in, found by this machine's agent.
   */
  PLATFORM_CONTROL_PLANE_SERVICE: z
    .string()
    .regex(/^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$/, "must be a Swarm service name")
    .optional(),
  /** Images of the templates replaced by others (mirrors): `from=to,from=to` or a JSON object. */
  PLATFORM_TEMPLATE_IMAGES: z
    .string()
    .transform((text, context) => {
      const parsed = parseImageOverrides(text);
      if ("overrides" in parsed) return parsed.overrides;
      context.addIssue({ code: "custom", message: parsed.problem });
      return z.NEVER;
    })
    .optional(),
  /**
   * The set-up token of an unclaimed instance (auth/setup-token.ts), chosen by the installer
   * (deploy/install.sh passes it as a Docker secret); absent: a random one is printed at start.
   */
  PLATFORM_SETUP_TOKEN: z
    .string()
    .regex(/^[A-Za-z0-9_-]{16,128}$/, "must be 16 to 128 letters, digits, - or _")
    .optional(),
  /** Proxies (IPs or CIDRs) whose X-Forwarded-For names the client, for login throttling. */
  PLATFORM_TRUSTED_PROXIES: z
    .string()
    .optional()
    .refine(
      (value) => value === undefined || listOf(value).every(isAddressOrCidr),
      "must be comma-separated IP addresses or CIDRs (for example 10.0.0.0/8,127.0.0.1)",
    ),
});

const listOf = (value: string) =>
  value
    .split(",")
    .map((part) => part.trim())
    .filter((part) => part !== "");

export interface Config {
  port: number;
  host: string;
  databaseUrl: string | undefined;
  dataDir: string;
  natsUrl: string | undefined;
  natsCredsFile: string | undefined;
  natsAccountSeed: string | undefined;
  natsAgentUrl: string | undefined;
  secretKey: string | undefined;
  edition: Edition;
  logLevel: z.infer<typeof configSchema>["LOG_LEVEL"];
  sessionTtlSeconds: number;
  /** URL servers' agents use to reach this control plane (enrollment); derived when unset. */
  platformUrl: string | undefined;
  /** This machine's public IP as server.publicIp reports it; detected from interfaces when unset. */
  publicIp: string | undefined;
  /** Deployments running at once across all applications. */
  deploymentConcurrency: number;
  /**
   * Loopback or private addresses the outbound guard lets Git clones and registry logins reach
   * (PLATFORM_OUTBOUND_ALLOW); empty by default. Link-local and metadata stay refused anyway.
   */
  outboundAllow: AllowList;
  /** Base URLs of GitHub's API and Git host, and of Bitbucket's (git-providers/clients.ts). */
  githubApiUrl: string;
  githubUrl: string;
  bitbucketApiUrl: string;
  bitbucketUrl: string;
  /** Base URL of Cloudflare's v4 API (dns/cloudflare.ts). */
  cloudflareApiUrl: string;
  /** Notification delivery (notifications/outbox.ts): retention, first retry delay, fixed API bases. */
  notifications: {
    retentionDays: number;
    retryMs: number;
    apis: { telegram: string; pushover: string; resend: string };
  };
  /** The per-session token bucket (auth/session-rate-limit.ts); null: off. */
  sessionRateLimit: { max: number; timeWindowSeconds: number } | null;
  /** No observed progress of a deployment for this long fails it (default 3 minutes). */
  deploymentWatchdogMs?: number;
  /** Reconciliation period (default 30 s; 0 turns the periodic pass off). */
  reconcileIntervalMs?: number;
  /** This control plane's id for leases on running deployments (deployments/leases.ts). */
  instanceId?: string;
  /**
   * The image of each database kind when a service sets no dockerImage
   * (PLATFORM_DEFAULT_IMAGE_<KIND>; absent: spec 2.9's default, databases/kinds.ts).
   */
  defaultDatabaseImages?: Partial<
    Record<"postgres" | "mysql" | "mariadb" | "mongo" | "redis" | "libsql", string>
  >;
  /** The image application.deployNginxQuickstart runs (PLATFORM_QUICKSTART_IMAGE); undefined: nginx:alpine. */
  quickstartImage?: string;
  /** The forward-auth service's image (PLATFORM_FORWARD_AUTH_IMAGE); undefined: forward-auth/service.ts's default. */
  forwardAuthImage?: string;
  /** This machine's main directory (PLATFORM_MAIN_DIRECTORY); unset: `<dataDir>/main`, absolute. */
  mainDirectory: string;
  /** The overlay network of this machine's applications and proxy; undefined: platform-network. */
  platformNetwork?: string;
  /** Install this machine's proxy at start (self-hosted edition); default true. */
  installLocalProxy: boolean;
  /** Peers trusted to name the client in X-Forwarded-For (IPs or CIDRs); default none. */
  trustedProxies: string[];
  /** The set-up token the installer chose (PLATFORM_SETUP_TOKEN); undefined: a random one. */
  setupToken?: string;
  /** The builders' release host servers download from at setup (PLATFORM_BUILDERS_URL); undefined: GitHub. */
  buildersUrl?: string;
  /** The remote template catalogue's base URL (PLATFORM_TEMPLATES_URL); undefined: built-in only. */
  templatesUrl?: string;
  /** Where this platform's newest release is named (PLATFORM_RELEASE_URL); undefined: none. */
  releaseUrl?: string;
  /** The release tag this control plane runs (PLATFORM_RELEASE_TAG); undefined: its version. */
  releaseTag?: string;
  /** The control plane's Swarm service (PLATFORM_CONTROL_PLANE_SERVICE); undefined: found by the agent. */
  controlPlaneService?: string;
  /** Images the templates' compose files run in place of theirs (PLATFORM_TEMPLATE_IMAGES). */
  templateImages?: ImageOverrides;
}

export class ConfigError extends Error {}

/** The NATS settings beside NATS_URL mean nothing without it. */
const environmentSchema = configSchema.superRefine((env, context) => {
  for (const variable of ["NATS_CREDS", "NATS_ACCOUNT_SEED", "NATS_AGENT_URL"] as const) {
    if (env[variable] !== undefined && env.NATS_URL === undefined) {
      context.addIssue({ code: "custom", path: [variable], message: "needs NATS_URL to be set too" });
    }
  }
});

/** Secrets a variable `<NAME>_FILE` may give as the path of a file instead (Docker secrets). */
const FILE_VARIABLES = [
  "DATABASE_URL",
  "NATS_ACCOUNT_SEED",
  "PLATFORM_SECRET_KEY",
  "PLATFORM_SETUP_TOKEN",
] as const;

/** The environment with each `<NAME>_FILE` of FILE_VARIABLES replaced by the file's content. */
function withFileVariables(env: Record<string, string | undefined>): Record<string, string | undefined> {
  const resolved = { ...env };
  const problems: string[] = [];
  for (const name of FILE_VARIABLES) {
    const file = env[`${name}_FILE`];
    delete resolved[`${name}_FILE`];
    if (file === undefined) continue;
    if (env[name] !== undefined) {
      problems.push(`  ${name}_FILE: cannot be set together with ${name}`);
      continue;
    }
    try {
      resolved[name] = readFileSync(file, "utf8").trim();
    } catch (error) {
      problems.push(`  ${name}_FILE: cannot read ${file} (${(error as NodeJS.ErrnoException).code})`);
    }
  }
  if (problems.length > 0) throw new ConfigError(`Invalid configuration:\n${problems.join("\n")}`);
  return resolved;
}

/**
 * Parses the environment; throws ConfigError listing every bad variable. DATABASE_URL,
 * NATS_ACCOUNT_SEED, PLATFORM_SECRET_KEY and PLATFORM_SETUP_TOKEN may come from files
 * (`<NAME>_FILE`).
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const cleaned = withFileVariables(
    Object.fromEntries(Object.entries(env).filter(([, value]) => value !== "")),
  );
  const parsed = environmentSchema.safeParse(cleaned);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((issue) => `  ${issue.path.join(".")}: ${issue.message}`);
    throw new ConfigError(`Invalid configuration:\n${lines.join("\n")}`);
  }
  const c = parsed.data;
  return {
    port: c.PORT,
    host: c.HOST,
    databaseUrl: c.DATABASE_URL,
    dataDir: c.PLATFORM_DATA_DIR,
    natsUrl: c.NATS_URL,
    natsCredsFile: c.NATS_CREDS,
    natsAccountSeed: c.NATS_ACCOUNT_SEED,
    natsAgentUrl: c.NATS_AGENT_URL,
    secretKey: c.PLATFORM_SECRET_KEY,
    edition: c.PLATFORM_EDITION,
    logLevel: c.LOG_LEVEL,
    sessionTtlSeconds: c.SESSION_TTL_SECONDS,
    platformUrl: c.PLATFORM_URL,
    publicIp: c.PLATFORM_PUBLIC_IP,
    deploymentConcurrency: c.DEPLOYMENT_CONCURRENCY,
    outboundAllow: c.PLATFORM_OUTBOUND_ALLOW ?? EMPTY_ALLOW_LIST,
    githubApiUrl: c.PLATFORM_GITHUB_API_URL,
    githubUrl: c.PLATFORM_GITHUB_URL,
    bitbucketApiUrl: c.PLATFORM_BITBUCKET_API_URL,
    bitbucketUrl: c.PLATFORM_BITBUCKET_URL,
    cloudflareApiUrl: c.PLATFORM_CLOUDFLARE_API_URL,
    notifications: {
      retentionDays: c.PLATFORM_NOTIFICATION_RETENTION_DAYS,
      retryMs: c.PLATFORM_NOTIFICATION_RETRY_MS,
      apis: {
        telegram: c.PLATFORM_TELEGRAM_API_URL.replace(/\/+$/, ""),
        pushover: c.PLATFORM_PUSHOVER_API_URL.replace(/\/+$/, ""),
        resend: c.PLATFORM_RESEND_API_URL.replace(/\/+$/, ""),
      },
    },
    sessionRateLimit:
      c.PLATFORM_SESSION_RATE_LIMIT === undefined ? SESSION_RATE_LIMIT : c.PLATFORM_SESSION_RATE_LIMIT,
    deploymentWatchdogMs: c.DEPLOYMENT_WATCHDOG_MS,
    reconcileIntervalMs: c.RECONCILE_INTERVAL_MS,
    instanceId: c.PLATFORM_INSTANCE_ID,
    defaultDatabaseImages: {
      postgres: c.PLATFORM_DEFAULT_IMAGE_POSTGRES,
      mysql: c.PLATFORM_DEFAULT_IMAGE_MYSQL,
      mariadb: c.PLATFORM_DEFAULT_IMAGE_MARIADB,
      mongo: c.PLATFORM_DEFAULT_IMAGE_MONGO,
      redis: c.PLATFORM_DEFAULT_IMAGE_REDIS,
      libsql: c.PLATFORM_DEFAULT_IMAGE_LIBSQL,
    },
    quickstartImage: c.PLATFORM_QUICKSTART_IMAGE,
    forwardAuthImage: c.PLATFORM_FORWARD_AUTH_IMAGE,
    mainDirectory: c.PLATFORM_MAIN_DIRECTORY ?? path.resolve(c.PLATFORM_DATA_DIR, "main"),
    platformNetwork: c.PLATFORM_NETWORK,
    installLocalProxy: c.PLATFORM_LOCAL_PROXY === "true",
    trustedProxies: c.PLATFORM_TRUSTED_PROXIES ? listOf(c.PLATFORM_TRUSTED_PROXIES) : [],
    setupToken: c.PLATFORM_SETUP_TOKEN,
    buildersUrl: c.PLATFORM_BUILDERS_URL,
    templatesUrl: c.PLATFORM_TEMPLATES_URL,
    templateImages: c.PLATFORM_TEMPLATE_IMAGES,
    releaseUrl: c.PLATFORM_RELEASE_URL,
    releaseTag: c.PLATFORM_RELEASE_TAG,
    controlPlaneService: c.PLATFORM_CONTROL_PLANE_SERVICE,
  };
}

/** This control plane's instance id (PLATFORM_INSTANCE_ID, else host and port): leases and tick claims name it. */
export function instanceIdOf(config: Pick<Config, "instanceId" | "port">): string {
  return config.instanceId ?? `${hostname()}:${config.port}`;
}
