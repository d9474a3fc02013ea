/**
 * registryLogin: checks registry credentials through the Docker Engine's POST /auth, which talks
 * to the registry itself. A refusal (wrong credentials, unknown host, untrusted certificate) is a
 * FAILED error carrying the engine's message, which quotes the registry's own answer.
 */
import type { RegistryLoginCommand, RegistryLoginResult } from "@platform/agent-protocol";
import type Docker from "dockerode";
import { CommandError } from "../command-error.ts";
import { engineMessage, engineStatus } from "../docker/engine.ts";

/** Host[:port], as Docker writes registry addresses; no scheme, user info, path or whitespace. */
const SERVER_ADDRESS = /^[A-Za-z0-9.-]+(:\d{1,5})?$|^\[[0-9A-Fa-f:.]+\](:\d{1,5})?$/;

export async function registryLogin(
  docker: Docker,
  command: RegistryLoginCommand,
): Promise<RegistryLoginResult> {
  if (!command.auth) throw new CommandError("INVALID_ARGUMENT", "auth is required");
  const { serverAddress, username, password } = command.auth;
  if (!SERVER_ADDRESS.test(serverAddress)) {
    throw new CommandError("INVALID_ARGUMENT", "serverAddress must be a registry host[:port]");
  }
  if (!username || !password) {
    throw new CommandError("INVALID_ARGUMENT", "username and password are required");
  }
  try {
    const answer = (await docker.checkAuth({ username, password, serveraddress: serverAddress })) as {
      Status?: string;
    };
    return { status: answer.Status ?? "Login Succeeded" };
  } catch (error) {
    // No status: the engine itself was not reached; AgentCore reports that as UNAVAILABLE.
    if (engineStatus(error) === undefined) throw error;
    throw new CommandError("FAILED", withoutSecret(engineMessage(error), password));
  }
}

/** Passwords shorter than this are left in messages: masking "p" would mangle every "p" of the text. */
export const MIN_MASKED_SECRET_LENGTH = 4;

/**
 * The engine never echoes the password today; this keeps it that way whatever it answers. Only
 * the whole password is masked, and only when it is long enough to be told from ordinary text.
 */
export function withoutSecret(message: string, password: string): string {
  if (password.length < MIN_MASKED_SECRET_LENGTH) return message;
  return message.replaceAll(password, "***");
}
