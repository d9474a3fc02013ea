/**
 * Codec tests: every message survives an encode/decode round trip with all of its fields set,
 * the samples together set every field of proto/agent.proto (so messages.ts cannot fall behind
 * the .proto), and unknown or malformed input decodes to the documented fallbacks.
 */
import protobuf from "protobufjs";
import { describe, expect, it } from "vitest";
import {
  agentProtoRoot,
  decodeCommandReply,
  decodeCommandRequest,
  decodeEvent,
  decodeHeartbeat,
  decodeLogChunk,
  decodeStreamLogsRequest,
  encodeCommandReply,
  encodeCommandRequest,
  encodeEvent,
  encodeHeartbeat,
  encodeLogChunk,
  encodeStreamLogsRequest,
  messageType,
  ProtocolDecodeError,
} from "./codec.ts";
import type {
  AgentEvent,
  CommandReply,
  CommandRequest,
  Heartbeat,
  LogChunk,
  StreamLogsRequest,
} from "./messages.ts";

const header = { requestId: "r-1", serverId: "srv-1", deadlineUnixMs: 1_900_000_000_123 };

const requests: CommandRequest[] = [
  { ...header, command: "ping", ping: {} },
  { ...header, command: "validateServer", validateServer: {} },
  { ...header, command: "securityAudit", securityAudit: {} },
  {
    ...header,
    command: "listContainers",
    listContainers: {
      all: true,
      nameMatch: "web",
      labels: { "com.example.app": "shop", tier: "" },
      swarmServiceName: "shop_web",
      stackNamespace: "shop",
      composeProject: "shop-compose",
    },
  },
  {
    ...header,
    command: "inspectContainer",
    inspectContainer: {
      containerId: "abc123",
      scope: { organizationId: "org-1", includeUnmanaged: true },
    },
  },
  {
    ...header,
    command: "restartContainer",
    restartContainer: {
      containerId: "web-1",
      stopTimeoutSeconds: 5,
      scope: { organizationId: "org-1", includeUnmanaged: false },
    },
  },
  {
    ...header,
    command: "buildImage",
    buildImage: {
      jobId: "d-1",
      logStreamId: "d-1",
      appName: "web",
      imageName: "platform/web:d-1",
      git: {
        url: "https://git.example.com/a/b.git",
        branch: "main",
        sshPrivateKey: "-----BEGIN OPENSSH PRIVATE KEY-----",
        httpUsername: "x-access-token",
        httpPassword: "t0k3n",
        enableSubmodules: true,
      },
      buildType: "dockerfile",
      buildPath: "app",
      dockerfile: "Dockerfile",
      dockerContextPath: ".",
      dockerBuildStage: "runtime",
      buildArgs: { NODE_ENV: "production" },
      buildSecrets: { NPM_TOKEN: "s3cr3t" },
      publishDirectory: "dist",
      isStaticSpa: true,
      noCache: true,
      herokuVersion: "24",
      railpackVersion: "0.1.0",
      pushRegistry: { serverAddress: "127.0.0.1:5000", username: "u", password: "p" },
      pushImagePrefix: "team",
      rollbackRegistry: { serverAddress: "registry.example.com", username: "r", password: "rp" },
      rollbackImagePrefix: "rollbacks",
    },
  },
  {
    ...header,
    command: "buildImage",
    buildImage: {
      jobId: "d-2",
      logStreamId: "d-2",
      appName: "web",
      imageName: "platform/web:d-2",
      archive: { url: "http://127.0.0.1:3000/agent/artifacts/x", format: "zip", sha256: "ab".repeat(32) },
      buildType: "static",
      // Scalars and maps left at their defaults, as decoding gives them.
      buildPath: "",
      dockerfile: "",
      dockerContextPath: "",
      dockerBuildStage: "",
      buildArgs: {},
      buildSecrets: {},
      publishDirectory: "",
      isStaticSpa: false,
      noCache: false,
      herokuVersion: "",
      railpackVersion: "",
      pushImagePrefix: "",
      rollbackImagePrefix: "",
      owner: { organizationId: "org1", resource: "application:app1" },
    },
  },
  {
    ...header,
    command: "deployService",
    deployService: {
      jobId: "d-1",
      logStreamId: "d-1",
      spec: {
        name: "web",
        image: "platform/web:d-1",
        env: ["A=1"],
        command: ["node"],
        args: ["server.js"],
        replicas: 2,
        labels: { "platform.appName": "web" },
        networks: ["platform-network"],
        ports: [{ publishedPort: 18080, targetPort: 80, protocol: "tcp", publishMode: "host" }],
        memoryLimitBytes: 268_435_456,
        memoryReservationBytes: 134_217_728,
        nanoCpusLimit: 1_000_000_000,
        nanoCpusReservation: 500_000_000,
        healthCheck: {
          test: ["CMD-SHELL", "wget -q -O- localhost"],
          intervalNs: 1_000_000_000,
          timeoutNs: 2_000_000_000,
          startPeriodNs: 3_000_000_000,
          retries: 3,
        },
        restartPolicy: { condition: "on-failure", delayNs: 5, maxAttempts: 3, windowNs: 7 },
        mounts: [
          { type: "volume", source: "data", target: "/data", readOnly: true, content: "" },
          {
            type: "file",
            source: "conf/app.conf",
            target: "/etc/app.conf",
            readOnly: false,
            content: "x=1\n",
          },
        ],
        files: { "/app/.env": "A=1\n" },
        swarmSettingsJson: JSON.stringify({ Placement: { Constraints: ["node.role==manager"] } }),
      },
      registryAuth: { serverAddress: "127.0.0.1:5000", username: "u", password: "p" },
      waitSeconds: 60,
      owner: { organizationId: "org1", resource: "application:app1" },
    },
  },
  {
    ...header,
    command: "serviceAction",
    serviceAction: {
      serviceName: "web",
      action: "REMOVE",
      replicas: 2,
      owner: { organizationId: "org1", resource: "database:db1" },
      removeVolumes: ["web-data"],
    },
  },
  {
    ...header,
    command: "observeServices",
    observeServices: {
      serviceNames: ["web", "api"],
      jobIds: ["d-1"],
      owners: {
        web: { organizationId: "org-1", resource: "application:a-1" },
        api: { organizationId: "org-1", resource: "application:a-2" },
      },
    },
  },
  {
    ...header,
    command: "changeDatabaseCredentials",
    changeDatabaseCredentials: {
      serviceName: "orders-db",
      owner: { organizationId: "org1", resource: "database:db1" },
      engine: "MARIADB",
      adminUser: "root",
      adminPassword: "old",
      user: "shop",
      newUser: "store",
      newPassword: "new",
      database: "orders",
    },
  },
  {
    ...header,
    command: "deployStack",
    deployStack: {
      jobId: "d-9",
      logStreamId: "d-9",
      appName: "shop",
      composeType: "stack",
      composeFile: "services:\n  web:\n    image: nginx\n",
      registryAuth: [{ serverAddress: "registry.example.com", username: "u", password: "p" }],
      owner: { organizationId: "org1", resource: "compose:c1" },
      waitSeconds: 120,
      files: [{ filePath: "nginx/site.conf", content: "server {}\n" }],
      git: {
        url: "https://git.example.com/acme/shop.git",
        branch: "main",
        sshPrivateKey: "-----BEGIN OPENSSH PRIVATE KEY-----",
        httpUsername: "x-access-token",
        httpPassword: "token",
        enableSubmodules: true,
      },
      composePath: "deploy/docker-compose.yml",
    },
  },
  {
    ...header,
    command: "stackAction",
    stackAction: {
      appName: "shop",
      composeType: "docker-compose",
      action: "REMOVE",
      owner: { organizationId: "org1", resource: "compose:c1" },
      removeVolumes: true,
    },
  },
  { ...header, command: "cancelJob", cancelJob: { jobId: "d-1" } },
  {
    ...header,
    command: "runSchedule",
    runSchedule: {
      jobId: "d-9",
      logStreamId: "d-9-schedule",
      owner: { organizationId: "org-1", resource: "compose:c-1" },
      swarmServiceName: "shop_web",
      composeProject: "shop",
      composeService: "web",
      shell: "sh",
      command: "echo $HOME; ls | wc -l",
      timezone: "Europe/Paris",
    },
  },
  {
    ...header,
    command: "backupVolume",
    backupVolume: {
      jobId: "d-4",
      logStreamId: "d-4-volume",
      volumeName: "shop-data",
      owner: { organizationId: "org-1", resource: "application:a-1" },
      storage: {
        endpoint: "http://127.0.0.1:9000",
        region: "us-east-1",
        bucket: "backups",
        accessKey: "AK",
        secretAccessKey: "SK",
      },
      key: "volumes/shop-data-2026-11-29T06-00-00.000Z.tar.gz",
      stopService: true,
    },
  },
  {
    ...header,
    command: "runHostScript",
    runHostScript: {
      jobId: "d-10",
      logStreamId: "d-10-schedule",
      shell: "bash",
      script: "df -h",
      timezone: "UTC",
    },
  },
  {
    ...header,
    command: "restoreVolume",
    restoreVolume: {
      jobId: "d-5",
      logStreamId: "d-5-volume",
      volumeName: "shop-data-restored",
      owner: { organizationId: "org-1", resource: "application:a-1" },
      storage: {
        endpoint: "http://127.0.0.1:9000",
        region: "us-east-1",
        bucket: "backups",
        accessKey: "AK",
        secretAccessKey: "SK",
      },
      key: "volumes/shop-data.tar.gz",
    },
  },
  {
    ...header,
    command: "backupDatabase",
    backupDatabase: {
      jobId: "d-2",
      logStreamId: "d-2-backup",
      serviceName: "pg-1",
      owner: { organizationId: "org-1", resource: "database:db-1" },
      database: { kind: "postgres", databaseName: "app", user: "app", password: "secret" },
      storage: {
        endpoint: "http://127.0.0.1:9000",
        region: "us-east-1",
        bucket: "backups",
        accessKey: "AK",
        secretAccessKey: "SK",
      },
      key: "daily/app-2026-11-27T06-00-00.000Z.dump.gz",
    },
  },
  {
    ...header,
    command: "restoreDatabase",
    restoreDatabase: {
      jobId: "d-3",
      logStreamId: "d-3-restore",
      serviceName: "pg-1",
      owner: { organizationId: "org-1", resource: "database:db-1" },
      database: { kind: "postgres", databaseName: "app", user: "app", password: "secret" },
      storage: {
        endpoint: "http://127.0.0.1:9000",
        region: "us-east-1",
        bucket: "backups",
        accessKey: "AK",
        secretAccessKey: "SK",
      },
      key: "daily/app.dump.gz",
      throwaway: {
        image: "postgres:18",
        env: ["POSTGRES_PASSWORD=x"],
        command: ["docker-entrypoint.sh"],
        args: ["postgres"],
        checkTable: "orders",
      },
    },
  },
  { ...header, command: "cleanBuildCache", cleanBuildCache: {} },
  {
    ...header,
    command: "keepRollbackImage",
    keepRollbackImage: {
      sourceImage: "platform/app:d-1",
      image: "platform-rollback/app:d-1",
      registry: { serverAddress: "127.0.0.1:5000", username: "u", password: "p" },
      imagePrefix: "team",
    },
  },
  {
    ...header,
    command: "readRepositoryFile",
    readRepositoryFile: {
      git: {
        url: "https://git.example.com/acme/shop.git",
        branch: "main",
        sshPrivateKey: "-----BEGIN OPENSSH PRIVATE KEY-----",
        httpUsername: "x-access-token",
        httpPassword: "token",
        enableSubmodules: true,
      },
      path: "deploy/docker-compose.yml",
    },
  },
  {
    ...header,
    command: "rollbackImageStatus",
    rollbackImageStatus: { image: "platform-rollback/app:d-1" },
  },
  {
    ...header,
    command: "removeRollbackImages",
    removeRollbackImages: { images: ["platform-rollback/app:d-1", "platform-rollback/app:d-2"] },
  },
  {
    ...header,
    command: "keepStackRollbackImages",
    keepStackRollbackImages: {
      appName: "shop",
      composeType: "stack",
      owner: { organizationId: "org-1", resource: "compose:c-1" },
      tag: "d-1",
    },
  },
  {
    ...header,
    command: "readAccessLog",
    readAccessLog: {
      page: 2,
      pageSize: 50,
      search: "/api",
      status: ["4xx", "success"],
      startUnixMs: 1_700_000_000_000,
      endUnixMs: 1_700_000_100_000,
      sortField: "duration",
      sortDescending: true,
    },
  },
  {
    ...header,
    command: "cleanDocker",
    cleanDocker: {
      containers: true,
      images: true,
      volumes: true,
      buildCache: true,
      organizationId: "org-1",
      wholeEngine: true,
    },
  },
  {
    ...header,
    command: "registryLogin",
    registryLogin: { auth: { serverAddress: "127.0.0.1:5000", username: "u", password: "p" } },
  },
  {
    ...header,
    command: "writeProxyFile",
    writeProxyFile: {
      scope: "dynamic",
      fileName: "web.yml",
      content: "http: {}\n",
      owner: { organizationId: "org-1", resource: "application:a-1" },
      platformFile: false,
    },
  },
  {
    ...header,
    command: "readProxyFile",
    readProxyFile: {
      scope: "dynamic",
      fileName: "web.yml",
      owner: { organizationId: "org-1", resource: "application:a-1" },
      platformFile: false,
    },
  },
  {
    ...header,
    command: "removeProxyFile",
    removeProxyFile: {
      scope: "certificate",
      fileName: "web-1.crt",
      owner: { organizationId: "org-1", resource: "application:a-1" },
      platformFile: false,
    },
  },
  {
    ...header,
    command: "ensureProxy",
    ensureProxy: {
      image: "traefik:v3",
      staticConfig: "entryPoints: {}\n",
      dashboard: true,
      httpPort: 80,
      httpsPort: 443,
      dashboardPort: 8080,
    },
  },
  { ...header, command: "reloadProxy", reloadProxy: {} },
  { ...header, command: "listNodes", listNodes: {} },
  { ...header, command: "swarmJoinToken", swarmJoinToken: { manager: true } },
  {
    ...header,
    command: "joinSwarm",
    joinSwarm: { token: "SWMTKN-1-abc-def", remoteAddress: "10.0.0.2:2377", advertiseAddress: "10.0.0.3" },
  },
  {
    ...header,
    command: "updateNode",
    updateNode: {
      nodeId: "n1",
      availability: "drain",
      role: "manager",
      labels: { zone: "a" },
      setLabels: true,
    },
  },
  { ...header, command: "removeNode", removeNode: { nodeId: "n1" } },
  { ...header, command: "leaveSwarm", leaveSwarm: {} },
  {
    ...header,
    command: "containerStats",
    containerStats: {
      swarmServiceName: "web",
      owner: { organizationId: "org-1", resource: "application:a-1" },
    },
  },
  { ...header, command: "setupMonitoring", setupMonitoring: { metricsConfigJson: '{"server":{}}' } },
  {
    ...header,
    command: "readContainerMetrics",
    readContainerMetrics: { appName: "web", limit: 10, organizationId: "org-1" },
  },
];

const tool = (version: string) => ({ enabled: true, version });

const replies: CommandReply[] = [
  { requestId: "r-1", result: "error", error: { code: "NOT_FOUND", message: "no such container" } },
  {
    requestId: "r-1",
    result: "ping",
    ping: { agentVersion: "0.1.0", hostname: "h", timeUnixMs: 1_700_000_000_000 },
  },
  {
    requestId: "r-1",
    result: "validateServer",
    validateServer: {
      docker: tool("27.0.1"),
      rclone: tool("1.60.1"),
      nixpacks: tool("1.29.0"),
      buildpacks: tool("0.35.1"),
      railpack: tool("0.0.64"),
      buildx: tool("0.10.4"),
      compose: tool("1.29.2"),
      isPlatformNetworkInstalled: true,
      isSwarmInstalled: true,
      isMainDirectoryInstalled: true,
    },
  },
  {
    requestId: "r-1",
    result: "securityAudit",
    securityAudit: {
      ufw: { installed: true, active: true, defaultIncoming: "deny" },
      ssh: { enabled: true, keyAuth: true, permitRootLogin: "no", passwordAuth: "no", usePam: "yes" },
      nonRootUser: { hasValidSudoUser: true },
      unattendedUpgrades: { installed: true, active: true, updateEnabled: 1, upgradeEnabled: 1 },
      fail2ban: { installed: true, enabled: true, active: true, sshEnabled: "true", sshMode: "aggressive" },
    },
  },
  {
    requestId: "r-1",
    result: "containers",
    containers: {
      containers: [
        {
          id: "c1",
          names: ["web-1"],
          image: "platform-test/busybox:latest",
          imageId: "sha256:abc",
          command: "httpd -f",
          createdUnix: 1_700_000_000,
          state: "running",
          status: "Up 2 minutes",
          labels: { a: "b" },
          ports: [{ ip: "127.0.0.1", privatePort: 8080, publicPort: 18080, type: "tcp" }],
          networks: ["bridge"],
        },
      ],
    },
  },
  {
    requestId: "r-1",
    result: "containerConfig",
    containerConfig: { id: "c1", name: "web-1", inspectJson: "{}" },
  },
  {
    requestId: "r-1",
    result: "restartContainer",
    restartContainer: { id: "c1", startedAt: "2025-01-01T00:00:00.000000000Z" },
  },
  {
    requestId: "r-1",
    result: "buildImage",
    buildImage: {
      imageName: "platform/web:d-1",
      imageId: "sha256:def",
      pushedImage: "127.0.0.1:5000/team/web:d-1",
      commitHash: "0123abc",
      commitMessage: "Fix",
      rollbackImage: "registry.example.com/rollbacks/web:d-1",
    },
  },
  {
    requestId: "r-1",
    result: "deployService",
    deployService: { serviceId: "svc1", created: true, runningTasks: 2 },
  },
  {
    requestId: "r-1",
    result: "serviceAction",
    serviceAction: { found: true, volumesRemoved: ["web-data"], volumesKept: ["other-data"] },
  },
  {
    requestId: "r-1",
    result: "deployStack",
    deployStack: {
      services: [{ name: "shop_web", runningTasks: 1, desiredTasks: 2, error: "no suitable node" }],
    },
  },
  {
    requestId: "r-1",
    result: "stackAction",
    stackAction: {
      found: true,
      services: [{ name: "shop_web", runningTasks: 0, desiredTasks: 0, error: "task exited" }],
      volumesRemoved: ["shop_data"],
      kept: ["shop_other"],
    },
  },
  { requestId: "r-1", result: "backupDatabase", backupDatabase: { sizeBytes: 1024, dumpBytes: 4096 } },
  { requestId: "r-1", result: "scheduleRun", scheduleRun: { exitCode: 3, containerId: "0123456789ab" } },
  { requestId: "r-1", result: "hostScript", hostScript: { exitCode: 1, containerId: "" } },
  {
    requestId: "r-1",
    result: "backupVolume",
    backupVolume: { sizeBytes: 512, archiveBytes: 10240, stoppedServices: ["shop-web"] },
  },
  {
    requestId: "r-1",
    result: "restoreVolume",
    restoreVolume: { sizeBytes: 512, created: true, stoppedServices: ["shop-web"] },
  },
  {
    requestId: "r-1",
    result: "restoreDatabase",
    restoreDatabase: { sizeBytes: 1024, check: "3 rows in orders", rows: 3 },
  },
  {
    requestId: "r-1",
    result: "databaseCredentialsChanged",
    databaseCredentialsChanged: { containerId: "abc", serviceUpdated: true },
  },
  {
    requestId: "r-1",
    result: "observedServices",
    observedServices: {
      services: [
        {
          name: "web",
          found: true,
          deploymentId: "d-2",
          previousDeploymentId: "d-1",
          image: "platform/web:d-2",
          updateState: "rollback_completed",
          updateMessage: "rollback completed",
          desiredReplicas: 2,
          runningTasks: 1,
          taskError: "port is already allocated",
          outdatedTasks: 1,
          taskErrorDeploymentId: "d-2",
          ownerMismatch: true,
        },
      ],
      activeJobs: ["d-2"],
    },
  },
  { requestId: "r-1", result: "cancelJob", cancelJob: { cancelled: true, runsOn: true } },
  { requestId: "r-1", result: "cleanBuildCache", cleanBuildCache: { reclaimedBytes: 1024 } },
  {
    requestId: "r-1",
    result: "rollbackImageKept",
    rollbackImageKept: { imageId: "sha256:abc", pushedImage: "127.0.0.1:5000/team/app:d-1" },
  },
  {
    requestId: "r-1",
    result: "repositoryFile",
    repositoryFile: { content: "services: {}\n", commit: "a".repeat(40) },
  },
  {
    requestId: "r-1",
    result: "rollbackImageStatus",
    rollbackImageStatus: { exists: true, imageId: "sha256:abc" },
  },
  {
    requestId: "r-1",
    result: "rollbackImagesRemoved",
    rollbackImagesRemoved: { removed: ["platform-rollback/app:d-1"] },
  },
  {
    requestId: "r-1",
    result: "stackRollbackImagesKept",
    stackRollbackImagesKept: {
      images: [{ service: "web", image: "platform-rollback/shop-web:d-1", imageId: "sha256:abc" }],
    },
  },
  { requestId: "r-1", result: "registryLogin", registryLogin: { status: "Login Succeeded" } },
  {
    requestId: "r-1",
    result: "proxyFileWritten",
    proxyFileWritten: { path: "/etc/platform/traefik/dynamic/web.yml" },
  },
  { requestId: "r-1", result: "proxyFile", proxyFile: { exists: true, content: "http: {}\n" } },
  { requestId: "r-1", result: "proxyFileRemoved", proxyFileRemoved: { removed: true } },
  { requestId: "r-1", result: "proxyService", proxyService: { serviceId: "svc2", created: false } },
  { requestId: "r-1", result: "proxyReloaded", proxyReloaded: { found: true } },
  { requestId: "r-1", result: "nodes", nodes: { nodeJson: ['{"ID":"n1"}'], localNodeId: "n1" } },
  {
    requestId: "r-1",
    result: "swarmJoinToken",
    swarmJoinToken: { token: "SWMTKN-1-abc-def", address: "10.0.0.2:2377", engineVersion: "28.2.2" },
  },
  { requestId: "r-1", result: "swarmJoined", swarmJoined: { nodeId: "n2" } },
  { requestId: "r-1", result: "nodeUpdated", nodeUpdated: { nodeJson: '{"ID":"n1"}' } },
  { requestId: "r-1", result: "nodeRemoved", nodeRemoved: { removed: true } },
  { requestId: "r-1", result: "swarmLeft", swarmLeft: { left: true } },
  {
    requestId: "r-1",
    result: "accessLogPage",
    accessLogPage: {
      entries: [
        {
          timestamp: "2026-11-24T10:00:00Z",
          method: "GET",
          path: "/",
          status: 200,
          duration: 1_500_000,
          ip: "203.0.113.7",
          userAgent: "curl/8.5.0",
          host: "shop.example.com",
        },
      ],
      totalCount: 1,
      exists: true,
    },
  },
  {
    requestId: "r-1",
    result: "dockerCleanup",
    dockerCleanup: {
      reclaimedBytes: 4096,
      containersDeleted: 1,
      imagesDeleted: 2,
      volumesDeleted: 3,
      buildCacheReclaimedBytes: 512,
    },
  },
  { requestId: "r-1", result: "error", error: { code: "CANCELLED", message: "stopped" } },
  { requestId: "r-1", result: "monitoringSetUp", monitoringSetUp: { port: 4500 } },
  {
    requestId: "r-1",
    result: "containerMetrics",
    containerMetrics: { recordsJson: "[]", monitoringEnabled: true },
  },
  {
    requestId: "r-1",
    result: "containerStats",
    containerStats: {
      containers: [
        {
          id: "c1",
          name: "web.1.abc",
          status: "Up 2 minutes",
          startedAtUnixMs: 1_700_000_000_000,
          cpuPercent: 12.5,
          memoryUsageBytes: 1_048_576,
          memoryLimitBytes: 268_435_456,
          networkRxBytes: 2048,
          networkTxBytes: 1024,
        },
      ],
    },
  },
];

const heartbeat: Heartbeat = {
  serverId: "srv-1",
  agentVersion: "0.1.0",
  hostname: "host-a",
  sentAtUnixMs: 1_700_000_000_000,
  dockerReachable: true,
  dockerVersion: "27.0.1",
  swarmState: "active",
};
const event: AgentEvent = {
  serverId: "srv-1",
  kind: "container.die",
  timeUnixMs: 5,
  attributes: { id: "c1" },
};
const logChunk: LogChunk = { streamId: "s1", seq: 7, data: new Uint8Array([104, 105]), final: true };
const streamLogs: StreamLogsRequest = {
  serverId: "srv-1",
  streamId: "s1",
  containerId: "c1",
  follow: true,
  tailLines: 100,
  sinceUnixMs: 1_700_000_000_000,
};

/** Adds "Type.field" for every field set (non-default) in `value`, recursing into messages. */
function collectSetFields(type: protobuf.Type, value: Record<string, unknown>, into: Set<string>): void {
  for (const field of type.fieldsArray) {
    const fieldValue = value[field.name];
    if (fieldValue === undefined || fieldValue === null) continue;
    into.add(`${type.name}.${field.name}`);
    field.resolve();
    if (field.resolvedType instanceof protobuf.Type) {
      const items = field.map
        ? Object.values(fieldValue as object)
        : field.repeated
          ? (fieldValue as unknown[])
          : [fieldValue];
      for (const item of items) collectSetFields(field.resolvedType, item as Record<string, unknown>, into);
    }
  }
}

function allFields(): Set<string> {
  const names = new Set<string>();
  const visit = (namespace: protobuf.NamespaceBase) => {
    for (const nested of namespace.nestedArray) {
      if (nested instanceof protobuf.Type)
        for (const field of nested.fieldsArray) names.add(`${nested.name}.${field.name}`);
      if (nested instanceof protobuf.Namespace) visit(nested);
    }
  };
  visit(agentProtoRoot);
  return names;
}

describe("codec", () => {
  it("round-trips every command request", () => {
    for (const request of requests)
      expect(decodeCommandRequest(encodeCommandRequest(request))).toEqual(request);
  });

  it("round-trips every reply", () => {
    for (const reply of replies) expect(decodeCommandReply(encodeCommandReply(reply))).toEqual(reply);
  });

  it("round-trips heartbeats, events, log chunks and log stream requests", () => {
    expect(decodeHeartbeat(encodeHeartbeat(heartbeat))).toEqual(heartbeat);
    expect(decodeEvent(encodeEvent(event))).toEqual(event);
    const chunk = decodeLogChunk(encodeLogChunk(logChunk));
    expect({ ...chunk, data: new Uint8Array(chunk.data) }).toEqual(logChunk);
    expect(decodeStreamLogsRequest(encodeStreamLogsRequest(streamLogs))).toEqual(streamLogs);
  });

  it("the samples set every field of agent.proto, so messages.ts covers the whole contract", () => {
    const seen = new Set<string>();
    for (const request of requests) collectSetFields(messageType("CommandRequest"), request as never, seen);
    for (const reply of replies) collectSetFields(messageType("CommandReply"), reply as never, seen);
    collectSetFields(messageType("Heartbeat"), heartbeat as never, seen);
    collectSetFields(messageType("Event"), event as never, seen);
    collectSetFields(messageType("LogChunk"), logChunk as never, seen);
    collectSetFields(messageType("StreamLogsRequest"), streamLogs as never, seen);
    const missing = [...allFields()].filter((name) => !seen.has(name));
    expect(missing).toEqual([]);
  });

  it("leaves an absent tool version out (the API shows it as null)", () => {
    const reply: CommandReply = {
      requestId: "r",
      result: "validateServer",
      validateServer: {
        docker: { enabled: false },
        rclone: { enabled: false },
        nixpacks: { enabled: false },
        buildpacks: { enabled: false },
        railpack: { enabled: false },
        isPlatformNetworkInstalled: false,
        isSwarmInstalled: false,
        isMainDirectoryInstalled: false,
      },
    };
    const decoded = decodeCommandReply(encodeCommandReply(reply));
    expect(decoded).toEqual(reply);
    expect(decoded.result === "validateServer" && "version" in decoded.validateServer.docker).toBe(false);
  });

  it("decodes a request without a known command as command 'unknown'", () => {
    const bytes = encodeCommandRequest({ ...header, command: "unknown" });
    expect(decodeCommandRequest(bytes)).toEqual({ ...header, command: "unknown" });
  });

  it("decodes a reply without a known result as an UNIMPLEMENTED error", () => {
    const bytes = messageType("CommandReply").encode({ requestId: "r-9" }).finish();
    expect(decodeCommandReply(bytes)).toEqual({
      requestId: "r-9",
      result: "error",
      error: { code: "UNIMPLEMENTED", message: expect.any(String) },
    });
  });

  it("refuses bytes that are not a message", () => {
    expect(() => decodeCommandRequest(new Uint8Array([0xff, 0xff, 0xff, 0xff]))).toThrow(ProtocolDecodeError);
  });
});
