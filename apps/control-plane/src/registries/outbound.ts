/**
 * Registry addresses through the outbound guard: before a login test, a pull or a push with a
 * stored registry's credentials, the registry's host is resolved and every address checked.
 */
import type { ServiceContext } from "../context.ts";
import { checkOutboundHost, OutboundRefusedError } from "../outbound/guard.ts";
import { checkUserTarget } from "../outbound/own-addresses.ts";

/** The host of a stored registry address (`host[:port]`, `[v6]:port`). */
export function registryHost(address: string): string {
  const bracketed = /^\[([^\]]+)\]/.exec(address);
  if (bracketed) return bracketed[1]!;
  return address.replace(/:\d+$/, "");
}

/** Throws OutboundRefusedError when the registry's host is one the platform may not reach. */
export async function checkRegistryAddress(ctx: ServiceContext, address: string): Promise<void> {
  await checkOutboundHost(registryHost(address), ctx.config.outboundAllow);
}

/**
 * Before a registry login test for `organizationId`: the guard and the own-address rule (a
 * test must not tell the platform's own ports apart). Docker tries https on 443 by default.
 */
export async function checkRegistryProbe(
  ctx: ServiceContext,
  organizationId: string,
  address: string,
): Promise<void> {
  const port = Number(/\]?:(\d+)$/.exec(address)?.[1] ?? 443);
  await checkUserTarget(ctx, organizationId, { host: registryHost(address), port });
}

/**
 * Before credentials are sent to a registry (pull, push): throws an Error for the deployment's
 * log when the guard refuses its host. A name this machine cannot resolve may still resolve
 * where the engine runs, which then reports it.
 */
export async function checkRegistryBeforeUse(ctx: ServiceContext, address: string): Promise<void> {
  try {
    await checkRegistryAddress(ctx, address);
  } catch (error) {
    if (!(error instanceof OutboundRefusedError)) throw error;
    if (!error.unresolved) throw new Error(`The registry ${address} may not be reached: ${error.message}`);
  }
}
