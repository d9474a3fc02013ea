/**
 * Whether a push starts a deployment (spec 6.2), as a pure function of the application and the
 * push: autoDeploy on; with triggerType push, the ref is the branch of the application's source;
 * with triggerType tag, a tag was created; and, for branch pushes, watchPaths (globs, `!`
 * excludes) match at least one changed file.
 */
import picomatch from "picomatch";
import type { Application } from "../db/schema.ts";
import type { PushEvent } from "./payload.ts";

export type Decision = { deploy: true; note?: string } | { deploy: false; reason: string };

/** The branch the application builds, from the fields of its source kind; null without one. */
export function sourceBranch(app: Application): string | null {
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

export function decideDeployment(app: Application, push: PushEvent): Decision {
  if (!app.autoDeploy) return { deploy: false, reason: "autoDeploy is off for this application" };
  if (app.sourceType === "docker" || app.sourceType === "drop") {
    return { deploy: false, reason: `the application's source is ${app.sourceType}, not a Git repository` };
  }

  if (app.triggerType === "tag") {
    if (!push.ref.startsWith("refs/tags/")) {
      return { deploy: false, reason: `${push.ref} is not a tag and the application deploys on new tags` };
    }
    if (push.deleted) return { deploy: false, reason: `${push.ref} was deleted` };
    if (!push.created) return { deploy: false, reason: `${push.ref} is not a new tag` };
    // A new tag changes no files: watchPaths apply to branch pushes only.
    return { deploy: true };
  }

  const branch = sourceBranch(app);
  if (!branch) return { deploy: false, reason: "the application has no branch configured" };
  if (push.ref !== `refs/heads/${branch}`) {
    return { deploy: false, reason: `${push.ref} is not the application's branch (refs/heads/${branch})` };
  }
  if (push.deleted) return { deploy: false, reason: `${push.ref} was deleted` };

  const patterns = app.watchPaths ?? [];
  if (patterns.length === 0) return { deploy: true };
  if (push.changedFiles === null) {
    return { deploy: true, note: "the payload does not list changed files, so watchPaths were not applied" };
  }
  if (!watchPathsMatch(patterns, push.changedFiles)) {
    return { deploy: false, reason: "no changed file matches the application's watchPaths" };
  }
  return { deploy: true };
}
