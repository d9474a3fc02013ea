/**
 * Signs the NATS user JWTs of agents with the account key (NATS decentralized JWT auth): each
 * agent becomes a user of the platform account, bound to its own nkey and allowed only the
 * subjects of its own server. nats-server verifies the signature against the account JWT it
 * trusts, so enrolling an agent needs no server restart or reload.
 */
import { encodeUser } from "@nats-io/jwt";
import { createAccount, fromPublic, fromSeed, type KeyPair } from "@nats-io/nkeys";
import { agentSubjectsWildcard } from "@platform/agent-protocol";

/** True when `publicKey` is an nkey user public key (U...). */
export function isUserPublicKey(publicKey: string): boolean {
  try {
    return publicKey.startsWith("U") && fromPublic(publicKey).getPublicKey() === publicKey;
  } catch {
    return false;
  }
}

/**
 * What an agent may do on NATS: publish and subscribe under `agent.<serverId>.`, and answer the
 * requests it receives (the reply subjects are allowed one response each, nothing else).
 */
export function agentPermissions(serverId: string) {
  const ownSubjects = agentSubjectsWildcard(serverId);
  return {
    pub: { allow: [ownSubjects] },
    sub: { allow: [ownSubjects] },
    resp: { max: 1, ttl: 0 },
  };
}

export class NatsAccountSigner {
  private constructor(
    private readonly account: KeyPair,
    /** False when the key was made up at start because no NATS_ACCOUNT_SEED was configured. */
    readonly configured: boolean,
  ) {}

  /** The signer for NATS_ACCOUNT_SEED, or a throwaway account key when it is absent. */
  static fromSeed(seed: string | undefined): NatsAccountSigner {
    if (!seed) return new NatsAccountSigner(createAccount(), false);
    return new NatsAccountSigner(fromSeed(new TextEncoder().encode(seed)), true);
  }

  get accountPublicKey(): string {
    return this.account.getPublicKey();
  }

  /** The user JWT of the agent of `serverId` holding the nkey `agentPublicKey` (no expiry). */
  agentUserJwt(serverId: string, agentPublicKey: string): Promise<string> {
    if (!isUserPublicKey(agentPublicKey)) throw new Error("not an nkey user public key");
    return encodeUser(`agent-${serverId}`, agentPublicKey, this.account, agentPermissions(serverId));
  }
}
