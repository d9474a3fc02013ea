/**
 * Where a new deployment of an organization's service may run: one of its servers, or this
 * machine for the instance organization (agentServerId), unless the instance administrator made
 * this machine remote-servers-only (settings.updateRemoteServersOnly): then every organization
 * deploys to its servers, and a deployment without a serverId is a 400 naming serverId.
 */
import { LOCAL_SERVER_ID } from "../agents/hub.ts";
import type { ServiceContext } from "../context.ts";
import { badRequest } from "../errors.ts";
import { agentServerId } from "./repository.ts";

export async function remoteServersOnly(db: ServiceContext["db"]): Promise<boolean> {
  const row = await db
    .selectFrom("webServerSettings")
    .select("remoteServersOnly")
    .where("id", "=", 1)
    .executeTakeFirst();
  return row?.remoteServersOnly ?? false;
}

export async function setRemoteServersOnly(db: ServiceContext["db"], enabled: boolean): Promise<void> {
  await db
    .updateTable("webServerSettings")
    .set({ remoteServersOnly: enabled, updatedAt: new Date().toISOString() })
    .where("id", "=", 1)
    .execute();
}

export async function deploymentServerId(
  ctx: Pick<ServiceContext, "db" | "config">,
  organizationId: string,
  serverId: string | null | undefined,
): Promise<string> {
  if ((!serverId || serverId === LOCAL_SERVER_ID) && (await remoteServersOnly(ctx.db))) {
    throw badRequest(
      "Invalid input: serverId: is required (this instance deploys to remote servers only; name one of your servers)",
      { fields: ["serverId"] },
    );
  }
  return agentServerId(ctx, organizationId, serverId);
}
