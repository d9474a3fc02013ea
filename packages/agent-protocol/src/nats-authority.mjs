/**
 * The NATS authority of a platform (decentralized JWT auth): an operator, the system account and
 * the platform account without limits (JetStream included when asked), the nats-server
 * configuration lines that trust them (both accounts preloaded in a memory resolver) and the
 * control plane's own user JWT. One source for the production install
 * (apps/control-plane/bin/nats-keys.mjs) and the tests' private NATS servers. Plain JavaScript
 * (types in nats-authority.d.mts): nats-keys.mjs runs under plain node.
 */
import { encodeAccount, encodeOperator, encodeUser } from "@nats-io/jwt";
import { createAccount, createOperator } from "@nats-io/nkeys";

export async function generateNatsAuthority({ operatorName = "platform", jetstream = false } = {}) {
  const operator = createOperator();
  const systemAccount = createAccount();
  const account = createAccount();
  const operatorJwt = await encodeOperator(operatorName, operator, {
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
      ...(jetstream ? { mem_storage: -1, disk_storage: -1, streams: -1, consumer: -1 } : {}),
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
    account,
    serverConfig,
    controlPlaneJwt: (user) => encodeUser("control-plane", user, account, {}),
  };
}
