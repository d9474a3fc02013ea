/**
 * The push payloads of GitHub, GitLab, Gitea and Bitbucket, reduced to what deciding a deployment
 * needs: the ref, whether it was created or deleted, the head commit and the changed files.
 * Each provider's shape is parsed with a lenient zod schema: unknown fields are ignored, a missing
 * or malformed `ref` makes the payload unusable (400). The ref must be a valid Git branch or tag
 * ref and the head commit id hexadecimal: both end up in the deployment's title and log.
 */
import { z } from "zod";
import { branchNameProblem } from "../applications/validation.ts";

export const webhookProviders = ["github", "gitlab", "bitbucket", "gitea"] as const;
export type WebhookProvider = (typeof webhookProviders)[number];

export interface PushEvent {
  /** Full ref: refs/heads/<branch> or refs/tags/<tag>. */
  ref: string;
  /** The ref did not exist before this push (a new branch or tag). */
  created: boolean;
  /** The push deleted the ref. */
  deleted: boolean;
  /** The commit the ref points to after the push; "" when unknown or deleted. */
  headSha: string;
  headMessage: string;
  /**
   * Paths added, modified or removed by the pushed commits; null when the provider's payload does
   * not list them (Bitbucket).
   */
  changedFiles: string[] | null;
}

const ZERO_SHA = /^0+$/;
const files = z.array(z.string()).optional().catch(undefined);
const commitSchema = z.object({
  id: z.string().optional(),
  message: z.string().optional(),
  added: files,
  modified: files,
  removed: files,
});
const commitsSchema = z.array(commitSchema).optional().catch(undefined);
const refSchema = z.string().min(1).max(1000);

/** GitHub and Gitea: the same push shape (Gitea omits `created`/`deleted`; zero SHAs say it). */
const githubLikeSchema = z.object({
  ref: refSchema,
  before: z.string().optional(),
  after: z.string().optional(),
  created: z.boolean().optional(),
  deleted: z.boolean().optional(),
  commits: commitsSchema,
  head_commit: commitSchema.nullish().catch(undefined),
});

const gitlabSchema = z.object({
  ref: refSchema,
  before: z.string().optional(),
  after: z.string().optional(),
  checkout_sha: z.string().nullish(),
  commits: commitsSchema,
  message: z.string().nullish(),
});

const bitbucketChangeSchema = z.object({
  new: z
    .object({
      type: z.string(),
      name: z.string().min(1).max(1000),
      target: z.object({ hash: z.string().optional(), message: z.string().optional() }).optional(),
    })
    .nullish(),
  old: z.object({ type: z.string(), name: z.string() }).nullish(),
  created: z.boolean().optional(),
  closed: z.boolean().optional(),
});
const bitbucketSchema = z.object({
  push: z.object({ changes: z.array(bitbucketChangeSchema).min(1) }),
});

function changedFilesOf(commits: z.infer<typeof commitSchema>[]): string[] {
  const paths = new Set<string>();
  for (const commit of commits) {
    for (const path of [...(commit.added ?? []), ...(commit.modified ?? []), ...(commit.removed ?? [])]) {
      paths.add(path);
    }
  }
  return [...paths];
}

function fromGithubLike(payload: z.infer<typeof githubLikeSchema>): PushEvent {
  const commits = payload.commits ?? [];
  const head = payload.head_commit ?? commits.at(-1);
  const deleted = payload.deleted ?? ZERO_SHA.test(payload.after ?? "x");
  return {
    ref: payload.ref,
    created: payload.created ?? ZERO_SHA.test(payload.before ?? "x"),
    deleted,
    headSha: deleted ? "" : (payload.after ?? head?.id ?? ""),
    headMessage: head?.message ?? "",
    changedFiles: changedFilesOf(commits.length > 0 ? commits : head ? [head] : []),
  };
}

function fromGitlab(payload: z.infer<typeof gitlabSchema>): PushEvent {
  const commits = payload.commits ?? [];
  const deleted = ZERO_SHA.test(payload.after ?? "x");
  const headSha = deleted ? "" : (payload.checkout_sha ?? payload.after ?? "");
  const head = commits.find((commit) => commit.id === headSha) ?? commits.at(-1);
  return {
    ref: payload.ref,
    created: ZERO_SHA.test(payload.before ?? "x"),
    deleted,
    headSha,
    // A tag push carries the annotated tag's message; a branch push the commits'.
    headMessage: head?.message ?? payload.message ?? "",
    changedFiles: changedFilesOf(commits),
  };
}

function fromBitbucket(payload: z.infer<typeof bitbucketSchema>): PushEvent {
  // One push may move several refs; the first change is the one of the push that was made.
  const change = payload.push.changes[0]!;
  const target = change.new ?? change.old;
  if (!target) throw new PayloadError("push.changes[0] has neither new nor old");
  const prefix = target.type === "tag" ? "refs/tags/" : "refs/heads/";
  return {
    ref: `${prefix}${target.name}`,
    created: change.created ?? change.old == null,
    deleted: change.closed ?? change.new == null,
    headSha: change.new?.target?.hash ?? "",
    headMessage: change.new?.target?.message ?? "",
    changedFiles: null,
  };
}

/** A payload that is not a usable push; `field` names the part at fault (400 `fields`). */
export class PayloadError extends Error {
  constructor(
    message: string,
    readonly field = "body",
  ) {
    super(message);
  }
}

const COMMIT_ID = /^[0-9a-f]{7,64}$/i;

/** Refuses a ref or head commit id that is not what Git would write (control characters, spaces...). */
function checkRefAndSha(push: PushEvent): PushEvent {
  const match = /^refs\/(heads|tags)\/(.*)$/s.exec(push.ref);
  const problem = match ? branchNameProblem(match[2]!) : "must be refs/heads/<branch> or refs/tags/<tag>";
  if (problem) throw new PayloadError(`ref ${problem}`, "ref");
  if (push.headSha !== "" && !COMMIT_ID.test(push.headSha)) {
    throw new PayloadError("the head commit id must be a hexadecimal commit hash", "sha");
  }
  return push;
}

/** The push event of a provider's payload (already JSON-parsed); PayloadError when it is not one. */
export function parsePushEvent(provider: WebhookProvider, payload: unknown): PushEvent {
  const parsed = (() => {
    switch (provider) {
      case "github":
      case "gitea": {
        const result = githubLikeSchema.safeParse(payload);
        return result.success ? fromGithubLike(result.data) : result.error;
      }
      case "gitlab": {
        const result = gitlabSchema.safeParse(payload);
        return result.success ? fromGitlab(result.data) : result.error;
      }
      case "bitbucket": {
        const result = bitbucketSchema.safeParse(payload);
        return result.success ? fromBitbucket(result.data) : result.error;
      }
    }
  })();
  if (parsed instanceof z.ZodError) {
    const where = parsed.issues.map((issue) => issue.path.join(".") || "(body)").join(", ");
    throw new PayloadError(`not a ${provider} push payload (check: ${where})`);
  }
  return checkRefAndSha(parsed);
}

/**
 * The event kind the provider's headers name, when it is not a push (ping, issues, ...):
 * those are acknowledged without deploying. Absent headers are taken as a push.
 */
export function nonPushEvent(provider: WebhookProvider, headers: Headers): string | null {
  const event = (() => {
    switch (provider) {
      case "github":
        return headers.get("x-github-event");
      case "gitea":
        return headers.get("x-gitea-event") ?? headers.get("x-gogs-event") ?? headers.get("x-github-event");
      case "gitlab":
        return headers.get("x-gitlab-event");
      case "bitbucket":
        return headers.get("x-event-key");
    }
  })();
  if (event === null) return null;
  const pushEvents = {
    github: ["push"],
    gitea: ["push"],
    gitlab: ["Push Hook", "Tag Push Hook"],
    bitbucket: ["repo:push"],
  }[provider];
  return pushEvents.includes(event) ? null : event;
}
