/**
 * Whether a push starts a deployment (spec 6.2), as a pure function of the service (an
 * application or a compose stack) and the push: autoDeploy on; with triggerType push, the ref is
 * the branch of the service's source; with triggerType tag, a tag was created; and, for branch
 * pushes, watchPaths (globs, `!` excludes) match at least one changed file.
 */
import picomatch from "picomatch";
import type { Application, Compose } from "../db/schema.ts";
import type { PushEvent } from "./payload.ts";

/** What a push is decided on: an application, or a compose stack (`kind` names it in the reasons). */
export type PushTarget = (Application & { kind?: "application" }) | (Compose & { kind: "compose stack" });

export type Decision = { deploy: true; note?: string } | { deploy: false; reason: string };

/** The branch the service deploys, from the fields of its source kind; null without one. */
export function sourceBranch(app: PushTarget): string | null {
  switch (app.sourceType) {
    case "github":
      return app.branch;
    case "gitlab":
      return app.gitlabBranch;
    case "gitea":
      return app.giteaBranch;
    case "bitbucket":
      return app.bitbucketBranch;
    case "git":
      return app.customGitBranch;
    case "docker":
    case "drop":
    case "raw":
      return null;
  }
}

/**
 * True when some file matches: a file counts when it matches an include pattern (or there are
 * only excludes) and no `!` exclude pattern. Dotfiles match like any other file.
 */
export function watchPathsMatch(patterns: string[], files: string[]): boolean {
  const includes = patterns.filter((pattern) => !pattern.startsWith("!"));
  const excludes = patterns.filter((pattern) => pattern.startsWith("!")).map((pattern) => pattern.slice(1));
  const included = includes.length > 0 ? picomatch(includes, { dot: true }) : () => true;
  const excluded = excludes.length > 0 ? picomatch(excludes, { dot: true }) : () => false;
  return files.some((file) => included(file) && !excluded(file));
}

export function decideDeployment(app: PushTarget, push: PushEvent): Decision {
  const noun = app.kind ?? "application";
  if (!app.autoDeploy) return { deploy: false, reason: `autoDeploy is off for this ${noun}` };
  if (app.sourceType === "docker" || app.sourceType === "drop" || app.sourceType === "raw") {
    return { deploy: false, reason: `the ${noun}'s source is ${app.sourceType}, not a Git repository` };
  }

  if (app.triggerType === "tag") {
    if (!push.ref.startsWith("refs/tags/")) {
      return { deploy: false, reason: `${push.ref} is not a tag and the ${noun} deploys on new tags` };
    }
    if (push.deleted) return { deploy: false, reason: `${push.ref} was deleted` };
    if (!push.created) return { deploy: false, reason: `${push.ref} is not a new tag` };
    // A new tag changes no files: watchPaths apply to branch pushes only.
    return { deploy: true };
  }

  const branch = sourceBranch(app);
  if (!branch) return { deploy: false, reason: `the ${noun} has no branch configured` };
  if (push.ref !== `refs/heads/${branch}`) {
    return { deploy: false, reason: `${push.ref} is not the ${noun}'s branch (refs/heads/${branch})` };
  }
  if (push.deleted) return { deploy: false, reason: `${push.ref} was deleted` };

  const patterns = app.watchPaths ?? [];
  if (patterns.length === 0) return { deploy: true };
  if (push.changedFiles === null) {
    return { deploy: true, note: "the payload does not list changed files, so watchPaths were not applied" };
  }
  if (!watchPathsMatch(patterns, push.changedFiles)) {
    return { deploy: false, reason: `no changed file matches the ${noun}'s watchPaths` };
  }
  return { deploy: true };
}
