/**
 * Test helper standing in for the control plane's NATS signing: an operator and an account
 * (nkeys + JWTs, the nats-server config that trusts them) and user JWTs for agents, limited to
 * their own subjects, and for the control plane. With `jetstream`, the account may use JetStream
 * (no limits), for a server started with it.
 */
import { encodeUser } from "@nats-io/jwt";
import type { KeyPair } from "@nats-io/nkeys";
import { generateNatsAuthority } from "@platform/agent-protocol/nats-authority.mjs";

export interface TestNatsAuthority {
  /** nats-server configuration lines trusting the operator and preloading the account. */
  serverConfig: string;
  /** A user JWT for the agent of `serverId` with public key `publicKey`. */
  agentJwt(serverId: string, publicKey: string): Promise<string>;
  /** A user JWT without subject limits (the control plane) for `user`. */
  controlPlaneJwt(user: KeyPair): Promise<string>;
  /** The account's public key (`A…`) and signing seed (`SA…`), as NATS_ACCOUNT_SEED takes it. */
  accountPublicKey: string;
  accountSeed: string;
}

export async function createNatsAuthority(options: { jetstream?: boolean } = {}): Promise<TestNatsAuthority> {
  const { account, serverConfig, controlPlaneJwt } = await generateNatsAuthority({
    operatorName: "platform-test",
    jetstream: options.jetstream,
  });
  return {
    serverConfig,
    agentJwt: (serverId, publicKey) =>
      encodeUser(`agent-${serverId}`, publicKey, account, {
        pub: { allow: [`agent.${serverId}.>`] },
        sub: { allow: [`agent.${serverId}.>`] },
        resp: { max: 1, ttl: 0 },
      }),
    controlPlaneJwt,
    accountPublicKey: account.getPublicKey(),
    accountSeed: new TextDecoder().decode(account.getSeed()),
  };
}
