/**
 * HashiCorp Vault (and OpenBao) KV version 2, read through the outbound guard: a secret's fields
 * (GET /v1/<mount>/data/<path>), the token's own lookup (connection test) and the listing of a
 * mount's keys (GET /v1/<mount>/metadata/<path>?list=true). The token travels in X-Vault-Token
 * (and the namespace in X-Vault-Namespace); no redirect is followed, so the token goes only to
 * the address that was checked. Errors name the URL's path and the status, never a value.
 */
import type { ServiceContext } from "../context.ts";
import { OutboundRefusedError } from "../outbound/guard.ts";
import { guardedGetText, OutboundFetchError } from "../outbound/http.ts";
import { checkUserTarget } from "../outbound/own-addresses.ts";

export interface HashicorpConfig {
  url: string;
  token: string;
  mount: string;
  namespace?: string | null;
}

/** What a vault call failed on, worded for a deployment's log or a 400 (no secret in it). */
export class VaultError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "VaultError";
  }
}

const TIMEOUT_MS = 15_000;
const MAX_BYTES = 1024 * 1024;

const encodePath = (path: string) =>
  path
    .split("/")
    .filter((part) => part !== "")
    .map(encodeURIComponent)
    .join("/");

const base = (config: HashicorpConfig) => config.url.replace(/\/+$/, "");

async function vaultGet(
  ctx: Pick<ServiceContext, "config" | "db">,
  organizationId: string,
  config: HashicorpConfig,
  path: string,
  what: string,
): Promise<unknown> {
  const headers: Record<string, string> = { "X-Vault-Token": config.token };
  if (config.namespace) headers["X-Vault-Namespace"] = config.namespace;
  let text: string;
  try {
    text = await guardedGetText(`${base(config)}${path}`, {
      allow: ctx.config.outboundAllow,
      timeoutMs: TIMEOUT_MS,
      maxBytes: MAX_BYTES,
      maxRedirects: 0,
      headers,
      // The vault is a URL a user named: it may not probe the platform's own machines.
      checkTarget: (target) =>
        checkUserTarget(ctx, organizationId, {
          host: target.hostname,
          port: Number(target.port || (target.protocol === "https:" ? 443 : 80)),
        }),
    });
  } catch (error) {
    if (error instanceof OutboundRefusedError) {
      throw new VaultError(
        `HashiCorp Vault: ${new URL(config.url).host} may not be reached: ${error.message}`,
      );
    }
    if (error instanceof OutboundFetchError) {
      const status = /answered HTTP (\d+)/.exec(error.message)?.[1];
      if (status === "403" || status === "401") {
        throw new VaultError(`HashiCorp Vault refused the token reading ${what} (HTTP ${status})`);
      }
      if (status === "404") throw new VaultError(`HashiCorp Vault: ${what} does not exist (HTTP 404)`);
      throw new VaultError(`HashiCorp Vault: reading ${what} failed: ${error.message}`);
    }
    throw error;
  }
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new VaultError(`HashiCorp Vault: the answer for ${what} is not JSON`);
  }
}

/** The fields of the KV v2 secret at `path` (the latest version). */
export async function readSecret(
  ctx: Pick<ServiceContext, "config" | "db">,
  organizationId: string,
  config: HashicorpConfig,
  path: string,
): Promise<Record<string, unknown>> {
  const body = (await vaultGet(
    ctx,
    organizationId,
    config,
    `/v1/${encodeURIComponent(config.mount)}/data/${encodePath(path)}`,
    `the secret "${path}"`,
  )) as { data?: { data?: Record<string, unknown> | null } } | null;
  const data = body?.data?.data;
  if (!data || typeof data !== "object") {
    throw new VaultError(`HashiCorp Vault: the secret "${path}" has no data (deleted or not KV v2)`);
  }
  return data;
}

/** Checks that the vault answers and accepts the token (auth/token/lookup-self). */
export async function testConnection(
  ctx: Pick<ServiceContext, "config" | "db">,
  organizationId: string,
  config: HashicorpConfig,
): Promise<void> {
  await vaultGet(ctx, organizationId, config, "/v1/auth/token/lookup-self", "the token's own lookup");
}

const MAX_DEPTH = 4;
const MAX_NAMES = 200;

/**
 * `path:field` of the mount's secrets, for an editor's autocomplete: folders walked at most
 * MAX_DEPTH deep, at most MAX_NAMES answered. A folder or secret that cannot be read is skipped.
 */
export async function listSecretNames(
  ctx: Pick<ServiceContext, "config" | "db">,
  organizationId: string,
  config: HashicorpConfig,
): Promise<string[]> {
  const names: string[] = [];
  const listKeys = async (folder: string): Promise<string[]> => {
    const suffix = folder === "" ? "" : `/${encodePath(folder)}`;
    const body = (await vaultGet(
      ctx,
      organizationId,
      config,
      `/v1/${encodeURIComponent(config.mount)}/metadata${suffix}?list=true`,
      `the folder "${folder || "/"}"`,
    )) as { data?: { keys?: unknown } } | null;
    const keys = body?.data?.keys;
    return Array.isArray(keys) ? keys.filter((key): key is string => typeof key === "string") : [];
  };
  const walk = async (folder: string, depth: number): Promise<void> => {
    if (depth > MAX_DEPTH) return;
    for (const key of await listKeys(folder).catch(() => [])) {
      if (names.length >= MAX_NAMES) return;
      const full = `${folder}${key}`;
      if (key.endsWith("/")) {
        await walk(full, depth + 1);
        continue;
      }
      const fields = await readSecret(ctx, organizationId, config, full).catch(() => ({}));
      for (const field of Object.keys(fields)) names.push(`${full}:${field}`);
    }
  };
  // A refused token or an unreachable vault is the caller's answer, not an empty list; an empty
  // mount (404) lists nothing.
  try {
    await listKeys("");
  } catch (error) {
    if (error instanceof VaultError && error.message.includes("(HTTP 404)")) return [];
    throw error;
  }
  await walk("", 0);
  return names.slice(0, MAX_NAMES);
}
