/**
 * A real registry login through the agent of a server (Docker's POST /auth): the control plane's
 * own machine by default, a server of the organization when serverId is given (required on the
 * cloud edition, whose control-plane machine is the operator's). The registry's refusal comes back
 * as a 400 carrying its own message (unauthorized, unknown host, unknown certificate authority).
 */
import { callAgent } from "../agents/errors.ts";
import type { Caller, ServiceContext } from "../context.ts";
import { agentServerId } from "../servers/repository.ts";

const LOGIN_TIMEOUT_MS = 60_000;

export async function testRegistryLogin(
  services: ServiceContext,
  caller: Caller,
  login: { registryUrl: string; username: string; password: string; serverId?: string },
): Promise<void> {
  const serverId = await agentServerId(services, caller.organizationId, login.serverId);
  await callAgent(
    serverId,
    () =>
      services.agents.client.registryLogin(
        serverId,
        { serverAddress: login.registryUrl, username: login.username, password: login.password },
        LOGIN_TIMEOUT_MS,
      ),
    services.logger,
  );
}
