/**
 * Test support: a private nats-server with decentralized JWT auth (an operator, the platform
 * account preloaded in a memory resolver) on a spare port, and the configuration a control
 * plane needs for it: NATS_URL, NATS_CREDS (its own unrestricted user) and NATS_ACCOUNT_SEED.
 * With `jetstream`, the server and the account have JetStream (the durable deployment queue).
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { createUser } from "@nats-io/nkeys";
import { formatCreds } from "@platform/agent";
import { createNatsAuthority } from "@platform/agent/testing/nats-auth.ts";
import { TestNatsServer } from "@platform/agent/testing/nats-server.ts";

/** An agent's own nkey user keypair, as enrollment makes it (for benches outside this package). */
export { createUser as createAgentUser } from "@nats-io/nkeys";

export interface JwtNats {
  server: TestNatsServer;
  /** Environment for startTestPlatform. */
  env: { NATS_URL: string; NATS_CREDS: string; NATS_ACCOUNT_SEED: string };
  accountPublicKey: string;
  stop(): Promise<void>;
}

export async function startJwtNats(options: { jetstream?: boolean } = {}): Promise<JwtNats> {
  const authority = await createNatsAuthority(options);
  const server = await TestNatsServer.start(authority.serverConfig, options);
  const directory = await mkdtemp(path.join(tmpdir(), "cp-nats-creds-"));
  const user = createUser();
  const credsFile = path.join(directory, "control-plane.creds");
  const userJwt = await authority.controlPlaneJwt(user);
  await writeFile(credsFile, formatCreds(userJwt, new TextDecoder().decode(user.getSeed())), {
    mode: 0o600,
  });
  return {
    server,
    env: { NATS_URL: server.url, NATS_CREDS: credsFile, NATS_ACCOUNT_SEED: authority.accountSeed },
    accountPublicKey: authority.accountPublicKey,
    stop: async () => {
      await server.stop();
      await rm(directory, { recursive: true, force: true });
    },
  };
}
