/**
 * The `${…}` helpers of Dokploy's template.toml format (its blueprint catalogue), written for
 * this platform: every random value comes from node:crypto (a CSPRNG). The names and what each
 * yields follow Dokploy's documented helpers:
 *
 * | helper | yields |
 * |---|---|
 * | `domain` | a host for the template (the given one first, then generated ones) |
 * | `password`, `password:n` | n (16) characters of [A-Za-z0-9] |
 * | `base64`, `base64:n` | n (32) random bytes, base64 |
 * | `hash`, `hash:n` | n (8) hex characters |
 * | `uuid` | a random UUID v4 |
 * | `randomPort` | a port in 10000..32767 (below Linux's ephemeral range) |
 * | `email`, `username` | a random address at example.com, a random lower-case user name |
 * | `timestamp`, `timestampms`, `timestamps` | now in milliseconds (seconds for `timestamps`) |
 * | `timestampms:DATE`, `timestamps:DATE` | that date in milliseconds / seconds |
 * | `jwt`, `jwt:n` | a random token (n random bytes, hex; 32 without n) |
 * | `jwt:SECRET`, `jwt:SECRET:PAYLOAD` | an HS256 JWT signed with SECRET (a variable's value or the text), whose claims are PAYLOAD (a variable holding a JSON object, or the JSON itself) over `iat` (now) and `exp` (ten years on) |
 */
import { createHmac, randomBytes, randomInt, randomUUID } from "node:crypto";

/** A template asks for something this platform cannot give (unknown helper, bad argument). */
export class TemplateHelperError extends Error {}

const ALPHANUMERIC = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
const LOWER = "abcdefghijklmnopqrstuvwxyz";
/** No helper yields more than this many characters or bytes. */
export const MAX_HELPER_LENGTH = 4096;

/** `length` characters drawn uniformly from `alphabet` (randomInt rejects the modulo bias). */
export function randomString(length: number, alphabet = ALPHANUMERIC): string {
  let text = "";
  for (let index = 0; index < length; index++) text += alphabet[randomInt(alphabet.length)];
  return text;
}

export const generatePassword = (length = 16) => randomString(length);
export const generateBase64 = (bytes = 32) => randomBytes(bytes).toString("base64");
export const generateHash = (length = 8) =>
  randomBytes(Math.ceil(length / 2))
    .toString("hex")
    .slice(0, length);
export const generateRandomPort = () => randomInt(10000, 32768);
export const generateUsername = () => `${randomString(6, LOWER)}${randomString(4, "0123456789")}`;
export const generateEmail = () => `${generateUsername()}@example.com`;

const base64url = (data: Buffer | string) => Buffer.from(data).toString("base64url");
const TEN_YEARS_SECONDS = 10 * 365 * 24 * 3600;

/** An HS256 JWT over `payload` (its own iat/exp win over the defaults). */
export function signJwt(secret: string, payload: Record<string, unknown> = {}, now = Date.now()): string {
  const iat = Math.floor(now / 1000);
  const header = base64url(JSON.stringify({ alg: "HS256", typ: "JWT" }));
  const body = base64url(JSON.stringify({ iat, exp: iat + TEN_YEARS_SECONDS, ...payload }));
  const signature = createHmac("sha256", secret).update(`${header}.${body}`).digest("base64url");
  return `${header}.${body}.${signature}`;
}

/** The length argument of `name:n`, or `fallback` when absent; a bad one names the helper. */
function lengthArgument(helper: string, argument: string | undefined, fallback: number): number {
  if (argument === undefined) return fallback;
  if (!/^\d{1,4}$/.test(argument) || Number(argument) < 1 || Number(argument) > MAX_HELPER_LENGTH) {
    throw new TemplateHelperError(
      `\${${helper}:${argument}}: the length must be a whole number from 1 to ${MAX_HELPER_LENGTH}`,
    );
  }
  return Number(argument);
}

function dateArgument(helper: string, argument: string): number {
  const time = new Date(argument).getTime();
  if (argument.trim() === "" || Number.isNaN(time)) {
    throw new TemplateHelperError(`\${${helper}:${argument}}: ${JSON.stringify(argument)} is not a date`);
  }
  return time;
}

export interface HelperContext {
  /** A host for `${domain}` (the caller's given host first, then generated ones). */
  nextHost(): string;
  /** The value of a template variable, or undefined when there is none of that name. */
  variable(name: string): string | undefined;
  now(): number;
}

/** Helper names (the part before the first `:`). */
const HELPERS = new Set([
  "domain",
  "password",
  "base64",
  "hash",
  "uuid",
  "randomPort",
  "email",
  "username",
  "timestamp",
  "timestampms",
  "timestamps",
  "jwt",
]);

/** True when `expression` (the text between `${` and `}`) calls a helper. */
export function isHelper(expression: string): boolean {
  return HELPERS.has(expression.split(":", 1)[0]!);
}

/** The value of one helper call such as `password:32`; throws TemplateHelperError. */
export function callHelper(expression: string, context: HelperContext): string {
  const colon = expression.indexOf(":");
  const name = colon === -1 ? expression : expression.slice(0, colon);
  const argument = colon === -1 ? undefined : expression.slice(colon + 1);
  const noArgument = () => {
    if (argument !== undefined) throw new TemplateHelperError(`\${${expression}}: ${name} takes no argument`);
  };
  switch (name) {
    case "domain":
      noArgument();
      return context.nextHost();
    case "password":
      return generatePassword(lengthArgument(name, argument, 16));
    case "base64":
      return generateBase64(lengthArgument(name, argument, 32));
    case "hash":
      return generateHash(lengthArgument(name, argument, 8));
    case "uuid":
      noArgument();
      return randomUUID();
    case "randomPort":
      noArgument();
      return String(generateRandomPort());
    case "email":
      noArgument();
      return generateEmail();
    case "username":
      noArgument();
      return generateUsername();
    case "timestamp":
      noArgument();
      return String(context.now());
    case "timestampms":
      return String(argument === undefined ? context.now() : dateArgument(name, argument));
    case "timestamps":
      return String(
        Math.floor((argument === undefined ? context.now() : dateArgument(name, argument)) / 1000),
      );
    case "jwt":
      return jwtHelper(argument, context);
    default:
      throw new TemplateHelperError(`\${${expression}}: ${name} is not a helper`);
  }
}

/** `jwt`, `jwt:n`, `jwt:SECRET` and `jwt:SECRET:PAYLOAD` (see the table above). */
function jwtHelper(argument: string | undefined, context: HelperContext): string {
  if (argument === undefined) return randomBytes(32).toString("hex");
  if (/^\d{1,3}$/.test(argument)) return randomBytes(lengthArgument("jwt", argument, 32)).toString("hex");
  const colon = argument.indexOf(":");
  const secretName = colon === -1 ? argument : argument.slice(0, colon);
  const payloadText = colon === -1 ? undefined : argument.slice(colon + 1);
  if (secretName === "") throw new TemplateHelperError(`\${jwt:${argument}}: the secret is empty`);
  const secret = context.variable(secretName) ?? secretName;
  if (payloadText === undefined) return signJwt(secret, {}, context.now());
  const json = context.variable(payloadText) ?? payloadText;
  let payload: unknown;
  try {
    payload = JSON.parse(json);
  } catch {
    throw new TemplateHelperError(
      `\${jwt:${argument}}: the payload ${JSON.stringify(payloadText)} is neither a variable nor a JSON object`,
    );
  }
  if (typeof payload !== "object" || payload === null || Array.isArray(payload)) {
    throw new TemplateHelperError(`\${jwt:${argument}}: the payload must be a JSON object`);
  }
  return signJwt(secret, payload as Record<string, unknown>, context.now());
}
