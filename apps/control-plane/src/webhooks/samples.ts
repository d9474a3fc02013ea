/**
 * Minimal but realistic push payloads of each provider (the fields they really send, trimmed of
 * repository and user details), for the webhook tests.
 */
const SHA_BEFORE = "6113728f27ae82c7b1a177c8d03f9e96e0adf246";
const SHA_AFTER = "59b20b8d5c6ff8d09518454d4dd8b7a30f095ab5";
const ZERO = "0000000000000000000000000000000000000000";

export interface SampleCommit {
  message: string;
  added?: string[];
  modified?: string[];
  removed?: string[];
}

const commitsOf = (commits: SampleCommit[]) =>
  commits.map((commit, index) => ({
    id: index === commits.length - 1 ? SHA_AFTER : `${index}`.padStart(40, "a"),
    message: commit.message,
    timestamp: "2026-11-23T08:00:00Z",
    author: { name: "Dev", email: "dev@example.com" },
    added: commit.added ?? [],
    modified: commit.modified ?? [],
    removed: commit.removed ?? [],
  }));

export function githubPush(ref: string, commits: SampleCommit[], options: { created?: boolean } = {}) {
  const list = commitsOf(commits);
  return {
    ref,
    before: options.created ? ZERO : SHA_BEFORE,
    after: SHA_AFTER,
    created: options.created ?? false,
    deleted: false,
    forced: false,
    compare: "https://github.com/acme/shop/compare/6113728f27ae...59b20b8d5c6f",
    commits: list,
    head_commit: list.at(-1) ?? null,
    repository: { id: 1, name: "shop", full_name: "acme/shop", default_branch: "main" },
    pusher: { name: "dev", email: "dev@example.com" },
    sender: { login: "dev", id: 2 },
  };
}

export function giteaPush(ref: string, commits: SampleCommit[], options: { created?: boolean } = {}) {
  const list = commitsOf(commits);
  return {
    ref,
    before: options.created ? ZERO : SHA_BEFORE,
    after: SHA_AFTER,
    compare_url: "https://gitea.example.com/acme/shop/compare/6113728f27ae...59b20b8d5c6f",
    commits: list,
    total_commits: list.length,
    head_commit: list.at(-1) ?? null,
    repository: { id: 1, name: "shop", full_name: "acme/shop", default_branch: "main" },
    pusher: { login: "dev" },
    sender: { login: "dev" },
  };
}

export function gitlabPush(ref: string, commits: SampleCommit[], options: { created?: boolean } = {}) {
  const list = commitsOf(commits);
  return {
    object_kind: ref.startsWith("refs/tags/") ? "tag_push" : "push",
    event_name: ref.startsWith("refs/tags/") ? "tag_push" : "push",
    before: options.created ? ZERO : SHA_BEFORE,
    after: SHA_AFTER,
    ref,
    ref_protected: true,
    checkout_sha: SHA_AFTER,
    message: null,
    user_username: "dev",
    project_id: 15,
    project: { id: 15, name: "shop", path_with_namespace: "acme/shop", default_branch: "main" },
    commits: list,
    total_commits_count: list.length,
    repository: { name: "shop" },
  };
}

export function bitbucketPush(ref: string, message: string, options: { created?: boolean } = {}) {
  const type = ref.startsWith("refs/tags/") ? "tag" : "branch";
  const name = ref.replace(/^refs\/(heads|tags)\//, "");
  const target = { type: "commit", hash: SHA_AFTER, message, date: "2026-11-23T08:00:00+00:00" };
  return {
    push: {
      changes: [
        {
          new: { type, name, target },
          old: options.created ? null : { type, name, target: { type: "commit", hash: SHA_BEFORE } },
          created: options.created ?? false,
          closed: false,
          forced: false,
          truncated: false,
          commits: [{ hash: SHA_AFTER, message, type: "commit" }],
        },
      ],
    },
    repository: { type: "repository", full_name: "acme/shop", name: "shop" },
    actor: { display_name: "Dev" },
  };
}

export const SAMPLE_SHA = SHA_AFTER;
