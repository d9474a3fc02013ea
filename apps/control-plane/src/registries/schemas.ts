/** Registries as the API accepts and shows them (spec 2.1, 4.6). The password is write-only. */
import { BlockList, isIP } from "node:net";
import { z } from "zod";
import { displayNameSchema } from "../display-name.ts";

export const registryTypes = ["cloud", "selfHosted"] as const;

/** RFC 1123 host names: dot-separated labels of letters, digits and inner hyphens. */
const HOSTNAME =
  /^(?=.{1,253}$)[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$/;

// Link-local (cloud metadata endpoints), unspecified and multicast addresses are never registries.
const refusedAddresses = new BlockList();
refusedAddresses.addSubnet("169.254.0.0", 16, "ipv4");
refusedAddresses.addSubnet("224.0.0.0", 4, "ipv4");
refusedAddresses.addAddress("0.0.0.0", "ipv4");
refusedAddresses.addSubnet("fe80::", 10, "ipv6");
refusedAddresses.addSubnet("ff00::", 8, "ipv6");
refusedAddresses.addAddress("::", "ipv6");

/**
 * A registry address as Docker names it in image references and logins: host[:port], lower case.
 * Accepts `host[:port][/path]` or an http(s) URL and keeps only host[:port] (Docker ignores the
 * path: `https://index.docker.io/v1/` logs in to index.docker.io); an explicit port is kept as
 * written, even a scheme's default. Otherwise the answer is why the value is refused.
 */
export function normalizeRegistryUrl(value: string): { address: string } | { problem: string } {
  if (value.length === 0) return { problem: "must not be empty" };
  if (/[\s\\@?#]/.test(value)) {
    return { problem: "must not contain whitespace, '\\', '@' (user info), '?' or '#'" };
  }
  if (value.split("/").includes("..")) return { problem: "must not contain '..' path segments" };
  const scheme = value.match(/^([a-zA-Z][a-zA-Z0-9+.-]*):\/\//)?.[1]?.toLowerCase();
  if (scheme !== undefined && scheme !== "http" && scheme !== "https") {
    return { problem: "must use http:// or https:// when it has a scheme" };
  }
  let url: URL;
  try {
    url = new URL(scheme === undefined ? `https://${value}` : value);
  } catch {
    return { problem: "must be a host[:port] or an http(s) URL such as registry.example.com:5000" };
  }
  const host = url.hostname.toLowerCase();
  const ip = host.startsWith("[") ? host.slice(1, -1) : host;
  const family = isIP(ip);
  if (family === 0 && !HOSTNAME.test(host)) return { problem: "has an invalid host name" };
  if (family !== 0 && refusedAddresses.check(ip, family === 6 ? "ipv6" : "ipv4")) {
    return { problem: "must not be a link-local, unspecified or multicast address" };
  }
  // URL drops a scheme's default port (http://host:80); Docker would then try https on 443.
  const authority = value.replace(/^[a-zA-Z][a-zA-Z0-9+.-]*:\/\//, "").split("/")[0] ?? "";
  const port = authority.match(/:(\d+)$/)?.[1];
  return { address: port ? `${host}:${Number(port)}` : host };
}

export const registryUrlSchema = z
  .string()
  .max(512)
  .transform((value, context) => {
    const result = normalizeRegistryUrl(value);
    if ("problem" in result) {
      context.addIssue({ code: "custom", message: result.problem });
      return z.NEVER;
    }
    return result.address;
  });

/** Docker repository path components (`team` or `org/team`), as they prefix image names; "" clears. */
const PATH_COMPONENT = "[a-z0-9]+(?:(?:\\.|_|__|-+)[a-z0-9]+)*";
export const imagePrefixSchema = z
  .string()
  .trim()
  .max(255)
  .regex(
    new RegExp(`^(?:${PATH_COMPONENT}(?:/${PATH_COMPONENT})*)?$`),
    "must be a Docker repository path such as myteam or org/team (lower case)",
  );

const registryNameSchema = displayNameSchema;
/** Usernames and passwords go to the Docker Engine as JSON, never through a shell. */
const usernameSchema = z
  .string()
  .min(1, "must not be empty")
  .max(255)
  .regex(/^[^\s\p{Cc}]+$/u, "must not contain whitespace or control characters");
// Long enough for a Google service-account JSON key (`_json_key`), whose newlines are kept.
const passwordSchema = z
  .string()
  .min(1, "must not be empty")
  .max(10_000)
  .refine((value) => !value.includes("\0"), { message: "must not contain NUL characters" });

export const idSchema = z.string().min(1).max(100);

export const createRegistryInput = z.object({
  registryName: registryNameSchema,
  registryUrl: registryUrlSchema,
  username: usernameSchema,
  password: passwordSchema,
  registryType: z.enum(registryTypes).default("cloud"),
  imagePrefix: imagePrefixSchema.nullish(),
});

export const updateRegistryInput = z.object({
  registryId: idSchema,
  registryName: registryNameSchema.optional(),
  registryUrl: registryUrlSchema.optional(),
  username: usernameSchema.optional(),
  password: passwordSchema.optional(),
  registryType: z.enum(registryTypes).optional(),
  imagePrefix: imagePrefixSchema.nullish(),
});

export const registryIdInput = z.object({ registryId: idSchema });

export const testRegistryInput = z.object({
  registryName: registryNameSchema.optional(),
  registryUrl: registryUrlSchema,
  username: usernameSchema,
  password: passwordSchema,
  registryType: z.enum(registryTypes).optional(),
  imagePrefix: imagePrefixSchema.nullish(),
  serverId: idSchema.optional(),
});

/** A registry as every response shows it: never the password. */
export const registrySchema = z.object({
  registryId: z.string(),
  registryName: z.string(),
  registryUrl: z.string(),
  username: z.string(),
  imagePrefix: z.string().nullable(),
  registryType: z.enum(registryTypes),
  organizationId: z.string(),
  createdAt: z.string(),
});
