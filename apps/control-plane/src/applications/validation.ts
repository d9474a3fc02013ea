/**
 * Field rules for application inputs (spec 2.3, 8), written as zod schemas so a bad value is a
 * 400 naming its field before anything changes. Values that later reach git, Docker or a file
 * path are held to the narrowest form that still covers what users write; everything runs as
 * argv later, so these rules are the first fence, not the only one.
 */
import { isIP } from "node:net";
import { imageReferenceRefusal } from "@platform/compose-config";
import { appNameProblem, IMAGE_REFERENCE_PATTERN } from "@platform/names";
import { z } from "zod";
import {
  type AllowList,
  EMPTY_ALLOW_LIST,
  outboundAddressProblem,
  parseAllowList,
} from "../outbound/guard.ts";

/**
 * Spec 8's characters, held to the one appName rule the agent applies too (agent-protocol
 * names.ts): a letter or digit first, no `..`, at most 63 characters (the longest DNS label,
 * which Swarm service names become), and `platform-*` reserved for the platform's own services.
 */
export const appNameSchema = z
  .string()
  .trim()
  .superRefine((name, context) => {
    const problem = appNameProblem(name);
    if (problem) context.addIssue({ code: "custom", message: problem });
  });

/** Characters a shell would act on; refused in names that reach git even though we never use a shell. */
const SHELL_METACHARACTERS = /[$`;&|<>()'"\\!{}]/;
// biome-ignore lint/suspicious/noControlCharactersInRegex: refusing control characters is the point
const CONTROL_CHARACTERS = /[\u0000-\u001f\u007f]/;

/** Why `name` is not a branch name by git check-ref-format's rules, or null when it is one. */
export function branchNameProblem(name: string): string | null {
  if (name.length === 0) return "must not be empty";
  if (name.length > 255) return "must be at most 255 characters";
  if (CONTROL_CHARACTERS.test(name) || name.includes(" "))
    return "must not contain spaces or control characters";
  if (/[~^:?*[]/.test(name)) return "must not contain ~ ^ : ? * [";
  if (SHELL_METACHARACTERS.test(name)) return "must not contain shell metacharacters or backslashes";
  if (name.startsWith("-")) return "must not start with '-'";
  if (name.includes("..")) return "must not contain '..'";
  if (name.includes("@{") || name === "@") return "must not be '@' or contain '@{'";
  if (name.startsWith("/") || name.endsWith("/") || name.includes("//")) return "has an empty path component";
  if (name.endsWith(".")) return "must not end with '.'";
  for (const component of name.split("/")) {
    if (component.startsWith(".")) return "no path component may start with '.'";
    if (component.endsWith(".lock")) return "no path component may end with '.lock'";
  }
  return null;
}

export const branchSchema = z.string().superRefine((name, ctx) => {
  const problem = branchNameProblem(name);
  if (problem)
    ctx.addIssue({ code: "custom", message: `is not a valid branch name: ${problem}`, input: name });
});

/**
 * A path inside a repository or build context: `/` or `.` is its root, a leading `/` or `./`
 * is relative to it. No `..` component, no backslash, no control characters (NUL included).
 * Deployment code still resolves it under its root and checks it stays there.
 */
export function relativePathProblem(value: string): string | null {
  if (value.length > 500) return "must be at most 500 characters";
  if (CONTROL_CHARACTERS.test(value)) return "must not contain control characters";
  if (value.includes("\\")) return "must not contain backslashes";
  if (value.split("/").includes("..")) return "must not contain '..'";
  return null;
}

export const relativePathSchema = z
  .string()
  .trim()
  .superRefine((value, ctx) => {
    const problem = relativePathProblem(value);
    if (problem)
      ctx.addIssue({ code: "custom", message: `is not a safe relative path: ${problem}`, input: value });
  });

/** A path that must name something (a Dockerfile, a publish directory): not empty and not the root. */
export const relativeFileSchema = relativePathSchema.refine((value) => !/^[./]*$/.test(value), {
  message: "must name a file or directory inside the build context",
});

export const dockerImageSchema = z
  .string()
  .trim()
  .min(1, "must not be empty")
  .max(512)
  .regex(IMAGE_REFERENCE_PATTERN, "is not a Docker image reference such as nginx:1.27 or ghcr.io/org/app:tag")
  .superRefine((value, context) => {
    // Images by ID and the platform's own names are other services' images on a shared engine;
    // rollback.rollback runs an earlier release.
    const refusal = imageReferenceRefusal(value);
    if (refusal) context.addIssue({ code: "custom", message: refusal });
  });

/**
 * The registry of a Docker source (saveDockerProvider) follows registry.create's rule and is
 * stored the same way (host[:port]): one rule for every registry address.
 */
export { registryUrlSchema } from "../registries/schemas.ts";

/** Names shown to git providers and CLIs: owner, repository, slug. */
export const repositoryNameSchema = z
  .string()
  .trim()
  .min(1, "must not be empty")
  .max(100)
  .regex(/^[A-Za-z0-9._-]+$/, "may contain only letters, digits, '.', '-' and '_'")
  .refine((value) => !value.startsWith("-") && value !== "." && value !== "..", {
    message: "must not start with '-' or be '.' or '..'",
  });

/** GitLab's namespace path (group/subgroup/project). */
export const namespacePathSchema = z
  .string()
  .trim()
  .min(1, "must not be empty")
  .max(255)
  .regex(
    /^[A-Za-z0-9_][A-Za-z0-9._-]*(?:\/[A-Za-z0-9_][A-Za-z0-9._-]*)*$/,
    "is not a namespace path such as group/project",
  )
  .refine((value) => !value.split("/").includes(".."), { message: "must not contain '..'" });

/** Provider connection ids (githubId, gitlabId, …) and other ids we only store. */
export const providerIdSchema = z
  .string()
  .trim()
  .min(1, "must not be empty")
  .max(100)
  .regex(/^[A-Za-z0-9_-]+$/, "is not an id");

/** 2^63: Docker takes memory sizes as int64 bytes. */
const MAX_MEMORY_BYTES = 2 ** 63;
const MEMORY_SIZE = /^[0-9]+(?:\.[0-9]+)?(?:[bkmg]|[kmg]b)?$/i;

/** `512m`, `2g`, `1.5g` or plain bytes (`268435456`), as Docker reads memory sizes. */
export const memorySchema = z
  .string()
  .trim()
  .regex(MEMORY_SIZE, "must be a size such as 512m, 2g or a number of bytes")
  .refine((value) => Number.parseFloat(value) > 0, { message: "must be more than zero" })
  .refine((value) => !MEMORY_SIZE.test(value) || memoryBytes(value) < MAX_MEMORY_BYTES, {
    message: "must be less than 8 EiB (Docker takes memory sizes as a signed 64-bit number of bytes)",
  });

/** `0.5`, `2`: CPUs as docker's --cpus reads them. */
export const cpuSchema = z
  .string()
  .trim()
  .regex(/^[0-9]+(?:\.[0-9]+)?$/, "must be a number of CPUs such as 0.5 or 2")
  .refine((value) => Number.parseFloat(value) > 0 && Number.parseFloat(value) <= 1024, {
    message: "must be more than 0 and at most 1024",
  });

/** Free text that reaches a process (command, args, watch paths): no NUL or other control characters. */
export const plainTextSchema = (max: number) =>
  z
    .string()
    .max(max)
    .refine((value) => !CONTROL_CHARACTERS.test(value), { message: "must not contain control characters" });

/** A version label such as `24` or `0.15.4`. */
export const versionSchema = z
  .string()
  .trim()
  .max(50)
  .regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/, "is not a version such as 24 or 0.15.4");

/** A Dockerfile stage name (FROM … AS name). */
export const buildStageSchema = z
  .string()
  .trim()
  .max(100)
  .regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/, "is not a build stage name");

/**
 * Git hosts are checked by the outbound guard: link-local and metadata addresses never, loopback
 * and private ranges only inside the operator's allow list (PLATFORM_OUTBOUND_ALLOW). A host
 * name is checked again where it is resolved, at clone time.
 */
const HOSTNAME_PATTERN = /^[a-z0-9](?:[a-z0-9-]*[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]*[a-z0-9])?)*$/;

/** Every loopback and private address: the rules that do not depend on the configuration. */
const ANY_ALLOWED = (parseAllowList("0.0.0.0/0, ::/0") as { list: AllowList }).list;

export interface GitHostOptions {
  /** Loopback and private addresses allowed (the configuration's outboundAllow); default none. */
  outbound?: AllowList;
}

/** Why the IP address `address` may not be a Git server, or null. */
export function gitAddressProblem(address: string, options: GitHostOptions = {}): string | null {
  return outboundAddressProblem(address, options.outbound ?? EMPTY_ALLOW_LIST);
}

/** Why `host` may not be a Git server, or null. Numeric forms (0x7f.1, 2130706433) are normalized first. */
export function gitHostProblem(host: string, options: GitHostOptions = {}): string | null {
  let hostname: string;
  try {
    hostname = new URL(`http://${host}/`).hostname;
  } catch {
    return "has an invalid host";
  }
  const bare = hostname
    .replace(/^\[|\]$/g, "")
    .replace(/\.$/, "")
    .toLowerCase();
  if (bare === "localhost" || bare.endsWith(".localhost")) {
    return gitAddressProblem("127.0.0.1", options) && "points at this machine (localhost)";
  }
  if (isIP(bare) === 0) return HOSTNAME_PATTERN.test(bare) ? null : "has an invalid host name";
  const problem = gitAddressProblem(bare, options);
  return problem && `has a host that ${problem}`;
}

/** scp-like `user@host:path` (git's own syntax for SSH), as git reads it: no `/` before the colon. */
const SCP_LIKE = /^([A-Za-z0-9_][A-Za-z0-9._-]*)@([A-Za-z0-9.-]+|\[[0-9a-fA-F:.]+\]):([^:].*)$/;

/** The host a custom Git URL names (scp-like or URL form), or null when it has none. */
export function gitUrlHost(value: string): string | null {
  const scp = SCP_LIKE.exec(value);
  if (scp) return scp[2]!.replace(/^\[|\]$/g, "");
  try {
    return new URL(value).hostname.replace(/^\[|\]$/g, "") || null;
  } catch {
    return null;
  }
}

/** Why `value` is not an acceptable custom Git URL, or null. */
export function gitUrlProblem(value: string, options: GitHostOptions = {}): string | null {
  if (value.length > 2000) return "must be at most 2000 characters";
  if (CONTROL_CHARACTERS.test(value) || /\s/.test(value))
    return "must not contain spaces or control characters";
  if (value.startsWith("-") || value.includes("--upload-pack") || value.includes("--config")) {
    return "must not look like a git option";
  }
  const scp = SCP_LIKE.exec(value);
  if (scp) {
    const path = scp[3]!;
    if (path.startsWith("-")) return "must not look like a git option";
    return gitHostProblem(scp[2]!, options);
  }
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return "must be an https://, http://, ssh:// or git@host:path URL";
  }
  if (!["https:", "http:", "ssh:"].includes(url.protocol)) {
    return "must be an https://, http://, ssh:// or git@host:path URL";
  }
  if (!url.hostname) return "has no host";
  if (url.username.startsWith("-")) return "must not look like a git option";
  return gitHostProblem(url.host, options);
}

/**
 * Every rule of gitUrlProblem but the loopback and private ones, which depend on configuration
 * (PLATFORM_OUTBOUND_ALLOW): the procedure checks them with gitUrlProblem and the config.
 */
export const gitUrlSchema = z
  .string()
  .trim()
  .min(1, "must not be empty")
  .superRefine((value, ctx) => {
    const problem = gitUrlProblem(value, { outbound: ANY_ALLOWED });
    if (problem)
      ctx.addIssue({ code: "custom", message: `is not an allowed Git URL: ${problem}`, input: value });
  });

/** Watch paths: globs relative to the repository, `!` to exclude. */
export const watchPathsSchema = z.array(plainTextSchema(500).pipe(z.string().min(1))).max(100);

/** Docker Swarm HealthConfig; durations in nanoseconds as Docker takes them. */
const nanoseconds = z.number().int().min(0).max(Number.MAX_SAFE_INTEGER);
export const healthCheckSwarmSchema = z.strictObject({
  Test: z.array(plainTextSchema(1000)).max(100).optional(),
  Interval: nanoseconds.optional(),
  Timeout: nanoseconds.optional(),
  StartPeriod: nanoseconds.optional(),
  Retries: z.number().int().min(0).max(1000).optional(),
});

export const restartPolicySwarmSchema = z.strictObject({
  Condition: z.enum(["none", "on-failure", "any"]).optional(),
  Delay: nanoseconds.optional(),
  MaxAttempts: z.number().int().min(0).max(1_000_000).optional(),
  Window: nanoseconds.optional(),
});

const MEMORY_UNITS: Record<string, number> = { "": 1, b: 1, k: 1024, m: 1024 ** 2, g: 1024 ** 3 };

/** Bytes of a memory size accepted by memorySchema (`512m`, `1.5g`, `64mb`, `268435456`), as Docker reads it. */
export function memoryBytes(value: string): number {
  const match = /^([0-9]+(?:\.[0-9]+)?)([bkmg])?b?$/i.exec(value.trim());
  if (!match) throw new Error("not a memory size");
  return Math.floor(Number.parseFloat(match[1]!) * MEMORY_UNITS[(match[2] ?? "").toLowerCase()]!);
}

/** Nano CPUs (Docker's NanoCPUs) of a CPU count accepted by cpuSchema (`0.5`, `2`). */
export function nanoCpus(value: string): number {
  return Math.round(Number.parseFloat(value.trim()) * 1e9);
}

// ---- Docker Swarm settings (Dokploy's *Swarm fields), as Docker's service API names them ----

const swarmText = (max: number) => plainTextSchema(max).pipe(z.string().min(1, "must not be empty"));
/** Label keys and values: no control characters; the platform's own label namespace is reserved. */
const labelKey = swarmText(255).refine((key) => !/^(platform|com\.docker)\./i.test(key), {
  message: "must not use the reserved platform. or com.docker. label prefixes",
});

export const placementSwarmSchema = z.strictObject({
  /** `node.role==manager`, `node.labels.zone!=east`: no control characters. */
  Constraints: z.array(swarmText(500)).max(100).optional(),
  Preferences: z
    .array(z.strictObject({ Spread: z.strictObject({ SpreadDescriptor: swarmText(500) }) }))
    .max(100)
    .optional(),
  MaxReplicas: z.number().int().min(0).max(1_000_000).optional(),
  Platforms: z
    .array(z.strictObject({ Architecture: swarmText(50), OS: swarmText(50) }))
    .max(20)
    .optional(),
});

export const updateConfigSwarmSchema = z.strictObject({
  Parallelism: z.number().int().min(0).max(1_000_000),
  Delay: nanoseconds.optional(),
  FailureAction: z.enum(["continue", "pause", "rollback"]).optional(),
  Monitor: nanoseconds.optional(),
  MaxFailureRatio: z.number().min(0).max(1).optional(),
  Order: z.enum(["stop-first", "start-first"]),
});

export const modeSwarmSchema = z
  .strictObject({
    Replicated: z.strictObject({ Replicas: z.number().int().min(0).max(100).optional() }).optional(),
    Global: z.strictObject({}).optional(),
    ReplicatedJob: z
      .strictObject({
        MaxConcurrent: z.number().int().min(0).max(1000).optional(),
        TotalCompletions: z.number().int().min(0).max(1_000_000).optional(),
      })
      .optional(),
    GlobalJob: z.strictObject({}).optional(),
  })
  .refine((mode) => Object.keys(mode).length <= 1, { message: "must name at most one mode" });

export const labelsSwarmSchema = z
  .record(labelKey, plainTextSchema(1000))
  .refine((labels) => Object.keys(labels).length <= 100, { message: "must have at most 100 labels" });

export const networkSwarmSchema = z
  .array(
    z.strictObject({
      Target: z
        .string()
        .max(255)
        .regex(/^[a-zA-Z0-9][a-zA-Z0-9_.-]*$/, "is not a network name")
        .optional(),
      Aliases: z
        .array(
          z
            .string()
            .max(255)
            .regex(/^[a-zA-Z0-9][a-zA-Z0-9_.-]*$/, "is not an alias"),
        )
        .max(20)
        .optional(),
    }),
  )
  .max(20);

export const endpointSpecSwarmSchema = z.strictObject({
  Mode: z.enum(["vip", "dnsrr"]).optional(),
  Ports: z
    .array(
      z.strictObject({
        // The agent publishes tcp and udp (sctp is refused here, not dropped there).
        Protocol: z.enum(["tcp", "udp"]).optional(),
        TargetPort: z.number().int().min(1).max(65535).optional(),
        PublishedPort: z.number().int().min(1).max(65535).optional(),
        PublishMode: z.enum(["ingress", "host"]).optional(),
      }),
    )
    .max(100)
    .optional(),
});

export const ulimitsSwarmSchema = z
  .array(
    z.strictObject({
      Name: z.string().regex(/^[a-z]+$/, "is not a ulimit name such as nofile"),
      Soft: z.number().int().min(-1).max(Number.MAX_SAFE_INTEGER),
      Hard: z.number().int().min(-1).max(Number.MAX_SAFE_INTEGER),
    }),
  )
  .max(50);

/** Stop grace period in nanoseconds, as Docker takes it. */
export const stopGracePeriodSwarmSchema = nanoseconds;

/** A Traefik entry point name (customEntrypoint). */
export const entrypointNameSchema = z
  .string()
  .trim()
  .min(1, "must not be empty")
  .max(100)
  .regex(/^[A-Za-z0-9][A-Za-z0-9_-]*$/, "is not an entry point name such as web or websecure");

/** A Traefik middleware reference: `name` or `name@provider`. */
export const middlewareNameSchema = z
  .string()
  .trim()
  .min(1, "must not be empty")
  .max(200)
  .regex(/^[A-Za-z0-9][A-Za-z0-9_.-]*(?:@[a-z][a-z0-9-]*)?$/, "is not a middleware name such as auth@file");

/** The Swarm fields of an application's or a database's update input (null clears one). */
export const swarmUpdateFields = {
  replicas: z.number().int().min(1).max(100).optional(),
  healthCheckSwarm: healthCheckSwarmSchema.nullish(),
  restartPolicySwarm: restartPolicySwarmSchema.nullish(),
  placementSwarm: placementSwarmSchema.nullish(),
  updateConfigSwarm: updateConfigSwarmSchema.nullish(),
  rollbackConfigSwarm: updateConfigSwarmSchema.nullish(),
  modeSwarm: modeSwarmSchema.nullish(),
  labelsSwarm: labelsSwarmSchema.nullish(),
  networkSwarm: networkSwarmSchema.nullish(),
  stopGracePeriodSwarm: stopGracePeriodSwarmSchema.nullish(),
  endpointSpecSwarm: endpointSpecSwarmSchema.nullish(),
  ulimitsSwarm: ulimitsSwarmSchema.nullish(),
};

/** The Swarm fields stored in JSON columns (written as JSON text). */
export const swarmJsonColumns: ReadonlySet<string> = new Set(
  Object.keys(swarmUpdateFields).filter((key) => key !== "replicas" && key !== "stopGracePeriodSwarm"),
);

const jsonObject = z.record(z.string(), z.unknown());

/**
 * The Swarm fields an application's or a database's `one` shows as they were stored (validated
 * by swarmUpdateFields), with Docker's names.
 */
export const swarmSpecDetailFields = {
  placementSwarm: jsonObject.nullable(),
  updateConfigSwarm: jsonObject.nullable(),
  rollbackConfigSwarm: jsonObject.nullable(),
  modeSwarm: jsonObject.nullable(),
  labelsSwarm: z.record(z.string(), z.string()).nullable(),
  networkSwarm: z.array(jsonObject).nullable(),
  stopGracePeriodSwarm: z.number().nullable(),
  endpointSpecSwarm: jsonObject.nullable(),
  ulimitsSwarm: z.array(jsonObject).nullable(),
};
