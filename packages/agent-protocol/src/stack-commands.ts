/**
 * The commands an agent deploys a compose stack with (apps/agent deploy/stack.ts), shared so the
 * control plane can show them (compose.getDefaultCommand) exactly as they run.
 */

/** The name a raw stack's converted file is written under, in the stack's directory. */
export const STACK_FILE_NAME = "docker-compose.yml";

/** `docker` arguments of a `stack` deployment. */
export function stackDeployArgs(file: string, appName: string): string[] {
  return ["stack", "deploy", "--prune", "--with-registry-auth", "--compose-file", file, appName];
}

/** Arguments after `docker compose` (or `docker-compose`) of a `docker-compose` deployment. */
export function composeUpArgs(appName: string, file: string): string[] {
  return ["-p", appName, "-f", file, "up", "-d", "--remove-orphans"];
}
