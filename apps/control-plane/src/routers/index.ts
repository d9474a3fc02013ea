/** Every spec router, registered in one place: the whole API surface at a glance. */
import type { RouterDef } from "../procedure.ts";
import { adminRouter } from "./admin.ts";
import { agentRouter } from "./agent.ts";
import { applicationRouter } from "./application.ts";
import { authRouter } from "./auth.ts";
import { backupRouter } from "./backup.ts";
import { bitbucketRouter } from "./bitbucket.ts";
import { certificatesRouter } from "./certificates.ts";
import { clusterRouter } from "./cluster.ts";
import { composeRouter } from "./compose.ts";
import { deploymentRouter } from "./deployment.ts";
import { destinationRouter } from "./destination.ts";
import { dnsProviderRouter } from "./dns-provider.ts";
import { dockerRouter } from "./docker.ts";
import { dockerDiskUsageRouter } from "./docker-disk-usage.ts";
import { dockerImageRouter } from "./docker-image.ts";
import { dockerVolumeRouter } from "./docker-volume.ts";
import { domainRouter } from "./domain.ts";
import { environmentRouter } from "./environment.ts";
import { forwardAuthRouter } from "./forward-auth.ts";
import { gitProviderRouter } from "./git-provider.ts";
import { giteaRouter } from "./gitea.ts";
import { githubRouter } from "./github.ts";
import { gitlabRouter } from "./gitlab.ts";
import { libsqlRouter } from "./libsql.ts";
import { mariadbRouter } from "./mariadb.ts";
import { mongoRouter } from "./mongo.ts";
import { mountsRouter } from "./mounts.ts";
import { mysqlRouter } from "./mysql.ts";
import { networkRouter } from "./network.ts";
import { notificationRouter } from "./notification.ts";
import { organizationRouter } from "./organization.ts";
import { overviewRouter } from "./overview.ts";
import { patchRouter } from "./patch.ts";
import { portRouter } from "./port.ts";
import { postgresRouter } from "./postgres.ts";
import { previewDeploymentRouter } from "./preview-deployment.ts";
import { projectRouter } from "./project.ts";
import { redirectsRouter } from "./redirects.ts";
import { redisRouter } from "./redis.ts";
import { registryRouter } from "./registry.ts";
import { rollbackRouter } from "./rollback.ts";
import { scheduleRouter } from "./schedule.ts";
import { securityRouter } from "./security.ts";
import { serverRouter } from "./server.ts";
import { settingsRouter } from "./settings.ts";
import { sshKeyRouter } from "./ssh-key.ts";
import { swarmRouter } from "./swarm.ts";
import { tagRouter } from "./tag.ts";
import { userRouter } from "./user.ts";
import { vaultProviderRouter } from "./vault-provider.ts";
import { volumeBackupsRouter } from "./volume-backups.ts";

export const allRouters: RouterDef[] = [
  authRouter,
  userRouter,
  organizationRouter,
  projectRouter,
  environmentRouter,
  dockerRouter,
  agentRouter,
  serverRouter,
  clusterRouter,
  sshKeyRouter,
  applicationRouter,
  deploymentRouter,
  composeRouter,
  portRouter,
  mountsRouter,
  registryRouter,
  domainRouter,
  securityRouter,
  patchRouter,
  redirectsRouter,
  certificatesRouter,
  rollbackRouter,
  previewDeploymentRouter,
  postgresRouter,
  mysqlRouter,
  mariadbRouter,
  mongoRouter,
  redisRouter,
  libsqlRouter,
  settingsRouter,
  adminRouter,
  gitProviderRouter,
  githubRouter,
  gitlabRouter,
  bitbucketRouter,
  giteaRouter,
  notificationRouter,
  destinationRouter,
  backupRouter,
  scheduleRouter,
  volumeBackupsRouter,
  dockerVolumeRouter,
  dockerImageRouter,
  dockerDiskUsageRouter,
  swarmRouter,
  networkRouter,
  tagRouter,
  vaultProviderRouter,
  dnsProviderRouter,
  forwardAuthRouter,
  overviewRouter,
];
