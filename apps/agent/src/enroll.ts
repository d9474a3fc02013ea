/**
 * Enrollment: the first start of an agent on a server. The agent makes its own nkey user
 * keypair (the seed never leaves the server), sends only the public key with the one-time
 * enrollment token to `${controlPlaneUrl}/api/agent.enroll`, and gets back its server id, the
 * NATS URL and a user JWT signed for that public key. It stores the JWT and seed as a .creds
 * file (mode 0600) and its config file in the state directory, so restarts do not enroll again.
 */
import { randomBytes } from "node:crypto";
import { chmod, mkdir, readFile, rename, writeFile } from "node:fs/promises";
import { hostname as osHostname } from "node:os";
import path from "node:path";
import { createUser } from "@nats-io/nkeys";
import { AGENT_VERSION } from "@platform/agent-protocol";
import { NATS_URL_PATTERN, SERVER_ID_PATTERN } from "@platform/names";
import * as z from "zod";
import { CONFIG_FILE_NAME, CREDS_FILE_NAME } from "./config.ts";

export interface EnrollOptions {
  controlPlaneUrl: string;
  enrollmentToken: string;
  /** Where agent.json and agent.creds are written. */
  stateDir: string;
  /** Reported hostname (default os.hostname()). */
  hostname?: string;
  /** Extra settings written into agent.json (dockerSocket, mainDirectory, ...). */
  extraConfig?: Record<string, unknown>;
  fetch?: typeof fetch;
  timeoutMs?: number;
}

export interface EnrollmentResult {
  serverId: string;
  natsUrl: string;
  configFile: string;
  credsFile: string;
  /** False when the state directory already held an enrollment and nothing was sent. */
  enrolled: boolean;
}

const enrollResponseSchema = z.object({
  serverId: z.string().regex(SERVER_ID_PATTERN),
  natsUrl: z.string().regex(NATS_URL_PATTERN),
  userJwt: z.string().regex(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/),
});

/** A NATS .creds file: the user JWT and the nkey seed in the format nats tools read. */
export function formatCreds(userJwt: string, seed: string): string {
  return `-----BEGIN NATS USER JWT-----
${userJwt}
------END NATS USER JWT------

************************* IMPORTANT *************************
NKEY Seed printed below can be used to sign and prove identity.
NKEYs are sensitive and should be treated as secrets.

-----BEGIN USER NKEY SEED-----
${seed}
------END USER NKEY SEED------

*************************************************************
`;
}

/** The `sub` (subject public key) claim of a JWT, without verifying it. */
function jwtSubject(jwt: string): string | undefined {
  try {
    const claims = JSON.parse(Buffer.from(jwt.split(".")[1] ?? "", "base64url").toString("utf8"));
    return typeof claims.sub === "string" ? claims.sub : undefined;
  } catch {
    return undefined;
  }
}

/** Writes `content` to `file` with `mode` through a temporary file and a rename. */
async function writeFileAtomic(file: string, content: string, mode: number): Promise<void> {
  const temporary = `${file}.${randomBytes(4).toString("hex")}.tmp`;
  await writeFile(temporary, content, { mode });
  await chmod(temporary, mode);
  await rename(temporary, file);
}

async function existingEnrollment(stateDir: string): Promise<EnrollmentResult | undefined> {
  const configFile = path.join(stateDir, CONFIG_FILE_NAME);
  try {
    const config = JSON.parse(await readFile(configFile, "utf8"));
    if (typeof config.serverId !== "string" || typeof config.credsFile !== "string") return undefined;
    const credsFile = path.resolve(stateDir, config.credsFile);
    await readFile(credsFile);
    return { serverId: config.serverId, natsUrl: config.natsUrl, configFile, credsFile, enrolled: false };
  } catch {
    return undefined;
  }
}

export async function enrollAgent(options: EnrollOptions): Promise<EnrollmentResult> {
  const stateDir = path.resolve(options.stateDir);
  const existing = await existingEnrollment(stateDir);
  if (existing) return existing;

  const keypair = createUser();
  const publicKey = keypair.getPublicKey();
  const url = `${options.controlPlaneUrl.replace(/\/+$/, "")}/api/agent.enroll`;
  const body = {
    enrollmentToken: options.enrollmentToken,
    publicKey,
    hostname: options.hostname ?? osHostname(),
    agentVersion: AGENT_VERSION,
  };
  const doFetch = options.fetch ?? fetch;
  let response: Response;
  try {
    response = await doFetch(url, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(options.timeoutMs ?? 30_000),
    });
  } catch (error) {
    throw new Error(`enrollment at ${url} failed: ${(error as Error).message}`);
  }
  const text = await response.text();
  if (!response.ok) {
    let reason = "";
    try {
      const message = JSON.parse(text)?.error?.message;
      if (typeof message === "string") reason = `: ${message.slice(0, 200)}`;
    } catch {}
    throw new Error(`enrollment at ${url} was refused with HTTP ${response.status}${reason}`);
  }
  let answer: z.infer<typeof enrollResponseSchema>;
  try {
    answer = enrollResponseSchema.parse(JSON.parse(text));
  } catch {
    throw new Error(`enrollment at ${url} answered something other than {serverId, natsUrl, userJwt}`);
  }
  if (jwtSubject(answer.userJwt) !== publicKey) {
    throw new Error(`enrollment at ${url} returned a JWT for another key than this agent's`);
  }

  await mkdir(stateDir, { recursive: true, mode: 0o700 });
  const credsFile = path.join(stateDir, CREDS_FILE_NAME);
  const configFile = path.join(stateDir, CONFIG_FILE_NAME);
  const seed = new TextDecoder().decode(keypair.getSeed());
  keypair.clear();
  await writeFileAtomic(credsFile, formatCreds(answer.userJwt, seed), 0o600);
  const config = {
    ...options.extraConfig,
    serverId: answer.serverId,
    natsUrl: answer.natsUrl,
    credsFile: CREDS_FILE_NAME,
  };
  await writeFileAtomic(configFile, `${JSON.stringify(config, null, 2)}\n`, 0o600);
  return { serverId: answer.serverId, natsUrl: answer.natsUrl, configFile, credsFile, enrolled: true };
}
