/**
 * What Dokploy accepts and answers, for every procedure we serve, read from Dokploy's routers
 * (apps/dokploy/server/api/routers/*.ts) and zod schemas (packages/server/src/db/schema/*.ts)
 * in the Dokploy/dokploy repository, at the commits named in `sources`. Facts only, in our own
 * notation; dokploy-table.test.ts checks every served procedure against its row.
 *
 * Notation:
 * - `input`: Dokploy's top-level input fields; `name*` is required, `name=<json>` has that default.
 *   Dokploy's `.required()` on a drizzle insert schema makes every picked field required.
 * - `output`: `object:key,key` (the answer is an object with at least those keys), `array:key`
 *   (a list of such objects), `boolean`, `string`, `number`, `null` (the mutation returns
 *   nothing), `any` (not checked: Dokploy returns a library's raw value).
 *   Dokploy's `true`/nothing for a mutation matches our `{success: true}` (spec 4.0), except
 *   `boolean!`: there the answer must be the boolean itself.
 * - `differs`: a field (or `(output)`) where we deliberately differ, with the reason; the check
 *   skips it. Each kind of reason is a line of docs/decisions.md.
 * - `pendingOn`: the row states Dokploy's truth but our schema follows only once that branch is
 *   merged; the check is skipped with the reason and listed in the report.
 * - `platformOnly`: the procedure has no Dokploy counterpart; only its presence is checked.
 * - `unverified`: Dokploy's schema for it was not read yet (the reason says what is missing);
 *   the check is skipped, the row must be completed.
 */

export const sources = {
  project: "routers/project.ts@010a6e2a7627, schema/project.ts@010a6e2a7627",
  environment: "routers/environment.ts@0979167a5cac, schema/environment.ts@1fcf16fa1d72",
  docker: "routers/docker.ts@2a14ae0c7fd0",
  server: "routers/server.ts@cb7c54a32eed, schema/server.ts@010a6e2a7627",
  sshKey:
    "routers/ssh-key.ts@02554c0139be, schema/ssh-key.ts@059c21c99028, validations sshKeyType (code search)",
  application: "routers/application.ts@012b67a4912b, schema/application.ts@0015f081df77",
  deployment: "routers/deployment.ts@08c9113405fa",
  port: "routers/port.ts@6734363710d4, schema/port.ts@3561b5cae60b",
  mounts: "routers/mount.ts@02a9856fa76f, schema/mount.ts@02a9856fa76f",
  registry: "routers/registry.ts@059c21c99028, schema/registry.ts@1bcb5ca2771e",
  domain:
    "routers/domain.ts@010a6e2a7627, schema/domain.ts@80d5313dd8a5 (customEntrypoint, middlewares: newer schema, named by issue 11)",
  security: "routers/security.ts@3747db08d473, schema/security.ts@7e0fde804143",
  redirects: "routers/redirects.ts@3747db08d473, schema/redirects.ts@3c63089457e0",
  rollback:
    "routers/rollbacks.ts@5a46b879f503 (apiFindOneRollback), schema/rollbacks.ts@078ca1957807, services/rollbacks.ts@00fb5a67fbee (rollback answers nothing, removeRollbackById the row; deployments.rollbackId set by createRollback)",
  settings:
    "routers/settings.ts and schema/web-server-settings.ts (getWebServerSettings, reloadTraefik, toggleDashboard, readTraefikConfig, updateTraefikConfig, apiAssignDomain), found by code search; commit not shown by the search; clean*, updateDockerCleanup, saveSSHPrivateKey, readStatsLogs, toggleRequests, haveActivateRequests: routers/settings.ts@009cb0552f28 with apiServerSchema, apiUpdateDockerCleanup, apiSaveSSHKey, apiReadStatsLogs (code search)",
  user: "routers/user.ts@5a46b879f503",
  postgres:
    "schema/postgres.ts@010a6e2a7627 (apiCreatePostgres, apiFindOnePostgres, apiDeployPostgres, apiSaveExternalPortPostgres, apiSaveEnvironmentVariablesPostgres, apiResetPostgres, apiUpdatePostgres = the insert schema made partial, less serverId, apiRebuildPostgres)",
  mysql:
    "routers/mysql.ts@010a6e2a7627, schema/mysql.ts@010a6e2a7627 (apiCreateMySql: databaseRootPassword optional, dockerImage default mysql:8; apiUpdateMySql = the insert schema made partial, less serverId)",
  mariadb:
    "routers/mariadb.ts@027e425d313b, schema/mariadb.ts@010a6e2a7627 (apiCreateMariaDB: databaseRootPassword optional, dockerImage default mariadb:6; apiUpdateMariaDB = the insert schema made partial, less serverId)",
  mongo:
    "schema/mongo.ts@010a6e2a7627 (apiCreateMongo: databaseUser, replicaSets default false, no databaseName, dockerImage default mongo:15; apiUpdateMongo = the insert schema made partial, less serverId), routers/mongo.ts@00fc1a9c962d (an older router: the same procedures and answers as mysql.ts's but create answering true)",
  redis:
    "routers/redis.ts@027e425d313b, schema/redis.ts@010a6e2a7627 (apiCreateRedis: no databaseName, databaseUser nor root password, databasePassword without the pattern, dockerImage default redis:8; apiUpdateRedis = the insert schema made partial, less serverId)",
  admin:
    "routers/admin.ts (setupMonitoring: adminProcedure, input apiUpdateWebServerMonitoring = {metricsConfig}), found by code search; commit not shown by the search",
  monitoring:
    "routers/server.ts (setupMonitoring: apiUpdateServerMonitoring = serverId + metricsConfig; getServerMetrics: {url, token, dataPoints} strings, fetches url?limit=dataPoints with the Bearer token, answers the JSON array), routers/user.ts (getMetricsToken: {serverIp, enabledFeatures, metricsConfig} of the owner), found by code search; commit not shown by the search",
  notification:
    "schema/notification.ts@fefb5d14e052 (slack, telegram, discord, email, gotify; the other kinds are not in the stored schema: their rows follow spec 4.11)",
  organization: "routers/organization.ts@b20c95ffbc02 (create, delete: @00b724c81468)",
  destination:
    "routers/destination.ts@0076d1c71dcf, schema/destination.ts@05605ef2391a (apiCreateDestination: name, provider, accessKey, secretAccessKey, bucket, region, endpoint, additionalFlags=[] required, serverId optional; testConnection takes apiCreateDestination)",
  backup:
    "routers/backup.ts@0496b3bfa580, schema/backups.ts@0bb0fcd9ecc3 (apiCreateBackup, apiUpdateBackup .required(), apiFindOneBackup, apiRemoveBackup, apiRestoreBackup; manual runs answer true; listBackupFiles {destinationId, search, serverId?} answers rclone lsjson items)",
} as const;

export interface Row {
  kind: "query" | "mutation";
  source?: keyof typeof sources;
  input?: string[];
  output?: string;
  differs?: Record<string, string>;
  pendingOn?: "compat-fields";
  pendingReason?: string;
  platformOnly?: string;
  unverified?: string;
}

const WE_SET = "set by the platform from the session or the parent row, never by the caller";
const LENIENT = "optional with us: a Dokploy client always sends it, so nothing breaks";
const LENIENT_PATCH =
  "optional with us: a field left out keeps its stored value, so a Dokploy client sending all of them works alike";
const NO_ECR = "AWS ECR registries are not served";
const NO_COMPOSE = "compose services are not served";
const COMPOSE_UNREAD =
  "issue 23 rows: Dokploy's routers/compose.ts and schema/compose.ts not yet compared field by field";
const TOGGLE_DEFAULT = "spec 2.11: every toggle is optional and defaults to false";
const LIMITS = "ours: a channel limited to projects or services (issue 24 item 5)";
const CLEANER = "we answer the same data in a shape of our own";
const NO_RCLONE = "destinations are S3 buckets reached with the AWS SDK, not rclone: no rclone flags";
const NO_LIBSQL = "libsql services are not served";
const VERIFY = "ours: restore verification (issue 26 item 4)";
const MANUAL_ANSWER =
  "we answer the run's outcome {success, deploymentId, status, backupFile, sizeBytes, verification, errorMessage} where Dokploy answers true";
const SUCCESS_ANSWER = "we answer {success:true} where Dokploy answers the removed row (spec 4.0)";

const defaultImages: Record<string, string> = {
  postgres: "postgres:18",
  mysql: "mysql:8",
  mariadb: "mariadb:11",
  mongo: "mongo:8",
  redis: "redis:7",
};

/** Dokploy's dockerImage defaults on create (its createSchema's, not the table's). */
const dokployDefaultImages: Record<string, string> = {
  postgres: "postgres:18",
  mysql: "mysql:8",
  mariadb: "mariadb:6",
  mongo: "mongo:15",
  redis: "redis:8",
};

export const dokployProcedures: Record<string, Row> = {
  // auth: Dokploy signs in through better-auth at /api/auth/*, not through tRPC.
  "auth.register": {
    kind: "mutation",
    platformOnly: "Dokploy registers through better-auth (/api/auth/sign-up)",
  },
  "auth.login": {
    kind: "mutation",
    platformOnly: "Dokploy signs in through better-auth (/api/auth/sign-in)",
  },
  "auth.logout": {
    kind: "mutation",
    platformOnly: "Dokploy signs out through better-auth (/api/auth/sign-out)",
  },

  "user.all": {
    kind: "query",
    source: "user",
    input: [],
    output: "array:",
    differs: { "(output)": CLEANER },
  },
  "user.one": {
    kind: "query",
    source: "user",
    input: ["userId*"],
    output: "object:",
    differs: { "(output)": CLEANER },
  },
  "user.get": {
    kind: "query",
    source: "user",
    input: [],
    output: "object:",
    differs: { "(output)": CLEANER },
  },
  "user.update": {
    kind: "mutation",
    unverified:
      "apiUpdateUser is every column of Dokploy's user table (createSchema.partial(), table not read) plus password, currentPassword, name, metricsConfig, logCleanupCron",
  },
  "user.remove": { kind: "mutation", source: "user", input: ["userId*"], output: "any" },
  "user.assignPermissions": {
    kind: "mutation",
    source: "user",
    input: [
      "id*",
      "accessedProjects*",
      "accessedEnvironments*",
      "accessedServices*",
      "canCreateProjects*",
      "canCreateServices*",
      "canDeleteProjects*",
      "canDeleteServices*",
      "canAccessToDocker*",
      "canAccessToTraefikFiles*",
      "canAccessToAPI*",
      "canAccessToSSHKeys*",
      "canAccessToGitProviders*",
    ],
    output: "null",
    differs: {
      accessedProjects: LENIENT_PATCH,
      accessedEnvironments: LENIENT_PATCH,
      accessedServices: LENIENT_PATCH,
      canCreateProjects: LENIENT_PATCH,
      canCreateServices: LENIENT_PATCH,
      canDeleteProjects: LENIENT_PATCH,
      canDeleteServices: LENIENT_PATCH,
      canAccessToDocker: LENIENT_PATCH,
      canAccessToTraefikFiles: LENIENT_PATCH,
      canAccessToAPI: LENIENT_PATCH,
      canAccessToSSHKeys: LENIENT_PATCH,
      canAccessToGitProviders: LENIENT_PATCH,
      role: "our members have a role column that assignPermissions also sets (never owner)",
      canAccessAuditLog: "our own permission flag (the audit log is an organization setting)",
      canCreateEnvironments: "newer Dokploy permission flag, absent at the commit read",
      canDeleteEnvironments: "newer Dokploy permission flag, absent at the commit read",
    },
  },
  "user.createApiKey": {
    kind: "mutation",
    source: "user",
    input: [
      "name*",
      "prefix",
      "expiresIn",
      "metadata*",
      "rateLimitEnabled",
      "rateLimitTimeWindow",
      "rateLimitMax",
      "remaining",
      "refillAmount",
      "refillInterval",
    ],
    output: "object:",
    differs: { organizationId: "accepted from older clients of ours; it must equal metadata.organizationId" },
  },
  "user.deleteApiKey": { kind: "mutation", source: "user", input: ["apiKeyId*"], output: "boolean" },
  "user.getInvitations": {
    kind: "query",
    source: "user",
    input: [],
    output: "array:",
    differs: {
      token:
        "ours: the invitation's secret token; invitations are found by it only, never by the caller's email (issue 22 finding 5)",
    },
  },
  "user.changeEmail": {
    kind: "mutation",
    platformOnly:
      "Dokploy changes emails through user.update; here the instance administrator applies a change until an email channel confirms addresses (issue 22 finding 5)",
  },
  "user.checkUserOrganizations": {
    kind: "query",
    source: "user",
    input: ["userId*"],
    output: "number",
    differs: { "(output)": "we answer {count}" },
  },
  "user.getMetricsToken": {
    kind: "query",
    source: "monitoring",
    input: [],
    output: "object:serverIp,enabledFeatures,metricsConfig",
  },
  "admin.setupMonitoring": {
    kind: "mutation",
    source: "admin",
    input: ["metricsConfig*"],
    output: "object:success,message",
  },

  "organization.all": { kind: "query", source: "organization", input: [], output: "array:id,name,ownerId" },
  "organization.one": {
    kind: "query",
    source: "organization",
    input: ["organizationId*"],
    output: "object:id,name,ownerId",
  },
  "organization.update": {
    kind: "mutation",
    source: "organization",
    input: ["organizationId*", "name*", "logo"],
    output: "object:id,name",
    differs: { logo: "organization logos are not stored" },
  },
  "organization.create": {
    kind: "mutation",
    source: "organization",
    input: ["name*", "logo"],
    output: "object:id,name,ownerId",
    differs: { logo: "organization logos are not stored" },
  },
  "organization.delete": {
    kind: "mutation",
    source: "organization",
    input: ["organizationId*"],
    output: "any",
  },
  "organization.setActive": {
    kind: "mutation",
    platformOnly: "better-auth's organization.setActive in Dokploy",
  },
  "organization.inviteMember": {
    kind: "mutation",
    platformOnly: "better-auth's organization.inviteMember in Dokploy",
  },
  "organization.allInvitations": {
    kind: "query",
    source: "organization",
    input: [],
    output: "array:id,email,role,status",
  },
  "organization.removeInvitation": {
    kind: "mutation",
    source: "organization",
    input: ["invitationId*"],
    output: "any",
  },
  "organization.acceptInvitation": {
    kind: "mutation",
    platformOnly: "better-auth's organization.acceptInvitation in Dokploy",
  },

  "project.create": {
    kind: "mutation",
    source: "project",
    input: ["name*", "description", "env"],
    output: "object:project,environment",
  },
  "project.one": {
    kind: "query",
    source: "project",
    input: ["projectId*"],
    output: "object:projectId,name,environments",
  },
  "project.all": { kind: "query", source: "project", input: [], output: "array:projectId,name,environments" },
  "project.update": {
    kind: "mutation",
    source: "project",
    input: [
      "projectId*",
      "name",
      "description",
      "env",
      "createdAt",
      "organizationId",
      "wildcardDomain",
      "useOrganizationWildcard",
    ],
    output: "object:projectId,name",
    differs: {
      createdAt: WE_SET,
      organizationId: WE_SET,
      wildcardDomain: "project wildcard domains are not served",
      useOrganizationWildcard: "project wildcard domains are not served",
    },
  },
  "project.remove": {
    kind: "mutation",
    source: "project",
    input: ["projectId*"],
    output: "object:projectId",
    differs: { "(output)": SUCCESS_ANSWER },
  },
  "project.duplicate": {
    kind: "mutation",
    source: "project",
    input: [
      "sourceEnvironmentId*",
      "name*",
      "description",
      "includeServices=true",
      "selectedServices",
      "duplicateInSameProject=false",
    ],
    output: "any",
  },
  "project.search": {
    kind: "query",
    source: "project",
    input: ["q", "name", "description", "limit=20", "offset=0"],
    output: "object:items,total",
  },

  "environment.create": {
    kind: "mutation",
    source: "environment",
    input: ["name*", "description", "projectId*", "color"],
    output: "object:environmentId,name,projectId",
    differs: {
      color: "environment colours are not stored",
      env: "we also take the environment's variables on create",
    },
  },
  "environment.one": {
    kind: "query",
    source: "environment",
    input: ["environmentId*"],
    output: "object:environmentId,name,projectId",
  },
  "environment.byProjectId": {
    kind: "query",
    source: "environment",
    input: ["projectId*"],
    output: "array:environmentId,name",
  },
  "environment.update": {
    kind: "mutation",
    source: "environment",
    input: ["environmentId*", "name", "description", "createdAt", "env", "projectId", "color"],
    output: "object:environmentId,name",
    differs: {
      createdAt: WE_SET,
      projectId: "an environment does not move between projects",
      color: "environment colours are not stored",
    },
  },
  "environment.remove": {
    kind: "mutation",
    source: "environment",
    input: ["environmentId*"],
    output: "object:environmentId",
    differs: { "(output)": SUCCESS_ANSWER },
  },

  "docker.getContainers": { kind: "query", source: "docker", input: ["serverId"], output: "array:" },
  "docker.restartContainer": {
    kind: "mutation",
    source: "docker",
    input: ["containerId*"],
    output: "any",
    differs: { serverId: "we also restart containers on remote servers" },
  },
  "docker.getConfig": { kind: "query", source: "docker", input: ["containerId*", "serverId"], output: "any" },
  "docker.getContainersByAppNameMatch": {
    kind: "query",
    source: "docker",
    input: ["appType", "appName*", "serverId"],
    output: "array:",
  },
  "docker.getContainersByAppLabel": {
    kind: "query",
    source: "docker",
    input: ["appName*", "serverId", "type*"],
    output: "array:",
  },
  "docker.getStackContainersByAppName": {
    kind: "query",
    source: "docker",
    input: ["appName*", "serverId"],
    output: "array:",
  },
  "docker.getServiceContainersByAppName": {
    kind: "query",
    source: "docker",
    input: ["appName*", "serverId"],
    output: "array:",
  },

  "agent.enroll": {
    kind: "mutation",
    platformOnly: "an agent enrolls with the control plane; Dokploy connects over SSH",
  },

  "server.create": {
    kind: "mutation",
    source: "server",
    input: [
      "name*",
      "description*",
      "ipAddress*",
      "port*",
      "username*",
      "sshKeyId*",
      "serverType*",
      "enableDockerCleanup=true",
    ],
    output: "object:serverId,name",
    differs: {
      description: LENIENT,
      port: LENIENT,
      sshKeyId: "optional with us: a server may enroll an agent instead of giving an SSH key",
      serverType: LENIENT,
      enableDockerCleanup: "Docker clean-up is not scheduled by the platform",
    },
  },
  "server.one": {
    kind: "query",
    source: "server",
    input: ["serverId*"],
    output: "object:serverId,name,ipAddress",
  },
  "server.all": { kind: "query", source: "server", input: [], output: "array:serverId,name,totalSum" },
  "server.update": {
    kind: "mutation",
    source: "server",
    input: [
      "name*",
      "description*",
      "serverId*",
      "ipAddress*",
      "port*",
      "username*",
      "sshKeyId*",
      "serverType*",
      "enableDockerCleanup=true",
      "command",
    ],
    output: "object:serverId",
    differs: {
      name: LENIENT,
      description: LENIENT,
      ipAddress: LENIENT,
      port: LENIENT,
      username: LENIENT,
      sshKeyId: LENIENT,
      serverType: LENIENT,
      enableDockerCleanup: "Docker clean-up is not scheduled by the platform",
      command: "the set-up command is the platform's own, not the caller's",
    },
  },
  "server.remove": {
    kind: "mutation",
    source: "server",
    input: ["serverId*"],
    output: "object:serverId",
    differs: { "(output)": SUCCESS_ANSWER },
  },
  "server.publicIp": {
    kind: "query",
    source: "server",
    input: [],
    output: "string",
    differs: { "(output)": "we answer {publicIp}" },
  },
  "server.validate": {
    kind: "query",
    source: "server",
    input: ["serverId*"],
    output: "object:docker,rclone,nixpacks,buildpacks,railpack,isSwarmInstalled,isMainDirectoryInstalled",
  },
  "server.security": {
    kind: "query",
    source: "server",
    input: ["serverId*"],
    output: "object:ufw,ssh,nonRootUser,unattendedUpgrades,fail2ban",
  },
  "server.setupMonitoring": {
    kind: "mutation",
    source: "monitoring",
    input: ["serverId*", "metricsConfig*"],
    output: "any",
    differs: {
      "(output)": "we answer {success, message} where Dokploy answers the monitoring container it started",
    },
  },
  "server.getServerMetrics": {
    kind: "query",
    source: "monitoring",
    input: ["url*", "token*", "dataPoints*"],
    output: "any",
  },
  "server.enrollmentCommand": {
    kind: "mutation",
    platformOnly: "the agent enrollment command; Dokploy sets servers up over SSH",
  },
  "server.setup": { kind: "mutation", source: "server", input: ["serverId*"], output: "object:serverId" },

  "sshKey.create": {
    kind: "mutation",
    source: "sshKey",
    input: ["name*", "description", "privateKey*", "publicKey*", "organizationId"],
    output: "any",
    differs: { organizationId: WE_SET },
  },
  "sshKey.one": {
    kind: "query",
    source: "sshKey",
    input: ["sshKeyId*"],
    output: "object:sshKeyId,name,publicKey",
  },
  "sshKey.all": { kind: "query", source: "sshKey", input: [], output: "array:sshKeyId,name,publicKey" },
  "sshKey.update": {
    kind: "mutation",
    source: "sshKey",
    input: ["name", "description", "lastUsedAt", "sshKeyId*"],
    output: "any",
    differs: { lastUsedAt: WE_SET },
  },
  "sshKey.remove": { kind: "mutation", source: "sshKey", input: ["sshKeyId*"], output: "any" },
  "sshKey.generate": { kind: "mutation", source: "sshKey", input: ["type"], output: "any" },

  "application.create": {
    kind: "mutation",
    source: "application",
    input: ["name*", "appName", "description", "environmentId*", "serverId", "sourceType"],
    output: "object:applicationId,name,appName",
  },
  "application.one": {
    kind: "query",
    source: "application",
    input: ["applicationId*"],
    output: "object:applicationId,name,appName,environmentId",
  },
  "application.update": {
    kind: "mutation",
    source: "application",
    input: [
      "applicationId*",
      "name",
      "appName",
      "description",
      "env",
      "previewEnv",
      "watchPaths",
      "previewBuildArgs",
      "previewBuildSecrets",
      "previewLabels",
      "previewWildcard",
      "previewPort",
      "previewHttps",
      "previewPath",
      "previewCertificateType",
      "previewCustomCertResolver",
      "previewLimit",
      "isPreviewDeploymentsActive",
      "previewRequireCollaboratorPermissions",
      "rollbackActive",
      "buildArgs",
      "buildSecrets",
      "memoryReservation",
      "memoryLimit",
      "cpuReservation",
      "cpuLimit",
      "title",
      "enabled",
      "subtitle",
      "command",
      "args",
      "icon",
      "refreshToken",
      "sourceType",
      "cleanCache",
      "repository",
      "owner",
      "branch",
      "buildPath",
      "triggerType",
      "autoDeploy",
      "gitlabProjectId",
      "gitlabRepository",
      "gitlabOwner",
      "gitlabBranch",
      "gitlabBuildPath",
      "gitlabPathNamespace",
      "giteaRepository",
      "giteaOwner",
      "giteaBranch",
      "giteaBuildPath",
      "bitbucketRepository",
      "bitbucketRepositorySlug",
      "bitbucketOwner",
      "bitbucketBranch",
      "bitbucketBuildPath",
      "username",
      "password",
      "dockerImage",
      "registryUrl",
      "customGitUrl",
      "customGitBranch",
      "customGitBuildPath",
      "customGitSSHKeyId",
      "enableSubmodules",
      "dockerfile",
      "dockerContextPath",
      "dockerBuildStage",
      "dropBuildPath",
      "healthCheckSwarm",
      "restartPolicySwarm",
      "placementSwarm",
      "updateConfigSwarm",
      "rollbackConfigSwarm",
      "modeSwarm",
      "labelsSwarm",
      "networkSwarm",
      "stopGracePeriodSwarm",
      "endpointSpecSwarm",
      "ulimitsSwarm",
      "replicas",
      "applicationStatus",
      "buildType",
      "buildArchitecture",
      "buildxBuilder",
      "railpackVersion",
      "herokuVersion",
      "publishDirectory",
      "isStaticSpa",
      "createEnvFile",
      "createdAt",
      "registryId",
      "rollbackRegistryId",
      "environmentId",
      "githubId",
      "gitlabId",
      "giteaId",
      "bitbucketId",
      "buildServerId",
      "buildRegistryId",
      "networkIds",
      "detachDokployNetwork",
    ],
    output: "boolean",
    differs: { webhookSecret: "our write-only deploy-webhook signing secret (docs/decisions.md)" },
  },
  "application.search": {
    kind: "query",
    source: "application",
    input: [
      "q",
      "name",
      "appName",
      "description",
      "repository",
      "owner",
      "dockerImage",
      "projectId",
      "environmentId",
      "limit=20",
      "offset=0",
    ],
    output: "object:items,total",
  },
  "application.saveGithubProvider": {
    kind: "mutation",
    source: "application",
    input: [
      "applicationId*",
      "repository*",
      "owner*",
      "buildPath*",
      "githubId*",
      "branch*",
      'triggerType="push"',
      "enableSubmodules",
      "watchPaths",
    ],
    output: "boolean",
    differs: { repository: LENIENT, buildPath: LENIENT, branch: LENIENT },
  },
  "application.saveGitlabProvider": {
    kind: "mutation",
    source: "application",
    input: [
      "applicationId*",
      "gitlabBuildPath*",
      "gitlabOwner*",
      "gitlabRepository*",
      "gitlabId*",
      "gitlabProjectId*",
      "gitlabPathNamespace*",
      "gitlabBranch*",
      "enableSubmodules",
      "watchPaths",
    ],
    output: "boolean",
  },
  "application.saveBitbucketProvider": {
    kind: "mutation",
    source: "application",
    input: [
      "bitbucketBuildPath*",
      "bitbucketOwner*",
      "bitbucketRepository*",
      "bitbucketRepositorySlug*",
      "bitbucketId*",
      "applicationId*",
      "bitbucketBranch*",
      "enableSubmodules",
      "watchPaths",
    ],
    output: "boolean",
    differs: { bitbucketRepositorySlug: LENIENT },
  },
  "application.saveGiteaProvider": {
    kind: "mutation",
    source: "application",
    input: [
      "applicationId*",
      "giteaBuildPath*",
      "giteaOwner*",
      "giteaRepository*",
      "giteaId*",
      "giteaBranch*",
      "enableSubmodules",
      "watchPaths",
    ],
    output: "boolean",
  },
  "application.saveGitProvider": {
    kind: "mutation",
    source: "application",
    input: [
      "applicationId*",
      "customGitBuildPath*",
      "customGitUrl*",
      "watchPaths*",
      "customGitBranch*",
      "customGitSSHKeyId",
      "enableSubmodules",
    ],
    output: "boolean",
    differs: {
      customGitBuildPath: LENIENT,
      customGitUrl: LENIENT,
      watchPaths: LENIENT,
      customGitBranch: LENIENT,
    },
  },
  "application.saveDockerProvider": {
    kind: "mutation",
    source: "application",
    input: ["dockerImage*", "applicationId*", "username*", "password*", "registryUrl*"],
    output: "boolean",
    differs: { dockerImage: LENIENT, username: LENIENT, password: LENIENT, registryUrl: LENIENT },
  },
  "application.disconnectGitProvider": {
    kind: "mutation",
    source: "application",
    input: ["applicationId*"],
    output: "boolean",
  },
  "application.saveBuildType": {
    kind: "mutation",
    source: "application",
    input: [
      "applicationId*",
      "buildType*",
      "dockerfile*",
      "dockerContextPath*",
      "dockerBuildStage*",
      "herokuVersion*",
      "railpackVersion*",
      "publishDirectory",
      "isStaticSpa",
    ],
    output: "boolean",
    differs: { dockerfile: LENIENT, herokuVersion: LENIENT, railpackVersion: LENIENT },
  },
  "application.saveEnvironment": {
    kind: "mutation",
    source: "application",
    input: ["applicationId*", "env*", "buildArgs*", "buildSecrets*", "createEnvFile*"],
    output: "boolean",
    differs: { env: LENIENT, buildArgs: LENIENT, buildSecrets: LENIENT },
  },
  "application.start": {
    kind: "mutation",
    source: "application",
    input: ["applicationId*"],
    output: "object:applicationId,appName",
  },
  "application.stop": {
    kind: "mutation",
    source: "application",
    input: ["applicationId*"],
    output: "object:applicationId,appName",
  },
  "application.reload": {
    kind: "mutation",
    source: "application",
    input: ["appName*", "applicationId*"],
    output: "boolean",
  },
  "application.readAppMonitoring": {
    kind: "query",
    source: "application",
    input: ["appName*"],
    output: "any",
  },
  "application.markRunning": {
    kind: "mutation",
    source: "application",
    input: ["applicationId*"],
    output: "null",
  },
  "application.move": {
    kind: "mutation",
    source: "application",
    input: ["applicationId*", "targetEnvironmentId*"],
    output: "object:applicationId,environmentId",
  },
  "application.refreshToken": {
    kind: "mutation",
    source: "application",
    input: ["applicationId*"],
    output: "boolean",
  },
  "application.delete": {
    kind: "mutation",
    source: "application",
    input: ["applicationId*"],
    output: "object:applicationId,appName",
  },
  "application.deploy": {
    kind: "mutation",
    source: "application",
    input: ["applicationId*", "title", "description"],
    output: "null",
  },
  "application.redeploy": {
    kind: "mutation",
    source: "application",
    input: ["applicationId*", "title", "description"],
    output: "null",
  },
  "application.cancelDeployment": {
    kind: "mutation",
    source: "application",
    input: ["applicationId*"],
    output: "object:success,message",
  },
  "application.killBuild": {
    kind: "mutation",
    source: "application",
    input: ["applicationId*"],
    output: "null",
  },
  "application.cleanQueues": {
    kind: "mutation",
    source: "application",
    input: ["applicationId*"],
    output: "null",
  },
  "application.clearDeployments": {
    kind: "mutation",
    source: "application",
    input: ["applicationId*"],
    output: "boolean",
  },
  "application.readTraefikConfig": {
    kind: "query",
    source: "application",
    input: ["applicationId*"],
    output: "string",
  },
  "application.updateTraefikConfig": {
    kind: "mutation",
    source: "application",
    input: ["applicationId*", "traefikConfig*"],
    output: "boolean",
  },

  "deployment.all": {
    kind: "query",
    source: "deployment",
    input: ["applicationId*"],
    output: "array:deploymentId,status,rollbackId",
  },
  "deployment.allByCompose": {
    kind: "query",
    source: "deployment",
    input: ["composeId*"],
    output: "array:deploymentId",
    differs: { "(output)": NO_COMPOSE },
  },
  "deployment.allByServer": {
    kind: "query",
    source: "deployment",
    input: ["serverId*"],
    output: "array:deploymentId,status",
  },
  "deployment.allByType": {
    kind: "query",
    source: "deployment",
    input: ["id*", "type*"],
    output: "array:deploymentId,status",
  },
  "deployment.allCentralized": {
    kind: "query",
    source: "deployment",
    input: [],
    output: "array:deploymentId,status",
  },
  "deployment.queueList": {
    kind: "query",
    source: "deployment",
    input: [],
    output: "array:id,name,state",
    differs: { "(output)": CLEANER },
  },
  "deployment.killProcess": {
    kind: "mutation",
    source: "deployment",
    input: ["deploymentId*"],
    output: "null",
    differs: { "(output)": "we say whether a process was stopped" },
  },
  "deployment.removeDeployment": {
    kind: "mutation",
    source: "deployment",
    input: ["deploymentId*"],
    output: "object:deploymentId",
    differs: { "(output)": SUCCESS_ANSWER },
  },

  "port.create": {
    kind: "mutation",
    source: "port",
    input: ["publishedPort*", 'publishMode="ingress"', "targetPort*", 'protocol="tcp"', "applicationId*"],
    output: "boolean",
    differs: {
      publishMode: "host by default: the platform's proxy owns the ingress ports 80/443 (decisions.md)",
      "(output)": "we answer the created port, which the caller needs for port.update",
    },
  },
  "port.one": {
    kind: "query",
    source: "port",
    input: ["portId*"],
    output: "object:portId,publishedPort,targetPort",
  },
  "port.update": {
    kind: "mutation",
    source: "port",
    input: ["portId*", "publishedPort*", 'publishMode="ingress"', "targetPort*", 'protocol="tcp"'],
    output: "any",
    differs: {
      publishedPort: LENIENT,
      targetPort: LENIENT,
      publishMode: "only the fields sent are changed",
      protocol: "only the fields sent are changed",
    },
  },
  "port.delete": { kind: "mutation", source: "port", input: ["portId*"], output: "object:portId" },

  "mounts.create": {
    kind: "mutation",
    source: "mounts",
    input: [
      "type*",
      "hostPath",
      "volumeName",
      "content",
      "mountPath*",
      'serviceType="application"',
      "filePath",
      "serviceId*",
    ],
    output: "boolean",
    differs: {
      "(output)": "we answer the created mount, which the caller needs for mounts.update and mounts.remove",
    },
  },
  "mounts.one": {
    kind: "query",
    source: "mounts",
    input: ["mountId*"],
    output: "object:mountId,type,mountPath,serviceType",
  },
  "mounts.update": {
    kind: "mutation",
    source: "mounts",
    input: ["mountId*", "type", "hostPath", "volumeName", "content", "mountPath", "filePath"],
    output: "any",
  },
  "mounts.remove": { kind: "mutation", source: "mounts", input: ["mountId*"], output: "any" },

  "destination.create": {
    kind: "mutation",
    source: "destination",
    input: [
      "name*",
      "provider*",
      "accessKey*",
      "secretAccessKey*",
      "bucket*",
      "region*",
      "endpoint*",
      "additionalFlags",
      "serverId",
    ],
    output: "object:destinationId,name",
    differs: { additionalFlags: NO_RCLONE, serverId: "nothing runs on a server to create a destination" },
  },
  "destination.all": {
    kind: "query",
    source: "destination",
    input: [],
    output: "array:destinationId,name,bucket",
  },
  "destination.one": {
    kind: "query",
    source: "destination",
    input: ["destinationId*"],
    output: "object:destinationId,name,bucket",
    differs: { "(output)": "the secret access key is never answered (spec 2.1 secrets)" },
  },
  "destination.update": {
    kind: "mutation",
    source: "destination",
    input: [
      "destinationId*",
      "name*",
      "provider*",
      "accessKey*",
      "secretAccessKey*",
      "bucket*",
      "region*",
      "endpoint*",
      "additionalFlags",
      "serverId",
    ],
    output: "any",
    differs: {
      name: LENIENT_PATCH,
      provider: LENIENT_PATCH,
      accessKey: LENIENT_PATCH,
      secretAccessKey: "optional with us: left out keeps the sealed one, which is never shown",
      bucket: LENIENT_PATCH,
      region: LENIENT_PATCH,
      endpoint: LENIENT_PATCH,
      additionalFlags: NO_RCLONE,
      serverId: "nothing runs on a server to update a destination",
    },
  },
  "destination.remove": { kind: "mutation", source: "destination", input: ["destinationId*"], output: "any" },
  "destination.testConnection": {
    kind: "mutation",
    source: "destination",
    input: [
      "name*",
      "provider*",
      "accessKey*",
      "secretAccessKey*",
      "bucket*",
      "region*",
      "endpoint*",
      "additionalFlags",
      "serverId",
      "destinationId",
    ],
    output: "null",
    differs: {
      additionalFlags: NO_RCLONE,
      serverId: "the probe runs from the control plane through the outbound guard",
      destinationId:
        "ours (issue 26): a stored destination whose sealed secret stands for a missing secretAccessKey",
      secretAccessKey: "optional with us only with destinationId (issue 26)",
    },
  },
  "backup.create": {
    kind: "mutation",
    source: "backup",
    input: [
      "schedule*",
      "enabled",
      "prefix*",
      "destinationId*",
      "keepLatestCount",
      "database*",
      "mariadbId",
      "mysqlId",
      "postgresId",
      "mongoId",
      "libsqlId",
      "databaseType*",
      "userId",
      "backupType",
      "composeId",
      "serviceName",
      "metadata",
    ],
    output: "any",
    differs: {
      libsqlId: NO_LIBSQL,
      userId: WE_SET,
      redisId: "ours: redis backups by RDB snapshot (issue 26)",
      verifyRestore: VERIFY,
      verifyTable: VERIFY,
      "(output)": "we answer the created backup (backup.one's shape) where Dokploy answers nothing",
    },
  },
  "backup.one": {
    kind: "query",
    source: "backup",
    input: ["backupId*"],
    output:
      "object:backupId,schedule,enabled,database,prefix,destinationId,keepLatestCount,databaseType,destination",
  },
  "backup.update": {
    kind: "mutation",
    source: "backup",
    input: [
      "schedule*",
      "enabled*",
      "prefix*",
      "backupId*",
      "destinationId*",
      "database*",
      "keepLatestCount*",
      "serviceName*",
      "metadata*",
      "databaseType*",
    ],
    output: "null",
    differs: {
      schedule: LENIENT_PATCH,
      enabled: LENIENT_PATCH,
      prefix: LENIENT_PATCH,
      destinationId: LENIENT_PATCH,
      database: LENIENT_PATCH,
      keepLatestCount: LENIENT_PATCH,
      serviceName: LENIENT_PATCH,
      metadata: LENIENT_PATCH,
      databaseType: LENIENT_PATCH,
      verifyRestore: VERIFY,
      verifyTable: VERIFY,
    },
  },
  "backup.remove": { kind: "mutation", source: "backup", input: ["backupId*"], output: "any" },
  "backup.manualBackupPostgres": {
    kind: "mutation",
    source: "backup",
    input: ["backupId*"],
    output: "boolean",
    differs: { "(output)": MANUAL_ANSWER },
  },
  "backup.manualBackupMySql": {
    kind: "mutation",
    source: "backup",
    input: ["backupId*"],
    output: "boolean",
    differs: { "(output)": MANUAL_ANSWER },
  },
  "backup.manualBackupMysql": {
    kind: "mutation",
    platformOnly: "the issue's spelling of Dokploy's manualBackupMySql; both answer alike",
  },
  "backup.manualBackupMariadb": {
    kind: "mutation",
    source: "backup",
    input: ["backupId*"],
    output: "boolean",
    differs: { "(output)": MANUAL_ANSWER },
  },
  "backup.manualBackupMongo": {
    kind: "mutation",
    source: "backup",
    input: ["backupId*"],
    output: "boolean",
    differs: { "(output)": MANUAL_ANSWER },
  },
  "backup.manualBackupRedis": {
    kind: "mutation",
    platformOnly: "redis backups by RDB snapshot (issue 26); Dokploy backs up no redis",
  },
  "backup.verifyRestore": {
    kind: "mutation",
    platformOnly: "restore verification into a throwaway container (issue 26 item 4)",
  },
  "backup.listBackupFiles": {
    kind: "query",
    source: "backup",
    input: ["destinationId*", "search*", "serverId"],
    output: "array:Path,Name,Size,IsDir",
    differs: { search: "optional with us: empty lists every file" },
  },
  "backup.restoreBackupWithLogs": {
    kind: "mutation",
    source: "backup",
    input: [
      "databaseId*",
      "databaseType*",
      "backupType*",
      "databaseName*",
      "backupFile*",
      "destinationId*",
      "metadata",
    ],
    output: "any",
    differs: {
      backupType: "optional with us: only database restores exist (compose stacks are not served)",
      "(output)":
        "a mutation answering {success, deploymentId} whose log streams at /api/deployment.logs, where Dokploy's is a subscription of log lines",
    },
  },
  "registry.create": {
    kind: "mutation",
    source: "registry",
    input: [
      "registryName*",
      "username",
      "password",
      "registryUrl*",
      "registryType*",
      "imagePrefix",
      "awsAccessKeyId",
      "awsSecretAccessKey",
      "awsRegion",
      "serverId",
    ],
    output: "object:registryId,registryName",
    differs: {
      username: "required with us: Dokploy requires it too unless the registry is AWS ECR",
      password: "required with us: Dokploy requires it too unless the registry is AWS ECR",
      registryType: LENIENT,
      awsAccessKeyId: NO_ECR,
      awsSecretAccessKey: NO_ECR,
      awsRegion: NO_ECR,
      serverId: "a registry is tested with registry.testRegistry, not on create",
    },
  },
  "registry.all": {
    kind: "query",
    source: "registry",
    input: [],
    output: "array:registryId,registryName,registryUrl",
  },
  "registry.one": {
    kind: "query",
    source: "registry",
    input: ["registryId*"],
    output: "object:registryId,registryName,registryUrl",
  },
  "registry.update": {
    kind: "mutation",
    source: "registry",
    input: [
      "registryId*",
      "registryName",
      "imagePrefix",
      "username",
      "password",
      "registryUrl",
      "awsAccessKeyId",
      "awsSecretAccessKey",
      "awsRegion",
      "createdAt",
      "registryType",
      "organizationId",
      "serverId",
    ],
    output: "boolean",
    differs: {
      awsAccessKeyId: NO_ECR,
      awsSecretAccessKey: NO_ECR,
      awsRegion: NO_ECR,
      createdAt: WE_SET,
      organizationId: WE_SET,
      serverId: "a registry is tested with registry.testRegistry, not on update",
    },
  },
  "registry.remove": { kind: "mutation", source: "registry", input: ["registryId*"], output: "any" },
  "registry.testRegistry": {
    kind: "mutation",
    source: "registry",
    input: [
      "registryName",
      "username",
      "password",
      "registryUrl*",
      "registryType*",
      "imagePrefix",
      "serverId",
      "awsAccessKeyId",
      "awsSecretAccessKey",
      "awsRegion",
    ],
    output: "boolean",
    differs: {
      username: "required with us: a login needs it unless the registry is AWS ECR",
      password: "required with us: a login needs it unless the registry is AWS ECR",
      registryType: LENIENT,
      awsAccessKeyId: NO_ECR,
      awsSecretAccessKey: NO_ECR,
      awsRegion: NO_ECR,
      "(output)": "a failed test is a 400 naming its cause (issue 10), not false",
    },
  },
  "registry.testRegistryById": {
    kind: "mutation",
    source: "registry",
    input: ["registryId", "serverId"],
    output: "boolean",
    differs: { "(output)": "a failed test is a 400 naming its cause (issue 10), not false" },
  },

  "domain.create": {
    kind: "mutation",
    source: "domain",
    input: [
      "host*",
      "path",
      "port",
      "https",
      "applicationId",
      "certificateType",
      "customCertResolver",
      "composeId",
      "serviceName",
      "domainType",
      "previewDeploymentId",
      "internalPath",
      "stripPath",
      "customEntrypoint",
      "middlewares",
    ],
    output: "object:domainId,host",
    differs: {
      certificate: "we also take a custom certificate",
      certificateKey: "we also take a custom certificate",
    },
  },
  "domain.byApplicationId": {
    kind: "query",
    source: "domain",
    input: ["applicationId*"],
    output: "array:domainId,host",
  },
  "domain.byComposeId": {
    kind: "query",
    source: "domain",
    input: ["composeId*"],
    output: "array:domainId,host",
    differs: { "(output)": NO_COMPOSE },
  },
  "domain.one": { kind: "query", source: "domain", input: ["domainId*"], output: "object:domainId,host" },
  "domain.update": {
    kind: "mutation",
    source: "domain",
    input: [
      "domainId*",
      "host",
      "path",
      "port",
      "https",
      "certificateType",
      "customCertResolver",
      "serviceName",
      "domainType",
      "internalPath",
      "stripPath",
      "customEntrypoint",
      "middlewares",
    ],
    output: "any",
    differs: {
      certificate: "we also take a custom certificate",
      certificateKey: "we also take a custom certificate",
    },
  },
  "domain.delete": {
    kind: "mutation",
    source: "domain",
    input: ["domainId*"],
    output: "object:domainId,host",
  },
  "domain.generateDomain": {
    kind: "mutation",
    source: "domain",
    input: ["appName*", "serverId", "projectId", 'domainType="application"', "previewWildcard"],
    output: "string",
    differs: {
      projectId: "project wildcard domains are not served",
      domainType: "preview deployments are not served",
      previewWildcard: "preview deployments are not served",
    },
  },
  "domain.canGenerateTraefikMeDomains": {
    kind: "query",
    source: "domain",
    input: ["serverId*"],
    output: "string",
  },
  "domain.validateDomain": {
    kind: "mutation",
    source: "domain",
    input: ["domain*", "serverIp"],
    output: "object:",
  },

  "security.create": {
    kind: "mutation",
    source: "security",
    input: ["applicationId*", "username*", "password*"],
    output: "boolean!",
  },
  "security.one": {
    kind: "query",
    source: "security",
    input: ["securityId*"],
    output: "object:securityId,username,applicationId",
  },
  "security.update": {
    kind: "mutation",
    source: "security",
    input: ["securityId*", "username*", "password*"],
    output: "any",
    differs: { username: "only the fields sent are changed", password: "only the fields sent are changed" },
  },
  "security.delete": { kind: "mutation", source: "security", input: ["securityId*"], output: "any" },

  "redirects.create": {
    kind: "mutation",
    source: "redirects",
    input: ["regex*", "replacement*", "permanent*", "applicationId*"],
    output: "any",
    differs: { permanent: "defaults to false when left out (the column's default)" },
  },
  "redirects.one": {
    kind: "query",
    source: "redirects",
    input: ["redirectId*"],
    output: "object:redirectId,regex,replacement,permanent,uniqueConfigKey,applicationId",
  },
  "redirects.update": {
    kind: "mutation",
    source: "redirects",
    input: ["redirectId*", "regex*", "replacement*", "permanent*"],
    output: "any",
    differs: {
      regex: "only the fields sent are changed",
      replacement: "only the fields sent are changed",
      permanent: "only the fields sent are changed",
    },
  },
  "redirects.delete": { kind: "mutation", source: "redirects", input: ["redirectId*"], output: "any" },

  "rollback.rollback": { kind: "mutation", source: "rollback", input: ["rollbackId*"], output: "null" },
  "rollback.delete": {
    kind: "mutation",
    source: "rollback",
    input: ["rollbackId*"],
    output: "object:rollbackId,deploymentId,version,image,createdAt",
  },

  "settings.getWebServerSettings": { kind: "query", source: "settings", input: [], output: "object:" },
  "settings.assignDomainServer": {
    kind: "mutation",
    source: "settings",
    input: ["host*", "certificateType*", "letsEncryptEmail", "https"],
    output: "any",
  },
  "settings.reloadTraefik": { kind: "mutation", source: "settings", input: ["serverId"], output: "boolean" },
  "settings.toggleDashboard": {
    kind: "mutation",
    source: "settings",
    input: ["enableDashboard", "serverId"],
    output: "boolean",
  },
  "settings.readTraefikConfig": {
    kind: "query",
    source: "settings",
    input: [],
    output: "string",
    differs: { serverId: "we also read a remote server's proxy configuration" },
  },
  "settings.updateTraefikConfig": {
    kind: "mutation",
    source: "settings",
    input: ["traefikConfig*"],
    output: "boolean",
    differs: { serverId: "we also write the configuration of a remote server's proxy" },
  },
  "settings.cleanUnusedImages": {
    kind: "mutation",
    source: "settings",
    input: ["serverId"],
    output: "boolean",
  },
  "settings.cleanUnusedVolumes": {
    kind: "mutation",
    source: "settings",
    input: ["serverId"],
    output: "boolean",
  },
  "settings.cleanStoppedContainers": {
    kind: "mutation",
    source: "settings",
    input: ["serverId"],
    output: "boolean",
  },
  "settings.cleanDockerBuilder": {
    kind: "mutation",
    source: "settings",
    input: ["serverId"],
    output: "null",
  },
  // Dokploy answers whatever its background cleanup returns.
  "settings.cleanAll": { kind: "mutation", source: "settings", input: ["serverId"], output: "any" },
  "settings.updateDockerCleanup": {
    kind: "mutation",
    source: "settings",
    input: ["enableDockerCleanup*", "serverId"],
    output: "boolean",
  },
  "settings.saveSSHPrivateKey": {
    kind: "mutation",
    source: "settings",
    input: ["sshPrivateKey*"],
    output: "boolean",
  },
  "settings.readStatsLogs": {
    // Dokploy declares a tRPC query documented as POST (its openapi meta); the spec says POST.
    kind: "mutation",
    source: "settings",
    input: ["page", "status", "search", "sort", "dateRange"],
    output: "object:data,totalCount",
    differs: { serverId: "we also read the request log of a remote server's proxy" },
  },
  "settings.toggleRequests": {
    kind: "mutation",
    source: "settings",
    input: ["enable*"],
    output: "boolean",
    differs: { serverId: "we also switch the request log of a remote server's proxy" },
  },
  "settings.haveActivateRequests": {
    kind: "query",
    source: "settings",
    input: [],
    output: "boolean!",
    differs: {
      serverId: "we also read a remote server's proxy configuration",
      "(output)": "the spec answers {enabled, filePath} where Dokploy answers the boolean alone",
    },
  },
  "compose.create": {
    kind: "mutation",
    unverified: COMPOSE_UNREAD,
  },
  "compose.one": {
    kind: "query",
    unverified: COMPOSE_UNREAD,
  },
  "compose.update": {
    kind: "mutation",
    unverified: COMPOSE_UNREAD,
  },
  "compose.deploy": {
    kind: "mutation",
    unverified: COMPOSE_UNREAD,
  },
  "compose.redeploy": {
    kind: "mutation",
    unverified: COMPOSE_UNREAD,
  },
  "compose.start": {
    kind: "mutation",
    unverified: COMPOSE_UNREAD,
  },
  "compose.stop": {
    kind: "mutation",
    unverified: COMPOSE_UNREAD,
  },
  "compose.delete": {
    kind: "mutation",
    unverified: COMPOSE_UNREAD,
  },
  "compose.loadServices": {
    kind: "query",
    unverified: COMPOSE_UNREAD,
  },
  "compose.getConvertedCompose": {
    kind: "query",
    unverified: COMPOSE_UNREAD,
  },
  "compose.move": {
    kind: "mutation",
    unverified: COMPOSE_UNREAD,
  },
  "gitProvider.getAll": {
    kind: "query",
    unverified:
      "issue 25 rows added at the deadline: Dokploy's routers/git-provider.ts and its schema not yet compared field by field",
  },
  "gitProvider.remove": {
    kind: "mutation",
    unverified:
      "issue 25 rows added at the deadline: Dokploy's routers/git-provider.ts and its schema not yet compared field by field",
  },
  "github.create": {
    kind: "mutation",
    platformOnly:
      "Dokploy creates GitHub providers through the app-manifest flow (/api/providers/github/setup); spec 4.12 lists github.create with the fields of an existing app",
  },
  "github.one": {
    kind: "query",
    unverified:
      "issue 25 rows added at the deadline: Dokploy's routers/github.ts and its schema not yet compared field by field",
  },
  "github.githubProviders": {
    kind: "query",
    unverified:
      "issue 25 rows added at the deadline: Dokploy's routers/github.ts and its schema not yet compared field by field",
  },
  "github.update": {
    kind: "mutation",
    unverified:
      "issue 25 rows added at the deadline: Dokploy's routers/github.ts and its schema not yet compared field by field",
  },
  "github.getGithubRepositories": {
    kind: "query",
    unverified:
      "issue 25 rows added at the deadline: Dokploy's routers/github.ts and its schema not yet compared field by field",
  },
  "github.getGithubBranches": {
    kind: "query",
    unverified:
      "issue 25 rows added at the deadline: Dokploy's routers/github.ts and its schema not yet compared field by field",
  },
  "github.branches": {
    kind: "query",
    platformOnly: "spec 4.12 names github.getGithubBranches also github.branches; the same procedure",
  },
  "github.testConnection": {
    kind: "mutation",
    unverified:
      "issue 25 rows added at the deadline: Dokploy's routers/github.ts and its schema not yet compared field by field",
  },
  "gitlab.create": {
    kind: "mutation",
    unverified:
      "issue 25 rows added at the deadline: Dokploy's routers/gitlab.ts and its schema not yet compared field by field",
  },
  "gitlab.one": {
    kind: "query",
    unverified:
      "issue 25 rows added at the deadline: Dokploy's routers/gitlab.ts and its schema not yet compared field by field",
  },
  "gitlab.gitlabProviders": {
    kind: "query",
    unverified:
      "issue 25 rows added at the deadline: Dokploy's routers/gitlab.ts and its schema not yet compared field by field",
  },
  "gitlab.update": {
    kind: "mutation",
    unverified:
      "issue 25 rows added at the deadline: Dokploy's routers/gitlab.ts and its schema not yet compared field by field",
  },
  "gitlab.getGitlabRepositories": {
    kind: "query",
    unverified:
      "issue 25 rows added at the deadline: Dokploy's routers/gitlab.ts and its schema not yet compared field by field",
  },
  "gitlab.getGitlabBranches": {
    kind: "query",
    unverified:
      "issue 25 rows added at the deadline: Dokploy's routers/gitlab.ts and its schema not yet compared field by field",
  },
  "gitlab.testConnection": {
    kind: "mutation",
    unverified:
      "issue 25 rows added at the deadline: Dokploy's routers/gitlab.ts and its schema not yet compared field by field",
  },
  "bitbucket.create": {
    kind: "mutation",
    unverified:
      "issue 25 rows added at the deadline: Dokploy's routers/bitbucket.ts and its schema not yet compared field by field",
  },
  "bitbucket.one": {
    kind: "query",
    unverified:
      "issue 25 rows added at the deadline: Dokploy's routers/bitbucket.ts and its schema not yet compared field by field",
  },
  "bitbucket.bitbucketProviders": {
    kind: "query",
    unverified:
      "issue 25 rows added at the deadline: Dokploy's routers/bitbucket.ts and its schema not yet compared field by field",
  },
  "bitbucket.update": {
    kind: "mutation",
    unverified:
      "issue 25 rows added at the deadline: Dokploy's routers/bitbucket.ts and its schema not yet compared field by field",
  },
  "bitbucket.getBitbucketRepositories": {
    kind: "query",
    unverified:
      "issue 25 rows added at the deadline: Dokploy's routers/bitbucket.ts and its schema not yet compared field by field",
  },
  "bitbucket.getBitbucketBranches": {
    kind: "query",
    unverified:
      "issue 25 rows added at the deadline: Dokploy's routers/bitbucket.ts and its schema not yet compared field by field",
  },
  "bitbucket.testConnection": {
    kind: "mutation",
    unverified:
      "issue 25 rows added at the deadline: Dokploy's routers/bitbucket.ts and its schema not yet compared field by field",
  },
  "gitea.create": {
    kind: "mutation",
    unverified:
      "issue 25 rows added at the deadline: Dokploy's routers/gitea.ts and its schema not yet compared field by field",
  },
  "gitea.one": {
    kind: "query",
    unverified:
      "issue 25 rows added at the deadline: Dokploy's routers/gitea.ts and its schema not yet compared field by field",
  },
  "gitea.giteaProviders": {
    kind: "query",
    unverified:
      "issue 25 rows added at the deadline: Dokploy's routers/gitea.ts and its schema not yet compared field by field",
  },
  "gitea.update": {
    kind: "mutation",
    unverified:
      "issue 25 rows added at the deadline: Dokploy's routers/gitea.ts and its schema not yet compared field by field",
  },
  "gitea.getGiteaRepositories": {
    kind: "query",
    unverified:
      "issue 25 rows added at the deadline: Dokploy's routers/gitea.ts and its schema not yet compared field by field",
  },
  "gitea.getGiteaBranches": {
    kind: "query",
    unverified:
      "issue 25 rows added at the deadline: Dokploy's routers/gitea.ts and its schema not yet compared field by field",
  },
  "gitea.getGiteaUrl": {
    kind: "query",
    unverified:
      "issue 25 rows added at the deadline: Dokploy's routers/gitea.ts and its schema not yet compared field by field",
  },
  "gitea.testConnection": {
    kind: "mutation",
    unverified:
      "issue 25 rows added at the deadline: Dokploy's routers/gitea.ts and its schema not yet compared field by field",
  },
  ...databaseRows("postgres", ["databaseName*", "databaseUser*"]),
  ...databaseRows("mysql", ["databaseName*", "databaseUser*", "databaseRootPassword"]),
  ...databaseRows("mariadb", ["databaseName*", "databaseUser*", "databaseRootPassword"]),
  ...databaseRows("mongo", ["databaseUser*", "replicaSets=false"]),
  ...databaseRows("redis", []),
  ...notificationRows("slack", "Slack", ["webhookUrl*", "channel*"], { channel: LENIENT }),
  ...notificationRows("telegram", "Telegram", ["botToken*", "chatId*", "messageThreadId*"], {
    messageThreadId: LENIENT,
  }),
  ...notificationRows("discord", "Discord", ["webhookUrl*", "decoration*"], { decoration: LENIENT }),
  ...notificationRows("email", "Email", [
    "smtpServer*",
    "smtpPort*",
    "username*",
    "password*",
    "fromAddress*",
    "toAddresses*",
  ]),
  ...notificationRows("gotify", "Gotify", ["serverUrl*", "appToken*", "priority*", "decoration*"], {
    priority: "spec 8: 0 to 10, default 5",
    decoration: LENIENT,
  }),
  ...notificationRows("mattermost", "Mattermost", [], {}, "Mattermost is not in the stored Dokploy schema"),
  ...notificationRows("resend", "Resend", [], {}, "Resend is not in the stored Dokploy schema"),
  ...notificationRows("ntfy", "Ntfy", [], {}, "ntfy is not in the stored Dokploy schema at its commit"),
  ...notificationRows("pushover", "Pushover", [], {}, "Pushover is not in the stored Dokploy schema"),
  ...notificationRows("lark", "Lark", [], {}, "Lark is not in the stored Dokploy schema"),
  ...notificationRows("teams", "Teams", [], {}, "Teams is not in the stored Dokploy schema"),
  ...notificationRows("custom", "Custom", [], {}, "Custom is not in the stored Dokploy schema"),
  "notification.getAll": {
    kind: "query",
    source: "notification",
    input: [],
    output: "array:notificationId,name",
  },
  "notification.delete": {
    kind: "mutation",
    source: "notification",
    input: ["notificationId*"],
    output: "any",
  },
  "notification.deliveries": {
    kind: "query",
    platformOnly: "each delivery's attempts and outcome (docs/decisions.md, issue 24)",
  },
};

/**
 * The rows of one database router (spec 4.14), read from Dokploy's router and schema of the
 * kind (sources). `fields` are the kind's own create fields; Dokploy's update is its insert
 * schema made partial (less serverId): every column, these fields included, all optional.
 */
function databaseRows(kind: string, fields: string[]): Record<string, Row> {
  const id = `${kind}Id`;
  const read: Partial<Row> = { source: kind as keyof typeof sources };
  const ROW = `object:${id},name,appName`;
  const DEPLOY_ANSWER = "we answer {success:true, deploymentId} of the queued deployment";
  const STATUS_ANSWER = "we answer {success:true, applicationStatus} where Dokploy answers the row";
  const REQUIRED_APP_NAME = "spec 4.14 marks appName required where Dokploy generates one";
  const ownFields = fields.map((field) => field.replace(/[*=].*$/, ""));
  return {
    [`${kind}.create`]: {
      kind: "mutation",
      ...read,
      input: [
        "name*",
        "appName",
        "databasePassword*",
        `dockerImage=${JSON.stringify(dokployDefaultImages[kind])}`,
        "environmentId*",
        "description",
        "serverId",
        ...fields,
      ],
      output: ROW,
      differs: {
        appName: REQUIRED_APP_NAME,
        dockerImage: `null: the installation's default image (PLATFORM_DEFAULT_IMAGE_<KIND>), else spec 2.9's ${defaultImages[kind]}`,
      },
    },
    [`${kind}.one`]: { kind: "query", ...read, input: [`${id}*`], output: ROW },
    [`${kind}.deploy`]: {
      kind: "mutation",
      ...read,
      input: [`${id}*`],
      output: "any",
      differs: { "(output)": DEPLOY_ANSWER },
    },
    [`${kind}.start`]: {
      kind: "mutation",
      ...read,
      input: [`${id}*`],
      output: ROW,
      differs: { "(output)": STATUS_ANSWER },
    },
    [`${kind}.stop`]: {
      kind: "mutation",
      ...read,
      input: [`${id}*`],
      output: ROW,
      differs: { "(output)": STATUS_ANSWER },
    },
    [`${kind}.update`]: {
      kind: "mutation",
      ...read,
      input: [
        `${id}*`,
        "name",
        "appName",
        "description",
        ...ownFields,
        "databasePassword",
        "dockerImage",
        "command",
        "args",
        "env",
        "memoryReservation",
        "memoryLimit",
        "cpuReservation",
        "cpuLimit",
        "externalPort",
        "applicationStatus",
        "healthCheckSwarm",
        "restartPolicySwarm",
        "placementSwarm",
        "updateConfigSwarm",
        "rollbackConfigSwarm",
        "modeSwarm",
        "labelsSwarm",
        "networkSwarm",
        "stopGracePeriodSwarm",
        "endpointSpecSwarm",
        "ulimitsSwarm",
        "replicas",
        "createdAt",
        "pausedAt",
        "environmentId",
        "networkIds",
        "detachDokployNetwork",
      ],
      output: "boolean",
      differs: {
        appName: "the Swarm service and its data volume are named after it: fixed once created",
        externalPort: "set by saveExternalPort, which checks the port and redeploys",
        applicationStatus: "follows the deployments and what the agent observes, never the caller",
        createdAt: WE_SET,
        pausedAt: "no paused state is served",
        environmentId: "moving a service to another environment is not served",
        networkIds: "database services join the platform network only",
        detachDokployNetwork: "database services join the platform network only",
      },
    },
    [`${kind}.saveExternalPort`]: {
      kind: "mutation",
      ...read,
      input: [`${id}*`, "externalPort*"],
      output: ROW,
      differs: { "(output)": DEPLOY_ANSWER },
    },
    [`${kind}.saveEnvironment`]: {
      kind: "mutation",
      ...read,
      input: [`${id}*`, "env*"],
      output: "boolean",
    },
    [`${kind}.reload`]: {
      kind: "mutation",
      ...read,
      input: [`${id}*`, "appName*"],
      output: "boolean",
      differs: { "(output)": DEPLOY_ANSWER },
    },
    [`${kind}.rebuild`]: {
      kind: "mutation",
      ...read,
      input: [`${id}*`],
      output: "boolean",
      differs: { "(output)": DEPLOY_ANSWER },
    },
    [`${kind}.remove`]: {
      kind: "mutation",
      ...read,
      input: [`${id}*`],
      output: ROW,
    },
  };
}

/**
 * A notification kind's create, update and test rows: Dokploy's picked fields are all required
 * on create (`.required()`), all optional on update beside notificationId* and the kind's own
 * id, and the kind's fields on test. `unverified`: the kind is not in the stored schema.
 */
function notificationRows(
  kind: string,
  suffix: string,
  fields: string[],
  differs: Record<string, string> = {},
  unverified?: string,
): Record<string, Row> {
  if (unverified) {
    return Object.fromEntries(
      ["create", "update", "test"].map((verb) => [
        `notification.${verb}${suffix}`,
        { kind: "mutation" as const, unverified },
      ]),
    );
  }
  const toggles = [
    "appDeploy",
    "appBuildError",
    "databaseBackup",
    "volumeBackup",
    "platformRestart",
    "dockerCleanup",
    "serverThreshold",
  ];
  const toggleDiffers = Object.fromEntries(toggles.map((t) => [t, TOGGLE_DEFAULT]));
  const common = { projectIds: LIMITS, serviceIds: LIMITS };
  const optional = fields.map((f) => f.replace(/\*$/, ""));
  return {
    [`notification.create${suffix}`]: {
      kind: "mutation",
      source: "notification",
      input: ["name*", ...toggles.map((t) => `${t}*`), ...fields],
      output: "any",
      differs: { ...toggleDiffers, ...common, ...differs },
    },
    [`notification.update${suffix}`]: {
      kind: "mutation",
      source: "notification",
      input: ["notificationId*", `${kind}Id*`, "organizationId", "name", ...toggles, ...optional],
      output: "any",
      differs: {
        [`${kind}Id`]: "optional with us: a channel's kind record id equals its notificationId",
        organizationId: WE_SET,
        ...common,
      },
    },
    [`notification.test${suffix}`]: {
      kind: "mutation",
      source: "notification",
      input: fields.filter(
        (f) =>
          !(kind === "discord" && f.startsWith("decoration")) &&
          !(kind === "gotify" && f.startsWith("decoration")),
      ),
      output: "any",
      differs: {
        ...(kind === "discord" || kind === "gotify" ? { decoration: "optional in Dokploy's test too" } : {}),
        ...differs,
      },
    },
  };
}
