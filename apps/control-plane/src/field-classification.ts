/**
 * Every input field of every procedure, in one of three classes (issue 27 item 1: no field is
 * stored only): `applied` (it takes effect; `proof` names the test file that shows it, or one
 * test of it as `file#test title`), `refused` (any value that would not take effect is a 400
 * naming the field; `probe`, when given, is an input the walk test sends to see that 400) or
 * `informational` (deliberately stored and shown only, each named on a docs/decisions.md line
 * that says "informational"). tests/fields/field-walk.test.ts walks the router's input schemas
 * against this list and fails on a field in none, on an entry whose procedure or field no
 * longer exists, and on a proof that never names its field (the file, a fixture module of its
 * own beside it, or with `#title` that test's title and body): the proof is where the field is
 * set through the API and its effect asserted.
 *
 * To classify a new procedure, add a row keyed `router.procedure` (fields are the top-level keys
 * of its input object):
 *
 * @example
 *   "mounts.create": {
 *     ...applied("type mountPath volumeName", MOUNTS_TEST),
 *     hostPath: refused(MOUNTS_TEST, { serviceType: "application", serviceId: "$applicationId", hostPath: "/etc" }),
 *     note: informational,
 *   },
 *
 * Probe inputs may use the walk test's fixtures by name: `$applicationId`, `$environmentId`,
 * `$projectId`, `$postgresId`, `$destinationId`, `$backupId`.
 */

export type FieldClass =
  | { kind: "applied"; proof: string }
  | { kind: "refused"; proof: string; probe?: Record<string, unknown> }
  | { kind: "informational" };

export type ProcedureFields = Record<string, FieldClass>;

/** Each field of the space-separated `names` applied, as `proof` (`file` or `file#test title`) shows. */
export function applied(names: string, proof: string): ProcedureFields {
  return Object.fromEntries(
    names
      .split(/\s+/)
      .filter(Boolean)
      .map((name) => [name, { kind: "applied", proof }]),
  );
}

/** A field whose ignored values are a 400 naming it; `probe` is a whole input showing it. */
export function refused(proof: string, probe?: Record<string, unknown>): FieldClass {
  return probe ? { kind: "refused", proof, probe } : { kind: "refused", proof };
}

export const informational: FieldClass = { kind: "informational" };

/** Each field of `names` informational (it must be named on an "informational" decisions line). */
export function shownOnly(names: string): ProcedureFields {
  return Object.fromEntries(
    names
      .split(/\s+/)
      .filter(Boolean)
      .map((name) => [name, informational]),
  );
}

// The test files that show fields taking effect (paths from the repository's root).
const CP = "apps/control-plane/src";
const AUTH = `${CP}/routers/auth.test.ts`;
const TWO_FACTOR = `${CP}/auth/two-factor.test.ts`;
const USER = `${CP}/routers/user.test.ts`;
const ORG = `${CP}/routers/organization.test.ts`;
const PROJECT = `${CP}/routers/project.test.ts`;
const ENVIRONMENT = `${CP}/routers/environment.test.ts`;
const DOCKER = `${CP}/routers/docker.test.ts`;
const DOCKER_OBJECTS = `${CP}/docker-objects/docker-objects.test.ts`;
const CONTAINER_OPS = `${CP}/agents/container-operations.test.ts`;
const SWARM = `${CP}/swarm/swarm.test.ts`;
const NETWORKS = `${CP}/networks/networks.test.ts`;
const NETWORK_ATTACH = `${CP}/networks/attach.test.ts`;
const TAGS = `${CP}/routers/tag.test.ts`;
const PATCHES = `${CP}/routers/patch.test.ts`;
const VAULTS = `${CP}/routers/vault-provider.test.ts`;
const DNS_PROVIDERS = `${CP}/routers/dns-provider.test.ts`;
const FORWARD_AUTH = `${CP}/forward-auth/forward-auth.e2e.test.ts`;
const SERVER = `${CP}/routers/server.test.ts`;
const SETUP = `${CP}/servers/setup.test.ts`;
const SSH_KEYS = `${CP}/servers/ssh-keys.test.ts`;
const ENROLL = `${CP}/agents/hub.test.ts`;
const APPLICATION = `${CP}/routers/application.test.ts`;
const PIPELINE = `${CP}/applications/pipeline.test.ts`;
const SERVICE_SPEC = `${CP}/applications/service-spec.test.ts`;
const ROLLBACKS = `${CP}/rollbacks/rollbacks.test.ts`;
const WEBHOOKS = `${CP}/webhooks/route.test.ts`;
const DEPLOYMENT = `${CP}/routers/deployment.test.ts`;
const COMPOSE = `${CP}/compose/e2e.test.ts`;
const COMPOSE_TENANCY = `${CP}/compose/tenancy.test.ts`;
const TEMPLATES = `${CP}/templates/remote.test.ts`;
const COMPOSE_PROCEDURES = `${CP}/compose/procedures.test.ts`;
const COMPOSE_COLLISION = `${CP}/compose/collision.e2e.test.ts`;
const PORT = `${CP}/routers/port.test.ts`;
const MOUNTS = `${CP}/mounts/mounts-docker.test.ts`;
const SCHEDULE = `${CP}/routers/schedule.test.ts`;
const CLUSTER = "tests/e2e/cluster.test.ts";
const VOLUME_BACKUPS = `${CP}/volume-backups/e2e.test.ts`;
const VOLUME_NAMES = `${CP}/volume-backups/volume-backups.test.ts`;
const PREVIEWS = `${CP}/previews/previews.test.ts`;
const PREVIEWS_SERVED = `${CP}/previews/e2e.test.ts`;
const SCHEDULE_RUNS = `${CP}/schedules/e2e.test.ts`;
const REGISTRY = `${CP}/routers/registry.test.ts`;
const DOMAIN = `${CP}/routers/domain.test.ts`;
const SECURITY = `${CP}/routers/security.test.ts`;
const REDIRECTS = `${CP}/routers/redirects.test.ts`;
const CERTIFICATES = `${CP}/routers/certificates.test.ts`;
const DATABASES = `${CP}/databases/database.test.ts`;
const DATABASES_E2E = `${CP}/databases/e2e.test.ts`;
const SETTINGS = `${CP}/routers/settings.test.ts`;
const MONITORING = `${CP}/monitoring/monitoring-config.test.ts`;
const APP_MONITORING = `${CP}/monitoring/app-monitoring.test.ts`;
const RUNTIME_LOGS_E2E = `${CP}/monitoring/runtime-logs.e2e.test.ts`;
/** The readLogs fields of a kind, proven by one test of the runtime logs' end-to-end file. */
const runtimeLogFields = (idKey: string, title: string): ProcedureFields =>
  applied(`${idKey} tail since search`, `${RUNTIME_LOGS_E2E}#${title}`);
const PROVIDERS = `${CP}/git-providers/providers.test.ts`;
const NOTIFICATIONS = `${CP}/notifications/notifications.test.ts`;
const MAIL = `${CP}/notifications/mail.test.ts`;
const BACKUP = `${CP}/routers/backup.test.ts`;
const WEB_SERVER_BACKUP = `${CP}/backups/web-server.test.ts`;
const BACKUPS_E2E = `${CP}/backups/e2e.test.ts`;
const COMPOSE_BACKUP = `${CP}/backups/compose-e2e.test.ts`;
const PERMISSIONS = `${CP}/projects/permissions.test.ts`;
const BUILD_SETTINGS = `${CP}/routers/application.test.ts`;
const GIT_PROVIDERS_E2E = `${CP}/git-providers/e2e.test.ts`;
const WEBHOOKS_E2E = `${CP}/webhooks/e2e.test.ts`;
const COMPOSE_FILES = `${CP}/compose/docker-compose.e2e.test.ts`;
const AGENT_BUILD = "apps/agent/src/deploy/build.test.ts";
const COMPOSE_FAULTS = "tests/faults/compose-faults.test.ts";
const MAINTENANCE = `${CP}/maintenance/maintenance.test.ts`;
const API_KEYS = `${CP}/auth/api-key.test.ts`;

/** The Swarm settings of applications and database services (docs/decisions.md, issue 27). */
const swarmFields = applied(
  "memoryLimit memoryReservation cpuLimit cpuReservation command args replicas healthCheckSwarm restartPolicySwarm placementSwarm updateConfigSwarm rollbackConfigSwarm modeSwarm labelsSwarm networkSwarm stopGracePeriodSwarm endpointSpecSwarm ulimitsSwarm",
  SERVICE_SPEC,
);

/** Git source fields shared by application.update and the save*Provider procedures. */
const gitSourceFields: ProcedureFields = {
  // Each provider's application is deployed from the saved repository and branch.
  ...applied(
    "githubId repository owner branch buildPath gitlabId gitlabProjectId gitlabRepository gitlabOwner gitlabBranch gitlabBuildPath gitlabPathNamespace bitbucketId bitbucketRepository bitbucketRepositorySlug bitbucketOwner bitbucketBranch bitbucketBuildPath giteaId giteaRepository giteaOwner giteaBranch giteaBuildPath",
    GIT_PROVIDERS_E2E,
  ),
  ...applied("customGitUrl customGitBranch customGitBuildPath customGitSSHKeyId", PIPELINE),
  ...applied("enableSubmodules", AGENT_BUILD),
  ...applied("watchPaths", WEBHOOKS_E2E),
  triggerType: { kind: "applied", proof: `${WEBHOOKS}#deploys a new tag only with triggerType tag` },
};

function databaseKind(kind: string, idKey: string, credentials: string): Record<string, ProcedureFields> {
  return {
    [`${kind}.create`]: {
      ...applied(`appName environmentId dockerImage serverId ${credentials}`, DATABASES),
      ...shownOnly("name description"),
    },
    [`${kind}.one`]: applied(idKey, DATABASES),
    [`${kind}.deploy`]: applied(idKey, DATABASES_E2E),
    [`${kind}.readLogs`]: runtimeLogFields(
      idKey,
      "every database kind's readLogs shows its service's own lines",
    ),
    [`${kind}.start`]: applied(idKey, DATABASES_E2E),
    [`${kind}.stop`]: applied(idKey, DATABASES_E2E),
    [`${kind}.update`]: {
      ...applied(`${idKey} dockerImage env ${credentials}`, DATABASES),
      ...swarmFields,
      ...applied("networkIds", NETWORK_ATTACH),
      ...shownOnly("name description"),
    },
    [`${kind}.saveExternalPort`]: applied(`${idKey} externalPort`, DATABASES),
    [`${kind}.saveEnvironment`]: applied(`${idKey} env`, DATABASES),
    [`${kind}.reload`]: {
      ...applied(idKey, DATABASES_E2E),
      appName: refused(DATABASES),
    },
    [`${kind}.rebuild`]: applied(idKey, DATABASES_E2E),
    [`${kind}.remove`]: applied(idKey, DATABASES),
    [`${kind}.changePassword`]: applied(
      `${idKey} password${credentials.includes("databaseRootPassword") ? " type" : ""}`,
      DATABASES,
    ),
    [`${kind}.changeStatus`]: applied(`${idKey} applicationStatus`, DATABASES),
    [`${kind}.move`]: applied(`${idKey} targetEnvironmentId`, DATABASES),
    [`${kind}.search`]: applied("q name appName description projectId environmentId limit offset", DATABASES),
  };
}

/** libsql: the kinds' procedures less changePassword, search and saveExternalPort, plus saveExternalPorts. */
function libsqlKind(): Record<string, ProcedureFields> {
  const procedures = databaseKind(
    "libsql",
    "libsqlId",
    "databasePassword databaseUser sqldNode sqldPrimaryUrl enableNamespaces",
  );
  for (const omitted of ["changePassword", "search", "saveExternalPort"])
    delete procedures[`libsql.${omitted}`];
  procedures["libsql.saveExternalPorts"] = {
    ...applied("libsqlId externalPort externalAdminPort", DATABASES_E2E),
    ...applied("externalGRPCPort", DATABASES),
  };
  return procedures;
}

const notificationEvents =
  "appDeploy appBuildError databaseBackup volumeBackup platformRestart dockerCleanup serverThreshold projectIds serviceIds";
/** platformBackup and Dokploy's names of the two platform toggles (its CLI sends them). */
const DOKPLOY_TOGGLES = `${NOTIFICATIONS}#takes Dokploy's dokployRestart and dokployBackup (its CLI's names) for platformRestart and platformBackup; a platformBackup event reaches the channels toggled for it`;

function notificationKind(kind: string, idKey: string, settings: string): Record<string, ProcedureFields> {
  return {
    [`notification.create${kind}`]: {
      ...applied(`${notificationEvents} ${settings}`, NOTIFICATIONS),
      ...applied("platformBackup dokployRestart dokployBackup", DOKPLOY_TOGGLES),
      ...shownOnly("name"),
    },
    [`notification.update${kind}`]: {
      // Dokploy's <kind>Id names the same channel (another one is a 404, as any id).
      ...applied(`notificationId ${idKey} ${notificationEvents} ${settings}`, NOTIFICATIONS),
      ...applied("platformBackup dokployRestart dokployBackup", DOKPLOY_TOGGLES),
      // Dokploy's update<Kind> sends the channel's organizationId: another is a 400 naming it.
      organizationId: refused(DOKPLOY_TOGGLES),
      ...shownOnly("name"),
    },
    [`notification.test${kind}`]: applied(settings, NOTIFICATIONS),
    [`notification.test${kind}Connection`]: applied(settings, NOTIFICATIONS),
  };
}

export const fieldClassification: Record<string, ProcedureFields> = {
  "auth.register": applied("email password name invitationId token setupToken", AUTH),
  "auth.login": applied("email password organizationId", AUTH),
  "auth.logout": {},
  "auth.twoFactorVerifyTotp": applied("challengeToken code", TWO_FACTOR),
  "auth.twoFactorVerifyBackupCode": applied("challengeToken code", TWO_FACTOR),
  "auth.twoFactorEnable": applied("password", TWO_FACTOR),
  "auth.twoFactorConfirm": applied("code", TWO_FACTOR),
  "auth.twoFactorDisable": applied("password", TWO_FACTOR),
  "auth.twoFactorGenerateBackupCodes": applied("password", TWO_FACTOR),

  "user.all": {},
  "user.one": applied("userId", USER),
  "user.get": {},
  "user.update": {
    ...applied("email currentPassword password", USER),
    ...shownOnly("name image firstName lastName"),
    // Dokploy's CLI sends the user's own id: another is a 400 naming it.
    id: refused(USER),
  },
  "user.confirmEmail": applied("token", USER),
  "user.sendInvitation": applied("invitationId notificationId", MAIL),
  "user.changeEmail": applied("userId email", USER),
  "user.remove": applied("userId", USER),
  "user.assignPermissions": {
    ...applied(
      "id role canCreateProjects canDeleteProjects accessedProjects accessedEnvironments accessedServices canCreateServices canDeleteServices canCreateEnvironments canDeleteEnvironments canAccessToDocker canAccessToTraefikFiles canAccessToAPI canAccessToSSHKeys canAccessToGitProviders",
      PERMISSIONS,
    ),
    ...applied("accessedServers accessedGitProviders", `${CP}/projects/server-provider-grants.test.ts`),
    // There is no audit log to gate yet: stored and shown.
    canAccessAuditLog: informational,
  },
  "user.createApiKey": {
    ...applied(
      "metadata organizationId prefix expiresIn rateLimitEnabled rateLimitTimeWindow rateLimitMax remaining refillAmount refillInterval",
      `${CP}/auth/api-key.test.ts`,
    ),
    ...shownOnly("name"),
  },
  "user.deleteApiKey": applied("apiKeyId", API_KEYS),
  "user.getInvitations": applied("token", USER),
  "user.checkUserOrganizations": applied("userId", USER),
  "user.getMetricsToken": {},
  "user.listSessions": {},
  "user.session": {},
  "user.revokeSession": applied("sessionId", USER),
  "user.getPermissions": {},
  "user.haveRootAccess": {},
  "user.generateToken": {},
  "user.getUserByToken": applied("token", USER),
  "user.getBackups": {},
  "user.getContainerMetrics": applied("url token appName dataPoints", `${CP}/routers/user-metrics.test.ts`),
  "user.getServerMetrics": {},
  "user.getBookmarkedTemplates": {},
  "user.listPasskeys": {},
  "user.toggleTemplateBookmark": applied("templateId", USER),
  "user.createUserWithCredentials": {
    ...applied("email password", USER),
    role: refused(USER, { email: "refused-role@example.com", password: "initial-password-1", role: "admin" }),
    ...shownOnly("name"),
  },

  "organization.all": {},
  "organization.one": applied("organizationId", ORG),
  "organization.create": shownOnly("name"),
  "organization.delete": applied("organizationId", ORG),
  "organization.update": { ...applied("organizationId", ORG), ...shownOnly("name") },
  "organization.setActive": applied("organizationId", ORG),
  "organization.active": {},
  "organization.setDefault": applied("organizationId", ORG),
  "organization.updateMemberRole": applied("memberId role", ORG),
  "organization.inviteMember": applied("email role", ORG),
  "organization.allInvitations": {},
  "organization.removeInvitation": applied("invitationId", ORG),
  "organization.acceptInvitation": applied("token invitationId", ORG),

  "project.create": { ...applied("env", PROJECT), ...shownOnly("name description") },
  "project.one": applied("projectId", PROJECT),
  "project.all": {},
  "project.update": { ...applied("projectId env", PROJECT), ...shownOnly("name description") },
  "project.remove": applied("projectId", PROJECT),
  "project.duplicate": {
    ...applied("sourceEnvironmentId includeServices selectedServices duplicateInSameProject", PROJECT),
    ...shownOnly("name description"),
  },
  "project.search": applied("q name description limit offset", PROJECT),
  "project.allForPermissions": {},
  "project.homeStats": {},
  "project.onboardingStatus": {},
  "project.completeOnboarding": {},
  "overview.services": {},
  "overview.domains": {},
  "overview.backups": {},

  "environment.create": { ...applied("projectId env", ENVIRONMENT), ...shownOnly("name description") },
  "environment.one": applied("environmentId", ENVIRONMENT),
  "environment.byProjectId": applied("projectId", ENVIRONMENT),
  "environment.update": { ...applied("environmentId env", ENVIRONMENT), ...shownOnly("name description") },
  "environment.remove": applied("environmentId", ENVIRONMENT),
  "environment.duplicate": { ...applied("environmentId", ENVIRONMENT), ...shownOnly("name description") },
  "environment.search": applied("q name description projectId limit offset", ENVIRONMENT),

  "docker.getContainers": applied("serverId", DOCKER),
  "docker.restartContainer": applied("containerId serverId", DOCKER),
  "docker.getConfig": applied("containerId serverId", DOCKER),
  "docker.getContainersByAppNameMatch": applied("appName appType serverId", DOCKER),
  "docker.getContainersByAppLabel": applied("appName type serverId", DOCKER),
  "docker.getStackContainersByAppName": applied("appName serverId", DOCKER),
  "docker.getServiceContainersByAppName": applied("appName serverId", DOCKER),
  "docker.startContainer": applied("containerId serverId", CONTAINER_OPS),
  "docker.stopContainer": applied("containerId serverId", CONTAINER_OPS),
  "docker.killContainer": applied("containerId serverId", CONTAINER_OPS),
  "docker.removeContainer": applied("containerId serverId", CONTAINER_OPS),
  "docker.listContainerFiles": applied("containerId path serverId", CONTAINER_OPS),
  "docker.readContainerFile": applied("containerId path serverId", CONTAINER_OPS),
  "docker.writeContainerFile": applied("containerId path content serverId", CONTAINER_OPS),
  "docker.deleteContainerFile": applied("containerId path serverId", CONTAINER_OPS),
  "docker.getEvents": applied("minutes serverId", CONTAINER_OPS),

  "agent.enroll": {
    ...applied("enrollmentToken publicKey", ENROLL),
    ...shownOnly("hostname agentVersion"),
  },

  "server.create": {
    ...applied("ipAddress port username sshKeyId", SETUP),
    serverType: { kind: "applied", proof: BUILD_SETTINGS },
    ...shownOnly("name description"),
  },
  "server.one": applied("serverId", SERVER),
  "server.all": {},
  "server.update": {
    ...applied("serverId ipAddress port username sshKeyId", SETUP),
    serverType: { kind: "applied", proof: BUILD_SETTINGS },
    ...shownOnly("name description"),
  },
  "server.remove": applied("serverId", SERVER),
  "server.publicIp": {},
  "server.validate": applied("serverId", SERVER),
  "server.security": applied("serverId", SERVER),
  "server.enrollmentCommand": applied("serverId", SERVER),
  "server.setup": applied("serverId", SETUP),
  "server.setupMonitoring": applied("serverId metricsConfig", MONITORING),
  "server.getServerMetrics": applied("url token dataPoints", MONITORING),

  "sshKey.create": { ...applied("privateKey publicKey", SSH_KEYS), ...shownOnly("name description") },
  "sshKey.one": applied("sshKeyId", SERVER),
  "sshKey.all": {},
  "sshKey.allForApps": {},
  "sshKey.update": { ...applied("sshKeyId", SERVER), ...shownOnly("name description") },
  "sshKey.remove": applied("sshKeyId", SERVER),
  "sshKey.generate": applied("type", SERVER),

  "application.deployNginxQuickstart": applied("environmentId serverId", PIPELINE),
  "application.create": {
    ...applied("environmentId appName serverId sourceType", APPLICATION),
    ...shownOnly("name description"),
  },
  "application.one": applied("applicationId", APPLICATION),
  "application.update": {
    ...applied(
      "applicationId appName env autoDeploy registryId buildRegistryId environmentId sourceType buildType dockerImage username password registryUrl dockerfile dockerContextPath dockerBuildStage publishDirectory isStaticSpa herokuVersion railpackVersion buildArgs buildSecrets createEnvFile",
      APPLICATION,
    ),
    ...swarmFields,
    ...gitSourceFields,
    ...applied("detachDokployNetwork", SERVICE_SPEC),
    ...applied("networkIds", NETWORK_ATTACH),
    ...applied("cleanCache dropBuildPath", PIPELINE),
    ...applied(
      "rollbackActive rollbackRegistryId",
      `${PIPELINE}#with rollbackActive, pushes each successful deployment's image to rollbackRegistryId under its prefix, and deploys the local image`,
    ),
    webhookSecret: { kind: "applied", proof: WEBHOOKS },
    applicationStatus: refused(APPLICATION, {
      applicationId: "$applicationId",
      applicationStatus: "running",
    }),
    createdAt: refused(APPLICATION, {
      applicationId: "$applicationId",
      createdAt: "2020-01-01T00:00:00.000Z",
    }),
    refreshToken: refused(APPLICATION, { applicationId: "$applicationId", refreshToken: "chosen-token" }),
    buildArchitecture: refused(BUILD_SETTINGS, {
      applicationId: "$applicationId",
      buildArchitecture: "arm64",
    }),
    buildxBuilder: refused(BUILD_SETTINGS, { applicationId: "$applicationId", buildxBuilder: "multi" }),
    buildServerId: { kind: "applied", proof: `${CP}/applications/build-server.test.ts` },
    ...applied(
      "isPreviewDeploymentsActive previewLimit previewWildcard previewPath previewPort previewHttps previewLabels previewRequireCollaboratorPermissions previewCertificateType previewCustomCertResolver",
      PREVIEWS,
    ),
    ...applied("previewEnv previewBuildArgs previewBuildSecrets", PREVIEWS_SERVED),
    ...shownOnly("name description title subtitle enabled icon"),
  },
  "application.search": applied(
    "q name appName description repository owner dockerImage projectId environmentId limit offset",
    APPLICATION,
  ),
  "application.saveGithubProvider": {
    ...applied("applicationId", PIPELINE),
    ...pick(
      gitSourceFields,
      "githubId owner repository branch buildPath triggerType enableSubmodules watchPaths",
    ),
  },
  "application.saveGitlabProvider": {
    ...applied("applicationId", PIPELINE),
    ...pick(
      gitSourceFields,
      "gitlabId gitlabProjectId gitlabOwner gitlabRepository gitlabBranch gitlabBuildPath gitlabPathNamespace enableSubmodules watchPaths",
    ),
  },
  "application.saveBitbucketProvider": {
    ...applied("applicationId", PIPELINE),
    ...pick(
      gitSourceFields,
      "bitbucketId bitbucketOwner bitbucketRepository bitbucketRepositorySlug bitbucketBranch bitbucketBuildPath enableSubmodules watchPaths",
    ),
  },
  "application.saveGiteaProvider": {
    ...applied("applicationId", PIPELINE),
    ...pick(
      gitSourceFields,
      "giteaId giteaOwner giteaRepository giteaBranch giteaBuildPath enableSubmodules watchPaths",
    ),
  },
  "application.saveGitProvider": {
    ...applied("applicationId", PIPELINE),
    ...pick(
      gitSourceFields,
      "customGitUrl customGitBranch customGitBuildPath customGitSSHKeyId enableSubmodules watchPaths",
    ),
  },
  "application.saveDockerProvider": applied(
    "applicationId dockerImage username password registryUrl",
    PIPELINE,
  ),
  "application.disconnectGitProvider": applied("applicationId", APPLICATION),
  "application.saveBuildType": {
    ...applied(
      "applicationId buildType dockerContextPath dockerBuildStage dockerfile publishDirectory",
      PIPELINE,
    ),
    // The agent builds with them (the pipeline hands them over as stored).
    ...applied("isStaticSpa herokuVersion railpackVersion", AGENT_BUILD),
  },
  "application.saveEnvironment": applied("applicationId createEnvFile env buildArgs buildSecrets", PIPELINE),
  "application.start": applied("applicationId", PIPELINE),
  "application.stop": applied("applicationId", PIPELINE),
  "application.reload": { ...applied("applicationId", PIPELINE), appName: refused(APPLICATION) },
  "application.readAppMonitoring": applied("appName", APP_MONITORING),
  "application.readLogs": runtimeLogFields(
    "applicationId",
    "application.readLogs shows the line the application prints every second",
  ),
  "application.markRunning": applied("applicationId", APPLICATION),
  "application.move": applied("applicationId targetEnvironmentId", APPLICATION),
  "application.refreshToken": applied("applicationId", APPLICATION),
  "application.delete": applied("applicationId", APPLICATION),
  "application.deploy": { ...applied("applicationId", PIPELINE), ...shownOnly("title description") },
  "application.redeploy": { ...applied("applicationId", PIPELINE), ...shownOnly("title description") },
  "application.cancelDeployment": applied("applicationId", PIPELINE),
  "application.killBuild": applied("applicationId", PIPELINE),
  "application.cleanQueues": applied("applicationId", DEPLOYMENT),
  "application.clearDeployments": applied("applicationId", DEPLOYMENT),
  "application.readTraefikConfig": applied("applicationId", DOMAIN),
  "application.updateTraefikConfig": applied("applicationId traefikConfig", DOMAIN),

  "deployment.all": applied("applicationId", DEPLOYMENT),
  "deployment.allByCompose": applied("composeId", COMPOSE),
  "deployment.allByServer": applied("serverId", DATABASES),
  "deployment.allByType": applied("id type", DEPLOYMENT),
  "deployment.allCentralized": {},
  "deployment.queueList": {},
  "deployment.killProcess": applied("deploymentId", DEPLOYMENT),
  "deployment.removeDeployment": applied("deploymentId", DEPLOYMENT),
  "deployment.readLogs": applied(
    "deploymentId tail",
    `${RUNTIME_LOGS_E2E}#deployment.readLogs answers the last \`tail\` lines of the deployment's log`,
  ),

  "compose.create": {
    ...applied("appName environmentId composeType composeFile", COMPOSE),
    ...applied("sourceType", COMPOSE_FILES),
    // Deployed by that server's agent.
    ...applied("serverId", COMPOSE_FAULTS),
    ...shownOnly("name description"),
  },
  "compose.one": applied("composeId", COMPOSE),
  "compose.update": {
    ...applied("composeId env composeFile composeType", COMPOSE),
    ...applied("sourceType composePath customGitUrl customGitBranch", COMPOSE_FILES),
    // Each provider's stack is deployed from the saved repository and branch.
    ...applied(
      "githubId owner repository branch gitlabId gitlabProjectId gitlabOwner gitlabRepository gitlabBranch gitlabPathNamespace bitbucketId bitbucketOwner bitbucketRepository bitbucketRepositorySlug bitbucketBranch giteaId giteaOwner giteaRepository giteaBranch",
      GIT_PROVIDERS_E2E,
    ),
    // A stack's clone is an application's (applications/source.ts repositoryGitSource).
    ...pick(gitSourceFields, "customGitSSHKeyId enableSubmodules"),
    ...applied("networkIds", NETWORK_ATTACH),
    ...applied("randomize suffix isolatedDeployment isolatedDeploymentsVolume", COMPOSE_COLLISION),
    ...applied(
      "autoDeploy triggerType watchPaths",
      `${COMPOSE_PROCEDURES}#deploys for every provider when autoDeploy, the branch, triggerType and watchPaths allow; a wrong token is a 401`,
    ),
    ...shownOnly("name description"),
  },
  "compose.deploy": {
    ...applied("composeId", COMPOSE),
    ...applied("freshVolumes", `${CP}/compose/docker-compose.e2e.test.ts`),
    ...shownOnly("title description"),
  },
  "compose.redeploy": {
    ...applied("composeId", COMPOSE),
    ...applied("freshVolumes", `${CP}/compose/docker-compose.e2e.test.ts`),
    ...shownOnly("title description"),
  },
  "compose.start": applied("composeId", COMPOSE),
  "compose.stop": applied("composeId", COMPOSE),
  "compose.delete": applied("composeId deleteVolumes", COMPOSE),
  "compose.loadServices": applied("composeId type", COMPOSE),
  "compose.getConvertedCompose": applied("composeId", COMPOSE_TENANCY),
  "compose.readLogs": applied(
    "composeId containerId tail since search",
    `${RUNTIME_LOGS_E2E}#compose.readLogs shows a stack container's lines, to no one else and of no other container`,
  ),
  "compose.move": applied("composeId targetEnvironmentId", COMPOSE),
  "compose.templates": applied("baseUrl", TEMPLATES),
  "compose.search": applied(
    "q name appName description projectId environmentId limit offset",
    `${COMPOSE_PROCEDURES}#search finds the organization's stacks by text, project and environment, newest first`,
  ),
  "compose.saveEnvironment": {
    ...applied("composeId env", COMPOSE_PROCEDURES),
    createEnvFile: refused(COMPOSE_PROCEDURES, { composeId: "$composeId", env: "A=1", createEnvFile: true }),
  },
  "compose.cancelDeployment": applied("composeId", COMPOSE_PROCEDURES),
  "compose.killBuild": applied("composeId", COMPOSE_PROCEDURES),
  "compose.cleanQueues": applied("composeId", COMPOSE_PROCEDURES),
  "compose.clearDeployments": applied("composeId", COMPOSE_PROCEDURES),
  "compose.disconnectGitProvider": applied("composeId", COMPOSE_PROCEDURES),
  "compose.getDefaultCommand": applied("composeId", COMPOSE_PROCEDURES),
  "compose.getTags": applied("baseUrl", COMPOSE_PROCEDURES),
  "compose.processTemplate": applied("base64 composeId", COMPOSE_PROCEDURES),
  "compose.previewTemplate": applied("base64 appName serverId", COMPOSE_PROCEDURES),
  "compose.randomizeCompose": applied("composeId suffix", COMPOSE_COLLISION),
  "compose.isolatedDeployment": applied("composeId suffix", COMPOSE_COLLISION),
  "compose.loadMountsByService": applied("composeId serviceName", COMPOSE_COLLISION),
  "compose.fetchSourceType": applied("composeId", COMPOSE_COLLISION),
  "compose.import": applied("composeId base64", COMPOSE_COLLISION),
  "compose.refreshToken": applied(
    "composeId",
    `${COMPOSE_PROCEDURES}#deploys for every provider when autoDeploy, the branch, triggerType and watchPaths allow; a wrong token is a 401`,
  ),
  "compose.deployTemplate": {
    ...applied("id baseUrl", TEMPLATES),
    ...applied("environmentId serverId", COMPOSE_TENANCY),
  },

  "port.create": applied("applicationId publishedPort targetPort protocol publishMode", PORT),
  "port.one": applied("portId", PORT),
  "port.update": applied("portId publishedPort targetPort protocol publishMode", PORT),
  "port.delete": applied("portId", PORT),

  "mounts.create": applied(
    "type mountPath volumeName filePath content hostPath serviceType serviceId",
    MOUNTS,
  ),
  "mounts.one": applied("mountId", MOUNTS),
  "mounts.update": {
    ...applied("mountId type mountPath volumeName filePath content hostPath", MOUNTS),
    // The mount's owner (Dokploy's CLI sends it): anything but its own is a 400 naming the field.
    serviceType: refused(MOUNTS),
    applicationId: refused(MOUNTS),
    postgresId: refused(MOUNTS),
    mysqlId: refused(MOUNTS),
    mariadbId: refused(MOUNTS),
    mongoId: refused(MOUNTS),
    redisId: refused(MOUNTS),
    libsqlId: refused(MOUNTS),
    composeId: refused(MOUNTS),
  },
  "mounts.remove": applied("mountId", MOUNTS),
  "mounts.listByServiceId": applied("serviceId serviceType", MOUNTS),
  "mounts.allNamedByApplicationId": applied("applicationId", MOUNTS),

  "registry.create": {
    ...applied("registryUrl username password imagePrefix", REGISTRY),
    ...shownOnly("registryName registryType"),
  },
  "registry.all": {},
  "registry.one": applied("registryId", REGISTRY),
  "registry.update": {
    ...applied("registryId registryUrl username password imagePrefix", REGISTRY),
    ...shownOnly("registryName registryType"),
  },
  "registry.remove": applied("registryId", REGISTRY),
  "registry.testRegistry": {
    ...applied("registryUrl username password serverId", REGISTRY),
    // Dokploy's form sends the create fields: the name, type and prefix play no part in a login.
    ...shownOnly("registryName registryType imagePrefix"),
  },
  "registry.testRegistryById": applied("registryId serverId", REGISTRY),

  "domain.create": {
    ...applied(
      "host path port https certificateType customCertResolver certificate certificateKey serviceName stripPath internalPath customEntrypoint middlewares domainType applicationId composeId",
      DOMAIN,
    ),
    // A preview's host is made by the preview (previews.test.ts sends a real preview's id).
    previewDeploymentId: refused(PREVIEWS),
    ...applied("dnsProviderId", DNS_PROVIDERS),
    ...applied("forwardAuthEnabled", FORWARD_AUTH),
  },
  "domain.byApplicationId": applied("applicationId", DOMAIN),
  "domain.byComposeId": applied("composeId", DOMAIN),
  "domain.one": applied("domainId", DOMAIN),
  "domain.update": {
    ...applied(
      "domainId host path port https certificateType customCertResolver certificate certificateKey serviceName stripPath internalPath customEntrypoint middlewares enabled",
      DOMAIN,
    ),
    domainType: refused(DOMAIN),
    ...applied("dnsProviderId", DNS_PROVIDERS),
    ...applied("forwardAuthEnabled", FORWARD_AUTH),
  },
  "domain.delete": applied("domainId", DOMAIN),
  "domain.toggleEnable": applied("domainId", DOMAIN),
  "domain.generateDomain": applied("appName serverId", DOMAIN),
  "domain.canGenerateTraefikMeDomains": applied("serverId", DOMAIN),
  "domain.validateDomain": applied("domain serverIp serverId", DOMAIN),

  "security.create": applied("applicationId username password", SECURITY),
  "security.one": applied("securityId", SECURITY),
  "security.update": applied("securityId username password", SECURITY),
  "security.delete": applied("securityId", SECURITY),

  "redirects.create": applied("applicationId regex replacement permanent", REDIRECTS),
  "redirects.one": applied("redirectId", REDIRECTS),
  "redirects.update": applied("redirectId regex replacement permanent", REDIRECTS),
  "redirects.delete": applied("redirectId", REDIRECTS),

  "certificates.create": {
    ...applied("certificateData privateKey serverId", CERTIFICATES),
    ...shownOnly("name"),
    autoRenew: refused(CERTIFICATES, {
      name: "walk",
      certificateData: "x",
      privateKey: "x",
      autoRenew: true,
    }),
  },
  "certificates.one": applied("certificateId", CERTIFICATES),
  "certificates.all": {},
  "certificates.update": {
    ...applied("certificateId certificateData privateKey", CERTIFICATES),
    ...shownOnly("name"),
    autoRenew: refused(CERTIFICATES),
  },
  "certificates.remove": applied("certificateId", CERTIFICATES),

  "rollback.rollback": applied("rollbackId", ROLLBACKS),
  "rollback.delete": applied("rollbackId", ROLLBACKS),
  "previewDeployment.all": applied("applicationId", PREVIEWS),
  "previewDeployment.one": applied("previewDeploymentId", PREVIEWS),
  "previewDeployment.delete": applied("previewDeploymentId", PREVIEWS_SERVED),
  "previewDeployment.redeploy": {
    ...applied("previewDeploymentId", PREVIEWS),
    ...shownOnly("title description"),
  },
  "previewDeployment.create": {
    ...applied("applicationId branch", PREVIEWS),
    ...shownOnly("title"),
  },
  "volumeBackups.create": {
    ...applied(
      "name volumeName prefix turnOff cronExpression keepLatestCount enabled applicationId postgresId destinationId",
      VOLUME_BACKUPS,
    ),
    // Each names the service whose volumes the backup may take.
    ...applied("mysqlId mariadbId mongoId redisId composeId", VOLUME_NAMES),
    // Dokploy's CLI sends the service's kind: another than the named service's is a 400.
    serviceType: refused(VOLUME_NAMES),
    serviceName: informational,
  },
  "volumeBackups.update": {
    ...applied(
      "volumeBackupId name volumeName prefix turnOff cronExpression keepLatestCount enabled applicationId postgresId destinationId",
      VOLUME_BACKUPS,
    ),
    // Each names the service whose volumes the backup may take.
    ...applied("mysqlId mariadbId mongoId redisId composeId", VOLUME_NAMES),
    // Dokploy's CLI sends the service's kind: another than the named service's is a 400.
    serviceType: refused(VOLUME_NAMES),
    serviceName: informational,
  },
  "volumeBackups.list": applied("id volumeBackupType", VOLUME_NAMES),
  "volumeBackups.one": applied("volumeBackupId", VOLUME_BACKUPS),
  "volumeBackups.delete": applied("volumeBackupId", VOLUME_BACKUPS),
  "volumeBackups.runManually": applied("volumeBackupId", VOLUME_BACKUPS),
  "volumeBackups.restoreVolumeBackupWithLogs": {
    ...applied("backupFileName destinationId volumeName id serviceType", VOLUME_BACKUPS),
    // Only the service's own server: any other is a 400 naming it.
    serverId: refused(VOLUME_BACKUPS),
  },
  "cluster.getNodes": applied("serverId", CLUSTER),
  "cluster.addWorker": applied("serverId joinServerId", CLUSTER),
  "cluster.addManager": applied("serverId joinServerId", CLUSTER),
  "cluster.updateNode": applied("serverId nodeId availability role labels", CLUSTER),
  "cluster.removeWorker": applied("serverId nodeId", CLUSTER),
  "schedule.create": {
    ...applied("applicationId composeId serverId scheduleType serviceName script", SCHEDULE),
    ...applied("cronExpression command shellType enabled timezone", SCHEDULE_RUNS),
    name: informational,
    description: informational,
    organizationId: refused(SCHEDULE),
  },
  "schedule.update": {
    ...applied("scheduleId serviceName script", SCHEDULE),
    ...applied("cronExpression command shellType enabled timezone", SCHEDULE_RUNS),
    // A schedule's kind and target are fixed at create: a change is a 400 naming the field.
    scheduleType: refused(SCHEDULE),
    applicationId: refused(SCHEDULE),
    composeId: refused(SCHEDULE),
    serverId: refused(SCHEDULE),
    organizationId: refused(SCHEDULE),
    name: informational,
    description: informational,
  },
  "schedule.list": applied("id scheduleType", SCHEDULE),
  "schedule.one": applied("scheduleId", SCHEDULE),
  "schedule.delete": applied("scheduleId", SCHEDULE),
  "schedule.runManually": applied("scheduleId", SCHEDULE_RUNS),

  ...databaseKind("postgres", "postgresId", "databasePassword databaseName databaseUser"),
  ...databaseKind("mysql", "mysqlId", "databasePassword databaseName databaseUser databaseRootPassword"),
  ...databaseKind("mariadb", "mariadbId", "databasePassword databaseName databaseUser databaseRootPassword"),
  ...databaseKind("mongo", "mongoId", "databasePassword databaseUser replicaSets"),
  ...databaseKind("redis", "redisId", "databasePassword"),
  ...libsqlKind(),

  "settings.getWebServerSettings": {},
  "settings.assignDomainServer": applied("host certificateType https letsEncryptEmail", SETTINGS),
  "settings.reloadTraefik": applied("serverId", SETTINGS),
  "settings.toggleDashboard": applied("enableDashboard serverId", SETTINGS),
  "settings.readTraefikConfig": applied("serverId", SETTINGS),
  "settings.updateTraefikConfig": applied("traefikConfig serverId", SETTINGS),
  "settings.cleanUnusedImages": applied("serverId", SETTINGS),
  "settings.cleanUnusedVolumes": applied("serverId", SETTINGS),
  "settings.cleanStoppedContainers": applied("serverId", SETTINGS),
  "settings.cleanDockerBuilder": applied("serverId", SETTINGS),
  "settings.cleanAll": applied("serverId", SETTINGS),
  "settings.cleanDockerPrune": applied("serverId", `${CP}/maintenance/maintenance.test.ts`),
  "settings.updateDockerCleanup": applied("enableDockerCleanup serverId", SETTINGS),
  "settings.readStatsLogs": applied("page sort search status dateRange serverId", MAINTENANCE),
  "settings.toggleRequests": applied("enable serverId", MAINTENANCE),
  "settings.haveActivateRequests": applied("serverId", SETTINGS),
  "settings.saveSSHPrivateKey": applied("sshPrivateKey", SETTINGS),

  "admin.setupMonitoring": applied("metricsConfig", MONITORING),

  "gitProvider.getAll": {},
  "gitProvider.remove": applied("gitProviderId", PROVIDERS),
  "gitProvider.toggleShare": applied("gitProviderId sharedWithOrganization", PROVIDERS),
  "gitProvider.allForPermissions": {},
  "github.create": {
    ...applied(
      "githubAppId githubClientId githubInstallationId githubClientSecret githubPrivateKey githubWebhookSecret",
      PROVIDERS,
    ),
    ...shownOnly("name githubAppName"),
  },
  "github.one": applied("githubId", PROVIDERS),
  "github.githubProviders": {},
  "github.update": {
    ...applied(
      "githubId githubAppId githubClientId githubInstallationId githubClientSecret githubPrivateKey githubWebhookSecret",
      PROVIDERS,
    ),
    gitProviderId: { kind: "applied", proof: PROVIDERS },
    ...shownOnly("name githubAppName"),
  },
  "github.getGithubRepositories": applied("githubId", PROVIDERS),
  "github.getGithubBranches": applied("owner repo githubId", PROVIDERS),
  "github.branches": applied("owner repo githubId", PROVIDERS),
  "github.testConnection": applied("githubId", PROVIDERS),
  "gitlab.create": {
    ...applied(
      "gitlabUrl gitlabInternalUrl applicationId redirectUri groupName expiresAt secret accessToken refreshToken webhookSecret",
      PROVIDERS,
    ),
    // Only the caller's own id (what the provider records anyway): any other is a 400 naming it.
    authId: refused(PROVIDERS),
    ...shownOnly("name"),
  },
  "gitlab.one": applied("gitlabId", PROVIDERS),
  "gitlab.gitlabProviders": {},
  "gitlab.update": {
    ...applied(
      "gitlabId gitlabUrl gitlabInternalUrl applicationId redirectUri groupName expiresAt secret accessToken refreshToken webhookSecret",
      PROVIDERS,
    ),
    gitProviderId: { kind: "applied", proof: PROVIDERS },
    ...shownOnly("name"),
  },
  "gitlab.getGitlabRepositories": applied("gitlabId", PROVIDERS),
  "gitlab.getGitlabBranches": applied("id owner repo gitlabId", PROVIDERS),
  "gitlab.startAuthorization": applied("gitlabId", PROVIDERS),
  "gitlab.testConnection": applied("gitlabId groupName", PROVIDERS),
  "bitbucket.create": {
    ...applied("bitbucketUsername bitbucketEmail bitbucketWorkspaceName appPassword apiToken", PROVIDERS),
    authId: refused(PROVIDERS),
    ...shownOnly("name"),
  },
  "bitbucket.one": applied("bitbucketId", PROVIDERS),
  "bitbucket.bitbucketProviders": {},
  "bitbucket.update": {
    ...applied(
      "bitbucketId bitbucketUsername bitbucketEmail bitbucketWorkspaceName appPassword apiToken",
      PROVIDERS,
    ),
    gitProviderId: { kind: "applied", proof: PROVIDERS },
    ...shownOnly("name"),
  },
  "bitbucket.getBitbucketRepositories": applied("bitbucketId", PROVIDERS),
  "bitbucket.getBitbucketBranches": applied("owner repo bitbucketId", PROVIDERS),
  "bitbucket.testConnection": applied(
    "bitbucketId bitbucketUsername bitbucketEmail workspaceName appPassword apiToken",
    PROVIDERS,
  ),
  "gitea.create": {
    ...applied(
      "giteaUrl giteaInternalUrl redirectUri clientId expiresAt clientSecret accessToken refreshToken",
      PROVIDERS,
    ),
    ...shownOnly("name scopes giteaUsername lastAuthenticatedAt"),
  },
  "gitea.one": applied("giteaId", PROVIDERS),
  "gitea.giteaProviders": {},
  "gitea.update": {
    ...applied(
      "giteaId giteaUrl giteaInternalUrl redirectUri clientId expiresAt clientSecret accessToken refreshToken",
      PROVIDERS,
    ),
    gitProviderId: { kind: "applied", proof: PROVIDERS },
    ...shownOnly("name scopes giteaUsername lastAuthenticatedAt"),
  },
  "gitea.getGiteaRepositories": applied("giteaId", PROVIDERS),
  "gitea.getGiteaBranches": applied("id owner repositoryName giteaId", PROVIDERS),
  "gitea.getGiteaUrl": applied("giteaId", PROVIDERS),
  "gitea.startAuthorization": applied("giteaId", PROVIDERS),
  "gitea.testConnection": applied("giteaId organizationName", PROVIDERS),

  ...notificationKind("Slack", "slackId", "webhookUrl channel"),
  ...notificationKind("Mattermost", "mattermostId", "webhookUrl channel username"),
  ...notificationKind("Discord", "discordId", "webhookUrl decoration"),
  ...notificationKind("Telegram", "telegramId", "botToken chatId messageThreadId"),
  ...notificationKind("Email", "emailId", "smtpServer smtpPort username password fromAddress toAddresses"),
  ...notificationKind("Resend", "resendId", "apiKey fromAddress toAddresses"),
  ...notificationKind("Gotify", "gotifyId", "serverUrl appToken priority decoration"),
  ...notificationKind("Ntfy", "ntfyId", "serverUrl topic accessToken priority"),
  ...notificationKind("Pushover", "pushoverId", "userKey apiToken priority retry expire"),
  ...notificationKind("Lark", "larkId", "webhookUrl"),
  ...notificationKind("Teams", "teamsId", "webhookUrl"),
  ...notificationKind("Custom", "customId", "endpoint headers"),
  "notification.getAll": {},
  "notification.delete": applied("notificationId", NOTIFICATIONS),
  "notification.all": {},
  "notification.one": applied("notificationId", NOTIFICATIONS),
  "notification.remove": applied("notificationId", NOTIFICATIONS),
  "notification.getEmailProviders": {},
  "notification.receiveNotification": applied(
    "ServerType Type Value Threshold Message Timestamp Token",
    `${NOTIFICATIONS}#receiveNotification records a threshold alert for the server holding the token; another token is a 400`,
  ),
  "notification.deliveries": applied("notificationId limit", NOTIFICATIONS),

  "destination.create": {
    ...applied("accessKey secretAccessKey bucket region endpoint", BACKUP),
    ...shownOnly("name provider"),
  },
  "destination.all": {},
  "destination.one": applied("destinationId", BACKUP),
  "destination.update": {
    ...applied("destinationId accessKey secretAccessKey bucket region endpoint", BACKUP),
    ...shownOnly("name provider"),
  },
  "destination.remove": applied("destinationId", BACKUP),
  "destination.testConnection": {
    ...applied("accessKey secretAccessKey bucket region endpoint destinationId", BACKUP),
    // Dokploy's form sends the create fields: the name and the provider's label play no part.
    ...shownOnly("name provider"),
  },

  "backup.create": {
    ...applied(
      "schedule enabled prefix destinationId database databaseType postgresId mysqlId verifyTable",
      BACKUP,
    ),
    ...applied("keepLatestCount mariadbId redisId libsqlId verifyRestore", BACKUPS_E2E),
    // The agent's mongodump of it is apps/agent/src/backup/tools.test.ts (no mongo image here).
    ...applied("mongoId", BACKUP),
    ...applied("backupType composeId serviceName metadata", COMPOSE_BACKUP),
  },
  "backup.one": applied("backupId", BACKUP),
  "backup.update": {
    ...applied("backupId schedule enabled prefix destinationId database verifyTable", BACKUP),
    ...applied("keepLatestCount verifyRestore", BACKUPS_E2E),
    databaseType: refused(BACKUP, { backupId: "$backupId", databaseType: "mysql" }),
    serviceName: refused(BACKUP, { backupId: "$backupId", serviceName: "web" }),
    metadata: refused(BACKUP, { backupId: "$backupId", metadata: { a: 1 } }),
  },
  "backup.remove": applied("backupId", BACKUP),
  "backup.manualBackupPostgres": applied("backupId", BACKUPS_E2E),
  "backup.manualBackupMySql": applied("backupId", BACKUPS_E2E),
  "backup.manualBackupMysql": applied("backupId", BACKUPS_E2E),
  "backup.manualBackupMariadb": applied("backupId", BACKUPS_E2E),
  "backup.manualBackupMongo": applied("backupId", BACKUPS_E2E),
  "backup.manualBackupRedis": applied("backupId", BACKUPS_E2E),
  "backup.manualBackupLibsql": applied("backupId", BACKUPS_E2E),
  "backup.manualBackupCompose": applied("backupId", COMPOSE_BACKUP),
  "backup.manualBackupWebServer": applied("backupId", WEB_SERVER_BACKUP),
  "backup.verifyRestore": applied("backupId backupFile", BACKUPS_E2E),
  "backup.listBackupFiles": { ...applied("destinationId search", BACKUP), ...shownOnly("serverId") },
  "backup.restoreBackupWithLogs": {
    ...applied("databaseId databaseType databaseName backupFile destinationId", BACKUPS_E2E),
    backupType: refused(BACKUP, restoreProbe({ backupType: "compose" })),
    metadata: refused(BACKUP, restoreProbe({ metadata: { a: 1 } })),
  },
  // Issue 39 items 5 and 6.
  "server.count": {},
  "server.withSSHKey": {},
  "server.buildServers": {},
  "server.allForPermissions": {},
  "server.getServerTime": {},
  "server.getDefaultCommand": applied("serverId", `${CP}/routers/server-lists.test.ts`),
  "server.getServices": applied("serverId", `${CP}/routers/server-lists.test.ts`),
  "settings.getDokployVersion": {},
  "settings.getIp": {},
  "settings.updateServerIp": applied("serverIp", `${CP}/routers/settings-info.test.ts`),
  "settings.health": {},
  "settings.checkInfrastructureHealth": {},
  "settings.isCloud": {},
  "settings.getDokployCloudIps": {},
  "settings.isUserSubscribed": {},
  "settings.getLogCleanupStatus": {},
  "settings.haveTraefikDashboardPortEnabled": applied("serverId", `${CP}/routers/settings-info.test.ts`),
  "settings.getTraefikPorts": applied("serverId", `${CP}/routers/settings-info.test.ts`),
  "settings.readTraefikEnv": applied("serverId", `${CP}/routers/settings-info.test.ts`),
  "settings.getOpenApiDocument": {},
  "settings.cleanSSHPrivateKey": {},
  "settings.cleanAllDeploymentQueue": {},
  "settings.getDockerDiskUsage": {},
  "settings.updateRemoteServersOnly": applied(
    "remoteServersOnly",
    `${CP}/maintenance/instance-settings.test.ts`,
  ),
  "settings.getReleaseTag": {},
  "settings.updateTraefikPorts": applied("serverId additionalPorts", `${CP}/routers/settings-info.test.ts`),
  "settings.writeTraefikEnv": applied("env serverId", `${CP}/routers/settings-info.test.ts`),
  "settings.getUpdateData": {},
  "settings.updateLogCleanup": applied("cronExpression", `${CP}/maintenance/engine-settings.test.ts`),
  "settings.cleanMonitoring": applied("serverId", `${CP}/maintenance/engine-settings.test.ts`),
  "settings.createPlatformNetwork": {},
  "settings.reloadServer": {},
  "settings.updateServer": {},
  "settings.updateBuildsConcurrency": applied("buildsConcurrency", `${CP}/deployments/build-slots.test.ts`),
  "server.updateBuildsConcurrency": applied(
    "serverId buildsConcurrency",
    `${CP}/deployments/build-slots.test.ts`,
  ),
  "docker.getServerHealth": applied("serverId sinceHours", `${CP}/maintenance/engine-settings.test.ts`),
  "settings.checkGPUStatus": applied("serverId", `${CP}/gpu/gpu-support.test.ts`),
  "settings.setupGPU": applied("serverId", `${CP}/gpu/gpu-support.test.ts`),
  "settings.updateEnforceSSO": {
    enforceSSO: refused(`${CP}/gpu/gpu-support.test.ts`, { enforceSSO: true }),
  },
  "settings.readDirectories": applied("serverId", `${CP}/proxy/traefik-files.remote.test.ts`),
  "settings.readTraefikFile": {
    ...applied("path", `${CP}/proxy/traefik-files.test.ts`),
    ...applied("serverId", `${CP}/proxy/traefik-files.remote.test.ts`),
  },
  "settings.updateTraefikFile": {
    ...applied("path traefikConfig", `${CP}/proxy/traefik-files.test.ts`),
    ...applied("serverId", `${CP}/proxy/traefik-files.remote.test.ts`),
  },
  "settings.readMiddlewareTraefikConfig": {},
  "settings.updateMiddlewareTraefikConfig": applied("traefikConfig", `${CP}/proxy/traefik-files.test.ts`),
  "settings.readWebServerTraefikConfig": {},
  "settings.updateWebServerTraefikConfig": applied("traefikConfig", `${CP}/proxy/traefik-files.test.ts`),
  "dockerVolume.getVolumes": applied("serverId", DOCKER_OBJECTS),
  "dockerVolume.getVolumesSize": applied("serverId", DOCKER_OBJECTS),
  "dockerVolume.getVolumeConfig": applied("volumeName serverId", DOCKER_OBJECTS),
  "dockerVolume.removeVolume": applied("volumeName serverId", DOCKER_OBJECTS),
  "dockerVolume.listVolumeFiles": applied("volumeName path serverId", DOCKER_OBJECTS),
  "dockerVolume.readVolumeFile": applied("volumeName path serverId", DOCKER_OBJECTS),
  "dockerVolume.writeVolumeFile": applied("volumeName path content serverId", DOCKER_OBJECTS),
  "dockerVolume.deleteVolumeFile": applied("volumeName path serverId", DOCKER_OBJECTS),
  "dockerImage.getImages": applied("serverId", DOCKER_OBJECTS),
  "dockerImage.getImageConfig": applied("imageRef serverId", DOCKER_OBJECTS),
  "dockerImage.removeImage": applied("repository tag id force serverId", DOCKER_OBJECTS),
  "dockerDiskUsage.getDiskUsage": applied("serverId", DOCKER_OBJECTS),
  "dockerDiskUsage.getBuildCache": applied("serverId", DOCKER_OBJECTS),
  "dockerDiskUsage.pruneBuildCache": applied("serverId", DOCKER_OBJECTS),
  "swarm.getNodes": applied("serverId", SWARM),
  "swarm.getNodeInfo": applied("nodeId serverId", SWARM),
  "swarm.getNodeApps": applied("serverId", SWARM),
  "swarm.getContainerStats": applied("serverId", SWARM),
  "network.all": applied("serverId", NETWORKS),
  "network.one": applied("networkId", NETWORKS),
  "network.create": applied("name driver internal mtu serverId", NETWORKS),
  "network.inspect": applied("networkId", NETWORKS),
  "network.remove": applied("networkId", NETWORKS),
  "network.networksToSync": applied("serverId", NETWORK_ATTACH),
  "network.import": applied("serverId names", NETWORK_ATTACH),
  "network.recreate": applied("networkId", NETWORK_ATTACH),
  "network.resync": applied("serverId", NETWORK_ATTACH),
  "patch.create": applied("filePath content type enabled applicationId composeId", PATCHES),
  "patch.one": applied("patchId", PATCHES),
  "patch.byEntityId": applied("id type", PATCHES),
  "patch.update": applied("patchId type filePath enabled content", PATCHES),
  "patch.delete": applied("patchId", PATCHES),
  "patch.toggleEnabled": applied("patchId enabled", PATCHES),
  "patch.saveFileAsPatch": applied("id type filePath content patchType", PATCHES),
  "patch.markFileForDeletion": applied("id type filePath", PATCHES),
  "patch.ensureRepo": applied("id type", PATCHES),
  "patch.readRepoDirectories": applied("id type repoPath", PATCHES),
  "patch.readRepoFile": applied("id type filePath", PATCHES),
  "patch.cleanPatchRepos": applied("serverId", PATCHES),
  "tag.create": applied("name color", TAGS),
  "tag.all": {},
  "tag.one": applied("tagId", TAGS),
  "tag.update": applied("tagId name color", TAGS),
  "tag.remove": applied("tagId", TAGS),
  "tag.assignToProject": applied("projectId tagId", TAGS),
  "tag.removeFromProject": applied("projectId tagId", TAGS),
  "tag.bulkAssign": applied("projectId tagIds", TAGS),
  "vaultProvider.create": applied("name config assignments", VAULTS),
  "vaultProvider.update": applied("vaultProviderId name config assignments", VAULTS),
  "vaultProvider.remove": applied("vaultProviderId", VAULTS),
  "vaultProvider.all": {},
  "vaultProvider.one": applied("vaultProviderId", VAULTS),
  "vaultProvider.testConnection": applied("vaultProviderId config", VAULTS),
  "vaultProvider.listSecretNames": applied("vaultProviderId projectId environmentId", VAULTS),
  "dnsProvider.create": applied("name config", DNS_PROVIDERS),
  "dnsProvider.update": applied("dnsProviderId name config", DNS_PROVIDERS),
  "dnsProvider.remove": applied("dnsProviderId", DNS_PROVIDERS),
  "dnsProvider.all": {},
  "dnsProvider.one": applied("dnsProviderId", DNS_PROVIDERS),
  "dnsProvider.testConnection": applied("dnsProviderId config", DNS_PROVIDERS),
  "dnsProvider.listZones": applied("dnsProviderId", DNS_PROVIDERS),
  "dnsProvider.listRecords": applied("dnsProviderId zoneId", DNS_PROVIDERS),
  "dnsProvider.createRecord": applied("dnsProviderId zoneId type name content ttl proxied", DNS_PROVIDERS),
  "dnsProvider.updateRecord": applied(
    "dnsProviderId zoneId recordId type name content ttl proxied",
    DNS_PROVIDERS,
  ),
  "dnsProvider.deleteRecord": applied("dnsProviderId zoneId recordId", DNS_PROVIDERS),
  "forwardAuth.getAuthDomain": applied("serverId", FORWARD_AUTH),
  "forwardAuth.setAuthDomain": applied(
    "serverId authDomain https certificateType customCertResolver",
    FORWARD_AUTH,
  ),
  "forwardAuth.removeAuthDomain": applied("serverId", FORWARD_AUTH),
  "forwardAuth.listProviders": {},
  "forwardAuth.createProvider": {
    ...applied("issuer clientId clientSecret scopes", FORWARD_AUTH),
    domain: informational,
  },
  "forwardAuth.removeProvider": applied("providerId", FORWARD_AUTH),
  "forwardAuth.serverStatus": {},
  "forwardAuth.deployOnServer": applied("serverId providerId", FORWARD_AUTH),
  "forwardAuth.removeOnServer": applied("serverId", FORWARD_AUTH),
  "forwardAuth.status": applied("domainId", FORWARD_AUTH),
  "forwardAuth.enable": applied("domainId", FORWARD_AUTH),
  "forwardAuth.disable": applied("domainId", FORWARD_AUTH),
};

function pick(fields: ProcedureFields, names: string): ProcedureFields {
  return Object.fromEntries(names.split(/\s+/).map((name) => [name, fields[name]!]));
}

function restoreProbe(extra: Record<string, unknown>): Record<string, unknown> {
  return {
    databaseId: "$postgresId",
    databaseType: "postgres",
    databaseName: "app",
    backupFile: "walk/app.dump.gz",
    destinationId: "$destinationId",
    ...extra,
  };
}
