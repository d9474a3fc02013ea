/**
 * The generated attack suite: every procedure of the registry (allRouters) is attacked without
 * anyone listing it. Two organizations hold the same set of objects; each procedure is called
 * - without credentials (401),
 * - by a plain member when it needs more than `member` access (403),
 * - by the other organization's owner with the victim's ids, one id field at a time among its
 *   own ids (404), and the victim's rows in the database must be unchanged afterwards,
 * and no answer to the attacker may carry an id of the victim that the attacker did not send.
 * Inside our organization, a member granted one service (accessedServices) and every flag calls
 * every member procedure with the ids of our services they were not granted, one id field at a
 * time (404, nothing changed, no ungranted id in any answer). Every procedure with a host port
 * field (HOST_PORT_FIELDS) is called with every port servers/host-ports.ts reserves (400).
 *
 * Inputs are sampled from each procedure's zod schema (z.toJSONSchema); fields whose format a
 * JSON Schema cannot express take a value from FIELD_SAMPLES. A procedure whose sampled input is
 * refused with a 400 fails the suite with the field to add there, so no procedure is skipped.
 */

import { createHmac } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { newId } from "../../apps/control-plane/src/crypto/ids.ts";
import type { GitProviderType } from "../../apps/control-plane/src/db/schema.ts";
import { insertProvider, PROVIDER_ID_FIELD } from "../../apps/control-plane/src/git-providers/repository.ts";
import { KINDS } from "../../apps/control-plane/src/notifications/kinds.ts";
import type { AnyProcedure } from "../../apps/control-plane/src/procedure.ts";
import { createUserDirectly } from "../../apps/control-plane/src/projects/test-support.ts";
import { allRouters } from "../../apps/control-plane/src/routers/index.ts";
import { reservedHostPorts } from "../../apps/control-plane/src/servers/host-ports.ts";
import {
  type Session,
  startTestPlatform,
  type TestPlatform,
} from "../../apps/control-plane/src/testing/harness.ts";

/** Id kinds, matched against the end of a field name (`sourceEnvironmentId` is an environment). */
const ID_KINDS = [
  "environmentId",
  "registryId",
  "projectId",
  "applicationId",
  // A compose stack of the fixture's environment (compose.*, and every procedure naming one).
  "composeId",
  "domainId",
  "portId",
  "securityId",
  "redirectId",
  // A patch of the fixture's application (patch.*).
  "patchId",
  "sshKeyId",
  "serverId",
  // Before deploymentId: idKindOf takes the first kind the field name ends with.
  "previewDeploymentId",
  "deploymentId",
  "invitationId",
  "apiKeyId",
  "memberId",
  "userId",
  "organizationId",
  "postgresId",
  "mysqlId",
  "mariadbId",
  "mongoId",
  "redisId",
  "libsqlId",
  "mountId",
  "rollbackId",
  // mounts.create's serviceId (serviceType defaults to application): an application's id.
  "serviceId",
  "notificationId",
  "destinationId",
  // volumeBackups.*: a volume backup of the fixture's application volume (before backupId,
  // which its name ends with).
  "volumeBackupId",
  "backupId",
  // Git provider connections: the kind's own id and the connection's gitProviderId.
  "githubId",
  "gitlabId",
  "bitbucketId",
  "giteaId",
  "gitProviderId",
  "certificateId",
  // backup.restoreBackupWithLogs's database (of its databaseType): the fixture's postgres.
  "databaseId",
  // A scheduled job of the fixture's application (schedule.*).
  "scheduleId",
  // An organization network (network.*), a row of this machine without an engine network.
  "networkId",
  // A tag of the organization (tag.*), assigned to the fixture's project.
  "tagId",
  // A secret vault of the organization (vaultProvider.*), enabled for the fixture's project.
  "vaultProviderId",
  // A DNS provider of the organization (dnsProvider.*, domain.create/update's dnsProviderId).
  "dnsProviderId",
  // An OIDC provider of the organization for forward auth (forwardAuth.*), used by no service.
  "providerId",
  // A live sign-in session of the fixture's user (user.revokeSession), not the one the suite calls with.
  "sessionId",
] as const;
type IdKind = (typeof ID_KINDS)[number];

/** Ids of a service, or of a record that belongs to one service: what accessedServices restricts. */
const SERVICE_ID_KINDS = [
  "applicationId",
  // A compose stack of the fixture's environment (compose.*, and every procedure naming one).
  "composeId",
  "domainId",
  "portId",
  "securityId",
  "redirectId",
  "patchId",
  "deploymentId",
  "postgresId",
  "mysqlId",
  "mariadbId",
  "mongoId",
  "redisId",
  "libsqlId",
  "mountId",
  "rollbackId",
  "previewDeploymentId",
  "serviceId",
  "databaseId",
  "scheduleId",
  "volumeBackupId",
] as const satisfies readonly IdKind[];
type ServiceIdKind = (typeof SERVICE_ID_KINDS)[number];
const isServiceIdKind = (kind: IdKind): kind is ServiceIdKind =>
  (SERVICE_ID_KINDS as readonly IdKind[]).includes(kind);

/**
 * Input fields that publish a port on a server's host (servers/host-ports.ts claims them), and
 * the other fields named `…port`, which never take a host port. A new `…port` field must be
 * put in one of the two (checked below), so a procedure that publishes a host port is attacked
 * with every reserved port.
 */
const HOST_PORT_FIELDS = new Set(["publishedPort", "externalPort", "externalGRPCPort", "externalAdminPort"]);
const NOT_HOST_PORT_FIELDS = new Set([
  "targetPort", // the container's port behind a published one
  "previewPort", // the container port a preview deployment's domain routes to
  "port", // a domain's container port, a server's SSH port, the agent's metrics port (admins)
  // endpointSpecSwarm.Ports (Dokploy's shape): stored, never applied; deployments/service-spec.ts
  // applies only its Mode. The day Ports are applied, PublishedPort becomes a host port field.
  "TargetPort",
  "PublishedPort",
  "smtpPort", // an Email channel's SMTP server port (outbound, through the guard)
]);

/**
 * Fields ending in `Id` that name no record of ours: Docker's container ids (docker.* is
 * attacked in routers/docker.test.ts and, for start/stop/kill/remove, the file procedures and
 * getEvents, agents/container-operations.test.ts), and others' own ids. A field naming a record of
 * ours belongs in ID_KINDS with a fixture.
 */
const NOT_RECORD_IDS = new Set([
  "containerId",
  // Cloudflare's own zone and record ids (dnsProvider.*): reached only through the provider,
  // whose dnsProviderId is checked first.
  "zoneId",
  "recordId",
  // A Swarm node's id (cluster.*): the node belongs to the serverId's Swarm, which is checked
  // first; tests/e2e/cluster.test.ts attacks it with another organization's session.
  "nodeId",
  // GitLab's own numeric project id, not a record of ours.
  "gitlabProjectId",
  // GitHub's and Gitea's own ids of an app, installation or OAuth client: not records of ours.
  "githubAppId",
  "githubClientId",
  "githubInstallationId",
  "clientId",
  // Dokploy's authId on gitlab/bitbucket.create: must be the caller's own user id (400 otherwise).
  "authId",
  // A channel's kind record id (Dokploy's slackId, ...): ours equals its notificationId, which
  // update<Kind> requires and checks first; a different value is a 404 there.
  ...["slack", "mattermost", "discord", "telegram", "email", "resend", "gotify", "ntfy", "pushover"].map(
    (kind) => `${kind}Id`,
  ),
  "larkId",
  // Telegram's chat and forum topic ids, not records of ours.
  "chatId",
  "messageThreadId",
  "teamsId",
  "customId",
  // A catalogue template's id (user.toggleTemplateBookmark): the catalogue is shared, not a record of ours.
  "templateId",
]);
type Fixture = Record<IdKind, string>;

/** The GitHub App and installation id of each fixture's GitHub connection (the webhook finds it by them). */
const WEBHOOK_APP_IDS: Record<string, number> = { ours: 5101, theirs: 5202 };

function idKindOf(field: string, property?: JsonSchema): IdKind | null {
  if (NOT_RECORD_IDS.has(field)) return null;
  // A field named like an id that names something else (GitLab's OAuth applicationId) says so.
  if (property?.["x-not-record-id"]) return null;
  const lower = field.toLowerCase();
  return ID_KINDS.find((kind) => lower.endsWith(kind.toLowerCase())) ?? null;
}

/** Valid values for fields whose rules a JSON Schema cannot carry (refinements, patterns). */
const FIELD_SAMPLES: Record<string, unknown> = {
  // settings.updateServerIp: an IPv4 or IPv6 address ("" clears it).
  serverIp: "203.0.113.1",
  name: "attack-probe",
  description: "probe",
  appName: "attack-probe",
  host: "probe.example.com",
  // forwardAuth.setAuthDomain: a DNS name (lower case, a top-level domain of letters).
  authDomain: "auth.probe.example.com",
  email: "probe@example.com",
  password: "correct-horse-battery",
  currentPassword: "correct-horse-battery",
  username: "probe",
  branch: "main",
  dockerImage: "busybox:latest",
  registryUrl: "registry.example.com",
  imagePrefix: "probe",
  path: "/",
  internalPath: "/",
  port: 3000,
  publishedPort: 18080,
  targetPort: 80,
  ipAddress: "203.0.113.9",
  env: "A=1",
  buildArgs: "A=1",
  traefikConfig: "http: {}\n",
  containerId: "0123456789ab",
  appType: "stack",
  title: "probe",
  role: "member",
  cronJob: "0 0 * * *",
  cronExpression: "0 0 1 1 *",
  schedule: "0 0 * * *",
  bucket: "probe-bucket",
  endpoint: "https://s3.example.com",
  dataPoints: "10",
  databasePassword: "probe-Pass1",
  databaseRootPassword: "probe-Root1",
  databaseName: "probe",
  databaseUser: "probe",
  externalPort: 25999,
};

type JsonSchema = {
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  items?: JsonSchema;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  allOf?: JsonSchema[];
  enum?: unknown[];
  const?: unknown;
  default?: unknown;
  minLength?: number;
  minimum?: number;
  exclusiveMinimum?: number;
  minItems?: number;
  format?: string;
  "x-not-record-id"?: boolean;
};

/** A value the schema accepts, with the given ids put in every id field (optional ones too). */
function sample(schema: JsonSchema, ids: Partial<Fixture>, field?: string): unknown {
  if (field !== undefined) {
    const kind = idKindOf(field, schema);
    if (kind && ids[kind]) return ids[kind];
    if (field in FIELD_SAMPLES) return FIELD_SAMPLES[field];
  }
  if (schema.const !== undefined) return schema.const;
  if (schema.enum) return schema.enum[0];
  const alternatives = schema.anyOf ?? schema.oneOf;
  if (alternatives) {
    const usable = alternatives.find((option) => option.type !== "null") ?? alternatives[0];
    return usable ? sample(usable, ids, field) : null;
  }
  const [first] = schema.allOf ?? [];
  if (first) return sample(first, ids, field);
  const type = Array.isArray(schema.type) ? schema.type.find((t) => t !== "null") : schema.type;
  if (schema.default !== undefined && type !== "object") return schema.default;
  switch (type) {
    case "object": {
      const value: Record<string, unknown> = {};
      for (const [key, property] of Object.entries(schema.properties ?? {})) {
        const required = schema.required?.includes(key);
        const kind = idKindOf(key, property);
        if (required || (kind && ids[kind])) value[key] = sample(property, ids, key);
      }
      return value;
    }
    case "array": {
      // An array of records naming an id (vaultProvider's assignments) carries one, so the id is sent.
      const namesId = schema.items !== undefined && [...idKindsIn(schema.items)].some((kind) => ids[kind]);
      const length = Math.max(schema.minItems ?? 0, namesId ? 1 : 0);
      return Array.from({ length }, () => sample(schema.items ?? {}, ids));
    }
    case "string":
      if (schema.format === "email") return "probe@example.com";
      if (schema.format === "uri") return "https://probe.example.com/";
      return "p".repeat(Math.max(1, schema.minLength ?? 1));
    case "integer":
    case "number":
      return Math.max(1, schema.minimum ?? 1, (schema.exclusiveMinimum ?? 0) + 1);
    case "boolean":
      return false;
    case "null":
      return null;
    default:
      return undefined;
  }
}

function inputSchema(procedure: AnyProcedure): JsonSchema {
  return z.toJSONSchema(procedure.input, { io: "input", unrepresentable: "any" }) as JsonSchema;
}

/** The id fields (kinds) a procedure's input has anywhere, required or optional. */
function idKindsIn(schema: JsonSchema, found = new Set<IdKind>()): Set<IdKind> {
  for (const [key, property] of Object.entries(schema.properties ?? {})) {
    const kind = idKindOf(key, property);
    if (kind) found.add(kind);
    idKindsIn(property, found);
  }
  for (const option of [...(schema.anyOf ?? []), ...(schema.oneOf ?? []), ...(schema.allOf ?? [])])
    idKindsIn(option, found);
  if (schema.items) idKindsIn(schema.items, found);
  return found;
}

/** The names of the input fields, at any depth (required or optional). */
function fieldsIn(schema: JsonSchema, found = new Set<string>()): Set<string> {
  for (const [key, property] of Object.entries(schema.properties ?? {})) {
    found.add(key);
    fieldsIn(property, found);
  }
  for (const option of [...(schema.anyOf ?? []), ...(schema.oneOf ?? []), ...(schema.allOf ?? [])])
    fieldsIn(option, found);
  if (schema.items) fieldsIn(schema.items, found);
  return found;
}

const procedures = allRouters.flatMap((router) =>
  Object.entries(router.procedures).map(([name, procedure]) => ({
    name: `${router.name}.${name}`,
    procedure,
  })),
);

let platform: TestPlatform;
let owner: Session;
let member: Session;
let victim: Session;
let ours: Fixture;
let theirs: Fixture;
/** A member of our organization granted one service (ours.applicationId) and every feature. */
let restricted: Session;
/** Services of our organization, beside ours, that `restricted` was not granted. */
let ungranted: Pick<Fixture, ServiceIdKind>;

const as = (session: Session) => ({ token: session.token });

/** Values one procedure needs where FIELD_SAMPLES' would be refused (docker.deleteContainerFile refuses "/"). */
const PROCEDURE_SAMPLES: Record<string, Record<string, unknown>> = {
  "docker.deleteContainerFile": { path: "/tmp/probe" },
};

function call(name: string, procedure: AnyProcedure, sampled: unknown, session?: Session) {
  const auth = session ? as(session) : {};
  const overrides = PROCEDURE_SAMPLES[name];
  const input =
    overrides && sampled && typeof sampled === "object" ? { ...(sampled as object), ...overrides } : sampled;
  if (procedure.kind === "query") {
    const query = input === undefined ? "" : `?input=${encodeURIComponent(JSON.stringify(input))}`;
    return platform.request(`/api/${name}${query}`, { method: "GET", ...auth });
  }
  return platform.mutate(name, input ?? {}, auth);
}

/** A service of each kind in `environmentId`, with the records that hang off a service. */
async function makeServices(
  session: Session,
  environmentId: string,
  label: string,
  publishedPort: number,
): Promise<Pick<Fixture, ServiceIdKind>> {
  const db = platform.ctx.db;
  const application = await platform.mutateOk(
    "application.create",
    { name: `${label} web`, environmentId },
    as(session),
  );
  const applicationId = application.applicationId as string;
  // Domains, ports and credentials are written straight to the database: creating them through
  // the API rewrites proxy files through an agent, which this suite does not need.
  const domainId = newId();
  const portId = newId();
  const securityId = newId();
  const redirectId = newId();
  await db
    .insertInto("domains")
    .values({
      domainId,
      host: `${label}.example.com`,
      certificateType: "none",
      customCertResolver: null,
      certificate: null,
      certificateKeySealed: null,
      domainType: "application",
      applicationId,
      composeId: null,
      serviceName: null,
      internalPath: null,
    })
    .execute();
  await db.insertInto("ports").values({ portId, applicationId, publishedPort, targetPort: 80 }).execute();
  await db
    .insertInto("security")
    .values({
      securityId,
      applicationId,
      username: `${label}-user`,
      passwordHash: "$apr1$ApbT8zKO$urkB6ssLQWs6Cdeirm/hI0",
    })
    .execute();
  await db
    .insertInto("redirects")
    .values({ redirectId, applicationId, regex: "^/old/(.*)", replacement: "/new/$1", permanent: false })
    .execute();
  const mountId = newId();
  await db
    .insertInto("mounts")
    .values({
      mountId,
      type: "volume",
      volumeName: `${label}-volume`,
      mountPath: "/data",
      serviceType: "application",
      applicationId,
      databaseId: null,
      filePath: null,
      content: null,
      hostPath: null,
      organizationId: session.user.organizationId,
    })
    .execute();
  const deploymentId = newId();
  await db
    .insertInto("deployments")
    .values({
      deploymentId,
      applicationId,
      targetKind: "application",
      targetId: applicationId,
      kind: "deploy",
      title: `${label} deploy`,
      // Ended: an idle row is a queued deployment, which the recovery sweep would run.
      status: "done",
      startedAt: new Date().toISOString(),
      completedAt: new Date().toISOString(),
      description: null,
      errorMessage: null,
      commitHash: null,
      commitMessage: null,
      imageName: null,
      archivePath: null,
      archiveFormat: null,
      serverId: null,
      // A waiting row no queue holds: the queue's sweep takes up such rows once they are older
      // than a lease (a dead control plane's), and the suite runs longer than that. Dated ahead,
      // it stays waiting, so the victim's rows are compared against what only the calls did.
      createdAt: new Date(Date.now() + 24 * 3600_000).toISOString(),
    })
    .execute();
  const rollbackId = newId();
  await db
    .insertInto("rollbacks")
    .values({
      rollbackId,
      applicationId,
      deploymentId,
      serverId: null,
      image: `platform-rollback/${label}:${deploymentId}`,
      imageId: "sha256:0",
      registryId: null,
      registryImage: null,
      specSealed: "v1:1:x:y",
    })
    .execute();
  const previewDeploymentId = newId();
  await db
    .insertInto("previewDeployments")
    .values({
      previewDeploymentId,
      applicationId,
      appName: `preview-${label}-${previewDeploymentId.slice(0, 6).toLowerCase()}`,
      branch: "feature",
      provider: null,
      pullRequestId: "1",
      pullRequestNumber: "1",
      pullRequestUrl: "",
      pullRequestTitle: `${label} preview`,
      pullRequestCommentId: null,
      headSha: null,
      domainId: null,
    })
    .execute();
  // Written straight to the database: a volume backup needs a destination of the organization.
  const volumeDestinationId = newId();
  await db
    .insertInto("destinations")
    .values({
      destinationId: volumeDestinationId,
      organizationId: session.user.organizationId,
      name: `${label} volume bucket`,
      provider: "AWS",
      accessKey: "AK",
      secretAccessKeySealed: "fixture",
      bucket: "fixture-volumes",
      region: "us-east-1",
      endpoint: "",
    })
    .execute();
  const volumeBackupId = newId();
  await db
    .insertInto("volumeBackups")
    .values({
      volumeBackupId,
      organizationId: session.user.organizationId,
      name: `${label} volume backup`,
      volumeName: `${label}-volume`,
      prefix: "fixture",
      appName: `volume-backup-${volumeBackupId.toLowerCase().replace(/[^a-z0-9]/g, "")}`,
      serviceName: null,
      cronExpression: "0 0 1 1 *",
      keepLatestCount: null,
      enabled: false,
      serviceType: "application",
      applicationId,
      databaseId: null,
      composeId: null,
      destinationId: volumeDestinationId,
    })
    .execute();
  const databases: Record<string, string> = {};
  for (const kind of ["postgres", "mysql", "mariadb", "mongo", "redis", "libsql"] as const) {
    const created = await platform.mutateOk(
      `${kind}.create`,
      {
        name: `${label} ${kind}`,
        appName: `${label}-${kind}`,
        environmentId,
        databasePassword: "fixture-Pass1",
        ...(kind === "postgres" || kind === "mysql" || kind === "mariadb"
          ? { databaseName: "shop", databaseUser: "shopper" }
          : {}),
        ...(kind === "mongo" ? { databaseUser: "shopper" } : {}),
        ...(kind === "libsql" ? { databaseUser: "shopper", sqldNode: "primary" } : {}),
        ...(kind === "mysql" ? { databaseRootPassword: "fixture-Root1" } : {}),
      },
      as(session),
    );
    databases[`${kind}Id`] = created[`${kind}Id`];
  }
  const stack = await platform.mutateOk(
    "compose.create",
    {
      name: `${label} stack`,
      appName: `${label}-stack`,
      environmentId,
      composeFile: "services:\n  web:\n    image: busybox\n",
    },
    as(session),
  );
  // Disabled: the suite's calls must not run it.
  const schedule = await platform.mutateOk(
    "schedule.create",
    { name: `${label} job`, applicationId, cronExpression: "0 0 1 1 *", command: "true", enabled: false },
    as(session),
  );
  const patchId = newId();
  await db
    .insertInto("patches")
    .values({ patchId, applicationId, composeId: null, filePath: "src/config.ts", content: "export {};\n" })
    .execute();
  return {
    scheduleId: schedule.scheduleId,
    patchId,
    applicationId,
    composeId: stack.composeId,
    domainId,
    portId,
    securityId,
    redirectId,
    deploymentId,
    mountId,
    rollbackId,
    previewDeploymentId,
    serviceId: applicationId,
    postgresId: databases.postgresId!,
    mysqlId: databases.mysqlId!,
    mariadbId: databases.mariadbId!,
    mongoId: databases.mongoId!,
    redisId: databases.redisId!,
    libsqlId: databases.libsqlId!,
    databaseId: databases.postgresId!,
    volumeBackupId,
  };
}

/** One organization's objects, made through the API where it can make them. */
async function makeFixture(session: Session, label: string): Promise<Fixture> {
  const db = platform.ctx.db;
  const organizationId = session.user.organizationId;
  const project = await platform.mutateOk("project.create", { name: `${label} shop` }, as(session));
  const environmentId = project.environment.environmentId as string;
  const serviceIds = await makeServices(session, environmentId, label, 18080);
  await platform.mutateOk(
    "registry.create",
    {
      registryName: `${label} registry`,
      registryUrl: `${label}.registry.example.com`,
      username: "u",
      password: "registry-secret",
      registryType: "selfHosted",
    },
    as(session),
  );
  const destination = await platform.mutateOk(
    "destination.create",
    {
      name: `${label} bucket`,
      provider: "AWS",
      accessKey: "AK",
      secretAccessKey: "destination-secret",
      bucket: `${label.toLowerCase().replace(/[^a-z0-9]/g, "")}-bucket`,
      region: "us-east-1",
      endpoint: "",
    },
    as(session),
  );
  const backup = await platform.mutateOk(
    "backup.create",
    {
      schedule: "0 0 1 1 *",
      prefix: "fixture",
      destinationId: destination.destinationId,
      database: "shop",
      databaseType: "postgres",
      postgresId: serviceIds.postgresId,
      enabled: false,
    },
    as(session),
  );
  const keyPair = await platform.mutateOk("sshKey.generate", { type: "ed25519" }, as(session));
  const sshKey = await platform.mutateOk("sshKey.create", { name: `${label} key`, ...keyPair }, as(session));
  const server = await platform.mutateOk(
    "server.create",
    { name: `${label} edge`, ipAddress: "203.0.113.10", username: "root", sshKeyId: sshKey.sshKeyId },
    as(session),
  );
  const invitation = await platform.mutateOk(
    "organization.inviteMember",
    { email: `${label}-invitee@example.com`, role: "member" },
    as(session),
  );
  const apiKey = await platform.mutateOk(
    "user.createApiKey",
    { name: `${label} key`, organizationId, metadata: { organizationId } },
    as(session),
  );
  // A channel without URL fields: the suite's platform has no DNS to pass the outbound guard.
  const notification = await platform.mutateOk(
    "notification.createTelegram",
    { name: `${label} alerts`, botToken: "123456:probe", chatId: "1", appDeploy: true },
    as(session),
  );
  // Git providers are written straight to the database: creating them through the API checks
  // their URLs against DNS, which this suite's machine may lack.
  const providers = {} as Record<(typeof PROVIDER_ID_FIELD)[GitProviderType], string>;
  let gitProviderId = "";
  for (const kind of ["github", "gitlab", "bitbucket", "gitea"] as const) {
    const provider = await insertProvider(platform.ctx, {
      providerType: kind,
      name: `${label} ${kind}`,
      organizationId,
      userId: session.user.userId,
      settings: {
        gitlab: { gitlabUrl: "https://gitlab.example.com" },
        github: {
          githubAppId: WEBHOOK_APP_IDS[label] ?? 1,
          githubInstallationId: String(WEBHOOK_APP_IDS[label] ?? 1),
        },
        bitbucket: {},
        gitea: { giteaUrl: "https://gitea.example.com" },
      }[kind],
      // Only the webhook secrets: without credentials no procedure reaches out to a provider.
      secrets:
        kind === "github"
          ? { githubWebhookSecret: `${label}-github-hook` }
          : kind === "gitlab"
            ? { webhookSecret: `${label}-gitlab-hook` }
            : {},
    });
    providers[PROVIDER_ID_FIELD[kind]] = provider.row.providerId;
    // gitProvider.remove is attacked with the GitHub connection's; the others share its checks.
    if (kind === "github") gitProviderId = provider.row.gitProviderId;
  }
  const registry = await db
    .selectFrom("registries")
    .select("registryId")
    .where("organizationId", "=", organizationId)
    .executeTakeFirstOrThrow();
  // Written straight to the database: certificates.create writes proxy files through an agent.
  const certificateId = newId();
  await db
    .insertInto("certificates")
    .values({
      certificateId,
      organizationId,
      serverId: null,
      name: `${label} certificate`,
      certificateData: "-----BEGIN CERTIFICATE-----\nfixture\n-----END CERTIFICATE-----\n",
      privateKeySealed: "fixture",
      autoRenew: null,
      expiresAt: new Date(Date.now() + 86_400_000).toISOString(),
      hosts: [`${label}.example.com`],
    })
    .execute();
  // Written straight to the database: network.create makes an engine network through an agent.
  const networkId = newId();
  await db
    .insertInto("networks")
    .values({
      networkId,
      organizationId,
      serverId: null,
      name: `${label}-net`,
      dockerName: `fixture-${networkId}`,
      driver: "overlay",
      dockerId: null,
      createdAt: new Date().toISOString(),
    })
    .execute();
  const tagId = newId();
  await db
    .insertInto("tags")
    .values({ tagId, organizationId, name: `${label} tag`, color: null })
    .execute();
  await db
    .insertInto("projectTags")
    .values({ id: newId(), projectId: project.project.projectId, tagId })
    .execute();
  // Never reached: a vault is called only to test, list or deploy, each refused before it here.
  const vaultProvider = await platform.mutateOk(
    "vaultProvider.create",
    {
      name: `${label}-vault`,
      config: { providerType: "hashicorp", url: "https://vault.example.com", token: `${label}-vault-token` },
      assignments: [{ projectId: project.project.projectId, environmentIds: [] }],
    },
    as(session),
  );
  // Never reached: Cloudflare is called only to test or edit, each refused before it here.
  const dnsProvider = await platform.mutateOk(
    "dnsProvider.create",
    { name: `${label}-dns`, config: { providerType: "cloudflare", apiToken: `${label}-dns-token` } },
    as(session),
  );
  // Never reached: a forward-auth provider is called by the service deployOnServer starts.
  const forwardAuthProvider = await platform.mutateOk(
    "forwardAuth.createProvider",
    {
      issuer: "https://idp.example.com",
      clientId: `${label}-client`,
      clientSecret: `${label}-client-secret`,
    },
    as(session),
  );
  const memberRow = await db
    .selectFrom("members")
    .select(["memberId", "userId"])
    .where("organizationId", "=", organizationId)
    .where("userId", "=", session.user.userId)
    .executeTakeFirstOrThrow();
  const fixtureSession = await db
    .insertInto("sessions")
    .values({
      sessionId: newId(),
      userId: session.user.userId,
      activeOrganizationId: organizationId,
      expiresAt: new Date(Date.now() + 24 * 3600 * 1000).toISOString(),
    })
    .returning("sessionId")
    .executeTakeFirstOrThrow();
  return {
    organizationId,
    projectId: project.project.projectId,
    environmentId,
    ...serviceIds,
    registryId: registry.registryId,
    destinationId: destination.destinationId,
    backupId: backup.backupId,
    sshKeyId: sshKey.sshKeyId,
    serverId: server.serverId,
    invitationId: invitation.invitationId ?? invitation.id,
    apiKeyId: apiKey.id,
    memberId: memberRow.memberId,
    userId: memberRow.userId,
    notificationId: notification.notificationId,
    ...providers,
    gitProviderId,
    certificateId,
    networkId,
    tagId,
    vaultProviderId: vaultProvider.vaultProviderId,
    dnsProviderId: dnsProvider.dnsProviderId,
    providerId: forwardAuthProvider.providerId,
    sessionId: fixtureSession.sessionId,
  };
}

/** Every row of every table that names one of the victim's ids, as JSON text. */
function victimRows(): Promise<string[]> {
  return rowsNaming(Object.values(theirs));
}

/** Every row of every table that names one of `needles`, as JSON text. */
async function rowsNaming(needles: string[]): Promise<string[]> {
  const db = platform.ctx.db;
  const tables = await db
    .selectFrom("information_schema.tables" as never)
    .select("table_name" as never)
    .where("table_schema" as never, "=", "public" as never)
    .execute();
  const rows: string[] = [];
  for (const { tableName } of tables as Array<{ tableName: string }>) {
    if (tableName.startsWith("kysely_")) continue;
    for (const row of await db
      .selectFrom(tableName as never)
      .selectAll()
      .execute()) {
      const text = JSON.stringify(row);
      if (needles.some((id) => text.includes(id))) rows.push(`${tableName} ${text}`);
    }
  }
  return rows.sort();
}

beforeAll(async () => {
  platform = await startTestPlatform(
    { PLATFORM_URL: "http://127.0.0.1:3000", PORT: "3999" },
    { agents: { localAgent: false, commandTimeoutMs: 2_000 } },
  );
  owner = await platform.registerOwner();
  member = await createUserDirectly(platform, {
    email: "member@example.com",
    organizationId: owner.user.organizationId,
    role: "member",
  });
  victim = await createUserDirectly(platform, { email: "victim@example.com" });
  ours = await makeFixture(owner, "ours");
  theirs = await makeFixture(victim, "theirs");
  ungranted = await makeServices(owner, ours.environmentId, "ungranted", 18081);
  // The ungranted deployment is a finished one: a waiting one older than LEASE_MS is taken up by
  // the queue's takeover sweep (deployments/queue.ts) while this long suite runs, which changed
  // its row with no attack involved (a flaky "left every row as it was").
  await platform.ctx.db
    .updateTable("deployments")
    .set({ status: "done", completedAt: new Date().toISOString() })
    .where("deploymentId", "=", ungranted.deploymentId)
    .execute();
  restricted = await createUserDirectly(platform, {
    email: "restricted@example.com",
    organizationId: owner.user.organizationId,
    role: "member",
    // Every flag, so only the service grant stands between the member and the ungranted services.
    canCreateProjects: true,
    canDeleteProjects: true,
  });
  await platform.mutateOk(
    "user.assignPermissions",
    {
      id: restricted.user.userId,
      accessedServices: [ours.applicationId],
      canCreateServices: true,
      canDeleteServices: true,
      canCreateEnvironments: true,
      canDeleteEnvironments: true,
      canAccessToDocker: true,
      canAccessToTraefikFiles: true,
      canAccessToAPI: true,
      canAccessToSSHKeys: true,
      canAccessToGitProviders: true,
    },
    as(owner),
  );
}, 180_000);

afterAll(async () => {
  await platform?.close();
});

describe("every procedure of the registry", () => {
  const guarded = procedures.filter(({ procedure }) => procedure.access !== "public");

  it.each(guarded.map((entry) => [entry.name, entry] as const))(
    "%s answers 401 without credentials",
    async (name, { procedure }) => {
      const response = await call(name, procedure, undefined);
      expect(response.status, JSON.stringify(response.body)).toBe(401);
    },
  );

  const aboveMember = procedures.filter(
    ({ procedure }) => procedure.access === "admin" || procedure.access === "owner",
  );
  it.each(aboveMember.map((entry) => [entry.name, entry] as const))(
    "%s answers 403 to a plain member",
    async (name, { procedure }) => {
      const response = await call(name, procedure, sample(inputSchema(procedure), ours), member);
      expect(response.status, JSON.stringify(response.body)).toBe(403);
    },
  );

  it("knows every id field of every procedure (a new kind of id needs a fixture here)", () => {
    const unknown = procedures.flatMap(({ name, procedure }) => {
      const fields: string[] = [];
      const walk = (schema: JsonSchema) => {
        for (const [key, property] of Object.entries(schema.properties ?? {})) {
          if (
            /Id$/.test(key) &&
            !idKindOf(key, property) &&
            !NOT_RECORD_IDS.has(key) &&
            !property["x-not-record-id"]
          )
            fields.push(`${name}: ${key}`);
          walk(property);
        }
        for (const option of [...(schema.anyOf ?? []), ...(schema.oneOf ?? [])]) walk(option);
        if (schema.items) walk(schema.items);
      };
      walk(inputSchema(procedure));
      return fields;
    });
    expect(unknown).toEqual([]);
  });
});

describe("another organization's ids", () => {
  const withIds = procedures
    .filter(({ procedure }) => procedure.access !== "public")
    .flatMap(({ name, procedure }) =>
      [...idKindsIn(inputSchema(procedure))].map(
        (kind) => [`${name} with their ${kind}`, name, procedure, kind] as const,
      ),
    );
  let before: string[];

  beforeAll(async () => {
    before = await victimRows();
  });

  it.each(withIds)("%s answers 404", async (_label, name, procedure, kind) => {
    const input = sample(inputSchema(procedure), { ...ours, [kind]: theirs[kind] });
    const response = await call(name, procedure, input, owner);
    // A query whose id is an optional filter may also answer an empty result (checked below).
    const schema = inputSchema(procedure);
    const filterOnly =
      procedure.kind === "query" &&
      !Object.keys(schema.properties ?? {}).some(
        (key) => idKindOf(key, schema.properties?.[key]) === kind && schema.required?.includes(key),
      );
    const expected = filterOnly ? [200, 404] : [404];
    expect(expected, `${name} ${JSON.stringify(input)} -> ${JSON.stringify(response.body)}`).toContain(
      response.status,
    );
    const sent = JSON.stringify(input);
    const leaked = Object.values(theirs).filter(
      (id) => !sent.includes(id) && JSON.stringify(response.body).includes(id),
    );
    expect(leaked).toEqual([]);
  });

  it("left every row of the victim as it was", async () => {
    expect(await victimRows()).toEqual(before);
  });
});

/** A query whose `kind` id is only an optional filter may answer an empty result instead of 404. */
function isFilterOnly(procedure: AnyProcedure, kind: IdKind): boolean {
  const schema = inputSchema(procedure);
  return (
    procedure.kind === "query" &&
    !Object.keys(schema.properties ?? {}).some(
      (key) => idKindOf(key, schema.properties?.[key]) === kind && schema.required?.includes(key),
    )
  );
}

describe("a restricted member's ungranted services (accessedServices)", () => {
  // What a member may call at all; above-member procedures are 403 for them (checked above).
  const withServiceIds = procedures
    .filter(({ procedure }) => procedure.access === "member")
    .flatMap(({ name, procedure }) =>
      [...idKindsIn(inputSchema(procedure))]
        .filter(isServiceIdKind)
        .map((kind) => [`${name} with an ungranted ${kind}`, name, procedure, kind] as const),
    );
  let before: string[];

  beforeAll(async () => {
    before = await rowsNaming(Object.values(ungranted));
  });

  it("covers every kind of service id", () => {
    const kinds = new Set(withServiceIds.map(([, , , kind]) => kind));
    expect([...kinds].sort()).toEqual([...SERVICE_ID_KINDS].sort());
  });

  it.each(withServiceIds)("%s answers 404", async (_label, name, procedure, kind) => {
    const input = sample(inputSchema(procedure), { ...ours, [kind]: ungranted[kind] });
    const response = await call(name, procedure, input, restricted);
    const expected = isFilterOnly(procedure, kind) ? [200, 404] : [404];
    expect(expected, `${name} ${JSON.stringify(input)} -> ${JSON.stringify(response.body)}`).toContain(
      response.status,
    );
    const sent = JSON.stringify(input);
    const leaked = Object.values(ungranted).filter(
      (id) => !sent.includes(id) && JSON.stringify(response.body).includes(id),
    );
    expect(leaked).toEqual([]);
  });

  // The 404s above come from the grant: the same reads of the granted application (and of its
  // domains, ports, credentials and deployments; our databases are not granted) are answered.
  const OF_THE_GRANTED_APPLICATION: readonly ServiceIdKind[] = [
    "applicationId",
    "domainId",
    "portId",
    "securityId",
    "redirectId",
    "deploymentId",
    "mountId",
  ];
  it.each(
    withServiceIds.filter(
      ([, , procedure, kind]) => procedure.kind === "query" && OF_THE_GRANTED_APPLICATION.includes(kind),
    ),
  )("%s: the granted one is not a 404", async (_label, name, procedure) => {
    const response = await call(name, procedure, sample(inputSchema(procedure), ours), restricted);
    expect(response.status, `${name} -> ${JSON.stringify(response.body)}`).not.toBe(404);
  });

  const reads = procedures.filter(
    ({ procedure }) =>
      procedure.kind === "query" &&
      procedure.access === "member" &&
      ![...idKindsIn(inputSchema(procedure))].some(isServiceIdKind),
  );
  it.each(reads.map((entry) => [entry.name, entry] as const))(
    "%s shows none of the ungranted services' ids",
    async (name, { procedure }) => {
      const response = await call(name, procedure, sample(inputSchema(procedure), ours), restricted);
      const text = JSON.stringify(response.body);
      expect(Object.values(ungranted).filter((id) => text.includes(id))).toEqual([]);
    },
  );

  it("left every row of the ungranted services as it was", async () => {
    expect(await rowsNaming(Object.values(ungranted))).toEqual(before);
  });
});

describe("reserved host ports", () => {
  // Host port fields are top-level input fields (checked below), replaced in a sampled input.
  const portTaking = procedures.flatMap(({ name, procedure }) =>
    Object.keys(inputSchema(procedure).properties ?? {})
      .filter((field) => HOST_PORT_FIELDS.has(field))
      .map((field) => ({ name, procedure, field })),
  );
  /** This machine's reserved ports, each with what needs it (servers/host-ports.ts). */
  let reserved: Map<number, string>;
  const METRICS_PORT = 4555;

  beforeAll(async () => {
    // The agent's metrics port of this machine, as admin.setupMonitoring stores it.
    const metricsConfig = {
      server: {
        refreshRate: 60,
        port: METRICS_PORT,
        token: "attack-metrics-token",
        urlCallback: "http://127.0.0.1:1/callback",
        retentionDays: 2,
        cronJob: "0 0 * * *",
        thresholds: { cpu: 0, memory: 0 },
      },
      containers: { refreshRate: 60 },
    };
    const organizationId = owner.user.organizationId;
    await platform.ctx.db
      .insertInto("monitoringConfigs")
      .values({
        serverId: "local",
        organizationId,
        configSealed: platform.ctx.secrets.encrypt(JSON.stringify(metricsConfig), {
          table: "monitoring_configs",
          rowId: "local",
          organizationId,
        }),
        updatedAt: new Date().toISOString(),
      })
      .execute();
    reserved = await reservedHostPorts(platform.ctx, platform.ctx.db, null);
  });

  it("knows every field named …port (a new one is a host port or says why not)", () => {
    const unknown = procedures.flatMap(({ name, procedure }) =>
      [...fieldsIn(inputSchema(procedure))]
        .filter(
          (field) => /port$/i.test(field) && !HOST_PORT_FIELDS.has(field) && !NOT_HOST_PORT_FIELDS.has(field),
        )
        .map((field) => `${name}: ${field}`),
    );
    expect(unknown).toEqual([]);
    const nested = procedures.flatMap(({ name, procedure }) => {
      const schema = inputSchema(procedure);
      return [...fieldsIn(schema)]
        .filter((field) => HOST_PORT_FIELDS.has(field) && !(field in (schema.properties ?? {})))
        .map((field) => `${name}: ${field}`);
    });
    // The proxy's extra ports are a list of host ports: the test below sends each reserved port in it.
    expect(nested).toEqual(["settings.updateTraefikPorts: publishedPort"]);
    expect(portTaking.map(({ name }) => name)).toEqual(
      expect.arrayContaining([
        "port.create",
        "port.update",
        "postgres.saveExternalPort",
        "libsql.saveExternalPorts",
      ]),
    );
  });

  it("reserves the control plane's PORT and 3000, the metrics port, NATS and Swarm on this machine", () => {
    const controlPlanePort = platform.ctx.config.port;
    for (const port of [controlPlanePort, 3000, METRICS_PORT, 4222, 2377, 7946, 4789, 22, 80, 443]) {
      expect(reserved.has(port), String(port)).toBe(true);
    }
  });

  it.each(portTaking.map((entry) => [`${entry.name} ${entry.field}`, entry] as const))(
    "%s answers 400 naming the field for every reserved port",
    async (_label, { name, procedure, field }) => {
      const answers: string[] = [];
      for (const port of reserved.keys()) {
        const input = { ...(sample(inputSchema(procedure), ours) as object), [field]: port };
        const response = await call(name, procedure, input, owner);
        const fields = response.body?.error?.data?.fields;
        if (response.status !== 400 || JSON.stringify(fields) !== JSON.stringify([field])) {
          answers.push(`${port}: ${response.status} ${JSON.stringify(response.body)}`);
        }
      }
      expect(answers).toEqual([]);
    },
  );

  it("settings.updateTraefikPorts answers 400 naming additionalPorts for every reserved port", async () => {
    const { procedure } = procedures.find(({ name }) => name === "settings.updateTraefikPorts")!;
    const answers: string[] = [];
    for (const port of reserved.keys()) {
      const input = { additionalPorts: [{ targetPort: 9000, publishedPort: port, protocol: "tcp" }] };
      const response = await call("settings.updateTraefikPorts", procedure, input, owner);
      const fields = response.body?.error?.data?.fields;
      if (response.status !== 400 || JSON.stringify(fields) !== JSON.stringify(["additionalPorts"])) {
        answers.push(`${port}: ${response.status} ${JSON.stringify(response.body)}`);
      }
    }
    expect(answers).toEqual([]);
  });
});

describe("answers to another organization", () => {
  const reads = procedures.filter(
    ({ procedure }) =>
      procedure.kind === "query" &&
      procedure.access !== "public" &&
      idKindsIn(inputSchema(procedure)).size === 0,
  );
  it.each(reads.map((entry) => [entry.name, entry] as const))(
    "%s shows none of the victim's ids",
    async (name, { procedure }) => {
      const response = await call(name, procedure, sample(inputSchema(procedure), {}), owner);
      const text = JSON.stringify(response.body);
      expect(Object.values(theirs).filter((id) => text.includes(id))).toEqual([]);
    },
  );
});

/**
 * settings.* that say nothing of this machine to another organization, each with what it answers
 * there (routers/settings-info.test.ts proves each answer).
 */
const NOT_INSTANCE_SETTINGS: Record<string, string> = {
  "settings.getDokployVersion": "the platform's version, the same for everyone",
  "settings.getIp": '"" to another organization, as Dokploy Cloud answers its tenants',
  "settings.health": "public: whether the control plane's database answers",
  "settings.isCloud": "public: the edition",
  "settings.getDokployCloudIps": "[]: agents connect out, no address needs allowing",
  "settings.isUserSubscribed": "whether the caller's own organization has a server or project",
  "settings.getLogCleanupStatus":
    "enabled false to another organization: this machine's access log cleanup is the instance's",
  "settings.getOpenApiDocument": "the API's OpenAPI document, the same for everyone",
  "settings.getReleaseTag": "the platform's release tag, the same for everyone",
  "settings.getUpdateData": "whether a newer release is known, the same for everyone",
  "settings.cleanAllDeploymentQueue":
    "drops the caller's own organization's waiting deployments only (maintenance/instance-settings.test.ts)",
};

describe("instance-wide settings", () => {
  const settings = procedures.filter(
    ({ name }) => name.startsWith("settings.") && !(name in NOT_INSTANCE_SETTINGS),
  );
  it.each(settings.map((entry) => [entry.name, entry] as const))(
    "%s answers 403 to another organization's owner for this machine",
    async (name, { procedure }) => {
      const response = await call(name, procedure, sample(inputSchema(procedure), {}), victim);
      expect(response.status, JSON.stringify(response.body)).toBe(403);
    },
  );
});

describe("another organization's network in networkIds (issue 39)", () => {
  it.each([
    ["application.update", () => ({ applicationId: ours.applicationId })],
    ["compose.update", () => ({ composeId: ours.composeId })],
    ["postgres.update", () => ({ postgresId: ours.postgresId })],
    ["redis.update", () => ({ redisId: ours.redisId })],
    ["libsql.update", () => ({ libsqlId: ours.libsqlId })],
  ] as const)("%s naming the victim's network answers 400 naming networkIds", async (name, idOf) => {
    const response = await platform.mutate(name, { ...idOf(), networkIds: [theirs.networkId] }, as(owner));
    expect(response.status, JSON.stringify(response.body)).toBe(400);
    expect(response.body.error.data.fields).toContain("networkIds");
  });
});

describe("container operations on another organization's server (docker.*, issue 39)", () => {
  // The container's own labels are checked by the router and again by the agent
  // (apps/control-plane/src/agents/container-operations.test.ts, with real containers); here the
  // victim's server is refused before any agent is asked.
  const containerId = "0123456789ab";
  it.each([
    ["docker.startContainer", "mutation", { containerId }],
    ["docker.stopContainer", "mutation", { containerId }],
    ["docker.killContainer", "mutation", { containerId }],
    ["docker.removeContainer", "mutation", { containerId }],
    ["docker.listContainerFiles", "query", { containerId, path: "/" }],
    ["docker.readContainerFile", "query", { containerId, path: "/etc/hostname" }],
    ["docker.writeContainerFile", "mutation", { containerId, path: "/tmp/probe", content: "x" }],
    ["docker.deleteContainerFile", "mutation", { containerId, path: "/tmp/probe" }],
    ["docker.getEvents", "query", { minutes: 5 }],
    ["docker.getServerHealth", "query", { sinceHours: 1 }],
  ] as const)("%s with the victim's serverId answers 404", async (name, kind, input) => {
    const withServer = { ...input, serverId: theirs.serverId };
    const response =
      kind === "query"
        ? await platform.query(name, withServer, as(owner))
        : await platform.mutate(name, withServer, as(owner));
    expect(response.status, JSON.stringify(response.body)).toBe(404);
  });

  it("docker.uploadFileToContainer (multipart) with the victim's serverId answers 404", async () => {
    const form = new FormData();
    form.set("containerId", containerId);
    form.set("destinationPath", "/tmp/probe");
    form.set("serverId", theirs.serverId);
    form.set("file", new Blob([new Uint8Array([1, 2, 3])]), "probe");
    const response = await platform.app.request("/api/docker.uploadFileToContainer", {
      method: "POST",
      body: form,
      headers: { authorization: `Bearer ${owner.token}` },
    });
    expect(response.status, await response.clone().text()).toBe(404);
  });
});

describe("GPU support of another organization's server (settings.checkGPUStatus, setupGPU, issue 41)", () => {
  it.each([
    ["settings.checkGPUStatus", "query"],
    ["settings.setupGPU", "mutation"],
  ] as const)("%s with the victim's serverId answers 404, its agent never asked", async (name, kind) => {
    const input = { serverId: theirs.serverId };
    const response =
      kind === "query"
        ? await platform.query(name, input, as(owner))
        : await platform.mutate(name, input, as(owner));
    expect(response.status, JSON.stringify(response.body)).toBe(404);
  });
});

describe("patches through `id` and `type` (patch.*)", () => {
  it("reads and changes no other organization's application's or stack's patches (404), nothing changed", async () => {
    const before = await victimRows();
    const services = [
      { id: theirs.applicationId, type: "application" },
      { id: theirs.composeId, type: "compose" },
    ];
    for (const service of services) {
      const listed = await platform.request(
        `/api/patch.byEntityId?input=${encodeURIComponent(JSON.stringify(service))}`,
        { method: "GET", ...as(owner) },
      );
      expect(listed.status, JSON.stringify(service)).toBe(404);
      for (const [name, input] of [
        ["patch.readRepoDirectories", { ...service, repoPath: `${service.type}/x` }],
        ["patch.readRepoFile", { ...service, filePath: "src/config.ts" }],
      ] as const) {
        const read = await platform.request(
          `/api/${name}?input=${encodeURIComponent(JSON.stringify(input))}`,
          {
            method: "GET",
            ...as(owner),
          },
        );
        expect(read.status, `${name} ${JSON.stringify(input)}`).toBe(404);
      }
      const changes: [string, Record<string, unknown>][] = [
        ["patch.ensureRepo", service],
        ["patch.saveFileAsPatch", { ...service, filePath: "src/config.ts", content: "pwned" }],
        ["patch.markFileForDeletion", { ...service, filePath: "src/config.ts" }],
      ];
      for (const [name, input] of changes) {
        const response = await platform.mutate(name, input, as(owner));
        expect(response.status, `${name} ${JSON.stringify(input)}`).toBe(404);
      }
    }
    expect(await victimRows()).toEqual(before);
  });
});

describe("scheduled jobs (schedule.*, CVE-2026-45632)", () => {
  it("lists and reads no other organization's schedules or runs through `id` (404)", async () => {
    const attempts: [string, Record<string, unknown>][] = [
      ["schedule.list", { id: theirs.applicationId, scheduleType: "application" }],
      ["schedule.list", { id: theirs.serverId, scheduleType: "server" }],
      ["deployment.allByType", { id: theirs.scheduleId, type: "schedule" }],
      ["deployment.allByType", { id: theirs.backupId, type: "backup" }],
      ["deployment.allByType", { id: theirs.volumeBackupId, type: "volumeBackup" }],
    ];
    for (const [name, input] of attempts) {
      const response = await platform.request(
        `/api/${name}?input=${encodeURIComponent(JSON.stringify(input))}`,
        {
          method: "GET",
          ...as(owner),
        },
      );
      expect(response.status, `${name} ${JSON.stringify(input)}`).toBe(404);
    }
  });

  it("gives a host shell (server, dokploy-server) to no member and no tenant (403)", async () => {
    const job = { name: "probe", cronExpression: "0 0 1 1 *", command: "id" };
    for (const [session, input] of [
      [member, { ...job, scheduleType: "dokploy-server" }],
      [member, { ...job, scheduleType: "server", serverId: ours.serverId }],
      [victim, { ...job, scheduleType: "dokploy-server" }],
      [victim, { ...job, scheduleType: "server", serverId: theirs.serverId }],
    ] as const) {
      const response = await platform.mutate("schedule.create", input, as(session));
      expect(response.status, JSON.stringify(input)).toBe(403);
    }
  });
});

describe("notification channels' outbound targets (SSRF)", () => {
  /** A valid input of each kind with URL fields, whose URL fields are set by `url` (a host for SMTP). */
  const inputs: Record<string, (url: string, host: string) => Record<string, unknown>> = {
    Slack: (url) => ({ webhookUrl: url }),
    Mattermost: (url) => ({ webhookUrl: url }),
    Discord: (url) => ({ webhookUrl: url }),
    Email: (_url, host) => ({
      smtpServer: host,
      smtpPort: 25,
      username: "probe",
      password: "probe",
      fromAddress: "probe@example.com",
      toAddresses: ["probe@example.com"],
    }),
    Gotify: (url) => ({ serverUrl: url, appToken: "probe" }),
    Ntfy: (url) => ({ serverUrl: url, topic: "probe" }),
    Lark: (url) => ({ webhookUrl: url }),
    Teams: (url) => ({ webhookUrl: url }),
    Custom: (url) => ({ endpoint: url }),
  };
  const withUrls = Object.values(KINDS).filter((kind) => kind.urls.length > 0);
  const targets = [
    ["cloud metadata", "http://169.254.169.254/latest/meta-data/", "169.254.169.254"],
    ["loopback", "http://127.0.0.1:5432/", "127.0.0.1"],
    ["private network", "http://10.1.2.3/hook", "10.1.2.3"],
  ] as const;

  it("has an input for every kind that sends to an address of the user's", () => {
    expect(withUrls.map((kind) => kind.suffix).sort()).toEqual(Object.keys(inputs).sort());
  });

  it.each(
    withUrls.flatMap((kind) =>
      ["create", "test"].flatMap((verb) =>
        targets.map(
          ([label, url, host]) =>
            [`notification.${verb}${kind.suffix} to ${label}`, kind, verb, url, host] as const,
        ),
      ),
    ),
  )("%s answers 400 naming the field", async (_label, kind, verb, url, host) => {
    const input = {
      ...(verb === "create" ? { name: "probe", appDeploy: true } : {}),
      ...inputs[kind.suffix]!(url, host),
    };
    const response = await platform.mutate(`notification.${verb}${kind.suffix}`, input, as(owner));
    expect(response.status, JSON.stringify(response.body)).toBe(400);
    expect(response.body.error.data.fields).toEqual([kind.urls[0]]);
  });
});

describe("Git provider routers", () => {
  const providerProcedures = procedures.filter(({ name }) =>
    ["github.", "gitlab.", "gitea.", "bitbucket.", "gitProvider."].some((prefix) => name.startsWith(prefix)),
  );
  it.each(providerProcedures.map((entry) => [entry.name, entry] as const))(
    "%s answers 403 to a member without canAccessToGitProviders",
    async (name, { procedure }) => {
      const response = await call(name, procedure, sample(inputSchema(procedure), ours), member);
      expect(response.status, JSON.stringify(response.body)).toBe(403);
    },
  );
});

describe("Git provider webhook routes", () => {
  const hmac = (secret: string, body: string) => createHmac("sha256", secret).update(body).digest("hex");
  let before: string[];

  beforeAll(async () => {
    before = await victimRows();
  });

  it("/api/github/webhook: the victim's installation, unsigned or signed with another secret, is 401", async () => {
    const body = JSON.stringify({
      ref: "refs/heads/main",
      after: "a".repeat(40),
      installation: { id: WEBHOOK_APP_IDS.theirs },
      repository: { name: "web", owner: { login: "acme" } },
    });
    for (const signature of [undefined, hmac("ours-github-hook", body), hmac("guess", body)]) {
      const response = await platform.request("/api/github/webhook", {
        method: "POST",
        body,
        headers: {
          "x-github-event": "push",
          ...(signature ? { "x-hub-signature-256": `sha256=${signature}` } : {}),
        },
      });
      expect(response.status, JSON.stringify(response.body)).toBe(401);
    }
  });

  it("/api/deploy/gitlab: a missing or unknown X-Gitlab-Token is 401", async () => {
    for (const token of [undefined, "guess", "theirs-gitlab-hook-"]) {
      const response = await platform.request("/api/deploy/gitlab", {
        method: "POST",
        body: JSON.stringify({ ref: "refs/heads/main", project: { path_with_namespace: "acme/web" } }),
        headers: { "x-gitlab-event": "Push Hook", ...(token ? { "x-gitlab-token": token } : {}) },
      });
      expect(response.status, JSON.stringify(response.body)).toBe(401);
    }
  });

  it("/api/deploy/{provider}/<their application> with our refresh token is 401", async () => {
    const ourToken = (
      await platform.ctx.db
        .selectFrom("applications")
        .select("refreshToken")
        .where("applicationId", "=", ours.applicationId)
        .executeTakeFirstOrThrow()
    ).refreshToken;
    for (const provider of ["github", "gitlab", "gitea", "bitbucket"]) {
      const response = await platform.request(
        `/api/deploy/${provider}/${theirs.applicationId}?refreshToken=${ourToken}`,
        { method: "POST", body: JSON.stringify({ ref: "refs/heads/main" }) },
      );
      expect(response.status, `${provider}: ${JSON.stringify(response.body)}`).toBe(401);
    }
  });

  it("left every row of the victim as it was", async () => {
    expect(await victimRows()).toEqual(before);
  });
});
