/**
 * Builds the production JavaScript with esbuild (source maps on), so that production runs plain
 * `node` with no TypeScript loader:
 *
 * - dist/control-plane/main.js: the control plane's workspace code and the small npm packages it
 *   imports (bundledPackages: one file parses and holds less memory than hundreds of module
 *   files); the other npm packages (pg, pino, swagger-ui-dist, the embedded PostgreSQL: native or optional
 *   modules, worker files, assets) stay external and load from the repository's node_modules.
 *   Their import paths are written relative to the output file (pnpm keeps a workspace
 *   package's dependencies beside that package, not at the repository root), and every
 *   `import.meta.url` of a workspace file is rewritten to that file's own location, so the
 *   assets it reads (deploy/agent/install.sh, the agent bundle's sources, Traefik's JSON
 *   schemas, swagger-ui-dist) resolve as from the sources.
 * - dist/agent/main.js: the agent with all of its dependencies in one file that runs with
 *   `node` 20+ and nothing beside it (proto/agent.proto is inlined), minified but for names.
 *
 * - dist/agent/platform-agent-linux-<arch>: that agent as a single executable (scripts/agent-executable.mjs)
 *   for this machine's architecture, from this node binary, and for each other architecture
 *   listed in PLATFORM_AGENT_ARCHES (e.g. `x64,arm64`) from the same Node.js version's binary
 *   in the npm package node-linux-<arch> (fetched with `npm pack`, kept in dist/node-cache). The
 *   control plane serves them to servers.
 *
 * - dist/dashboard: the web dashboard (apps/dashboard, scripts/build-dashboard.mjs), its sources
 *   under apps/ like the rest.
 *
 * `node scripts/build.mjs` builds them all; `--if-stale` builds the two JavaScript files only when
 * one is missing or older than a source, package.json or the lock file (what `npm start` runs
 * first), and no executable.
 */
import { execFileSync } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";
import * as esbuild from "esbuild";
import { agentExecutableName, buildAgentExecutable } from "./agent-executable.mjs";
import { buildDashboard, DASHBOARD_OUT_DIR } from "./build-dashboard.mjs";

const root = fileURLToPath(new URL("../", import.meta.url));
const distDir = path.join(root, "dist");
/** Bundled CommonJS packages call require() for Node's built-in modules and read __dirname. */
const COMMONJS_BANNER = [
  'import { createRequire as __platformCreateRequire } from "node:module";',
  'import { fileURLToPath as __platformFileURLToPath } from "node:url";',
  "const require = __platformCreateRequire(import.meta.url);",
  "const __filename = __platformFileURLToPath(import.meta.url);",
  'const __dirname = __platformFileURLToPath(new URL(".", import.meta.url));',
].join(" ");
const PROTO_LOAD = "protobuf.loadSync(AGENT_PROTO_PATH)";

const targets = [
  {
    name: "control-plane",
    entry: "apps/control-plane/src/main.ts",
    outfile: path.join(distDir, "control-plane/main.js"),
    bundleNodeModules: false,
    // The in-process agent's Docker client, bundled to leave out its unused transports (below).
    bundledPackages: [
      "dockerode",
      "zod",
      "kysely",
      "hono",
      "@hono/node-server",
      "yaml",
      "@nats-io/transport-node",
      "@nats-io/nkeys",
      "@nats-io/jetstream",
      "@nats-io/jwt",
      "croner",
      "ajv",
      "protobufjs",
      "superjson",
      "picomatch",
      "jose",
      "apache-md5",
      "smol-toml",
    ],
  },
  {
    name: "agent",
    entry: "apps/agent/src/main.ts",
    outfile: path.join(distDir, "agent/main.js"),
    bundleNodeModules: true,
    // V8 keeps the whole source of the file for the life of the process: without whitespace and
    // with shorter syntax it is 1.6 MB instead of 2.6 (about 2 MiB less resident memory). Names
    // stay, so stack traces still read; the source map maps them back to the sources.
    minify: { minifyWhitespace: true, minifySyntax: true },
  },
];

/** Source folders whose changes make a build stale. */
const SOURCE_DIRS = ["apps", "packages", "proto"];
const SOURCE_FILES = ["package.json", "pnpm-lock.yaml", "scripts/build.mjs", "scripts/build-dashboard.mjs"];

function newestSourceTime() {
  let newest = 0;
  const visit = (dir) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (entry.name === "node_modules") continue;
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) visit(full);
      else newest = Math.max(newest, statSync(full).mtimeMs);
    }
  };
  for (const dir of SOURCE_DIRS) visit(path.join(root, dir));
  for (const file of SOURCE_FILES) newest = Math.max(newest, statSync(path.join(root, file)).mtimeMs);
  return newest;
}

/**
 * Touched after each build of the JavaScript files: an output whose contents did not change keeps
 * its time (below), so the outputs' own times cannot tell whether a build saw the sources.
 */
const BUILT_STAMP = path.join(distDir, ".built");

function isStale() {
  if (!targets.every((target) => existsSync(target.outfile))) return true;
  if (!existsSync(path.join(DASHBOARD_OUT_DIR, "index.html"))) return true;
  try {
    return statSync(BUILT_STAMP).mtimeMs < newestSourceTime();
  } catch {
    return true;
  }
}

/** Workspace files (not node_modules): `import.meta.url` means their own place in the repository. */
function sourceLocationPlugin(outfile) {
  return {
    name: "source-location",
    setup(build) {
      build.onLoad({ filter: /\.ts$/ }, (args) => {
        if (args.path.includes(`${path.sep}node_modules${path.sep}`)) return undefined;
        let contents = readFileSync(args.path, "utf8");
        if (contents.includes(PROTO_LOAD)) contents = inlineAgentProto(contents);
        if (contents.includes("import.meta.url")) {
          const relative = path.relative(path.dirname(outfile), args.path).split(path.sep).join("/");
          contents = contents.replaceAll(
            "import.meta.url",
            `new URL(${JSON.stringify(relative)}, import.meta.url).href`,
          );
        }
        return { contents, loader: "ts" };
      });
    },
  };
}

/**
 * The agent runs alone: its protocol schema is compiled into the file instead of read from proto/,
 * as protobufjs's JSON descriptor of proto/agent.proto. Building the root from JSON skips the
 * .proto parser at start, whose hot tokenizer loop is what made V8 bring up its optimizing
 * compiler in an idle agent (about 3.5 MiB of resident memory).
 */
function inlineAgentProto(contents) {
  const protobuf = createRequire(path.join(root, "packages/agent-protocol/package.json"))("protobufjs");
  const proto = readFileSync(path.join(root, "proto/agent.proto"), "utf8");
  const descriptor = JSON.stringify(protobuf.parse(proto).root.toJSON());
  return contents.replace(PROTO_LOAD, `protobuf.Root.fromJSON(${descriptor})`);
}

/**
 * npm packages stay external, imported by their path relative to the output file: Node then
 * loads exactly the file esbuild resolved from the importing workspace package. The packages of
 * BUNDLED_PACKAGES are bundled instead, with everything they import, so that what they reach
 * but never run can be left out (withoutUnusedTransportsPlugin).
 */
function relativeExternalsPlugin(outfile, bundledPackages) {
  return {
    name: "relative-externals",
    setup(build) {
      build.onResolve({ filter: /^[^./]/ }, async (args) => {
        if (args.pluginData?.resolving || args.path.startsWith("node:")) return undefined;
        if (args.kind === "entry-point") return undefined;
        if (isInNodeModules(args.importer) || bundledPackages.includes(packageName(args.path)))
          return undefined;
        const resolved = await build.resolve(args.path, {
          kind: args.kind,
          resolveDir: args.resolveDir,
          importer: args.importer,
          pluginData: { resolving: true },
        });
        if (resolved.errors.length > 0) return { errors: resolved.errors };
        if (resolved.external || !isInNodeModules(resolved.path)) return resolved;
        let relative = path.relative(path.dirname(outfile), resolved.path).split(path.sep).join("/");
        if (!relative.startsWith(".")) relative = `./${relative}`;
        return { path: relative, external: true };
      });
    },
  };
}

/** "hono" of "hono/body-limit", "@nats-io/jwt" of "@nats-io/jwt/lib/x". */
function packageName(specifier) {
  const parts = specifier.split("/");
  return specifier.startsWith("@") ? parts.slice(0, 2).join("/") : parts[0];
}

function isInNodeModules(file) {
  return file.includes(`${path.sep}node_modules${path.sep}`);
}

/**
 * Code dockerode reaches that the agent never runs, replaced by modules that refuse: the agent
 * talks to the local Docker socket only (docker-modem's Docker-over-SSH transport, ssh2, is a few
 * MiB of code and a 16 MiB WebAssembly memory once loaded), and builds images with the docker CLI
 * (deploy/build.ts), never through dockerode's BuildKit session (@grpc/grpc-js and its proto
 * loader: about 13 MiB of resident memory once loaded).
 */
const UNUSED_TRANSPORTS = {
  ssh2: "the agent reaches Docker through its local socket, not over SSH",
  "@grpc/grpc-js": "the agent builds images with the docker CLI, not through a BuildKit session",
  "@grpc/proto-loader": "the agent builds images with the docker CLI, not through a BuildKit session",
};

function withoutUnusedTransportsPlugin() {
  const filter = new RegExp(
    `^(${Object.keys(UNUSED_TRANSPORTS)
      .map((name) => name.replace(/[/.]/g, "\\$&"))
      .join("|")})$`,
  );
  return {
    name: "without-unused-transports",
    setup(build) {
      build.onResolve({ filter }, (args) =>
        // Only dockerode's imports: the control plane's own ssh2 (servers/ssh2.ts) is the real one.
        isInNodeModules(args.importer) ? { path: args.path, namespace: "unused-transport" } : undefined,
      );
      build.onLoad({ filter: /.*/, namespace: "unused-transport" }, (args) => ({
        // Loading and reading its exports succeed (docker-modem takes `require("ssh2").Client`
        // at its start); calling or constructing anything from it throws.
        contents: `const reason = ${JSON.stringify(UNUSED_TRANSPORTS[args.path])};
const refuse = () => { throw new Error(reason); };
const unused = new Proxy(function unused() {}, {
  get: (_, name) => (typeof name === "symbol" || name === "__esModule" ? undefined : unused),
  apply: refuse,
  construct: refuse,
});
module.exports = unused;`,
        loader: "js",
      }));
    },
  };
}

/**
 * esbuild escapes non-ASCII characters in strings but leaves them in kept comments; one such
 * character makes V8 hold the whole bundle's source as a two-byte string (twice its size, for
 * the life of the process). Escaped, the source stays one byte per character.
 */
function asciiOnly(contents) {
  const text = Buffer.from(contents).toString("utf8");
  if (!/[\u0080-\uffff]/.test(text)) return contents;
  const escaped = text.replace(
    /[\u0080-\uffff]/g,
    (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
  return Buffer.from(escaped, "utf8");
}

async function buildTarget(target) {
  const plugins = [sourceLocationPlugin(target.outfile)];
  plugins.push(withoutUnusedTransportsPlugin());
  if (!target.bundleNodeModules)
    plugins.push(relativeExternalsPlugin(target.outfile, target.bundledPackages));
  const result = await esbuild.build({
    entryPoints: [path.join(root, target.entry)],
    outfile: target.outfile,
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    sourcemap: true,
    legalComments: "none",
    logLevel: "warning",
    banner: { js: COMMONJS_BANNER },
    plugins,
    ...target.minify,
    write: false,
  });
  // Written beside and renamed into place: a test or a start that builds at the same moment (the
  // CI runs two suites side by side) never reads half a file. A file whose contents did not change
  // is left as it is, so that the agent executable built from it is not rebuilt (see below).
  for (const file of result.outputFiles) {
    const contents = file.path.endsWith(".js") ? asciiOnly(file.contents) : file.contents;
    if (existsSync(file.path) && readFileSync(file.path).equals(contents)) continue;
    mkdirSync(path.dirname(file.path), { recursive: true });
    const temporary = `${file.path}.${process.pid}.tmp`;
    writeFileSync(temporary, contents);
    renameSync(temporary, file.path);
  }
  // The output is ESM whatever package.json surrounds it.
  writeFileSync(path.join(path.dirname(target.outfile), "package.json"), '{ "type": "module" }\n');
}

/** bin/node of the npm package node-linux-<arch> at this Node.js version (cached in dist/). */
function nodeBinaryFromNpm(arch) {
  if (!/^(x64|arm64)$/.test(arch))
    throw new Error(`PLATFORM_AGENT_ARCHES: no agent for architecture ${arch}`);
  const cache = path.join(distDir, "node-cache", `${arch}-${process.versions.node}`);
  const binary = path.join(cache, "package", "bin", "node");
  if (existsSync(binary)) return binary;
  mkdirSync(cache, { recursive: true });
  const spec = `node-linux-${arch}@${process.versions.node}`;
  const tarball = execFileSync("npm", ["pack", spec, "--silent", "--pack-destination", cache], {
    encoding: "utf8",
  }).trim();
  execFileSync("tar", ["-xzf", path.join(cache, tarball), "-C", cache, "package/bin/node"]);
  return binary;
}

if (process.argv.includes("--if-stale") && !isStale()) process.exit(0);
const started = performance.now();
for (const target of targets) await buildTarget(target);
await buildDashboard();
writeFileSync(BUILT_STAMP, "");
const agentDir = path.join(distDir, "agent");
const otherArches = (process.env.PLATFORM_AGENT_ARCHES ?? "")
  .split(",")
  .filter((arch) => arch && arch !== process.arch);
// `npm start` (--if-stale) leaves them out: the control plane builds its own on first request.
const executableArches = process.argv.includes("--if-stale") ? [] : [process.arch, ...otherArches];
// An executable newer than its bundle and its node binary is kept: two builds of one bundle are
// not byte-identical, and a new checksum would make every server's bootstrap replace its agent
// (and a build beside a running server.setup would change the file it is downloading).
const newerThan = (file, ...inputs) =>
  existsSync(file) && inputs.every((input) => statSync(file).mtimeMs >= statSync(input).mtimeMs);
for (const arch of executableArches) {
  const node = arch === process.arch ? process.execPath : nodeBinaryFromNpm(arch);
  const output = path.join(agentDir, agentExecutableName(arch));
  const bundle = path.join(agentDir, "main.js");
  if (newerThan(output, bundle, node)) continue;
  await buildAgentExecutable({ bundle, node, output });
  console.error(`built ${path.relative(root, output)}`);
}
console.error(
  `built ${[...targets.map((t) => t.outfile), DASHBOARD_OUT_DIR].map((file) => path.relative(root, file)).join(", ")} in ${Math.round(performance.now() - started)} ms`,
);
