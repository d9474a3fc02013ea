/**
 * application.one's answers, kept per application already checked against the output schema
 * and serialized (db/notified-cache.ts), with the place (organization, project, environment) the
 * caller's access is checked against before the bytes are served. Triggers NOTIFY
 * `platform_application_details` on any write to a table the answer reads (migration
 * 20261127-10-application-detail-invalidation, redirects since 20261204-30). Secrets never enter an answer: the view drops the
 * sealed fields and a credential's password is shown empty, whether cached or not.
 */
import { z } from "zod";
import type { Db, Notifications } from "../db/database.ts";
import { NotifiedCache, tablesWithTrigger } from "../db/notified-cache.ts";
import { listDeployments, toDeploymentView } from "../deployments/repository.ts";
import { listApplicationCredentials, listApplicationDomains } from "../domains/repository.ts";
import { domainSchema, securitySchema, toDomainView, toSecurityView } from "../domains/schemas.ts";
import { findProvider, PROVIDER_ID_FIELD } from "../git-providers/repository.ts";
import { PreparedOutput } from "../procedure.ts";
import { listApplicationRedirects } from "../redirects/repository.ts";
import { redirectSchema } from "../redirects/schemas.ts";
import { findApplication, listApplicationPorts } from "./repository.ts";
import { applicationDetailSchema, portSchema } from "./schemas.ts";
import { toApplicationView } from "./views.ts";

export const APPLICATION_DETAIL_CHANNEL = "platform_application_details";
const TRIGGER_SUFFIX = "notify_application_details";

/** Every table application.one's answer is read from (each has the trigger). */
export const APPLICATION_DETAIL_TABLES = [
  "applications",
  "environments",
  "projects",
  "deployments",
  "database_services",
  "domains",
  "ports",
  "security",
  "git_providers",
  "redirects",
] as const;

export const applicationOneSchema = applicationDetailSchema.extend({
  domains: z.array(domainSchema),
  ports: z.array(portSchema),
  security: z.array(securitySchema),
  redirects: z.array(redirectSchema),
});
export type ApplicationOne = z.output<typeof applicationOneSchema>;

/** An application's answer with where it lives, for the caller's access check. */
export interface ApplicationDetail {
  organizationId: string;
  service: { serviceId: string; environmentId: string; projectId: string };
  answer: PreparedOutput<ApplicationOne>;
}

/** The tables that have the invalidation trigger, as the database says. */
export function tablesNotifyingApplicationDetails(db: Db): Promise<Set<string>> {
  return tablesWithTrigger(db, TRIGGER_SUFFIX);
}

/** The answer of application.one read from the database; undefined when not in the organization. */
export async function loadApplicationDetail(
  db: Db,
  organizationId: string,
  applicationId: string,
): Promise<ApplicationDetail | undefined> {
  const located = await findApplication(db, organizationId, applicationId);
  if (!located) return undefined;
  const { organizationId: _o, projectId, projectName, environmentName, ...application } = located;
  // The five lists do not depend on each other: one round trip's wait, not five.
  const [deployments, domains, ports, security, redirects] = await Promise.all([
    listDeployments(db, organizationId, { applicationId }),
    listApplicationDomains(db, applicationId),
    listApplicationPorts(db, applicationId),
    listApplicationCredentials(db, applicationId),
    listApplicationRedirects(db, applicationId),
  ]);
  const answer = PreparedOutput.of(applicationOneSchema, {
    ...toApplicationView(application),
    environment: {
      environmentId: application.environmentId,
      name: environmentName,
      project: { projectId, name: projectName },
    },
    deployments: deployments.map(toDeploymentView),
    domains: domains.map(toDomainView),
    ports,
    security: security.map(toSecurityView),
    redirects,
    ...(await gitProviderAccess(db, organizationId, application)),
  });
  return {
    organizationId,
    service: { serviceId: applicationId, environmentId: application.environmentId, projectId },
    answer,
  };
}

/**
 * Whether the application's Git provider connection is usable: providers belong to the
 * organization, so it is when the provider the source names exists in it; a github, gitlab,
 * bitbucket or gitea source whose provider id names no provider of the organization is not, and
 * unauthorizedProvider names the kind.
 */
async function gitProviderAccess(
  db: Db,
  organizationId: string,
  application: { sourceType: string } & Record<string, unknown>,
): Promise<{ hasGitProviderAccess: boolean; unauthorizedProvider: string | null }> {
  const kind = application.sourceType;
  if (kind !== "github" && kind !== "gitlab" && kind !== "bitbucket" && kind !== "gitea") {
    return { hasGitProviderAccess: true, unauthorizedProvider: null };
  }
  const providerId = application[PROVIDER_ID_FIELD[kind]];
  // No provider chosen (a new application, or one disconnected by gitProvider.remove): nothing to lack.
  const found =
    typeof providerId !== "string" ||
    (await findProvider(db, organizationId, kind, providerId)) !== undefined;
  return found
    ? { hasGitProviderAccess: true, unauthorizedProvider: null }
    : { hasGitProviderAccess: false, unauthorizedProvider: kind };
}

export class ApplicationDetailCache {
  private readonly cache = new NotifiedCache<ApplicationDetail>({
    readTables: () => APPLICATION_DETAIL_TABLES,
    sizeOf: (detail) => detail.answer.json.length,
    maxBytes: 8 * 1024 * 1024,
  });

  /** Starts trusting the cache once `notifications` tell about writes to `notifyingTables`. */
  attach(notifications: Notifications, notifyingTables: ReadonlySet<string>): void {
    this.cache.attach(notifications, notifyingTables);
  }

  invalidate(): void {
    this.cache.invalidate();
  }

  /**
   * The application of `organizationId` with its lists, current as of this call; undefined when
   * the organization has no such application. The caller's access is not checked here.
   */
  async get(db: Db, organizationId: string, applicationId: string): Promise<ApplicationDetail | undefined> {
    const detail = await this.cache.get(applicationId, () =>
      loadApplicationDetail(db, organizationId, applicationId),
    );
    // Kept by application id: another organization's caller gets nothing from the entry.
    if (detail && detail.organizationId !== organizationId) return undefined;
    return detail;
  }

  /** Whether a current answer for `applicationId` is kept (for tests and diagnostics). */
  holds(applicationId: string): boolean {
    return this.cache.holds(applicationId);
  }
}
