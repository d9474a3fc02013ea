/**
 * A service's place and removal, whichever feature owns it: on which server it runs, and its
 * removal's tolerance of an unreachable agent (removeServiceOf). An application's start, stop,
 * reload and removal are applications/runtime.ts.
 */
import { AgentCommandError, AgentTimeoutError, AgentUnavailableError } from "@platform/agent-protocol";
import { agentErrorToApiError } from "../agents/errors.ts";
import { LOCAL_SERVER_ID } from "../agents/hub.ts";
import type { ServiceContext } from "../context.ts";

/** The server an application runs on: its serverId, else LOCAL_SERVER_ID (self-hosted only). */
export function serverOf(app: { serverId: string | null }): string {
  return app.serverId ?? LOCAL_SERVER_ID;
}

/**
 * Runs `remove` (the REMOVE of the service `appName` of an application or database service) and
 * answers its result. A server whose agent cannot be reached does not block the deletion of
 * what owns the service: the leftover service is logged (and can be removed with docker.* later)
 * rather than making it undeletable, and the answer is undefined. Other failures are API errors.
 */
export async function removeServiceOf<T>(
  ctx: ServiceContext,
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
    if (!unreachable) throw agentErrorToApiError(error, serverId, ctx.logger);
    ctx.logger.warn(
      { serverId, appName, err: error },
      `the ${kind}'s service could not be removed: its server's agent is unreachable`,
    );
    return undefined;
  }
}
