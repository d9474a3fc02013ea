/**
 * The proxy's extra published ports and environment (settings.updateTraefikPorts,
 * settings.writeTraefikEnv): checked here (ports reserved or published by a service on the
 * server, KEY=VALUE entries), then applied to the running proxy service by its agent, which
 * keeps them across every later ensureProxy (toggleDashboard, a new image).
 */
import { DASHBOARD_PORT } from "@platform/traefik-config";
import { callAgent } from "../agents/errors.ts";
import { LOCAL_SERVER_ID } from "../agents/hub.ts";
import type { ServiceContext } from "../context.ts";
import { badRequest, conflict } from "../errors.ts";
import { hostPortTaken, reservedHostPorts } from "../servers/host-ports.ts";

export interface ExtraPort {
  targetPort: number;
  publishedPort: number;
  protocol: "tcp" | "udp" | "sctp";
}

/** A variable name a shell would accept, then a one-line value. */
const ENV_LINE = /^[A-Za-z_][A-Za-z0-9_]{0,127}=[^\0\r\n]{0,4096}$/;

/**
 * Publishes `ports` beside the proxy's entry points on `serverId`, replacing the extra ports it
 * had; the dashboard's entry (targetPort DASHBOARD_PORT) stays settings.toggleDashboard's and is
 * ignored here. A reserved port is a 400, one another service publishes a 409 (both naming
 * additionalPorts).
 */
export async function setProxyPorts(ctx: ServiceContext, serverId: string, ports: ExtraPort[]) {
  const extra = ports.filter((port) => port.targetPort !== DASHBOARD_PORT);
  const server = serverId === LOCAL_SERVER_ID ? null : serverId;
  const reserved = await reservedHostPorts(ctx, ctx.db, server);
  for (const port of extra) {
    const holder = reserved.get(port.publishedPort);
    if (holder) {
      throw badRequest(`additionalPorts: port ${port.publishedPort} is reserved for ${holder}`, {
        fields: ["additionalPorts"],
      });
    }
    const protocol = port.protocol === "udp" ? "udp" : "tcp";
    const claim = {
      serverId: server,
      port: port.publishedPort,
      protocol,
      field: "additionalPorts",
      except: {},
    } as const;
    if (await hostPortTaken(ctx.db, claim)) {
      throw conflict(
        `additionalPorts: port ${port.publishedPort}/${protocol} is already published on this server`,
        {
          fields: ["additionalPorts"],
        },
      );
    }
  }
  await callAgent(
    serverId,
    () => ctx.agents.client.updateProxyService(serverId, { setPorts: true, additionalPorts: extra }),
    ctx.logger,
  );
}

/** Parses KEY=VALUE lines (blank lines and # comments skipped); a bad line is a 400 naming env. */
export function parseProxyEnv(text: string): string[] {
  const entries: string[] = [];
  const names = new Set<string>();
  text.split("\n").forEach((raw, index) => {
    const line = raw.replace(/\r$/, "").trim();
    if (line === "" || line.startsWith("#")) return;
    if (!ENV_LINE.test(line)) {
      throw badRequest(
        `env: line ${index + 1} is not KEY=VALUE (KEY of letters, digits and _, not first a digit)`,
        {
          fields: ["env"],
        },
      );
    }
    const name = line.slice(0, line.indexOf("="));
    if (names.has(name)) throw badRequest(`env: ${name} is set twice`, { fields: ["env"] });
    names.add(name);
    entries.push(line);
  });
  if (entries.length > 200) throw badRequest("env: at most 200 variables", { fields: ["env"] });
  return entries;
}

export async function setProxyEnv(ctx: ServiceContext, serverId: string, env: string[]) {
  await callAgent(
    serverId,
    () => ctx.agents.client.updateProxyService(serverId, { setEnv: true, env }),
    ctx.logger,
  );
}
