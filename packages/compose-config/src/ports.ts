/** The host ports a Compose document publishes, as the server's port checks see them. */
import { parsePort } from "./mounts.ts";
import { asRecord, listOf } from "./objects.ts";

export interface PublishedPort {
  port: number;
  protocol: "tcp" | "udp";
}

/**
 * Every host port the services of `document` (interpolated: a converted document) publish, once
 * each, in order; a range counts port by port. A port Docker picks (no published part) is none.
 */
export function publishedPortsOf(document: Record<string, unknown>): PublishedPort[] {
  const seen = new Map<string, PublishedPort>();
  for (const raw of Object.values(asRecord(document.services) ?? {})) {
    for (const item of listOf(asRecord(raw)?.ports)) {
      const entry = parsePort(item);
      if (!entry) continue;
      const protocol = entry.protocol === "udp" ? "udp" : "tcp";
      for (const port of entry.published) seen.set(`${port}/${protocol}`, { port, protocol });
    }
  }
  return [...seen.values()];
}
