/**
 * Turns failures of agent commands into API errors: a missing or silent agent and a missing
 * Docker Engine are 503s that say so, a refused name a 400, an unknown container a 404. Other
 * agent failures are logged and answered with a plain 500 (no engine output reaches the caller).
 */
import { AgentCommandError, AgentTimeoutError, AgentUnavailableError } from "@platform/agent-protocol";
import { InvalidNameError } from "@platform/names";
import type { Logger } from "pino";
import { ApiError } from "../errors.ts";

export function agentErrorToApiError(error: unknown, serverId: string, logger?: Logger): ApiError {
  if (error instanceof ApiError) return error;
  if (error instanceof InvalidNameError) return new ApiError("BAD_REQUEST", error.message);
  if (error instanceof AgentUnavailableError) {
    return new ApiError("SERVICE_UNAVAILABLE", `The agent of server ${serverId} is not connected`, {
      serverId,
    });
  }
  if (error instanceof AgentTimeoutError) {
    return new ApiError(
      "SERVICE_UNAVAILABLE",
      `The agent of server ${serverId} did not answer within ${error.timeoutMs} ms`,
      { serverId },
    );
  }
  if (error instanceof AgentCommandError) {
    switch (error.code) {
      case "INVALID_ARGUMENT":
        return new ApiError("BAD_REQUEST", error.agentMessage);
      case "NOT_FOUND":
        return new ApiError("NOT_FOUND", `Not found on server ${serverId}: ${error.agentMessage}`);
      case "UNAVAILABLE":
        return new ApiError(
          "SERVICE_UNAVAILABLE",
          `Docker is not available on server ${serverId}: ${error.agentMessage}`,
          { serverId, docker: "unavailable" },
        );
      case "DEADLINE_EXCEEDED":
        return new ApiError("SERVICE_UNAVAILABLE", `The agent of server ${serverId} answered too late`, {
          serverId,
        });
      case "FAILED":
        // The work ran and failed for a reason the user can act on (a registry refusing a login).
        return new ApiError("BAD_REQUEST", error.agentMessage, { serverId });
      case "FAILED_PRECONDITION":
        // The object exists but belongs to another owner (or is the platform's own).
        return new ApiError("CONFLICT", error.agentMessage, { serverId });
      case "CANCELLED":
        return new ApiError("CONFLICT", `Cancelled on server ${serverId}: ${error.agentMessage}`, {
          serverId,
        });
      case "UNIMPLEMENTED":
        return new ApiError(
          "SERVICE_UNAVAILABLE",
          `The agent of server ${serverId} does not know ${error.command}; update the agent`,
          { serverId },
        );
    }
  }
  logger?.error({ err: error, serverId }, "agent command failed");
  return new ApiError("INTERNAL_SERVER_ERROR", `The agent of server ${serverId} failed to run the command`);
}

/** Runs one agent call and rethrows its failure as an ApiError. */
export async function callAgent<T>(serverId: string, call: () => Promise<T>, logger?: Logger): Promise<T> {
  try {
    return await call();
  } catch (error) {
    throw agentErrorToApiError(error, serverId, logger);
  }
}
