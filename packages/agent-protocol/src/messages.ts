/**
 * TypeScript shapes of the messages in proto/agent.proto, as the codecs in codec.ts produce and
 * accept them: camelCase field names, int64 as number, enums as their names, and each `oneof`
 * as a discriminated union (`command` in CommandRequest, `result` in CommandReply).
 * codec.test.ts checks that every proto field appears here.
 */

// ---- commands ------------------------------------------------------------------------------

export type PingCommand = Record<string, never>;
export type ValidateServerCommand = Record<string, never>;
export type SecurityAuditCommand = Record<string, never>;

export interface ListContainersCommand {
  /** Include stopped containers too (like `docker ps -a`). */
  all?: boolean;
  /** Substring one of the container's names must contain. */
  nameMatch?: string;
  /** Labels the container must carry; an empty value only requires the key. */
  labels?: Record<string, string>;
  /** Label com.docker.swarm.service.name. */
  swarmServiceName?: string;
  /** Label com.docker.stack.namespace. */
  stackNamespace?: string;
  /** Label com.docker.compose.project. */
  composeProject?: string;
}

export interface InspectContainerCommand {
  containerId: string;
  /** Required by the agent: whose containers the command may touch. */
  scope?: ContainerScope;
}

export interface RestartContainerCommand {
  containerId: string;
  /** Seconds to wait for a stop before killing; 0 or absent = Docker's default. */
  stopTimeoutSeconds?: number;
  /** Required by the agent: whose containers the command may touch. */
  scope?: ContainerScope;
}

/**
 * The containers a command may touch: the organization's (by ownership label) and, with
 * includeUnmanaged, those without an organization label (the instance administrator's view of
 * unmanaged containers); never the platform's own. Others are answered NOT_FOUND.
 */
export interface ContainerScope {
  organizationId: string;
  includeUnmanaged: boolean;
}

// ---- deployments (build, Swarm service, jobs, registries) ---------------------------------

/** Credentials for a registry; the password never appears in logs or errors. */
export interface RegistryAuth {
  /** Host[:port] as in image names. */
  serverAddress: string;
  username: string;
  password: string;
}

export interface GitSource {
  url: string;
  branch: string;
  /** OpenSSH private key for ssh URLs; "" or absent for none. */
  sshPrivateKey?: string;
  /** HTTP basic credentials (provider tokens), never put into the URL or logs. */
  httpUsername?: string;
  httpPassword?: string;
  enableSubmodules?: boolean;
}

export interface ArchiveSource {
  /** http(s) URL on the control plane, valid once. */
  url: string;
  format: "tar.gz" | "zip";
  /** Hex SHA-256 the download must match. */
  sha256: string;
}

export type BuildType =
  | "dockerfile"
  | "static"
  | "nixpacks"
  | "railpack"
  | "heroku_buildpacks"
  | "paketo_buildpacks";

export type BuildSource =
  | { git: GitSource; archive?: undefined }
  | { archive: ArchiveSource; git?: undefined };

export type BuildImageCommand = BuildSource & {
  /** The deployment id; cancelJob with it stops the build. */
  jobId: string;
  /** Progress goes to agent.<serverId>.logs.<logStreamId>. */
  logStreamId: string;
  appName: string;
  /** Tag of the built image. */
  imageName: string;
  buildType: BuildType;
  buildPath?: string;
  dockerfile?: string;
  dockerContextPath?: string;
  dockerBuildStage?: string;
  buildArgs?: Record<string, string>;
  /** BuildKit-style secrets (id = key), never build args. */
  buildSecrets?: Record<string, string>;
  publishDirectory?: string;
  isStaticSpa?: boolean;
  noCache?: boolean;
  herokuVersion?: string;
  railpackVersion?: string;
  /** Push after the build as <serverAddress>/<pushImagePrefix/><appName>:<tag>. */
  pushRegistry?: RegistryAuth;
  pushImagePrefix?: string;
  /** Also push after the build, for rollbacks, as <serverAddress>/<rollbackImagePrefix/><appName>:<tag>. */
  rollbackRegistry?: RegistryAuth;
  rollbackImagePrefix?: string;
  /** The owner the built image is labelled with. */
  owner?: ResourceOwner;
};

/** The tenant owning the Docker objects a command creates or acts on (see ownership.ts). */
export interface ResourceOwner {
  organizationId: string;
  /** `<kind>:<id>`, e.g. `application:<applicationId>`. */
  resource: string;
}

export interface BuildImageResult {
  imageName: string;
  imageId: string;
  /** The reference pushed; "" without a push registry. */
  pushedImage: string;
  commitHash: string;
  commitMessage: string;
  /** The reference pushed to the rollback registry; "" without one. */
  rollbackImage: string;
}

export interface ServicePort {
  publishedPort: number;
  targetPort: number;
  protocol: "tcp" | "udp";
  publishMode: "host" | "ingress";
}

export interface ServiceHealthCheck {
  test: string[];
  intervalNs?: number;
  timeoutNs?: number;
  startPeriodNs?: number;
  retries?: number;
}

export interface ServiceRestartPolicy {
  condition: "none" | "on-failure" | "any";
  delayNs?: number;
  maxAttempts?: number;
  windowNs?: number;
}

export interface ServiceMount {
  /** `file`: source is a relative path in the service's files directory, written with `content`. */
  type: "bind" | "volume" | "file";
  source: string;
  target: string;
  readOnly?: boolean;
  /** The file's content (type `file` only). */
  content?: string;
}

/** The Swarm service of an application. */
export interface ServiceSpec {
  /** The appName; also the DNS name on the platform network. */
  name: string;
  image: string;
  /** KEY=VALUE entries. */
  env: string[];
  /** Replaces the image's entrypoint when not empty. */
  command?: string[];
  args?: string[];
  replicas: number;
  labels?: Record<string, string>;
  networks?: string[];
  ports?: ServicePort[];
  memoryLimitBytes?: number;
  memoryReservationBytes?: number;
  nanoCpusLimit?: number;
  nanoCpusReservation?: number;
  healthCheck?: ServiceHealthCheck;
  restartPolicy?: ServiceRestartPolicy;
  mounts?: ServiceMount[];
  /** Files written on the host and mounted read-only: container path -> content. */
  files?: Record<string, string>;
  /** JSON of SwarmSettings: the user's Swarm settings (Dokploy's *Swarm fields); absent or "" for none. */
  swarmSettingsJson?: string;
}

/** Swarm settings an application may set, as Docker's service API names them. */
export interface SwarmSettings {
  /** TaskTemplate.Placement. */
  Placement?: Record<string, unknown>;
  /** Replace the platform's default update and rollback configurations. */
  UpdateConfig?: Record<string, unknown>;
  RollbackConfig?: Record<string, unknown>;
  /** ContainerSpec.StopGracePeriod, nanoseconds. */
  StopGracePeriod?: number;
  /** ContainerSpec.Ulimits. */
  Ulimits?: { Name: string; Soft: number; Hard: number }[];
  /** EndpointSpec.Mode. */
  EndpointMode?: "vip" | "dnsrr";
  /** The service's Mode when not replicated (Dokploy's modeSwarm): absent = Replicated with `replicas`. */
  Mode?: SwarmMode;
  /** Aliases of the service on each of its networks (network name -> aliases; Dokploy's networkSwarm). */
  NetworkAliases?: Record<string, string[]>;
}

/** Swarm's non-replicated service modes. */
export type SwarmMode =
  | { Global: Record<string, never> }
  | { ReplicatedJob: { MaxConcurrent?: number; TotalCompletions?: number } }
  | { GlobalJob: Record<string, never> };

export interface DeployServiceCommand {
  jobId: string;
  logStreamId: string;
  spec: ServiceSpec;
  /** Credentials Swarm pulls the image with; absent for local images. */
  registryAuth?: RegistryAuth;
  /** Wait for the new tasks to run (and be healthy) this long; 0 or absent = 120. */
  waitSeconds?: number;
  /** Required by the agent: an existing service of that name must carry this owner's labels. */
  owner?: ResourceOwner;
}

export interface DeployServiceResult {
  serviceId: string;
  created: boolean;
  runningTasks: number;
}

export type ServiceAction = "START" | "STOP" | "RELOAD" | "REMOVE";

export interface ServiceActionCommand {
  serviceName: string;
  action: ServiceAction;
  /** Replicas for START. */
  replicas?: number;
  /** Required by the agent: the service must carry this owner's labels. */
  owner?: ResourceOwner;
  /**
   * REMOVE only: named volumes deleted once the service's containers are gone, when they carry
   * the owner's labels (a missing one is fine; one labelled otherwise is kept).
   */
  removeVolumes?: string[];
}

export interface ServiceActionResult {
  /** False when there is no such service. */
  found: boolean;
  /** Of removeVolumes: deleted, and kept because they belong to someone else. */
  volumesRemoved?: string[];
  volumesKept?: string[];
}

/** A compose stack's deployment (proto DeployStackCommand). */
export interface DeployStackCommand {
  jobId: string;
  logStreamId: string;
  appName: string;
  composeType: "stack" | "docker-compose";
  /** The converted file (YAML). */
  composeFile: string;
  registryAuth?: RegistryAuth[];
  /** Required by the agent: existing objects of the stack must carry this owner's labels. */
  owner?: ResourceOwner;
  /** 0 or absent = 300. */
  waitSeconds?: number;
  /** File mounts the converted file binds as `../files/<filePath>` (written beside it by the agent). */
  files?: StackFile[];
  /** A stack from a repository: cloned, the converted file written over `composePath` in it. */
  git?: GitSource;
  composePath?: string;
}

/** One file of a repository's branch, read by the agent where the repository is reachable. */
export interface ReadRepositoryFileCommand {
  git: GitSource;
  /** Relative to the repository's root, no `..`. */
  path: string;
}

export interface RepositoryFile {
  content: string;
  commit: string;
}

/** A file of a compose stack, under its files directory. */
export interface StackFile {
  filePath: string;
  content: string;
}

export interface StackService {
  name: string;
  runningTasks: number;
  desiredTasks: number;
  error?: string;
}

export interface DeployStackResult {
  services: StackService[];
}

export type StackAction = "START" | "STOP" | "REMOVE" | "STATUS";

export interface StackActionCommand {
  appName: string;
  composeType: "stack" | "docker-compose";
  action: StackAction;
  owner?: ResourceOwner;
  removeVolumes?: boolean;
}

export interface StackActionResult {
  found: boolean;
  services: StackService[];
  volumesRemoved?: string[];
  /** Objects of the stack's name carrying another owner's labels: left alone. */
  kept?: string[];
}

export interface CancelJobCommand {
  jobId: string;
}

export interface CancelJobResult {
  /** True when a command of the job was running and has been stopped. */
  cancelled: boolean;
  /**
   * True when the job runs past its point of no return (a volume restore writing its archive): it
   * was not stopped, it ends on its own and its outcome stands.
   */
  runsOn?: boolean;
}

export type CleanBuildCacheCommand = Record<string, never>;

export interface CleanBuildCacheResult {
  reclaimedBytes: number;
}

export interface RegistryLoginCommand {
  auth: RegistryAuth;
}

export interface RegistryLoginResult {
  /** The engine's status text ("Login Succeeded"). */
  status: string;
}

// ---- rollbacks -----------------------------------------------------------------------------

/** Kept rollback images are named platform-rollback/<repository>:<tag>. */
export const ROLLBACK_IMAGE_REPOSITORY_PREFIX = "platform-rollback/";

export interface KeepRollbackImageCommand {
  /** The image the deployment ran (tag or id); tagged by its image ID. */
  sourceImage: string;
  /** platform-rollback/<repository>:<tag>. */
  image: string;
  /** Also push, as <serverAddress>/<imagePrefix/><repository>:<tag>. */
  registry?: RegistryAuth;
  imagePrefix?: string;
}

export interface RollbackImageKept {
  imageId: string;
  /** "" without a registry. */
  pushedImage: string;
}

/** Keeps the images a stack's (owner's) services run as platform-rollback/<appName>-<service>:<tag>. */
export interface KeepStackRollbackImagesCommand {
  appName: string;
  composeType: "stack" | "docker-compose";
  owner: ResourceOwner;
  tag: string;
}

export interface StackRollbackImage {
  /** The service's key in the compose file. */
  service: string;
  image: string;
  imageId: string;
}

export interface StackRollbackImagesKept {
  images: StackRollbackImage[];
}

export interface RollbackImageStatusCommand {
  image: string;
}

export interface RollbackImageStatus {
  exists: boolean;
  imageId: string;
}

export interface RemoveRollbackImagesCommand {
  images: string[];
}

export interface RollbackImagesRemoved {
  removed: string[];
}

// ---- monitoring ------------------------------------------------------------------------------

export interface ContainerStatsCommand {
  /** appName of the service (label com.docker.swarm.service.name). */
  swarmServiceName: string;
  /** Required by the agent: the owner every container of the service must carry. */
  owner?: ResourceOwner;
}

export interface ContainerStats {
  id: string;
  name: string;
  /** Docker's status text ("Up 5 minutes"). */
  status: string;
  startedAtUnixMs: number;
  /** Percent of one core over the sample (200 = two cores busy). */
  cpuPercent: number;
  /** Without the page cache. */
  memoryUsageBytes: number;
  /** The container's limit, or the host's memory when unlimited. */
  memoryLimitBytes: number;
  networkRxBytes: number;
  networkTxBytes: number;
}

export interface ContainerStatsList {
  containers: ContainerStats[];
}

export interface SetupMonitoringCommand {
  /** The metricsConfig (spec 2.13) as JSON; see metrics-config.ts. */
  metricsConfigJson: string;
}

export interface MonitoringSetUp {
  port: number;
}

export interface ReadContainerMetricsCommand {
  appName: string;
  limit: number;
  /** Only containers labelled for this organization; "" = unmanaged ones too. */
  organizationId: string;
}

export interface ContainerMetricsList {
  /** A JSON array of ContainerMetricsRecord, oldest first. */
  recordsJson: string;
  monitoringEnabled: boolean;
}

// ---- proxy (Traefik) ------------------------------------------------------------------------

/** `static` is traefik.yml (fileName ignored), `dynamic` dynamic/<name>, `certificate` PEM files. */
export type ProxyFileScope = "static" | "dynamic" | "certificate";

/**
 * Whose proxy file a command names: a tenant's (owner) or the platform's own (platformFile).
 * Dynamic and certificate files need exactly one; traefik.yml (static) is the platform's.
 */
export interface ProxyFileHolder {
  owner?: ResourceOwner;
  platformFile?: boolean;
}

export interface WriteProxyFileCommand extends ProxyFileHolder {
  scope: ProxyFileScope;
  fileName: string;
  content: string;
}

export interface ProxyFileWritten {
  /** Absolute path on the server. */
  path: string;
}

export interface ReadProxyFileCommand extends ProxyFileHolder {
  scope: ProxyFileScope;
  fileName: string;
}

export interface ProxyFile {
  exists: boolean;
  content: string;
}

export type RemoveProxyFileCommand = ReadProxyFileCommand;

export interface ProxyFileRemoved {
  removed: boolean;
}

/** Creates or updates the proxy's Swarm service (writes traefik.yml first). */
export interface EnsureProxyCommand {
  image: string;
  staticConfig: string;
  dashboard: boolean;
  httpPort: number;
  httpsPort: number;
  dashboardPort: number;
}

export interface ProxyService {
  serviceId: string;
  created: boolean;
}

export type ReloadProxyCommand = Record<string, never>;

export interface ProxyReloaded {
  found: boolean;
}

/**
 * Removes unused Docker objects: one organization's (by ownership labels) or, with
 * `wholeEngine`, every unused one but the platform's own. `buildCache` needs `wholeEngine`.
 */
export interface CleanDockerCommand {
  containers?: boolean;
  images?: boolean;
  volumes?: boolean;
  buildCache?: boolean;
  organizationId?: string;
  wholeEngine?: boolean;
}

/** One page of the proxy's JSON access log, filtered and sorted (settings.readStatsLogs). */
export interface ReadAccessLogCommand {
  /** 1-based. */
  page: number;
  pageSize: number;
  search?: string;
  /** "404", "4xx", or info | success | redirect | client | server. */
  status?: string[];
  /** Unix ms; 0 or absent leaves that side open. */
  startUnixMs?: number;
  endUnixMs?: number;
  sortField?: AccessLogSortField | "";
  sortDescending?: boolean;
}

export type AccessLogSortField =
  | "timestamp"
  | "method"
  | "path"
  | "status"
  | "duration"
  | "ip"
  | "userAgent"
  | "host";

export interface AccessLogEntry {
  timestamp: string;
  method: string;
  path: string;
  status: number;
  /** Nanoseconds (Traefik's Duration). */
  duration: number;
  ip: string;
  userAgent: string;
  host: string;
}

export interface AccessLogPage {
  entries: AccessLogEntry[];
  totalCount: number;
  exists: boolean;
}

export interface DockerCleanupResult {
  reclaimedBytes: number;
  containersDeleted: number;
  imagesDeleted: number;
  volumesDeleted: number;
  buildCacheReclaimedBytes: number;
}

/** The label that carries the deployment id on an application's Swarm service spec. */
export const DEPLOYMENT_ID_LABEL = "platform.deployment-id";

/** Docker's view of services and the agent's running jobs (see ObservedService). */
export interface ObserveServicesCommand {
  serviceNames: string[];
  jobIds: string[];
  /** Required by the agent for every name: the owner its service must carry. */
  owners?: Record<string, ResourceOwner>;
}

export interface ObservedService {
  name: string;
  found: boolean;
  /** DEPLOYMENT_ID_LABEL of the current spec and of the previous one ("" when absent). */
  deploymentId: string;
  previousDeploymentId: string;
  image: string;
  /** Swarm UpdateStatus.State ("" when none) and its message. */
  updateState: string;
  updateMessage: string;
  desiredReplicas: number;
  /** Tasks of the current spec (image, ForceUpdate) running now. */
  runningTasks: number;
  /** The error of the newest failed or rejected task ("" when none). */
  taskError: string;
  /** Tasks of an older spec still meant to run. */
  outdatedTasks: number;
  /** DEPLOYMENT_ID_LABEL of the newest failed or rejected task (whose update rolled back). */
  taskErrorDeploymentId: string;
  /** The service exists but belongs to another owner: nothing else about it is reported. */
  ownerMismatch?: boolean;
}

export interface ObservedServices {
  services: ObservedService[];
  /** Of the requested job ids, those the agent is running now. */
  activeJobs: string[];
}

export type DatabaseEngine = "POSTGRES" | "MYSQL" | "MARIADB" | "MONGO" | "REDIS";

/**
 * Changes a user's name and/or password inside the running database of a service, with the
 * database's own client in its task's container (argument vector, never a shell).
 */
export interface ChangeDatabaseCredentialsCommand {
  serviceName: string;
  owner?: ResourceOwner;
  engine: DatabaseEngine;
  /** The account the change is made as and its current password ("" where none is needed). */
  adminUser: string;
  adminPassword: string;
  /** The user changed ("" for redis) and its new name ("" keeps it). */
  user: string;
  newUser: string;
  /** The new password ("" keeps it). */
  newPassword: string;
  database: string;
}

export interface DatabaseCredentialsChanged {
  containerId: string;
  /** Redis: the service's --requirepass argument was updated (its task restarts with it). */
  serviceUpdated: boolean;
}

/** An S3-compatible bucket the agent reads and writes; a custom endpoint is addressed path-style. */
export interface ObjectStorage {
  /** "" = AWS's endpoint for the region. */
  endpoint: string;
  region: string;
  bucket: string;
  accessKey: string;
  secretAccessKey: string;
}

export type BackupDatabaseKind = "postgres" | "mysql" | "mariadb" | "mongo" | "redis";

/** The database inside a service's container, as dump and restore tools reach it. */
export interface DatabaseAccess {
  kind: BackupDatabaseKind | string;
  databaseName: string;
  user: string;
  password: string;
}

/**
 * Dumps a database in its running container, gzipped, straight into a multipart upload of `key`
 * that is completed only when the dump tool exited 0.
 */
export interface BackupDatabaseCommand {
  jobId: string;
  logStreamId: string;
  serviceName: string;
  owner?: ResourceOwner;
  database?: DatabaseAccess;
  storage?: ObjectStorage;
  key: string;
}

export interface BackupDatabaseResult {
  sizeBytes: number;
  dumpBytes: number;
}

/** A throwaway container of the database's image for a verified restore. */
export interface ThrowawayDatabase {
  image: string;
  env: string[];
  command: string[];
  args: string[];
  /** A table whose rows are counted; "" = the server's own integrity check. */
  checkTable: string;
}

/** Restores the gzipped object `key` into the service's container (or a throwaway one). */
export interface RestoreDatabaseCommand {
  jobId: string;
  logStreamId: string;
  serviceName: string;
  owner?: ResourceOwner;
  database?: DatabaseAccess;
  storage?: ObjectStorage;
  key: string;
  throwaway?: ThrowawayDatabase;
}

export interface RestoreDatabaseResult {
  sizeBytes: number;
  check: string;
  rows: number;
}

/**
 * A schedule's command run as `<shell> -c <command>` (an argv) in a running container of a
 * service selected by its labels; every container found must carry `owner`'s labels.
 */
export interface RunScheduleCommand {
  jobId: string;
  logStreamId: string;
  owner?: ResourceOwner;
  /** An application's service, or a stack's `<stack>_<service>`. */
  swarmServiceName: string;
  /** A docker-compose stack's project and service. */
  composeProject: string;
  composeService: string;
  /** "bash" or "sh". */
  shell: string;
  command: string;
  /** IANA time zone given as TZ; "" = none. */
  timezone: string;
}

/** An instance administrator's script run as `<shell> -c <script>` on the server itself. */
export interface RunHostScriptCommand {
  jobId: string;
  logStreamId: string;
  shell: string;
  script: string;
  timezone: string;
}

export interface ScheduledCommandResult {
  exitCode: number;
  /** The container it ran in; "" for a host script. */
  containerId: string;
}

/**
 * Archives a named volume (owned by `owner`) as a gzipped tar straight into a multipart upload
 * of `key`; with `stopService`, the owner's services mounting it are scaled to 0 while it is read.
 */
export interface BackupVolumeCommand {
  jobId: string;
  logStreamId: string;
  volumeName: string;
  owner?: ResourceOwner;
  storage?: ObjectStorage;
  key: string;
  stopService: boolean;
}

export interface BackupVolumeResult {
  sizeBytes: number;
  archiveBytes: number;
  stoppedServices: string[];
}

/** Restores the gzipped tar `key` into a named volume (created with the owner's labels when missing). */
export interface RestoreVolumeCommand {
  jobId: string;
  logStreamId: string;
  volumeName: string;
  owner?: ResourceOwner;
  storage?: ObjectStorage;
  key: string;
}

export interface RestoreVolumeResult {
  sizeBytes: number;
  created: boolean;
  stoppedServices: string[];
}

// ---- clusters (90-99) ------------------------------------------------------------------------

export type ListNodesCommand = Record<string, never>;

export interface NodeList {
  /** Each node as the engine's inspect JSON (Docker's Node object). */
  nodeJson: string[];
  /** The node the agent's own engine is. */
  localNodeId: string;
}

export interface SwarmJoinTokenCommand {
  manager: boolean;
}

/** A secret: passed to the joining agent, never logged or shown. */
export interface SwarmJoinToken {
  token: string;
  /** host:port of the manager's Swarm endpoint. */
  address: string;
  engineVersion: string;
}

export interface JoinSwarmCommand {
  token: string;
  remoteAddress: string;
  advertiseAddress: string;
}

export interface SwarmJoined {
  nodeId: string;
}

export interface UpdateNodeCommand {
  nodeId: string;
  /** active, pause or drain; "" keeps it. */
  availability: string;
  /** worker or manager; "" keeps it. */
  role: string;
  labels: Record<string, string>;
  /** Whether `labels` replaces the node's labels. */
  setLabels: boolean;
}

export interface NodeUpdated {
  nodeJson: string;
}

export interface RemoveNodeCommand {
  nodeId: string;
}

export interface NodeRemoved {
  removed: boolean;
}

export type LeaveSwarmCommand = Record<string, never>;

export interface SwarmLeft {
  left: boolean;
}

/** The `command` oneof: the discriminant names the member that is set. */
export type Command =
  | { command: "ping"; ping: PingCommand }
  | { command: "validateServer"; validateServer: ValidateServerCommand }
  | { command: "securityAudit"; securityAudit: SecurityAuditCommand }
  | { command: "listContainers"; listContainers: ListContainersCommand }
  | { command: "inspectContainer"; inspectContainer: InspectContainerCommand }
  | { command: "restartContainer"; restartContainer: RestartContainerCommand }
  | { command: "buildImage"; buildImage: BuildImageCommand }
  | { command: "deployService"; deployService: DeployServiceCommand }
  | { command: "serviceAction"; serviceAction: ServiceActionCommand }
  | { command: "deployStack"; deployStack: DeployStackCommand }
  | { command: "stackAction"; stackAction: StackActionCommand }
  | { command: "cancelJob"; cancelJob: CancelJobCommand }
  | { command: "cleanBuildCache"; cleanBuildCache: CleanBuildCacheCommand }
  | { command: "registryLogin"; registryLogin: RegistryLoginCommand }
  | { command: "observeServices"; observeServices: ObserveServicesCommand }
  | {
      command: "changeDatabaseCredentials";
      changeDatabaseCredentials: ChangeDatabaseCredentialsCommand;
    }
  | { command: "backupDatabase"; backupDatabase: BackupDatabaseCommand }
  | { command: "restoreDatabase"; restoreDatabase: RestoreDatabaseCommand }
  | { command: "backupVolume"; backupVolume: BackupVolumeCommand }
  | { command: "restoreVolume"; restoreVolume: RestoreVolumeCommand }
  | { command: "keepRollbackImage"; keepRollbackImage: KeepRollbackImageCommand }
  | { command: "rollbackImageStatus"; rollbackImageStatus: RollbackImageStatusCommand }
  | { command: "removeRollbackImages"; removeRollbackImages: RemoveRollbackImagesCommand }
  | { command: "keepStackRollbackImages"; keepStackRollbackImages: KeepStackRollbackImagesCommand }
  | { command: "readRepositoryFile"; readRepositoryFile: ReadRepositoryFileCommand }
  | { command: "containerStats"; containerStats: ContainerStatsCommand }
  | { command: "setupMonitoring"; setupMonitoring: SetupMonitoringCommand }
  | { command: "readContainerMetrics"; readContainerMetrics: ReadContainerMetricsCommand }
  | { command: "writeProxyFile"; writeProxyFile: WriteProxyFileCommand }
  | { command: "readProxyFile"; readProxyFile: ReadProxyFileCommand }
  | { command: "removeProxyFile"; removeProxyFile: RemoveProxyFileCommand }
  | { command: "ensureProxy"; ensureProxy: EnsureProxyCommand }
  | { command: "reloadProxy"; reloadProxy: ReloadProxyCommand }
  | { command: "cleanDocker"; cleanDocker: CleanDockerCommand }
  | { command: "readAccessLog"; readAccessLog: ReadAccessLogCommand }
  | { command: "runSchedule"; runSchedule: RunScheduleCommand }
  | { command: "runHostScript"; runHostScript: RunHostScriptCommand }
  | { command: "listNodes"; listNodes: ListNodesCommand }
  | { command: "swarmJoinToken"; swarmJoinToken: SwarmJoinTokenCommand }
  | { command: "joinSwarm"; joinSwarm: JoinSwarmCommand }
  | { command: "updateNode"; updateNode: UpdateNodeCommand }
  | { command: "removeNode"; removeNode: RemoveNodeCommand }
  | { command: "leaveSwarm"; leaveSwarm: LeaveSwarmCommand };

/**
 * What decoding yields for a request whose command this version does not know (a newer sender).
 * It is never sent; the agent answers it with UNIMPLEMENTED.
 */
export interface UnknownCommand {
  command: "unknown";
}

export type CommandName = Command["command"];

export interface CommandRequestHeader {
  requestId: string;
  serverId: string;
  /** Unix ms after which the agent refuses the command; 0 = no deadline. */
  deadlineUnixMs: number;
}

export type CommandRequest = CommandRequestHeader & (Command | UnknownCommand);

// ---- replies -------------------------------------------------------------------------------

export type ErrorCode =
  | "CODE_UNSPECIFIED"
  | "INVALID_ARGUMENT"
  | "NOT_FOUND"
  | "DEADLINE_EXCEEDED"
  | "UNAVAILABLE"
  | "UNIMPLEMENTED"
  | "INTERNAL"
  | "CANCELLED"
  | "FAILED"
  | "FAILED_PRECONDITION";

export interface AgentErrorBody {
  code: ErrorCode;
  message: string;
}

export interface PingResult {
  agentVersion: string;
  hostname: string;
  timeUnixMs: number;
}

export interface ToolStatus {
  enabled: boolean;
  /** Absent when the tool is missing or its version could not be read (spec: null). */
  version?: string;
}

/** server.validate (spec 2.5). */
export interface ValidateServerResult {
  docker: ToolStatus;
  rclone: ToolStatus;
  nixpacks: ToolStatus;
  buildpacks: ToolStatus;
  railpack: ToolStatus;
  isPlatformNetworkInstalled: boolean;
  isSwarmInstalled: boolean;
  isMainDirectoryInstalled: boolean;
  /** The docker CLI's buildx plugin (absent from agents older than this field). */
  buildx?: ToolStatus;
  /** `docker compose` (v2), else `docker-compose` (v1), for composeType docker-compose (absent from older agents). */
  compose?: ToolStatus;
}

export interface UfwAudit {
  installed: boolean;
  active: boolean;
  defaultIncoming: string;
}

export interface SshAudit {
  enabled: boolean;
  keyAuth: boolean;
  permitRootLogin: string;
  passwordAuth: string;
  usePam: string;
}

export interface NonRootUserAudit {
  hasValidSudoUser: boolean;
}

export interface UnattendedUpgradesAudit {
  installed: boolean;
  active: boolean;
  updateEnabled: number;
  upgradeEnabled: number;
}

export interface Fail2banAudit {
  installed: boolean;
  enabled: boolean;
  active: boolean;
  sshEnabled: string;
  sshMode: string;
}

/** server.security (spec 2.5). */
export interface SecurityAuditResult {
  ufw: UfwAudit;
  ssh: SshAudit;
  nonRootUser: NonRootUserAudit;
  unattendedUpgrades: UnattendedUpgradesAudit;
  fail2ban: Fail2banAudit;
}

export interface ContainerPort {
  ip: string;
  privatePort: number;
  publicPort: number;
  type: string;
}

export interface Container {
  id: string;
  /** Without Docker's leading "/". */
  names: string[];
  image: string;
  imageId: string;
  command: string;
  /** Unix seconds. */
  createdUnix: number;
  state: string;
  status: string;
  labels: Record<string, string>;
  ports: ContainerPort[];
  networks: string[];
}

export interface ContainerList {
  containers: Container[];
}

export interface ContainerConfig {
  id: string;
  name: string;
  /** The Docker Engine's container inspect JSON. */
  inspectJson: string;
}

export interface RestartContainerResult {
  id: string;
  /** State.StartedAt after the restart (RFC 3339). */
  startedAt: string;
}

/** The `result` oneof of CommandReply. */
export type ReplyResult =
  | { result: "error"; error: AgentErrorBody }
  | { result: "ping"; ping: PingResult }
  | { result: "validateServer"; validateServer: ValidateServerResult }
  | { result: "securityAudit"; securityAudit: SecurityAuditResult }
  | { result: "containers"; containers: ContainerList }
  | { result: "containerConfig"; containerConfig: ContainerConfig }
  | { result: "restartContainer"; restartContainer: RestartContainerResult }
  | { result: "buildImage"; buildImage: BuildImageResult }
  | { result: "deployService"; deployService: DeployServiceResult }
  | { result: "serviceAction"; serviceAction: ServiceActionResult }
  | { result: "deployStack"; deployStack: DeployStackResult }
  | { result: "stackAction"; stackAction: StackActionResult }
  | { result: "cancelJob"; cancelJob: CancelJobResult }
  | { result: "cleanBuildCache"; cleanBuildCache: CleanBuildCacheResult }
  | { result: "registryLogin"; registryLogin: RegistryLoginResult }
  | { result: "observedServices"; observedServices: ObservedServices }
  | { result: "databaseCredentialsChanged"; databaseCredentialsChanged: DatabaseCredentialsChanged }
  | { result: "backupDatabase"; backupDatabase: BackupDatabaseResult }
  | { result: "restoreDatabase"; restoreDatabase: RestoreDatabaseResult }
  | { result: "backupVolume"; backupVolume: BackupVolumeResult }
  | { result: "restoreVolume"; restoreVolume: RestoreVolumeResult }
  | { result: "rollbackImageKept"; rollbackImageKept: RollbackImageKept }
  | { result: "rollbackImageStatus"; rollbackImageStatus: RollbackImageStatus }
  | { result: "rollbackImagesRemoved"; rollbackImagesRemoved: RollbackImagesRemoved }
  | { result: "stackRollbackImagesKept"; stackRollbackImagesKept: StackRollbackImagesKept }
  | { result: "repositoryFile"; repositoryFile: RepositoryFile }
  | { result: "containerStats"; containerStats: ContainerStatsList }
  | { result: "monitoringSetUp"; monitoringSetUp: MonitoringSetUp }
  | { result: "containerMetrics"; containerMetrics: ContainerMetricsList }
  | { result: "proxyFileWritten"; proxyFileWritten: ProxyFileWritten }
  | { result: "proxyFile"; proxyFile: ProxyFile }
  | { result: "proxyFileRemoved"; proxyFileRemoved: ProxyFileRemoved }
  | { result: "proxyService"; proxyService: ProxyService }
  | { result: "proxyReloaded"; proxyReloaded: ProxyReloaded }
  | { result: "dockerCleanup"; dockerCleanup: DockerCleanupResult }
  | { result: "accessLogPage"; accessLogPage: AccessLogPage }
  | { result: "scheduleRun"; scheduleRun: ScheduledCommandResult }
  | { result: "hostScript"; hostScript: ScheduledCommandResult }
  | { result: "nodes"; nodes: NodeList }
  | { result: "swarmJoinToken"; swarmJoinToken: SwarmJoinToken }
  | { result: "swarmJoined"; swarmJoined: SwarmJoined }
  | { result: "nodeUpdated"; nodeUpdated: NodeUpdated }
  | { result: "nodeRemoved"; nodeRemoved: NodeRemoved }
  | { result: "swarmLeft"; swarmLeft: SwarmLeft };

export type ReplyResultName = ReplyResult["result"];

export type CommandReply = { requestId: string } & ReplyResult;

/** Which reply result answers which command. */
export interface ResultOfCommand {
  ping: PingResult;
  validateServer: ValidateServerResult;
  securityAudit: SecurityAuditResult;
  listContainers: ContainerList;
  inspectContainer: ContainerConfig;
  restartContainer: RestartContainerResult;
  buildImage: BuildImageResult;
  deployService: DeployServiceResult;
  serviceAction: ServiceActionResult;
  deployStack: DeployStackResult;
  stackAction: StackActionResult;
  cancelJob: CancelJobResult;
  cleanBuildCache: CleanBuildCacheResult;
  registryLogin: RegistryLoginResult;
  observeServices: ObservedServices;
  changeDatabaseCredentials: DatabaseCredentialsChanged;
  backupDatabase: BackupDatabaseResult;
  restoreDatabase: RestoreDatabaseResult;
  backupVolume: BackupVolumeResult;
  restoreVolume: RestoreVolumeResult;
  keepRollbackImage: RollbackImageKept;
  rollbackImageStatus: RollbackImageStatus;
  removeRollbackImages: RollbackImagesRemoved;
  keepStackRollbackImages: StackRollbackImagesKept;
  readRepositoryFile: RepositoryFile;
  containerStats: ContainerStatsList;
  setupMonitoring: MonitoringSetUp;
  readContainerMetrics: ContainerMetricsList;
  writeProxyFile: ProxyFileWritten;
  readProxyFile: ProxyFile;
  removeProxyFile: ProxyFileRemoved;
  ensureProxy: ProxyService;
  reloadProxy: ProxyReloaded;
  cleanDocker: DockerCleanupResult;
  readAccessLog: AccessLogPage;
  runSchedule: ScheduledCommandResult;
  runHostScript: ScheduledCommandResult;
  listNodes: NodeList;
  swarmJoinToken: SwarmJoinToken;
  joinSwarm: SwarmJoined;
  updateNode: NodeUpdated;
  removeNode: NodeRemoved;
  leaveSwarm: SwarmLeft;
}

export const RESULT_NAME_OF_COMMAND = {
  ping: "ping",
  validateServer: "validateServer",
  securityAudit: "securityAudit",
  listContainers: "containers",
  inspectContainer: "containerConfig",
  restartContainer: "restartContainer",
  buildImage: "buildImage",
  deployService: "deployService",
  serviceAction: "serviceAction",
  deployStack: "deployStack",
  stackAction: "stackAction",
  cancelJob: "cancelJob",
  cleanBuildCache: "cleanBuildCache",
  registryLogin: "registryLogin",
  observeServices: "observedServices",
  changeDatabaseCredentials: "databaseCredentialsChanged",
  backupDatabase: "backupDatabase",
  restoreDatabase: "restoreDatabase",
  backupVolume: "backupVolume",
  restoreVolume: "restoreVolume",
  keepRollbackImage: "rollbackImageKept",
  rollbackImageStatus: "rollbackImageStatus",
  removeRollbackImages: "rollbackImagesRemoved",
  keepStackRollbackImages: "stackRollbackImagesKept",
  readRepositoryFile: "repositoryFile",
  containerStats: "containerStats",
  setupMonitoring: "monitoringSetUp",
  readContainerMetrics: "containerMetrics",
  writeProxyFile: "proxyFileWritten",
  readProxyFile: "proxyFile",
  removeProxyFile: "proxyFileRemoved",
  ensureProxy: "proxyService",
  reloadProxy: "proxyReloaded",
  cleanDocker: "dockerCleanup",
  readAccessLog: "accessLogPage",
  runSchedule: "scheduleRun",
  runHostScript: "hostScript",
  listNodes: "nodes",
  swarmJoinToken: "swarmJoinToken",
  joinSwarm: "swarmJoined",
  updateNode: "nodeUpdated",
  removeNode: "nodeRemoved",
  leaveSwarm: "swarmLeft",
} as const satisfies Record<CommandName, Exclude<ReplyResultName, "error">>;

// ---- messages the agent sends on its own ---------------------------------------------------

export interface Heartbeat {
  serverId: string;
  agentVersion: string;
  hostname: string;
  sentAtUnixMs: number;
  dockerReachable: boolean;
  dockerVersion: string;
  /** Swarm LocalNodeState ("inactive", "active", ...); "" when unknown. */
  swarmState: string;
}

export interface AgentEvent {
  serverId: string;
  kind: string;
  timeUnixMs: number;
  attributes: Record<string, string>;
}

export interface StreamLogsRequest {
  serverId: string;
  streamId: string;
  containerId: string;
  follow: boolean;
  tailLines: number;
  sinceUnixMs: number;
}

export interface LogChunk {
  streamId: string;
  seq: number;
  data: Uint8Array;
  final: boolean;
}
