/**
 * server.publicIp: this control plane machine's public address, without asking any service on
 * the internet. PLATFORM_PUBLIC_IP when set; otherwise the first non-internal IPv4 address of
 * the machine's interfaces (then IPv6); empty when there is none, and always empty on cloud.
 */
import { networkInterfaces } from "node:os";
import type { Config } from "../config.ts";

export function controlPlanePublicIp(
  config: Pick<Config, "edition" | "publicIp">,
  interfaces = networkInterfaces(),
): string {
  if (config.edition === "cloud") return "";
  if (config.publicIp) return config.publicIp;
  const addresses = Object.values(interfaces)
    .flatMap((list) => list ?? [])
    .filter((address) => !address.internal && !address.address.startsWith("fe80:"));
  const chosen =
    addresses.find((address) => address.family === "IPv4") ??
    addresses.find((address) => address.family === "IPv6");
  return chosen?.address ?? "";
}
