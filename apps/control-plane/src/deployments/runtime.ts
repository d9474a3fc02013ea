/**
 * An application's running Swarm service: on which server it runs, and start, stop, reload and
 * removal through that server's agent (the removal's tolerance of an unreachable agent,
 * removeServiceOf, serves database services too). Agent failures become API errors (callAgent).
 */
import {
  AgentCommandError,
  AgentTimeoutError,
  AgentUnavailableError,
  type ServiceAction,
} from "@platform/agent-protocol";
import { agentErrorToApiError, callAgent } from "../agents/errors.ts";
import { LOCAL_SERVER_ID } from "../agents/hub.ts";
import { ownerOfApplication } from "../applications/ownership.ts";
import type { ServiceContext } from "../context.ts";
import type { Application } from "../db/schema.ts";
import { badRequest } from "../errors.ts";
import { agentServerId } from "../servers/repository.ts";

/** How long a start/stop/reload/remove may take on the agent. */
const SERVICE_ACTION_TIMEOUT_MS = 60_000;

/** The server an application runs on: its serverId, else LOCAL_SERVER_ID (self-hosted only). */
export function serverOf(app: { serverId: string | null }): string {
  return app.serverId ?? LOCAL_SERVER_ID;
}

/**
 * serverOf for a request: on the cloud edition an application without a server cannot run, and
 * this machine runs only the instance organization's applications (agentServerId).
 */
async function serverFor(services: ServiceContext, app: Application): Promise<string> {
  if (app.serverId === null && services.config.edition === "cloud") {
    throw badRequest("The application has no server: set serverId (required on the cloud edition)", {
      fields: ["serverId"],
    });
  }
  const { organizationId } = await ownerOfApplication(services.db, app);
  return agentServerId(services, organizationId, app.serverId);
}

async function runServiceAction(
  services: ServiceContext,
  serverId: string,
  app: Application,
  action: ServiceAction,
) {
  const owner = await ownerOfApplication(services.db, app);
  return services.agents.client.serviceAction(serverId, app.appName, action, {
    replicas: app.replicas,
    timeoutMs: SERVICE_ACTION_TIMEOUT_MS,
    owner,
  });
}

async function serviceAction(services: ServiceContext, app: Application, action: ServiceAction) {
  const serverId = await serverFor(services, app);
  return callAgent(serverId, () => runServiceAction(services, serverId, app, action), services.logger);
}

/** Scales the service back to its replicas; a missing service (never deployed) is a 400. */
export async function startApplicationService(services: ServiceContext, app: Application): Promise<void> {
  const { found } = await serviceAction(services, app, "START");
  if (!found) throw notDeployed();
}

/** Scales the service to 0; a missing service (never deployed) is a 400. */
export async function stopApplicationService(services: ServiceContext, app: Application): Promise<void> {
  const { found } = await serviceAction(services, app, "STOP");
  if (!found) throw notDeployed();
}

/** Restarts the service's tasks with the same spec; a missing service is a 400. */
export async function reloadApplicationService(services: ServiceContext, app: Application): Promise<void> {
  const { found } = await serviceAction(services, app, "RELOAD");
  if (!found) throw notDeployed();
}

/**
 * Removes the service (and its files on the server); a missing service is fine. A server whose
 * agent cannot be reached does not block the deletion of the application (removeServiceOf).
 */
export async function removeApplicationService(services: ServiceContext, app: Application): Promise<void> {
  const serverId = serverOf(app);
  await removeServiceOf(services, serverId, app.appName, "application", () =>
    runServiceAction(services, serverId, app, "REMOVE"),
  );
}

/**
 * Runs `remove` (the REMOVE of the service `appName` of an application or database service) and
 * answers its result. A server whose agent cannot be reached does not block the deletion of
 * what owns the service: the leftover service is logged (and can be removed with docker.* later)
 * rather than making it undeletable, and the answer is undefined. Other failures are API errors.
 */
export async function removeServiceOf<T>(
  services: ServiceContext,
  serverId: string,
  appName: string,
  kind: "application" | "database" | "compose",
  remove: () => Promise<T>,
): Promise<T | undefined> {
  try {
    return await remove();
  } catch (error) {
    const unreachable =
      error instanceof AgentUnavailableError ||
      error instanceof AgentTimeoutError ||
      (error instanceof AgentCommandError && error.code === "UNIMPLEMENTED");
    if (!unreachable) throw agentErrorToApiError(error, serverId, services.logger);
    services.logger.warn(
      { serverId, appName, err: error },
      `the ${kind}'s service could not be removed: its server's agent is unreachable`,
    );
    return undefined;
  }
}

const notDeployed = () =>
  badRequest("The application has no running service yet: deploy it first", { fields: ["applicationId"] });
