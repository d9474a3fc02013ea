/** Every migration, in order. Add new ones at the end; never edit a released one. */
import type { Migration } from "kysely";
import * as foundation from "./20261122-0001-foundation.ts";
import * as servers from "./20261123-0001-servers.ts";
import * as serverHostKeys from "./20261123-0002-server-host-keys.ts";
import * as applications from "./20261123-0004-applications.ts";
import * as deployments from "./20261123-0005-deployments.ts";
import * as registries from "./20261123-0006-registries.ts";
import * as ports from "./20261123-0007-ports.ts";
import * as domainsSecurity from "./20261123-0008-domains-security.ts";
import * as invitationTokens from "./20261124-10-invitation-tokens.ts";
import * as loginThrottle from "./20261124-11-login-throttle.ts";
import * as applicationFields from "./20261124-60-application-fields.ts";
import * as domainFields from "./20261124-61-domain-fields.ts";
import * as memberPermissions from "./20261124-62-member-permissions.ts";
import * as applicationStatusMessage from "./20261124-63-application-status-message.ts";
import * as deploymentLeases from "./20261124-70-deployment-leases.ts";
import * as monitoring from "./20261124-70-monitoring.ts";
import * as dockerCleanup from "./20261124-75-docker-cleanup.ts";
import * as databases from "./20261124-80-databases.ts";
import * as callerInvalidation from "./20261124-85-caller-invalidation.ts";
import * as databaseSwarm from "./20261125-10-database-swarm.ts";
import * as projectTreeInvalidation from "./20261125-20-project-tree-invalidation.ts";
import * as pendingEmail from "./20261126-10-pending-email.ts";
import * as applicationDetailInvalidation from "./20261127-10-application-detail-invalidation.ts";
import * as deploymentTarget from "./20261127-20-deployment-target.ts";
import * as compose from "./20261127-30-compose.ts";
import * as gitProviders from "./20261127-40-git-providers.ts";
import * as notifications from "./20261127-50-notifications.ts";
import * as backups from "./20261127-60-backups.ts";
import * as redirects from "./20261127-70-redirects.ts";
import * as mounts from "./20261127-80-mounts.ts";
import * as emailConfirmation from "./20261128-10-email-confirmation.ts";
import * as composeMounts from "./20261128-40-compose-mounts.ts";
import * as composePublishedPorts from "./20261128-50-compose-published-ports.ts";
import * as certificates from "./20261128-60-certificates.ts";
import * as rollbacks from "./20261128-70-rollbacks.ts";
import * as deploymentBuildServer from "./20261129-20-deployment-build-server.ts";
import * as composeRollbacks from "./20261129-30-compose-rollbacks.ts";
import * as volumeBackups from "./20261129-40-volume-backups.ts";
import * as schedules from "./20261129-50-schedules.ts";
import * as previews from "./20261129-60-previews.ts";
import * as webServerBackups from "./20261129-90-web-server-backups.ts";
import * as previewExpiry from "./20261129-95-preview-expiry.ts";
import * as oauthStates from "./20261130-20-oauth-states.ts";
import * as setupTokens from "./20261130-37-setup-tokens.ts";
import * as networks from "./20261130-60-networks.ts";
import * as backupRuns from "./20261201-10-backup-runs.ts";
import * as networkIds from "./20261201-20-network-ids.ts";
import * as remoteServersOnly from "./20261201-30-remote-servers-only.ts";
import * as ha from "./20261201-50-ha.ts";
import * as tags from "./20261201-70-tags.ts";
import * as engineSettings from "./20261202-10-engine-settings.ts";
import * as sessionRateBuckets from "./20261202-30-session-rate-buckets.ts";
import * as domainEnabled from "./20261202-40-domain-enabled.ts";
import * as memberDefault from "./20261202-40-member-default.ts";
import * as twoFactor from "./20261202-50-two-factor.ts";
import * as vaultProviders from "./20261202-70-vault-providers.ts";
import * as templateBookmarks from "./20261202-80-template-bookmarks.ts";
import * as libsql from "./20261203-10-libsql.ts";
import * as patches from "./20261203-20-patches.ts";
import * as dnsProviders from "./20261203-30-dns-providers.ts";
import * as forwardAuth from "./20261203-40-forward-auth.ts";
import * as oneRunningPerTarget from "./20261203-50-one-running-per-target.ts";
import * as gitProviderShare from "./20261203-60-git-provider-share.ts";
import * as onboarding from "./20261203-61-onboarding.ts";
import * as cliFields from "./20261203-70-cli-fields.ts";
import * as composeBackups from "./20261203-80-compose-backups.ts";
import * as freshVolumes from "./20261204-20-fresh-volumes.ts";
import * as memberServerGrants from "./20261204-20-member-server-grants.ts";
import * as networkMtu from "./20261204-20-network-mtu.ts";
import * as userNames from "./20261204-20-user-names.ts";
import * as redirectDetailInvalidation from "./20261204-30-redirect-detail-invalidation.ts";

export const migrations: Record<string, Migration> = {
  "20261122-0001-foundation": foundation,
  "20261123-0001-servers": servers,
  "20261123-0002-server-host-keys": serverHostKeys,
  "20261123-0004-applications": applications,
  "20261123-0005-deployments": deployments,
  "20261123-0006-registries": registries,
  "20261123-0007-ports": ports,
  "20261123-0008-domains-security": domainsSecurity,
  "20261124-10-invitation-tokens": invitationTokens,
  "20261124-11-login-throttle": loginThrottle,
  "20261124-60-application-fields": applicationFields,
  "20261124-61-domain-fields": domainFields,
  "20261124-62-member-permissions": memberPermissions,
  "20261124-63-application-status-message": applicationStatusMessage,
  "20261124-70-deployment-leases": deploymentLeases,
  "20261124-70-monitoring": monitoring,
  "20261124-75-docker-cleanup": dockerCleanup,
  "20261124-80-databases": databases,
  "20261124-85-caller-invalidation": callerInvalidation,
  "20261125-10-database-swarm": databaseSwarm,
  "20261125-20-project-tree-invalidation": projectTreeInvalidation,
  "20261126-10-pending-email": pendingEmail,
  "20261127-10-application-detail-invalidation": applicationDetailInvalidation,
  "20261127-20-deployment-target": deploymentTarget,
  "20261127-30-compose": compose,
  "20261127-40-git-providers": gitProviders,
  "20261127-50-notifications": notifications,
  "20261127-60-backups": backups,
  "20261127-70-redirects": redirects,
  "20261127-80-mounts": mounts,
  "20261128-10-email-confirmation": emailConfirmation,
  "20261128-40-compose-mounts": composeMounts,
  "20261128-50-compose-published-ports": composePublishedPorts,
  "20261128-60-certificates": certificates,
  "20261128-70-rollbacks": rollbacks,
  "20261129-20-deployment-build-server": deploymentBuildServer,
  "20261129-30-compose-rollbacks": composeRollbacks,
  "20261129-40-volume-backups": volumeBackups,
  "20261129-50-schedules": schedules,
  "20261129-60-previews": previews,
  "20261129-90-web-server-backups": webServerBackups,
  "20261129-95-preview-expiry": previewExpiry,
  "20261130-20-oauth-states": oauthStates,
  "20261130-37-setup-tokens": setupTokens,
  "20261130-60-networks": networks,
  "20261201-10-backup-runs": backupRuns,
  "20261201-20-network-ids": networkIds,
  "20261201-30-remote-servers-only": remoteServersOnly,
  "20261201-50-ha": ha,
  "20261201-70-tags": tags,
  "20261202-10-engine-settings": engineSettings,
  "20261202-30-session-rate-buckets": sessionRateBuckets,
  "20261202-40-domain-enabled": domainEnabled,
  "20261202-40-member-default": memberDefault,
  "20261202-50-two-factor": twoFactor,
  "20261202-70-vault-providers": vaultProviders,
  "20261202-80-template-bookmarks": templateBookmarks,
  "20261203-10-libsql": libsql,
  "20261203-20-patches": patches,
  "20261203-30-dns-providers": dnsProviders,
  "20261203-40-forward-auth": forwardAuth,
  "20261203-50-one-running-per-target": oneRunningPerTarget,
  "20261203-60-git-provider-share": gitProviderShare,
  "20261203-61-onboarding": onboarding,
  "20261203-70-cli-fields": cliFields,
  "20261203-80-compose-backups": composeBackups,
  "20261204-20-fresh-volumes": freshVolumes,
  "20261204-20-member-server-grants": memberServerGrants,
  "20261204-20-network-mtu": networkMtu,
  "20261204-20-user-names": userNames,
  "20261204-30-redirect-detail-invalidation": redirectDetailInvalidation,
};
