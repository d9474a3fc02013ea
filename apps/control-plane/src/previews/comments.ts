/**
 * What a preview says on its pull or merge request, through the provider's own API with the
 * provider's credentials (git-providers/clients.ts): one comment with the preview's URL, commit
 * and status, posted once and then edited as the deployment goes on (GitHub and Gitea: issue
 * comments; GitLab: merge request notes; Bitbucket: pull request comments). And whether the
 * request's author may deploy (previewRequireCollaboratorPermissions): a collaborator of the
 * repository (GitHub, Gitea), a member with Developer access or more (GitLab), a user with
 * write access (Bitbucket).
 */
import type { ServiceContext } from "../context.ts";
import { providerApiCall } from "../git-providers/clients.ts";
import type { ProviderRecord } from "../git-providers/repository.ts";

export interface RequestRef {
  provider: ProviderRecord;
  /** owner/name (group/sub/name on GitLab). */
  repository: string;
  number: string;
}

const obj = (value: unknown) =>
  value && typeof value === "object" ? (value as Record<string, unknown>) : {};
const repoPath = (repository: string) => repository.split("/").map(encodeURIComponent).join("/");

export type CommentStatus = "queued" | "building" | "done" | "error" | "deleted";

const STATUS_TEXT: Record<CommentStatus, string> = {
  queued: "⏳ Queued",
  building: "🔨 Building",
  done: "✅ Deployed",
  error: "❌ Failed",
  deleted: "🗑️ Deleted (the request was closed)",
};

export function commentBody(input: { status: CommentStatus; url: string; commit: string | null }): string {
  return [
    "### Preview deployment",
    "",
    "| Status | URL | Commit |",
    "| --- | --- | --- |",
    `| ${STATUS_TEXT[input.status]} | ${input.status === "deleted" ? "-" : input.url} | ${input.commit ? input.commit.slice(0, 12) : "-"} |`,
  ].join("\n");
}

/** Posts the comment, or edits `commentId`'s; answers the comment's id. */
export async function upsertComment(
  ctx: ServiceContext,
  ref: RequestRef,
  commentId: string | null,
  body: string,
): Promise<string> {
  const repo = repoPath(ref.repository);
  const kind = ref.provider.row.providerType;
  const call = (path: string, method: "POST" | "PATCH" | "PUT", json: unknown) =>
    providerApiCall(ctx, ref.provider, path, { method, json });
  let answer: Awaited<ReturnType<typeof call>>;
  switch (kind) {
    case "github":
      answer = commentId
        ? await call(`/repos/${repo}/issues/comments/${encodeURIComponent(commentId)}`, "PATCH", { body })
        : await call(`/repos/${repo}/issues/${ref.number}/comments`, "POST", { body });
      break;
    case "gitea":
      answer = commentId
        ? await call(`/api/v1/repos/${repo}/issues/comments/${encodeURIComponent(commentId)}`, "PATCH", {
            body,
          })
        : await call(`/api/v1/repos/${repo}/issues/${ref.number}/comments`, "POST", { body });
      break;
    case "gitlab": {
      const base = `/api/v4/projects/${encodeURIComponent(ref.repository)}/merge_requests/${ref.number}/notes`;
      answer = commentId
        ? await call(`${base}/${encodeURIComponent(commentId)}`, "PUT", { body })
        : await call(base, "POST", { body });
      break;
    }
    case "bitbucket": {
      const base = `/repositories/${repo}/pullrequests/${ref.number}/comments`;
      const content = { content: { raw: body } };
      answer = commentId
        ? await call(`${base}/${encodeURIComponent(commentId)}`, "PUT", content)
        : await call(base, "POST", content);
      break;
    }
  }
  return commentId ?? String(obj(answer.body).id ?? "");
}

/** Whether `author` (the request's) may deploy a preview of the repository. */
export async function isCollaborator(ctx: ServiceContext, ref: RequestRef, author: string): Promise<boolean> {
  if (!author) return false;
  const repo = repoPath(ref.repository);
  const who = encodeURIComponent(author);
  const get = (path: string) => providerApiCall(ctx, ref.provider, path, { acceptStatus: [404] });
  switch (ref.provider.row.providerType) {
    case "github":
      return (await get(`/repos/${repo}/collaborators/${who}`)).status === 204;
    case "gitea":
      return (await get(`/api/v1/repos/${repo}/collaborators/${who}`)).status === 204;
    case "gitlab": {
      const answer = await get(`/api/v4/projects/${encodeURIComponent(ref.repository)}/members/all/${who}`);
      // 30: Developer, who may push to the repository.
      return answer.status === 200 && Number(obj(answer.body).access_level ?? 0) >= 30;
    }
    case "bitbucket": {
      const answer = await get(`/repositories/${repo}/permissions-config/users/${who}`);
      return answer.status === 200 && ["write", "admin"].includes(String(obj(answer.body).permission ?? ""));
    }
  }
}
