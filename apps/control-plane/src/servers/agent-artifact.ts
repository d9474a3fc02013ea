/**
 * What a server needs to run the agent, served by the control plane itself: the bootstrap script
 * (GET /agent/install.sh) and the agent as one executable per architecture
 * (GET /agent/platform-agent-linux-<arch>, with GET /agent/platform-agent-linux-<arch>.sha256 in
 * sha256sum's format and GET /agent/manifest.json listing version and checksums). Public: they
 * hold code, no secrets.
 *
 * The executables come from the build (dist/agent/platform-agent-linux-<arch>, see
 * scripts/build.mjs). When the one for this machine's architecture is missing or older than
 * the bundle dist/agent/main.js, it is built on first request from this process's own node
 * binary (scripts/agent-executable.mjs) and kept: the agent is then exactly this control
 * plane's version.
 */
import { createReadStream, existsSync } from "node:fs";
import { mkdir, readFile, stat } from "node:fs/promises";
import path from "node:path";
import { Readable } from "node:stream";
import { fileURLToPath } from "node:url";
import { AGENT_VERSION } from "@platform/agent-protocol";
import type { Hono } from "hono";
import {
  agentExecutableName,
  buildAgentExecutable,
  sha256File,
} from "../../../../scripts/agent-executable.mjs";

const repoRoot = fileURLToPath(new URL("../../../../", import.meta.url));
export const INSTALL_SCRIPT_PATH = path.join(repoRoot, "deploy/agent/install.sh");

/** Architectures an agent executable can exist for (Node's names; `uname -m` maps to them). */
export const AGENT_ARCHITECTURES = ["x64", "arm64"] as const;
export type AgentArchitecture = (typeof AGENT_ARCHITECTURES)[number];

export interface AgentArtifact {
  arch: AgentArchitecture;
  file: string;
  sha256: string;
  size: number;
  version: string;
}

export function installScript(): Promise<string> {
  return readFile(INSTALL_SCRIPT_PATH, "utf8");
}

/** Where the build puts the agent bundle and executables (PLATFORM_AGENT_DIST_DIR overrides). */
export function agentDistDirectory(env: NodeJS.ProcessEnv = process.env): string {
  return env.PLATFORM_AGENT_DIST_DIR || path.join(repoRoot, "dist/agent");
}

const mtime = async (file: string) => (await stat(file).catch(() => undefined))?.mtimeMs;

/** Checksums by file, valid while the file's size and mtime stay the same. */
const checksums = new Map<string, { key: string; sha256: Promise<string> }>();
const builds = new Map<string, Promise<void>>();

/** The agent executable for `arch`, or undefined when there is none and none can be built here. */
export async function agentArtifact(arch: AgentArchitecture): Promise<AgentArtifact | undefined> {
  const directory = agentDistDirectory();
  const file = path.join(directory, agentExecutableName(arch));
  if (arch === process.arch) await buildIfStale(directory, file);
  const info = await stat(file).catch(() => undefined);
  if (!info) return undefined;
  // Another architecture's executable older than the bundle is another version's: not served.
  const bundleTime = await mtime(path.join(directory, "main.js"));
  if (bundleTime !== undefined && info.mtimeMs < bundleTime) return undefined;
  const key = `${info.size}:${info.mtimeMs}`;
  let cached = checksums.get(file);
  if (cached?.key !== key) {
    cached = { key, sha256: sha256File(file) };
    checksums.set(file, cached);
  }
  return { arch, file, sha256: await cached.sha256, size: info.size, version: AGENT_VERSION };
}

/** Builds this architecture's executable from the bundle when it is missing or older than it. */
async function buildIfStale(directory: string, file: string): Promise<void> {
  const bundle = path.join(directory, "main.js");
  const [bundleTime, fileTime] = await Promise.all([mtime(bundle), mtime(file)]);
  if (bundleTime === undefined) {
    if (fileTime === undefined) throw new Error(`no agent bundle at ${bundle}: run npm run build`);
    return;
  }
  if (fileTime !== undefined && fileTime >= bundleTime) return;
  let building = builds.get(file);
  if (!building) {
    building = (async () => {
      await mkdir(directory, { recursive: true });
      await buildAgentExecutable({ bundle, node: process.execPath, output: file });
    })().finally(() => builds.delete(file));
    builds.set(file, building);
  }
  await building;
}

const isArchitecture = (value: string): value is AgentArchitecture =>
  (AGENT_ARCHITECTURES as readonly string[]).includes(value);

/** GET /agent/install.sh, /agent/manifest.json, /agent/platform-agent-linux-<arch>[.sha256]. */
export function registerAgentArtifactRoutes(app: Hono): void {
  app.get("/agent/install.sh", async (c) =>
    c.body(await installScript(), 200, { "content-type": "text/x-shellscript; charset=utf-8" }),
  );
  app.get("/agent/manifest.json", async (c) => {
    const artifacts: Record<string, { url: string; sha256: string; size: number }> = {};
    for (const arch of AGENT_ARCHITECTURES) {
      const artifact = await agentArtifact(arch);
      if (artifact) {
        const name = agentExecutableName(arch);
        artifacts[name] = { url: `/agent/${name}`, sha256: artifact.sha256, size: artifact.size };
      }
    }
    return c.json({ version: AGENT_VERSION, artifacts });
  });
  app.get("/agent/:name{platform-agent-linux-[a-z0-9]+(\\.sha256)?}", async (c) => {
    const name = c.req.param("name");
    const checksumFile = name.endsWith(".sha256");
    const arch = name.replace(/\.sha256$/, "").replace("platform-agent-linux-", "");
    if (!isArchitecture(arch)) return c.json({ message: `no agent for architecture ${arch}` }, 404);
    const artifact = await agentArtifact(arch);
    if (!artifact || !existsSync(artifact.file)) {
      return c.json({ message: `no agent for architecture ${arch} on this control plane` }, 404);
    }
    const headers = {
      "x-platform-agent-version": artifact.version,
      "x-platform-agent-sha256": artifact.sha256,
    };
    if (checksumFile) {
      return c.body(`${artifact.sha256}  ${agentExecutableName(arch)}\n`, 200, {
        ...headers,
        "content-type": "text/plain; charset=utf-8",
      });
    }
    const body = Readable.toWeb(createReadStream(artifact.file)) as ReadableStream<Uint8Array>;
    return c.body(body, 200, {
      ...headers,
      "content-type": "application/octet-stream",
      "content-length": String(artifact.size),
    });
  });
}
