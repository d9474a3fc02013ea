/**
 * An application's running Swarm service: start, stop, reload and removal through its server's
 * agent (the removal tolerates an unreachable agent: removeServiceOf). Agent failures become API
 * errors (callAgent).
 */
import type { ServiceAction } from "@platform/agent-protocol";
import { callAgent } from "../agents/errors.ts";
import type { ServiceContext } from "../context.ts";
import type { Application } from "../db/schema.ts";
import { removeServiceOf, serverOf } from "../deployments/runtime.ts";
import { badRequest } from "../errors.ts";
import { agentServerId } from "../servers/repository.ts";
import { ownerOfApplication } from "./ownership.ts";

/** How long a start/stop/reload/remove may take on the agent. */
const SERVICE_ACTION_TIMEOUT_MS = 60_000;

/**
 * serverOf for a request: on the cloud edition an application without a server cannot run, and
 * this machine runs only the instance organization's applications (agentServerId).
 */
async function serverFor(ctx: ServiceContext, app: Application): Promise<string> {
  if (app.serverId === null && ctx.config.edition === "cloud") {
    throw badRequest("The application has no server: set serverId (required on the cloud edition)", {
      fields: ["serverId"],
    });
  }
  const { organizationId } = await ownerOfApplication(ctx.db, app);
  return agentServerId(ctx, organizationId, app.serverId);
}

async function runServiceAction(
  ctx: ServiceContext,
  serverId: string,
  app: Application,
  action: ServiceAction,
) {
  const owner = await ownerOfApplication(ctx.db, app);
  return ctx.agents.client.serviceAction(serverId, app.appName, action, {
    replicas: app.replicas,
    timeoutMs: SERVICE_ACTION_TIMEOUT_MS,
    owner,
  });
}

async function serviceAction(ctx: ServiceContext, app: Application, action: ServiceAction) {
  const serverId = await serverFor(ctx, app);
  return callAgent(serverId, () => runServiceAction(ctx, serverId, app, action), ctx.logger);
}

/** Scales the service back to its replicas; a missing service (never deployed) is a 400. */
export async function startApplicationService(ctx: ServiceContext, app: Application): Promise<void> {
  const { found } = await serviceAction(ctx, app, "START");
  if (!found) throw notDeployed();
}

/** Scales the service to 0; a missing service (never deployed) is a 400. */
export async function stopApplicationService(ctx: ServiceContext, app: Application): Promise<void> {
  const { found } = await serviceAction(ctx, app, "STOP");
  if (!found) throw notDeployed();
}

/** Restarts the service's tasks with the same spec; a missing service is a 400. */
export async function reloadApplicationService(ctx: ServiceContext, app: Application): Promise<void> {
  const { found } = await serviceAction(ctx, app, "RELOAD");
  if (!found) throw notDeployed();
}

/**
 * Removes the service (and its files on the server); a missing service is fine. A server whose
 * agent cannot be reached does not block the deletion of the application (removeServiceOf).
 */
export async function removeApplicationService(ctx: ServiceContext, app: Application): Promise<void> {
  const serverId = serverOf(app);
  await removeServiceOf(ctx, serverId, app.appName, "application", () =>
    runServiceAction(ctx, serverId, app, "REMOVE"),
  );
}

const notDeployed = () =>
  badRequest("The application has no running service yet: deploy it first", { fields: ["applicationId"] });
