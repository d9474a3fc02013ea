/**
 * The agent as one file per architecture: a Node.js single executable application (SEA), i.e.
 * a node binary with the bundled agent (dist/agent/main.js) injected with postject. Node 20
 * runs an SEA's script as CommonJS with only built-in modules to require, so the ESM bundle is
 * first rewritten as one CommonJS file (esbuild; `import.meta.url` becomes the executable's). The server needs no Node.js, npm or TypeScript to run it. Used by the build
 * (scripts/build.mjs writes dist/agent/platform-agent-linux-<arch>) and by the control plane when
 * that file is missing (it builds it for its own architecture on first request, from its own
 * node binary).
 */
import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { createReadStream } from "node:fs";
import { chmod, copyFile, mkdtemp, readFile, rename, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";

const execFileAsync = promisify(execFile);

/** The fuse Node.js checks to know a blob was injected (fixed by Node's SEA format). */
const SEA_FUSE = "NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2";

/** Node's name of an architecture (process.arch) for `uname -m`'s. */
export const ARCH_OF_MACHINE = { x86_64: "x64", aarch64: "arm64" };

export function agentExecutableName(arch) {
  return `platform-agent-linux-${arch}`;
}

/**
 * Writes `output`: `node` (a Linux node binary of the target architecture, same major version
 * as the node running this, which prepares the blob) with `bundle` injected. Written beside
 * and renamed into place, so a concurrent reader never sees half a file.
 */
export async function buildAgentExecutable({ bundle, node, output }) {
  const work = await mkdtemp(`${output}.build-`);
  try {
    const script = path.join(work, "agent.cjs");
    await asCommonJs(bundle, script);
    const blob = path.join(work, "sea.blob");
    const config = path.join(work, "sea-config.json");
    await writeFile(
      config,
      JSON.stringify({
        main: script,
        output: blob,
        disableExperimentalSEAWarning: true,
        useCodeCache: false,
      }),
    );
    await execFileAsync(process.execPath, ["--experimental-sea-config", config]);
    const binary = path.join(work, "agent");
    await copyFile(node, binary);
    await chmod(binary, 0o755);
    const { inject } = await import("postject");
    await inject(binary, "NODE_SEA_BLOB", await readFile(blob), { sentinelFuse: SEA_FUSE });
    await rename(binary, output);
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

/** Rewrites the ESM bundle `input` as the CommonJS file `output`. */
async function asCommonJs(input, output) {
  const esbuild = await import("esbuild");
  await esbuild.build({
    entryPoints: [input],
    outfile: output,
    bundle: true,
    platform: "node",
    format: "cjs",
    target: "node20",
    legalComments: "none",
    logLevel: "error",
    // As compact as the bundle (scripts/build.mjs): V8 holds the whole script in memory.
    minifyWhitespace: true,
    minifySyntax: true,
    define: { "import.meta.url": "__platformImportMetaUrl" },
    banner: { js: 'var __platformImportMetaUrl = require("node:url").pathToFileURL(__filename).href;' },
  });
}

/** Hex sha256 of a file, streamed. */
export async function sha256File(file) {
  const hash = createHash("sha256");
  for await (const chunk of createReadStream(file)) hash.update(chunk);
  return hash.digest("hex");
}
