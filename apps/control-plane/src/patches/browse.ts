/**
 * The service's repository as the patch editor browses it (patch.ensureRepo, readRepoDirectories,
 * readRepoFile). Dokploy keeps a clone per service (its patch repository) and reads it with
 * shell commands; here every read is a fresh shallow clone of the service's branch by the agent
 * of the server that builds it, removed afterwards, so no repository is kept and the caller never
 * names a path on a server: `repoPath` is the handle ensureRepo answered (`<type>/<appName>`).
 */
import type { GitSource, Init } from "@platform/agent-protocol";
import { callAgent } from "../agents/errors.ts";
import { findApplication } from "../applications/repository.ts";
import { repositoryGitSource } from "../applications/source.ts";
import { loadCallerCompose } from "../compose/repository.ts";
import type { Caller, ServiceContext } from "../context.ts";
import { DeploymentFailure } from "../deployments/deploy-service.ts";
import { badRequest, notFound } from "../errors.ts";
import { requireApplicationAccess } from "../projects/permissions.ts";
import { agentServerId } from "../servers/repository.ts";
import { findPatchByPath } from "./repository.ts";
import type { ServiceKind } from "./service.ts";

const REPOSITORY_TIMEOUT_MS = 120_000;

interface RepositoryOfService {
  serverId: string;
  git: Init<GitSource>;
  /** What ensureRepo answers and readRepoDirectories expects as `repoPath`. */
  handle: string;
  owner: { applicationId: string } | { composeId: string };
}

async function repositoryOf(
  ctx: ServiceContext,
  caller: Caller,
  kind: ServiceKind,
  id: string,
): Promise<RepositoryOfService> {
  let service: Parameters<typeof repositoryGitSource>[1] & { appName: string };
  let serverId: string | null;
  let owner: RepositoryOfService["owner"];
  if (kind === "compose") {
    const compose = await loadCallerCompose(ctx.db, caller, id);
    service = compose;
    serverId = compose.serverId;
    owner = { composeId: compose.composeId };
  } else {
    const application = await findApplication(ctx.db, caller.organizationId, id);
    if (!application) throw notFound("Application");
    await requireApplicationAccess(ctx.db, caller, application.applicationId);
    service = application;
    // The server that builds it clones it (Dokploy: buildServerId, else serverId).
    serverId = application.buildServerId ?? application.serverId;
    owner = { applicationId: application.applicationId };
  }
  try {
    const git = await repositoryGitSource(
      ctx,
      service,
      kind === "compose" ? "compose service" : "application",
    );
    return {
      serverId: await agentServerId(ctx, caller.organizationId, serverId),
      git,
      handle: `${kind}/${service.appName}`,
      owner,
    };
  } catch (error) {
    if (error instanceof DeploymentFailure) throw badRequest(error.message, { fields: ["id"] });
    throw error;
  }
}

/** An agent's failure to clone or read, as a 400 naming `field`, with the source's secrets masked. */
function readFailure(error: unknown, repository: RepositoryOfService, field: string) {
  const message = [repository.git.httpPassword, repository.git.sshPrivateKey]
    .filter((value): value is string => !!value)
    .reduce((text, secret) => text.split(secret).join("***"), (error as Error).message);
  return badRequest(`Could not read the repository: ${message}`, { fields: [field] });
}

async function listPaths(ctx: ServiceContext, repository: RepositoryOfService, field: string) {
  try {
    return await callAgent(
      repository.serverId,
      () =>
        ctx.agents.client.listRepositoryFiles(
          repository.serverId,
          { git: repository.git },
          REPOSITORY_TIMEOUT_MS,
        ),
      ctx.logger,
    );
  } catch (error) {
    throw readFailure(error, repository, field);
  }
}

/** Clones the branch once to see it can be read; answers the handle readRepoDirectories takes. */
export async function ensureRepository(
  ctx: ServiceContext,
  caller: Caller,
  kind: ServiceKind,
  id: string,
): Promise<string> {
  const repository = await repositoryOf(ctx, caller, kind, id);
  await listPaths(ctx, repository, "id");
  return repository.handle;
}

export interface DirectoryEntry {
  name: string;
  path: string;
  type: "file" | "directory";
  children?: DirectoryEntry[];
}

/** The tree of `paths` ("/"-separated), directories before their files as the paths come. */
export function directoryTree(paths: readonly string[]): DirectoryEntry[] {
  const root: DirectoryEntry[] = [];
  const directories = new Map<string, DirectoryEntry>();
  for (const filePath of paths) {
    const parts = filePath.split("/").filter(Boolean);
    let siblings = root;
    let current = "";
    for (const [index, name] of parts.entries()) {
      current = current ? `${current}/${name}` : name;
      if (index === parts.length - 1) {
        siblings.push({ name, path: current, type: "file" });
        break;
      }
      let directory = directories.get(current);
      if (!directory) {
        directory = { name, path: current, type: "directory", children: [] };
        directories.set(current, directory);
        siblings.push(directory);
      }
      siblings = directory.children as DirectoryEntry[];
    }
  }
  return root;
}

export async function repositoryTree(
  ctx: ServiceContext,
  caller: Caller,
  kind: ServiceKind,
  id: string,
  repoPath: string,
): Promise<DirectoryEntry[]> {
  const repository = await repositoryOf(ctx, caller, kind, id);
  if (repoPath !== repository.handle)
    throw badRequest(
      `repoPath: must be what patch.ensureRepo answered for this service (${repository.handle})`,
      {
        fields: ["repoPath"],
      },
    );
  const listed = await listPaths(ctx, repository, "id");
  return directoryTree(listed.paths);
}

/**
 * What the editor shows for a path: the patch's content when the service has one that writes it,
 * else the repository's file (a delete patch shows what it deletes).
 */
export async function repositoryFileForPatch(
  ctx: ServiceContext,
  caller: Caller,
  kind: ServiceKind,
  id: string,
  filePath: string,
): Promise<string> {
  const repository = await repositoryOf(ctx, caller, kind, id);
  const patch = await findPatchByPath(ctx.db, repository.owner, filePath);
  if (patch && patch.type !== "delete" && patch.content) return patch.content;
  try {
    const read = await callAgent(
      repository.serverId,
      () =>
        ctx.agents.client.readRepositoryFile(
          repository.serverId,
          { git: repository.git, path: filePath },
          REPOSITORY_TIMEOUT_MS,
        ),
      ctx.logger,
    );
    return read.content;
  } catch (error) {
    if (patch?.type === "delete") return "(not in the repository: the patch deletes it if a build finds it)";
    throw readFailure(error, repository, "filePath");
  }
}

/**
 * patch.cleanPatchRepos: Dokploy removes its kept clones; none are kept here (every read clones
 * into a directory removed when it ends), so there is nothing to remove. A serverId must still be
 * one of the organization's servers (404 otherwise).
 */
export async function cleanRepositories(
  ctx: ServiceContext,
  caller: Caller,
  serverId?: string,
): Promise<true> {
  if (serverId) await agentServerId(ctx, caller.organizationId, serverId);
  return true;
}
