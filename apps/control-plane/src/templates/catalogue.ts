/**
 * The template catalogues (issue 23, item 7), in Dokploy's layout: `meta.json` (the list) and
 * `blueprints/<id>/docker-compose.yml` + `blueprints/<id>/template.toml`.
 *
 * - The built-in catalogue ships in the repository (apps/control-plane/templates/, which the
 *   production image carries with the rest of apps/) and is read from disk: it works offline.
 * - PLATFORM_TEMPLATES_URL (or a caller's `baseUrl`, checked as a user's target) adds a remote
 *   catalogue, fetched through the outbound guard (outbound/http.ts) with a timeout and a size
 *   cap and cached for CACHE_TTL_MS. A remote that fails is logged (URL and reason, never its
 *   body), remembered for FAILURE_TTL_MS so it does not slow every call, and answered with the
 *   built-in list: a broken remote never breaks the list.
 * - A remote id equal to a built-in one is the built-in (docs/decisions.md): the list shows the
 *   built-in entry and rendering uses the built-in files.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { Logger } from "pino";
import { z } from "zod";
import type { Config } from "../config.ts";
import type { ServiceContext } from "../context.ts";
import { guardedGetText } from "../outbound/http.ts";
import { checkUserTarget } from "../outbound/own-addresses.ts";
import { InvalidTemplateError, type RenderedTemplate, renderTemplateFiles } from "./render.ts";

export { InvalidTemplateError, type RenderedTemplate } from "./render.ts";

/** One entry of a catalogue's meta.json, as compose.templates answers it. */
export interface TemplateSummary {
  id: string;
  name: string;
  version: string;
  description: string;
  /** A URL (or data: URL for the built-in catalogue) a browser can show. */
  logo: string;
  links: { github?: string; website?: string; docs?: string };
  tags: string[];
}

export class TemplateNotFoundError extends Error {
  constructor(readonly templateId: string) {
    super(`Template ${templateId} not found`);
    this.name = "TemplateNotFoundError";
  }
}

/** What the catalogue needs of the platform: its settings, a logger and (for user URLs) the database. */
export type TemplateContext = {
  config: Pick<Config, "templatesUrl" | "templateImages" | "outboundAllow" | "port">;
  logger: Pick<Logger, "warn">;
} & Partial<Pick<ServiceContext, "db">>;

export interface CatalogueOptions {
  signal?: AbortSignal;
  /**
   * A catalogue the caller named (Dokploy's `baseUrl`), used in place of PLATFORM_TEMPLATES_URL;
   * checked as a user's target (own-address rule) for `organizationId`.
   */
  baseUrl?: string;
  organizationId?: string;
  /** The deadline of each fetch (default FETCH_TIMEOUT_MS); a request's own deadline may be shorter. */
  timeoutMs?: number;
}

export const CACHE_TTL_MS = 10 * 60_000;
export const FAILURE_TTL_MS = 60_000;
export const FETCH_TIMEOUT_MS = 10_000;
export const MAX_META_BYTES = 4 * 1024 * 1024;
export const MAX_BLUEPRINT_FILE_BYTES = 1024 * 1024;

const BUILT_IN_DIRECTORY = fileURLToPath(new URL("../../templates/", import.meta.url));
/** Ids are path segments of the catalogue's URLs and directories. */
export const TEMPLATE_ID = /^[a-z0-9][a-z0-9._-]{0,99}$/i;

const metaEntrySchema = z.object({
  id: z.string().regex(TEMPLATE_ID),
  name: z.string().min(1).max(200),
  version: z.coerce.string().max(100).default("latest"),
  description: z.string().max(5000).default(""),
  logo: z.string().max(2000).default(""),
  links: z
    .object({
      github: z.string().max(2000).optional(),
      website: z.string().max(2000).optional(),
      docs: z.string().max(2000).optional(),
    })
    .default({}),
  tags: z.array(z.string().max(100)).max(50).default([]),
});

function summaryOf(entry: z.infer<typeof metaEntrySchema>, logo: string): TemplateSummary {
  const links: TemplateSummary["links"] = {};
  for (const key of ["github", "website", "docs"] as const) {
    const link = entry.links[key];
    if (link !== undefined && /^https?:\/\//.test(link)) links[key] = link;
  }
  return {
    id: entry.id,
    name: entry.name,
    version: entry.version,
    description: entry.description,
    logo,
    links,
    tags: entry.tags,
  };
}

// ---------------------------------------------------------------- built-in catalogue

let builtIn: TemplateSummary[] | undefined;

/** The built-in catalogue (read once; a broken entry is a bug of this repository and throws). */
export function builtInTemplates(): TemplateSummary[] {
  if (builtIn) return builtIn;
  const entries = z
    .array(metaEntrySchema)
    .parse(JSON.parse(readFileSync(path.join(BUILT_IN_DIRECTORY, "meta.json"), "utf8")));
  builtIn = entries.map((entry) => {
    let logo = entry.logo;
    if (entry.logo.endsWith(".svg") && !entry.logo.includes("/")) {
      const svg = readFileSync(path.join(BUILT_IN_DIRECTORY, "blueprints", entry.id, entry.logo));
      logo = `data:image/svg+xml;base64,${svg.toString("base64")}`;
    }
    return summaryOf(entry, logo);
  });
  return builtIn;
}

function builtInFiles(id: string): { composeFile: string; templateToml: string } {
  const directory = path.join(BUILT_IN_DIRECTORY, "blueprints", id);
  return {
    composeFile: readFileSync(path.join(directory, "docker-compose.yml"), "utf8"),
    templateToml: readFileSync(path.join(directory, "template.toml"), "utf8"),
  };
}

// ---------------------------------------------------------------- remote catalogues

interface CacheEntry<T> {
  expires: number;
  value?: T;
  error?: Error;
}
const cache = new Map<string, CacheEntry<unknown>>();
const MAX_CACHE_ENTRIES = 500;

/** Forgets every fetched catalogue and blueprint (a new PLATFORM_TEMPLATES_URL, tests). */
export function clearTemplateCache(): void {
  cache.clear();
}

/** A failure is remembered, except when the caller gave up (its own signal aborted): that says nothing of the remote. */
async function cached<T>(key: string, load: () => Promise<T>, signal?: AbortSignal): Promise<T> {
  const entry = cache.get(key) as CacheEntry<T> | undefined;
  if (entry && entry.expires > Date.now()) {
    if (entry.error) throw entry.error;
    return entry.value as T;
  }
  try {
    const value = await load();
    remember(key, { expires: Date.now() + CACHE_TTL_MS, value });
    return value;
  } catch (error) {
    if (!signal?.aborted) remember(key, { expires: Date.now() + FAILURE_TTL_MS, error: error as Error });
    throw error;
  }
}

function remember(key: string, entry: CacheEntry<unknown>): void {
  cache.delete(key);
  cache.set(key, entry);
  while (cache.size > MAX_CACHE_ENTRIES) cache.delete(cache.keys().next().value!);
}

/** The base URL of the remote catalogue to use: the caller's, else the configured one. */
function remoteBase(ctx: TemplateContext, options: CatalogueOptions): string | undefined {
  const base = options.baseUrl ?? ctx.config.templatesUrl;
  return base?.replace(/\/+$/, "");
}

function fetchText(ctx: TemplateContext, url: string, maxBytes: number, options: CatalogueOptions) {
  const { organizationId } = options;
  const userNamed = options.baseUrl !== undefined;
  return guardedGetText(url, {
    allow: ctx.config.outboundAllow,
    timeoutMs: options.timeoutMs ?? FETCH_TIMEOUT_MS,
    maxBytes,
    signal: options.signal,
    // A URL a user named may not probe the platform's own machines (outbound/own-addresses.ts).
    checkTarget:
      userNamed && organizationId !== undefined && ctx.db !== undefined
        ? (target) =>
            checkUserTarget({ config: ctx.config as Config, db: ctx.db! }, organizationId, {
              host: target.hostname,
              port: Number(target.port || (target.protocol === "https:" ? 443 : 80)),
            })
        : undefined,
  });
}

async function remoteList(ctx: TemplateContext, base: string, options: CatalogueOptions) {
  return cached(
    `meta ${base}`,
    async () => {
      const text = await fetchText(ctx, `${base}/meta.json`, MAX_META_BYTES, options);
      let parsed: unknown;
      try {
        parsed = JSON.parse(text);
      } catch {
        throw new Error(`${base}/meta.json is not JSON`);
      }
      if (!Array.isArray(parsed)) throw new Error(`${base}/meta.json is not a JSON array`);
      const summaries: TemplateSummary[] = [];
      for (const raw of parsed) {
        const entry = metaEntrySchema.safeParse(raw);
        if (!entry.success) continue; // one bad entry does not hide the others
        const logo = entry.data.logo;
        const logoUrl =
          logo === "" || /^https?:\/\//.test(logo)
            ? logo
            : `${base}/blueprints/${encodeURIComponent(entry.data.id)}/${logo.split("/").map(encodeURIComponent).join("/")}`;
        summaries.push(summaryOf(entry.data, logoUrl));
      }
      return summaries;
    },
    options.signal,
  );
}

function warnRemote(ctx: TemplateContext, base: string, error: unknown): void {
  // The reason only: the remote's body never reaches the log.
  ctx.logger.warn(
    { templatesUrl: base, reason: (error as Error).message },
    "the remote template catalogue is unavailable; answering with the built-in templates",
  );
}

/**
 * The templates: the built-in ones, then those of the remote catalogue whose ids are not
 * built-in. A remote that fails is logged and left out.
 */
export async function listTemplates(
  ctx: TemplateContext,
  options: CatalogueOptions = {},
): Promise<TemplateSummary[]> {
  const local = builtInTemplates();
  const base = remoteBase(ctx, options);
  if (base === undefined) return [...local];
  let remote: TemplateSummary[] = [];
  try {
    remote = await remoteList(ctx, base, options);
  } catch (error) {
    warnRemote(ctx, base, error);
  }
  const ids = new Set(local.map((template) => template.id));
  return [...local, ...remote.filter((template) => !ids.has(template.id))];
}

export interface RenderTemplateOptions extends CatalogueOptions {
  /** The host of the template's first domain; generated (generateHost) when absent. */
  domainHost?: string;
  generateHost: (serviceName: string) => string;
}

/**
 * Renders template `id` (built-in first, then the remote catalogue): its compose file with the
 * image overrides, env, domains and mounts. Throws TemplateNotFoundError or InvalidTemplateError.
 */
export async function renderTemplate(
  ctx: TemplateContext,
  id: string,
  options: RenderTemplateOptions,
): Promise<RenderedTemplate> {
  if (!TEMPLATE_ID.test(id)) throw new TemplateNotFoundError(id);
  const render = (files: { composeFile: string; templateToml: string }) =>
    renderTemplateFiles(id, files, {
      domainHost: options.domainHost,
      generateHost: options.generateHost,
      imageOverrides: ctx.config.templateImages,
    });
  if (builtInTemplates().some((template) => template.id === id)) return render(builtInFiles(id));
  const base = remoteBase(ctx, options);
  if (base === undefined) throw new TemplateNotFoundError(id);
  let listed: TemplateSummary[];
  try {
    listed = await remoteList(ctx, base, options);
  } catch (error) {
    warnRemote(ctx, base, error);
    throw new TemplateNotFoundError(id);
  }
  if (!listed.some((template) => template.id === id)) throw new TemplateNotFoundError(id);
  const files = await cached(
    `blueprint ${base} ${id}`,
    async () => {
      const directory = `${base}/blueprints/${encodeURIComponent(id)}`;
      const [composeFile, templateToml] = await Promise.all([
        fetchText(ctx, `${directory}/docker-compose.yml`, MAX_BLUEPRINT_FILE_BYTES, options),
        fetchText(ctx, `${directory}/template.toml`, MAX_BLUEPRINT_FILE_BYTES, options),
      ]);
      return { composeFile, templateToml };
    },
    options.signal,
  ).catch((error: Error) => {
    warnRemote(ctx, base, error);
    throw new InvalidTemplateError(
      id,
      `its files could not be fetched from the catalogue (${error.message})`,
    );
  });
  return render(files);
}
