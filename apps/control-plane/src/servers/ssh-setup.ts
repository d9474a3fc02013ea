/**
 * server.setup: logs in to a server over SSH (ssh2) with its stored key, uploads the agent
 * bootstrap script (deploy/agent/install.sh) and runs it with a fresh one-time enrollment token
 * (it downloads the agent executable from the control plane and checks its sha256, exactly as
 * by hand) and records what it printed in servers.setup_log. The token goes over the SSH
 * channel's stdin into a 0600 file, never onto a command line or into the log.
 * The host key is trusted on first use and must match on every later setup.
 */
import { lookup } from "node:dns/promises";
import { BlockList, isIP } from "node:net";
import type { Client, ClientChannel } from "ssh2";
import type { ServiceContext } from "../context.ts";
import type { Server } from "../db/schema.ts";
import { badRequest } from "../errors.ts";
import { installScript } from "./agent-artifact.ts";
import { hostKeyFingerprint, saveSetupLog, trustHostKey } from "./repository.ts";
import { findSshKey, openPrivateKey } from "./ssh-keys.ts";
import { ssh2 } from "./ssh2.ts";

/** Most of a setup log kept (the end, where failures are). */
const MAX_SETUP_LOG_CHARS = 64 * 1024;
const SSH_READY_TIMEOUT_MS = 20_000;
const REMOTE_DIR_PATTERN = /^\/tmp\/platform-setup\.[A-Za-z0-9]+$/;

export interface SetupOutcome {
  /** True when the script ran to the end with exit status 0. */
  installed: boolean;
  /** What went wrong, in words for the user; empty when installed. */
  failure: string;
}

/** A step of the setup that failed on the server; its message is the outcome's failure. */
class SetupFailure extends Error {}

/** Addresses a server can never be: link-local (cloud metadata), unspecified and multicast. */
const refusedAddresses = new BlockList();
refusedAddresses.addSubnet("169.254.0.0", 16, "ipv4");
refusedAddresses.addSubnet("0.0.0.0", 8, "ipv4");
refusedAddresses.addSubnet("224.0.0.0", 4, "ipv4");
refusedAddresses.addSubnet("fe80::", 10, "ipv6");
refusedAddresses.addSubnet("ff00::", 8, "ipv6");
refusedAddresses.addAddress("::", "ipv6");

const loopbackAddresses = new BlockList();
loopbackAddresses.addSubnet("127.0.0.0", 8, "ipv4");
loopbackAddresses.addAddress("::1", "ipv6");

/** Why `address` (an IP) may not be a server's address, or null when it may. */
export function refusedAddressReason(address: string, edition: "self-hosted" | "cloud"): string | null {
  const family = isIP(address) === 6 ? "ipv6" : "ipv4";
  if (refusedAddresses.check(address, family)) return "is a link-local, unspecified or multicast address";
  if (edition === "cloud" && loopbackAddresses.check(address, family)) return "is a loopback address";
  return null;
}

/** Quotes `value` for a POSIX shell command line. */
const shellQuote = (value: string) => `'${value.replaceAll("'", `'\\''`)}'`;

/** The URL agents enroll at: PLATFORM_URL, else http://<public ip>:<port>. */
export function controlPlaneUrlForAgents(ctx: ServiceContext, publicIp: string): string | null {
  if (ctx.config.platformUrl) return ctx.config.platformUrl.replace(/\/+$/, "");
  if (!publicIp) return null;
  const host = isIP(publicIp) === 6 ? `[${publicIp}]` : publicIp;
  return `http://${host}:${ctx.config.port}`;
}

/** Collects a command's output, keeping the end when it grows too long. */
class SetupLog {
  private text = "";
  constructor(private readonly secrets: string[]) {}
  append(chunk: string): void {
    this.text += chunk;
    if (this.text.length > MAX_SETUP_LOG_CHARS * 2) this.text = this.text.slice(-MAX_SETUP_LOG_CHARS);
  }
  line(text: string): void {
    this.append(`${text}\n`);
  }
  toString(): string {
    let text = this.text.slice(-MAX_SETUP_LOG_CHARS);
    for (const secret of this.secrets) text = text.replaceAll(secret, "[redacted]");
    return text;
  }
}

/** Runs `command` on the connection, optionally writing `stdin`; resolves with the exit code. */
function exec(
  client: Client,
  command: string,
  options: { stdin?: Buffer | string; log?: SetupLog; collect?: string[] } = {},
): Promise<number> {
  return new Promise((resolve, reject) => {
    client.exec(command, (error: Error | undefined, channel: ClientChannel) => {
      if (error) return reject(error);
      const onData = (chunk: Buffer) => {
        options.log?.append(chunk.toString("utf8"));
        options.collect?.push(chunk.toString("utf8"));
      };
      channel.on("data", onData);
      channel.stderr.on("data", onData);
      let code: number | null = null;
      channel.on("exit", (exitCode: number | null, signal?: string) => {
        code = exitCode ?? (signal ? 128 : 1);
      });
      channel.on("close", () => resolve(code ?? 1));
      channel.end(options.stdin ?? undefined);
    });
  });
}

/** Words for an ssh2 connection error. */
function describeSshError(error: Error & { level?: string; code?: string }, target: string): string {
  if (error.level === "client-authentication") {
    return `SSH authentication failed for ${target}: the server did not accept the SSH key`;
  }
  if (error.level === "client-timeout") return `SSH connection to ${target} timed out`;
  if (error.code === "ECONNREFUSED")
    return `SSH connection to ${target} was refused (is sshd listening there?)`;
  if (error.code === "EHOSTUNREACH" || error.code === "ENETUNREACH" || error.code === "ETIMEDOUT") {
    return `${target} is not reachable (${error.code})`;
  }
  return `SSH connection to ${target} failed: ${error.message}`;
}

async function connect(
  host: string,
  server: Server,
  privateKey: string,
  onHostKey: (fingerprint: string) => boolean,
): Promise<Client> {
  const client = new (ssh2().Client)();
  return new Promise((resolve, reject) => {
    client.once("ready", () => resolve(client));
    client.once("error", (error) => reject(error));
    client.connect({
      host,
      port: server.port,
      username: server.username,
      privateKey,
      readyTimeout: SSH_READY_TIMEOUT_MS,
      hostVerifier: (key: Buffer) => onHostKey(hostKeyFingerprint(key)),
    });
  });
}

/**
 * Runs the bootstrap script on `server`; never throws for what happens on the server (the
 * outcome says it), only for what is wrong here (no SSH key, no way to enroll agents).
 */
export async function runSetupOverSsh(
  ctx: ServiceContext,
  server: Server,
  controlPlaneUrl: string,
): Promise<SetupOutcome> {
  const key = server.sshKeyId ? await findSshKey(ctx.db, server.organizationId, server.sshKeyId) : undefined;
  if (!key) {
    throw badRequest("The server has no SSH key: set sshKeyId with server.update first", {
      fields: ["sshKeyId"],
    });
  }
  const target = `${server.username}@${server.ipAddress}:${server.port}`;
  const { token } = await ctx.agents.createEnrollmentToken(server.serverId);
  const log = new SetupLog([token]);
  log.line(`== server.setup ${new Date().toISOString()}: connecting to ${target} with SSH key "${key.name}"`);

  const finish = async (outcome: SetupOutcome): Promise<SetupOutcome> => {
    log.line(outcome.installed ? "== setup finished" : `== setup failed: ${outcome.failure}`);
    await saveSetupLog(ctx.db, server.serverId, log.toString());
    return outcome;
  };
  const failed = (failure: string) => finish({ installed: false, failure });

  let address: string;
  try {
    address = isIP(server.ipAddress) ? server.ipAddress : (await lookup(server.ipAddress)).address;
  } catch {
    return failed(`The host name ${server.ipAddress} does not resolve`);
  }
  const refusal = refusedAddressReason(address, ctx.config.edition);
  if (refusal) return failed(`${server.ipAddress} ${refusal}; it cannot be a server`);

  let presentedKey = "";
  let client: Client;
  try {
    client = await connect(address, server, await openPrivateKey(ctx, key), (fingerprint) => {
      presentedKey = fingerprint;
      return server.hostKeySha256 === null || server.hostKeySha256 === fingerprint;
    });
  } catch (error) {
    if (presentedKey && server.hostKeySha256 && presentedKey !== server.hostKeySha256) {
      return failed(
        `The SSH host key of ${target} changed (trusted ${server.hostKeySha256}, presented ${presentedKey}); ` +
          "if the machine was reinstalled, update the server's address to trust the new key",
      );
    }
    return failed(describeSshError(error as Error, target));
  }
  log.line(`== connected; host key ${presentedKey}`);
  await trustHostKey(ctx.db, server.serverId, presentedKey);

  try {
    const output: string[] = [];
    const made = await exec(client, "umask 077 && mktemp -d /tmp/platform-setup.XXXXXXXX", {
      collect: output,
    });
    const remoteDir = output.join("").trim();
    if (made !== 0 || !REMOTE_DIR_PATTERN.test(remoteDir)) {
      return failed(`Could not make a temporary directory on ${target}: ${remoteDir.slice(0, 200)}`);
    }
    const upload = async (name: string, content: Buffer | string) => {
      const status = await exec(client, `umask 077 && cat > ${remoteDir}/${name}`, { stdin: content, log });
      if (status !== 0) throw new SetupFailure(`Could not upload ${name} to ${target}`);
    };
    await upload("install.sh", await installScript());
    await upload("enrollment-token", `${token}\n`);

    const sudo = server.username === "root" ? "" : "sudo -n ";
    const command = [
      `${sudo}sh ${remoteDir}/install.sh`,
      `--control-plane-url ${shellQuote(controlPlaneUrl)}`,
      `--enrollment-token-file ${remoteDir}/enrollment-token`,
      ...(ctx.config.buildersUrl ? [`--builders-url ${shellQuote(ctx.config.buildersUrl)}`] : []),
    ].join(" ");
    log.line(`== running install.sh on ${target}`);
    const status = await exec(client, `${command}; status=$?; rm -rf ${remoteDir}; exit $status`, { log });
    if (status !== 0) return failed(`install.sh exited with status ${status} on ${target} (see setupLog)`);
    return finish({ installed: true, failure: "" });
  } catch (error) {
    const message =
      error instanceof SetupFailure
        ? error.message
        : `Setup on ${target} failed: ${(error as Error).message}`;
    return failed(message);
  } finally {
    client.end();
  }
}
