/**
 * Validation of what users type and the generator puts into Traefik rules, names and YAML:
 * hosts, paths, ports, certificate resolver names and Basic-auth credentials. Each check returns
 * the problem as a sentence (or undefined when the value is fine), so the routers can use them
 * as zod refinements (the zod schemas below) and the generator can refuse the same values.
 */
import { domainToASCII } from "node:url";
import { z } from "zod";

export const MAX_HOST_LENGTH = 253;
export const MAX_LABEL_LENGTH = 63;
export const MAX_PATH_LENGTH = 1024;
export const MAX_USERNAME_LENGTH = 255;
export const MAX_PASSWORD_LENGTH = 1024;

const WILDCARD_PREFIX = "*.";

/** One DNS label in ASCII (punycode) form: letters, digits, inner hyphens. */
const ASCII_LABEL = /^[a-z0-9](?:[a-z0-9-]*[a-z0-9])?$/;

/**
 * Characters refused in a host before any IDN mapping: everything that ends a Traefik rule value
 * or a YAML scalar, separates hosts, or belongs to a URL rather than a host.
 */
const HOST_FORBIDDEN = /[\s`'"(),;#&|!\\/:@?%[\]{}<>=*^$~+]/u;

/** Characters a routing path may hold: RFC 3986 path characters minus quotes, parentheses, comma. */
const PATH_ALLOWED = /^\/[A-Za-z0-9\-._~!$&*+;=:@%/]*$/;

/** C0 and C1 control characters and DEL. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: refusing control characters is the point
const CONTROL_CHARACTERS = /[\u0000-\u001f\u007f-\u009f]/u;

/** A wildcard host is `*.` followed by a host name: `*.example.com` */
export function isWildcardHost(host: string): boolean {
  return host.startsWith(WILDCARD_PREFIX);
}

/**
 * The host in the ASCII form Traefik routes on: internationalized labels become punycode
 * (`bücher.example` -> `xn--bcher-kva.example`), letters lower case; a wildcard keeps its `*.`.
 * Throws when the host is invalid (see hostProblem).
 */
export function hostToAscii(host: string): string {
  const problem = hostProblem(host);
  if (problem) throw new Error(`invalid host ${JSON.stringify(host.slice(0, 80))}: ${problem}`);
  return asciiHost(host)!;
}

function asciiHost(host: string): string | undefined {
  const wildcard = isWildcardHost(host);
  const name = wildcard ? host.slice(WILDCARD_PREFIX.length) : host;
  const ascii = domainToASCII(name);
  if (!ascii) return undefined;
  return wildcard ? `${WILDCARD_PREFIX}${ascii}` : ascii;
}

/** Why `host` cannot be routed, or undefined when it can. */
export function hostProblem(host: string): string | undefined {
  if (host.length === 0) return "must not be empty";
  if (host.length > MAX_HOST_LENGTH) return `must be at most ${MAX_HOST_LENGTH} characters`;
  if (CONTROL_CHARACTERS.test(host)) return "must not contain control characters such as a newline";
  const name = isWildcardHost(host) ? host.slice(WILDCARD_PREFIX.length) : host;
  if (name.includes("*")) return "a wildcard is only allowed as a leading `*.`";
  if (HOST_FORBIDDEN.test(name)) {
    return "must be a host name: letters, digits, hyphens and dots only (no spaces, quotes, brackets, backticks, `/`, `:` or `#`)";
  }
  const ascii = asciiHost(host);
  if (!ascii) return "is not a valid (internationalized) domain name";
  const asciiName = isWildcardHost(ascii) ? ascii.slice(WILDCARD_PREFIX.length) : ascii;
  if (asciiName.length > MAX_HOST_LENGTH) {
    return `must be at most ${MAX_HOST_LENGTH} characters in punycode form`;
  }
  for (const label of asciiName.split(".")) {
    if (label.length === 0) return "must not contain empty labels (leading, trailing or double dots)";
    if (label.length > MAX_LABEL_LENGTH) return `labels must be at most ${MAX_LABEL_LENGTH} characters`;
    if (!ASCII_LABEL.test(label)) {
      return "labels must hold letters, digits and inner hyphens only";
    }
  }
  return undefined;
}

/** Why a wildcard host cannot use this certificate type, or undefined. */
export function wildcardCertificateProblem(host: string, certificateType: string): string | undefined {
  if (isWildcardHost(host) && certificateType !== "custom") {
    return "a wildcard host needs a custom certificate (certificateType `custom`)";
  }
  return undefined;
}

/**
 * Why `path` cannot be a routing path (domain path or internal path), or undefined. The empty
 * string is not a path here: callers treat "" and "/" alike as the root before asking.
 */
export function pathProblem(path: string): string | undefined {
  if (!path.startsWith("/")) return "must start with `/`";
  if (path.length > MAX_PATH_LENGTH) return `must be at most ${MAX_PATH_LENGTH} characters`;
  if (CONTROL_CHARACTERS.test(path)) return "must not contain control characters such as a newline";
  if (!PATH_ALLOWED.test(path)) {
    return "may hold letters, digits and - . _ ~ ! $ & * + ; = : @ % / only (no spaces, quotes, brackets, backticks, `#` or `?`)";
  }
  let decoded: string;
  try {
    decoded = decodeURIComponent(path);
  } catch {
    return "holds an invalid percent-encoding";
  }
  if (decoded.split("/").some((segment) => segment === "..")) return "must not contain a `..` segment";
  if (CONTROL_CHARACTERS.test(decoded)) return "must not percent-encode control characters";
  return undefined;
}

/** Why `port` is not a TCP port, or undefined. */
export function portProblem(port: number): string | undefined {
  if (!Number.isInteger(port) || port < 1 || port > 65535) return "must be an integer from 1 to 65535";
  return undefined;
}

/** Why `username` cannot be a Basic-auth user name (an htpasswd line is `user:hash`), or undefined. */
export function usernameProblem(username: string): string | undefined {
  if (username.length === 0) return "must not be empty";
  if (username.length > MAX_USERNAME_LENGTH) return `must be at most ${MAX_USERNAME_LENGTH} characters`;
  if (username.includes(":")) return "must not contain `:`";
  if (CONTROL_CHARACTERS.test(username)) return "must not contain control characters such as a newline";
  return undefined;
}

/** Why `password` cannot be a Basic-auth password, or undefined. */
export function passwordProblem(password: string): string | undefined {
  if (password.length === 0) return "must not be empty";
  if (password.length > MAX_PASSWORD_LENGTH) return `must be at most ${MAX_PASSWORD_LENGTH} characters`;
  return undefined;
}

/** A Traefik certificate resolver name (a key of certificatesResolvers). */
const RESOLVER_NAME = /^[A-Za-z0-9_-]{1,64}$/;

/** Why `name` cannot be a certificate resolver name, or undefined. */
export function certResolverProblem(name: string): string | undefined {
  return RESOLVER_NAME.test(name) ? undefined : "must match ^[A-Za-z0-9_-]{1,64}$";
}

function refined(problem: (value: string) => string | undefined) {
  return z.string().superRefine((value, ctx) => {
    const message = problem(value);
    if (message) ctx.addIssue({ code: "custom", message });
  });
}

/** zod schemas of the checks above, for the domain and security routers. */
export const hostSchema = refined(hostProblem);
export const pathSchema = refined(pathProblem);
export const portSchema = z.number().int().min(1).max(65535);
/** A directory or file as Traefik sees it: an absolute path without `..`. */
export const absolutePathSchema = z
  .string()
  .refine((path) => !pathProblem(path), "must be an absolute path without `..`");
export const usernameSchema = refined(usernameProblem);
export const passwordSchema = refined(passwordProblem);
export const certResolverSchema = refined(certResolverProblem);
