/**
 * Generates the NATS authority of a production install (run once by deploy/install.sh inside the
 * control plane's image, which holds the nkeys and jwt packages): an operator, the system account
 * and the platform account (JetStream without limits), and writes to the directory given as the
 * only argument:
 *   nats.conf           nats-server configuration: the operator, the two accounts preloaded in a
 *                       memory resolver, JetStream on file storage under /data with sync always
 *   control-plane.creds the control plane's own user (no subject limits) in the platform account
 *   account-seed        the platform account's seed (NATS_ACCOUNT_SEED): the control plane signs
 *                       each agent's credentials with it, limited to agent.<serverId>.>
 * Plain JavaScript for plain node: no build step, no TypeScript.
 */
import { writeFileSync } from "node:fs";
import path from "node:path";
import { createUser } from "@nats-io/nkeys";
import { generateNatsAuthority } from "@platform/agent-protocol/nats-authority.mjs";

const directory = process.argv[2];
if (!directory) {
  console.error("usage: node nats-keys.mjs <output directory>");
  process.exit(2);
}
const text = (bytes) => new TextDecoder().decode(bytes);

const { account, serverConfig, controlPlaneJwt } = await generateNatsAuthority({ jetstream: true });
const user = createUser();
const userJwt = await controlPlaneJwt(user);

const config = [
  "port: 4222",
  "http_port: 8222",
  serverConfig,
  // Every write reaches the disk before it is acknowledged: a deployment job survives a power cut.
  'jetstream { store_dir: "/data", sync_interval: always }',
  "",
].join("\n");
const creds = `-----BEGIN NATS USER JWT-----
${userJwt}
------END NATS USER JWT------

-----BEGIN USER NKEY SEED-----
${text(user.getSeed())}
------END USER NKEY SEED------
`;
writeFileSync(path.join(directory, "nats.conf"), config, { mode: 0o600 });
writeFileSync(path.join(directory, "control-plane.creds"), creds, { mode: 0o600 });
writeFileSync(path.join(directory, "account-seed"), `${text(account.getSeed())}\n`, { mode: 0o600 });
