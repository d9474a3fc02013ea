/**
 * Image builds from a checked-out source: `docker build` (BuildKit when the CLI can drive it),
 * the static web server image, the CLI builders (nixpacks, railpack, pack), and the push to a
 * registry.
 */
import { execFile } from "node:child_process";
import { access, constants, cp, mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";
import { type BuildImageCommand, builderFix, type RegistryAuth } from "@platform/agent-protocol";
import type Docker from "dockerode";
import { CommandError } from "../command-error.ts";
import { engineMessage } from "../docker/engine.ts";
import { followProgress } from "../docker/progress.ts";
import { cancelled } from "./jobs.ts";
import type { LogStream } from "./log-stream.ts";
import { runOrFail } from "./process.ts";
import { authConfig } from "./service.ts";

const exec = promisify(execFile);

export interface DockerCli {
  /** The docker executable. */
  command: string;
  /** Environment for it (DOCKER_HOST, DOCKER_BUILDKIT). */
  env: NodeJS.ProcessEnv;
  buildKit: boolean;
}

/**
 * The docker CLI to build with. BuildKit needs either the buildx plugin or a CLI older than 23
 * (which drives the engine's built-in BuildKit itself); newer CLIs without buildx refuse
 * DOCKER_BUILDKIT=1, so another docker on the machine (e.g. Debian's /usr/bin/docker) is tried.
 */
export async function findDockerCli(socketPath: string, preferred?: string): Promise<DockerCli> {
  const base: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    DOCKER_HOST: `unix://${socketPath}`,
  };
  const candidates = [
    ...new Set([preferred, "docker", "/usr/bin/docker", "/usr/local/bin/docker"].filter(Boolean)),
  ];
  let classic: DockerCli | undefined;
  for (const command of candidates as string[]) {
    const version = await exec(command, ["version", "--format", "{{.Client.Version}}"], {
      env: base,
      timeout: 10_000,
    })
      .then(({ stdout }) => stdout.trim())
      .catch(() => undefined);
    if (version === undefined) continue;
    const hasBuildx = await exec(command, ["buildx", "version"], { env: base, timeout: 10_000 }).then(
      () => true,
      () => false,
    );
    const major = Number.parseInt(version, 10);
    if (hasBuildx || (major > 0 && major < 23))
      return { command, env: { ...base, DOCKER_BUILDKIT: "1" }, buildKit: true };
    classic ??= { command, env: { ...base, DOCKER_BUILDKIT: "0" }, buildKit: false };
  }
  if (classic) return classic;
  throw new CommandError("FAILED", "the docker CLI is not installed on this server");
}

export interface DockerBuildInput {
  cli: DockerCli;
  command: BuildImageCommand;
  contextDir: string;
  dockerfile: string;
  /** Directory for the 0600 secret files (removed with the work directory). */
  secretsDir: string;
  log: LogStream;
  signal: AbortSignal;
  extraLabels?: Record<string, string>;
}

export async function dockerBuild(input: DockerBuildInput): Promise<void> {
  const { cli, command, log, signal } = input;
  const secrets = Object.entries(command.buildSecrets ?? {});
  if (secrets.length > 0 && !cli.buildKit) {
    throw new CommandError(
      "FAILED",
      "build secrets need BuildKit, which the docker CLI on this server cannot drive",
    );
  }
  const args = ["build", "-f", input.dockerfile, "-t", command.imageName];
  if (cli.buildKit) args.push("--progress=plain");
  if (command.dockerBuildStage) args.push("--target", command.dockerBuildStage);
  for (const [key, value] of Object.entries(command.buildArgs ?? {}))
    args.push("--build-arg", `${key}=${value}`);
  for (const [key, value] of Object.entries(input.extraLabels ?? {})) args.push("--label", `${key}=${value}`);
  await mkdir(input.secretsDir, { recursive: true, mode: 0o700 });
  for (const [index, [key, value]] of secrets.entries()) {
    const file = path.join(input.secretsDir, `secret-${index}`);
    await writeFile(file, value, { mode: 0o600 });
    args.push("--secret", `id=${key},src=${file}`);
  }
  if (command.noCache) args.push("--no-cache");
  args.push(input.contextDir);
  log.line(`$ docker ${args.join(" ")}`);
  await runOrFail(cli.command, args, { env: cli.env, signal, log }, "docker build");
}

// ---- static sites ---------------------------------------------------------------------------

export interface StaticImage {
  image: string;
  /** How the image serves files: nginx (/usr/share/nginx/html) or busybox httpd (/www). */
  flavor: "nginx" | "busybox-httpd";
}

export const DEFAULT_STATIC_IMAGE: StaticImage = { image: "nginx:1.27-alpine", flavor: "nginx" };

export function staticImageFromEnv(env: NodeJS.ProcessEnv = process.env): StaticImage {
  const image = env.PLATFORM_STATIC_IMAGE?.trim();
  if (!image) return DEFAULT_STATIC_IMAGE;
  const flavor = env.PLATFORM_STATIC_IMAGE_FLAVOR === "busybox-httpd" ? "busybox-httpd" : "nginx";
  return { image, flavor };
}

function nginxConfig(spa: boolean): string {
  const fallback = spa ? "/index.html" : "=404";
  return `server {
    listen 80;
    server_name _;
    root /usr/share/nginx/html;
    index index.html;
    location / {
        try_files $uri $uri/ ${fallback};
    }
}
`;
}

/**
 * Writes a build context serving `publishDir`: the site under site/, the server's config and a
 * Dockerfile; returns the Dockerfile's path.
 */
export async function prepareStaticContext(
  publishDir: string,
  contextDir: string,
  staticImage: StaticImage,
  spa: boolean,
): Promise<string> {
  await mkdir(contextDir, { recursive: true });
  // Symlinks are copied as links (never followed): Docker's COPY does not follow them either.
  await cp(publishDir, path.join(contextDir, "site"), { recursive: true, verbatimSymlinks: true });
  let dockerfile: string;
  if (staticImage.flavor === "nginx") {
    await writeFile(path.join(contextDir, "default.conf"), nginxConfig(spa));
    dockerfile = `FROM ${staticImage.image}\nCOPY default.conf /etc/nginx/conf.d/default.conf\nCOPY site/ /usr/share/nginx/html/\n`;
  } else {
    // busybox httpd: unknown paths answer with index.html as the 404 page (status 404).
    await writeFile(path.join(contextDir, "httpd.conf"), spa ? "E404:index.html\n" : "");
    // The command is set here, so that any image with busybox (and its httpd) can serve.
    dockerfile = [
      `FROM ${staticImage.image}`,
      "COPY httpd.conf /etc/httpd.conf",
      "COPY site/ /www/",
      "EXPOSE 80",
      'CMD ["httpd", "-f", "-v", "-p", "80", "-h", "/www", "-c", "/etc/httpd.conf"]',
      "",
    ].join("\n");
  }
  const dockerfilePath = path.join(contextDir, "Dockerfile");
  await writeFile(dockerfilePath, dockerfile);
  return dockerfilePath;
}

// ---- CLI builders ---------------------------------------------------------------------------

/** The path of `tool` in `searchPath` (PATH by default), or undefined. */
export async function findTool(
  tool: string,
  searchPath = process.env.PATH ?? "",
): Promise<string | undefined> {
  for (const dir of searchPath.split(path.delimiter)) {
    if (!dir) continue;
    const candidate = path.join(dir, tool);
    try {
      await access(candidate, constants.X_OK);
      return candidate;
    } catch {}
  }
  return undefined;
}

const BUILDER_TOOLS = {
  nixpacks: "nixpacks",
  railpack: "railpack",
  heroku_buildpacks: "pack",
  paketo_buildpacks: "pack",
} as const;

/** The executable a CLI build type needs, or undefined for the types built with docker alone. */
export function builderTool(buildType: string): string | undefined {
  return Object.hasOwn(BUILDER_TOOLS, buildType)
    ? BUILDER_TOOLS[buildType as keyof typeof BUILDER_TOOLS]
    : undefined;
}

export async function cliBuild(
  buildType: keyof typeof BUILDER_TOOLS,
  command: BuildImageCommand,
  sourceDir: string,
  cli: DockerCli,
  searchPath: string | undefined,
  log: LogStream,
  signal: AbortSignal,
  labels: Record<string, string> = {},
): Promise<void> {
  const tool = BUILDER_TOOLS[buildType];
  const executable = await findTool(tool, searchPath);
  if (!executable) {
    const message = `${tool} is not installed on this server (needed for the ${buildType} build type): ${builderFix(tool)}`;
    log.line(message);
    throw new CommandError("FAILED", message);
  }
  const env = Object.entries(command.buildArgs ?? {}).flatMap(([key, value]) => ["--env", `${key}=${value}`]);
  const toolEnv = { ...process.env, ...cli.env };
  const runTool = async (label: string, executablePath: string, args: string[], processEnv = toolEnv) => {
    log.line(`$ ${label} ${args.join(" ")}`);
    await runOrFail(executablePath, args, { env: processEnv, signal, log }, `${label} ${args[0]}`);
  };
  // nixpacks and docker build take labels; pack has no option for the app image's labels, and
  // labelImage sets them after every CLI build anyway.
  const labelArgs = labelArguments(labels);
  if (buildType === "nixpacks") {
    const args = ["build", sourceDir, "--name", command.imageName, ...env, ...labelArgs];
    if (command.noCache) args.push("--no-cache");
    await runTool(tool, executable, args);
  } else if (buildType === "railpack") {
    // As Dokploy does: railpack writes a build plan, BuildKit builds it with railpack's frontend.
    if (!cli.buildKit)
      throw new CommandError(
        "FAILED",
        "railpack builds need BuildKit, which the docker CLI on this server cannot drive",
      );
    const plan = path.join(sourceDir, "railpack-plan.json");
    const info = path.join(sourceDir, "railpack-info.json");
    await runTool(tool, executable, ["prepare", sourceDir, "--plan-out", plan, "--info-out", info, ...env]);
    const version = command.railpackVersion || (await installedRailpackVersion(executable));
    const frontend = `ghcr.io/railwayapp/railpack-frontend${version ? `:v${version}` : ""}`;
    const args = [
      "build",
      "--progress=plain",
      "--build-arg",
      `BUILDKIT_SYNTAX=${frontend}`,
      "-f",
      plan,
      "-t",
      command.imageName,
      ...labelArgs,
    ];
    if (command.noCache) args.push("--no-cache");
    await runTool("docker", cli.command, [...args, sourceDir], cli.env);
  } else {
    const builder =
      buildType === "heroku_buildpacks"
        ? `heroku/builder:${command.herokuVersion || "24"}`
        : "paketobuildpacks/builder-jammy-full";
    const args = ["build", command.imageName, "--path", sourceDir, "--builder", builder, ...env];
    if (command.noCache) args.push("--clear-cache");
    await runTool(tool, executable, args);
  }
}

/** `--label key=value` for each label, as docker build and nixpacks take them. */
function labelArguments(labels: Record<string, string>): string[] {
  return Object.entries(labels).flatMap(([key, value]) => ["--label", `${key}=${value}`]);
}

/**
 * Gives the built image `labels` whatever the tool that built it did with them: a build of
 * `FROM <image>` with the labels, tagged with the same name (no layer is added). The ownership
 * labels of an image must not depend on a builder honouring an option.
 */
export async function labelImage(
  cli: DockerCli,
  imageName: string,
  labels: Record<string, string>,
  workDir: string,
  log: LogStream,
  signal: AbortSignal,
): Promise<void> {
  if (Object.keys(labels).length === 0) return;
  const contextDir = path.join(workDir, "labels");
  await mkdir(contextDir, { recursive: true });
  const dockerfile = path.join(contextDir, "Dockerfile");
  await writeFile(dockerfile, `FROM ${imageName}\n`);
  const args = ["build", "-f", dockerfile, "-t", imageName, ...labelArguments(labels)];
  if (cli.buildKit) args.push("--progress=plain");
  args.push(contextDir);
  log.line(`$ docker ${args.join(" ")}`);
  await runOrFail(cli.command, args, { env: cli.env, signal, log }, "labelling the image");
}

/** "0.15.4" from `railpack --version`, or "" (then the frontend's latest is used). */
async function installedRailpackVersion(executable: string): Promise<string> {
  const output = await exec(executable, ["--version"], { timeout: 10_000 }).then(
    ({ stdout }) => stdout,
    () => "",
  );
  return /(\d+\.\d+\.\d+)/.exec(output)?.[1] ?? "";
}

// ---- push -----------------------------------------------------------------------------------

/** The tag part of an image reference ("latest" when it has none). */
export function imageTag(imageName: string): string {
  const lastPart = imageName.split("/").pop() ?? imageName;
  const colon = lastPart.indexOf(":");
  return colon >= 0 ? lastPart.slice(colon + 1) : "latest";
}

/** Tags the built image for the registry and pushes it with the credentials (no login state on disk). */
export async function pushImage(
  docker: Docker,
  imageName: string,
  registry: RegistryAuth,
  prefix: string,
  appName: string,
  log: LogStream,
  signal: AbortSignal,
): Promise<string> {
  const repository = [registry.serverAddress, prefix.replace(/^\/+|\/+$/g, ""), appName]
    .filter(Boolean)
    .join("/");
  const tag = imageTag(imageName);
  const reference = `${repository}:${tag}`;
  log.line(`tagging ${imageName} as ${reference} and pushing it`);
  await docker.getImage(imageName).tag({ repo: repository, tag });
  const authconfig = authConfig(registry);
  try {
    const stream = await docker.getImage(reference).push({ tag, authconfig, abortSignal: signal } as object);
    await followProgress(docker, stream, (event) => {
      if (event.status && !event.status.startsWith("Pushing")) {
        log.line(event.id ? `${event.id}: ${event.status}` : event.status);
      }
    });
  } catch (error) {
    if (signal.aborted) throw cancelled();
    throw new CommandError("FAILED", `pushing ${reference} failed: ${log.mask(engineMessage(error))}`);
  }
  log.line(`pushed ${reference}`);
  return reference;
}
