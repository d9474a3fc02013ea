/**
 * A server turns `active` once its agent has enrolled and a validation run through that agent
 * shows what deployments need: Docker, Swarm, the platform overlay network and the main
 * directory. Build tools (nixpacks, buildpacks, railpack) and rclone are optional.
 */
import type { ValidateServerResult } from "@platform/agent-protocol";
import type { ServiceContext } from "../context.ts";
import type { ServerStatus } from "../db/schema.ts";

export interface Activation {
  serverStatus: ServerStatus;
  /** What keeps the server inactive, in words for the user; empty when active. */
  missing: string[];
  /** The validation run for this decision, or null when none ran. */
  validation: ValidateServerResult | null;
}

/** Requirements of an active server that `validation` does not meet. */
export function missingRequirements(validation: ValidateServerResult): string[] {
  const missing: string[] = [];
  if (!validation.docker?.enabled) missing.push("Docker");
  if (!validation.isSwarmInstalled) missing.push("Docker Swarm");
  if (!validation.isPlatformNetworkInstalled) missing.push("the platform-network overlay network");
  if (!validation.isMainDirectoryInstalled) missing.push("the main directory");
  return missing;
}

/**
 * Marks `serverId` active when its agent is enrolled, reachable and its validation passes.
 * Never turns an active server inactive; a server of no row (or LOCAL_SERVER_ID) is left alone.
 */
export async function markActiveIfValid(
  ctx: Pick<ServiceContext, "db" | "agents" | "logger">,
  serverId: string,
): Promise<Activation> {
  const server = await ctx.db
    .selectFrom("servers")
    .select(["serverStatus", "enrolledAt"])
    .where("serverId", "=", serverId)
    .executeTakeFirst();
  if (!server) return { serverStatus: "inactive", missing: ["the server record"], validation: null };
  if (server.serverStatus === "active") return { serverStatus: "active", missing: [], validation: null };
  if (!server.enrolledAt)
    return { serverStatus: "inactive", missing: ["an enrolled agent"], validation: null };

  let validation: ValidateServerResult;
  try {
    validation = await ctx.agents.client.validateServer(serverId);
  } catch (error) {
    ctx.logger.info({ serverId, err: error }, "server not activated: its agent did not validate");
    return { serverStatus: "inactive", missing: ["a connected agent"], validation: null };
  }
  const missing = missingRequirements(validation);
  if (missing.length > 0) return { serverStatus: "inactive", missing, validation };
  await ctx.db
    .updateTable("servers")
    .set({ serverStatus: "active" })
    .where("serverId", "=", serverId)
    .execute();
  ctx.logger.info({ serverId }, "server is active");
  return { serverStatus: "active", missing: [], validation };
}
