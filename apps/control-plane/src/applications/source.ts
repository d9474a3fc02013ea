/**
 * Where an application's code or image comes from, as agent command fields: the Git clone
 * (URL, branch, credentials, build path) or the uploaded archive to build, or the Docker image
 * to run as is. A github, gitlab, bitbucket or gitea source is cloned from its provider
 * connection's host with that provider's token for that repository (git-providers/clients.ts),
 * handed to the agent's askpass helper (answering only the repository's origin), never in the URL.
 */
import type { BuildSource, GitSource, Init, RegistryAuth } from "@platform/agent-protocol";
import type { ServiceContext } from "../context.ts";
import type { Application } from "../db/schema.ts";
import { cloneCredentials } from "../git-providers/clients.ts";
import { findProvider, PROVIDER_ID_FIELD, PROVIDER_NAMES } from "../git-providers/repository.ts";
import { checkOutboundHost, OutboundRefusedError } from "../outbound/guard.ts";
import { checkRegistryBeforeUse } from "../registries/outbound.ts";
import { findRegistryCredentials } from "../registries/repository.ts";
import { findSshKey, openPrivateKey } from "../servers/ssh-keys.ts";
import { archiveSourceFor } from "./drop.ts";
import { gitUrlHost, gitUrlProblem } from "./validation.ts";
import { openApplicationSecret } from "./views.ts";

/** The application as the pipeline loads it: the row and the organization it belongs to. */
export type DeployableApplication = Application & { organizationId: string };

/** The code to build: the BuildImageCommand's source and its build path. */
export interface CodeSource {
  kind: "code";
  source: BuildSource;
  buildPath: string | undefined;
  /** For the log: what is fetched (a URL without credentials, or "the uploaded archive"). */
  description: string;
}

/** An image to run without building (sourceType docker). */
export interface ImageSource {
  kind: "image";
  image: string;
  registryAuth: RegistryAuth | undefined;
}

export type DeploymentSource = CodeSource | ImageSource;

/** Fails the deployment with a reason the user can act on. */
const fail = (reason: string): never => {
  throw new Error(reason);
};

function required(value: string | null | undefined, field: string): string {
  if (value === null || value === undefined || value.trim() === "") {
    return fail(`The application has no ${field}: save its source first`);
  }
  return value.trim();
}

/** The registry host an image reference names (Docker Hub when it names none). */
export function registryHostOf(image: string): string {
  const first = image.split("/")[0]!;
  const isHost = image.includes("/") && (first.includes(".") || first.includes(":") || first === "localhost");
  return isHost ? first : "docker.io";
}

/** Credentials to pull a `docker` source image: a registry record, else the application's own. */
async function pullAuthOf(ctx: ServiceContext, app: DeployableApplication, image: string) {
  if (app.registryId) {
    const registry = await findRegistryCredentials(ctx, app.organizationId, app.registryId);
    if (registry) {
      return {
        serverAddress: registry.registryUrl,
        username: registry.username,
        password: registry.password,
      };
    }
  }
  const password = openApplicationSecret(ctx.secrets, "password", app, app.passwordSealed);
  if (!app.username || !password) return undefined;
  const serverAddress =
    app.registryUrl?.replace(/^https?:\/\//, "").replace(/\/+$/, "") || registryHostOf(image);
  await checkRegistryBeforeUse(ctx, serverAddress);
  return { serverAddress, username: app.username, password };
}

/**
 * Checks again, where the name is resolved, that a custom Git URL reaches no address the
 * outbound guard refuses (a host name could resolve to one).
 */
async function checkGitHostResolution(ctx: ServiceContext, url: string): Promise<void> {
  const outbound = ctx.config.outboundAllow;
  const problem = gitUrlProblem(url, { outbound });
  if (problem) fail(`The Git URL is not allowed: it ${problem}`);
  const host = gitUrlHost(url);
  if (!host) return;
  try {
    await checkOutboundHost(host, outbound);
  } catch (error) {
    if (error instanceof OutboundRefusedError) fail(`The Git host is not allowed: ${error.message}`);
    throw error;
  }
}

function gitCode(git: Init<GitSource>, buildPath: string | null): CodeSource {
  return {
    kind: "code",
    source: { git },
    buildPath: buildPath ?? undefined,
    description: `${git.url} (branch ${git.branch})`,
  };
}

/**
 * The fields that name a repository, the same on applications and compose stacks (Dokploy's
 * names): the source type, the custom Git URL, and each provider's owner, repository and branch.
 */
export type RepositoryFields = Pick<
  Application,
  | "owner"
  | "repository"
  | "branch"
  | "gitlabPathNamespace"
  | "gitlabOwner"
  | "gitlabRepository"
  | "gitlabBranch"
  | "bitbucketOwner"
  | "bitbucketRepositorySlug"
  | "bitbucketRepository"
  | "bitbucketBranch"
  | "giteaOwner"
  | "giteaRepository"
  | "giteaBranch"
  | "githubId"
  | "gitlabId"
  | "bitbucketId"
  | "giteaId"
  | "customGitUrl"
  | "customGitBranch"
  | "customGitSshKeyId"
  | "enableSubmodules"
> & { sourceType: string; organizationId: string };

type ProviderKind = ProviderRepositoryRef["kind"];

/** The repository path and branch of a provider source. */
export function providerRepository(kind: ProviderKind, service: RepositoryFields) {
  switch (kind) {
    case "github":
      return {
        path: `${required(service.owner, "owner")}/${required(service.repository, "repository")}`,
        branch: service.branch ?? "main",
      };
    case "gitlab":
      return {
        path:
          service.gitlabPathNamespace ??
          `${required(service.gitlabOwner, "gitlabOwner")}/${required(service.gitlabRepository, "gitlabRepository")}`,
        branch: service.gitlabBranch ?? "main",
      };
    case "bitbucket":
      return {
        path: `${required(service.bitbucketOwner, "bitbucketOwner")}/${service.bitbucketRepositorySlug ?? required(service.bitbucketRepository, "bitbucketRepository")}`,
        branch: service.bitbucketBranch ?? "main",
      };
    case "gitea":
      return {
        path: `${required(service.giteaOwner, "giteaOwner")}/${required(service.giteaRepository, "giteaRepository")}`,
        branch: service.giteaBranch ?? "main",
      };
  }
}

/** The build path of an application's provider source. */
function providerBuildPath(kind: ProviderKind, app: DeployableApplication): string | null {
  if (kind === "github") return app.buildPath;
  if (kind === "gitlab") return app.gitlabBuildPath;
  if (kind === "bitbucket") return app.bitbucketBuildPath;
  return app.giteaBuildPath;
}

/** What names a repository on one provider connection of an organization. */
export interface ProviderRepositoryRef {
  organizationId: string;
  kind: "github" | "gitlab" | "bitbucket" | "gitea";
  /** The kind's id of the connection (githubId, gitlabId, bitbucketId, giteaId). */
  providerId: string | null;
  /** owner/name, or group/subgroup/name on GitLab. */
  repositoryPath: string;
  branch: string;
  enableSubmodules: boolean;
}

/**
 * The clone of a repository on a provider connection, as the agent's GitSource: the URL on the
 * provider's host (checked by the outbound guard where it resolves) and the provider's token for
 * that repository, which the agent's askpass helper answers only to that origin. Applications and
 * compose stacks with a provider source both clone through this. A missing connection or a
 * provider error throws a message the deployment can show: it never carries the token.
 */
export async function providerGitSource(
  ctx: ServiceContext,
  ref: ProviderRepositoryRef,
): Promise<Init<GitSource>> {
  const name = PROVIDER_NAMES[ref.kind];
  if (!ref.providerId)
    return fail(`The service has no ${name} provider: choose one (${PROVIDER_ID_FIELD[ref.kind]})`);
  const provider =
    (await findProvider(ctx.db, ref.organizationId, ref.kind, ref.providerId)) ??
    fail(`The ${name} provider of the service no longer exists: choose a source again`);
  let credentials: Awaited<ReturnType<typeof cloneCredentials>>;
  try {
    credentials = await cloneCredentials(ctx, provider, ref.repositoryPath);
  } catch (error) {
    return fail(
      `The ${name} provider "${provider.row.name}" gave no access token: ${(error as Error).message}`,
    );
  }
  await checkGitHostResolution(ctx, credentials.url);
  return {
    url: credentials.url,
    branch: ref.branch,
    enableSubmodules: ref.enableSubmodules,
    httpUsername: credentials.username,
    httpPassword: credentials.password,
  };
}

const PROVIDER_KINDS: readonly string[] = ["github", "gitlab", "bitbucket", "gitea"];

/**
 * The clone of a service's repository (a `git` source or a provider's) for the agent: the one
 * path applications and compose stacks take. A missing provider, key or field fails the
 * deployment with a message naming it.
 */
export async function repositoryGitSource(
  ctx: ServiceContext,
  service: RepositoryFields,
  what: "application" | "compose service",
): Promise<Init<GitSource>> {
  if (service.sourceType === "git") {
    const url = required(service.customGitUrl, "customGitUrl");
    await checkGitHostResolution(ctx, url);
    let sshPrivateKey: string | undefined;
    if (service.customGitSshKeyId) {
      const key =
        (await findSshKey(ctx.db, service.organizationId, service.customGitSshKeyId)) ??
        fail("The SSH key of the Git source no longer exists");
      sshPrivateKey = await openPrivateKey(ctx, key);
    }
    return {
      url,
      branch: service.customGitBranch ?? "main",
      enableSubmodules: service.enableSubmodules,
      sshPrivateKey,
    };
  }
  if (!PROVIDER_KINDS.includes(service.sourceType)) {
    return fail(`The source ${service.sourceType} of the ${what} is not a repository`);
  }
  const kind = service.sourceType as ProviderKind;
  const providerId = service[PROVIDER_ID_FIELD[kind]];
  // A removed provider also cleared the repository fields: name the provider, not a field.
  if (!providerId)
    fail(`The ${what} has no ${PROVIDER_NAMES[kind]} provider: choose one (${PROVIDER_ID_FIELD[kind]})`);
  const repository = providerRepository(kind, service);
  return providerGitSource(ctx, {
    organizationId: service.organizationId,
    kind,
    providerId,
    repositoryPath: repository.path,
    branch: repository.branch,
    enableSubmodules: service.enableSubmodules,
  });
}

/** The source of `app` for the agent of `serverId`. */
export async function deploymentSourceOf(
  ctx: ServiceContext,
  app: DeployableApplication,
  serverId: string,
  archive: { path: string; format: "zip" | "tar.gz" } | undefined,
): Promise<DeploymentSource> {
  switch (app.sourceType) {
    case "drop": {
      if (!archive)
        return fail("No archive was uploaded for this deployment: use application.dropDeployment");
      return {
        kind: "code",
        source: { archive: await archiveSourceFor(ctx, serverId, archive) },
        // Dokploy's dropBuildPath: the directory of the archive the build runs in.
        buildPath: app.dropBuildPath ?? undefined,
        description: `the uploaded ${archive.format} archive`,
      };
    }
    case "docker": {
      const image = required(app.dockerImage, "dockerImage");
      // The engine pulls from the host the image names, with credentials or without: that host
      // passes the outbound guard as a registry login would (Docker Hub is public by definition).
      const imageRegistry = registryHostOf(image);
      if (imageRegistry !== "docker.io") await checkRegistryBeforeUse(ctx, imageRegistry);
      return { kind: "image", image, registryAuth: await pullAuthOf(ctx, app, image) };
    }
    case "github":
    case "gitlab":
    case "bitbucket":
    case "gitea":
    case "git": {
      const git = await repositoryGitSource(ctx, app, "application");
      const buildPath =
        app.sourceType === "git" ? app.customGitBuildPath : providerBuildPath(app.sourceType, app);
      return gitCode(git, buildPath);
    }
  }
}
