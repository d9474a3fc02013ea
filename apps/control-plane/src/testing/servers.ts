/**
 * A server row written straight into the database, for tests that need a server of some
 * organization without enrolling an agent (it has none: commands to it answer unavailable).
 */
import { newId } from "../crypto/ids.ts";
import type { Db } from "../db/database.ts";

export async function insertServer(
  db: Db,
  organizationId: string,
  fields: { serverId?: string; name?: string; ipAddress?: string; serverType?: "deploy" | "build" } = {},
): Promise<string> {
  const serverId = fields.serverId ?? newId();
  await db
    .insertInto("servers")
    .values({
      serverId,
      organizationId,
      name: fields.name ?? "node",
      description: null,
      ipAddress: fields.ipAddress ?? "198.51.100.20",
      username: "root",
      ...(fields.serverType ? { serverType: fields.serverType } : {}),
      sshKeyId: null,
      agentPublicKey: null,
      agentVersion: null,
      enrolledAt: null,
      lastHeartbeatAt: null,
      hostKeySha256: null,
    })
    .execute();
  return serverId;
}
