/** Shared inputs of this package's tests: a tenant whose resources are known, and defaults. */
import { parse } from "yaml";
import type { ConvertComposeInput } from "./convert.ts";
import { interpolateCompose } from "./interpolate.ts";
import type { ComposeTenant } from "./tenancy.ts";

export const FILES_DIRECTORY = "/var/lib/platform/compose/shop-k3x9qa/files";

/** A tenant owning the network `acme-net` and the volume `acme-uploads`; port 22 is reserved, 8443 taken. */
export function testTenant(): ComposeTenant & { askedPorts: string[] } {
  const askedPorts: string[] = [];
  return {
    askedPorts,
    isOwnedNetwork: (name) => name === "acme-net",
    isOwnedVolume: (name) => name === "acme-uploads",
    refusePublishedPort: (port, protocol) => {
      askedPorts.push(`${port}/${protocol}`);
      if (port === 22) return "port 22 is reserved by the platform";
      if (port === 8443 && protocol === "tcp") return "port 8443/tcp is taken by another service";
      return undefined;
    },
  };
}

export function baseInput(overrides: Partial<ConvertComposeInput> = {}): ConvertComposeInput {
  return {
    composeFile: "services:\n  web:\n    image: nginx:1.27\n",
    composeType: "docker-compose",
    appName: "shop-k3x9qa",
    labels: { "platform.organization": "org_acme", "platform.service": "compose_1" },
    env: {},
    domains: [],
    platformNetwork: "platform-network",
    tenant: null,
    filesDirectory: FILES_DIRECTORY,
    ...overrides,
  };
}

/** An agent's own environment, which Compose and docker stack deploy interpolate the file they read with. */
export const AGENT_ENV = { HOME: "/home/agent", X: "platform/theirs:1", TOKEN: "agent-token" };

/** The values Compose reads from a converted file's text: interpolated with the agent's environment. */
export function readAsCompose(yaml: string): Record<string, unknown> {
  return interpolateCompose(parse(yaml), AGENT_ENV);
}
