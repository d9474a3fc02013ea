/**
 * Whether the kernel can run Swarm's routing mesh and service VIPs (IPVS), and the endpoint mode
 * a service gets when its settings name none: without IPVS a VIP answers nothing, so a service
 * that publishes no ingress port is given DNS round robin (`dnsrr`): its name resolves to its
 * tasks' addresses on every node of the overlay. A port published through the ingress mesh needs
 * a VIP: such a service keeps Docker's default, as does every service where IPVS is there.
 */
import { existsSync, readFileSync } from "node:fs";
import { release } from "node:os";

let cached: boolean | undefined;

/** IPVS loaded (/proc/net/ip_vs), built in, or loadable as a module of the running kernel. */
export function ipvsAvailable(): boolean {
  if (cached !== undefined) return cached;
  cached =
    existsSync("/proc/net/ip_vs") ||
    existsSync("/sys/module/ip_vs") ||
    ["modules.builtin", "modules.dep"].some((file) => {
      try {
        return /\/ip_vs\.ko/.test(readFileSync(`/lib/modules/${release()}/${file}`, "utf8"));
      } catch {
        return false;
      }
    });
  return cached;
}

/** The EndpointSpec.Mode to set: the user's, else dnsrr where there is no IPVS and no ingress port. */
export function endpointMode(
  userMode: "vip" | "dnsrr" | undefined,
  ports: readonly { publishMode: string }[],
  ipvs: boolean,
): "vip" | "dnsrr" | undefined {
  if (userMode) return userMode;
  if (ipvs || ports.some((port) => port.publishMode === "ingress")) return undefined;
  return "dnsrr";
}
