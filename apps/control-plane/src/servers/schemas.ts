/** Servers and SSH keys as the API shows and accepts them (spec 2.5, 4.8). */
import { isIP } from "node:net";
import { metricsConfigSchema } from "@platform/agent-protocol";
import { z } from "zod";
import { displayNameSchema } from "../display-name.ts";

export const idSchema = z.string().min(1).max(100);

/** Names of servers and SSH keys: the one display-name rule. */
export const nameSchema = displayNameSchema;
/** Descriptions: at most 1000 characters; null clears one on update. */
export const descriptionSchema = z.string().trim().max(1000).nullish();

/** RFC 1123 host names: dot-separated labels of letters, digits and inner hyphens. */
const HOSTNAME_PATTERN =
  /^(?=.{1,253}$)[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?(?:\.[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?)*$/;

/** An IPv4/IPv6 address or a host name; nothing else (no shell metacharacters, no URLs). */
export const ipAddressSchema = z
  .string()
  .trim()
  .refine((value) => isIP(value) !== 0 || HOSTNAME_PATTERN.test(value), {
    message: "must be an IP address or a host name",
  });

/**
 * A POSIX user name as Debian's adduser accepts it: starts with a letter or underscore, then
 * letters, digits, `.`, `_` or `-`, at most 32 characters.
 */
export const usernameSchema = z
  .string()
  .trim()
  .regex(/^[a-z_][a-z0-9._-]{0,31}$/, "must be a POSIX user name (for example root or deploy)");

export { portSchema } from "@platform/traefik-config";
export const serverTypeSchema = z.enum(["deploy", "build"]);

export const serverSchema = z.object({
  serverId: z.string(),
  organizationId: z.string(),
  name: z.string(),
  description: z.string().nullable(),
  ipAddress: z.string(),
  port: z.number().int(),
  username: z.string(),
  sshKeyId: z.string().nullable(),
  serverType: serverTypeSchema,
  serverStatus: z.enum(["inactive", "active"]),
  createdAt: z.string(),
  /** Services (applications, databases, compose stacks) placed on this server. */
  totalSum: z.number().int(),
  /** True while the agent's last heartbeat is recent. */
  online: z.boolean(),
  lastHeartbeatAt: z.string().nullable(),
  agentVersion: z.string().nullable(),
  enrolledAt: z.string().nullable(),
  /** SHA256:… fingerprint of the SSH host key trusted at the first setup. */
  hostKeyFingerprint: z.string().nullable(),
  /** Whether the daily Docker cleanup runs on this server (settings.updateDockerCleanup). */
  enableDockerCleanup: z.boolean(),
  /** Deployments built on this server at once (server.updateBuildsConcurrency); null: no own limit. */
  buildsConcurrency: z.number().int().nullable(),
});

/**
 * server.one also shows the output of the last setup run and the monitoring configuration
 * (null until set up; the token `[redacted]` for members).
 */
export const serverDetailSchema = serverSchema.extend({
  setupLog: z.string(),
  metricsConfig: metricsConfigSchema.nullable(),
});

export type ServerView = z.input<typeof serverSchema>;

const toolStatusSchema = z.object({ enabled: z.boolean(), version: z.string().nullable() });

/** A CLI builder: installed or not, and when not, what to do (`fix`, as a deploy needing it says). */
const builderStatusSchema = toolStatusSchema.extend({ fix: z.string().nullable() });

/** server.validate (spec 2.5, with the product-name part of the network flag as `Platform`). */
export const validateResultSchema = z.object({
  docker: toolStatusSchema,
  rclone: toolStatusSchema,
  nixpacks: builderStatusSchema,
  buildpacks: builderStatusSchema,
  railpack: builderStatusSchema,
  isPlatformNetworkInstalled: z.boolean(),
  isSwarmInstalled: z.boolean(),
  isMainDirectoryInstalled: z.boolean(),
  /** The docker CLI's buildx plugin (multi-architecture builds need it). */
  buildx: toolStatusSchema,
  /** `docker compose` (v2), else `docker-compose` (v1): stacks of composeType docker-compose deploy with it. */
  compose: toolStatusSchema,
});

/** server.security (spec 2.5). */
export const securityResultSchema = z.object({
  ufw: z.object({ installed: z.boolean(), active: z.boolean(), defaultIncoming: z.string() }),
  ssh: z.object({
    enabled: z.boolean(),
    keyAuth: z.boolean(),
    permitRootLogin: z.string(),
    passwordAuth: z.string(),
    usePam: z.string(),
  }),
  nonRootUser: z.object({ hasValidSudoUser: z.boolean() }),
  unattendedUpgrades: z.object({
    installed: z.boolean(),
    active: z.boolean(),
    updateEnabled: z.number(),
    upgradeEnabled: z.number(),
  }),
  fail2ban: z.object({
    installed: z.boolean(),
    enabled: z.boolean(),
    active: z.boolean(),
    sshEnabled: z.string(),
    sshMode: z.string(),
  }),
});

export const sshKeyTypeSchema = z.enum(["rsa", "ed25519"]);

/** An SSH key as every response shows it: the private key never leaves the control plane. */
export const sshKeySchema = z.object({
  sshKeyId: z.string(),
  organizationId: z.string(),
  name: z.string(),
  description: z.string().nullable(),
  publicKey: z.string(),
  lastUsedAt: z.string().nullable(),
  createdAt: z.string(),
});

/** Key text as pasted: at most 16 KiB (an RSA 16384 private key is ~12 KiB). */
export const keyTextSchema = z.string().trim().min(1, "must not be empty").max(16_384);
