/**
 * Turns failures of agent commands into API errors: a missing or silent agent and a missing
 * Docker Engine are 503s that say so, a refused name a 400, an unknown container a 404. Other
 * agent failures are logged and answered with a plain 500 (no engine output reaches the caller).
 */
import { AgentCommandError, AgentTimeoutError, AgentUnavailableError } from "@platform/agent-protocol";
import { InvalidNameError } from "@platform/names";
import type { Logger } from "pino";
import type { ServiceContext } from "../context.ts";
import { ApiError } from "../errors.ts";
import { findServer, findServerName } from "../servers/repository.ts";
import { LOCAL_SERVER_ID } from "./hub.ts";

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
        return new ApiError("NOT_FOUND", `Not found on server ${serverId}: ${error.agentMessage}`, {
          serverId,
        });
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
  return new ApiError("INTERNAL_SERVER_ERROR", `The agent of server ${serverId} failed to run the command`, {
    serverId,
  });
}

/** Runs one agent call and rethrows its failure as an ApiError. */
export async function callAgent<T>(serverId: string, call: () => Promise<T>, logger?: Logger): Promise<T> {
  try {
    return await call();
  } catch (error) {
    throw agentErrorToApiError(error, serverId, logger);
  }
}

/** A server as people know it: "this machine", `server "<name>"`, or `server <id>` without a name. */
function serverPhrase(serverId: string, name: string | undefined): string {
  if (serverId === LOCAL_SERVER_ID) return "this machine";
  return name === undefined ? `server ${serverId}` : `server "${name}"`;
}

/**
 * The error with the server named as people know it (serverPhrase): the messages above say
 * `server <id>` (they are built where only the id is known). A server the caller's organization
 * does not own keeps the id it gave.
 */
export async function withServerName(
  ctx: Pick<ServiceContext, "db">,
  organizationId: string | undefined,
  error: unknown,
): Promise<unknown> {
  if (!(error instanceof ApiError) || typeof error.data.serverId !== "string") return error;
  const serverId = error.data.serverId;
  const phrase = `server ${serverId}`;
  if (!error.message.includes(phrase)) return error;
  let name: string | undefined;
  if (serverId !== LOCAL_SERVER_ID) {
    const server = organizationId ? await findServer(ctx.db, organizationId, serverId) : undefined;
    if (!server) return error;
    name = server.name;
  }
  const named = error.message.replaceAll(phrase, serverPhrase(serverId, name));
  return new ApiError(error.code, named, error.data, error.headers);
}

/**
 * How a deployment's log names the server it runs on (serverPhrase); by its id when the name
 * cannot be read (the database may be what failed).
 */
export async function describeServer(ctx: Pick<ServiceContext, "db">, serverId: string): Promise<string> {
  const name =
    serverId === LOCAL_SERVER_ID ? undefined : await findServerName(ctx.db, serverId).catch(() => undefined);
  return serverPhrase(serverId, name);
}
