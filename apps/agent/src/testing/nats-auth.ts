/**
 * Test helper standing in for the control plane's NATS signing: an operator and an account
 * (nkeys + JWTs, the nats-server config that trusts them) and user JWTs for agents, limited to
 * their own subjects, and for the control plane. With `jetstream`, the account may use JetStream
 * (no limits), for a server started with it.
 */
import { encodeAccount, encodeOperator, encodeUser } from "@nats-io/jwt";
import { createAccount, createOperator, type KeyPair } from "@nats-io/nkeys";

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
  const operator = createOperator();
  const account = createAccount();
  const systemAccount = createAccount();
  const operatorJwt = await encodeOperator("platform-test", operator, {
    system_account: systemAccount.getPublicKey(),
  });
  const unlimited = {
    limits: {
      conn: -1,
      subs: -1,
      data: -1,
      payload: -1,
      imports: -1,
      exports: -1,
      leaf: -1,
      wildcards: true,
      ...(options.jetstream ? { mem_storage: -1, disk_storage: -1, streams: -1, consumer: -1 } : {}),
    },
  };
  const accountJwt = await encodeAccount("platform", account, unlimited, { signer: operator });
  const systemJwt = await encodeAccount("SYS", systemAccount, {}, { signer: operator });
  const serverConfig = [
    `operator: "${operatorJwt}"`,
    `system_account: "${systemAccount.getPublicKey()}"`,
    "resolver: MEMORY",
    "resolver_preload: {",
    `  ${account.getPublicKey()}: "${accountJwt}"`,
    `  ${systemAccount.getPublicKey()}: "${systemJwt}"`,
    "}",
  ].join("\n");
  return {
    serverConfig,
    agentJwt: (serverId, publicKey) =>
      encodeUser(`agent-${serverId}`, publicKey, account, {
        pub: { allow: [`agent.${serverId}.>`] },
        sub: { allow: [`agent.${serverId}.>`] },
        resp: { max: 1, ttl: 0 },
      }),
    controlPlaneJwt: (user) => encodeUser("control-plane", user, account, {}),
    accountPublicKey: account.getPublicKey(),
    accountSeed: new TextDecoder().decode(account.getSeed()),
  };
}
