/**
 * One-time enrollment tokens and their exchange for an agent's NATS credentials. A token is
 * random (256 bits), shown once, stored as its sha256, valid for one hour and for one use;
 * redeeming it binds the server to the agent's nkey public key (a new token re-binds it, which
 * is how re-running the bootstrap script works).
 */
import { sql } from "kysely";
import type { Logger } from "pino";
import { randomToken, sha256Hex } from "../crypto/ids.ts";
import type { Db } from "../db/database.ts";
import { ApiError } from "../errors.ts";
import type { AgentEnrollRequest, AgentEnrollResponse, EnrollmentToken } from "./hub.ts";
import type { NatsAccountSigner } from "./nats-signer.ts";

export const ENROLLMENT_TOKEN_TTL_MS = 60 * 60 * 1000;

export async function createEnrollmentToken(db: Db, serverId: string, now: Date): Promise<EnrollmentToken> {
  const token = randomToken(32);
  const expiresAt = new Date(now.getTime() + ENROLLMENT_TOKEN_TTL_MS).toISOString();
  await db.transaction().execute(async (trx) => {
    // Expired tokens of this server are worthless; drop them while we are here.
    await trx
      .deleteFrom("agentEnrollments")
      .where("serverId", "=", serverId)
      .where("expiresAt", "<", now.toISOString())
      .execute();
    await trx
      .insertInto("agentEnrollments")
      .values({ tokenHash: sha256Hex(token), serverId, expiresAt })
      .execute();
  });
  return { token, expiresAt };
}

const refused = () => new ApiError("UNAUTHORIZED", "Invalid, expired or already used enrollment token");

/**
 * Redeems `request.enrollmentToken` (atomically: two agents racing with one token cannot both
 * win) and returns the agent's server id, NATS URL and user JWT.
 */
export async function enroll(
  deps: { db: Db; signer: NatsAccountSigner; natsUrlForAgents: string | null; now: Date; logger: Logger },
  request: AgentEnrollRequest,
): Promise<AgentEnrollResponse> {
  const { db, signer, natsUrlForAgents, now } = deps;
  if (!natsUrlForAgents) {
    throw new ApiError(
      "CONFLICT",
      "This control plane runs without NATS (NATS_URL is not set); agents cannot enroll",
    );
  }
  const enrolledAt = now.toISOString();
  const serverId = await db.transaction().execute(async (trx) => {
    const redeemed = await trx
      .updateTable("agentEnrollments")
      .set({ usedAt: enrolledAt })
      .where("tokenHash", "=", sha256Hex(request.enrollmentToken))
      .where("usedAt", "is", null)
      .where("expiresAt", ">", enrolledAt)
      .returning("serverId")
      .executeTakeFirst();
    if (!redeemed) throw refused();
    const server = await trx
      .updateTable("servers")
      .set({
        agentPublicKey: request.publicKey,
        agentVersion: request.agentVersion,
        enrolledAt,
        // A new agent starts unproven: it has not beaten yet.
        lastHeartbeatAt: sql<string | null>`null`,
      })
      .where("serverId", "=", redeemed.serverId)
      .returning("serverId")
      .executeTakeFirst();
    if (!server) throw refused();
    return server.serverId;
  });
  const userJwt = await signer.agentUserJwt(serverId, request.publicKey);
  deps.logger.info(
    {
      serverId,
      hostname: request.hostname,
      agentVersion: request.agentVersion,
      agentPublicKey: request.publicKey,
    },
    "agent enrolled",
  );
  return { serverId, natsUrl: natsUrlForAgents, userJwt };
}
