/**
 * Applications as a service kind of environments (projects/workload-kinds.ts): their summaries in
 * project.one/all and environment.*, their copies in project.duplicate, their teardown before
 * an environment or project is removed, and their count per server (servers/service-count.ts).
 */
import { sql } from "kysely";
import { newId } from "../crypto/ids.ts";
import type { SecretBox } from "../crypto/secret-box.ts";
import { type Db, isoTimestamp } from "../db/database.ts";
import type { ServiceKindHooks } from "../projects/workload-kinds.ts";
import { serviceCountersByKind } from "../servers/service-count.ts";
import {
  countApplicationsByServer,
  generateAppName,
  insertApplication,
  listApplicationSummaries,
  listApplicationsWithOrganization,
} from "./repository.ts";
import { teardownApplicationsIn } from "./teardown.ts";
import { type ApplicationSecretField, openApplicationSecret, sealApplicationSecret } from "./views.ts";

/** Reseals a secret for the copy: the seal is bound to the application it belongs to. */
function reseal(
  secrets: SecretBox,
  field: ApplicationSecretField,
  from: { applicationId: string; organizationId: string },
  to: { applicationId: string; organizationId: string },
  sealed: string | null,
): string | null {
  return sealApplicationSecret(secrets, field, to, openApplicationSecret(secrets, field, from, sealed));
}

const json = (value: unknown) => (value === null ? null : JSON.stringify(value));

/**
 * Copies applications into another environment with their whole configuration, as Dokploy's
 * duplicate does: a new id, appName and webhook token, status idle, " (copy)" in the same project.
 */
async function copyApplications(
  db: Db,
  secrets: SecretBox,
  ids: readonly string[],
  target: { targetEnvironmentId: string; sameProject: boolean },
): Promise<void> {
  for (const source of await listApplicationsWithOrganization(db, ids)) {
    const {
      applicationId,
      organizationId,
      refreshToken: _token,
      createdAt: _createdAt,
      applicationStatus: _status,
      watchPaths,
      args,
      previewLabels,
      healthCheckSwarm,
      restartPolicySwarm,
      placementSwarm,
      updateConfigSwarm,
      rollbackConfigSwarm,
      modeSwarm,
      labelsSwarm,
      networkSwarm,
      endpointSpecSwarm,
      ulimitsSwarm,
      passwordSealed,
      buildSecretsSealed,
      previewBuildSecretsSealed,
      webhookSecretSealed,
      ...settings
    } = source;
    const copy = { applicationId: newId(), organizationId };
    await insertApplication(db, {
      ...settings,
      applicationId: copy.applicationId,
      name: target.sameProject ? `${settings.name} (copy)` : settings.name,
      appName: generateAppName(settings.appName.replace(/-[a-z0-9]{6}$/, "")),
      environmentId: target.targetEnvironmentId,
      applicationStatus: "idle",
      watchPaths: json(watchPaths),
      args: json(args),
      previewLabels: json(previewLabels),
      healthCheckSwarm: json(healthCheckSwarm),
      restartPolicySwarm: json(restartPolicySwarm),
      placementSwarm: json(placementSwarm),
      updateConfigSwarm: json(updateConfigSwarm),
      rollbackConfigSwarm: json(rollbackConfigSwarm),
      modeSwarm: json(modeSwarm),
      labelsSwarm: json(labelsSwarm),
      networkSwarm: json(networkSwarm),
      endpointSpecSwarm: json(endpointSpecSwarm),
      ulimitsSwarm: json(ulimitsSwarm),
      passwordSealed: reseal(secrets, "password", { applicationId, organizationId }, copy, passwordSealed),
      buildSecretsSealed: reseal(
        secrets,
        "buildSecrets",
        { applicationId, organizationId },
        copy,
        buildSecretsSealed,
      ),
      previewBuildSecretsSealed: reseal(
        secrets,
        "previewBuildSecrets",
        { applicationId, organizationId },
        copy,
        previewBuildSecretsSealed,
      ),
      webhookSecretSealed: reseal(
        secrets,
        "webhookSecret",
        { applicationId, organizationId },
        copy,
        webhookSecretSealed,
      ),
    });
  }
}

export const applicationHooks: ServiceKindHooks = {
  listSummaries: (db, environmentIds) => listApplicationSummaries(db, environmentIds),
  summaryTable: "applications",
  summaryJson: (environmentId) => sql`coalesce((
    select json_agg(json_build_object(
      'applicationId', a.application_id,
      'name', a.name,
      'appName', a.app_name,
      'description', a.description,
      'serverId', a.server_id,
      'createdAt', ${isoTimestamp(sql.ref("a.created_at"))},
      'applicationStatus', a.application_status
    ) order by a.created_at asc, a.application_id asc)
    from applications a where a.environment_id = ${environmentId}
  ), '[]'::json)`,
  copy: (db, ids, target) => copyApplications(db, target.secrets, ids, target),
  teardown: (ctx, environmentIds) => teardownApplicationsIn(ctx, environmentIds),
};

serviceCountersByKind.application = countApplicationsByServer;
