/**
 * The prose of the API reference, kept apart from the router declarations: a description of
 * each spec router (an OpenAPI tag) and of each procedure, keyed by `router.procedure`, with
 * the error statuses the declaration does not tell and a request example for create procedures.
 * openapi-docs.test.ts fails when a registered procedure has no row here (or a row names none),
 * so a new procedure adds its own line.
 *
 * Derived for every procedure, not written here: 400 (input names the failing fields); 401, 403
 * and 429 (API key rate limits) when it needs credentials; 404 when its input has an `…Id`
 * field; 413 for mutations (JSON body over the limit).
 */

/** What every runtime readLogs procedure (application, compose, the database kinds) says of its inputs and answer. */
const RUNTIME_LOGS =
  "`tail` (1-10,000, default 100) newest lines as Docker keeps them, `since` (`all`, or `<n>s|m|h|d`) and `search` (a plain phrase of letters, digits, spaces and `._-`, matched literally and case-insensitively among those lines, like Dokploy's `docker logs --tail | grep -iF`). Read by the agent of the service's server through Docker's log API (no shell); the answer is one string, a line `<RFC 3339 time> <source> | <text>` per log line, oldest first, control characters escaped; a very long line is cut and the whole answer kept under 768 KiB (older lines dropped first).";

export type ExtraStatus = 401 | 403 | 404 | 409 | 429;

export interface ProcedureDoc {
  description: string;
  /** Statuses beyond the derived ones. */
  errors?: readonly ExtraStatus[];
  /** A request example (create procedures). */
  example?: Record<string, unknown>;
}

/** One OpenAPI tag per spec router, plus the routes outside the procedure layer. */
export const tagDocs: Record<string, string> = {
  auth: "Registration, login and logout, and two-factor sign-in (TOTP with recovery codes). The first registration creates the first organization and its owner.",
  user: "The current user, the organization's users and their permissions, and API keys.",
  organization: "Organizations the caller belongs to, the active organization, and invitations into it.",
  project: "Projects: a name, variables and environments, each holding services.",
  environment: "Environments of a project (every project has a default one) and their variables.",
  docker: "Container inspection on a server through its agent (Docker Engine).",
  agent: "Enrollment of a server's agent: a one-time token exchanged for NATS credentials.",
  server: "Servers: registration, SSH setup of the agent, validation and security audit.",
  cluster:
    "Swarm clusters: a server's nodes with their agents, joining servers as workers or managers, drain, promote, demote, labels.",
  sshKey: "SSH key pairs used to reach servers and private Git repositories.",
  application:
    "Applications: source, build, variables, lifecycle, deployments and their proxy configuration.",
  deployment: "Deployments: history, the queue, live logs, stopping and removing them.",
  port: "Ports an application's Swarm service publishes on the server.",
  registry: "Container registries: credentials for pulling images and pushing builds.",
  domain: "Domains routed to applications through Traefik, with Let's Encrypt, custom or no TLS.",
  security: "HTTP Basic credentials protecting an application (APR1 hashes in the proxy).",
  settings: "Instance settings: the web server's domain and this machine's Traefik proxy (administrators).",
  admin: "Instance administration: the monitoring of the control plane's own machine.",
  deploy: "Inbound webhooks: a Git provider's push deploys an application.",
  postgres:
    "PostgreSQL database services: a Swarm service with a data volume, deployed through the deployment queue.",
  mysql:
    "MySQL database services: a Swarm service with a data volume, deployed through the deployment queue.",
  mariadb:
    "MariaDB database services: a Swarm service with a data volume, deployed through the deployment queue.",
  mongo:
    "MongoDB database services: a Swarm service with a data volume, deployed through the deployment queue.",
  redis:
    "Redis database services: a Swarm service with a data volume, deployed through the deployment queue.",
  libsql:
    "libsql (sqld) database services, primary or replica: a Swarm service with a data volume, deployed through the deployment queue.",
  compose:
    "Compose stacks: a compose file deployed with `docker stack deploy` or Compose, its domains, deployments and lifecycle.",
  mounts:
    "Mounts of a service: named volumes, files the platform writes, and host paths (instance organization only).",
  redirects: "Regex redirects of an application, applied as a middleware in its proxy file.",
  patch:
    "Patches of an application or a compose stack: files of its repository replaced, created or deleted after the clone and before every build, each named in the deployment log.",
  certificates:
    "Custom certificates of the organization: checked at save, key sealed, applied to a server's proxy TLS store.",
  rollback:
    "Rollbacks of applications: every successful deployment keeps its image and service spec, deployed again without a build.",
  previewDeployment:
    "Preview deployments: a service per pull or merge request (or branch) of an application with previews active, at a host under previewWildcard.",
  gitProvider: "The organization's Git provider connections of every kind, and their removal.",
  github: "GitHub App connections: installation tokens, repositories, branches and the push webhook.",
  gitlab:
    "GitLab connections (gitlab.com or self-hosted) through OAuth with refresh: repositories and branches.",
  bitbucket: "Bitbucket Cloud connections through app passwords or API tokens: repositories and branches.",
  gitea: "Gitea connections through OAuth with refresh: repositories and branches.",
  notification:
    "Notification channels (Slack, Discord, Telegram, email and more), their tests and the delivery outbox.",
  destination: "S3-compatible backup destinations: credentials (sealed), connection tests.",
  backup:
    "Database backups to a destination: schedules, manual runs, retention, file listing, restores and verified restores.",
  schedule:
    "Scheduled jobs: a cron command run in an application's or a compose service's container, or on a server (instance administrators); every run is a deployment.",
  volumeBackups:
    "Named volumes of a service archived to a destination: schedules, manual runs, retention, the service stopped only while the volume is read, restores into a volume.",
  dockerVolume:
    "Named volumes of a server's engine and the files inside one, through its agent: the caller's organization's, and for owners and admins of the server's organization the unlabelled rest.",
  dockerImage:
    "Images of a server's engine through its agent: the caller's organization's (built for it, or used by its containers), and for owners and admins of the server's organization the unlabelled rest.",
  dockerDiskUsage:
    "What the caller's images, containers and volumes take on a server's engine, and its build cache (owners and admins).",
  swarm:
    "A server's Swarm through its agent: its nodes, one node, and the services and container stats the caller may see (its organization's; owners and admins also the unlabelled ones).",
  network:
    "The organization's networks on one of its servers: attachable overlays (or bridges) named in the organization's namespace and labelled with it, created, inspected and removed through the server's agent.",
  overview: "The organization at a glance: every service the caller sees, flat.",
  tag: "The organization's tags and their assignment to projects; project.all and project.one carry each project's tags (`projectTags`).",
  vaultProvider:
    "Secret vaults (HashiCorp Vault / OpenBao KV v2): services' variables name their secrets as `${{vault.<provider>.<path>:<field>}}`, read at deploy time and never stored.",
  dnsProvider:
    "DNS providers (Cloudflare): the organization's zones and records listed and edited through Cloudflare's v4 API; a domain naming one gets its record pointing at its server.",
  forwardAuth:
    "Forward auth: application domains behind a sign-in, through an authentication service (oauth2-proxy) deployed on their server and Traefik's forwardAuth middleware.",
  trpc: "The same procedures under /api/trpc/ with tRPC envelopes, for tRPC clients.",
};

const id = "V1StGXR8_Z5jdHi6B-myT";

export const procedureDocs: Record<string, ProcedureDoc> = {
  // auth
  "auth.register": {
    description:
      "Creates a user. The very first registration on an instance also creates the first organization, owned by that user (the instance administrator); later ones need the invitation's secret `token` and the invited email. The first registration from another machine (not loopback, or through a proxy) needs `setupToken`, the set-up token the control plane printed at start (a 403 naming setupToken without it); the first registration spends it. Closed registration answers alike for taken and free emails. Answers a session token like auth.login.",
    errors: [403, 409, 429],
    example: { email: "me@example.com", password: "a-long-password", name: "Me" },
  },
  "auth.login": {
    description:
      "Checks email and password and answers a session token to send as `Authorization: Bearer <token>`. Repeated failures are throttled (429 with Retry-After).",
    errors: [401, 429],
  },
  "auth.logout": { description: "Revokes the session token of this request; other sessions stay valid." },
  "auth.twoFactorEnable": {
    description:
      "Starts enrolling the caller in two-factor sign-in (TOTP, RFC 6238: SHA-1, 6 digits, 30 s). Needs a session (not an API key) and the current `password` (a wrong one is a 400 and counts as a login attempt). Answers the base32 `secret`, its `otpauth://` URI for an authenticator app and ten one-time `backupCodes`; they are shown only now (the secret is sealed at rest, the codes kept hashed). Sign-in asks for a code only once auth.twoFactorConfirm accepted one; calling this again before that starts over. 409 while two-factor sign-in is enabled.",
    errors: [409, 429],
  },
  "auth.twoFactorConfirm": {
    description:
      "Enables two-factor sign-in with the authenticator's current `code` for the enrolment auth.twoFactorEnable started (400 naming code when it is wrong, 409 when already enabled). From then on auth.login answers a challenge instead of a session.",
    errors: [409],
  },
  "auth.twoFactorVerifyTotp": {
    description:
      "The second step of a two-factor sign-in: auth.login's `challengeToken` and the authenticator's current `code` (one 30-second step either side is accepted; a step once accepted never again). Answers the session like auth.login. A challenge lasts 5 minutes and allows 5 codes; each code also counts as a login attempt of the account (429 with Retry-After). 401 for a wrong code or a challenge unknown, spent or expired.",
    errors: [429],
  },
  "auth.twoFactorVerifyBackupCode": {
    description:
      "Like auth.twoFactorVerifyTotp with one of the recovery codes (case, spaces and dashes ignored); each recovery code works once.",
    errors: [429],
  },
  "auth.twoFactorDisable": {
    description:
      "Turns the caller's two-factor sign-in off (session and current `password` needed): the secret, recovery codes and open challenges are deleted. 400 when it is not enabled.",
    errors: [429],
  },
  "auth.twoFactorGenerateBackupCodes": {
    description:
      "Replaces the caller's recovery codes with ten new ones, answered once (session and current `password` needed); the old ones stop working. 400 when two-factor sign-in is not enabled.",
    errors: [429],
  },

  // user
  "user.all": { description: "Lists the users of the caller's active organization with their roles." },
  "user.one": {
    description:
      "One user: members may read their own record; administrators any member of the organization.",
  },
  "user.get": {
    description:
      "The current user, their role in the active organization and their API keys (metadata only; a key is shown once, at creation).",
  },
  "user.update": {
    description:
      "Changes the current user's name or image; a new email or password needs `currentPassword` (guesses count towards the login throttle). A new email is only stored as `pendingEmail` until it is confirmed: a link to user.confirmEmail goes to the new address through the organization's oldest Email or Resend channel (without one, the instance administrator applies it with user.changeEmail), with the same answer whether the address is taken or free. Changing the password ends the user's other sessions.",
  },
  "user.remove": {
    description:
      "Removes a user from the organization. The owner cannot be removed, administrators cannot remove themselves, and only the owner removes administrators.",
  },
  "user.assignPermissions": {
    description:
      "Sets a member's role (`admin` or `member`) and permission flags such as canCreateProjects and canDeleteProjects. Owner only.",
  },
  "user.createApiKey": {
    description:
      "Creates an API key for the current user in an organization, with optional expiry and rate limit. The answer holds `key`, shown only here; send it as `x-api-key`.",
    example: {
      name: "ci",
      organizationId: id,
      metadata: { organizationId: id },
      expiresIn: 2592000,
      rateLimitEnabled: true,
      rateLimitTimeWindow: 60,
      rateLimitMax: 120,
    },
  },
  "user.deleteApiKey": { description: "Deletes one of the caller's own API keys; it stops working at once." },
  "user.getInvitations": {
    description:
      "The pending, unexpired invitation named by its secret `token` (send it in tRPC's `?input=` form), or an empty list without one: invitations are never found by the email they were sent to.",
  },
  "user.checkUserOrganizations": {
    description:
      "The number of organizations a user belongs to (the caller, or a member of the caller's organization).",
  },
  "user.sendInvitation": {
    description:
      "Mails a pending invitation of the active organization to its address through one of the organization's Email or Resend channels (`notificationId`; another kind is a 400), with a new secret accept link on PLATFORM_URL (`/invitation?token=`): the token organization.inviteMember answered stops working. Another organization's invitation or channel is a 404; a failed send is a 400 that names what went wrong, never the mail server's answer.",
  },
  "user.confirmEmail": {
    description:
      "Applies the caller's pending email (user.update) with the secret `token` of the confirmation link that the organization's oldest Email or Resend channel sent to the new address; the link works for 24 hours, only for the signed-in user who asked. A wrong or expired token is a 404 naming `token`; an address another user took meanwhile is a 409.",
  },
  "user.changeEmail": {
    description:
      "Changes a user's email, or applies the address the user requested with user.update when `email` is left out (instance administrators only; users of an organization with an Email or Resend channel confirm their own with user.confirmEmail; 409 when another user has it).",
  },
  "user.getMetricsToken": {
    description:
      "This machine's monitoring configuration with its token, for instance administrators (`metricsConfig` is null for everyone else), the server IP and `enabledFeatures`.",
  },
  "user.listSessions": {
    description:
      "The caller's own sign-in sessions that still work (neither signed out nor expired), newest first: `id`, `userId`, `activeOrganizationId`, `createdAt`, `expiresAt` and `current` (the session this request came with). A session's token is answered once, by auth.login, never here.",
  },
  "user.session": {
    description:
      "The session this request came with (`id`, `activeOrganizationId`, `createdAt`, `expiresAt`; with an API key only `activeOrganizationId`, the rest null) and the caller's user record. Never the token.",
  },
  "user.revokeSession": {
    description:
      "Signs out one of the caller's own live sessions by its `id` (user.listSessions): its token stops working at once, on every control plane. Another user's session, or one already signed out or expired, is a 404.",
  },
  "user.getPermissions": {
    description:
      "What the caller may do in the active organization, by resource (`project`, `environment`, `service`, `docker`, `traefikFiles`, `api`, `sshKeys`, `gitProviders`, `member`) and action, each true or false, computed by the rules the procedures enforce: owners and administrators everything (changing permissions, `member.update`, is the owner's), a member by their flags (user.assignPermissions).",
  },
  "user.haveRootAccess": {
    description:
      "Whether the caller administers the whole instance: the owner or an administrator of the first organization (the instance organization).",
  },
  "user.generateToken": {
    description:
      "Creates an API key named `Generated token` for the caller in the active organization and answers the key itself, as a string, this once (user.get lists it without the key, user.deleteApiKey removes it). A member needs canAccessToAPI.",
  },
  "user.getUserByToken": {
    description:
      "Without credentials: the invitation that a secret invitation `token` names (the one organization.inviteMember answered or user.sendInvitation's link carries), whatever its status: `id`, `email`, `status`, `role`, `inviterId`, `isExpired`, and `userAlreadyExists` (the email has an account: sign in and accept rather than register). An invitation id is not a token: 404 naming `token`.",
  },
  "user.createUserWithCredentials": {
    description:
      "Creates a user with an initial `password` (8 to 256 characters) as a member of the active organization, for administrators; `role` must be `member` (make an administrator with organization.updateMemberRole, grant more with user.assignPermissions); `name` defaults to the email's local part. Answers the new user as user.one does; they sign in with auth.login. An email that has an account already is a 409 naming `email`: invite that user instead.",
    errors: [409],
    example: { email: "dev@example.com", password: "a-long-initial-password", role: "member" },
  },
  "user.getBackups": {
    description:
      "The caller's user record with `backups`: the control plane's own backups (databaseType `web-server`) whose destination belongs to the organization, oldest first, each as backup.one shows it (destination without secrets, last run, last verified restore). Only instance administrators manage those backups: for other administrators the list is empty.",
  },
  "user.getContainerMetrics": {
    description:
      "The series an agent keeps of one service's containers: `<url>/metrics/containers?appName=…&limit=<dataPoints>` read with the Bearer `token`, by the function server.getServerMetrics uses (the outbound guard and the own-address rule apply to `url`; send it in tRPC's `?input=` form). The agent's own refusals are answered with its message (a service it does not collect: 400; no data yet or not running: 404), a refused token is a 400 naming `token`, anything else one \"could not be reached\" naming `url`.",
  },
  "user.getServerMetrics": {
    description:
      "The caller's user record with this machine's `serverIp`, `enabledFeatures` and `metricsConfig` (user.getMetricsToken's: the configuration with its token for instance administrators only, null for everyone else).",
  },
  "user.listPasskeys": {
    description:
      "The caller's passkeys. Always an empty list: passkeys cannot be registered on this platform (TOTP two-factor sign-in is offered instead), so Dokploy clients that list them see none.",
  },
  "user.getBookmarkedTemplates": {
    description:
      "The ids of the catalogue templates (compose.templates) the caller bookmarked, oldest bookmark first. Bookmarks are the user's own, the same in every organization.",
  },
  "user.toggleTemplateBookmark": {
    description:
      "Bookmarks the template `templateId` for the caller, or removes the bookmark when it has one; answers `isBookmarked`, the state after the call. An id that is not of the catalogue's form is a 400 naming `templateId`.",
  },

  // organization
  "organization.all": {
    description: "Every organization the caller belongs to, with the caller's role in each.",
  },
  "organization.one": { description: "One organization the caller belongs to; others answer 404." },
  "organization.update": { description: "Renames the active organization. Owner only." },
  "organization.active": {
    description:
      "The caller's active organization (the session's, or the one an API key belongs to), with the caller's role in it.",
  },
  "organization.setDefault": {
    description:
      "Makes one of the caller's organizations the default: a login that names no organization starts there (one default per user; another organization is a 404).",
  },
  "organization.updateMemberRole": {
    description:
      "Changes a member's role between `admin` and `member` (`memberId` as user.all lists it). Administrators change members only, the owner administrators too; one's own role and the owner's are fixed (403), `owner` is not a role to give (400). Another organization's member is a 404.",
  },
  "organization.setActive": {
    description: "Makes another of the caller's organizations the active one for this session.",
  },
  "organization.create": {
    description:
      "Creates a new organization owned by the caller, who can then switch to it with organization.setActive; the active organization stays as it is.",
    example: { name: "Acme staging" },
  },
  "organization.delete": {
    description:
      "Deletes an organization the caller owns, with its members and invitations. Refused (409) while it still has services or servers; the instance organization and the caller's only organization cannot be deleted (403).",
    errors: [409],
  },
  "organization.inviteMember": {
    description:
      "Invites an email address into the active organization as `admin` or `member` and answers the secret `token` once: the invitee accepts with it (auth.register or organization.acceptInvitation) within 7 days.",
    errors: [409],
    example: { email: "colleague@example.com", role: "member" },
  },
  "organization.allInvitations": { description: "The active organization's invitations, newest first." },
  "organization.removeInvitation": {
    description: "Cancels a pending invitation of the active organization.",
    errors: [409],
  },
  "organization.acceptInvitation": {
    description:
      "Joins the organization of an invitation with its secret `token`; the invitation must be addressed to the caller's email.",
    errors: [409],
  },

  // project
  "project.create": {
    description:
      "Creates a project in the active organization together with its default environment (`production`). Members need canCreateProjects.",
    example: { name: "shop", description: "the web shop", env: "LOG_LEVEL=info" },
  },
  "project.one": {
    description: "A project with its environments and, in each, its applications and other services.",
  },
  "project.all": {
    description: "Every project of the active organization with environments and service summaries.",
  },
  "project.update": { description: "Changes a project's name, description or shared variables (`env`)." },
  "project.remove": {
    description:
      "Deletes a project with every environment and service in it: applications are torn down on their servers first. Irreversible; members need canDeleteProjects.",
  },
  "project.duplicate": {
    description:
      "Copies an environment (and the selected services, all by default) into a new project, or into a new environment of the same project with `duplicateInSameProject`.",
    errors: [409],
  },
  "project.allForPermissions": {
    description:
      "Every project of the organization, newest first, with its environments and their services (id, name, appName, status), for an administrator choosing a member's grants (user.assignPermissions).",
  },
  "project.homeStats": {
    description:
      "How many projects, environments, applications, compose stacks and database services the caller's grants show, and those services by status: `running` counts the done ones, `error` the failed, `idle` the rest.",
  },
  "project.onboardingStatus": {
    description:
      "The getting started steps the caller has taken in the organization (`steps.createProject`, `createService`, `deployService`, from what their grants show) and whether they dismissed them (`completed`, `completedAt`). Dokploy's answer was not in its readable sources: this shape is ours.",
  },
  "project.completeOnboarding": {
    description:
      "Dismiss the getting started steps for the caller in this organization; the first time is kept. Other members are not affected.",
  },
  "overview.services": {
    description:
      "Every service the caller's grants show (applications, the six database kinds, compose stacks), flat: `id`, `type`, `name`, `appName`, `status`, `createdAt`, its server (`serverId`, `serverName`, null on this machine), project and environment (ids and names), `icon` (always null) and `lastDeployAt`, the newest deployment's time of any kind of service (null before the first).",
  },
  "overview.domains": {
    description:
      "Every domain of the applications (their preview deployments' too) and compose stacks the caller's grants show, oldest first: the domain's own fields (`domainId`, `host`, `path`, `port`, `customEntrypoint`, `https`, `certificateType`, `createdAt`, `enabled`, `domainType`) with the service it routes to (`serviceOwnerId`, `serviceOwnerType` application or compose, `serviceName`) and its project and environment (ids and names).",
  },
  "overview.backups": {
    description:
      "The newest 500 runs of the organization's database backups and volume backups whose service the caller's grants show (and of the control plane's own backup, for instance administrators only), newest first: `deploymentId`, `kind` (backup or volumeBackup), `status`, `createdAt`, the destination (`destinationId`, `destinationName`), `databaseType` / `backupType` (backups) or `serviceType` (volume backups), and the service (`serviceName`, `serviceOwnerId`, `serviceOwnerType`: `web-server` for the control plane's own, `serverId`, `projectId`, `environmentId`).",
  },
  "project.search": {
    description:
      "Projects whose name or description contains the terms, paginated (`limit` 1-100, `offset`).",
  },

  // environment
  "environment.create": {
    description: "Adds an environment to a project; names are unique within a project.",
    errors: [409],
    example: { projectId: id, name: "staging", description: "before production" },
  },
  "environment.one": { description: "An environment with its project and its services." },
  "environment.byProjectId": { description: "The environments of a project, the default one first." },
  "environment.update": {
    description: "Changes an environment's name, description or variables (`env`).",
    errors: [409],
  },
  "environment.duplicate": {
    description:
      "Copies an environment into a new environment of its project (`name`, unique in the project: 409; `description`): its variables and the services the caller sees, each with a new appName and ` (copy)` after its name, as project.duplicate with duplicateInSameProject. Answers the new environment with its services and project.",
    errors: [409],
  },
  "environment.search": {
    description:
      "The organization's environments whose name or description contains the terms (`q`, or `name` and `description` apart), of one project with `projectId`, newest first, paginated (`limit` 1-100, `offset`); a member sees the environments granted.",
  },
  "environment.remove": {
    description:
      "Deletes an environment and tears down its services; the default environment cannot be removed. Irreversible.",
  },

  // cluster
  "cluster.getNodes": {
    description:
      "The Swarm nodes of the server (this machine when `serverId` is omitted) as Docker describes them (role, availability, state, engine version, labels), each with `platform`: the Platform server it is and whether its agent is online, with the time it was last seen.",
    errors: [404, 409],
  },
  "cluster.addWorker": {
    description:
      "Without `joinServerId`: Dokploy's `docker swarm join` command for a machine Platform does not manage; it holds the Swarm's join token, so only administrators receive it, and it is never logged. With `joinServerId` (a server of the organization): that server's agent joins the Swarm as a worker; the join token is never answered nor logged, and `command` is null.",
    errors: [404, 409],
  },
  "cluster.addManager": {
    description: "As addWorker, joining as a manager (an odd number of managers keeps the Raft quorum).",
    errors: [404, 409],
  },
  "cluster.updateNode": {
    description:
      "Changes a node: `availability` drain moves its tasks to other nodes, pause keeps them but places no new ones; `role` promotes or demotes it; `labels` replaces the node's labels (the platform.* ownership labels are kept and cannot be set).",
    errors: [404, 409],
  },
  "cluster.removeWorker": {
    description: "Drains the node, then removes it from the Swarm (a node that is down too).",
    errors: [404, 409],
  },

  // docker
  "docker.getContainers": {
    description: "Every container on the server (this machine when `serverId` is omitted), running or not.",
  },
  "docker.restartContainer": {
    description:
      "Restarts one container; only containers of the caller's organization's services are touched.",
    errors: [404],
  },
  "docker.startContainer": {
    description: "Starts one container of the caller's organization (already running: nothing to do).",
    errors: [404],
  },
  "docker.stopContainer": {
    description:
      "Stops one container of the caller's organization (Docker's 10 s before it is killed); another organization's container is a 404 and is not stopped.",
    errors: [404],
  },
  "docker.killContainer": {
    description:
      "Kills one running container of the caller's organization (SIGKILL); one that is not running is a 409.",
    errors: [404, 409],
  },
  "docker.removeContainer": {
    description:
      "Removes one container of the caller's organization, running or not (like `docker rm -f`); its volumes are kept.",
    errors: [404],
  },
  "docker.listContainerFiles": {
    description:
      "The entries of the directory `path` of a container (`{name, isDirectory}`, directories first), read through Docker's archive API (no shell). `path` must not hold `..` segments or NUL.",
    errors: [404],
  },
  "docker.readContainerFile": {
    description:
      "The text of the file `path` of a container, base64-encoded, with `truncated` when it is longer than 512 KiB; a binary file, a directory or a symbolic link is a 400 saying so. Through Docker's archive API (no shell).",
    errors: [404],
  },
  "docker.writeContainerFile": {
    description:
      "Writes `content` (UTF-8, at most 512 KiB) as the file `path` of a container, keeping an existing file's owner and mode; its directory must exist. Through Docker's archive API (no shell).",
    errors: [404],
  },
  "docker.deleteContainerFile": {
    description:
      "Deletes the file or directory `path` (recursively) of a running container: the agent runs `rm -rf -- <path>` in it through Docker's exec API as an argument vector (never a shell). `/`, the top-level system directories and anything under /proc, /sys or /dev are a 400 naming `path`; a missing path or another organization's container a 404; a stopped container or one without `rm` (distroless) a 409 saying so.",
    errors: [404, 409],
  },
  "docker.getServerHealth": {
    description:
      "The server's health (this machine's, or serverId's): its engine now (version, Swarm state, running, stopped and unhealthy containers) and its stored system metrics of the last `sinceHours` (1-720, default 24): samples, CPU and memory average and maximum, disk of the newest. status is unreachable when the engine does not answer, degraded when a container's health check fails.",
  },
  "docker.getEvents": {
    description:
      "The engine's events of the caller's containers in the last `minutes` (1-1,440, default 15), newest first (at most 1,000), in `docker events` JSON, with `fetchedAt`.",
  },
  "docker.getConfig": {
    description:
      "The container's full configuration as `docker inspect` shows it (environment, mounts, networks, limits).",
    errors: [404],
  },
  "docker.getContainersByAppNameMatch": {
    description:
      "Containers whose name contains `appName`, or those of the compose project or stack of that name (`appType`).",
  },
  "docker.getContainersByAppLabel": {
    description:
      "Containers of the Swarm service `appName` (`type: swarm`) or whose name contains it (`standalone`).",
  },
  "docker.getStackContainersByAppName": { description: "Containers of the stack `appName` on the server." },
  "docker.getServiceContainersByAppName": {
    description: "Containers of the Swarm service `appName` on the server.",
  },

  // agent
  "agent.enroll": {
    description:
      "Called by a server's agent at installation: exchanges the one-time enrollment token of server.enrollmentCommand or server.setup for NATS credentials and the agent's settings.",
    errors: [401, 409],
  },

  // server
  "server.create": {
    description:
      "Registers a remote server (address, SSH user and key). It stays inactive until server.setup installs and enrolls its agent.",
    example: { name: "web-1", ipAddress: "203.0.113.10", port: 22, username: "root", sshKeyId: id },
  },
  "server.one": {
    description:
      "A server with its status, whether its agent is connected, the output of its last setup, `metricsConfig` (as server.setupMonitoring kept it; null until then), whose token only the organization's owner and administrators see (`[redacted]` for members), and `enableDockerCleanup` (whether settings.updateDockerCleanup turned its daily Docker cleanup on).",
  },
  "server.all": {
    description:
      "The organization's servers, newest first, each with `totalSum`, the number of services on it, and `enableDockerCleanup` (its daily Docker cleanup, see settings.updateDockerCleanup).",
  },
  "server.update": { description: "Changes a server's name, address, port, SSH user or key, or type." },
  "server.updateBuildsConcurrency": {
    description:
      "How many deployments build on the server at once (1-100; its build deployments if it is a build server); answers the server. Beyond them a deployment waits, still queued, for a slot.",
    errors: [404],
  },
  "server.remove": {
    description:
      "Deletes a server and revokes its agent's credentials; refused while services are placed on it.",
    errors: [409],
  },
  "server.setupMonitoring": {
    description:
      "Keeps the server's `metricsConfig` (sealed) and has its agent apply it live: system and container samples into its local store, pruned after retentionDays, served on server.port at /metrics (Bearer token, JSON or Prometheus text), threshold callbacks.",
  },
  "server.getServerMetrics": {
    description:
      "Reads an agent's metrics endpoint (`url`, e.g. http://<ip>:<port>/metrics) with its token through the outbound guard (the platform's own machines only for the organization owning them; every failure that would tell a port's state is one \"could not be reached\"); pass the input in tRPC's `?input=` form (a plain `?token=` is refused as a credential in a query string). `token` is optional: without it the control plane uses the stored monitoring token of the caller's organization's server whose address and metrics port `url` names (this machine for the instance organization), for the owner and administrators, who may read that token; any other url is a 400 naming `token`, and another organization's token is never used. The dashboard sends none, so no token travels in a URL.",
  },
  "server.publicIp": {
    description:
      "The public IP address of the machine running the control plane (empty on the cloud edition).",
  },
  "server.validate": {
    description:
      "Asks the server's agent what is installed: Docker and its version, Swarm, the platform network, the proxy and the build tools.",
  },
  "server.security": {
    description:
      "The server's security audit from its agent: firewall, SSH settings, a non-root sudo user, unattended upgrades and fail2ban.",
  },
  "server.enrollmentCommand": {
    description:
      "Issues a one-time enrollment token (valid one hour) and the shell command that installs the agent by hand on the server.",
  },
  "server.setup": {
    description:
      "Logs in over SSH with the server's key and runs the bootstrap: Docker, Swarm, the agent (enrolled with a one-time token) and the proxy. Answers once the agent validated, with the log in `message`.",
    errors: [409],
  },

  // sshKey
  "sshKey.create": {
    description: "Stores an SSH key pair; the private key is encrypted at rest and never shown again.",
    example: {
      name: "deploy key",
      description: "servers and private repositories",
      privateKey: "-----BEGIN OPENSSH PRIVATE KEY-----\n…\n-----END OPENSSH PRIVATE KEY-----\n",
      publicKey: "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAA… deploy",
    },
  },
  "sshKey.one": { description: "One SSH key: name, description and public key." },
  "sshKey.all": { description: "The organization's SSH keys, newest first (public parts only)." },
  "sshKey.allForApps": {
    description:
      "The organization's SSH keys as `sshKeyId` and `name` only, newest first: any member may list them to pick an application's Git key (sshKey.all needs canAccessToSSHKeys).",
  },
  "sshKey.update": {
    description: "Renames an SSH key or changes its description; the key itself cannot change.",
  },
  "sshKey.remove": {
    description: "Deletes an SSH key; servers and applications that used it keep running without one.",
  },
  "sshKey.generate": {
    description:
      "Generates a new key pair (ed25519 or RSA) in OpenSSH format; nothing is stored until sshKey.create.",
  },

  // application
  "application.deployNginxQuickstart": {
    description:
      'Creates a "Hello World" application in `environmentId` (on `serverId`, or this machine) running the quickstart image (`PLATFORM_QUICKSTART_IMAGE`, default `nginx:alpine`, served on port 80), routes a generated host (`<appName>-<hash>.<server IPv4>.traefik.me`) to it over HTTP, and queues its deployment. Answers `applicationId`, `appName`, `domainId`, `domainUrl` and `deploymentId`.',
    example: { environmentId: "env_123" },
  },
  "application.create": {
    description:
      "Creates an application in an environment, with status `idle` and no source yet; `appName` (the Swarm service name) is derived from the name unless given.",
    errors: [409],
    example: { name: "web", environmentId: id, appName: "shop-web", description: "the shop's front end" },
  },
  "application.one": {
    description:
      "The full application: settings, environment and project, deployments, domains, ports and credentials (passwords never shown).",
  },
  "application.update": {
    description:
      "Changes any of the application's settings (name, resources, command, replicas, health check, …); fields not sent keep their value. Takes effect on the next deployment.",
    errors: [409],
  },
  "application.search": {
    description: "The organization's applications matching the filters, paginated (`limit` 1-100, `offset`).",
  },
  "application.saveGithubProvider": {
    description:
      "Sets the source to a repository of a GitHub provider: owner, repository, branch, build path, watch paths.",
  },
  "application.saveGitlabProvider": {
    description:
      "Sets the source to a project of a GitLab provider: project, branch, build path, watch paths.",
  },
  "application.saveBitbucketProvider": {
    description:
      "Sets the source to a repository of a Bitbucket provider: repository, branch, build path, watch paths.",
  },
  "application.saveGiteaProvider": {
    description:
      "Sets the source to a repository of a Gitea provider: owner, repository, branch, build path, watch paths.",
  },
  "application.saveGitProvider": {
    description:
      "Sets the source to any Git URL (HTTPS, or SSH with a stored key in `customGitSSHKeyId`), with branch and build path.",
  },
  "application.saveDockerProvider": {
    description:
      "Sets the source to a Docker image, with registry credentials when the image is private (the password is encrypted at rest).",
  },
  "application.disconnectGitProvider": {
    description:
      "Removes the Git source: every Git field returns to its default; the running service is untouched.",
  },
  "application.saveBuildType": {
    description:
      "Chooses how the source is built: Dockerfile (with context path and stage), nixpacks, railpack, heroku or paketo buildpacks, or static files.",
  },
  "application.saveEnvironment": {
    description:
      "Sets the application's variables (`env`), build arguments and build secrets, as `KEY=value` lines; used from the next deployment.",
  },
  "application.start": {
    description: "Starts the application's Swarm service again; its status becomes `done`.",
  },
  "application.stop": {
    description: "Stops the application: its Swarm service is scaled to 0 and its status becomes `idle`.",
  },
  "application.reload": {
    description: "Restarts the application's tasks with the current configuration, without a rebuild.",
  },
  "application.readAppMonitoring": {
    description:
      "One sample of the application's running containers through the agent: CPU (percent of one core), memory without page cache, network bytes, and each container's status and uptime. Self-hosted edition only.",
    errors: [404],
  },
  "application.readLogs": {
    description: `The newest lines the application's containers printed: every replica on every node of the Swarm, each line naming its task (\`<appName>.<slot>.<task id>\`). ${RUNTIME_LOGS}`,
    errors: [404],
  },
  "application.markRunning": { description: "Sets the application's status to `running` by hand." },
  "application.move": {
    description: "Moves the application to another environment of the same organization.",
    errors: [409],
  },
  "application.refreshToken": {
    description:
      "Replaces the application's webhook token; deploy webhook URLs with the old token stop working.",
  },
  "application.delete": {
    description:
      "Deletes the application: stops its deployments, removes its Swarm service, uploads and proxy files, then its records. Irreversible.",
  },
  "application.deploy": {
    description:
      "Queues a deployment (one at a time per application) and answers at once with its `deploymentId`; follow it with deployment.logs.",
  },
  "application.redeploy": {
    description:
      "Queues a rebuild of the current source, clearing the build cache first when `cleanCache` is on.",
  },
  "application.cancelDeployment": {
    description:
      "Stops the application's running deployment; `success: false` with a message when none runs.",
  },
  "application.killBuild": {
    description:
      "Stops the application's running deployment and its build process; answers success either way.",
  },
  "application.cleanQueues": {
    description: "Drops the application's waiting deployments; a running one goes on.",
  },
  "application.clearDeployments": {
    description: "Deletes the application's finished deployments except the newest successful one.",
  },
  "application.readTraefikConfig": {
    description:
      "The application's Traefik dynamic configuration file on its server, as YAML text (empty when none).",
  },
  "application.updateTraefikConfig": {
    description:
      "Replaces the application's Traefik file with the given YAML, checked against Traefik's file-provider schema before it is written. Except for the instance administrator, it may only route the application's own hosts to the application's own service (HTTP routers only, no file paths, no plugins, bounded priority).",
  },

  // deployment
  "deployment.all": {
    description:
      "The application's deployments, newest first; each successful one carries the `rollbackId` rollback.rollback takes, and `buildServerId` names the build server that built its image (null when it was built where it runs).",
  },
  "deployment.allByCompose": {
    description: "A compose service's deployments; empty until compose services exist.",
  },
  "deployment.allByServer": { description: "The deployments that ran on a server, newest first." },
  "deployment.allByType": {
    description:
      "The deployments of one service by type; `application`, `compose`, `server`, `schedule` (a schedule's runs) and the six database kinds are served, the other types answer an empty list.",
  },
  "deployment.allCentralized": {
    description:
      "The newest 500 deployments of the services (applications and databases) the caller may see, with the name of their service.",
  },
  "deployment.queueList": {
    description:
      "The deployment queue of the services (applications and databases) the caller may see: waiting and active jobs, then the latest 100 finished ones.",
  },
  "deployment.killProcess": {
    description:
      "Stops a deployment: a running one is aborted, a waiting one dropped; it ends with status `error`.",
  },
  "deployment.readLogs": {
    description:
      'The last `tail` lines (1-10,000, default 100) of the deployment\'s log, each `<time> <line>`, as one string ending with a newline ("" when the log is empty). The whole log is the `logs` field of the deployment; GET /api/deployment.logs follows a running one.',
  },
  "deployment.removeDeployment": {
    description: "Removes a finished deployment and its log from the history; a running one is refused.",
    errors: [409],
  },

  // port
  "port.create": {
    description:
      "Publishes a target port of the application's service on a port of the server (ingress or host mode); applies on the next deployment. Ports the platform needs (22, 80, 443, 2377, 4222, 4789, 5432, 7946, 8080 and the proxy's) are refused; a port another application publishes on the same server is a 409.",
    errors: [409],
    example: {
      applicationId: id,
      publishedPort: 8080,
      targetPort: 80,
      protocol: "tcp",
      publishMode: "ingress",
    },
  },
  "port.one": { description: "One published port of an application, with its protocol and publish mode." },
  "port.update": { description: "Changes a published port; applies on the next deployment.", errors: [409] },
  "port.delete": {
    description: "Stops publishing a port (applies on the next deployment) and answers the removed port.",
  },

  // registry
  "registry.create": {
    description:
      "Stores a container registry (`host[:port]`, username, password encrypted at rest and never shown) for pulls, build pushes and rollbacks.",
    example: {
      registryName: "company registry",
      registryUrl: "registry.example.com",
      username: "deploy",
      password: "registry-password",
      registryType: "cloud",
      imagePrefix: "shop",
    },
  },
  "registry.all": { description: "The organization's registries, newest first, without passwords." },
  "registry.one": {
    description: "One registry without its password; the input may also come as a JSON body.",
  },
  "registry.update": { description: "Changes a registry; an absent password keeps the stored one." },
  "registry.remove": {
    description:
      "Deletes a registry; applications that referred to it keep running, with the reference cleared.",
  },
  "registry.testRegistry": {
    description:
      "Logs in to a registry through a server's Docker Engine without storing anything; the host is checked by the outbound guard first, and a failure answers its category (unauthorized, unknown host, or one \"could not be reached\" for every failure that would tell a port's state), never the remote's text; the platform's own machines are refused as targets to other organizations.",
  },
  "registry.testRegistryById": {
    description:
      "Logs in to a stored registry through a server's Docker Engine; a failure answers its category, never the remote's text.",
  },

  // domain
  "domain.create": {
    description:
      "Adds a host (and optional path) to an application with Let's Encrypt, a custom certificate or no TLS; the application's Traefik file is rewritten at once. A host another organization routes (or covers with a wildcard) is a 409. Except for the instance administrator, `middlewares` may only name the application's own middlewares (no `@provider`) and `customEntrypoint` must be web or websecure.",
    errors: [409],
    example: {
      host: "shop.example.com",
      https: true,
      certificateType: "letsencrypt",
      domainType: "application",
      applicationId: id,
      port: 3000,
    },
  },
  "domain.byApplicationId": { description: "The domains of an application." },
  "domain.byComposeId": {
    description: "The domains of a compose service (compose services do not exist yet: 404).",
  },
  "domain.one": { description: "One domain with its host, path, port, TLS settings and service." },
  "domain.update": {
    description: "Changes a domain; the application's Traefik file is rewritten at once.",
    errors: [409],
  },
  "domain.toggleEnable": {
    description:
      "Disables a domain (its row and host kept, the organization's still, but routed no more: it leaves its application's or stack's Traefik file at once, the file is removed with the last enabled domain) or enables it again. Answers the domain with `enabled` and `requiresRedeploy` (always false: stacks are routed by their Traefik file too). A preview's domain is a 400.",
  },
  "domain.delete": {
    description:
      "Removes a domain; the Traefik file is rewritten, or removed with the application's last domain.",
  },
  "domain.generateDomain": {
    description:
      "Generates a free host `<appName>-<random>.<server IPv4>.<wildcard domain>` (traefik.me by default) that resolves to the server without DNS setup.",
  },
  "domain.canGenerateTraefikMeDomains": {
    description: "The server's IPv4 address when a domain can be generated for it, else an empty string.",
  },
  "domain.validateDomain": {
    description:
      "Resolves the host and tells whether one of its addresses is `serverIp`, with the addresses found.",
  },

  // security
  "security.create": {
    description:
      "Adds an HTTP Basic credential to an application; the proxy asks for it on every request (passwords kept as APR1 hashes).",
    errors: [409],
    example: { applicationId: id, username: "team", password: "a-long-password" },
  },
  "security.one": {
    description:
      "One credential; `password` is always empty (only the hash is kept). The input may also come as a JSON body.",
  },
  "security.update": { description: "Changes a credential's username or password.", errors: [409] },
  "security.delete": {
    description: "Removes a credential; without credentials left the application is public again.",
  },

  // settings
  "admin.setupMonitoring": {
    description:
      "Sets up the monitoring of the control plane's own machine (instance administrators): the same as server.setupMonitoring for this machine.",
  },
  "settings.getWebServerSettings": {
    description:
      "The instance's web server settings: host, TLS, server IP, dashboard, Traefik image and wildcard domain; the SSH private key shown as `[redacted]`.",
  },
  "settings.assignDomainServer": {
    description:
      "Serves the control plane under `host` through this machine's proxy, with Let's Encrypt (needs letsEncryptEmail) or no TLS.",
  },
  "settings.reloadTraefik": {
    description: "Restarts the proxy on this machine or on `serverId`; 404 when no proxy is installed there.",
    errors: [404],
  },
  "settings.toggleDashboard": {
    description:
      "Turns the Traefik dashboard (port 8080) on or off, installing or updating the proxy as needed.",
  },
  "settings.readTraefikConfig": {
    description: "The proxy's static configuration (traefik.yml) as YAML text; empty when there is none.",
  },
  "settings.updateTraefikConfig": {
    description:
      "Replaces traefik.yml (checked against Traefik's static configuration schema first) and restarts the proxy.",
  },
  "settings.cleanUnusedImages": {
    description:
      "Removes unused images on this machine or on `serverId` through its agent and answers the bytes and objects reclaimed; another organization removes only images labelled as its own.",
  },
  "settings.cleanUnusedVolumes": {
    description:
      "Removes unused volumes on this machine or on `serverId` and answers what was reclaimed; another organization removes only volumes labelled as its own.",
  },
  "settings.cleanStoppedContainers": {
    description:
      "Removes stopped containers on this machine or on `serverId` and answers what was reclaimed; another organization removes only containers labelled as its own.",
  },
  "settings.cleanDockerBuilder": {
    description:
      "Clears the build cache of this machine or of `serverId` (it has no owner: instance administrators only, 403 otherwise) and answers the bytes reclaimed.",
  },
  "settings.cleanAll": {
    description:
      "Removes stopped containers, unused images and volumes (and, for instance administrators, the build cache) on this machine or on `serverId`, answering what was reclaimed.",
  },
  "settings.updateDockerCleanup": {
    description:
      "Turns the daily Docker cleanup (cleanAll at midnight, scheduled with croner, kept across restarts) of this machine or of `serverId` on or off; each run records a dockerCleanup event.",
  },
  "settings.readStatsLogs": {
    description:
      "One page of the proxy's JSON access log, newest first, filtered by search text, status and date range: `{data, totalCount}`. Instance administrators only for this machine.",
  },
  "settings.toggleRequests": {
    description:
      "Turns the proxy's JSON access log on or off in traefik.yml (checked against Traefik's schema) and restarts the proxy.",
  },
  "settings.haveActivateRequests": {
    description: "Whether the proxy writes its access log, and to which file inside the proxy's container.",
  },
  "settings.saveSSHPrivateKey": {
    description:
      "Stores the instance's SSH private key, sealed at rest; it is never shown again (getWebServerSettings shows `[redacted]`).",
  },
  ...databaseDocs("postgres", { databaseName: "orders", databaseUser: "shop" }),
  ...databaseDocs("mysql", {
    databaseName: "orders",
    databaseUser: "shop",
    databaseRootPassword: "R00t-pass",
  }),
  ...databaseDocs("mariadb", { databaseName: "orders", databaseUser: "shop" }),
  ...databaseDocs("mongo", { databaseUser: "shop" }),
  ...databaseDocs("redis", {}),
  ...libsqlDocs(),
  // compose
  "compose.create": {
    description: "Create a compose stack in an environment (status idle; deploy starts it)",
    example: {
      name: "Shop",
      appName: "shop-stack",
      environmentId: "V1StGXR8_Z5jdHi6B-myT",
      composeType: "stack",
      composeFile: "services:\n  web:\n    image: nginx:1.27\n",
    },
  },
  "compose.one": { description: "A compose stack with its file, type, variables, source and status." },
  "compose.update": {
    description: "Change a compose stack's file, type, variables or source (applied by the next deploy)",
  },
  "compose.deploy": { description: "Queue a deployment of the stack; answers at once with its deploymentId" },
  "compose.redeploy": { description: "Queue a new deployment of the stack from its current file" },
  "compose.start": { description: "Start the stack's services again (status done)" },
  "compose.stop": { description: "Stop the stack's services (scaled to 0, volumes kept; status idle)" },
  "compose.delete": {
    description: "Delete the stack: its services and networks, and with deleteVolumes its volumes",
  },
  "compose.loadServices": { description: "The service names of the stack's file" },
  "compose.readLogs": {
    description: `The newest lines one container of the stack printed (\`containerId\`, as docker.getContainersByAppNameMatch lists them); a container that is not of this stack is a 404. ${RUNTIME_LOGS}`,
    errors: [404],
  },
  "compose.getConvertedCompose": {
    description:
      "The file as it will be deployed: the stack's file with the platform's additions, interpolated, every literal `$` of a value written `$$` (Compose's escape), so that Compose expands nothing in it",
  },
  "compose.move": { description: "Move the stack to another environment of the organization" },
  "compose.search": {
    description:
      "Search the organization's compose stacks the caller may see: `q` on name, appName and description, each text filter a case-insensitive partial match, newest first, `{items, total}`",
  },
  "compose.saveEnvironment": {
    description:
      "Set the stack's variables (the file is interpolated with them at the next deploy); createEnvFile only false: no .env file is written",
  },
  "compose.cancelDeployment": {
    description: "Stop the stack's running deployment; `success: false` when none runs",
  },
  "compose.killBuild": { description: "Stop the stack's running deployment and what it runs on the server" },
  "compose.cleanQueues": { description: "Drop the stack's waiting deployments (a running one goes on)" },
  "compose.clearDeployments": {
    description:
      "Delete the stack's finished deployments except the newest successful one (needs canDeleteServices)",
  },
  "compose.disconnectGitProvider": {
    description: "Remove the stack's repository source: back to a raw file, every Git field to its default",
  },
  "compose.getDefaultCommand": {
    description:
      "The command the stack's server deploys it with: `docker stack deploy …` for `stack`, `docker compose … up` for `docker-compose`",
  },
  "compose.refreshToken": {
    description:
      "Replace the stack's webhook token: POST /api/deploy/compose/<refreshToken> (the provider told by its event header) deploys on a push when autoDeploy, the branch or triggerType tag, and watchPaths allow; the old URL stops working",
  },
  "compose.processTemplate": {
    description:
      "Render a template sent as base64 of JSON {compose, config} (Dokploy's export; config is template.toml) for the stack: `{compose, template: {envs, domains, mounts}}`; nothing is stored, an invalid template is a 400 naming base64",
  },
  "compose.previewTemplate": {
    description:
      "Render a template sent as base64 of JSON {compose, config} for a stack to be named appName (hosts generated for it, on serverId when given); nothing is stored",
  },
  "compose.randomizeCompose": {
    description:
      "The stack's stored file with every service, volume, network, config and secret renamed `<name>-<suffix>` and every reference following (suffix: lowercase letters, digits, `-`, `_`, at most 32; else 8 random hex digits); nothing is stored. compose.update's randomize and suffix apply the same renaming at each deploy.",
  },
  "compose.isolatedDeployment": {
    description:
      "The stack's file, read from its source (a fresh clone for a repository), as an isolated deployment deploys it: every service (but one with network_mode) joins a network of the stack's own keyed by suffix (else the stack's suffix, else its appName), created with the stack as `<appName>_<key>`; with isolatedDeploymentsVolume the volumes are renamed `<name>-<key>`. Unchanged when isolatedDeployment is off; nothing is stored.",
  },
  "compose.loadMountsByService": {
    description:
      "The named volumes Docker mounted into a running container of the stack's service serviceName, as Docker's inspect data lists them (`Type`, `Name`, `Source`, `Destination`, `Driver`, `Mode`, `RW`, `Propagation`), read by its server's agent among the stack's own containers; [] when the service runs no container.",
  },
  "compose.fetchSourceType": {
    description:
      "Reads the stack's file from its source now (the stored text, or the file at composePath of a fresh shallow clone of its branch through its server's agent) and answers the sourceType; a source that cannot be read is a 400 naming sourceType.",
  },
  "compose.import": {
    description:
      "Replaces the stack's file, variables, mounts and domains with those of a template sent as base64 of JSON {compose, config} (Dokploy's export); the source becomes raw. The template's file and domains pass the conversion (the tenant's refusals too) before anything is replaced; an invalid template is a 400 naming base64. The next deploy applies it.",
  },
  "compose.getTags": {
    description:
      "The tags of the templates (built-in catalogue, then the remote one or baseUrl's), each once",
  },
  "compose.templates": {
    description:
      "The templates: the built-in catalogue, then those of the remote one (PLATFORM_TEMPLATES_URL, or baseUrl) whose ids are not built-in; a remote that fails is left out",
  },
  "compose.deployTemplate": {
    description:
      "Create a compose stack from a template (appName <project>-<id>-<random>, variables generated, file mounts and domains created, a generated host where the template names none) and queue its deployment; an unknown template is a 404",
    example: { environmentId: "V1StGXR8_Z5jdHi6B-myT", id: "uptime-kuma" },
  },
  // mounts
  "mounts.create": {
    description:
      "Mount a volume, a file or (instance organization) a host path into a service (next deploy); a compose stack's mounts are files (filePath, content; mountPath empty) its compose file binds as ../files/<filePath>",
    example: {
      type: "volume",
      volumeName: "shop-data",
      mountPath: "/data",
      serviceType: "application",
      serviceId: "V1StGXR8_Z5jdHi6B-myT",
    },
  },
  "mounts.one": {
    description: "One mount of a service: its type, volume, file or host path and where it is mounted.",
  },
  "mounts.update": { description: 'Change a mount (next deploy); null or "" clears a field' },
  "mounts.remove": { description: "Remove a mount (next deploy); a volume's data stays in the volume" },
  "mounts.listByServiceId": {
    description:
      "The mounts of a service (`serviceType` application, a database kind or compose, with its `serviceId`), oldest first. Another organization's or an unseen service is a 404.",
  },
  "mounts.allNamedByApplicationId": {
    description:
      "The named volumes Docker mounted into the application's running container, as Docker's inspect data lists them (`Type`, `Name`, `Source`, `Destination`, `Driver`, `Mode`, `RW`, `Propagation`), read by its server's agent; [] when the application runs no container on its server's node.",
  },
  // redirects
  "redirects.create": {
    description: "Redirect an application's requests matching a regex (a redirectRegex middleware)",
    example: {
      applicationId: "V1StGXR8_Z5jdHi6B-myT",
      regex: "^https?://www\\.example\\.com/(.*)",
      replacement: "https://example.com/$1",
      permanent: true,
    },
  },
  "redirects.one": {
    description: "One redirect of an application: its regex, replacement and whether it is permanent.",
  },
  "redirects.update": { description: "Change a redirect's regex, replacement or permanence" },
  "redirects.delete": {
    description: "Remove a redirect; the application's proxy file is rewritten without it.",
  },
  // patch
  "patch.create": {
    description:
      "Add a patch to an application (`applicationId`) or a compose stack (`composeId`, exactly one of the two): `type` update or create writes `content` (at most 256 KiB; a service's patches together at most 512 KiB) at `filePath`, delete removes the file. `filePath` is relative to the repository's root: `..`, an absolute path, control characters (NUL included) and `.git/` are a 400 naming it; a second patch of the same path is a 409.",
    example: {
      applicationId: "V1StGXR8_Z5jdHi6B-myT",
      filePath: "src/config.ts",
      content: "export const apiUrl = 'https://api.example.com';\n",
      type: "update",
    },
  },
  "patch.one": { description: "One patch: its path, type, content and whether it is applied." },
  "patch.byEntityId": {
    description: "The patches of an application or a compose stack (`id` and `type`), by path.",
  },
  "patch.update": {
    description: "Change a patch's path, content, type or whether it is applied (checked as on create).",
  },
  "patch.delete": {
    description: "Remove a patch; the next build uses the repository's file. Answers the patch.",
  },
  "patch.toggleEnabled": {
    description: "Apply a patch at the next builds (`enabled` true) or keep it without applying it.",
  },
  "patch.saveFileAsPatch": {
    description:
      "Save a file's new content as the service's patch of `filePath`: created (`patchType` create or update) or, when the service has a patch of that path, changed.",
  },
  "patch.markFileForDeletion": {
    description:
      "Delete `filePath` of the repository at every build: the path's patch becomes (or is created as) a delete.",
  },
  "patch.ensureRepo": {
    description:
      "Clone the service's branch once (through the agent of the server that builds it) to see that it can be read; answers the handle `<type>/<appName>` that readRepoDirectories takes as `repoPath`. No clone is kept.",
  },
  "patch.readRepoDirectories": {
    description:
      "The files of the service's branch as a tree ({name, path, type file|directory, children}), from a fresh shallow clone; `repoPath` must be the handle ensureRepo answered (a 400 naming it otherwise).",
  },
  "patch.readRepoFile": {
    description:
      "A file as the service's builds see it: the content of its patch of `filePath` when it writes one, else the branch's file (at most 1 MiB; a delete patch shows what it deletes).",
  },
  "patch.cleanPatchRepos": {
    description:
      "Dokploy removes its kept patch repositories; none are kept here (every read clones afresh into a directory removed afterwards), so it answers true. A `serverId` must be one of the organization's servers.",
  },
  // certificates
  "certificates.create": {
    description:
      "Store a PEM certificate chain (leaf first) and its unencrypted key; the pair is checked, the key sealed, and both written to the proxy's TLS store of serverId (this machine when absent).",
    example: {
      name: "Wildcard example.com",
      certificateData: "-----BEGIN CERTIFICATE-----\nMIIB...\n-----END CERTIFICATE-----\n",
      privateKey: "-----BEGIN PRIVATE KEY-----\nMIGH...\n-----END PRIVATE KEY-----\n",
      serverId: "V1StGXR8_Z5jdHi6B-myT",
    },
  },
  "certificates.one": {
    description: "One certificate: its chain, the hosts it covers and when it expires (never its key).",
  },
  "certificates.all": { description: "The organization's certificates, newest first (never their keys)." },
  "certificates.update": {
    description:
      "Renames a certificate or replaces its chain and/or key (administrators): a new chain alone must match the stored key, a new key alone the stored chain, checked as on create (order, expiry, hosts read again). The new files are written to the server's proxy in the same transaction; when the agent refuses, the old pair stays. `autoRenew` true is a 400.",
  },
  "certificates.remove": {
    description: "Remove a certificate: its files and TLS-store entry leave the server's proxy.",
  },
  // rollback
  "rollback.rollback": {
    description:
      "Deploy a kept rollback again through the deployment queue (its log, no build): the image and service spec of that application deployment, or the images, converted file and file mounts of that compose stack deployment. A rollback whose image is gone is a 409 before anything is queued.",
  },
  "rollback.delete": {
    description: "Delete a rollback; its kept image is untagged on its server (the agent must answer).",
  },
  // previewDeployment
  "previewDeployment.all": {
    description:
      "The application's previews, oldest first, each with its host (`domain`) and deployments; made by the providers' pull and merge request events.",
  },
  "previewDeployment.one": { description: "One preview with its host and deployments." },
  "previewDeployment.delete": {
    description:
      "Delete a preview: its deployments stop, its Swarm service, Traefik file and host go, its request comment says so. Answers true.",
  },
  "previewDeployment.redeploy": {
    description:
      "Build and deploy a preview again through the deployment queue (its branch as stored). Answers true.",
  },
  "previewDeployment.create": {
    description:
      "Make a preview of a branch of the application's repository without a pull request: its host under previewWildcard, its service and first deployment (queued). Asking again for the same branch deploys it again.",
    example: { applicationId: "app_123", branch: "feature/login" },
  },
  // gitProvider
  "gitProvider.getAll": {
    description: "The organization's Git providers with their kind's fields (never their secrets)",
  },
  "gitProvider.allForPermissions": {
    description:
      "The organization's Git providers as `gitProviderId`, `name` and `providerType`, newest first, for owners and administrators choosing a member's grants (no licence needed, unlike Dokploy).",
  },
  "gitProvider.toggleShare": {
    description:
      "Share a Git provider with the organization (`sharedWithOrganization: true`, the default) or keep it to its creator and the organization's owners and administrators. Only the member who created it may; applications already using it keep deploying.",
    example: { gitProviderId: "gp_123", sharedWithOrganization: false },
  },
  "gitProvider.remove": {
    description: "Delete a Git provider; its applications are disconnected and say so in their status",
  },
  // github
  "github.create": {
    description: "Connect a GitHub provider (its secrets are sealed and never shown again)",
    example: {
      name: "GitHub",
      githubAppName: "platform-deployer",
      githubAppId: 123456,
      githubClientId: "Iv1.0123456789abcdef",
      githubInstallationId: "7654321",
      githubClientSecret: "client-secret",
      githubPrivateKey: "-----BEGIN RSA PRIVATE KEY-----\n...\n-----END RSA PRIVATE KEY-----\n",
      githubWebhookSecret: "webhook-secret",
    },
  },
  "github.one": { description: "One GitHub provider (without its secrets)" },
  "github.githubProviders": { description: "The organization's GitHub providers" },
  "github.update": { description: "Change a GitHub provider; an absent secret keeps the stored one" },
  "github.getGithubRepositories": { description: "The repositories the GitHub App's installation can read" },
  "github.getGithubBranches": {
    description: "The branches of one repository of the GitHub App's installation",
  },
  "github.branches": { description: "The branches of one repository of the GitHub App's installation" },
  "github.testConnection": {
    description: "Buy an installation token and list the installation's repositories",
  },
  // gitlab
  "gitlab.create": {
    description: "Connect a GitLab provider (its secrets are sealed and never shown again)",
    example: {
      name: "GitLab",
      gitlabUrl: "https://gitlab.com",
      applicationId: "gitlab-oauth-application-id",
      redirectUri: "https://platform.example.com/api/gitlab/callback",
      secret: "oauth-secret",
      groupName: "my-group",
    },
  },
  "gitlab.one": { description: "One GitLab provider (without its secrets)" },
  "gitlab.gitlabProviders": { description: "The organization's GitLab providers" },
  "gitlab.update": { description: "Change a GitLab provider; an absent secret keeps the stored one" },
  "gitlab.getGitlabRepositories": {
    description: "The GitLab projects the token is a member of (only groupName's groups when set)",
  },
  "gitlab.getGitlabBranches": { description: "The branches of one GitLab project (by its numeric id)" },
  "gitlab.startAuthorization": {
    description:
      "The GitLab authorization page for the provider's OAuth application, with a state minted for the caller: /api/gitlab/callback accepts it once, within ten minutes",
  },
  "gitlab.testConnection": {
    description: "List the projects the token reaches (groupName overrides the stored groups)",
  },
  // bitbucket
  "bitbucket.create": {
    description: "Connect a Bitbucket provider (its secrets are sealed and never shown again)",
    example: {
      name: "Bitbucket",
      bitbucketUsername: "me",
      bitbucketWorkspaceName: "my-workspace",
      appPassword: "app-password",
    },
  },
  "bitbucket.one": { description: "One Bitbucket provider (without its secrets)" },
  "bitbucket.bitbucketProviders": { description: "The organization's Bitbucket providers" },
  "bitbucket.update": { description: "Change a Bitbucket provider; an absent secret keeps the stored one" },
  "bitbucket.getBitbucketRepositories": { description: "The repositories of the provider's workspace" },
  "bitbucket.getBitbucketBranches": { description: "The branches of one repository" },
  "bitbucket.testConnection": {
    description:
      "List the workspace's repositories, with the stored credentials or the ones given (not stored)",
  },
  // gitea
  "gitea.create": {
    description: "Connect a Gitea provider (its secrets are sealed and never shown again)",
    example: {
      name: "Gitea",
      giteaUrl: "https://gitea.example.com",
      redirectUri: "https://platform.example.com/api/gitea/callback",
      clientId: "gitea-client-id",
      clientSecret: "gitea-client-secret",
      scopes: "repo,repo:status,read:user,read:org",
    },
  },
  "gitea.one": { description: "One Gitea provider (without its secrets)" },
  "gitea.giteaProviders": { description: "The organization's Gitea providers" },
  "gitea.update": { description: "Change a Gitea provider; an absent secret keeps the stored one" },
  "gitea.getGiteaRepositories": { description: "The repositories the token's user can read" },
  "gitea.getGiteaBranches": { description: "The branches of one repository" },
  "gitea.getGiteaUrl": { description: "The provider's public giteaUrl (where the browser authorizes)" },
  "gitea.startAuthorization": {
    description:
      "The Gitea authorization page for the provider's OAuth application, with a state minted for the caller: /api/gitea/callback accepts it once, within ten minutes",
  },
  "gitea.testConnection": { description: "List the repositories the token reaches" },
  // notification
  "notification.createSlack": {
    description: "Create a Slack channel (its secrets are sealed and never shown again)",
    example: {
      name: "Team Slack",
      appDeploy: true,
      appBuildError: true,
      webhookUrl: "https://hooks.slack.com/services/T000/B000/XXXX",
      channel: "#deploys",
    },
  },
  "notification.updateSlack": {
    description: "Change a Slack channel; an absent field (a secret too) keeps its stored value",
  },
  "notification.testSlack": {
    description:
      "Send a test notice through Slack fields (nothing is stored); a failure names what went wrong, never the receiver's answer",
  },
  "notification.testSlackConnection": {
    description:
      "Dokploy's name for testSlack: send a test notice through Slack fields (nothing is stored); a failure names what went wrong, never the receiver's answer",
  },
  "notification.createMattermost": {
    description: "Create a Mattermost channel (its secrets are sealed and never shown again)",
    example: {
      name: "Mattermost",
      appDeploy: true,
      appBuildError: true,
      webhookUrl: "https://mattermost.example.com/hooks/xxx",
      channel: "deploys",
      username: "platform",
    },
  },
  "notification.updateMattermost": {
    description: "Change a Mattermost channel; an absent field (a secret too) keeps its stored value",
  },
  "notification.testMattermost": {
    description:
      "Send a test notice through Mattermost fields (nothing is stored); a failure names what went wrong, never the receiver's answer",
  },
  "notification.testMattermostConnection": {
    description:
      "Dokploy's name for testMattermost: send a test notice through Mattermost fields (nothing is stored); a failure names what went wrong, never the receiver's answer",
  },
  "notification.createDiscord": {
    description: "Create a Discord channel (its secrets are sealed and never shown again)",
    example: {
      name: "Discord",
      appDeploy: true,
      appBuildError: true,
      webhookUrl: "https://discord.com/api/webhooks/123/abc",
      decoration: true,
    },
  },
  "notification.updateDiscord": {
    description: "Change a Discord channel; an absent field (a secret too) keeps its stored value",
  },
  "notification.testDiscord": {
    description:
      "Send a test notice through Discord fields (nothing is stored); a failure names what went wrong, never the receiver's answer",
  },
  "notification.testDiscordConnection": {
    description:
      "Dokploy's name for testDiscord: send a test notice through Discord fields (nothing is stored); a failure names what went wrong, never the receiver's answer",
  },
  "notification.createTelegram": {
    description: "Create a Telegram channel (its secrets are sealed and never shown again)",
    example: {
      name: "Telegram",
      appDeploy: true,
      appBuildError: true,
      botToken: "123456:ABC-DEF",
      chatId: "-1001234567890",
    },
  },
  "notification.updateTelegram": {
    description: "Change a Telegram channel; an absent field (a secret too) keeps its stored value",
  },
  "notification.testTelegram": {
    description:
      "Send a test notice through Telegram fields (nothing is stored); a failure names what went wrong, never the receiver's answer",
  },
  "notification.testTelegramConnection": {
    description:
      "Dokploy's name for testTelegram: send a test notice through Telegram fields (nothing is stored); a failure names what went wrong, never the receiver's answer",
  },
  "notification.createEmail": {
    description: "Create a Email channel (its secrets are sealed and never shown again)",
    example: {
      name: "Email",
      appDeploy: true,
      appBuildError: true,
      smtpServer: "smtp.example.com",
      smtpPort: 587,
      username: "platform@example.com",
      password: "smtp-password",
      fromAddress: "platform@example.com",
      toAddresses: ["ops@example.com"],
    },
  },
  "notification.updateEmail": {
    description: "Change a Email channel; an absent field (a secret too) keeps its stored value",
  },
  "notification.testEmail": {
    description:
      "Send a test notice through Email fields (nothing is stored); a failure names what went wrong, never the receiver's answer",
  },
  "notification.testEmailConnection": {
    description:
      "Dokploy's name for testEmail: send a test notice through Email fields (nothing is stored); a failure names what went wrong, never the receiver's answer",
  },
  "notification.createResend": {
    description: "Create a Resend channel (its secrets are sealed and never shown again)",
    example: {
      name: "Resend",
      appDeploy: true,
      appBuildError: true,
      apiKey: "re_123456",
      fromAddress: "platform@example.com",
      toAddresses: ["ops@example.com"],
    },
  },
  "notification.updateResend": {
    description: "Change a Resend channel; an absent field (a secret too) keeps its stored value",
  },
  "notification.testResend": {
    description:
      "Send a test notice through Resend fields (nothing is stored); a failure names what went wrong, never the receiver's answer",
  },
  "notification.testResendConnection": {
    description:
      "Dokploy's name for testResend: send a test notice through Resend fields (nothing is stored); a failure names what went wrong, never the receiver's answer",
  },
  "notification.createGotify": {
    description: "Create a Gotify channel (its secrets are sealed and never shown again)",
    example: {
      name: "Gotify",
      appDeploy: true,
      appBuildError: true,
      serverUrl: "https://gotify.example.com",
      appToken: "gotify-app-token",
      priority: 5,
      decoration: true,
    },
  },
  "notification.updateGotify": {
    description: "Change a Gotify channel; an absent field (a secret too) keeps its stored value",
  },
  "notification.testGotify": {
    description:
      "Send a test notice through Gotify fields (nothing is stored); a failure names what went wrong, never the receiver's answer",
  },
  "notification.testGotifyConnection": {
    description:
      "Dokploy's name for testGotify: send a test notice through Gotify fields (nothing is stored); a failure names what went wrong, never the receiver's answer",
  },
  "notification.createNtfy": {
    description: "Create a Ntfy channel (its secrets are sealed and never shown again)",
    example: {
      name: "ntfy",
      appDeploy: true,
      appBuildError: true,
      serverUrl: "https://ntfy.sh",
      topic: "platform-deploys",
      priority: 3,
    },
  },
  "notification.updateNtfy": {
    description: "Change a Ntfy channel; an absent field (a secret too) keeps its stored value",
  },
  "notification.testNtfy": {
    description:
      "Send a test notice through Ntfy fields (nothing is stored); a failure names what went wrong, never the receiver's answer",
  },
  "notification.testNtfyConnection": {
    description:
      "Dokploy's name for testNtfy: send a test notice through Ntfy fields (nothing is stored); a failure names what went wrong, never the receiver's answer",
  },
  "notification.createPushover": {
    description: "Create a Pushover channel (its secrets are sealed and never shown again)",
    example: {
      name: "Pushover",
      appDeploy: true,
      appBuildError: true,
      userKey: "pushover-user-key",
      apiToken: "pushover-api-token",
      priority: 0,
    },
  },
  "notification.updatePushover": {
    description: "Change a Pushover channel; an absent field (a secret too) keeps its stored value",
  },
  "notification.testPushover": {
    description:
      "Send a test notice through Pushover fields (nothing is stored); a failure names what went wrong, never the receiver's answer",
  },
  "notification.testPushoverConnection": {
    description:
      "Dokploy's name for testPushover: send a test notice through Pushover fields (nothing is stored); a failure names what went wrong, never the receiver's answer",
  },
  "notification.createLark": {
    description: "Create a Lark channel (its secrets are sealed and never shown again)",
    example: {
      name: "Lark",
      appDeploy: true,
      appBuildError: true,
      webhookUrl: "https://open.larksuite.com/open-apis/bot/v2/hook/xxx",
    },
  },
  "notification.updateLark": {
    description: "Change a Lark channel; an absent field (a secret too) keeps its stored value",
  },
  "notification.testLark": {
    description:
      "Send a test notice through Lark fields (nothing is stored); a failure names what went wrong, never the receiver's answer",
  },
  "notification.testLarkConnection": {
    description:
      "Dokploy's name for testLark: send a test notice through Lark fields (nothing is stored); a failure names what went wrong, never the receiver's answer",
  },
  "notification.createTeams": {
    description: "Create a Teams channel (its secrets are sealed and never shown again)",
    example: {
      name: "Teams",
      appDeploy: true,
      appBuildError: true,
      webhookUrl: "https://example.webhook.office.com/webhookb2/xxx",
    },
  },
  "notification.updateTeams": {
    description: "Change a Teams channel; an absent field (a secret too) keeps its stored value",
  },
  "notification.testTeams": {
    description:
      "Send a test notice through Teams fields (nothing is stored); a failure names what went wrong, never the receiver's answer",
  },
  "notification.testTeamsConnection": {
    description:
      "Dokploy's name for testTeams: send a test notice through Teams fields (nothing is stored); a failure names what went wrong, never the receiver's answer",
  },
  "notification.createCustom": {
    description: "Create a Custom channel (its secrets are sealed and never shown again)",
    example: {
      name: "Webhook",
      appDeploy: true,
      appBuildError: true,
      endpoint: "https://hooks.example.com/platform",
      headers: { "X-Token": "secret" },
    },
  },
  "notification.updateCustom": {
    description: "Change a Custom channel; an absent field (a secret too) keeps its stored value",
  },
  "notification.testCustom": {
    description:
      "Send a test notice through Custom fields (nothing is stored); a failure names what went wrong, never the receiver's answer",
  },
  "notification.testCustomConnection": {
    description:
      "Dokploy's name for testCustom: send a test notice through Custom fields (nothing is stored); a failure names what went wrong, never the receiver's answer",
  },
  "notification.getAll": {
    description:
      "The organization's channels, newest first (secrets are never answered: `redacted` names them)",
  },
  "notification.delete": { description: "Delete a channel and its pending deliveries" },
  "notification.all": {
    description:
      "The organization's channels, newest first, as getAll answers them (Dokploy's name; administrators)",
  },
  "notification.one": {
    description: "One channel of the organization, without its secrets (`redacted` names them)",
  },
  "notification.remove": {
    description: "Delete a channel and its pending deliveries (Dokploy's name for delete)",
  },
  "notification.getEmailProviders": {
    description:
      "The organization's Email and Resend channels, the ones user.sendInvitation can send an invitation through (without their secrets)",
  },
  "notification.receiveNotification": {
    description:
      "A monitoring threshold alert posted by a metrics sender with a server's monitoring token (`ServerType` Dokploy: this machine's token; Remote: a remote server's): recorded as a serverThreshold event of the server's organization and delivered to its channels toggled for it. A token no such server holds is a 400 `Token not found`.",
    example: {
      ServerType: "Remote",
      Type: "CPU",
      Value: 97.5,
      Threshold: 80,
      Message: "CPU usage 97.50% has stayed above the threshold of 80%",
      Timestamp: "2026-11-02T10:00:00.000Z",
      Token: "the server's metricsConfig.server.token",
    },
  },
  "notification.deliveries": {
    description:
      "Each delivery of an event to a channel, newest first: status (pending, delivered, abandoned), attempts and the last failure (ours)",
  },
  // destination
  "destination.create": {
    description:
      "Store an S3-compatible destination (the secret access key is encrypted and never shown again)",
    example: {
      name: "Backups",
      provider: "s3",
      accessKey: "AKIAEXAMPLE",
      secretAccessKey: "secret",
      bucket: "platform-backups",
      region: "eu-central-1",
      endpoint: "https://s3.eu-central-1.amazonaws.com",
    },
  },
  "destination.all": { description: "The organization's destinations, newest first (without secrets)" },
  "destination.one": { description: "One destination (without its secret access key)" },
  "destination.update": {
    description: "Change a destination; an absent secretAccessKey keeps the stored one",
  },
  "destination.remove": {
    description:
      "Delete a destination and the backups that write to it (the stored files stay in the bucket)",
  },
  "destination.testConnection": {
    description: "Write, read back and delete a probe object in the bucket (nothing is stored)",
  },
  // backup
  "backup.create": {
    description:
      "Create a database backup: schedule, destination, prefix, retention and optional restore verification",
    example: {
      schedule: "0 3 * * *",
      enabled: true,
      prefix: "shop",
      destinationId: "V1StGXR8_Z5jdHi6B-myT",
      keepLatestCount: 7,
      database: "shop",
      databaseType: "postgres",
      backupType: "database",
      postgresId: "V1StGXR8_Z5jdHi6B-myT",
    },
  },
  "backup.one": {
    description: "One backup, with its destination, its last run and its last verified restore",
  },
  "backup.update": {
    description: "Change a backup's schedule, destination, prefix, retention, database or verification",
  },
  "backup.remove": {
    description: "Delete a backup (its files stay in the bucket; its runs stay in the deployments)",
  },
  "backup.manualBackupPostgres": {
    description:
      "Back up a postgres database now; answers once the upload and the retention are done, with the outcome",
  },
  "backup.manualBackupMySql": {
    description:
      "Back up a mysql database now; answers once the upload and the retention are done, with the outcome",
  },
  "backup.manualBackupMysql": {
    description:
      "Back up a mysql database now; answers once the upload and the retention are done, with the outcome",
  },
  "backup.manualBackupMariadb": {
    description:
      "Back up a mariadb database now; answers once the upload and the retention are done, with the outcome",
  },
  "backup.manualBackupMongo": {
    description:
      "Back up a mongo database now; answers once the upload and the retention are done, with the outcome",
  },
  "backup.manualBackupRedis": {
    description:
      "Back up a redis database now; answers once the upload and the retention are done, with the outcome",
  },
  "backup.manualBackupLibsql": {
    description:
      "Back up a libsql (sqld) database now: its data directory archived with tar inside the running container, gzipped and uploaded; answers once the upload and the retention are done, with the outcome. libsql archives are not restored by the platform.",
  },
  "backup.manualBackupCompose": {
    description:
      "Back up a database inside a compose stack now (in a running container of its stack service); answers once the upload and the retention are done, with the outcome",
  },
  "backup.manualBackupWebServer": {
    description:
      "Back up the control plane's own database now (instance administrators); answers once the upload and the retention are done, with the outcome",
  },
  "backup.verifyRestore": {
    description:
      "Restore the newest file (or backupFile) into a throwaway container, check it, and store the result",
  },
  "backup.listBackupFiles": {
    description: "The files of a destination whose key starts with `search`, oldest first",
  },
  "backup.restoreBackupWithLogs": {
    description:
      "Restore a backup file into a database, as a deployment whose log streams at /api/deployment.logs",
  },
  // schedule
  "schedule.create": {
    description:
      "Create a scheduled job: `<shellType> -c <command>` (one argument, never a line built by the platform) on `cronExpression` in `timezone`, inside a running container of the application (or the compose stack's `serviceName`) that carries the organization's labels; `server` and `dokploy-server` run `script` (else `command`) on the server itself and are for instance administrators only (403).",
    example: {
      name: "Nightly report",
      scheduleType: "application",
      applicationId: id,
      cronExpression: "0 3 * * *",
      timezone: "Europe/Paris",
      shellType: "sh",
      command: "php artisan report:send",
      enabled: true,
    },
  },
  "schedule.update": {
    description:
      "Change a scheduled job's name, cron expression, time zone, command, script, shell, compose service or enabled flag; its type and target cannot change (400).",
  },
  "schedule.delete": {
    description: "Delete a scheduled job and its runs (a running run must be killed first: 400)",
  },
  "schedule.list": {
    description:
      "The scheduled jobs of an application, a compose stack, a server or this machine (`dokploy-server`: `id` names nothing), each with its runs, newest first",
  },
  "schedule.one": {
    description: "One scheduled job, with its service or server and its runs",
  },
  "schedule.runManually": {
    description:
      "Run a scheduled job now, as a deployment of the schedule (its log at `logPath`); answers when the run ended, or after 30 s with its status",
  },
  // volumeBackups
  "volumeBackups.list": { description: "The volume backups of a service, newest first" },
  "volumeBackups.create": {
    description:
      "Back up a named volume of a service (its volume mount, a database's data volume, a compose stack's volume) to a destination on a cron schedule, with retention and optionally the service stopped while the volume is read",
    example: {
      name: "Uploads nightly",
      volumeName: "shop-uploads",
      prefix: "volumes/shop",
      cronExpression: "0 3 * * *",
      keepLatestCount: 7,
      turnOff: false,
      enabled: true,
      applicationId: "V1StGXR8_Z5jdHi6B-myT",
      destinationId: "V1StGXR8_Z5jdHi6B-myT",
    },
  },
  "volumeBackups.one": { description: "One volume backup, with its destination and its last run" },
  "volumeBackups.update": {
    description: "Change a volume backup's volume, schedule, destination, prefix, retention or turnOff",
  },
  "volumeBackups.delete": {
    description: "Delete a volume backup (its files stay in the bucket; its runs stay in the deployments)",
  },
  "volumeBackups.runManually": {
    description:
      "Back up the volume now, as a volumeBackup deployment of the service; answers once the upload and the retention are done, with the outcome",
  },
  "volumeBackups.restoreVolumeBackupWithLogs": {
    description:
      "Restore a volume archive into a volume of the service (its own or a new one, created with its labels), as a volumeRestore deployment whose log streams at /api/deployment.logs",
  },
  "server.count": {
    description:
      "How many servers the organizations the caller owns have together (0 for a caller who owns none).",
  },
  "server.withSSHKey": {
    description:
      "The organization's deploy servers that have an SSH key, newest first (only active ones on the cloud edition).",
  },
  "server.buildServers": {
    description:
      "The organization's build servers that have an SSH key, newest first (only active ones on the cloud edition).",
  },
  "server.allForPermissions": {
    description:
      "Every server of the organization with its id, name, address and type, for granting members access (administrators).",
  },
  "server.getServerTime": {
    description:
      "The control plane's current time and time zone: scheduled jobs and cleanups run on its clock.",
  },
  "server.getDefaultCommand": {
    description:
      "The script server.setup runs on the server (deploy/agent/install.sh): it installs Docker, Swarm and the agent.",
  },
  "server.getServices": {
    description:
      "The applications, databases and compose stacks placed on the server, each with its project, environment and dashboard link; a restricted member sees those granted to them.",
  },
  "settings.getDokployVersion": {
    description: "This platform's version, the one its control plane and agents share.",
  },
  "settings.getIp": {
    description:
      'The address this machine is known by (settings.updateServerIp); "" when none is set, on the cloud edition and for other organizations than the instance\'s.',
  },
  "settings.updateServerIp": {
    description:
      'Sets the address this machine is known by (an IPv4 or IPv6 address; "" forgets it); generated domains for this machine use it. Instance administrators only.',
  },
  "settings.health": {
    description:
      'Whether the control plane and its database answer: {status: "ok"}, else 503. No credentials needed.',
  },
  "settings.checkInfrastructureHealth": {
    description:
      "This machine's database and proxy, each checked (the proxy's service and running task through the agent). Instance administrators only.",
  },
  "settings.isCloud": {
    description:
      "Whether this is the cloud edition (false on a self-hosted instance). No credentials needed.",
  },
  "settings.getDokployCloudIps": {
    description:
      "Control-plane addresses a server's firewall must let in: none, agents connect out to the control plane.",
  },
  "settings.isUserSubscribed": {
    description: "Whether the caller's organization has a server or a project yet.",
  },
  "settings.getLogCleanupStatus": {
    description:
      "The scheduled cleanup of this machine's proxy access log (settings.updateLogCleanup): {enabled, cronExpression}; {enabled: false, cronExpression: null} when none is scheduled, on the cloud edition and for other organizations than the instance's.",
  },
  "settings.updateLogCleanup": {
    description:
      "Empties this machine's proxy access log (<main directory>/traefik/access.log, in place: Traefik keeps writing to it) on `cronExpression` (5 fields, or 6 with seconds first, the control plane's clock); null stops it. One control plane of several runs each tick. Instance administrators only.",
  },
  "settings.cleanMonitoring": {
    description:
      "Deletes every metrics sample the agent (this machine's, or serverId's) stored; collection goes on. Answers the files and bytes removed.",
  },
  "settings.createPlatformNetwork": {
    description:
      "Creates this machine's platform network (PLATFORM_NETWORK, overlay and attachable) when its engine has none, as the installer does: a deployment on this machine refused for the missing network succeeds once it exists. Answers its name and whether it was created (false: it existed). The proxy is not installed by this (settings.toggleDashboard does). Instance administrators only.",
    example: {},
  },
  "settings.reloadServer": {
    description:
      "Restarts the control plane: its Swarm service gets a new task (docker service update --force). When the control plane runs as no Swarm service (PLATFORM_CONTROL_PLANE_SERVICE unset and its container none's), a 400 says how to restart it. Instance administrators only.",
  },
  "settings.updateServer": {
    description:
      "Rolls the control plane's Swarm service to the newest release named by PLATFORM_RELEASE_URL (settings.getUpdateData), on its image's repository with that tag. A 400 when no newer release is known or the control plane runs as no Swarm service. Instance administrators only.",
  },
  "settings.updateBuildsConcurrency": {
    description:
      "How many deployments build on this machine at once (1-100); beyond them a deployment waits, still queued, for a slot. The queue's own concurrency (PLATFORM_DEPLOYMENT_CONCURRENCY) stays the bound across servers. Instance administrators only.",
  },
  "settings.checkGPUStatus": {
    description:
      "The NVIDIA GPU support of the server (this machine, or serverId's) as its agent finds it, with Dokploy's fields: the driver and GPUs nvidia-smi lists (driverVersion, gpuModel, memoryInfo of the first GPU; availableGPUs), CUDA, nvidia-container-runtime on the agent's PATH (runtimeInstalled), the engine running the nvidia runtime by default (runtimeConfigured) and its Swarm node's GPU generic resource (swarmEnabled, gpuResources). A server without nvidia-smi answers driverInstalled false, not an error; unknown fields are left out. This machine is the instance administrator's.",
  },
  "settings.setupGPU": {
    description:
      "Configures the server's engine for its NVIDIA GPUs as Dokploy does: the nvidia runtime merged into its daemon.json as the default runtime with the GPUs as the node's generic resource (other settings kept), swarm-resource set in nvidia-container-runtime's config.toml, the Swarm node labelled gpu=true. The engine is not restarted: restartRequired says it must be (systemctl restart docker) before GPU support takes effect. A 409 names what is missing (the NVIDIA driver, nvidia-container-runtime, a Swarm node, a daemon.json that is not JSON) and nothing is changed.",
    errors: [409],
  },
  "settings.updateEnforceSSO": {
    description:
      "Dokploy's switch making members sign in through SSO. No SSO provider can be configured here, so SSO is never enforced: enforceSSO false is accepted (nothing changes), true is a 400 naming enforceSSO, since it would lock every member out. Instance administrators only.",
  },
  "settings.haveTraefikDashboardPortEnabled": {
    description:
      "Whether the proxy (this machine's, or serverId's) publishes its dashboard port, read from its service as Docker runs it; 404 when the proxy is not installed.",
    errors: [404],
  },
  "settings.getTraefikPorts": {
    description:
      "The ports the proxy (this machine's, or serverId's) publishes beside its entry points 80 and 443, read from its service as Docker runs it; 404 when the proxy is not installed.",
    errors: [404],
  },
  "settings.readTraefikEnv": {
    description:
      "The proxy's environment (this machine's, or serverId's) as KEY=VALUE lines, read from its service as Docker runs it; 404 when the proxy is not installed.",
    errors: [404],
  },
  "settings.getOpenApiDocument": {
    description: "This API's OpenAPI document, the one /api/openapi.json serves.",
  },
  "settings.cleanSSHPrivateKey": {
    description:
      "Forgets the instance's SSH private key stored with saveSSHPrivateKey; getWebServerSettings then shows none. Instance administrators only.",
    errors: [403],
  },
  "settings.cleanAllDeploymentQueue": {
    description:
      "Drops the waiting deployments (each stored as an error with the reason; running ones go on): every one of the instance when the instance administrator asks, as Dokploy empties its whole queue, and only the caller's organization's otherwise.",
    errors: [403],
  },
  "settings.getDockerDiskUsage": {
    description:
      "What images, containers, local volumes and the build cache take on this machine's engine (dockerDiskUsage.getDiskUsage's rows), read by its agent. Instance administrators only.",
    errors: [403],
  },
  "settings.updateRemoteServersOnly": {
    description:
      "When on, this machine runs no new deployment of any organization: a deployment of a service without a serverId is a 400 naming serverId; services on servers deploy as before. getWebServerSettings answers the flag. Instance administrators only.",
    errors: [403],
  },
  "settings.updateTraefikPorts": {
    description:
      "Publishes these ports beside the proxy's entry points (this machine's, or serverId's), in host mode, replacing the extra ports it had; the agent updates the running proxy service and later installs keep them. An entry for the dashboard (targetPort 8080) is left to toggleDashboard. A reserved port is a 400 and one another service publishes on the server a 409, both naming additionalPorts; a proxy not installed is a 409.",
    errors: [403, 404, 409],
  },
  "settings.writeTraefikEnv": {
    description:
      "Replaces the proxy's environment (this machine's, or serverId's) with the KEY=VALUE lines of env (blank lines and # comments skipped; KEY of letters, digits and _; values are passed as they are, never to a shell); the proxy's task restarts with it. A bad line is a 400 naming env.",
    errors: [403, 404, 409],
  },
  "settings.getReleaseTag": {
    description:
      "The release tag this control plane runs: PLATFORM_RELEASE_TAG when the operator set it, else the platform's version.",
  },
  "settings.getUpdateData": {
    description:
      'Whether a newer release than this one is known: the JSON document {"version": "x.y.z"} at PLATFORM_RELEASE_URL, read through the outbound guard, compared with this version. With no URL configured the answer is {updateAvailable: false, latestVersion: null}; a document that cannot be read is a 503 saying why.',
  },
  "settings.cleanDockerPrune": {
    description:
      "Prunes the engine of this machine or of `serverId` (stopped containers, unused images and volumes, and the build cache) through its agent, as cleanAll does, and answers what was reclaimed; another organization prunes only objects labelled as its own and never the shared build cache.",
    errors: [403, 404],
  },
  "settings.readDirectories": {
    description:
      "The proxy's dynamic directory (this machine's, or serverId's) as a tree: the .yml/.yaml files your organization's resources or the platform hold there; another organization's files and links are not shown. Each file's id is the path readTraefikFile and updateTraefikFile take.",
    errors: [403, 404],
  },
  "settings.readTraefikFile": {
    description:
      "One dynamic file of the proxy as YAML text; null when there is none or it is another organization's. `path` is a file name in the dynamic directory (or dynamic/<name>): `..`, absolute paths and sub-directories are a 400.",
    errors: [403, 404],
  },
  "settings.updateTraefikFile": {
    description:
      "Writes one dynamic file of the proxy: checked against Traefik's file-provider schema, and a file an application holds also against application.updateTraefikConfig's tenant rules; Traefik's file provider loads it without a restart. Another organization's file is a 409 and is left as it was.",
    errors: [403, 404, 409],
  },
  "settings.readMiddlewareTraefikConfig": {
    description:
      "This machine's proxy's shared middlewares file (dynamic/middlewares.yml) as YAML text; empty when there is none.",
  },
  "settings.updateMiddlewareTraefikConfig": {
    description:
      "Replaces this machine's proxy's dynamic/middlewares.yml, checked against Traefik's file-provider schema first; Traefik loads it without a restart.",
  },
  "settings.readWebServerTraefikConfig": {
    description:
      "This machine's proxy's route to the control plane (dynamic/platform-control-plane.yml) as YAML text; empty when there is none.",
  },
  "settings.updateWebServerTraefikConfig": {
    description:
      "Replaces the control plane's route file, checked against Traefik's file-provider schema first; settings.assignDomainServer regenerates it.",
  },
  "dockerVolume.getVolumes": {
    description:
      "The named volumes on the server (this machine when `serverId` is omitted) the caller may see, as `docker volume ls` lists them (`Labels` as `key=value,…`).",
  },
  "dockerVolume.getVolumesSize": {
    description:
      "The size of each volume the caller may see (`docker system df -v`; `size` null when unknown).",
  },
  "dockerVolume.getVolumeConfig": {
    description:
      "The volume's configuration as `docker volume inspect` shows it; a volume the caller may not see is a 404.",
    errors: [404],
  },
  "dockerVolume.removeVolume": {
    description:
      "Removes a volume; one a container uses (running or not) is a 409, one the caller may not see a 404.",
    errors: [404, 409],
  },
  "dockerVolume.listVolumeFiles": {
    description:
      "The entries of the directory `path` inside the volume (directories first, then by name), read through a helper container that is never started.",
    errors: [404],
  },
  "dockerVolume.readVolumeFile": {
    description:
      "The first 512 KiB of the file `path` inside the volume, base64 (`truncated` when there is more, `binary` when it is not UTF-8 text).",
    errors: [404],
  },
  "dockerVolume.writeVolumeFile": {
    description:
      "Writes `content` (UTF-8, at most 512 KiB) into the file `path` inside the volume, created or replaced (an existing file keeps its owner and mode); its directory must exist.",
    errors: [404],
  },
  "dockerVolume.deleteVolumeFile": {
    description: "Deletes the file or directory `path` inside the volume (never its root).",
    errors: [404],
  },
  "dockerImage.getImages": {
    description:
      "The images on the server the caller may see, one row per tag, as `docker images` lists them.",
  },
  "dockerImage.getImageConfig": {
    description:
      "The image's configuration as `docker image inspect` shows it; an image the caller may not see is a 404.",
    errors: [404],
  },
  "dockerImage.removeImage": {
    description:
      "Removes `repository:tag` when both are set (that tag only when the image has others), else the image `id`; an image a container outside the caller's organization uses is a 409 whatever `force` says.",
    errors: [404, 409],
  },
  "dockerDiskUsage.getDiskUsage": {
    description:
      "Counts and sizes of the caller's images, containers and volumes on the server (`docker system df`); the build cache row for owners and admins only.",
  },
  "dockerDiskUsage.getBuildCache": {
    description: "The records of the server's build cache (owners and admins; an empty list for members).",
  },
  "dockerDiskUsage.pruneBuildCache": {
    description: "Prunes the server's build cache (owners and admins of the server's organization).",
  },
  "swarm.getNodes": {
    description:
      "The Swarm nodes of the server (this machine when `serverId` is omitted) as `docker node ls --format json` lists them; the server must be a Swarm manager.",
  },
  "swarm.getNodeInfo": {
    description:
      "One Swarm node, by id or host name, as `docker node inspect` shows it; a node the server's Swarm does not have is a 404.",
    errors: [404],
  },
  "swarm.getNodeApps": {
    description:
      "The Swarm services of the server the caller may see (its organization's; owners and admins also the unlabelled ones; never the platform's own) as `docker service ls --format json` lists them.",
  },
  "swarm.getContainerStats": {
    description:
      "One `docker stats --no-stream` sample of each running container of the server the caller may see (the same rule as getNodeApps).",
  },
  "network.all": {
    description:
      "The organization's networks on the server (this machine when `serverId` is omitted), newest first.",
  },
  "network.one": {
    description: "One network of the organization; another organization's is a 404.",
    errors: [404],
  },
  "network.create": {
    description:
      "Creates an attachable overlay (or a `bridge`) named `o<organization hash>-<name>` (`dockerName`) and labelled with the organization (owners and admins); a reserved name (platform-network, ingress, bridge, host, none, docker_gwbridge, dokploy-network, platform-*) is a 400, a name the organization already has on the server a 409.",
    errors: [409],
    example: { name: "backend", driver: "overlay", internal: false },
  },
  "network.inspect": {
    description:
      "The network as the server's engine has it (`docker network inspect`); another organization's is a 404.",
    errors: [404],
  },
  "network.remove": {
    description:
      "Removes the network from the engine and its row (owners and admins); while containers or services use it, or a service names it in `networkIds`, a 409 naming them; another organization's a 404.",
    errors: [404, 409],
  },
  "network.networksToSync": {
    description:
      "What resync and import would change on the server: `importable` engine networks the organization may record (its own labelled ones; for owners and admins also unlabelled bridge and overlay networks) and `missing` rows whose network is gone from the engine. Another organization's networks and the platform's never appear.",
  },
  "network.import": {
    description:
      "Records engine networks by name (owners and admins): the organization's labelled ones and unlabelled bridge or overlay networks. A name already recorded, unknown, another organization's, the platform's or the engine's (ingress, bridge, host) is an entry of `errors`, nothing recorded for it.",
    example: { names: ["shared-net"] },
  },
  "network.recreate": {
    description:
      "Re-creates on the engine a recorded network removed there by hand, as recorded (owners and admins); a network still on the engine is a 409, an imported network the platform did not make a 400, another organization's a 404.",
    errors: [404, 409],
  },
  "network.resync": {
    description:
      "Reconciles the table with the engine (owners and admins): records the organization's labelled networks it lacks (`imported`), drops rows whose network is gone from the engine (`removed`) unless a service names them in `networkIds` (`kept`, for network.recreate).",
  },
  "tag.create": {
    description:
      "Creates a tag of the organization (owners and admins): `name` unique in the organization (a 409 naming `name`), `color` a hex colour such as `#3b82f6`. Answers the tag with its `tagId`.",
    example: { name: "frontend", color: "#3b82f6" },
    errors: [409],
  },
  "tag.all": { description: "The organization's tags, by name." },
  "tag.one": { description: "One tag of the organization; another organization's is a 404.", errors: [404] },
  "tag.update": {
    description:
      "Renames or recolours a tag (owners and admins); a name the organization already has is a 409 naming `name`, another organization's tag a 404.",
    errors: [404, 409],
  },
  "tag.remove": {
    description:
      "Deletes a tag (owners and admins); it leaves every project it was on. Another organization's is a 404.",
    errors: [404],
  },
  "tag.assignToProject": {
    description:
      "Puts the tag on a project the caller may see; answers the assignment `{id, projectId, tagId}`. Already on it: a 409; another organization's tag or project (or one the member was not granted): a 404.",
    errors: [404, 409],
  },
  "tag.removeFromProject": {
    description:
      "Takes the tag off the project (nothing to do when it was not on it); another organization's tag or project is a 404.",
    errors: [404],
  },
  "tag.bulkAssign": {
    description:
      "Makes `tagIds` the project's tags, replacing the ones it had (an empty list takes them all off); any id that is not one of the organization's tags is a 404 and changes nothing.",
    errors: [404],
  },
  "vaultProvider.create": {
    description:
      "Connects a secret vault (owners and admins). `config` is HashiCorp Vault / OpenBao KV v2 (`providerType: hashicorp`, `url`, `token`, `mount` default `secret`, `namespace`); Dokploy's other provider types are a 400 naming `providerType`. `name` (letters, digits, `-`, `_`) is unique in the organization (409) and is what variables name: `${{vault.<name>.<path>:<field>}}`. `assignments` lists the projects (and, when `environmentIds` is not empty, only those environments) whose services may use it; another organization's project is a 404. The token is encrypted and answered only as `********`.",
    example: {
      name: "prod-vault",
      config: {
        providerType: "hashicorp",
        url: "https://vault.example.com:8200",
        token: "hvs.example",
        mount: "secret",
      },
      assignments: [{ projectId: "<projectId>", environmentIds: [] }],
    },
    errors: [409],
  },
  "vaultProvider.update": {
    description:
      "Replaces a provider's name, config and assignments (owners and admins); `token: \"********\"` keeps the stored token. Another organization's provider is a 404, a name taken a 409.",
    errors: [404, 409],
  },
  "vaultProvider.remove": {
    description:
      "Deletes a provider (owners and admins); a service naming it fails its next deploy, naming the reference. Another organization's is a 404.",
    errors: [404],
  },
  "vaultProvider.all": { description: "The organization's vault providers by name, tokens masked." },
  "vaultProvider.one": {
    description: "One vault provider, token masked; another organization's is a 404.",
    errors: [404],
  },
  "vaultProvider.testConnection": {
    description:
      "Checks that the vault answers and accepts the token (its token lookup), for a `config`, a stored provider, or a config whose `********` token stands for the stored provider's (owners and admins). A refused token or an unreachable vault is a 400 saying which; the vault's URL goes through the outbound guard.",
    errors: [404],
  },
  "vaultProvider.listSecretNames": {
    description:
      "The `path:field` names the provider's mount holds (folders walked 4 deep, at most 200 names), for the env editor, when the provider is enabled for `projectId` (and `environmentId`); otherwise a 403. The project must be one the caller sees (404). Values are never answered.",
    errors: [404],
  },
  "dnsProvider.create": {
    description:
      "Connects a DNS provider (owners and admins). `config` is Cloudflare (`providerType: cloudflare`, `apiToken`: an API token with Zone:Read and DNS:Edit); Dokploy's other provider types are a 400 naming `providerType`. `name` (letters, digits, `-`, `_`) is unique in the organization (409). The token is encrypted and answered only as `********`. A domain (domain.create/update) naming the provider in `dnsProviderId` gets the A (AAAA for an IPv6 address) record of its host pointing at its server, in the provider's most specific zone holding the host; the record follows the domain.",
    example: {
      name: "cloudflare",
      config: { providerType: "cloudflare", apiToken: "<Cloudflare API token>" },
    },
    errors: [409],
  },
  "dnsProvider.update": {
    description:
      "Replaces a provider's name and config (owners and admins); `apiToken: \"********\"` keeps the stored token. Another organization's provider is a 404, a name taken a 409.",
    errors: [404, 409],
  },
  "dnsProvider.remove": {
    description:
      "Deletes a provider (owners and admins). Its domains are detached: their records stay at Cloudflare, no longer managed. Another organization's is a 404.",
    errors: [404],
  },
  "dnsProvider.all": { description: "The organization's DNS providers by name, tokens masked." },
  "dnsProvider.one": {
    description: "One DNS provider, token masked; another organization's is a 404.",
    errors: [404],
  },
  "dnsProvider.testConnection": {
    description:
      "Checks that Cloudflare accepts the token and that it is active (its token verification), for a `config`, a stored provider, or a config whose `********` token stands for the stored provider's (owners and admins). A refused token is a 400 with Cloudflare's message.",
    errors: [404],
  },
  "dnsProvider.listZones": {
    description:
      "The zones the provider's token may see, `{id, name}`, every page read. A provider failure is a 400.",
    errors: [404],
  },
  "dnsProvider.listRecords": {
    description:
      "The DNS records `{id, type, name, content, ttl}` of one of the provider's zones (`zoneId` from listZones).",
    errors: [404],
  },
  "dnsProvider.createRecord": {
    description:
      "Creates an A, AAAA or CNAME record (owners and admins); as Dokploy's, a record of the same type and name is overwritten instead. `ttl` in seconds, 1 (automatic) when left out. Answers the record.",
    example: {
      dnsProviderId: "<dnsProviderId>",
      zoneId: "<zoneId>",
      type: "A",
      name: "app.example.com",
      content: "203.0.113.10",
    },
    errors: [404],
  },
  "dnsProvider.updateRecord": {
    description: "Replaces a record of the zone (owners and admins). Answers the record.",
    errors: [404],
  },
  "dnsProvider.deleteRecord": {
    description:
      "Deletes a record of the zone (owners and admins); a record Cloudflare does not have is a 400.",
    errors: [404],
  },
  "forwardAuth.getAuthDomain": {
    description:
      "The auth domain of a server's authentication service with its OAuth callback URL, or null (owners and admins). `serverId` null or left out is this machine (the instance organization's); another organization's server is a 404.",
    errors: [404],
  },
  "forwardAuth.setAuthDomain": {
    description:
      "Sets the host of a server's sign-in pages (owners and admins): `/oauth2/…` of `authDomain` is routed to the server's authentication service (over HTTPS with `https`, the certificate from `certificateType`; `custom` needs `customCertResolver`). The host is claimed for the organization (409 when another routes it or it is another server's auth domain). A deployed service is redeployed with it. Answers the callback URL to register with the OIDC provider.",
    errors: [404, 409],
  },
  "forwardAuth.removeAuthDomain": {
    description:
      "Removes a server's auth domain, its routes and its authentication service (owners and admins). Refused (409) while a domain of that server is protected.",
    errors: [404, 409],
  },
  "forwardAuth.listProviders": {
    description: "The organization's OIDC providers for forward auth: id, issuer and domain.",
  },
  "forwardAuth.createProvider": {
    description:
      "Adds an OIDC provider forward auth signs in with (owners and admins; ours: Dokploy takes them from its SSO settings). The client secret is encrypted and answered only as `********`; `scopes` default to `openid email profile`; `domain` is shown only.",
    example: {
      issuer: "https://id.example.com/realms/main",
      clientId: "platform",
      clientSecret: "s3cr3t-from-the-provider",
      scopes: ["openid", "email", "profile"],
    },
  },
  "forwardAuth.removeProvider": {
    description:
      "Removes a provider (owners and admins); refused (409) while a server's authentication service signs in with it. Another organization's is a 404.",
    errors: [404, 409],
  },
  "forwardAuth.serverStatus": {
    description:
      "This machine (for the instance organization) and each of the organization's servers: whether its authentication service runs (`running`, `stopped`, or `unknown` when its agent does not answer) and its auth domain.",
  },
  "forwardAuth.deployOnServer": {
    description:
      "Deploys or updates a server's authentication service (owners and admins): a Swarm service of the image PLATFORM_FORWARD_AUTH_IMAGE (default quay.io/oauth2-proxy/oauth2-proxy:v7.6.0) on the platform network, labelled with the organization, signing in with `providerId`. The auth domain must be set first (400 naming serverId). Another organization's server or provider is a 404.",
    errors: [404],
  },
  "forwardAuth.removeOnServer": {
    description:
      "Removes a server's authentication service and keeps its auth domain (owners and admins). Refused (409) while a domain of that server is protected.",
    errors: [404, 409],
  },
  "forwardAuth.status": {
    description: "Whether a domain is behind forward auth. Another organization's domain is a 404.",
    errors: [404],
  },
  "forwardAuth.enable": {
    description:
      "Puts an application domain behind its server's authentication service, which must be deployed and running (400 naming domainId otherwise): its router gets Traefik's forwardAuth middleware, so a request without a session gets the service's answer (a redirect to the sign-in) instead of the application. Compose and preview domains are a 400. Another organization's domain is a 404.",
    errors: [404],
  },
  "forwardAuth.disable": {
    description:
      "Serves an application domain without forward auth again. Another organization's domain is a 404.",
    errors: [404],
  },
};

/** Descriptions and extra statuses of the routes served outside the procedure layer, by operationId. */
export const routeDocs: Record<string, ProcedureDoc> = {
  "deployment.logs": {
    description:
      "Follows a deployment's log as server-sent events: the log so far and each new line as `log` events, then one `end` event with the final status.",
  },
  "runtime.logs": {
    description:
      "Follows a service's runtime log (what its containers print) as server-sent events, one stream per request: the agent of the service's server follows Docker's log and the control plane relays each line; the stream goes on across agent restarts without losing or repeating lines and closes when the client goes or the service is removed. Members see only the services granted to them.",
  },
  "application.dropDeployment": {
    description:
      "Uploads a .zip or .tar.gz of the source (multipart, at most 100 MiB) and queues a deployment of it; the application's source type becomes `drop`.",
  },
  "docker.uploadFileToContainer": {
    description:
      "Uploads a file (multipart: containerId, file, destinationPath, serverId; any content, at most 512 KiB) into a container through Docker's archive API (no shell), keeping an existing file's owner and mode; `destinationPath` is the file's path, or ending in `/` a directory the file keeps its name in, which must exist. Another organization's container is a 404; a `..` segment, NUL or control character in `destinationPath` a 400 naming it.",
    errors: [404],
  },
  "deploy.webhook": {
    description:
      "The URL to give a Git provider: its push payload deploys the application when autoDeploy is on and the branch or tag and watch paths match. Authenticated by the application's refreshToken (and its webhookSecret signature when set).",
    errors: [401, 404],
  },
};

/** The procedures of one database router (databases/router.ts): the same for every kind. */
/** libsql: the kinds' procedures less changePassword, search and saveExternalPort, plus saveExternalPorts. */
function libsqlDocs(): Record<string, ProcedureDoc> {
  const docs = databaseDocs("libsql", {
    databaseUser: "admin",
    sqldNode: "primary",
    enableNamespaces: false,
  });
  for (const omitted of ["changePassword", "search", "saveExternalPort"]) delete docs[`libsql.${omitted}`];
  docs["libsql.create"] = {
    ...docs["libsql.create"],
    description:
      "Creates a libsql (sqld) service (status idle): sqldNode primary, or replica following sqldPrimaryUrl (required with a replica, refused with a primary); enableNamespaces adds sqld's --enable-namespaces. databaseUser and databasePassword become sqld's HTTP basic authentication (SQLD_HTTP_AUTH). Nothing runs until libsql.deploy. A taken appName is a 409.",
  };
  docs["libsql.saveExternalPorts"] = {
    description:
      "Publishes sqld's HTTP port 8080 (externalPort), gRPC port 5001 (externalGRPCPort; not on a replica) and admin port 5000 (externalAdminPort) on its server's host: a number publishes, null removes, an absent field keeps; at least one must be given. Queues a deployment that applies them (answers `{success, deploymentId}`). A reserved port is a 400, one another service publishes on that server a 409.",
    errors: [409],
  };
  return docs;
}

function databaseDocs(kind: string, fields: Record<string, unknown>): Record<string, ProcedureDoc> {
  const idKey = `${kind}Id`;
  const queued = "Answers `{success, deploymentId}` at once; follow it with deployment.allByType.";
  return {
    [`${kind}.create`]: {
      description: `Creates a ${kind} service (status idle) with its credentials; the password is stored encrypted. Nothing runs until ${kind}.deploy. A taken appName is a 409.`,
      errors: [409],
      example: {
        name: "Orders",
        appName: `orders-${kind}`,
        environmentId: id,
        databasePassword: "S3cret-pass",
        ...fields,
      },
    },
    [`${kind}.one`]: {
      description:
        "The service with its password and its internal and external connection URLs (to callers who may see it).",
    },
    [`${kind}.deploy`]: {
      description: `Queues a deployment of the service: creates or updates its Swarm service with its data volume. ${queued}`,
    },
    [`${kind}.readLogs`]: {
      description: `The newest lines the service's container printed, each naming its task (\`<appName>.<slot>.<task id>\`). ${RUNTIME_LOGS}`,
      errors: [404],
    },
    [`${kind}.start`]: {
      description: "Scales the service back to one task (status done); 400 when never deployed.",
    },
    [`${kind}.stop`]: { description: "Scales the service to 0 (status idle); its data is kept." },
    [`${kind}.update`]: {
      description:
        "Changes name, description, image, passwords, resources, command, args or variables; applied by the next deploy or reload.",
    },
    [`${kind}.saveExternalPort`]: {
      description: `Publishes the database's port on its server's host (null removes it) and queues a deployment that applies it. A reserved port is a 400, one another service publishes on that server a 409. ${queued}`,
      errors: [409],
    },
    [`${kind}.saveEnvironment`]: {
      description: "Sets the service's variables (dotenv text); applied by the next deploy or reload.",
    },
    [`${kind}.reload`]: {
      description: `Restarts the service with its current configuration, its data kept (\`${idKey}\` and its appName). ${queued}`,
    },
    [`${kind}.rebuild`]: {
      description: `Deletes the service and its data volume, then deploys it fresh: all data is lost. ${queued}`,
    },
    [`${kind}.remove`]: {
      description: "Removes the service and its data volume, then the record (irreversible).",
    },
    [`${kind}.changePassword`]: {
      description: `Changes the ${kind === "mysql" || kind === "mariadb" ? "user's password (`type` root: root's)" : "password"} inside the running database (the agent runs the database's own client in its container), then stores it; a service never deployed stores it for its first deploy. A stopped service, or one with a deployment queued or running, is a 409 and nothing is stored.`,
      errors: [409],
    },
    [`${kind}.changeStatus`]: {
      description:
        "Sets the service's status by hand (idle, running, done or error); the next deployment, start, stop or observation of the service replaces it. Answers the service.",
    },
    [`${kind}.move`]: {
      description:
        "Moves the service to another environment of the same organization (a member needs access to it and the right to create services); its Swarm service, data and connection URLs are unchanged. Answers the service.",
    },
    [`${kind}.search`]: {
      description: `The organization's ${kind} services matching the filters (\`q\` matches name, appName or description; partial, case-insensitive), newest first, paginated (\`limit\` 1-100, \`offset\`); a member sees the services granted.`,
    },
  };
}
