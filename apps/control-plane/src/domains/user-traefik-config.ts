/**
 * The tenant rules of the shared proxy: anyone but the instance administrator may only route the
 * application's own hosts to the application's own service, through the application's own
 * middlewares, on web/websecure. The rules themselves are @platform/traefik-config's pure
 * functions (userConfigIssues for application.updateTraefikConfig's files; the same
 * userMiddlewareReferenceProblem and userEntryPointProblem for domain.middlewares and
 * domain.customEntrypoint). A refused file is a 400 naming `traefikConfig` with each offending key
 * path in `issues`; a refused domain field a 400 naming it.
 */
import {
  type NamespaceScope,
  parseDynamicConfig,
  userConfigIssues,
  userEntryPointProblem,
  userMiddlewareReferenceProblem,
} from "@platform/traefik-config";
import type { Caller, ServiceContext } from "../context.ts";
import type { Db } from "../db/database.ts";
import type { Application, Domain } from "../db/schema.ts";
import { badRequest } from "../errors.ts";
import { isInstanceAdmin } from "../organizations/instance.ts";
import { invalidTraefikConfig } from "../proxy/sync.ts";
import { listApplicationDomains } from "./repository.ts";

/** The application's namespace on the proxy: its appName, minus the longer appNames sharing its prefix. */
async function namespaceOf(db: Db, appName: string): Promise<NamespaceScope> {
  const longer = await db
    .selectFrom("applications")
    .select("appName")
    .where("appName", "like", `${appName.replace(/[\\%_]/g, "\\$&")}-%`)
    .execute();
  return { appName, longerAppNames: longer.map((row) => row.appName) };
}

export async function checkUserTraefikConfig(
  ctx: ServiceContext,
  caller: Caller,
  application: Pick<Application, "applicationId" | "appName">,
  traefikConfig: string,
): Promise<void> {
  const parsed = parseDynamicConfig(traefikConfig);
  if (!parsed.ok) throw invalidTraefikConfig(parsed.errors);
  if (await isInstanceAdmin(ctx.db, caller)) return;
  const hosts = (await listApplicationDomains(ctx.db, application.applicationId)).map(
    (domain) => domain.host,
  );
  const issues = userConfigIssues(parsed.config, {
    ...(await namespaceOf(ctx.db, application.appName)),
    hosts,
  });
  if (issues.length > 0) throw invalidTraefikConfig(issues);
}

/**
 * domain.create / update: a tenant's domain may only add the application's own middlewares and
 * listen on web/websecure. Values the domain already has (`stored`, set by the instance
 * administrator) stay allowed, so a form sent back whole is not refused for them.
 */
export async function checkUserDomainRouting(
  ctx: ServiceContext,
  caller: Caller,
  application: Pick<Application, "appName">,
  domain: Pick<Domain, "customEntrypoint" | "middlewares">,
  stored: Pick<Domain, "customEntrypoint" | "middlewares"> | null,
): Promise<void> {
  const newMiddlewares = domain.middlewares
    .map((name, index) => ({ name, index }))
    .filter(({ name }) => !stored?.middlewares.includes(name));
  const newEntrypoint =
    domain.customEntrypoint !== null && domain.customEntrypoint !== stored?.customEntrypoint;
  if ((newMiddlewares.length === 0 && !newEntrypoint) || (await isInstanceAdmin(ctx.db, caller))) return;
  if (newEntrypoint) {
    const problem = userEntryPointProblem(domain.customEntrypoint);
    if (problem) {
      throw badRequest(`Invalid input: customEntrypoint: ${problem}`, { fields: ["customEntrypoint"] });
    }
  }
  const namespace = await namespaceOf(ctx.db, application.appName);
  for (const { name, index } of newMiddlewares) {
    const problem = userMiddlewareReferenceProblem(name, namespace);
    if (problem) {
      throw badRequest(`Invalid input: middlewares.${index}: ${problem}`, {
        fields: [`middlewares.${index}`],
      });
    }
  }
}
