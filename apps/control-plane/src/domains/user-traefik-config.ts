/**
 * The tenant rule of application.updateTraefikConfig: anyone but the instance administrator may
 * only route the application's own hosts to the application's own service (the restriction
 * itself is @platform/traefik-config's userConfigIssues, a pure function). A refusal is a 400
 * naming `traefikConfig` with each offending key path in `issues`.
 */
import { parseDynamicConfig, userConfigIssues } from "@platform/traefik-config";
import type { Caller, ServiceContext } from "../context.ts";
import type { Application } from "../db/schema.ts";
import { isInstanceAdmin } from "../organizations/instance.ts";
import { invalidTraefikConfig } from "../proxy/sync.ts";
import { listApplicationDomains } from "./repository.ts";

export async function checkUserTraefikConfig(
  services: ServiceContext,
  caller: Caller,
  application: Pick<Application, "applicationId" | "appName">,
  traefikConfig: string,
): Promise<void> {
  const parsed = parseDynamicConfig(traefikConfig);
  if (!parsed.ok) throw invalidTraefikConfig(parsed.errors);
  if (await isInstanceAdmin(services.db, caller)) return;
  const hosts = (await listApplicationDomains(services.db, application.applicationId)).map(
    (domain) => domain.host,
  );
  const longer = await services.db
    .selectFrom("applications")
    .select("appName")
    .where("appName", "like", `${application.appName.replace(/[\\%_]/g, "\\$&")}-%`)
    .execute();
  const issues = userConfigIssues(parsed.config, {
    appName: application.appName,
    hosts,
    longerAppNames: longer.map((row) => row.appName),
  });
  if (issues.length > 0) throw invalidTraefikConfig(issues);
}
