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
  project:
    "routers/project.ts@010a6e2a7627 (allForPermissions: withPermission member update, the organization's projects newest first {projectId, name, environments {environmentId, name, isDefault, applications, mariadb, postgres, mysql, mongo, redis, compose (id, appName, name, createdAt, status, description, serverId)}}; homeStats: {projects, environments, applications, compose, databases, services, status {running: done, error, idle: the rest}} of what the member's lists show), schema/project.ts@010a6e2a7627",
  environment:
    "routers/environment.ts@0979167a5cac (duplicate: apiDuplicateEnvironment {environmentId, name required, description}, duplicateEnvironment's row; search: {q, name, description, projectId, limit 1-100 = 20, offset = 0}, {items {environmentId, name, description, createdAt, env, projectId, isDefault}, total}, a member limited to accessedEnvironments), schema/environment.ts@1fcf16fa1d72",
  docker: "routers/docker.ts@2a14ae0c7fd0",
  cluster: "routers/cluster.ts@018e2b153e56",
  server: "routers/server.ts@cb7c54a32eed, schema/server.ts@010a6e2a7627",
  serverLists:
    "routers/server.ts@cb7c54a32eed (count: the servers of the organizations the user owns; withSSHKey: deploy servers with an SSH key, active only on the cloud; getDefaultCommand: apiFindOneServer answering defaultCommand's script) and a later routers/server.ts found by code search, commit not shown (buildServers: the same for build servers; allForPermissions: serverId, name, ipAddress, serverType of the organization's servers for member-update permission; getServerTime: {time, timezone}, null on the cloud; getServices: services/server.ts getServicesByServerId {id, type, name, projectId, projectName, environmentId, environmentName, url})",
  settingsInfo:
    'routers/settings.ts@009cb0552f28 (getDokployVersion: package.json\'s version; getIp: serverIp or ""; updateServerIp: adminProcedure {serverIp: string} answering the settings row; isCloud: public; isUserSubscribed: servers or projects in the organization; readTraefikEnv, haveTraefikDashboardPortEnabled, getTraefikPorts: adminProcedure apiServerSchema, read from the proxy service\'s spec (services/settings.ts readPorts without targets 80 and 443); getLogCleanupStatus: {enabled, cronExpression}; getDokployCloudIps: adminProcedure, [] when not cloud) and a later routers/settings.ts found by code search, commit not shown (health: public, SELECT 1 then {status: "ok"}; checkInfrastructureHealth: adminProcedure {postgres, traefik} each {status healthy|unhealthy, message?})',
  sshKey:
    "routers/ssh-key.ts@02554c0139be, schema/ssh-key.ts@059c21c99028, validations sshKeyType (code search)",
  applicationQuickstart:
    "Dokploy 0.30.7's CLI (deploy-nginx-quickstart: --environmentId required, --serverId) and its onboarding DeployStep (components/onboarding, found by code search, commit not shown: `deployNginxQuickstart({environmentId, serverId})` answers `{applicationId, domainUrl}`, a Hello World nginx app on a generated traefik.me domain)",
  application: "routers/application.ts@012b67a4912b, schema/application.ts@0015f081df77",
  deployment: "routers/deployment.ts@08c9113405fa",
  runtimeLogs:
    "readLogs of routers/application.ts, compose.ts, postgres.ts (and the other database kinds') and deployment.ts (code search; commit not shown), with services/docker.ts getContainerLogs@010a6e2a7627 (the answer: the `docker … logs --timestamps` output, one string)",
  port: "routers/port.ts@6734363710d4, schema/port.ts@3561b5cae60b",
  mounts: "routers/mount.ts@02a9856fa76f, schema/mount.ts@02a9856fa76f",
  registry: "routers/registry.ts@059c21c99028, schema/registry.ts@1bcb5ca2771e",
  domain:
    "routers/domain.ts@010a6e2a7627, schema/domain.ts@80d5313dd8a5 (customEntrypoint, middlewares: newer schema, named by issue 11)",
  security: "routers/security.ts@3747db08d473, schema/security.ts@7e0fde804143",
  redirects: "routers/redirects.ts@3747db08d473, schema/redirects.ts@3c63089457e0",
  certificates:
    "routers/certificate.ts@092212e2258d (update: apiUpdateCertificate {certificateId, name?, certificateData?, privateKey?, autoRenew?}, answers updateCertificate's row), schema/certificate.ts@8ab6d6b2828d (apiCreateCertificate = the insert schema: certificateId and certificatePath have defaults, organizationId is required there and replaced by the session's in createCertificate)",
  rollback:
    "routers/rollbacks.ts@5a46b879f503 (apiFindOneRollback), schema/rollbacks.ts@078ca1957807, services/rollbacks.ts@00fb5a67fbee (rollback answers nothing, removeRollbackById the row; deployments.rollbackId set by createRollback)",
  previewDeployment:
    "routers/preview-deployment.ts@0d2a9e15e4cb (all: apiFindAllByApplication {applicationId}; one, delete: {previewDeploymentId}; redeploy: {previewDeploymentId, title?, description?}; delete and redeploy answer true), schema/preview-deployments.ts@03a0a800d255 (the row's fields; findPreviewDeploymentsByApplicationId adds deployments and domain)",
  settings:
    "routers/settings.ts and schema/web-server-settings.ts (getWebServerSettings, reloadTraefik, toggleDashboard, readTraefikConfig, updateTraefikConfig, apiAssignDomain), found by code search; commit not shown by the search; clean*, updateDockerCleanup, saveSSHPrivateKey, readStatsLogs, toggleRequests, haveActivateRequests: routers/settings.ts@009cb0552f28 with apiServerSchema, apiUpdateDockerCleanup, apiSaveSSHKey, apiReadStatsLogs (code search)",
  user: "routers/user.ts@5a46b879f503",
  userLater:
    "a later routers/user.ts found by code search, commit not shown (session: publicProcedure, null without a user or active organization, else {user {id}, session {activeOrganizationId}}; getPermissions: protectedProcedure, services/permission.ts resolvePermissions: every resource of the permission statements with each of its actions true or false, from the member's role and, for a member, the legacy canXxx flags; haveRootAccess: protectedProcedure, false unless on the cloud and the user (or the impersonating one) is USER_ADMIN_ID; generateToken: protectedProcedure mutation, no input, answers the string \"token\"; getUserByToken: publicProcedure apiFindOneToken {token}, getUserByToken(token); createUserWithCredentials: withPermission member create, {email (email), password (min 8), role (min 1)}, refuses owner and admin and the cloud, answers createOrganizationUserWithCredentials's result; getBookmarkedTemplates: protectedProcedure, the user's bookmarkedTemplates ids or []; toggleTemplateBookmark: protectedProcedure {templateId min 1}, adds or removes it, answers {isBookmarked}; getContainerMetrics: withPermission monitoring read, strict {serverId?, appName, dataPoints}, the metrics of that server (or this machine), url built from its IP and metrics port; getBackups: adminProcedure, the user with their backups (destination, deployments); getServerMetrics: withPermission monitoring read, the caller's user row)",
  settingsInstance:
    "routers/settings.ts@009cb0552f28 (cleanSSHPrivateKey: adminProcedure, no input, sets sshPrivateKey null, true; getUpdateData: protectedProcedure.mutation, no input, getUpdateData() or DEFAULT_UPDATE_DATA {latestVersion: null, updateAvailable: false}; getReleaseTag: protectedProcedure query, getDokployImageTag()'s string) and later routers/settings.ts found by code search, commit not shown (cleanAllDeploymentQueue: adminProcedure, no input, answers cleanAllDeploymentQueue()'s true after removing the waiting jobs; getDockerDiskUsage: adminProcedure query, no input, services/docker.ts getDockerDiskUsage() rows {type, totalCount, active, size, reclaimable, sizeBytes}; updateRemoteServersOnly: adminProcedure {remoteServersOnly: boolean}, true); updateTraefikPorts: adminProcedure {serverId?, additionalPorts: [{targetPort, publishedPort, protocol tcp|udp|sctp}]}, checkPortInUse then writeTraefikSetup, true; writeTraefikEnv: adminProcedure {env: string, serverId?}, prepareEnvironmentVariables then writeTraefikSetup, true (routers/settings.ts@009cb0552f28)",
  settingsEngine:
    "a settings router of a Dokploy derivative found by code search, commit not shown (reloadServer, cleanMonitoring, updateServer: adminProcedure, no input, true; cleanMonitoring recreates the monitoring directory; updateServer runs `docker service update --force --image <image>:<latest>` when an update is installable; updateBuildsConcurrency: adminProcedure apiUpdateWebServerBuildsConcurrency {buildsConcurrency}, true, refused on the cloud) and routers/server.ts found by code search (updateBuildsConcurrency: apiUpdateServerBuildsConcurrency {serverId, buildsConcurrency}, the updated server row; UNAUTHORIZED for another organization's server); Dokploy's MCP tool list (settings-updateLogCleanup {cronExpression}; buildsConcurrency 1-100 per server, default 1)",
  settingsGpu:
    "routers/settings.ts@009cb0552f28 (setupGPU: adminProcedure {serverId?: string}, setupGPUSupport then {success: true}; checkGPUStatus: adminProcedure {serverId?: string}, checkGPUStatus's GPUInfo, on the cloud without serverId every field false/0/undefined), utils/gpu-setup.ts@12784ec0ff64 (GPUInfo {driverInstalled, driverVersion?, gpuModel?, runtimeInstalled, runtimeConfigured, cudaSupport, cudaVersion?, memoryInfo?, availableGPUs, swarmEnabled, gpuResources} from nvidia-smi queries, `command -v nvidia-container-runtime`, docker info's Runtimes and DefaultRuntime and the Swarm node's GPU generic resource; setupGPUSupport refuses without the driver or the runtime, writes daemon.json {runtimes.nvidia, default-runtime nvidia, node-generic-resources [GPU=<n>]}, sets swarm-resource in nvidia-container-runtime's config.toml, restarts docker, labels the node gpu=true) and a later routers/settings.ts found by code search, commit not shown (updateEnforceSSO: adminProcedure {enforceSSO: boolean}, updateWebServerSettings, true; refused on the cloud)",
  settingsFiles:
    "routers/settings.ts@009cb0552f28 (readDirectories: apiServerSchema, readDirectory's TreeDataItem[] {id, name, type, children?}; readTraefikFile: apiReadTraefikConfig {path, serverId?}, readConfigInPath's text; updateTraefikFile: apiModifyTraefikConfig {path, traefikConfig, serverId?}; read/updateMiddlewareTraefikConfig and read/updateWebServerTraefikConfig: adminProcedure, apiTraefikConfig {traefikConfig}, middlewares.yml and dokploy.yml), schemas by code search",
  postgres:
    "schema/postgres.ts@010a6e2a7627 (apiCreatePostgres, apiFindOnePostgres, apiDeployPostgres, apiSaveExternalPortPostgres, apiSaveEnvironmentVariablesPostgres, apiResetPostgres, apiUpdatePostgres = the insert schema made partial, less serverId, apiRebuildPostgres)",
  mysql:
    "routers/mysql.ts@010a6e2a7627, schema/mysql.ts@010a6e2a7627 (apiCreateMySql: databaseRootPassword optional, dockerImage default mysql:8; apiUpdateMySql = the insert schema made partial, less serverId)",
  mariadb:
    "routers/mariadb.ts@027e425d313b, schema/mariadb.ts@010a6e2a7627 (apiCreateMariaDB: databaseRootPassword optional, dockerImage default mariadb:6; apiUpdateMariaDB = the insert schema made partial, less serverId)",
  mongo:
    "schema/mongo.ts@010a6e2a7627 (apiCreateMongo: databaseUser, replicaSets default false, no databaseName, dockerImage default mongo:15; apiUpdateMongo = the insert schema made partial, less serverId), routers/mongo.ts@00fc1a9c962d (an older router: the same procedures and answers as mysql.ts's but create answering true)",
  libsql:
    "routers/libsql.ts@079c5ddf0737 (create answers true; start, stop, saveExternalPorts, changeStatus, move, remove answer the row; deploy answers deployLibsql's result; update, saveEnvironment, reload, rebuild answer true; saveExternalPorts: BAD_REQUEST for externalGRPCPort on a replica, CONFLICT for a port in use; no changePassword nor search), schema/libsql.ts@079c5ddf0737 (apiCreateLibsql: name, appName, dockerImage default ghcr.io/tursodatabase/libsql-server:v0.24.32, environmentId, description, databaseUser, databasePassword, sqldNode primary|replica, sqldPrimaryUrl (required with a replica, refused otherwise), enableNamespaces default false, serverId, all .required(); apiSaveExternalPortsLibsql: externalPort, externalGRPCPort, externalAdminPort, not all null; apiUpdateLibsql = the insert schema made partial, less serverId; no args, ulimitsSwarm nor networkIds columns), utils/databases/libsql.ts@0c1191a4df9c (SQLD_NODE, SQLD_HTTP_AUTH=basic:<base64 user:password>, SQLD_PRIMARY_URL for a replica; sqld --db-path iku.db on 8080, gRPC 5001, admin 5000, --enable-namespaces; volume <appName>-data at /var/lib/sqld), utils/backups/libsql.ts@0a02b5397d5f",
  redis:
    "routers/redis.ts@027e425d313b, schema/redis.ts@010a6e2a7627 (apiCreateRedis: no databaseName, databaseUser nor root password, databasePassword without the pattern, dockerImage default redis:8; apiUpdateRedis = the insert schema made partial, less serverId)",
  admin:
    "routers/admin.ts (setupMonitoring: adminProcedure, input apiUpdateWebServerMonitoring = {metricsConfig}), found by code search; commit not shown by the search",
  monitoring:
    "routers/server.ts (setupMonitoring: apiUpdateServerMonitoring = serverId + metricsConfig; getServerMetrics: {url, token, dataPoints} strings, fetches url?limit=dataPoints with the Bearer token, answers the JSON array), routers/user.ts (getMetricsToken: {serverIp, enabledFeatures, metricsConfig} of the owner), found by code search; commit not shown by the search",
  notification:
    "schema/notification.ts@fefb5d14e052 (slack, telegram, discord, email, gotify), @046606e496f5 (ntfy), and a later stored version with resend, custom, lark and pushover (code search; its commit is not shown); Mattermost and Teams are in no stored version: their rows follow spec 4.11",
  organization:
    "routers/organization.ts@b20c95ffbc02 (create, delete: @00b724c81468; active: no input, the session's organization or null; setDefault: {organizationId}, member.isDefault, {success: true}; updateMemberRole: withPermission member update, {memberId, role}, not one's own, not to or from owner, admins change members only, true: @00b724c81468)",
  notificationRouter:
    "routers/notification.ts, later versions found by code search, commit not shown (test<Kind>Connection: the kind's test input, answers true; all: adminProcedure, no input, the organization's notifications newest first with each kind's record; one: protectedProcedure apiFindOneNotification {notificationId}, the notification of the active organization; remove: adminProcedure apiFindOneNotification, removeNotificationById's row; getEmailProviders: no input, the organization's notifications with their email and resend records; receiveNotification: publicProcedure {ServerType Dokploy|Remote default Dokploy, Type Memory|CPU, Value number, Threshold number, Message, Timestamp, Token}, the server holding the monitoring token, sendServerThresholdNotifications)",
  composeLeftovers:
    "routers/compose.ts@010a6e2a7627 (search: {q, name, appName, description, projectId, environmentId, limit 1-100 default 20, offset default 0} answering {items, total} of the stacks the member accessed; saveEnvironment: apiSaveEnvironmentVariablesCompose {composeId, env required, createEnvFile?} answering true; cancelDeployment: {composeId} answering {success, message} (cloud only there); killBuild: {composeId}, nothing answered; cleanQueues: {composeId} answering {success, message}; clearDeployments, disconnectGitProvider: {composeId} answering true; getDefaultCommand: {composeId} answering `docker <createCommand>`; getTags: {baseUrl?} answering the templates' tags without repeats; refreshToken: {composeId}, a new nanoid, true; processTemplate: {base64, composeId}, previewTemplate: {base64, appName, serverId?}, each answering {compose, template} where template is processTemplate's {envs, domains, mounts} of the decoded {compose, config}), schema/compose.ts@010a6e2a7627",
  composeCollision:
    "routers/compose.ts@010a6e2a7627 (randomizeCompose and isolatedDeployment: apiRandomizeCompose {composeId, suffix?} answering the file's text; loadMountsByService: {composeId, serviceName} answering the container's Mounts of type volume with a source; fetchSourceType: {composeId}, clones the source, answers compose.sourceType, BAD_REQUEST on failure; import: {base64, composeId}, deletes the stack's mounts and domains, stores the template's compose as composeFile, sourceType raw, env = the envs joined, creates its mounts and domains, answers {success, message}), schema/compose.ts (apiRandomizeCompose), utils/docker/compose.ts@08a172c1bc39 (randomizeComposeFile: suffix or 8 random hex digits; addSuffixToAllProperties: services, volumes, networks, configs, secrets), utils/docker/collision.ts@08a172c1bc39 (isolated: suffix or appName; the network added to every service, volumes suffixed with isolatedDeploymentsVolume), utils/docker/compose/service.ts, compose/volume.ts, collision/root-network.ts, utils/docker/domain.ts@00765c93688a (addDomainToCompose: isolatedDeployment before randomize at deploy)",
  composeTemplates:
    "routers/compose.ts@010a6e2a7627 (templates: {baseUrl?} answering fetchTemplatesList's entries; deployTemplate: {environmentId, serverId?, id, baseUrl?} answering the created compose)",
  destination:
    "routers/destination.ts@0076d1c71dcf, schema/destination.ts@05605ef2391a (apiCreateDestination: name, provider, accessKey, secretAccessKey, bucket, region, endpoint, additionalFlags=[] required, serverId optional; testConnection takes apiCreateDestination)",
  backup:
    "routers/backup.ts@0496b3bfa580, schema/backups.ts@0bb0fcd9ecc3 (apiCreateBackup, apiUpdateBackup .required(), apiFindOneBackup, apiRemoveBackup, apiRestoreBackup; manual runs answer true; listBackupFiles {destinationId, search, serverId?} answers rclone lsjson items)",
  volumeBackups:
    "routers/volume-backups.ts@0979167a5cac, schema/volume-backups.ts@02f0b0b1a400 (createVolumeBackupSchema = the insert schema less volumeBackupId; updateVolumeBackupSchema = it extended with volumeBackupId; list {id, volumeBackupType}; runManually answers runVolumeBackup's result or false; restoreVolumeBackupWithLogs {backupFileName, destinationId, volumeName, id, serviceType application|compose, serverId?} is a subscription)",
  compose:
    "routers/compose.ts@010a6e2a7627, schema/compose.ts@010a6e2a7627 (apiCreateCompose: description required, appName optional; apiUpdateCompose = the insert schema made partial, less serverId; apiDeleteCompose: deleteVolumes required; apiFetchServices: type fetch|cache default cache; deploy/redeploy answer {success, message, composeId}; start/stop answer true; loadServices' answer (services/compose.ts) not read)",
  github:
    "routers/github.ts@030e482fcee9, schema/github.ts@164c62f7e419 (apiFindOneGithub, apiFindGithubBranches, apiUpdateGithub = the insert schema extended)",
  gitlab:
    "routers/gitlab.ts@071d9eacee97, schema/gitlab.ts@0c54c0cbf446 (apiCreateGitlab, apiFindOneGitlab, apiGitlabTestConnection, apiFindGitlabBranches, apiUpdateGitlab)",
  gitea:
    "routers/gitea.ts@027406547e0f, schema/gitea.ts@027406547e0f (apiCreateGitea, apiUpdateGitea = the insert schema extended; apiGiteaTestConnection picks giteaId, organizationName); getGiteaUrl from a newer routers/gitea.ts (code search: apiFindOneGitea in, the giteaUrl string out)",
  bitbucket:
    "routers/bitbucket.ts@071d9eacee97, schema/bitbucket.ts@063d51e44209 (apiCreateBitbucket, apiUpdateBitbucket = the insert schema extended; apiBitbucketTestConnection)",
  schedule:
    "routers/schedule.ts@010a6e2a7627, schema/schedule.ts@1373ccacf0a5 (createScheduleSchema = the insert schema: name, cronExpression, command required, the rest optional; updateScheduleSchema = it extended with scheduleId required; list {id, scheduleType}; one, delete, runManually {scheduleId}; runManually answers {status, deploymentId, logPath}), services/schedule.ts@1e3f10bd22c1, utils/schedules/utils.ts@0979167a5cac; `timezone` from a newer schema (the generated RouterInputs of a Dokploy SDK, code search)",
  dockerContainers:
    "services/docker.ts@010a6e2a7627 (containerRemove: `docker rm -f`, answers nothing; listContainerFiles: [{name, isDirectory}], directories first; readContainerFile: {content (base64), truncated} at most CONTAINER_FILE_SIZE_LIMIT = 512 KiB; writeContainerFile answers nothing, refuses over 512 KB; getDockerEvents(serverId, minutes = 15): {events (docker events JSON, newest first), fetchedAt}); the router of that version is not stored: the inputs (containerId, serverId?; path; content; minutes?) are those of Dokploy's OpenAPI as an MCP catalogue lists them; start/stop/kill's answers not read; deleteContainerFile {containerId, path, serverId?} and uploadFileToContainer as issue 39 names them (neither read in Dokploy's code)",
  gitProviderShare:
    "a later routers/git-provider.ts found by code search, commit not shown (toggleShare: apiToggleShareGitProvider {gitProviderId min 1, sharedWithOrganization boolean}, only the provider's creator in its organization, else UNAUTHORIZED; answers updateGitProvider's row; getAll lists the providers owned or shared (getAccessibleGitProviderIds) with isOwner)",
  gitProvider:
    "routers/git-provider.ts@010a6e2a7627 (getAll answers the providers with their kind's object; remove takes apiRemoveGitProvider; allForPermissions: withPermission member update plus an enterprise licence, the organization's {gitProviderId, name, providerType} newest first)",
  dockerVolume:
    "routers/docker-volume.ts@4dd671ab760b (every input {volumeName (^[a-zA-Z0-9][a-zA-Z0-9_.-]*$), path (absolute, no NUL, not / for delete), content, serverId?}), services/docker-volume.ts@ac309104fd6c (getVolumes: `docker volume ls` JSON rows; getVolumesSize: {name, size}; listVolumeFiles: {name, isDirectory}; readVolumeFile: {content (base64), truncated}; write, delete and removeVolume answer nothing)",
  dockerImage:
    "routers/docker-image.ts@3355b3ea4046 (getImageConfig {imageRef}; removeImage {repository, tag, id, force?}), services/docker-image.ts@12784ec0ff64 (getImages: `docker images` JSON rows; removeImage removes repository:tag when both are set, else the id)",
  dockerDiskUsage:
    "routers/docker-disk-usage.ts@010a6e2a7627, services/docker.ts (getDockerDiskUsage: {type, totalCount, active, size, reclaimable, sizeBytes}; getBuildCache: {id, type, description, size, sizeBytes, createdSince, lastUsedSince, usageCount, shared, inUse}; code search, commit not shown)",
  swarm:
    "routers/swarm.ts@010a6e2a7627 (getNodes, getNodeApps, getContainerStats {serverId?}; getNodeInfo {nodeId, serverId?}), services/docker.ts@010a6e2a7627 (getSwarmNodes: `docker node ls --format json` rows; getNodeInfo: `docker node inspect` object; getNodeApplications: `docker service ls --format json` rows without dokploy-*; getAllContainerStats: `docker stats --no-stream` rows {BlockIO, CPUPerc, Container, ID, MemPerc, MemUsage, Name, NetIO})",
  patch:
    "routers/patch.ts@6a7da40ffeea, schema/patch.ts@d8e15a60f0ba (type create|update|delete; apiCreatePatch {filePath, content, type?, enabled?, applicationId?, composeId?}; apiUpdatePatch = the insert schema made partial without applicationId, composeId, plus patchId; create, one, update, delete, toggleEnabled, saveFileAsPatch, markFileForDeletion answer the patch row, byEntityId the service's rows by filePath), services/patch.ts@18b8b2624bbe",
  tag: "routers/tag.ts@13f1de5bd716, schema/tag.ts@e3fff301b849 (apiCreateTag {name, color?}; apiFindOneTag, apiRemoveTag {tagId}; apiUpdateTag = the insert schema made partial plus tagId; assignToProject, removeFromProject {projectId, tagId}; bulkAssign {projectId, tagIds}; create and update answer the tag row, assignToProject the project_tag row {id, projectId, tagId}, the rest {success: true}); routers/project.ts@010a6e2a7627 (all: projectTags with their tag)",
  network:
    "routers/network.ts@010a6e2a7627 (all, networksToSync {serverId?}: the organization's rows of that server (null: this machine), newest first; one, inspect, recreate {networkId}; import {serverId?, names[] min 1}; remove {networkId}; every procedure protectedProcedure; another organization's id NOT_FOUND, UNAUTHORIZED on remove), schema/network.ts@0c1191a4df9c (apiCreateNetwork: name* (1-64, ^[a-zA-Z0-9][a-zA-Z0-9_.-]*$, not dokploy-network, host, bridge, none, ingress, docker_gwbridge), driver bridge|host|overlay|macvlan|none|ipvlan, scope, internal, attachable, ingress, configOnly, enableIPv4, enableIPv6, ipam, serverId; the row: networkId, name, driver, scope, internal, attachable, ingress, configOnly, enableIPv4, enableIPv6, ipam, createdAt, organizationId, serverId)",
  vaultProvider:
    "routers/vault-provider.ts@80e0311a43c9 (create/update {name, config, assignments} (update with vaultProviderId) answer the row with config masked; remove {vaultProviderId} answers true; all, one {vaultProviderId} answer rows with config masked; testConnection {vaultProviderId?, config?} (one of them, else BAD_REQUEST) answers true; listSecretNames {vaultProviderId, projectId, environmentId?} answers string[], FORBIDDEN when not assigned), schema/vault-provider.ts (name 1-64 ^[a-zA-Z0-9_-]+$; config a discriminated union on providerType: hashicorp {url, token, namespace?, mount=secret}, infisical, aws, doppler, azure, scaleway, phase; assignments [{projectId, environmentIds=[]}]; row vaultProviderId, name, providerType, config, assignments, organizationId, createdAt), services/vault-provider.ts (VAULT_SECRET_MASK ********, the mask on update keeps the stored secret), utils/vault/hashicorp.ts@d264d384e608 (GET /v1/<mount>/data/<path> with X-Vault-Token and X-Vault-Namespace; testConnection: /v1/auth/token/lookup-self; names: metadata ?list=true walked 4 deep, at most 200, as path:field); docs.dokploy.com/docs/core/secrets-providers (reference syntax ${{vault.<provider-name>.<path>:<field>}}, values never stored)",
  databaseLeftovers:
    "routers/postgres.ts@027e425d313b, routers/redis.ts@027e425d313b, routers/mysql.ts@010a6e2a7627 (changePassword: {<kind>Id, password (DATABASE_PASSWORD_REGEX)}, mysql adding type user|root default user, run in the service's container then stored, answering true; changeStatus: apiChangePostgresStatus {postgresId, applicationStatus}, sets it, answers the row; move: {<kind>Id, targetEnvironmentId}, answers the moved row; search: {q?, name?, appName?, description?, projectId?, environmentId?, limit 1-100 = 20, offset = 0} answering {items: {<kind>Id, name, appName, description, environmentId, applicationStatus, createdAt}[], total}, a member limited to accessedServices); mariadb's type and mongo's rows by analogy (its stored router predates them)",
  domainToggle:
    "routers/domain.ts found by code search, commit not shown (toggleEnable: apiFindDomain {domainId}, flips enabled, rewrites an application's or a preview's Traefik file, answers the updated row with requiresRedeploy = domainType is compose)",
  mountLists:
    "routers/mount.ts@02a9856fa76f (allNamedByApplicationId: {applicationId}, the service container's Mounts of Type volume with a Source, undefined without a container) and a later routers/mount.ts with schema/mount.ts found by code search, commit not shown (listByServiceId: apiFindMountByApplicationId {serviceId, serviceType application|postgres|mysql|mariadb|mongo|redis|compose|libsql}, findMountsByApplicationId's rows)",
  sshKeyForApps:
    "routers/ssh-key.ts found by code search, commit not shown (allForApps: protectedProcedure, no input, the organization's keys as {sshKeyId, name}, newest first)",
  overview:
    "routers/overview.ts@12784ec0ff64 (services: withPermission service read, getAllServicesForOrganization with a member's accessedServices; domains: withPermission domain read; backups: protectedProcedure, backup or volumeBackup read), services/overview.ts@046a608f8c02 (each service {id, name, appName, status, createdAt, serverId, serverName, projectId, projectName, environmentId, environmentName, icon, type, lastDeployAt: the newest deployment's createdAt, applications and compose only}; each domain of the organization's applications, previews and compose {domainId, host, path, port, customEntrypoint, https, certificateType, createdAt, enabled, domainType, serviceOwnerId, serviceOwnerType, serviceName, projectId, projectName, environmentId, environmentName}; backups: the newest 500 deployments of the organization's backups and volume backups {deploymentId, kind backup|volumeBackup, status, createdAt, destinationId, destinationName, databaseType, serviceType, backupType, serviceName, serviceOwnerId, serviceOwnerType, serverId, projectId, environmentId}, ownerless ones (Dokploy's own database) to everyone)",
  dnsProvider:
    "routers/dns-provider.ts@d1f684cbe857 (create, update {name, config} (update with dnsProviderId) answer the row with config masked; remove {dnsProviderId} answers true; all answers the organization's rows by name, one {dnsProviderId} a row, config masked; testConnection {dnsProviderId?, config?} (one of them, else BAD_REQUEST) answers true; listZones {dnsProviderId}; listRecords {dnsProviderId, zoneId}; createRecord {dnsProviderId, zoneId, type, name, content, ttl?} answers {id} (an upsert by type and name); updateRecord {dnsProviderId, zoneId, recordId, type, name, content, ttl?} answers {id}; deleteRecord {dnsProviderId, zoneId, recordId} answers true; another organization's provider UNAUTHORIZED), schema/dns-provider.ts@02edd6abe75e (name 1-64 ^[a-zA-Z0-9_-]+$; config a discriminated union on providerType: cloudflare {apiToken}, route53 {accessKeyId, secretAccessKey}; record type A|CNAME, name, content min 1, ttl positive integer; row dnsProviderId, name, providerType, config, organizationId, createdAt), services/dns-provider.ts@1291c42282e7 (DNS_SECRET_MASK ********, merge keeps the stored secret for the mask, CONFLICT on a taken name), utils/dns/cloudflare.ts@193d0fc685c1 (Bearer token; zones and records paged by 50; upsert: GET dns_records?type&name then PUT or POST, ttl default 1), utils/dns/types.ts@1291c42282e7 (zones {id, name}; records {id, type, name, content, ttl})",
  forwardAuth:
    "routers/proprietary/forward-auth.ts@12784ec0ff64 (getAuthDomain: apiForwardAuthServerTarget {serverId: string|null}, null or {host, https, certificateType, customCertResolver, callbackUrl}; setAuthDomain: apiSetForwardAuthSettings, {callbackUrl}; removeAuthDomain, removeOnServer: {serverId}, {ok: true}; listProviders: no input, the organization's OIDC SSO providers {providerId, issuer, domain}; serverStatus: no input, [{serverId, name, status running|stopped|unknown, authDomain, https, certificateType, customCertResolver, callbackUrl}] for this machine and each deploy server; deployOnServer: apiDeployForwardAuthOnServer {serverId, providerId min 1}, {ok: true}; status: apiForwardAuthDomainTarget {domainId min 1}, {enabled}; enable, disable: {domainId}, {ok: true}, application domains only), schema/forward-auth.ts@b29a87aaa8fc (apiSetForwardAuthSettings {serverId: string|null, authDomain lower-cased DNS name, https = true, certificateType none|letsencrypt|custom = letsencrypt, customCertResolver?}), services/proprietary/forward-auth.ts@1df6774ee8a9 (one settings row per server; deploy needs the auth domain first; enable needs the proxy deployed and running), setup/forward-auth-setup.ts@41c09cd86bb6 (quay.io/oauth2-proxy/oauth2-proxy:v7.6.0 as a Swarm service on port 4180 with OAUTH2_PROXY_* variables: oidc provider, issuer, client id and secret, an HMAC-derived cookie secret, reverse proxy, skip provider button, X-Auth-Request headers, upstream static://202, redirect URL <scheme>://<authDomain>/oauth2/callback, cookie and whitelist domain = the auth domain less its first label), utils/traefik/forward-auth.ts@41c09cd86bb6 (middleware forward-auth-<appName>-<uniqueConfigKey>: forwardAuth {address, trustForwardHeader: true, authResponseHeaders X-Auth-Request-User, -Email, -Preferred-Username, Authorization}; the auth domain's router Host(authDomain) && PathPrefix(/oauth2/) to the proxy)",
  cliOptions:
    "@dokploy/cli@0.30.7 dist/generated/commands.js (tests/compat/cli-options.json, written by scripts/cli-options.mjs): the options each command sends as its procedure's input; Dokploy's stored schemas (schema/compose.ts@010a6e2a7627, schema/mount.ts@02a9856fa76f) predate some of them (freshVolumes, mounts.update's owner fields), so their meaning is read from the CLI's option names and Dokploy's later routers as the code search shows them",
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

/** The readLogs inputs (tail 1-10,000, since all|<n>s|m|h|d, search a plain phrase). */
const RUNTIME_LOG_FIELDS = ["tail=100", 'since="all"', "search"];
const WE_SET = "set by the platform from the session or the parent row, never by the caller";
const NETWORK_SET =
  "an organization network is always an attachable overlay (or a bridge) on IPv4 with the engine's addresses: this field is not accepted (a 400 naming it)";
/** Fields Dokploy 0.30.7's CLI sends that we refuse (400 naming the field); docs/decisions.md. */
const CLI_REFUSED = {
  includeEncryptionKey:
    "refused (400): a backup file never carries the platform's secret key; a web-server backup restores with the same PLATFORM_SECRET_KEY kept apart",
  networkId:
    "refused (400): resync covers every labelled network of a server (serverId); one network's record is network.inspect",
  defaultRole:
    "refused (400): an invitation names its member's role (organization.inviteMember); an organization has no default role",
  userInternal:
    "refused (400): Dokploy's own user columns (authentication, billing, licensing, moderation, timestamps) are not set through the profile",
} as const;
const FRESH_VOLUMES =
  "Dokploy CLI 0.30.7's --freshVolumes: the deployment first removes the stack with its volumes (only those labelled as the organization's; others are left and named in the log), then deploys";
const LENIENT = "optional with us: a Dokploy client always sends it, so nothing breaks";
const LENIENT_PATCH =
  "optional with us: a field left out keeps its stored value, so a Dokploy client sending all of them works alike";
const NO_ECR = "AWS ECR registries are not served";
const COMPOSE_NOT_YET =
  "not accepted until the deploy step acts on it (a field accepted and ignored is a defect)";
const TOGGLE_DEFAULT = "spec 2.11: every toggle is optional and defaults to false";
const LIMITS = "ours: a channel limited to projects or services (issue 24 item 5)";
const CLEANER = "we answer the same data in a shape of our own";
const NO_RCLONE = "destinations are S3 buckets reached with the AWS SDK, not rclone: no rclone flags";
const NO_LIBSQL = "volume backups of libsql services are not served (their database backups are)";
const VERIFY = "ours: restore verification (issue 26 item 4)";
const MANUAL_ANSWER =
  "we answer the run's outcome {success, deploymentId, status, backupFile, sizeBytes, verification, errorMessage} where Dokploy answers true";
const START_AUTHORIZATION =
  "issue 37 finding 5: Dokploy's clients build the authorize link with the provider's id as state, which any member can read; ours mints a single-use state for the caller";
const AUTH_ID =
  "optional with us: the provider's creator is the caller; when sent it must be the caller's own user id (400 otherwise)";
const PUSH_DEPLOYS =
  "not served: whether a push deploys is each application's autoDeploy (6.2), which the provider webhook honours";
const OAUTH_TOKENS = {
  accessToken: "ours: a token obtained outside the OAuth flow may be given (sealed, write-only)",
  refreshToken: "ours: a token obtained outside the OAuth flow may be given (sealed, write-only)",
  expiresAt: "ours: the expiry of a token given outside the OAuth flow",
};
const GITLAB_HOOK =
  "newer Dokploy (pages/api/deploy/gitlab.ts@002e13c88dac, findGitlabByWebhookSecret) stores the provider webhook's X-Gitlab-Token; the schema read predates it";
const ABSENT_PROVIDER = "optional with us: an absent id names no provider, a 404 as an unknown one";
const GITEA_ORGANIZATION =
  "not served: Dokploy accepts it and has no column for it (its gitea table stores nothing of it)";
const INTERNAL_URL =
  "ours: issue 25 names the internal URL of GitLab and Gitea, where the platform reaches them";
const DOMAIN_FORWARD_AUTH =
  "Dokploy CLI 0.30.7's field (newer Dokploy than the schema read): puts an application domain behind its server's forward auth (true) or serves it without (false), as forwardAuth.enable/disable; a 400 naming it while the server's authentication service is not running, or on a compose domain";
const DNS_RECORD =
  "Dokploy 0.30.7's domain caller of syncDnsProviderDomainRecords is not stored: the field that names a DNS provider for a domain's record is ours, named as dnsProvider's id";
const FA_SERVER =
  "optional with us: left out means this machine, as null does (a plain query string cannot carry null)";
const FA_PROVIDERS =
  "ours: Dokploy's providers are its SSO settings' OIDC providers; ours are the organization's own, added here, the client secret sealed and answered as ********";
const SUCCESS_ANSWER = "we answer {success:true} where Dokploy answers the removed row (spec 4.0)";

/** Dokploy's createScheduleSchema (the insert schema of its schedule table). */
const SCHEDULE_FIELDS = [
  "scheduleId",
  "description",
  "organizationId",
  "name*",
  "cronExpression*",
  "appName",
  "serviceName",
  "shellType",
  "scheduleType",
  "command*",
  "script",
  "applicationId",
  "composeId",
  "serverId",
  "userId",
  "enabled",
  "createdAt",
  "timezone",
];
const ORGANIZATION_CHECKED = "accepted and checked: another organization's is a 404, as any foreign id";
const SCHEDULE_WE_SET = {
  organizationId: ORGANIZATION_CHECKED,
  scheduleId: WE_SET,
  appName: WE_SET,
  userId: WE_SET,
  createdAt: WE_SET,
};

const defaultImages: Record<string, string> = {
  postgres: "postgres:18",
  mysql: "mysql:8",
  mariadb: "mariadb:11",
  mongo: "mongo:8",
  redis: "redis:7",
  libsql: "ghcr.io/tursodatabase/libsql-server:v0.24.32",
};

/** Dokploy's dockerImage defaults on create (its createSchema's, not the table's). */
const dokployDefaultImages: Record<string, string> = {
  postgres: "postgres:18",
  mysql: "mysql:8",
  mariadb: "mariadb:6",
  mongo: "mongo:15",
  redis: "redis:8",
  libsql: "ghcr.io/tursodatabase/libsql-server:v0.24.32",
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
  // Two-factor sign-in: Dokploy's dashboard calls better-auth's twoFactor plugin routes, not tRPC.
  "auth.twoFactorEnable": {
    kind: "mutation",
    platformOnly: "Dokploy enrols through better-auth (/api/auth/two-factor/enable {password})",
  },
  "auth.twoFactorConfirm": {
    kind: "mutation",
    platformOnly:
      "Dokploy confirms the enrolment through better-auth (/api/auth/two-factor/verify-totp {code})",
  },
  "auth.twoFactorVerifyTotp": {
    kind: "mutation",
    platformOnly:
      "Dokploy finishes a two-factor sign-in through better-auth (/api/auth/two-factor/verify-totp {code})",
  },
  "auth.twoFactorVerifyBackupCode": {
    kind: "mutation",
    platformOnly:
      "Dokploy signs in with a backup code through better-auth (/api/auth/two-factor/verify-backup-code {code})",
  },
  "auth.twoFactorDisable": {
    kind: "mutation",
    platformOnly:
      "Dokploy turns two-factor off through better-auth (/api/auth/two-factor/disable {password})",
  },
  "auth.twoFactorGenerateBackupCodes": {
    kind: "mutation",
    platformOnly:
      "Dokploy renews backup codes through better-auth (/api/auth/two-factor/generate-backup-codes {password})",
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
    differs: {
      id: "accepted and checked: it must be the caller's own id (400 naming it)",
      firstName: 'Dokploy CLI 0.30.7\'s profile name: stored and answered by user.get/one/all ("" clears it)',
      lastName: 'Dokploy CLI 0.30.7\'s profile name: stored and answered by user.get/one/all ("" clears it)',
      ...Object.fromEntries(
        [
          "isRegistered",
          "expirationDate",
          "createdAt2",
          "createdAt",
          "twoFactorEnabled",
          "emailVerified",
          "banned",
          "banReason",
          "banExpires",
          "updatedAt",
          "enablePaidFeatures",
          "allowImpersonation",
          "enableEnterpriseFeatures",
          "licenseKey",
          "stripeCustomerId",
          "stripeSubscriptionId",
          "serversQuantity",
          "sendInvoiceNotifications",
        ].map((field) => [field, CLI_REFUSED.userInternal]),
      ),
    },
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
      accessedServers:
        "Dokploy CLI 0.30.7's grant: the remote servers (serverId) a member uses; null is not restricted (as our other lists); this machine is always reachable",
      accessedGitProviders:
        "Dokploy CLI 0.30.7's grant: the git providers (gitProviderId) a member uses among the shared ones; null is not restricted; a provider's creator keeps theirs",
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
  "user.sendInvitation": {
    kind: "mutation",
    source: "user",
    input: ["invitationId*", "notificationId*"],
    output: "any",
  },
  "user.confirmEmail": {
    kind: "mutation",
    platformOnly:
      "Dokploy applies a new email at once; here a new email waits for the secret link an Email or Resend channel sends to it (issue 22 finding 5, issue 24)",
  },
  "user.changeEmail": {
    kind: "mutation",
    platformOnly:
      "Dokploy changes emails through user.update; here the instance administrator applies a change where no Email or Resend channel mails a confirmation link (issue 22 finding 5, issue 24)",
  },
  "user.checkUserOrganizations": {
    kind: "query",
    source: "user",
    input: ["userId*"],
    output: "number",
    differs: { "(output)": "we answer {count}" },
  },
  "user.listSessions": {
    kind: "query",
    unverified:
      "named by issue 41 as a Dokploy 0.30.7 procedure; no stored Dokploy user router has it (the latest read, userLater, has none): ours lists the caller's own live sessions",
  },
  "user.revokeSession": {
    kind: "mutation",
    unverified:
      "named by issue 41 as a Dokploy 0.30.7 procedure; no stored Dokploy user router has it: ours revokes one of the caller's own sessions by its id (a token is never shown after login)",
  },
  "user.session": {
    kind: "query",
    source: "userLater",
    input: [],
    output: "object:user,session",
    differs: {
      "(output)":
        "401 without credentials instead of null (public procedures here never read credentials); session carries its id and times besides activeOrganizationId, user the full user view",
    },
  },
  "user.getPermissions": {
    kind: "query",
    source: "userLater",
    input: [],
    output: "object:",
    differs: {
      "(output)":
        "our resources and actions are those we enforce (project, environment, service, docker, traefikFiles, api, sshKeys, gitProviders, member), not Dokploy's statements list",
    },
  },
  "user.generateToken": {
    kind: "mutation",
    source: "userLater",
    input: [],
    output: "string",
    differs: {
      "(output)":
        'Dokploy answers the constant "token" (a leftover of its old per-user API token); ours creates that token as an API key of the caller and answers the key',
    },
  },
  "user.getUserByToken": {
    kind: "query",
    source: "userLater",
    input: ["token*"],
    output: "object:id,email,status,role,inviterId,isExpired,userAlreadyExists",
    differs: {
      token:
        "ours: the invitation's secret token (organization.inviteMember, user.sendInvitation's link); Dokploy takes the invitation's id, which here is never a credential",
    },
  },
  "user.createUserWithCredentials": {
    kind: "mutation",
    source: "userLater",
    input: ["email*", "password*", "role*"],
    output: "any",
    differs: {
      role: "only member (owner and admin are refused there too; we have no custom roles): other values are a 400 naming role",
      name: "ours: the new user's name (our users have one), else the email's local part",
    },
  },
  "user.getBackups": { kind: "query", source: "userLater", input: [], output: "object:backups" },
  "user.getContainerMetrics": {
    kind: "query",
    source: "user",
    input: ["url*", "token*", "appName*", "dataPoints*"],
    output: "array:",
    differs: {
      "(output)":
        "an empty series is answered as [] and the agent's own refusals (not collected, not running) as 400/404 with its message, where Dokploy throws one error for both",
    },
  },
  "user.getServerMetrics": {
    kind: "query",
    source: "userLater",
    input: [],
    output: "object:",
    differs: {
      "(output)":
        "Dokploy answers the user row (once holding the monitoring settings); ours the user view with this machine's serverIp, enabledFeatures and metricsConfig (user.getMetricsToken's, the token for instance administrators only)",
    },
  },
  "user.listPasskeys": {
    kind: "query",
    source: "userLater",
    unverified:
      "in Dokploy 0.30.7's CLI (a GET without options); its router was not in the stored sources. Ours always answers [] (no passkey can be registered)",
  },
  "user.getBookmarkedTemplates": { kind: "query", source: "userLater", input: [], output: "array:" },
  "user.toggleTemplateBookmark": {
    kind: "mutation",
    source: "userLater",
    input: ["templateId*"],
    output: "object:isBookmarked",
  },
  "user.haveRootAccess": { kind: "query", source: "userLater", input: [], output: "boolean" },
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
    differs: { logo: "organization logos are not stored", defaultRole: CLI_REFUSED.defaultRole },
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
  "organization.active": { kind: "query", source: "organization", input: [], output: "object:id,name" },
  "organization.setDefault": {
    kind: "mutation",
    source: "organization",
    input: ["organizationId*"],
    output: "object:success",
  },
  "organization.updateMemberRole": {
    kind: "mutation",
    source: "organization",
    input: ["memberId*", "role*"],
    output: "boolean",
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
  "project.all": {
    kind: "query",
    source: "project",
    input: [],
    output: "array:projectId,name,environments,projectTags",
  },
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
  "project.allForPermissions": {
    kind: "query",
    source: "project",
    input: [],
    output: "array:projectId,name,environments",
  },
  "project.homeStats": {
    kind: "query",
    source: "project",
    input: [],
    output: "object:projects,environments,applications,compose,databases,services,status",
  },
  "project.onboardingStatus": {
    kind: "query",
    source: "project",
    unverified:
      "in Dokploy 0.30.7's CLI (a GET without options) but in no stored router source (routers/project.ts@010a6e2a7627 has none): the answer's shape is ours",
  },
  "project.completeOnboarding": {
    kind: "mutation",
    source: "project",
    unverified:
      "in Dokploy 0.30.7's CLI (a POST without options) but in no stored router source (routers/project.ts@010a6e2a7627 has none)",
  },
  "overview.services": {
    kind: "query",
    source: "overview",
    input: [],
    output:
      "array:id,name,appName,status,createdAt,serverId,serverName,projectId,projectName,environmentId,environmentName,icon,type,lastDeployAt",
  },
  "overview.domains": {
    kind: "query",
    source: "overview",
    input: [],
    output:
      "array:domainId,host,path,port,customEntrypoint,https,certificateType,createdAt,enabled,domainType,serviceOwnerId,serviceOwnerType,serviceName,projectId,projectName,environmentId,environmentName",
  },
  "overview.backups": {
    kind: "query",
    source: "overview",
    input: [],
    output:
      "array:deploymentId,kind,status,createdAt,destinationId,destinationName,databaseType,serviceType,backupType,serviceName,serviceOwnerId,serviceOwnerType,serverId,projectId,environmentId",
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
  "environment.duplicate": {
    kind: "mutation",
    source: "environment",
    input: ["environmentId*", "name*", "description"],
    output: "object:environmentId,name",
  },
  "environment.search": {
    kind: "query",
    source: "environment",
    input: ["q", "name", "description", "projectId", "limit=20", "offset=0"],
    output: "object:items,total",
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

  "cluster.getNodes": { kind: "query", source: "cluster", input: ["serverId"], output: "array:" },
  "cluster.addWorker": {
    kind: "query",
    source: "cluster",
    input: ["serverId"],
    output: "object:command,version",
    differs: {
      joinServerId: "a server registered in Platform joins through its agent (the token never shown)",
    },
  },
  "cluster.addManager": {
    kind: "query",
    source: "cluster",
    input: ["serverId"],
    output: "object:command,version",
    differs: {
      joinServerId: "a server registered in Platform joins through its agent (the token never shown)",
    },
  },
  "cluster.removeWorker": {
    kind: "mutation",
    source: "cluster",
    input: ["nodeId*", "serverId"],
    output: "boolean!",
  },
  "cluster.updateNode": { kind: "mutation", platformOnly: "drain, promote, demote and labels (issue 30)" },
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
  "docker.startContainer": {
    kind: "mutation",
    source: "dockerContainers",
    input: ["containerId*", "serverId"],
    output: "any",
  },
  "docker.stopContainer": {
    kind: "mutation",
    source: "dockerContainers",
    input: ["containerId*", "serverId"],
    output: "any",
  },
  "docker.killContainer": {
    kind: "mutation",
    source: "dockerContainers",
    input: ["containerId*", "serverId"],
    output: "any",
  },
  "docker.removeContainer": {
    kind: "mutation",
    source: "dockerContainers",
    input: ["containerId*", "serverId"],
    output: "null",
  },
  "docker.listContainerFiles": {
    kind: "query",
    source: "dockerContainers",
    input: ["containerId*", "path*", "serverId"],
    output: "array:name,isDirectory",
  },
  "docker.readContainerFile": {
    kind: "query",
    source: "dockerContainers",
    input: ["containerId*", "path*", "serverId"],
    output: "object:content,truncated",
  },
  "docker.writeContainerFile": {
    kind: "mutation",
    source: "dockerContainers",
    input: ["containerId*", "path*", "content*", "serverId"],
    output: "null",
  },
  "docker.deleteContainerFile": {
    kind: "mutation",
    source: "dockerContainers",
    input: ["containerId*", "path*", "serverId"],
    output: "null",
  },
  "docker.getEvents": {
    kind: "query",
    source: "dockerContainers",
    input: ["serverId", "minutes=15"],
    output: "object:events,fetchedAt",
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
      enableDockerCleanup: "set with settings.updateDockerCleanup {serverId}; server.one/all answer it",
    },
  },
  "server.one": {
    kind: "query",
    source: "server",
    input: ["serverId*"],
    output: "object:serverId,name,ipAddress,enableDockerCleanup",
  },
  "server.all": {
    kind: "query",
    source: "server",
    input: [],
    output: "array:serverId,name,totalSum,enableDockerCleanup",
  },
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
      enableDockerCleanup: "set with settings.updateDockerCleanup {serverId}; server.one/all answer it",
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
    differs: {
      token:
        "optional: without it the stored token of the caller's server at that address and port is used, so the dashboard keeps the token out of the query's URL (Dokploy's CLI still sends it)",
    },
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
  "sshKey.allForApps": { kind: "query", source: "sshKeyForApps", input: [], output: "array:sshKeyId,name" },
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
  "application.deployNginxQuickstart": {
    kind: "mutation",
    source: "applicationQuickstart",
    input: ["environmentId*", "serverId"],
    output: "object:applicationId,domainUrl",
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
  "application.readLogs": {
    kind: "query",
    source: "runtimeLogs",
    input: ["applicationId*", ...RUNTIME_LOG_FIELDS],
    output: "string",
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
  "deployment.readLogs": {
    kind: "query",
    source: "runtimeLogs",
    input: ["deploymentId*", "tail=100"],
    output: "string",
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
      mountPath:
        "optional with us: a compose stack's file mount leaves it empty (or Dokploy's \"/\"); a 400 naming it when missing for other services",
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
    input: [
      "mountId*",
      "type",
      "hostPath",
      "volumeName",
      "content",
      "mountPath",
      "filePath",
      "serviceType",
      "applicationId",
      "postgresId",
      "mariadbId",
      "mongoId",
      "mysqlId",
      "redisId",
      "composeId",
    ],
    output: "any",
    differs: {
      serviceType: "accepted and checked: it must be the mount's own (400 naming it); a mount never moves",
      applicationId: "accepted and checked: it must be the mount's own (400 naming it)",
      postgresId: "accepted and checked: it must be the mount's own (400 naming it)",
      mariadbId: "accepted and checked: it must be the mount's own (400 naming it)",
      mongoId: "accepted and checked: it must be the mount's own (400 naming it)",
      mysqlId: "accepted and checked: it must be the mount's own (400 naming it)",
      redisId: "accepted and checked: it must be the mount's own (400 naming it)",
      libsqlId: "accepted and checked: it must be the mount's own (400 naming it)",
      composeId: "accepted and checked: it must be the mount's own (400 naming it)",
    },
  },
  "mounts.remove": { kind: "mutation", source: "mounts", input: ["mountId*"], output: "any" },
  "mounts.listByServiceId": {
    kind: "query",
    source: "mountLists",
    input: ["serviceId*", "serviceType*"],
    output: "array:mountId,type,mountPath",
  },
  "mounts.allNamedByApplicationId": {
    kind: "query",
    source: "mountLists",
    input: ["applicationId*"],
    output: "array:Type,Name,Source,Destination",
    differs: { "(output)": "[] where Dokploy answers undefined when the application runs no container" },
  },

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
      userId: WE_SET,
      redisId: "ours: redis backups by RDB snapshot (issue 26)",
      includeEncryptionKey: CLI_REFUSED.includeEncryptionKey,
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
      includeEncryptionKey: CLI_REFUSED.includeEncryptionKey,
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
  "backup.manualBackupLibsql": {
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
  "backup.manualBackupCompose": {
    kind: "mutation",
    source: "backup",
    input: ["backupId*"],
    output: "boolean",
    differs: { "(output)": MANUAL_ANSWER },
  },
  "backup.manualBackupWebServer": {
    kind: "mutation",
    source: "backup",
    input: ["backupId*"],
    output: "boolean",
    differs: { "(output)": MANUAL_ANSWER },
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
  "schedule.create": {
    kind: "mutation",
    source: "schedule",
    input: SCHEDULE_FIELDS,
    output: "object:scheduleId,name,cronExpression,command,shellType,scheduleType,enabled",
    differs: SCHEDULE_WE_SET,
  },
  "schedule.update": {
    kind: "mutation",
    source: "schedule",
    input: ["scheduleId*", ...SCHEDULE_FIELDS.filter((field) => field !== "scheduleId")],
    output: "object:scheduleId,name,cronExpression,command,shellType,scheduleType,enabled",
    differs: {
      organizationId: ORGANIZATION_CHECKED,
      appName: WE_SET,
      userId: WE_SET,
      createdAt: WE_SET,
      name: LENIENT_PATCH,
      cronExpression: LENIENT_PATCH,
      command: LENIENT_PATCH,
    },
  },
  "schedule.delete": { kind: "mutation", source: "schedule", input: ["scheduleId*"], output: "boolean" },
  "schedule.list": {
    kind: "query",
    source: "schedule",
    input: ["id*", "scheduleType*"],
    output: "array:scheduleId,name,cronExpression,application,compose,server,deployments",
  },
  "schedule.one": {
    kind: "query",
    source: "schedule",
    input: ["scheduleId*"],
    output: "object:scheduleId,name,cronExpression,command,application,compose,server",
  },
  "schedule.runManually": {
    kind: "mutation",
    source: "schedule",
    input: ["scheduleId*"],
    output: "object:status,deploymentId,logPath",
  },
  "volumeBackups.list": {
    kind: "query",
    source: "volumeBackups",
    input: ["id*", "volumeBackupType*"],
    output: "array:volumeBackupId,name,volumeName,prefix,cronExpression,destinationId",
  },
  "volumeBackups.create": {
    kind: "mutation",
    source: "volumeBackups",
    input: [
      "name*",
      "volumeName*",
      "prefix*",
      "appName",
      "serviceName",
      "turnOff",
      "cronExpression*",
      "keepLatestCount",
      "enabled",
      "applicationId",
      "postgresId",
      "mariadbId",
      "mongoId",
      "mysqlId",
      "redisId",
      "libsqlId",
      "composeId",
      "createdAt",
      "destinationId*",
    ],
    output: "object:volumeBackupId,name,volumeName,prefix,appName,cronExpression,destinationId",
    differs: {
      serviceType: "accepted and checked: it must be the kind of the service named (400 naming it)",
      appName: WE_SET,
      createdAt: WE_SET,
      libsqlId: NO_LIBSQL,
    },
  },
  "volumeBackups.one": {
    kind: "query",
    source: "volumeBackups",
    input: ["volumeBackupId*"],
    output: "object:volumeBackupId,name,volumeName,prefix,appName,cronExpression,destinationId",
  },
  "volumeBackups.update": {
    kind: "mutation",
    source: "volumeBackups",
    input: [
      "volumeBackupId*",
      "name*",
      "volumeName*",
      "prefix*",
      "appName",
      "serviceName",
      "turnOff",
      "cronExpression*",
      "keepLatestCount",
      "enabled",
      "applicationId",
      "postgresId",
      "mariadbId",
      "mongoId",
      "mysqlId",
      "redisId",
      "libsqlId",
      "composeId",
      "createdAt",
      "destinationId*",
    ],
    output: "object:volumeBackupId,name,volumeName,prefix,appName,cronExpression,destinationId",
    differs: {
      serviceType: "accepted and checked: it must be the kind of the service named (400 naming it)",
      name: LENIENT_PATCH,
      volumeName: LENIENT_PATCH,
      prefix: LENIENT_PATCH,
      cronExpression: LENIENT_PATCH,
      destinationId: LENIENT_PATCH,
      appName: WE_SET,
      createdAt: WE_SET,
      libsqlId: NO_LIBSQL,
    },
  },
  "volumeBackups.delete": {
    kind: "mutation",
    source: "volumeBackups",
    input: ["volumeBackupId*"],
    output: "any",
  },
  "volumeBackups.runManually": {
    kind: "mutation",
    source: "volumeBackups",
    input: ["volumeBackupId*"],
    output: "any",
    differs: { "(output)": MANUAL_ANSWER },
  },
  "volumeBackups.restoreVolumeBackupWithLogs": {
    kind: "mutation",
    source: "volumeBackups",
    input: ["backupFileName*", "destinationId*", "volumeName*", "id*", "serviceType*", "serverId"],
    output: "any",
    differs: {
      serviceType:
        "every kind of service with volumes (applications, databases, compose stacks), where Dokploy takes application|compose",
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
      dnsProviderId: DNS_RECORD,
      forwardAuthEnabled: DOMAIN_FORWARD_AUTH,
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
      "enabled",
    ],
    output: "any",
    differs: {
      certificate: "we also take a custom certificate",
      certificateKey: "we also take a custom certificate",
      dnsProviderId: DNS_RECORD,
      forwardAuthEnabled: DOMAIN_FORWARD_AUTH,
    },
  },
  "domain.toggleEnable": {
    kind: "mutation",
    source: "domainToggle",
    input: ["domainId*"],
    output: "object:domainId,host,enabled,requiresRedeploy",
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
    input: ["domain*", "serverIp", "serverId"],
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

  "certificates.create": {
    kind: "mutation",
    source: "certificates",
    input: [
      "certificateId",
      "name*",
      "certificateData*",
      "privateKey*",
      "certificatePath",
      "autoRenew",
      "organizationId*",
      "serverId",
    ],
    output: "object:certificateId,name,certificateData,autoRenew,organizationId,serverId",
    differs: {
      certificateId: WE_SET,
      certificatePath: "the files are named after the certificateId in the proxy's certificates directory",
      organizationId: WE_SET,
      autoRenew: "true is a 400: nothing renews a custom certificate (docs/decisions.md)",
    },
  },
  "certificates.one": {
    kind: "query",
    source: "certificates",
    input: ["certificateId*"],
    output: "object:certificateId,name,certificateData,autoRenew,organizationId,serverId",
  },
  "certificates.all": {
    kind: "query",
    source: "certificates",
    input: [],
    output: "array:certificateId,name,certificateData,autoRenew,organizationId,serverId",
  },
  "certificates.update": {
    kind: "mutation",
    source: "certificates",
    input: ["certificateId*", "name", "certificateData", "privateKey", "autoRenew"],
    output: "object:certificateId,name,certificateData,autoRenew,organizationId,serverId",
    differs: { autoRenew: "true is a 400: nothing renews a custom certificate (docs/decisions.md)" },
  },
  "certificates.remove": {
    kind: "mutation",
    source: "certificates",
    input: ["certificateId*"],
    output: "any",
  },
  "rollback.rollback": { kind: "mutation", source: "rollback", input: ["rollbackId*"], output: "null" },
  "rollback.delete": {
    kind: "mutation",
    source: "rollback",
    input: ["rollbackId*"],
    output: "object:rollbackId,deploymentId,version,image,createdAt",
  },
  "previewDeployment.all": {
    kind: "query",
    source: "previewDeployment",
    input: ["applicationId*"],
    output: "array:previewDeploymentId,applicationId,appName,branch,pullRequestNumber,previewStatus",
  },
  "previewDeployment.one": {
    kind: "query",
    source: "previewDeployment",
    input: ["previewDeploymentId*"],
    output: "object:previewDeploymentId,applicationId,appName,branch,pullRequestURL,previewStatus",
  },
  "previewDeployment.delete": {
    kind: "mutation",
    source: "previewDeployment",
    input: ["previewDeploymentId*"],
    output: "boolean!",
  },
  "previewDeployment.redeploy": {
    kind: "mutation",
    source: "previewDeployment",
    input: ["previewDeploymentId*", "title", "description"],
    output: "boolean!",
  },
  "previewDeployment.create": {
    kind: "mutation",
    platformOnly:
      "Dokploy makes previews only from GitHub pull requests; a preview of a branch through the API is the issue's (docs/decisions.md)",
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
  "settings.cleanDockerPrune": {
    kind: "mutation",
    source: "settings",
    input: ["serverId"],
    output: "boolean",
  },
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
    source: "compose",
    input: [
      "name*",
      "description*",
      "environmentId*",
      "composeType",
      "appName",
      "serverId",
      "composeFile",
      "sourceType",
    ],
    output: "object:composeId,name,appName",
    differs: {
      appName: "spec 4.3 marks appName required where Dokploy generates one",
      description: LENIENT,
    },
  },
  "compose.one": {
    kind: "query",
    source: "compose",
    input: ["composeId*"],
    output: "object:composeId,name,appName,environmentId",
  },
  "compose.update": {
    kind: "mutation",
    source: "compose",
    input: [
      "composeId*",
      "name",
      "appName",
      "description",
      "env",
      "composeFile",
      "refreshToken",
      "sourceType",
      "composeType",
      "repository",
      "owner",
      "branch",
      "autoDeploy",
      "gitlabProjectId",
      "gitlabRepository",
      "gitlabOwner",
      "gitlabBranch",
      "gitlabPathNamespace",
      "bitbucketRepository",
      "bitbucketRepositorySlug",
      "bitbucketOwner",
      "bitbucketBranch",
      "giteaRepository",
      "giteaOwner",
      "giteaBranch",
      "customGitUrl",
      "customGitBranch",
      "customGitSSHKeyId",
      "command",
      "createEnvFile",
      "enableSubmodules",
      "composePath",
      "suffix",
      "randomize",
      "isolatedDeployment",
      "isolatedDeploymentsVolume",
      "triggerType",
      "composeStatus",
      "icon",
      "environmentId",
      "createdAt",
      "pausedAt",
      "watchPaths",
      "githubId",
      "gitlabId",
      "bitbucketId",
      "giteaId",
      "serviceNetworks",
    ],
    output: "object:composeId,name,appName",
    differs: {
      appName: "every Docker object of the stack is named after it: fixed once created",
      refreshToken: WE_SET,
      command: COMPOSE_NOT_YET,
      createEnvFile: COMPOSE_NOT_YET,
      serviceNetworks: COMPOSE_NOT_YET,
      networkIds:
        "not in Dokploy 0.30.7's compose.update (its applications and databases take it): every service of the stack joins the organization's networks named (docs/decisions.md)",
      icon: COMPOSE_NOT_YET,
      pausedAt: "no paused state is served",
      composeStatus: "follows the deployments and start/stop, never the caller",
      environmentId: "compose.move moves a stack to another environment",
      createdAt: WE_SET,
    },
  },
  "compose.deploy": {
    kind: "mutation",
    source: "compose",
    input: ["composeId*", "title", "description"],
    output: "object:success,message,composeId",
    differs: {
      "(output)": "we answer {success:true, deploymentId} of the queued deployment",
      freshVolumes: FRESH_VOLUMES,
    },
  },
  "compose.redeploy": {
    kind: "mutation",
    source: "compose",
    input: ["composeId*", "title", "description"],
    output: "object:success,message,composeId",
    differs: {
      "(output)": "we answer {success:true, deploymentId} of the queued deployment",
      freshVolumes: FRESH_VOLUMES,
    },
  },
  "compose.start": {
    kind: "mutation",
    source: "compose",
    input: ["composeId*"],
    output: "boolean",
  },
  "compose.stop": {
    kind: "mutation",
    source: "compose",
    input: ["composeId*"],
    output: "boolean",
  },
  "compose.delete": {
    kind: "mutation",
    source: "compose",
    input: ["composeId*", "deleteVolumes*"],
    output: "object:composeId,name,appName",
    differs: { deleteVolumes: "spec 4.3: deleteVolumes defaults to false" },
  },
  "compose.loadServices": {
    kind: "query",
    source: "compose",
    input: ["composeId*", 'type="cache"'],
    output: "any",
    differs: {
      type: "spec 4.3: type is the composeType the services are read for (stack | docker-compose); Dokploy's fetch | cache says whether to clone the source again",
    },
  },
  "compose.readLogs": {
    kind: "query",
    source: "runtimeLogs",
    input: ["composeId*", "containerId*", ...RUNTIME_LOG_FIELDS],
    output: "string",
  },
  "compose.getConvertedCompose": {
    kind: "query",
    source: "compose",
    input: ["composeId*"],
    output: "string",
  },
  "compose.move": {
    kind: "mutation",
    source: "compose",
    input: ["composeId*", "targetEnvironmentId*"],
    output: "object:composeId,environmentId",
  },
  "compose.search": {
    kind: "query",
    source: "composeLeftovers",
    input: ["q", "name", "appName", "description", "projectId", "environmentId", "limit=20", "offset=0"],
    output: "object:items,total",
  },
  "compose.saveEnvironment": {
    kind: "mutation",
    source: "composeLeftovers",
    input: ["composeId*", "env*", "createEnvFile"],
    output: "boolean",
    differs: {
      createEnvFile:
        "accepted only as false: the variables are interpolated into the converted file, no .env is written (true is a 400 naming it)",
    },
  },
  "compose.cancelDeployment": {
    kind: "mutation",
    source: "composeLeftovers",
    input: ["composeId*"],
    output: "object:success,message",
  },
  "compose.killBuild": {
    kind: "mutation",
    source: "composeLeftovers",
    input: ["composeId*"],
    output: "null",
  },
  "compose.cleanQueues": {
    kind: "mutation",
    source: "composeLeftovers",
    input: ["composeId*"],
    output: "object:success,message",
  },
  "compose.clearDeployments": {
    kind: "mutation",
    source: "composeLeftovers",
    input: ["composeId*"],
    output: "boolean",
  },
  "compose.disconnectGitProvider": {
    kind: "mutation",
    source: "composeLeftovers",
    input: ["composeId*"],
    output: "boolean",
  },
  "compose.getDefaultCommand": {
    kind: "query",
    source: "composeLeftovers",
    input: ["composeId*"],
    output: "string",
  },
  "compose.getTags": { kind: "query", source: "composeLeftovers", input: ["baseUrl"], output: "any" },
  "compose.processTemplate": {
    kind: "mutation",
    source: "composeLeftovers",
    input: ["base64*", "composeId*"],
    output: "object:compose,template",
  },
  "compose.previewTemplate": {
    kind: "mutation",
    source: "composeLeftovers",
    input: ["base64*", "appName*", "serverId"],
    output: "object:compose,template",
  },
  "compose.refreshToken": {
    kind: "mutation",
    source: "composeLeftovers",
    input: ["composeId*"],
    output: "boolean",
  },
  "compose.randomizeCompose": {
    kind: "mutation",
    source: "composeCollision",
    input: ["composeId*", "suffix"],
    output: "string",
  },
  "compose.isolatedDeployment": {
    kind: "mutation",
    source: "composeCollision",
    input: ["composeId*", "suffix"],
    output: "string",
  },
  "compose.loadMountsByService": {
    kind: "query",
    source: "composeCollision",
    input: ["composeId*", "serviceName*"],
    output: "array:Type,Name,Source,Destination",
    differs: { "(output)": "[] where Dokploy answers undefined when the service runs no container" },
  },
  "compose.fetchSourceType": {
    kind: "mutation",
    source: "composeCollision",
    input: ["composeId*"],
    output: "string",
  },
  "compose.import": {
    kind: "mutation",
    source: "composeCollision",
    input: ["base64*", "composeId*"],
    output: "object:success,message",
  },
  "compose.templates": {
    kind: "query",
    source: "composeTemplates",
    input: ["baseUrl"],
    output: "array:id,name,version,description,logo,links,tags",
  },
  "compose.deployTemplate": {
    kind: "mutation",
    source: "composeTemplates",
    input: ["environmentId*", "serverId", "id*", "baseUrl"],
    output: "object:composeId,name,appName,environmentId,sourceType,composeFile,env",
  },
  "gitProvider.getAll": {
    kind: "query",
    source: "gitProvider",
    output:
      "array:gitProviderId,name,providerType,createdAt,organizationId,userId,github,gitlab,bitbucket,gitea",
  },
  "gitProvider.allForPermissions": {
    kind: "query",
    source: "gitProvider",
    input: [],
    output: "array:gitProviderId,name,providerType",
  },
  "gitProvider.toggleShare": {
    kind: "mutation",
    source: "gitProviderShare",
    input: ["gitProviderId*", "sharedWithOrganization*"],
    output: "object:gitProviderId,name,providerType,organizationId,userId,sharedWithOrganization",
  },
  "gitProvider.remove": {
    kind: "mutation",
    source: "gitProvider",
    input: ["gitProviderId*"],
    output: "any",
  },
  "github.create": {
    kind: "mutation",
    platformOnly:
      "Dokploy creates GitHub providers through the app-manifest flow (/api/providers/github/setup); spec 4.12 lists github.create with the fields of an existing app",
  },
  "github.one": { kind: "query", source: "github", input: ["githubId*"], output: "object" },
  "github.githubProviders": { kind: "query", source: "github", output: "array:githubId,gitProvider" },
  "github.update": {
    kind: "mutation",
    source: "github",
    input: [
      "githubId*",
      "name*",
      "gitProviderId*",
      "githubAppName",
      "githubAppId",
      "githubClientId",
      "githubClientSecret",
      "githubInstallationId",
      "githubPrivateKey",
      "githubWebhookSecret",
    ],
    differs: { name: LENIENT_PATCH, gitProviderId: LENIENT_PATCH },
    output: "null",
  },
  "github.getGithubRepositories": { kind: "query", source: "github", input: ["githubId*"], output: "any" },
  "github.getGithubBranches": {
    kind: "query",
    source: "github",
    input: ["repo*", "owner*", "githubId"],
    output: "any",
  },
  "github.branches": {
    kind: "query",
    platformOnly: "spec 4.12 names github.getGithubBranches also github.branches; the same procedure",
  },
  "github.testConnection": { kind: "mutation", source: "github", input: ["githubId*"], output: "string" },
  "gitlab.create": {
    kind: "mutation",
    source: "gitlab",
    input: [
      "applicationId",
      "secret",
      "groupName",
      "gitProviderId",
      "redirectUri",
      "authId*",
      "name*",
      "gitlabUrl*",
      "gitlabInternalUrl",
      "enableAutoDeploy",
    ],
    differs: {
      gitlabUrl: "optional with us: Dokploy's column default https://gitlab.com applies",
      authId: AUTH_ID,
      gitProviderId: WE_SET,
      enableAutoDeploy: PUSH_DEPLOYS,
      ...OAUTH_TOKENS,
      webhookSecret: GITLAB_HOOK,
    },
    output: "any",
  },
  "gitlab.one": { kind: "query", source: "gitlab", input: ["gitlabId*"], output: "object" },
  "gitlab.gitlabProviders": {
    kind: "query",
    source: "gitlab",
    output: "array:gitlabId,gitProvider,gitlabUrl",
  },
  "gitlab.update": {
    kind: "mutation",
    source: "gitlab",
    input: [
      "applicationId",
      "secret",
      "groupName",
      "redirectUri",
      "name*",
      "gitlabId*",
      "gitlabUrl*",
      "gitProviderId*",
      "gitlabInternalUrl",
      "enableAutoDeploy",
    ],
    differs: {
      name: LENIENT_PATCH,
      gitlabUrl: LENIENT_PATCH,
      gitProviderId: LENIENT_PATCH,
      enableAutoDeploy: PUSH_DEPLOYS,
      ...OAUTH_TOKENS,
      webhookSecret: GITLAB_HOOK,
    },
    output: "null",
  },
  "gitlab.getGitlabRepositories": { kind: "query", source: "gitlab", input: ["gitlabId*"], output: "any" },
  "gitlab.getGitlabBranches": {
    kind: "query",
    source: "gitlab",
    input: ["id", "owner*", "repo*", "gitlabId"],
    output: "any",
  },
  "gitlab.startAuthorization": { kind: "mutation", platformOnly: START_AUTHORIZATION },
  "gitlab.testConnection": {
    kind: "mutation",
    source: "gitlab",
    input: ["gitlabId*", "groupName"],
    differs: { gitlabId: ABSENT_PROVIDER },
    output: "string",
  },
  "bitbucket.create": {
    kind: "mutation",
    source: "bitbucket",
    input: [
      "bitbucketId",
      "bitbucketUsername",
      "bitbucketEmail",
      "appPassword",
      "apiToken",
      "bitbucketWorkspaceName",
      "gitProviderId",
      "authId*",
      "name*",
    ],
    differs: { bitbucketId: WE_SET, gitProviderId: WE_SET, authId: AUTH_ID },
    output: "any",
  },
  "bitbucket.one": { kind: "query", source: "bitbucket", input: ["bitbucketId*"], output: "object" },
  "bitbucket.bitbucketProviders": {
    kind: "query",
    source: "bitbucket",
    output: "array:bitbucketId,gitProvider",
  },
  "bitbucket.update": {
    kind: "mutation",
    source: "bitbucket",
    input: [
      "bitbucketId*",
      "name*",
      "gitProviderId*",
      "bitbucketUsername",
      "bitbucketEmail",
      "appPassword",
      "apiToken",
      "bitbucketWorkspaceName",
      "organizationId",
    ],
    differs: { name: LENIENT_PATCH, gitProviderId: LENIENT_PATCH, organizationId: WE_SET },
    output: "any",
  },
  "bitbucket.getBitbucketRepositories": {
    kind: "query",
    source: "bitbucket",
    input: ["bitbucketId*"],
    output: "any",
  },
  "bitbucket.getBitbucketBranches": {
    kind: "query",
    source: "bitbucket",
    input: ["owner*", "repo*", "bitbucketId"],
    output: "any",
  },
  "bitbucket.testConnection": {
    kind: "mutation",
    source: "bitbucket",
    input: [
      "bitbucketId*",
      "bitbucketUsername",
      "bitbucketEmail",
      "workspaceName",
      "apiToken",
      "appPassword",
    ],
    differs: { bitbucketId: ABSENT_PROVIDER },
    output: "string",
  },
  "gitea.create": {
    kind: "mutation",
    source: "gitea",
    input: [
      "giteaId",
      "giteaUrl*",
      "redirectUri",
      "clientId",
      "clientSecret",
      "gitProviderId",
      "giteaUsername",
      "accessToken",
      "refreshToken",
      "expiresAt",
      "scopes",
      "lastAuthenticatedAt",
      "name*",
      "organizationName",
    ],
    differs: {
      giteaId: WE_SET,
      gitProviderId: WE_SET,
      organizationName: GITEA_ORGANIZATION,
      giteaInternalUrl: INTERNAL_URL,
    },
    output: "any",
  },
  "gitea.one": { kind: "query", source: "gitea", input: ["giteaId*"], output: "object" },
  "gitea.giteaProviders": { kind: "query", source: "gitea", output: "array:giteaId,gitProvider" },
  "gitea.update": {
    kind: "mutation",
    source: "gitea",
    input: [
      "giteaId*",
      "giteaUrl*",
      "name*",
      "gitProviderId*",
      "redirectUri",
      "clientId",
      "clientSecret",
      "giteaUsername",
      "accessToken",
      "refreshToken",
      "expiresAt",
      "scopes",
      "lastAuthenticatedAt",
      "organizationName",
    ],
    differs: {
      giteaUrl: LENIENT_PATCH,
      name: LENIENT_PATCH,
      gitProviderId: LENIENT_PATCH,
      organizationName: GITEA_ORGANIZATION,
      giteaInternalUrl: INTERNAL_URL,
    },
    output: "object:success",
  },
  "gitea.getGiteaRepositories": { kind: "query", source: "gitea", input: ["giteaId*"], output: "any" },
  "gitea.getGiteaBranches": {
    kind: "query",
    source: "gitea",
    input: ["id", "owner*", "repositoryName*", "giteaId"],
    output: "any",
  },
  "gitea.getGiteaUrl": { kind: "query", source: "gitea", input: ["giteaId*"], output: "string" },
  "gitea.startAuthorization": { kind: "mutation", platformOnly: START_AUTHORIZATION },
  "gitea.testConnection": {
    kind: "mutation",
    source: "gitea",
    input: ["giteaId", "organizationName"],
    output: "string",
  },
  ...databaseRows("postgres", ["databaseName*", "databaseUser*"]),
  ...databaseRows("mysql", ["databaseName*", "databaseUser*", "databaseRootPassword"]),
  ...databaseRows("mariadb", ["databaseName*", "databaseUser*", "databaseRootPassword"]),
  ...databaseRows("mongo", ["databaseUser*", "replicaSets=false"]),
  ...databaseRows("redis", []),
  ...libsqlRows(),
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
  ...notificationRows("resend", "Resend", ["apiKey*", "fromAddress*", "toAddresses*"]),
  ...notificationRows("ntfy", "Ntfy", ["serverUrl*", "topic*", "accessToken*", "priority*"], {
    accessToken: "spec 8: the Bearer token is optional (a public ntfy topic needs none)",
    priority: "spec 8: 1 to 5, default 3",
  }),
  ...notificationRows("pushover", "Pushover", ["userKey*", "apiToken*", "priority=0", "retry", "expire"]),
  ...notificationRows("lark", "Lark", ["webhookUrl*"]),
  ...notificationRows("teams", "Teams", [], {}, "Teams is not in the stored Dokploy schema"),
  ...notificationRows("custom", "Custom", ["endpoint*", "headers"]),
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
  "notification.all": {
    kind: "query",
    source: "notificationRouter",
    input: [],
    output: "array:notificationId,name",
  },
  "notification.one": {
    kind: "query",
    source: "notificationRouter",
    input: ["notificationId*"],
    output: "object:notificationId,name,notificationType",
  },
  "notification.remove": {
    kind: "mutation",
    source: "notificationRouter",
    input: ["notificationId*"],
    output: "any",
  },
  "notification.getEmailProviders": {
    kind: "query",
    source: "notificationRouter",
    input: [],
    output: "array:notificationId,name",
  },
  "notification.receiveNotification": {
    kind: "mutation",
    source: "notificationRouter",
    input: ['ServerType="Dokploy"', "Type*", "Value*", "Threshold*", "Message*", "Timestamp*", "Token*"],
    output: "any",
  },
  "notification.deliveries": {
    kind: "query",
    platformOnly: "each delivery's attempts and outcome (docs/decisions.md, issue 24)",
  },
  // Issue 39 items 5 and 6: the simpler server.* and settings.* procedures.
  "server.count": { kind: "query", source: "serverLists", input: [], output: "number" },
  "server.withSSHKey": {
    kind: "query",
    source: "serverLists",
    input: [],
    output: "array:serverId,name,sshKeyId",
  },
  "server.buildServers": {
    kind: "query",
    source: "serverLists",
    input: [],
    output: "array:serverId,name,sshKeyId",
  },
  "server.allForPermissions": {
    kind: "query",
    source: "serverLists",
    input: [],
    output: "array:serverId,name,ipAddress,serverType",
  },
  "server.getServerTime": {
    kind: "query",
    source: "serverLists",
    input: [],
    output: "object:time,timezone",
  },
  "server.getDefaultCommand": {
    kind: "query",
    source: "serverLists",
    input: ["serverId*"],
    output: "string",
  },
  "server.getServices": {
    kind: "query",
    source: "serverLists",
    input: ["serverId*"],
    output: "array:id,type,name,projectId,projectName,environmentId,environmentName,url",
  },
  "settings.getDokployVersion": { kind: "query", source: "settingsInfo", input: [], output: "string" },
  "settings.getIp": { kind: "query", source: "settingsInfo", input: [], output: "string" },
  "settings.updateServerIp": {
    kind: "mutation",
    source: "settingsInfo",
    input: ["serverIp*"],
    output: "object:serverIp",
  },
  "settings.health": { kind: "query", source: "settingsInfo", input: [], output: "object:status" },
  "settings.checkInfrastructureHealth": {
    kind: "query",
    source: "settingsInfo",
    input: [],
    output: "object:postgres,traefik",
  },
  "settings.isCloud": { kind: "query", source: "settingsInfo", input: [], output: "boolean!" },
  "settings.getDokployCloudIps": { kind: "query", source: "settingsInfo", input: [], output: "array:" },
  "settings.isUserSubscribed": { kind: "query", source: "settingsInfo", input: [], output: "boolean!" },
  "settings.getLogCleanupStatus": {
    kind: "query",
    source: "settingsInfo",
    input: [],
    output: "object:enabled,cronExpression",
  },
  "settings.haveTraefikDashboardPortEnabled": {
    kind: "query",
    source: "settingsInfo",
    input: ["serverId"],
    output: "boolean!",
  },
  "settings.getTraefikPorts": {
    kind: "query",
    source: "settingsInfo",
    input: ["serverId"],
    output: "array:targetPort,publishedPort,protocol",
  },
  "settings.readTraefikEnv": { kind: "query", source: "settingsInfo", input: ["serverId"], output: "string" },
  "settings.getOpenApiDocument": { kind: "query", source: "settingsInfo", input: [], output: "any" },
  "settings.cleanSSHPrivateKey": {
    kind: "mutation",
    source: "settingsInstance",
    input: [],
    output: "boolean",
  },
  "settings.cleanAllDeploymentQueue": {
    kind: "mutation",
    source: "settingsInstance",
    input: [],
    output: "boolean",
  },
  "settings.getDockerDiskUsage": {
    kind: "query",
    source: "settingsInstance",
    input: [],
    output: "array:type,totalCount,active,size,reclaimable,sizeBytes",
  },
  "settings.updateRemoteServersOnly": {
    kind: "mutation",
    source: "settingsInstance",
    input: ["remoteServersOnly*"],
    output: "boolean",
  },
  "settings.getReleaseTag": { kind: "query", source: "settingsInstance", input: [], output: "string" },
  "settings.updateTraefikPorts": {
    kind: "mutation",
    source: "settingsInstance",
    input: ["serverId", "additionalPorts*"],
    output: "boolean",
  },
  "settings.writeTraefikEnv": {
    kind: "mutation",
    source: "settingsInstance",
    input: ["env*", "serverId"],
    output: "boolean",
  },
  "settings.getUpdateData": {
    kind: "mutation",
    source: "settingsInstance",
    input: [],
    output: "object:updateAvailable,latestVersion",
  },
  "settings.updateLogCleanup": {
    kind: "mutation",
    source: "settingsEngine",
    input: ["cronExpression*"],
    output: "boolean",
  },
  "settings.cleanMonitoring": {
    kind: "mutation",
    source: "settingsEngine",
    input: [],
    output: "boolean",
    differs: {
      serverId: "we also clean the metrics a server's agent stored, as the other settings.clean* do",
    },
  },
  "settings.createPlatformNetwork": {
    kind: "mutation",
    platformOnly:
      "Dokploy's installer and server setup create dokploy-network; its dashboard has no way to create it on a machine that lacks it",
  },
  "settings.reloadServer": { kind: "mutation", source: "settingsEngine", input: [], output: "boolean" },
  "settings.updateServer": { kind: "mutation", source: "settingsEngine", input: [], output: "boolean" },
  "settings.updateBuildsConcurrency": {
    kind: "mutation",
    source: "settingsEngine",
    input: ["buildsConcurrency*"],
    output: "boolean",
  },
  "server.updateBuildsConcurrency": {
    kind: "mutation",
    source: "settingsEngine",
    input: ["serverId*", "buildsConcurrency*"],
    output: "object:serverId,buildsConcurrency",
  },
  "docker.getServerHealth": {
    kind: "query",
    unverified:
      "the stored Dokploy routers/docker.ts (2a14ae0c7fd0) has no getServerHealth; issue 39 names its input {serverId?, sinceHours?}, its answer shape was not found",
  },
  "settings.checkGPUStatus": {
    kind: "query",
    source: "settingsGpu",
    input: ["serverId"],
    output:
      "object:driverInstalled,driverVersion,gpuModel,runtimeInstalled,runtimeConfigured,cudaSupport,cudaVersion,memoryInfo,availableGPUs,swarmEnabled,gpuResources",
  },
  "settings.setupGPU": {
    kind: "mutation",
    source: "settingsGpu",
    input: ["serverId"],
    output: "object:success",
  },
  "settings.updateEnforceSSO": {
    kind: "mutation",
    source: "settingsGpu",
    input: ["enforceSSO*"],
    output: "boolean",
  },
  "settings.readDirectories": {
    kind: "query",
    source: "settingsFiles",
    input: ["serverId"],
    output: "array:id,name,type",
  },
  "settings.readTraefikFile": {
    kind: "query",
    source: "settingsFiles",
    input: ["path*", "serverId"],
    output: "string",
    differs: {
      path: "a file name in the dynamic directory (or dynamic/<name>), not an absolute path on the server",
    },
  },
  "settings.updateTraefikFile": {
    kind: "mutation",
    source: "settingsFiles",
    input: ["path*", "traefikConfig*", "serverId"],
    output: "boolean",
    differs: {
      path: "a file name in the dynamic directory (or dynamic/<name>), not an absolute path on the server",
    },
  },
  "settings.readMiddlewareTraefikConfig": {
    kind: "query",
    source: "settingsFiles",
    input: [],
    output: "string",
  },
  "settings.updateMiddlewareTraefikConfig": {
    kind: "mutation",
    source: "settingsFiles",
    input: ["traefikConfig*"],
    output: "boolean",
  },
  "settings.readWebServerTraefikConfig": {
    kind: "query",
    source: "settingsFiles",
    input: [],
    output: "string",
  },
  "settings.updateWebServerTraefikConfig": {
    kind: "mutation",
    source: "settingsFiles",
    input: ["traefikConfig*"],
    output: "boolean",
  },
  "dockerVolume.getVolumes": {
    kind: "query",
    source: "dockerVolume",
    input: ["serverId"],
    output: "array:Name,Driver,Scope,Mountpoint,Labels",
  },
  "dockerVolume.getVolumesSize": {
    kind: "query",
    source: "dockerVolume",
    input: ["serverId"],
    output: "array:name,size",
  },
  "dockerVolume.getVolumeConfig": {
    kind: "query",
    source: "dockerVolume",
    input: ["volumeName*", "serverId"],
    output: "any",
  },
  "dockerVolume.removeVolume": {
    kind: "mutation",
    source: "dockerVolume",
    input: ["volumeName*", "serverId"],
    output: "null",
  },
  "dockerVolume.listVolumeFiles": {
    kind: "query",
    source: "dockerVolume",
    input: ["volumeName*", "path*", "serverId"],
    output: "array:name,isDirectory",
  },
  "dockerVolume.readVolumeFile": {
    kind: "query",
    source: "dockerVolume",
    input: ["volumeName*", "path*", "serverId"],
    output: "object:content,truncated",
  },
  "dockerVolume.writeVolumeFile": {
    kind: "mutation",
    source: "dockerVolume",
    input: ["volumeName*", "path*", "content*", "serverId"],
    output: "null",
  },
  "dockerVolume.deleteVolumeFile": {
    kind: "mutation",
    source: "dockerVolume",
    input: ["volumeName*", "path*", "serverId"],
    output: "null",
  },
  "dockerImage.getImages": {
    kind: "query",
    source: "dockerImage",
    input: ["serverId"],
    output: "array:Repository,Tag,ID,CreatedAt,CreatedSince,Size",
  },
  "dockerImage.getImageConfig": {
    kind: "query",
    source: "dockerImage",
    input: ["imageRef*", "serverId"],
    output: "any",
  },
  "dockerImage.removeImage": {
    kind: "mutation",
    source: "dockerImage",
    input: ["repository*", "tag*", "id*", "force", "serverId"],
    output: "null",
  },
  "dockerDiskUsage.getDiskUsage": {
    kind: "query",
    source: "dockerDiskUsage",
    input: ["serverId"],
    output: "array:type,totalCount,active,size,reclaimable,sizeBytes",
  },
  "dockerDiskUsage.getBuildCache": {
    kind: "query",
    source: "dockerDiskUsage",
    input: ["serverId"],
    output: "array:id,type,description,size,sizeBytes,createdSince,lastUsedSince,usageCount,shared,inUse",
  },
  "dockerDiskUsage.pruneBuildCache": {
    kind: "mutation",
    source: "dockerDiskUsage",
    input: ["serverId"],
    output: "null",
  },
  "swarm.getNodes": {
    kind: "query",
    source: "swarm",
    input: ["serverId"],
    output: "array:Availability,EngineVersion,Hostname,ID,ManagerStatus,Self,Status,TLSStatus",
  },
  "swarm.getNodeInfo": {
    kind: "query",
    source: "swarm",
    input: ["nodeId*", "serverId"],
    output: "object:ID",
  },
  "swarm.getNodeApps": {
    kind: "query",
    source: "swarm",
    input: ["serverId"],
    output: "array:ID,Image,Mode,Name,Ports,Replicas",
  },
  "swarm.getContainerStats": {
    kind: "query",
    source: "swarm",
    input: ["serverId"],
    output: "array:BlockIO,CPUPerc,Container,ID,MemPerc,MemUsage,Name,NetIO",
  },
  "network.all": {
    kind: "query",
    source: "network",
    input: ["serverId"],
    output: "array:networkId,name,driver,organizationId,serverId,createdAt",
  },
  "network.one": {
    kind: "query",
    source: "network",
    input: ["networkId*"],
    output:
      "object:networkId,name,driver,scope,internal,attachable,ingress,configOnly,enableIPv4,enableIPv6,createdAt,organizationId,serverId",
  },
  "network.create": {
    kind: "mutation",
    source: "network",
    input: [
      "name*",
      "driver",
      "scope",
      "internal",
      "attachable",
      "ingress",
      "configOnly",
      "enableIPv4",
      "enableIPv6",
      "ipam",
      "serverId",
    ],
    output: "object:networkId,name,driver,organizationId,serverId",
    differs: {
      scope: NETWORK_SET,
      attachable: NETWORK_SET,
      ingress: NETWORK_SET,
      configOnly: NETWORK_SET,
      enableIPv4: NETWORK_SET,
      enableIPv6: NETWORK_SET,
      ipam: NETWORK_SET,
      mtu: "Dokploy CLI 0.30.7's --mtu (newer Dokploy than the schema read): the driver option com.docker.network.driver.mtu, text or number, 68-65535; answered as mtu",
    },
  },
  "network.inspect": { kind: "query", source: "network", input: ["networkId*"], output: "any" },
  "network.remove": {
    kind: "mutation",
    source: "network",
    input: ["networkId*"],
    output: "object:networkId,name",
  },
  "network.networksToSync": {
    kind: "query",
    source: "network",
    input: ["serverId"],
    output: "object:importable,missing",
  },
  "network.import": {
    kind: "mutation",
    source: "network",
    input: ["serverId", "names*"],
    output: "object:imported,errors",
  },
  "network.recreate": {
    kind: "mutation",
    source: "network",
    input: ["networkId*"],
    output: "object:networkId,name,driver,organizationId,serverId",
  },
  "network.resync": {
    kind: "mutation",
    platformOnly:
      "Dokploy's network router has no resync: networksToSync lists, import records; resync applies both for the organization's labelled networks (docs/decisions.md)",
    input: ["serverId"],
    output: "object:imported,removed,kept",
    differs: { networkId: CLI_REFUSED.networkId },
  },

  "patch.create": {
    kind: "mutation",
    source: "patch",
    input: ["filePath*", "content*", "type", "enabled", "applicationId", "composeId"],
    output: "object:patchId,type,filePath,enabled,content,createdAt,updatedAt,applicationId,composeId",
  },
  "patch.one": {
    kind: "query",
    source: "patch",
    input: ["patchId*"],
    output: "object:patchId,type,filePath,enabled,content,createdAt,updatedAt,applicationId,composeId",
  },
  "patch.byEntityId": {
    kind: "query",
    source: "patch",
    input: ["id*", "type*"],
    output: "array:patchId,type,filePath,enabled,content",
  },
  "patch.update": {
    kind: "mutation",
    source: "patch",
    input: ["patchId*", "type", "filePath", "enabled", "content", "createdAt", "updatedAt"],
    output: "object:patchId,type,filePath,enabled,content,createdAt,updatedAt,applicationId,composeId",
    differs: { createdAt: WE_SET, updatedAt: WE_SET },
  },
  "patch.delete": {
    kind: "mutation",
    source: "patch",
    input: ["patchId*"],
    output: "object:patchId,type,filePath,enabled,content,createdAt,updatedAt,applicationId,composeId",
  },
  "patch.toggleEnabled": {
    kind: "mutation",
    source: "patch",
    input: ["patchId*", "enabled*"],
    output: "object:patchId,type,filePath,enabled,content,createdAt,updatedAt,applicationId,composeId",
  },
  "patch.saveFileAsPatch": {
    kind: "mutation",
    source: "patch",
    input: ["id*", "type*", "filePath*", "content*", 'patchType="update"'],
    output: "object:patchId,type,filePath,enabled,content,createdAt,updatedAt,applicationId,composeId",
  },
  "patch.ensureRepo": {
    kind: "mutation",
    source: "patch",
    input: ["id*", "type*"],
    output: "string",
    differs: {
      "(output)":
        "the handle `<type>/<appName>` readRepoDirectories takes, not a path on a server: no clone is kept",
    },
  },
  "patch.readRepoDirectories": {
    kind: "query",
    source: "patch",
    input: ["id*", "type*", "repoPath*"],
    output: "array:name,path,type",
    differs: {
      repoPath: "must be the handle ensureRepo answered (a 400 naming it otherwise), never a server path",
    },
  },
  "patch.readRepoFile": {
    kind: "query",
    source: "patch",
    input: ["id*", "type*", "filePath*"],
    output: "string",
  },
  "patch.cleanPatchRepos": { kind: "mutation", source: "patch", input: ["serverId"], output: "boolean!" },
  "patch.markFileForDeletion": {
    kind: "mutation",
    source: "patch",
    input: ["id*", "type*", "filePath*"],
    output: "object:patchId,type,filePath,enabled,content,createdAt,updatedAt,applicationId,composeId",
  },

  "tag.create": {
    kind: "mutation",
    source: "tag",
    input: ["name*", "color"],
    output: "object:tagId,name,color,createdAt,organizationId",
  },
  "tag.all": { kind: "query", source: "tag", input: [], output: "array:tagId,name,color" },
  "tag.one": { kind: "query", source: "tag", input: ["tagId*"], output: "object:tagId,name,color" },
  "tag.update": {
    kind: "mutation",
    source: "tag",
    input: ["tagId*", "name", "color", "createdAt", "organizationId"],
    output: "object:tagId,name,color",
    differs: { createdAt: WE_SET, organizationId: WE_SET },
  },
  "tag.remove": { kind: "mutation", source: "tag", input: ["tagId*"], output: "object:success" },
  "tag.assignToProject": {
    kind: "mutation",
    source: "tag",
    input: ["projectId*", "tagId*"],
    output: "object:id,projectId,tagId",
  },
  "tag.removeFromProject": {
    kind: "mutation",
    source: "tag",
    input: ["projectId*", "tagId*"],
    output: "object:success",
  },
  "tag.bulkAssign": {
    kind: "mutation",
    source: "tag",
    input: ["projectId*", "tagIds*"],
    output: "object:success",
  },
  "vaultProvider.create": {
    kind: "mutation",
    source: "vaultProvider",
    input: ["name*", "config*", "assignments*"],
    output: "object:vaultProviderId,name,providerType,config,assignments,organizationId,createdAt",
  },
  "vaultProvider.update": {
    kind: "mutation",
    source: "vaultProvider",
    input: ["vaultProviderId*", "name*", "config*", "assignments*"],
    output: "object:vaultProviderId,name,providerType,config,assignments,organizationId,createdAt",
  },
  "vaultProvider.remove": {
    kind: "mutation",
    source: "vaultProvider",
    input: ["vaultProviderId*"],
    output: "object:success",
  },
  "vaultProvider.all": {
    kind: "query",
    source: "vaultProvider",
    input: [],
    output: "array:vaultProviderId,name,providerType,config,assignments",
  },
  "vaultProvider.one": {
    kind: "query",
    source: "vaultProvider",
    input: ["vaultProviderId*"],
    output: "object:vaultProviderId,name,providerType,config,assignments",
  },
  "vaultProvider.testConnection": {
    kind: "mutation",
    source: "vaultProvider",
    input: ["vaultProviderId", "config"],
    output: "object:success",
  },
  "vaultProvider.listSecretNames": {
    kind: "query",
    source: "vaultProvider",
    input: ["vaultProviderId*", "projectId*", "environmentId"],
    output: "array:",
  },
  "dnsProvider.create": {
    kind: "mutation",
    source: "dnsProvider",
    input: ["name*", "config*"],
    output: "object:dnsProviderId,name,providerType,config,organizationId,createdAt",
  },
  "dnsProvider.update": {
    kind: "mutation",
    source: "dnsProvider",
    input: ["dnsProviderId*", "name*", "config*"],
    output: "object:dnsProviderId,name,providerType,config,organizationId,createdAt",
  },
  "dnsProvider.remove": {
    kind: "mutation",
    source: "dnsProvider",
    input: ["dnsProviderId*"],
    output: "object:success",
  },
  "dnsProvider.all": {
    kind: "query",
    source: "dnsProvider",
    input: [],
    output: "array:dnsProviderId,name,providerType,config,organizationId,createdAt",
  },
  "dnsProvider.one": {
    kind: "query",
    source: "dnsProvider",
    input: ["dnsProviderId*"],
    output: "object:dnsProviderId,name,providerType,config,organizationId,createdAt",
  },
  "dnsProvider.testConnection": {
    kind: "mutation",
    source: "dnsProvider",
    input: ["dnsProviderId", "config"],
    output: "object:success",
  },
  "dnsProvider.listZones": {
    kind: "query",
    source: "dnsProvider",
    input: ["dnsProviderId*"],
    output: "array:id,name",
  },
  "dnsProvider.listRecords": {
    kind: "query",
    source: "dnsProvider",
    input: ["dnsProviderId*", "zoneId*"],
    output: "array:id,type,name,content,ttl",
  },
  "dnsProvider.createRecord": {
    kind: "mutation",
    source: "dnsProvider",
    input: ["dnsProviderId*", "zoneId*", "type*", "name*", "content*", "ttl", "proxied"],
    output: "object:id",
  },
  "dnsProvider.updateRecord": {
    kind: "mutation",
    source: "dnsProvider",
    input: ["dnsProviderId*", "zoneId*", "recordId*", "type*", "name*", "content*", "ttl", "proxied"],
    output: "object:id",
  },
  "dnsProvider.deleteRecord": {
    kind: "mutation",
    source: "dnsProvider",
    input: ["dnsProviderId*", "zoneId*", "recordId*"],
    output: "object:success",
  },
  "forwardAuth.getAuthDomain": {
    kind: "query",
    source: "forwardAuth",
    input: ["serverId*"],
    output: "object:host,https,certificateType,customCertResolver,callbackUrl",
    differs: { serverId: FA_SERVER },
  },
  "forwardAuth.setAuthDomain": {
    kind: "mutation",
    source: "forwardAuth",
    input: ["serverId*", "authDomain*", "https=true", 'certificateType="letsencrypt"', "customCertResolver"],
    output: "object:callbackUrl",
    differs: { serverId: FA_SERVER },
  },
  "forwardAuth.removeAuthDomain": {
    kind: "mutation",
    source: "forwardAuth",
    input: ["serverId*"],
    output: "object:ok",
    differs: { serverId: FA_SERVER },
  },
  "forwardAuth.listProviders": {
    kind: "query",
    source: "forwardAuth",
    input: [],
    output: "array:providerId,issuer,domain",
  },
  "forwardAuth.createProvider": { kind: "mutation", platformOnly: FA_PROVIDERS },
  "forwardAuth.removeProvider": { kind: "mutation", platformOnly: FA_PROVIDERS },
  "forwardAuth.serverStatus": {
    kind: "query",
    source: "forwardAuth",
    input: [],
    output: "array:serverId,name,status,authDomain,https,certificateType,customCertResolver,callbackUrl",
  },
  "forwardAuth.deployOnServer": {
    kind: "mutation",
    source: "forwardAuth",
    input: ["serverId*", "providerId*"],
    output: "object:ok",
    differs: { serverId: FA_SERVER },
  },
  "forwardAuth.removeOnServer": {
    kind: "mutation",
    source: "forwardAuth",
    input: ["serverId*"],
    output: "object:ok",
    differs: { serverId: FA_SERVER },
  },
  "forwardAuth.status": {
    kind: "query",
    source: "forwardAuth",
    input: ["domainId*"],
    output: "object:enabled",
  },
  "forwardAuth.enable": {
    kind: "mutation",
    source: "forwardAuth",
    input: ["domainId*"],
    output: "object:ok",
  },
  "forwardAuth.disable": {
    kind: "mutation",
    source: "forwardAuth",
    input: ["domainId*"],
    output: "object:ok",
  },
};

/**
 * The rows of one database router (spec 4.14), read from Dokploy's router and schema of the
 * kind (sources). `fields` are the kind's own create fields; Dokploy's update is its insert
 * schema made partial (less serverId): every column, these fields included, all optional.
 */
/**
 * libsql's router (sources.libsql): the database kinds' procedures less changePassword, search
 * and saveExternalPort, plus saveExternalPorts; its create and update take sqld's fields.
 */
function libsqlRows(): Record<string, Row> {
  const rows = databaseRows("libsql", [
    "databaseUser*",
    "sqldNode*",
    "sqldPrimaryUrl*",
    "enableNamespaces=false",
  ]);
  for (const omitted of ["changePassword", "search", "saveExternalPort"]) delete rows[`libsql.${omitted}`];
  const create = rows["libsql.create"]!;
  create.differs = {
    ...create.differs,
    sqldPrimaryUrl:
      "optional with us: required (and only taken) with sqldNode replica, as Dokploy's refinement says",
    "(output)": "we answer the created service (as the other kinds' create) where Dokploy answers true",
  };
  const update = rows["libsql.update"]!;
  update.input = [
    ...(update.input ?? []).filter(
      (field) => !["args", "ulimitsSwarm", "networkIds", "pausedAt", "detachDokployNetwork"].includes(field),
    ),
    "externalGRPCPort",
    "externalAdminPort",
  ];
  update.differs = {
    ...update.differs,
    externalGRPCPort: "set by saveExternalPorts, which checks the port and redeploys",
    externalAdminPort: "set by saveExternalPorts, which checks the port and redeploys",
    args: "ours, as for the other database kinds (Dokploy's libsql row has no args column)",
    ulimitsSwarm: "ours, as for the other database kinds",
    networkIds: "ours, as for the other database kinds (networks/ checkNetworkIds)",
  };
  rows["libsql.saveExternalPorts"] = {
    kind: "mutation",
    source: "libsql",
    input: ["libsqlId*", "externalPort", "externalGRPCPort", "externalAdminPort"],
    output: "object:libsqlId,name,appName",
    differs: { "(output)": "we answer {success:true, deploymentId} of the queued deployment" },
  };
  return rows;
}

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
    [`${kind}.readLogs`]: {
      kind: "query",
      source: "runtimeLogs",
      input: [`${id}*`, ...RUNTIME_LOG_FIELDS],
      output: "string",
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
        environmentId: `${kind}.move moves a service to another environment`,
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
    [`${kind}.changePassword`]: {
      kind: "mutation",
      source: "databaseLeftovers",
      input: [`${id}*`, "password*", ...(fields.includes("databaseRootPassword") ? ['type="user"'] : [])],
      output: "boolean",
    },
    [`${kind}.changeStatus`]: {
      kind: "mutation",
      source: "databaseLeftovers",
      input: [`${id}*`, "applicationStatus*"],
      output: ROW,
    },
    [`${kind}.move`]: {
      kind: "mutation",
      source: "databaseLeftovers",
      input: [`${id}*`, "targetEnvironmentId*"],
      output: `object:${id},environmentId`,
    },
    [`${kind}.search`]: {
      kind: "query",
      source: "databaseLeftovers",
      input: ["q", "name", "appName", "description", "projectId", "environmentId", "limit=20", "offset=0"],
      output: "object:items,total",
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
      ["create", "update", "test", "testConnection"].map((verb) => [
        verb === "testConnection" ? `notification.test${suffix}Connection` : `notification.${verb}${suffix}`,
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
    "platformBackup",
    "dockerCleanup",
    "serverThreshold",
  ];
  const toggleDiffers = Object.fromEntries(toggles.map((t) => [t, TOGGLE_DEFAULT]));
  // Dokploy's names of platformRestart and platformBackup, sent by its CLI (cliOptions).
  const dokployToggles = {
    dokployRestart:
      "Dokploy's name of platformRestart (either sets it; both disagreeing is a 400); optional with us",
    dokployBackup:
      "Dokploy's name of platformBackup (either sets it; both disagreeing is a 400); optional with us",
  };
  const common = { projectIds: LIMITS, serviceIds: LIMITS };
  const optional = fields.map((f) => f.replace(/\*$/, ""));
  const testRow: Row = {
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
  };
  return {
    [`notification.create${suffix}`]: {
      kind: "mutation",
      source: "notification",
      input: ["name*", ...toggles.map((t) => `${t}*`), "dokployRestart*", "dokployBackup*", ...fields],
      output: "any",
      differs: { ...toggleDiffers, ...dokployToggles, ...common, ...differs },
    },
    [`notification.update${suffix}`]: {
      kind: "mutation",
      source: "notification",
      input: [
        "notificationId*",
        `${kind}Id*`,
        "organizationId",
        "name",
        ...toggles,
        "dokployRestart",
        "dokployBackup",
        ...optional,
      ],
      output: "any",
      differs: {
        [`${kind}Id`]: "optional with us: a channel's kind record id equals its notificationId",
        platformBackup: "ours: Dokploy names it dokployBackup",
        ...common,
      },
    },
    [`notification.test${suffix}Connection`]: {
      ...testRow,
      source: "notificationRouter",
    },
    // Ours before Dokploy's name was served: the same procedure, kept for the clients using it.
    [`notification.test${suffix}`]: testRow,
  };
}
