/**
 * Validation of names that reach Docker or the file system (container ids and names, app
 * names, label keys): the project-wide pattern ^[a-zA-Z0-9.\-_]+$. The control plane and the
 * agent use these same functions, so both refuse the same names.
 */

/** The pattern every container id, container/app name and label key must match. */
export const NAME_PATTERN = /^[a-zA-Z0-9.\-_]+$/;

/** Pattern of server ids, which become NATS subject tokens (no dots). */
export const SERVER_ID_PATTERN = /^[a-zA-Z0-9_-]+$/;

/** Pattern of the NATS URL an agent connects to (nats://, tls://, ws:// or wss://). */
export const NATS_URL_PATTERN = /^(nats|tls|ws|wss):\/\/\S+$/;

/*
 * Docker image references (`[domain[:port]/]path[:tag][@digest]`) by the grammar of the engine's
 * reference package (distribution/reference), so that the control plane and the agent refuse
 * what the engine would refuse, before anything is changed.
 */
const alphanumeric = "[a-z0-9]+";
const separator = "(?:[._]|__|[-]+)";
const pathComponent = `${alphanumeric}(?:${separator}${alphanumeric})*`;
const domainComponent = "(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])";
const host = `(?:${domainComponent}(?:\\.${domainComponent})*|\\[[a-fA-F0-9:]+\\])`;
const imageName = `(?:${host}(?::[0-9]+)?/)?${pathComponent}(?:/${pathComponent})*`;
const tag = "[\\w][\\w.-]{0,127}";
const digest = "[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}";

/** A whole image reference; group 1 is its name (without tag and digest). */
export const IMAGE_REFERENCE_PATTERN = new RegExp(`^(${imageName})(?::${tag})?(?:@${digest})?$`);

/** The engine refuses image names longer than this. */
const MAX_IMAGE_NAME_LENGTH = 255;

export function isImageReference(reference: unknown): reference is string {
  if (typeof reference !== "string") return false;
  const match = IMAGE_REFERENCE_PATTERN.exec(reference);
  return match !== null && (match[1] ?? "").length <= MAX_IMAGE_NAME_LENGTH;
}

/**
 * True when `name` matches NAME_PATTERN and is not made of dots only ("." and ".." would walk
 * out of a directory when a name becomes a path).
 */
export function isValidName(name: unknown): name is string {
  return typeof name === "string" && NAME_PATTERN.test(name) && !/^\.+$/.test(name);
}

/** Thrown when a name or id is refused by the validation above. */
export class InvalidNameError extends Error {
  constructor(what: string, value: unknown, pattern: RegExp = NAME_PATTERN) {
    const shown = typeof value === "string" ? JSON.stringify(value.slice(0, 80)) : typeof value;
    super(`invalid ${what} ${shown}: it must match ${pattern.source}`);
    this.name = "InvalidNameError";
  }
}

/** Returns `name` when valid, throws InvalidNameError otherwise; `what` names it in the message. */
export function assertValidName(name: unknown, what = "name"): string {
  if (!isValidName(name)) throw new InvalidNameError(what, name);
  return name;
}

export function isValidServerId(serverId: unknown): serverId is string {
  return typeof serverId === "string" && SERVER_ID_PATTERN.test(serverId);
}

/** Returns `serverId` when it matches SERVER_ID_PATTERN, throws otherwise. */
export function assertValidServerId(serverId: unknown): string {
  if (!isValidServerId(serverId)) throw new InvalidNameError("server id", serverId, SERVER_ID_PATTERN);
  return serverId;
}

/*
 * The appName rule, shared by the control plane (a 400 naming appName) and the agent
 * (INVALID_ARGUMENT): an appName becomes a Swarm service name, a DNS label, a directory and a
 * file name, and an argument of docker and git. It starts with a letter or digit (no `-`, `.`,
 * so never an option or a hidden or parent directory), has no `..`, and at most 63 characters
 * (the longest DNS label). Names the platform uses for itself start with RESERVED_NAME_PREFIX.
 */
export const APP_NAME_PATTERN = /^[a-zA-Z0-9][a-zA-Z0-9._-]*$/;
export const APP_NAME_MAX_LENGTH = 63;
export const RESERVED_NAME_PREFIX = "platform-";

/** Why `name` is not a valid appName, or null when it is one. */
export function appNameProblem(name: unknown): string | null {
  if (typeof name !== "string" || name.length === 0) return "must not be empty";
  if (name.length > APP_NAME_MAX_LENGTH) return `must be at most ${APP_NAME_MAX_LENGTH} characters`;
  if (!APP_NAME_PATTERN.test(name))
    return "must start with a letter or digit and contain only letters, digits, '.', '-' and '_'";
  if (name.includes("..")) return "must not contain '..'";
  if (name.toLowerCase().startsWith(RESERVED_NAME_PREFIX))
    return `must not start with '${RESERVED_NAME_PREFIX}' (reserved for the platform's own services)`;
  return null;
}

export function isValidAppName(name: unknown): name is string {
  return appNameProblem(name) === null;
}

/**
 * True when `name` may name an existing service, directory or file: valid under the appName rule
 * of today or under the rule before it (same pattern and length, but '..' inside a name and the
 * 'platform-' prefix were allowed). Objects made under the old rule must still be observed,
 * stopped and torn down; only creation is held to appNameProblem.
 */
export function isExistingAppName(name: unknown): name is string {
  return (
    typeof name === "string" &&
    name.length > 0 &&
    name.length <= APP_NAME_MAX_LENGTH &&
    APP_NAME_PATTERN.test(name)
  );
}
