/**
 * A real registry login through the agent of a server (Docker's POST /auth): the control plane's
 * own machine by default, a server of the organization when serverId is given (required on the
 * cloud edition, whose control-plane machine is the operator's). The registry's host goes
 * through the outbound guard first. A refusal is a 400 naming only its category (unauthorized,
 * unknown host, could not be reached): never the engine's text or the remote's body, which
 * would make this procedure a port scanner and a banner reader.
 */
import { AgentCommandError } from "@platform/agent-protocol";
import { callAgent } from "../agents/errors.ts";
import type { Caller, ServiceContext } from "../context.ts";
import { ApiError } from "../errors.ts";
import { OutboundRefusedError } from "../outbound/guard.ts";
import { agentServerId } from "../servers/repository.ts";
import { checkRegistryProbe } from "./outbound.ts";

const LOGIN_TIMEOUT_MS = 60_000;

/**
 * What a failed login test may say. Every answer that would tell a port's state (refused,
 * timeout, reset, TLS error, something other than a registry) is the one "could not be
 * reached" (issue 22 finding 4); only a registry's own refusal of the credentials and a name
 * that does not resolve (no port involved) are told apart.
 */
export const registryFailureCategories = ["unauthorized", "unknown host", "could not be reached"] as const;
export type RegistryFailureCategory = (typeof registryFailureCategories)[number];

/** The category of the engine's message about a failed login (the message itself stays here). */
export function registryFailureCategory(engineMessage: string): RegistryFailureCategory {
  if (/\b401\b|unauthorized|incorrect username or password|authentication required/i.test(engineMessage)) {
    return "unauthorized";
  }
  if (/no such host|server misbehaving|name resolution|\blookup\b/i.test(engineMessage))
    return "unknown host";
  return "could not be reached";
}

function loginFailed(registryUrl: string, category: RegistryFailureCategory): ApiError {
  return new ApiError("BAD_REQUEST", `Registry login to ${registryUrl} failed: ${category}`, {
    category,
  });
}

export async function testRegistryLogin(
  ctx: ServiceContext,
  caller: Caller,
  login: { registryUrl: string; username: string; password: string; serverId?: string },
): Promise<void> {
  const serverId = await agentServerId(ctx, caller.organizationId, login.serverId);
  try {
    await checkRegistryProbe(ctx, caller.organizationId, login.registryUrl);
  } catch (error) {
    if (!(error instanceof OutboundRefusedError)) throw error;
    if (error.unresolved) throw loginFailed(login.registryUrl, "unknown host");
    throw new ApiError("BAD_REQUEST", `registryUrl is not allowed: ${error.message}`, {
      fields: ["registryUrl"],
    });
  }
  await callAgent(
    serverId,
    async () => {
      try {
        return await ctx.agents.client.registryLogin(
          serverId,
          { serverAddress: login.registryUrl, username: login.username, password: login.password },
          LOGIN_TIMEOUT_MS,
        );
      } catch (error) {
        if (error instanceof AgentCommandError && error.code === "FAILED") {
          ctx.logger.info(
            {
              serverId,
              registryUrl: login.registryUrl,
              category: registryFailureCategory(error.agentMessage),
            },
            "registry login test failed",
          );
          throw loginFailed(login.registryUrl, registryFailureCategory(error.agentMessage));
        }
        throw error;
      }
    },
    ctx.logger,
  );
}
