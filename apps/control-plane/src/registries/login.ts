/**
 * A real registry login through the agent of a server (Docker's POST /auth): the control plane's
 * own machine by default, a server of the organization when serverId is given (required on the
 * cloud edition, whose control-plane machine is the operator's). The registry's host goes
 * through the outbound guard first. A refusal is a 400 naming only its category (unauthorized,
 * unknown host, unknown certificate authority, refused, timeout, other): never the engine's text
 * or the remote's body, which would make this procedure a port scanner and a banner reader.
 */
import { AgentCommandError } from "@platform/agent-protocol";
import { callAgent } from "../agents/errors.ts";
import type { Caller, ServiceContext } from "../context.ts";
import { ApiError } from "../errors.ts";
import { OutboundRefusedError } from "../outbound/guard.ts";
import { agentServerId } from "../servers/repository.ts";
import { checkRegistryAddress } from "./outbound.ts";

const LOGIN_TIMEOUT_MS = 60_000;

export const registryFailureCategories = [
  "unauthorized",
  "unknown host",
  "unknown certificate authority",
  "refused",
  "timeout",
  "other",
] as const;
export type RegistryFailureCategory = (typeof registryFailureCategories)[number];

/** The category of the engine's message about a failed login (the message itself stays here). */
export function registryFailureCategory(engineMessage: string): RegistryFailureCategory {
  if (/\b401\b|unauthorized|incorrect username or password|authentication required/i.test(engineMessage)) {
    return "unauthorized";
  }
  if (/no such host|server misbehaving|name resolution|\blookup\b/i.test(engineMessage))
    return "unknown host";
  if (/x509|certificate|tls: /i.test(engineMessage)) return "unknown certificate authority";
  if (/connection refused|no route to host|network is unreachable/i.test(engineMessage)) return "refused";
  if (/time(d)? ?out|deadline exceeded/i.test(engineMessage)) return "timeout";
  return "other";
}

function loginFailed(registryUrl: string, category: RegistryFailureCategory): ApiError {
  return new ApiError("BAD_REQUEST", `Registry login to ${registryUrl} failed: ${category}`, {
    category,
  });
}

export async function testRegistryLogin(
  services: ServiceContext,
  caller: Caller,
  login: { registryUrl: string; username: string; password: string; serverId?: string },
): Promise<void> {
  const serverId = await agentServerId(services, caller.organizationId, login.serverId);
  try {
    await checkRegistryAddress(services, login.registryUrl);
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
        return await services.agents.client.registryLogin(
          serverId,
          { serverAddress: login.registryUrl, username: login.username, password: login.password },
          LOGIN_TIMEOUT_MS,
        );
      } catch (error) {
        if (error instanceof AgentCommandError && error.code === "FAILED") {
          services.logger.info(
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
    services.logger,
  );
}
