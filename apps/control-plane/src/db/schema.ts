/**
 * Table types as kysely sees them (camelCase; the CamelCasePlugin maps to snake_case columns).
 * Timestamps come back as ISO strings (see database.ts type parsers).
 */
import type { ColumnType, Generated, Insertable, Selectable, Updateable } from "kysely";

type Timestamp = ColumnType<string, string | undefined, string>;
type Json<T> = ColumnType<T, string, string>;

export type Role = "owner" | "admin" | "member";

export interface OrganizationTable {
  organizationId: string;
  name: string;
  ownerId: string;
  createdAt: Timestamp;
}

export interface UserTable {
  userId: string;
  email: string;
  name: string;
  /** Dokploy's first and last names, "" when not given (migration 20261204-20-user-names). */
  firstName: Generated<string>;
  lastName: Generated<string>;
  image: string | null;
  passwordHash: string;
  /** A requested new email, applied once confirmed (issue 22 finding 5). */
  pendingEmail: Generated<string | null>;
  /** SHA-256 (hex) of the token that confirms pendingEmail, sent through an Email or Resend channel. */
  pendingEmailTokenHash: Generated<string | null>;
  pendingEmailExpiresAt: Generated<string | null>;
  createdAt: Timestamp;
}

export interface MemberTable {
  memberId: string;
  organizationId: string;
  userId: string;
  role: Role;
  canCreateProjects: Generated<boolean>;
  canDeleteProjects: Generated<boolean>;
  canAccessAuditLog: Generated<boolean>;
  /** Dokploy's permission lists; NULL = not restricted (every one of the organization). */
  accessedProjects: string[] | null;
  accessedEnvironments: string[] | null;
  accessedServices: string[] | null;
  /** The remote servers and git providers (gitProviderId) a member may use (migration 20261204-20-member-server-grants). */
  accessedServers: Generated<string[] | null>;
  accessedGitProviders: Generated<string[] | null>;
  canCreateServices: Generated<boolean>;
  canDeleteServices: Generated<boolean>;
  canCreateEnvironments: Generated<boolean>;
  canDeleteEnvironments: Generated<boolean>;
  canAccessToDocker: Generated<boolean>;
  canAccessToTraefikFiles: Generated<boolean>;
  canAccessToApi: Generated<boolean>;
  canAccessToSshKeys: Generated<boolean>;
  canAccessToGitProviders: Generated<boolean>;
  /** organization.setDefault: the organization login picks when it names none. */
  isDefault: Generated<boolean>;
  /** project.completeOnboarding: when the member dismissed the getting started steps. */
  onboardingCompletedAt: string | null;
  createdAt: Timestamp;
}

export interface SessionTable {
  sessionId: string;
  userId: string;
  activeOrganizationId: string;
  expiresAt: string;
  revokedAt: string | null;
  createdAt: Timestamp;
}

export interface ApiKeyTable {
  apiKeyId: string;
  userId: string;
  organizationId: string;
  name: string;
  prefix: string | null;
  start: string;
  keyHash: string;
  metadata: Json<Record<string, unknown>>;
  expiresAt: string | null;
  rateLimitEnabled: boolean;
  rateLimitTimeWindowMs: number | null;
  rateLimitMax: number | null;
  bucketTokens: number | null;
  bucketUpdatedAt: string | null;
  remaining: number | null;
  refillAmount: number | null;
  refillIntervalMs: number | null;
  lastRefillAt: string | null;
  lastUsedAt: string | null;
  createdAt: Timestamp;
}

export type InvitationStatus = "pending" | "accepted" | "canceled";

export interface InvitationTable {
  invitationId: string;
  organizationId: string;
  email: string;
  role: Role;
  status: InvitationStatus;
  inviterId: string;
  expiresAt: string;
  createdAt: Timestamp;
  /** SHA-256 (hex) of the secret token that accepts the invitation; null for older invitations. */
  tokenHash: string | null;
}

export interface LoginThrottleTable {
  key: string;
  attempts: number;
  windowStartedAt: string;
}

/** A user's TOTP enrolment (auth/two-factor.ts). */
export interface UserTwoFactorTable {
  userId: string;
  /** The base32 TOTP secret, sealed with the SecretBox (table user_two_factor, row userId). */
  secretSealed: string;
  /** Null while the enrolment waits for its first code: sign-in does not ask for one yet. */
  enabledAt: string | null;
  /** The last TOTP time step accepted: a code of that step or before is refused (no replay). */
  lastUsedStep: number | null;
  createdAt: Timestamp;
}

export interface TwoFactorRecoveryCodeTable {
  codeId: string;
  userId: string;
  /** SHA-256 (hex) of the normalized code. */
  codeHash: string;
  usedAt: string | null;
}

/** The half-signed-in state between auth.login's password and its second factor. */
export interface TwoFactorChallengeTable {
  challengeId: string;
  /** SHA-256 (hex) of the challenge token auth.login answered. */
  tokenHash: string;
  userId: string;
  organizationId: string;
  attempts: Generated<number>;
  expiresAt: string;
  usedAt: string | null;
}

/** A session's shared token bucket (auth/session-rate-limit.ts). */
export interface SessionRateBucketTable {
  sessionId: string;
  tokens: number;
  /** Tokens the last take handed to the copy that asked (spent from its own memory). */
  granted: number;
  updatedAt: Generated<string>;
}

export interface SetupTokenTable {
  /** SHA-256 (hex) of a set-up token a control plane printed at start (auth/setup-token.ts). */
  tokenHash: string;
  createdAt: string;
}

export interface ProjectTable {
  projectId: string;
  organizationId: string;
  name: string;
  description: string | null;
  env: Generated<string>;
  createdAt: Timestamp;
}

export interface EnvironmentTable {
  environmentId: string;
  projectId: string;
  name: string;
  description: string | null;
  env: Generated<string>;
  isDefault: Generated<boolean>;
  createdAt: Timestamp;
}

export interface SshKeyTable {
  sshKeyId: string;
  organizationId: string;
  name: string;
  description: string | null;
  publicKey: string;
  privateKeySealed: string;
  lastUsedAt: string | null;
  createdAt: Timestamp;
}

export type ServerType = "deploy" | "build";
export type ServerStatus = "inactive" | "active";

export interface ServerTable {
  serverId: string;
  organizationId: string;
  name: string;
  description: string | null;
  ipAddress: string;
  port: Generated<number>;
  username: string;
  sshKeyId: string | null;
  serverType: Generated<ServerType>;
  serverStatus: Generated<ServerStatus>;
  agentPublicKey: string | null;
  agentVersion: string | null;
  enrolledAt: string | null;
  lastHeartbeatAt: string | null;
  setupLog: Generated<string>;
  createdAt: Timestamp;
  /** `SHA256:…` fingerprint of the SSH host key seen at the first server.setup (trust on first use). */
  hostKeySha256: string | null;
  /** Whether the proxy of this server serves its dashboard on :8080 (settings.toggleDashboard). */
  proxyDashboardEnabled: Generated<boolean>;
  /** Whether the daily Docker cleanup runs on this server (settings.updateDockerCleanup). */
  enableDockerCleanup: Generated<boolean>;
  /** Deployments built on this server at once (server.updateBuildsConcurrency); null: no own limit. */
  buildsConcurrency: Generated<number | null>;
}

export interface AgentEnrollmentTable {
  tokenHash: string;
  serverId: string;
  expiresAt: string;
  usedAt: string | null;
  createdAt: Timestamp;
}

/** Which control plane follows a running deployment, until when (deployments/leases.ts). */
export interface DeploymentLeaseTable {
  deploymentId: string;
  owner: string;
  until: string;
}

export interface CronTickTable {
  job: string;
  tick: string;
  owner: string;
  createdAt: Generated<Timestamp>;
}

export interface InstanceLeaseTable {
  name: string;
  owner: string;
  until: string;
}

export interface Database {
  organizations: OrganizationTable;
  users: UserTable;
  members: MemberTable;
  sessions: SessionTable;
  apiKeys: ApiKeyTable;
  invitations: InvitationTable;
  loginThrottle: LoginThrottleTable;
  userTwoFactor: UserTwoFactorTable;
  twoFactorRecoveryCodes: TwoFactorRecoveryCodeTable;
  twoFactorChallenges: TwoFactorChallengeTable;
  sessionRateBuckets: SessionRateBucketTable;
  setupTokens: SetupTokenTable;
  projects: ProjectTable;
  environments: EnvironmentTable;
  sshKeys: SshKeyTable;
  servers: ServerTable;
  agentEnrollments: AgentEnrollmentTable;
  applications: ApplicationTable;
  deployments: DeploymentTable;
  backupRuns: BackupRunTable;
  databaseServices: DatabaseServiceTable;
  compose: ComposeTable;
  deploymentLeases: DeploymentLeaseTable;
  cronTicks: CronTickTable;
  instanceLeases: InstanceLeaseTable;
  events: EventTable;
  notifications: NotificationTable;
  notificationDeliveries: NotificationDeliveryTable;
  controlPlaneRuns: ControlPlaneRunTable;
  registries: RegistryTable;
  gitProviders: GitProviderTable;
  oauthStates: OAuthStateTable;
  domains: DomainTable;
  security: SecurityTable;
  redirects: RedirectTable;
  patches: PatchTable;
  certificates: CertificateTable;
  webServerSettings: WebServerSettingsTable;
  ports: PortTable;
  mounts: MountTable;
  monitoringConfigs: MonitoringConfigTable;
  destinations: DestinationTable;
  backups: BackupTable;
  rollbacks: RollbackTable;
  schedules: ScheduleTable;
  previewDeployments: PreviewDeploymentTable;
  volumeBackups: VolumeBackupTable;
  networks: NetworkTable;
  tags: TagTable;
  projectTags: ProjectTagTable;
  vaultProviders: VaultProviderTable;
  templateBookmarks: TemplateBookmarkTable;
  dnsProviders: DnsProviderTable;
  forwardAuthProviders: ForwardAuthProviderTable;
  forwardAuthSettings: ForwardAuthSettingsTable;
  forwardAuthDomains: ForwardAuthDomainTable;
}

export type User = Selectable<UserTable>;
export type Certificate = Selectable<CertificateTable>;
export type Member = Selectable<MemberTable>;
export type ApiKey = Selectable<ApiKeyTable>;
export type NewApiKey = Insertable<ApiKeyTable>;
export type Invitation = Selectable<InvitationTable>;
export type Project = Selectable<ProjectTable>;
export type ProjectUpdate = Updateable<ProjectTable>;
export type Environment = Selectable<EnvironmentTable>;
export type SshKey = Selectable<SshKeyTable>;
export type Server = Selectable<ServerTable>;

export type ApplicationStatus = "idle" | "running" | "done" | "error";
export type SourceType = "github" | "gitlab" | "bitbucket" | "gitea" | "docker" | "git" | "drop";
export type BuildType =
  | "dockerfile"
  | "nixpacks"
  | "heroku_buildpacks"
  | "paketo_buildpacks"
  | "railpack"
  | "static";
export type TriggerType = "push" | "tag";

/** Docker Swarm's HealthConfig (durations in nanoseconds), as Dokploy stores it. */
export interface HealthCheckSwarm {
  Test?: string[];
  Interval?: number;
  Timeout?: number;
  StartPeriod?: number;
  Retries?: number;
}

/** Docker Swarm's RestartPolicy (durations in nanoseconds), as Dokploy stores it. */
export interface RestartPolicySwarm {
  Condition?: "none" | "on-failure" | "any";
  Delay?: number;
  MaxAttempts?: number;
  Window?: number;
}

type NullableJson<T> = ColumnType<T | null, string | null | undefined, string | null>;

/**
 * Dokploy's *Swarm fields and replicas, as applications and database services keep them: Docker
 * Swarm settings as Docker names them (JSON), applied by the next deploy.
 */
export interface SwarmColumns {
  replicas: Generated<number>;
  healthCheckSwarm: NullableJson<HealthCheckSwarm>;
  restartPolicySwarm: NullableJson<RestartPolicySwarm>;
  placementSwarm: NullableJson<Record<string, unknown>>;
  updateConfigSwarm: NullableJson<Record<string, unknown>>;
  rollbackConfigSwarm: NullableJson<Record<string, unknown>>;
  modeSwarm: NullableJson<Record<string, unknown>>;
  labelsSwarm: NullableJson<Record<string, string>>;
  networkSwarm: NullableJson<Record<string, unknown>[]>;
  stopGracePeriodSwarm: number | null;
  endpointSpecSwarm: NullableJson<Record<string, unknown>>;
  ulimitsSwarm: NullableJson<Record<string, unknown>[]>;
}

export interface ApplicationTable extends SwarmColumns {
  applicationId: string;
  name: string;
  appName: string;
  description: string | null;
  environmentId: string;
  serverId: string | null;
  applicationStatus: Generated<ApplicationStatus>;
  /** Why reconciliation set the status to error (service missing, scaled to 0, failing); else null. */
  applicationStatusMessage: Generated<string | null>;
  sourceType: Generated<SourceType>;
  buildType: Generated<BuildType>;
  githubId: string | null;
  repository: string | null;
  owner: string | null;
  branch: string | null;
  buildPath: Generated<string>;
  triggerType: Generated<TriggerType>;
  watchPaths: NullableJson<string[]>;
  enableSubmodules: Generated<boolean>;
  gitlabId: string | null;
  gitlabProjectId: number | null;
  gitlabRepository: string | null;
  gitlabOwner: string | null;
  gitlabBranch: string | null;
  gitlabBuildPath: Generated<string>;
  gitlabPathNamespace: string | null;
  bitbucketId: string | null;
  bitbucketRepository: string | null;
  bitbucketRepositorySlug: string | null;
  bitbucketOwner: string | null;
  bitbucketBranch: string | null;
  bitbucketBuildPath: Generated<string>;
  giteaId: string | null;
  giteaRepository: string | null;
  giteaOwner: string | null;
  giteaBranch: string | null;
  giteaBuildPath: Generated<string>;
  customGitUrl: string | null;
  customGitBranch: string | null;
  customGitBuildPath: string | null;
  /** The API calls it customGitSSHKeyId (Dokploy's name); CamelCasePlugin needs this spelling. */
  customGitSshKeyId: string | null;
  dockerImage: string | null;
  username: string | null;
  /** SecretBox-sealed registry password; never returned. */
  passwordSealed: string | null;
  registryUrl: string | null;
  dockerfile: Generated<string | null>;
  dockerContextPath: string | null;
  dockerBuildStage: string | null;
  publishDirectory: string | null;
  isStaticSpa: Generated<boolean>;
  herokuVersion: Generated<string | null>;
  railpackVersion: string | null;
  cleanCache: Generated<boolean>;
  env: string | null;
  buildArgs: string | null;
  /** SecretBox-sealed build secrets (KEY=VALUE lines); never returned. */
  buildSecretsSealed: string | null;
  createEnvFile: Generated<boolean>;
  memoryLimit: string | null;
  memoryReservation: string | null;
  cpuLimit: string | null;
  cpuReservation: string | null;
  command: string | null;
  args: NullableJson<string[]>;
  autoDeploy: Generated<boolean>;
  refreshToken: string;
  isPreviewDeploymentsActive: Generated<boolean>;
  previewLimit: Generated<number>;
  previewWildcard: string | null;
  previewPath: Generated<string>;
  previewEnv: string | null;
  previewBuildArgs: string | null;
  previewPort: Generated<number>;
  previewHttps: Generated<boolean>;
  previewLabels: NullableJson<string[]>;
  previewRequireCollaboratorPermissions: Generated<boolean>;
  createdAt: Timestamp;
  /** Registries (on delete set null): pull from, push built images to, store rollback images. */
  registryId: string | null;
  buildRegistryId: string | null;
  rollbackRegistryId: string | null;
  /** SecretBox-sealed secret verifying inbound deploy webhooks (HMAC key / GitLab token); never returned. */
  webhookSecretSealed: string | null;
  /** SecretBox-sealed build secrets of preview deployments; never returned. */
  previewBuildSecretsSealed: string | null;
  previewCertificateType: Generated<"letsencrypt" | "none" | "custom">;
  previewCustomCertResolver: string | null;
  rollbackActive: Generated<boolean>;
  buildArchitecture: Generated<"host" | "amd64" | "arm64" | "multi">;
  buildxBuilder: string | null;
  buildServerId: string | null;
  networkIds: Generated<string[]>;
  detachDokployNetwork: Generated<boolean>;
  dropBuildPath: string | null;
  title: string | null;
  subtitle: string | null;
  enabled: boolean | null;
  icon: string | null;
}

export type Application = Selectable<ApplicationTable>;
export type NewApplication = Insertable<ApplicationTable>;
export type ApplicationUpdate = Updateable<ApplicationTable>;

export type RegistryType = "cloud" | "selfHosted";

export interface RegistryTable {
  registryId: string;
  registryName: string;
  /** host[:port], normalized from what the caller gave. */
  registryUrl: string;
  username: string;
  /** SecretBox-sealed password or token; never returned. */
  passwordSealed: string;
  imagePrefix: string | null;
  registryType: Generated<RegistryType>;
  organizationId: string;
  createdAt: Timestamp;
}

export type Registry = Selectable<RegistryTable>;

export type MountType = "volume" | "file" | "bind";

/**
 * A mount of a service (Dokploy's `mount`): a named volume, a file whose content the platform
 * writes, or (instance organization only) a host path. Exactly one of applicationId/databaseId/composeId
 * (a stack's are file mounts its compose file binds as `../files/<filePath>`, mountPath "").
 */
export interface MountTable {
  mountId: string;
  type: MountType;
  volumeName: string | null;
  filePath: string | null;
  content: string | null;
  hostPath: string | null;
  mountPath: string;
  serviceType: string;
  applicationId: string | null;
  databaseId: string | null;
  composeId: string | null;
  organizationId: string;
  createdAt: Timestamp;
}

export type Mount = Selectable<MountTable>;
export type GitProviderType = "github" | "gitlab" | "bitbucket" | "gitea";

/** A Git provider connection (spec 2.12); the kind's fields in `settings`, its secrets sealed. */
export interface GitProviderTable {
  gitProviderId: string;
  /** The kind's own id: githubId, gitlabId, bitbucketId or giteaId. */
  providerId: string;
  providerType: GitProviderType;
  name: string;
  organizationId: string;
  /** The member who created it; the only one besides owners and administrators to see it when not shared. */
  userId: string | null;
  sharedWithOrganization: Generated<boolean>;
  /** JSON object of the kind's plain fields. */
  settings: Generated<string>;
  /** SecretBox-sealed JSON object of the kind's secrets; never returned. */
  secretsSealed: string | null;
  createdAt: Timestamp;
}

export type GitProvider = Selectable<GitProviderTable>;

/** An OAuth `state` minted for one member's authorization of one GitLab or Gitea provider (git-providers/oauth-state.ts). */
export interface OAuthStateTable {
  /** sha256 (hex) of the state; the state itself is only in the authorize link. */
  stateHash: string;
  kind: "gitlab" | "gitea";
  providerId: string;
  organizationId: string;
  userId: string;
  expiresAt: string;
  createdAt: Timestamp;
}

/** A published port of an application's Swarm service (Dokploy's `port`); applied on the next deploy. */
export interface PortTable {
  portId: string;
  applicationId: string;
  publishedPort: number;
  targetPort: number;
  protocol: Generated<"tcp" | "udp">;
  publishMode: Generated<"host" | "ingress">;
  createdAt: Timestamp;
}

export type Port = Selectable<PortTable>;

export type DomainCertificateType = "letsencrypt" | "custom" | "none";
export type DomainType = "application" | "compose" | "preview";

export interface DomainTable {
  domainId: string;
  /** ASCII (punycode) form, lower case; a wildcard keeps its leading `*.`. */
  host: string;
  path: Generated<string>;
  port: Generated<number>;
  https: Generated<boolean>;
  certificateType: DomainCertificateType;
  customCertResolver: string | null;
  /** PEM certificate chain of a custom certificate (public). */
  certificate: string | null;
  /** SecretBox-sealed PEM private key of a custom certificate; never returned. */
  certificateKeySealed: string | null;
  domainType: DomainType;
  applicationId: string | null;
  composeId: string | null;
  serviceName: string | null;
  uniqueConfigKey: Generated<number>;
  stripPath: Generated<boolean>;
  internalPath: string | null;
  /** The entry point the domain's router listens on instead of web/websecure (Dokploy's field). */
  customEntrypoint: string | null;
  /** Extra Traefik middlewares (by name) of the serving router, in order. */
  middlewares: Generated<string[]>;
  /** A preview's host (domainType preview): the preview it routes to. */
  previewDeploymentId: Generated<string | null>;
  /** false (domain.toggleEnable): kept, host still claimed, but routed by no Traefik file or label. */
  enabled: Generated<boolean>;
  /** The DNS provider whose record points this host at the server (dnsProvider.*), if any. */
  dnsProviderId: Generated<string | null>;
  /** The provider's zone and record of that record, so it follows the domain. */
  dnsZoneId: Generated<string | null>;
  dnsRecordId: Generated<string | null>;
  createdAt: Timestamp;
}

export type Domain = Selectable<DomainTable>;

export interface RedirectTable {
  redirectId: string;
  applicationId: string;
  regex: string;
  replacement: string;
  permanent: Generated<boolean>;
  /** Names the redirectRegex middleware (`redirect-<appName>-<key>`). */
  uniqueConfigKey: Generated<number>;
  createdAt: Timestamp;
}

/** A file of a service's repository replaced, created or deleted at build time (patch.*). */
export interface PatchTable {
  patchId: string;
  type: Generated<"create" | "update" | "delete">;
  /** Relative to the repository's root, checked at save (patches/validation.ts). */
  filePath: string;
  enabled: Generated<boolean>;
  content: string;
  applicationId: string | null;
  composeId: string | null;
  createdAt: Timestamp;
  updatedAt: Timestamp;
}

/** A custom certificate of the certificates router, applied to one server's proxy TLS store. */
export interface CertificateTable {
  certificateId: string;
  organizationId: string;
  /** The server whose proxy holds it; null: this machine (the instance organization only). */
  serverId: string | null;
  name: string;
  /** PEM chain, leaf first (public). */
  certificateData: string;
  /** SecretBox-sealed PEM private key; never returned. */
  privateKeySealed: string;
  /** Dokploy's field: stored and shown; nothing renews a custom certificate (docs/decisions.md). */
  autoRenew: boolean | null;
  /** The leaf's notAfter, read at save time. */
  expiresAt: Timestamp;
  /** DNS names the leaf covers (`*.x` wildcards kept), read at save time. */
  hosts: string[];
  createdAt: Timestamp;
}

export interface SecurityTable {
  securityId: string;
  applicationId: string;
  username: string;
  /** APR1 hash (`$apr1$salt$hash`); the password itself is never stored. */
  passwordHash: string;
  createdAt: Timestamp;
}

export type Security = Selectable<SecurityTable>;

/** The one row of instance-wide web server settings (spec 4.9). */
export interface WebServerSettingsTable {
  id: Generated<number>;
  host: string | null;
  letsEncryptEmail: string | null;
  certificateType: Generated<DomainCertificateType>;
  https: Generated<boolean>;
  /** SecretBox-sealed; shown redacted. */
  sshPrivateKeySealed: string | null;
  enableDockerCleanup: Generated<boolean>;
  dashboardEnabled: Generated<boolean>;
  traefikImage: Generated<string>;
  /** Host ports the proxy publishes (80, 443, 8080 unless an operator changed them). */
  proxyHttpPort: Generated<number>;
  proxyHttpsPort: Generated<number>;
  proxyDashboardPort: Generated<number>;
  wildcardDomain: Generated<string>;
  serverIp: string | null;
  /** settings.updateRemoteServersOnly: this machine runs no new deployment. */
  remoteServersOnly: Generated<boolean>;
  /** Deployments built on this machine at once (settings.updateBuildsConcurrency); null: no own limit. */
  buildsConcurrency: Generated<number | null>;
  /** The cron of the proxy's access log cleanup (settings.updateLogCleanup); null: none. */
  logCleanupCron: Generated<string | null>;
  updatedAt: Timestamp;
}

export type WebServerSettings = Selectable<WebServerSettingsTable>;

export type DeploymentStatus = "idle" | "running" | "done" | "error";

/** The kinds of service a deployment can be of. */
/** webServer: runs of the control plane's own backup (backups/web-server-runs.ts), its id the backup's. */
export type DeploymentTargetKind =
  | "application"
  | "database"
  | "compose"
  | "schedule"
  | "preview"
  | "webServer";

/** A deployment record (spec 2.4) and queue job: idle = waiting, running = active. */
export interface DeploymentTable {
  deploymentId: string;
  /** The service the deployment is of (deployments/targets.ts). */
  targetKind: DeploymentTargetKind;
  targetId: string;
  /** Foreign keys only (a deleted service takes its deployments): the one of targetKind is targetId. */
  applicationId: string | null;
  databaseId: string | null;
  composeId: string | null;
  /** A schedule's run (target kind schedule, schedules/runs.ts). */
  scheduleId: Generated<string | null>;
  previewDeploymentId: Generated<string | null>;
  /** A run of the control plane's own backup (target kind webServer). */
  webServerBackupId: Generated<string | null>;
  /**
   * rebuild: database services only (their data volume is deleted first); backup, restore and
   * verify: runs of a backup (backups/runs.ts).
   */
  kind:
    | "deploy"
    | "redeploy"
    | "rebuild"
    | "backup"
    | "restore"
    | "verify"
    | "rollback"
    | "schedule"
    | "volumeBackup"
    | "volumeRestore";
  title: string;
  description: string | null;
  /** A compose stack's deploy that first removes the stack's own volumes (compose.deploy freshVolumes). */
  freshVolumes: Generated<boolean>;
  status: Generated<DeploymentStatus>;
  /** "<ISO timestamp> <line>" lines, the last LOG_CAP_BYTES kept (deployments/logs.ts). */
  logs: Generated<string>;
  errorMessage: string | null;
  commitHash: string | null;
  commitMessage: string | null;
  imageName: string | null;
  archivePath: string | null;
  archiveFormat: "zip" | "tar.gz" | null;
  /** Null: the control plane's own machine. */
  serverId: string | null;
  /** The build server that built the image (the application's buildServerId); null: built where it runs. */
  buildServerId: Generated<string | null>;
  createdAt: Timestamp;
  startedAt: string | null;
  completedAt: string | null;
  /** The rollback this deployment recorded, or (a rollback run) deployed (rollbacks/). */
  rollbackId: Generated<string | null>;
  /** A rollback run's rollback to deploy. */
  restoresRollbackId: Generated<string | null>;
}

export type Deployment = Selectable<DeploymentTable>;

/**
 * What a backup run moved (deployments of kind backup, restore, verify, volumeBackup and
 * volumeRestore; backups/runs.ts, backups/web-server-runs.ts, volume-backups/): one row per run,
 * taken with its deployment.
 */
export interface BackupRunTable {
  deploymentId: string;
  /** A database or web-server backup run's backup (null once the backup is removed). */
  backupId: Generated<string | null>;
  /** The destination a backup run writes to, or a restore reads from. */
  backupDestinationId: Generated<string | null>;
  /** The object key a backup run wrote, or a restore or verification read. */
  backupFile: Generated<string | null>;
  /** The database a restore writes into. */
  backupDatabaseName: Generated<string | null>;
  backupSizeBytes: Generated<string | null>;
  /** What a verified restore's check found ("12 rows in orders"). */
  backupCheck: Generated<string | null>;
  /** A volumeBackup run's volume backup (volume-backups/; null once it is removed). */
  volumeBackupId: Generated<string | null>;
  /** The volume a volumeBackup run archived or a volumeRestore run wrote into. */
  backupVolumeName: Generated<string | null>;
}

export type BackupRun = Selectable<BackupRunTable>;
export type NewBackupRun = Omit<Insertable<BackupRunTable>, "deploymentId">;

export type ScheduleType = "application" | "compose" | "server" | "dokploy-server";

/** A scheduled job (schedules/): a cron command in a service's container or on a server. */
export interface ScheduleTable {
  scheduleId: string;
  name: string;
  cronExpression: string;
  appName: string;
  /** The compose service whose container runs the command (scheduleType compose). */
  serviceName: string | null;
  shellType: "bash" | "sh";
  scheduleType: ScheduleType;
  command: string;
  /** What server and dokploy-server schedules run (else `command`). */
  script: string | null;
  applicationId: string | null;
  composeId: string | null;
  serverId: string | null;
  organizationId: string;
  userId: string | null;
  enabled: Generated<boolean>;
  /** IANA zone of the cron expression (and the command's TZ); null = UTC. */
  timezone: string | null;
  description: string | null;
  createdAt: Timestamp;
}

export type Schedule = Selectable<ScheduleTable>;
export type NewSchedule = Insertable<ScheduleTable>;
export type ScheduleUpdate = Updateable<ScheduleTable>;

/** A kept image of a compose stack's service (a stack's rollback). */
export interface StackRollbackImage {
  /** The service's key in the compose file. */
  service: string;
  /** platform-rollback/<appName>-<service>:<tag> on the server. */
  image: string;
  imageId: string;
}

/**
 * What a successful deployment of an application or a compose stack ran, kept to deploy again
 * (rollbacks/). Exactly one of applicationId and composeId is set.
 */
export interface RollbackTable {
  rollbackId: string;
  applicationId: Generated<string | null>;
  composeId: Generated<string | null>;
  /** Null once the deployment's record was removed (the rollback stays). */
  deploymentId: string | null;
  /** Where the image is kept; null: the control plane's own machine. */
  serverId: string | null;
  /** An application's rollback: platform-rollback/<repository>:<tag> on the server (null for a stack). */
  image: string | null;
  imageId: string | null;
  /** A stack's rollback: the image of each service (null for an application). */
  stackImages: NullableJson<StackRollbackImage[]>;
  /** The rollback registry it was pushed to (rollbackActive), and the reference pushed. */
  registryId: string | null;
  registryImage: string | null;
  /**
   * Sealed JSON: an application's Swarm service spec, or a stack's converted file and file mounts
   * (ComposeSnapshot): both hold the environment.
   */
  specSealed: string;
  version: Generated<number>;
  createdAt: Timestamp;
}

export type Rollback = Selectable<RollbackTable>;

/** A preview of an application for one pull/merge request or branch (previews/). */
export interface PreviewDeploymentTable {
  previewDeploymentId: string;
  applicationId: string;
  appName: string;
  branch: string;
  /** github | gitlab | bitbucket | gitea; null for a preview made through the API. */
  provider: string | null;
  pullRequestId: string;
  pullRequestNumber: string;
  pullRequestUrl: string;
  pullRequestTitle: string;
  pullRequestCommentId: string | null;
  /** The commit the last queued deployment builds (a redelivered event for it queues nothing). */
  headSha: string | null;
  previewStatus: Generated<DeploymentStatus>;
  domainId: string | null;
  createdAt: Timestamp;
}

export type PreviewDeployment = Selectable<PreviewDeploymentTable>;

/** An S3-compatible bucket of an organization (Dokploy's destination). */
export interface DestinationTable {
  destinationId: string;
  organizationId: string;
  name: string;
  provider: string;
  accessKey: string;
  /** SecretBox-sealed; never returned. */
  secretAccessKeySealed: string;
  bucket: string;
  region: string;
  /** "" = AWS's own endpoint for the region. */
  endpoint: string;
  createdAt: Timestamp;
}

export type Destination = Selectable<DestinationTable>;

export type BackupDatabaseType = "postgres" | "mysql" | "mariadb" | "mongo" | "redis" | "libsql";

/** A database backup (Dokploy's backup row) and its restore verification. */
export interface BackupTable {
  backupId: string;
  appName: string;
  schedule: string;
  enabled: Generated<boolean>;
  database: string;
  prefix: string;
  serviceName: string | null;
  destinationId: string;
  keepLatestCount: number | null;
  backupType: Generated<"database" | "compose">;
  /** web-server: the control plane's own database (no database service: databaseId is null). */
  databaseType: BackupDatabaseType | "web-server";
  databaseId: string | null;
  /** backupType compose: the stack whose service (serviceName) holds the database. */
  composeId: Generated<string | null>;
  userId: string | null;
  metadata: Json<Record<string, unknown>> | null;
  verifyRestore: Generated<boolean>;
  verifyTable: string | null;
  createdAt: Timestamp;
}

export type Backup = Selectable<BackupTable>;
export type NewBackup = Insertable<BackupTable>;
export type BackupUpdate = Updateable<BackupTable>;

/** libsql services have no volume backups (their database backups archive the data directory). */
export type VolumeBackupServiceType = "application" | Exclude<BackupDatabaseType, "libsql"> | "compose";

/** A volume backup (Dokploy's volume_backup row): a named volume of one service to a destination. */
export interface VolumeBackupTable {
  volumeBackupId: string;
  organizationId: string;
  name: string;
  volumeName: string;
  prefix: string;
  appName: string;
  serviceName: string | null;
  /** The service is scaled to 0 while the volume is read. */
  turnOff: Generated<boolean>;
  cronExpression: string;
  keepLatestCount: number | null;
  enabled: Generated<boolean>;
  serviceType: VolumeBackupServiceType;
  applicationId: string | null;
  databaseId: string | null;
  composeId: string | null;
  destinationId: string;
  createdAt: Timestamp;
}

export type VolumeBackup = Selectable<VolumeBackupTable>;
export type NewVolumeBackup = Insertable<VolumeBackupTable>;
export type VolumeBackupUpdate = Updateable<VolumeBackupTable>;

export type EventKind =
  | "appDeploy"
  | "appBuildError"
  | "databaseBackup"
  | "volumeBackup"
  | "platformRestart"
  | "platformBackup"
  | "dockerCleanup"
  | "serverThreshold";

/** A server's monitoring configuration (spec 2.13), sealed whole: its token is a secret. */
export interface MonitoringConfigTable {
  /** A server id, or `local` for the control plane's machine. */
  serverId: string;
  organizationId: string;
  configSealed: string;
  updatedAt: Timestamp;
}

/** An event kept for later notification delivery (spec 6.1). */
export interface EventTable {
  eventId: string;
  organizationId: string;
  kind: EventKind;
  applicationId: string | null;
  payload: Json<{ applicationName: string; status: string; message: string; [key: string]: string }>;
  createdAt: Timestamp;
  /** When its deliveries were written (notifications/outbox.ts); null: not yet. */
  fannedOutAt: ColumnType<string | null, string | null | undefined, string | null>;
}

/** A notification channel (spec 2.11): kind, toggles, plain fields and sealed secrets. */
export interface NotificationTable {
  notificationId: string;
  organizationId: string;
  name: string;
  kind: string;
  appDeploy: Generated<boolean>;
  appBuildError: Generated<boolean>;
  databaseBackup: Generated<boolean>;
  volumeBackup: Generated<boolean>;
  platformRestart: Generated<boolean>;
  /** The control plane's own backups (web-server backups; Dokploy's dokployBackup). */
  platformBackup: Generated<boolean>;
  dockerCleanup: Generated<boolean>;
  serverThreshold: Generated<boolean>;
  config: Json<Record<string, unknown>>;
  /** The kind's secret fields as one JSON object, sealed (table notifications, row notificationId). */
  secretsSealed: string;
  /** Null: every project (and service); else only events of these projects / services. */
  projectIds: string[] | null;
  serviceIds: string[] | null;
  createdAt: Timestamp;
}

export type DeliveryStatus = "pending" | "delivered" | "abandoned";

/** One event's delivery to one channel (notifications/outbox.ts). */
export interface NotificationDeliveryTable {
  eventId: string;
  notificationId: string;
  organizationId: string;
  status: DeliveryStatus;
  attempts: Generated<number>;
  nextAttemptAt: Timestamp;
  leaseOwner: string | null;
  leaseUntil: Timestamp | null;
  lastError: string | null;
  updatedAt: Timestamp;
}

/** Whether a control plane instance is running (set at start, cleared at a clean stop). */
export interface ControlPlaneRunTable {
  instanceId: string;
  running: boolean;
  startedAt: Timestamp;
}

export type DatabaseKind = "postgres" | "mysql" | "mariadb" | "mongo" | "redis" | "libsql";
export type SqldNode = "primary" | "replica";

/** A database service (spec 2.9) of one of the five kinds (databases/kinds.ts). */
export interface DatabaseServiceTable extends SwarmColumns {
  databaseId: string;
  /** Ids of the organization's networks the service joins besides the platform network. */
  networkIds: Generated<string[]>;
  kind: DatabaseKind;
  name: string;
  appName: string;
  description: string | null;
  environmentId: string;
  serverId: string | null;
  databaseName: string | null;
  databaseUser: string | null;
  /** SecretBox-sealed (databases/views.ts). */
  databasePasswordSealed: string;
  databaseRootPasswordSealed: string | null;
  /** Null: the kind's default image (databases/kinds.ts, PLATFORM_DEFAULT_IMAGE_<KIND>). */
  dockerImage: string | null;
  replicaSets: Generated<boolean>;
  /** libsql: sqld's role; a replica follows sqldPrimaryUrl (migration 20261203-10-libsql). */
  sqldNode: Generated<SqldNode>;
  sqldPrimaryUrl: string | null;
  enableNamespaces: Generated<boolean>;
  applicationStatus: Generated<ApplicationStatus>;
  /** Why reconciliation set the status to error (null: a deployment set it). */
  applicationStatusMessage: string | null;
  externalPort: number | null;
  /** libsql: sqld's gRPC (5001) and admin (5000) ports published on the server. */
  externalGrpcPort: number | null;
  externalAdminPort: number | null;
  memoryLimit: string | null;
  memoryReservation: string | null;
  cpuLimit: string | null;
  cpuReservation: string | null;
  env: string | null;
  command: string | null;
  /** JSON text on the way in (null: none). */
  args: ColumnType<string[] | null, string | null | undefined, string | null>;
  createdAt: Timestamp;
}

export type DatabaseService = Selectable<DatabaseServiceTable>;
export type NewDatabaseService = Insertable<DatabaseServiceTable>;
export type DatabaseServiceUpdate = Updateable<DatabaseServiceTable>;

export type ComposeType = "docker-compose" | "stack";
export type ComposeSourceType = "git" | "github" | "gitlab" | "bitbucket" | "gitea" | "raw";

/** A compose stack (spec 2.6, 4.3) with Dokploy's field set (migration 20261127-30-compose). */
export interface ComposeTable {
  composeId: string;
  /** Ids of the organization's networks every service of the stack joins. */
  networkIds: Generated<string[]>;
  name: string;
  appName: string;
  description: string | null;
  env: string | null;
  composeFile: Generated<string>;
  refreshToken: string | null;
  sourceType: Generated<ComposeSourceType>;
  composeType: Generated<ComposeType>;
  repository: string | null;
  owner: string | null;
  branch: string | null;
  autoDeploy: Generated<boolean>;
  gitlabProjectId: number | null;
  gitlabRepository: string | null;
  gitlabOwner: string | null;
  gitlabBranch: string | null;
  gitlabPathNamespace: string | null;
  bitbucketRepository: string | null;
  bitbucketRepositorySlug: string | null;
  bitbucketOwner: string | null;
  bitbucketBranch: string | null;
  giteaRepository: string | null;
  giteaOwner: string | null;
  giteaBranch: string | null;
  customGitUrl: string | null;
  customGitBranch: string | null;
  customGitSshKeyId: string | null;
  command: Generated<string>;
  createEnvFile: Generated<boolean>;
  enableSubmodules: Generated<boolean>;
  composePath: Generated<string>;
  suffix: Generated<string>;
  randomize: Generated<boolean>;
  isolatedDeployment: Generated<boolean>;
  isolatedDeploymentsVolume: Generated<boolean>;
  triggerType: Generated<"push" | "tag" | null>;
  composeStatus: Generated<ApplicationStatus>;
  icon: string | null;
  environmentId: string;
  serverId: string | null;
  pausedAt: string | null;
  watchPaths: string[] | null;
  githubId: string | null;
  gitlabId: string | null;
  bitbucketId: string | null;
  giteaId: string | null;
  serviceNetworks: Generated<unknown>;
  /** The host ports its file publishes (compose/ports.ts), seen by every port check of the server. */
  publishedPorts: Generated<ComposePublishedPort[]>;
  createdAt: Timestamp;
}

export interface ComposePublishedPort {
  port: number;
  protocol: "tcp" | "udp";
}

export type Compose = Selectable<ComposeTable>;
export type NewCompose = Insertable<ComposeTable>;
export type ComposeUpdate = Updateable<ComposeTable>;

/** An organization's network (network.*, migration 20261130-60-networks). */
export interface NetworkTable {
  networkId: string;
  organizationId: string;
  /** null: this machine. */
  serverId: string | null;
  name: string;
  /** The engine's name, namespaced by the organization (organizationNetworkName). */
  dockerName: string;
  driver: "overlay" | "bridge";
  internal: Generated<boolean>;
  attachable: Generated<boolean>;
  enableIpv6: Generated<boolean>;
  /** The driver's MTU (migration 20261204-20-network-mtu); null: the engine's default. */
  mtu: number | null;
  dockerId: string | null;
  createdAt: Timestamp;
}
export type NetworkRow = Selectable<NetworkTable>;

/** An organization's tag (tag.*, migration 20261201-70-tags); names are unique per organization. */
export interface TagTable {
  tagId: string;
  organizationId: string;
  name: string;
  color: string | null;
  createdAt: Timestamp;
}
export type TagRow = Selectable<TagTable>;

/** A tag assigned to a project (one row per pair). */
export interface ProjectTagTable {
  id: string;
  projectId: string;
  tagId: string;
}

/** A project (and optionally some of its environments) allowed to use a vault provider. */
export interface VaultProviderAssignment {
  projectId: string;
  environmentIds: string[];
}

/** An external secret store of an organization (vaults/); the token is sealed. */
export interface VaultProviderTable {
  vaultProviderId: string;
  organizationId: string;
  name: string;
  providerType: "hashicorp";
  url: string;
  mount: string;
  namespace: string | null;
  tokenSealed: string;
  assignments: Json<VaultProviderAssignment[]>;
  createdAt: Timestamp;
}
export type VaultProviderRow = Selectable<VaultProviderTable>;

/** A DNS provider account of an organization (dns/); the API token is sealed. */
export interface DnsProviderTable {
  dnsProviderId: string;
  organizationId: string;
  name: string;
  providerType: "cloudflare";
  apiTokenSealed: string;
  createdAt: Timestamp;
}
export type DnsProviderRow = Selectable<DnsProviderTable>;

/** A catalogue template a user bookmarked (user.toggleTemplateBookmark). */
export interface TemplateBookmarkTable {
  userId: string;
  templateId: string;
  createdAt: Timestamp;
}

/** An OIDC provider an organization's forward-auth services sign in with; the client secret is sealed. */
export interface ForwardAuthProviderTable {
  providerId: string;
  organizationId: string;
  issuer: string;
  domain: string | null;
  clientId: string;
  clientSecretSealed: string;
  scopes: Generated<string[]>;
  createdAt: Timestamp;
}
export type ForwardAuthProviderRow = Selectable<ForwardAuthProviderTable>;

/** One server's forward-auth service (serverId null: this machine); the cookie secret is sealed. */
export interface ForwardAuthSettingsTable {
  forwardAuthSettingsId: string;
  organizationId: string;
  serverId: string | null;
  authDomain: string;
  baseDomain: string;
  https: Generated<boolean>;
  certificateType: Generated<"letsencrypt" | "custom" | "none">;
  customCertResolver: string | null;
  /** The provider the deployed service signs in with; null: not deployed (removeOnServer). */
  providerId: string | null;
  cookieSecretSealed: string;
  createdAt: Timestamp;
}
export type ForwardAuthSettingsRow = Selectable<ForwardAuthSettingsTable>;

/** A domain behind its server's forward-auth service (forwardAuth.enable). */
export interface ForwardAuthDomainTable {
  domainId: string;
  createdAt: Timestamp;
}
