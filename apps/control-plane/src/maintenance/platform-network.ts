/**
 * settings.createPlatformNetwork: the way out of a deploy refused on this machine because its
 * platform network is missing (the installer makes it; PLATFORM_LOCAL_PROXY=false and a
 * hand-run control plane skip it). The agent creates it as the installer does; the proxy is not
 * installed by this (settings.toggleDashboard does that), so the choice of running without one
 * stays the administrator's.
 */
import { z } from "zod";
import { callAgent } from "../agents/errors.ts";
import { LOCAL_SERVER_ID } from "../agents/hub.ts";
import type { ServiceContext } from "../context.ts";

export const platformNetworkSchema = z.object({
  /** The network's name on the engine (PLATFORM_NETWORK, default platform-network). */
  name: z.string(),
  /** False when it existed already. */
  created: z.boolean(),
});

export async function createLocalPlatformNetwork(ctx: ServiceContext) {
  return callAgent(
    LOCAL_SERVER_ID,
    () => ctx.agents.client.call(LOCAL_SERVER_ID, "ensurePlatformNetwork", {}, 60_000),
    ctx.logger,
  );
}
