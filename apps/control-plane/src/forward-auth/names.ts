/** Names of a server's forward-auth service: its Swarm service, Traefik file and address. */
import { createHash } from "node:crypto";

export const FORWARD_AUTH_PORT = 4180;

/**
 * The Swarm service (and Traefik file) of a server's authentication service. Not `platform-…`
 * (the platform's own objects): it is the organization's, labelled so; an application that took
 * the name first keeps it (the agent refuses to act on another owner's service or file).
 */
export function forwardAuthServiceName(forwardAuthSettingsId: string): string {
  const hash = createHash("sha256").update(forwardAuthSettingsId).digest("hex").slice(0, 16);
  return `forward-auth-${hash}`;
}

/** The address a protected domain's forwardAuth middleware asks (oauth2-proxy's root: 202 or a redirect). */
export function forwardAuthAddress(forwardAuthSettingsId: string): string {
  return `http://${forwardAuthServiceName(forwardAuthSettingsId)}:${FORWARD_AUTH_PORT}/`;
}
