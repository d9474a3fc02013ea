/**
 * What a server needs to run the agent, served by the control plane itself (no other registry
 * than npm and Debian is reached): the bootstrap script and a tarball of the agent's code
 * (apps/agent, packages/agent-protocol, proto) with a package.json listing its npm
 * dependencies. server.setup uploads both over SSH; an operator can fetch them by hand from
 * GET /agent/install.sh and GET /agent/bundle.tar.gz (public: they hold code, no secrets).
 */
import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import type { Hono } from "hono";

const execFileAsync = promisify(execFile);
const repoRoot = fileURLToPath(new URL("../../../../", import.meta.url));
export const INSTALL_SCRIPT_PATH = path.join(repoRoot, "deploy/agent/install.sh");

/** Paths of the repository that make up the agent, as laid out in the bundle. */
const BUNDLE_PATHS = [
  "apps/agent/package.json",
  "apps/agent/src",
  "packages/agent-protocol/package.json",
  "packages/agent-protocol/src",
  "proto",
];
const BUNDLE_EXCLUDES = ["*.test.ts", "testing", "fixtures"];

export function installScript(): Promise<string> {
  return readFile(INSTALL_SCRIPT_PATH, "utf8");
}

interface PackageJson {
  version?: string;
  dependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
}

async function readJson(relativePath: string): Promise<PackageJson> {
  return JSON.parse(await readFile(path.join(repoRoot, relativePath), "utf8"));
}

/** The bundle's package.json: the agent's and the protocol's npm dependencies, plus tsx to run them. */
async function bundlePackageJson(): Promise<string> {
  const [root, agent, protocol] = await Promise.all([
    readJson("package.json"),
    readJson("apps/agent/package.json"),
    readJson("packages/agent-protocol/package.json"),
  ]);
  const dependencies: Record<string, string> = { tsx: root.devDependencies?.tsx ?? "^4" };
  for (const [name, version] of Object.entries({ ...protocol.dependencies, ...agent.dependencies })) {
    if (!version.startsWith("workspace:")) dependencies[name] = version;
  }
  const bundle = {
    name: "platform-agent",
    version: agent.version,
    private: true,
    type: "module",
    description: "The platform agent, as installed by deploy/agent/install.sh",
    dependencies: Object.fromEntries(Object.entries(dependencies).sort(([a], [b]) => a.localeCompare(b))),
  };
  return `${JSON.stringify(bundle, null, 2)}\n`;
}

let bundle: Promise<Buffer> | undefined;

/** The agent bundle (.tar.gz), built once per process. */
export function agentBundle(): Promise<Buffer> {
  bundle ??= buildAgentBundle().catch((error) => {
    bundle = undefined;
    throw error;
  });
  return bundle;
}

async function buildAgentBundle(): Promise<Buffer> {
  const workDir = await mkdtemp(path.join(tmpdir(), "platform-agent-bundle-"));
  try {
    await writeFile(path.join(workDir, "package.json"), await bundlePackageJson());
    const { stdout } = await execFileAsync(
      "tar",
      [
        "-czf",
        "-",
        "--owner=0",
        "--group=0",
        "--numeric-owner",
        ...BUNDLE_EXCLUDES.map((pattern) => `--exclude=${pattern}`),
        "-C",
        repoRoot,
        ...BUNDLE_PATHS,
        "-C",
        workDir,
        "package.json",
      ],
      { encoding: "buffer", maxBuffer: 64 * 1024 * 1024 },
    );
    return stdout;
  } finally {
    await rm(workDir, { recursive: true, force: true });
  }
}

/** GET /agent/install.sh and GET /agent/bundle.tar.gz. */
export function registerAgentBundleRoutes(app: Hono): void {
  app.get("/agent/install.sh", async (c) =>
    c.body(await installScript(), 200, { "content-type": "text/x-shellscript; charset=utf-8" }),
  );
  app.get("/agent/bundle.tar.gz", async (c) =>
    c.body(new Uint8Array(await agentBundle()), 200, { "content-type": "application/gzip" }),
  );
}
