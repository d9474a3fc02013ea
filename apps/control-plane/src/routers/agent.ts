/**
 * agent: the endpoint the bootstrap script's agent calls once, with its one-time enrollment
 * token and its own nkey public key, to get its server id, the NATS URL and its NATS user JWT.
 * Public: the token is the credential.
 */
import { z } from "zod";
import { isUserPublicKey } from "../agents/nats-signer.ts";
import { defineRouter, mutation } from "../procedure.ts";

export const agentRouter = defineRouter("agent", {
  enroll: mutation({
    summary: "Exchange a one-time enrollment token for the agent's NATS credentials",
    access: "public",
    input: z.object({
      enrollmentToken: z.string().min(1).max(256),
      publicKey: z.string().refine(isUserPublicKey, "must be an nkey user public key (U...)"),
      hostname: z.string().min(1).max(253),
      agentVersion: z.string().min(1).max(64),
    }),
    output: z.object({ serverId: z.string(), natsUrl: z.string(), userJwt: z.string() }),
    handler: ({ ctx, input }) => ctx.agents.enroll(input),
  }),
});
