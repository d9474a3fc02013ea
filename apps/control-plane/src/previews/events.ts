/**
 * The pull/merge request events of GitHub, Gitea, GitLab and Bitbucket reduced to what a preview
 * needs: whether the request was opened (or reopened), got new commits, or was closed or merged;
 * its id, number, URL, title, source branch and head commit; who opened it and its labels. The
 * payload is parsed leniently (unknown fields ignored); the branch must be a valid Git branch
 * name and the commit hexadecimal, as they end up in clones, titles and comments.
 */
import { z } from "zod";
import { branchNameProblem } from "../applications/validation.ts";
import { PayloadError, type WebhookProvider } from "../webhooks/payload.ts";

export type RequestAction = "open" | "update" | "close" | "ignore";

export interface PullRequestChange {
  action: RequestAction;
  /** The provider's id of the request (stable across events). */
  id: string;
  /** The number shown to users (#12, !12): the API's address of the request. */
  number: string;
  url: string;
  title: string;
  branch: string;
  headSha: string;
  /** Who opened the request: login (GitHub, Gitea), user id (GitLab), account uuid (Bitbucket). */
  author: string;
  labels: string[];
  /** The repository's path (owner/name, group/sub/name); GitLab: also the project id. */
  repository: string;
  projectId: string | null;
  /** Whether the provider's payload can carry labels (Bitbucket's cannot). */
  hasLabels: boolean;
}

const text = z.union([z.string(), z.number()]).transform(String);
const labelsSchema = z
  .array(z.object({ name: z.string().optional(), title: z.string().optional() }))
  .optional()
  .catch(undefined);

const githubLike = z.object({
  action: z.string(),
  number: text.optional(),
  pull_request: z.object({
    id: text,
    number: text,
    html_url: z.string().optional(),
    title: z.string().optional(),
    merged: z.boolean().nullish(),
    head: z.object({ ref: z.string(), sha: z.string() }),
    user: z.object({ login: z.string() }).optional(),
    labels: labelsSchema,
  }),
  repository: z.object({ full_name: z.string() }),
});

const gitlab = z.object({
  object_attributes: z.object({
    id: text,
    iid: text,
    action: z.string().optional(),
    state: z.string().optional(),
    url: z.string().optional(),
    title: z.string().optional(),
    source_branch: z.string(),
    author_id: text.optional(),
    oldrev: z.string().optional(),
    last_commit: z.object({ id: z.string() }),
  }),
  labels: labelsSchema,
  project: z.object({ id: text, path_with_namespace: z.string() }),
});

const bitbucket = z.object({
  pullrequest: z.object({
    id: text,
    title: z.string().optional(),
    links: z.object({ html: z.object({ href: z.string() }).optional() }).optional(),
    source: z.object({
      branch: z.object({ name: z.string() }),
      commit: z.object({ hash: z.string() }),
    }),
    author: z.object({ uuid: z.string().optional(), account_id: z.string().optional() }).optional(),
  }),
  repository: z.object({ full_name: z.string() }),
});

function githubAction(action: string): RequestAction {
  if (action === "opened" || action === "reopened") return "open";
  // GitHub says synchronize, Gitea synchronized.
  if (action === "synchronize" || action === "synchronized") return "update";
  if (action === "closed") return "close";
  return "ignore";
}

function gitlabAction(attributes: z.infer<typeof gitlab>["object_attributes"]): RequestAction {
  switch (attributes.action) {
    case "open":
    case "reopen":
      return "open";
    // An update without oldrev changed the title or labels, not the commits.
    case "update":
      return attributes.oldrev ? "update" : "ignore";
    case "close":
    case "merge":
      return "close";
    default:
      return "ignore";
  }
}

function bitbucketAction(eventKey: string): RequestAction {
  if (eventKey === "pullrequest:created") return "open";
  if (eventKey === "pullrequest:updated") return "update";
  if (eventKey === "pullrequest:fulfilled" || eventKey === "pullrequest:rejected") return "close";
  return "ignore";
}

const COMMIT_ID = /^[0-9a-f]{7,64}$/i;
const labelNames = (labels: z.infer<typeof labelsSchema>) =>
  (labels ?? []).map((label) => label.name ?? label.title ?? "").filter(Boolean);

/** The request change of a verified event; PayloadError (a 400 naming the part) when it is not one. */
export function parsePullRequestEvent(
  provider: WebhookProvider,
  event: string,
  payload: unknown,
): PullRequestChange {
  const change = ((): PullRequestChange | z.ZodError => {
    switch (provider) {
      case "github":
      case "gitea": {
        const parsed = githubLike.safeParse(payload);
        if (!parsed.success) return parsed.error;
        const pr = parsed.data.pull_request;
        return {
          action: githubAction(parsed.data.action),
          id: pr.id,
          number: pr.number,
          url: pr.html_url ?? "",
          title: pr.title ?? "",
          branch: pr.head.ref,
          headSha: pr.head.sha,
          author: pr.user?.login ?? "",
          labels: labelNames(pr.labels),
          repository: parsed.data.repository.full_name,
          projectId: null,
          hasLabels: true,
        };
      }
      case "gitlab": {
        const parsed = gitlab.safeParse(payload);
        if (!parsed.success) return parsed.error;
        const attributes = parsed.data.object_attributes;
        return {
          action: gitlabAction(attributes),
          id: attributes.id,
          number: attributes.iid,
          url: attributes.url ?? "",
          title: attributes.title ?? "",
          branch: attributes.source_branch,
          headSha: attributes.last_commit.id,
          author: attributes.author_id ?? "",
          labels: labelNames(parsed.data.labels),
          repository: parsed.data.project.path_with_namespace,
          projectId: parsed.data.project.id,
          hasLabels: true,
        };
      }
      case "bitbucket": {
        const parsed = bitbucket.safeParse(payload);
        if (!parsed.success) return parsed.error;
        const pr = parsed.data.pullrequest;
        return {
          action: bitbucketAction(event),
          id: pr.id,
          number: pr.id,
          url: pr.links?.html?.href ?? "",
          title: pr.title ?? "",
          branch: pr.source.branch.name,
          headSha: pr.source.commit.hash,
          author: pr.author?.uuid ?? pr.author?.account_id ?? "",
          labels: [],
          repository: parsed.data.repository.full_name,
          projectId: null,
          hasLabels: false,
        };
      }
    }
  })();
  if (change instanceof z.ZodError) {
    const where = change.issues.map((issue) => issue.path.join(".") || "(body)").join(", ");
    throw new PayloadError(`not a ${provider} pull request payload (check: ${where})`);
  }
  const problem = branchNameProblem(change.branch);
  if (problem) throw new PayloadError(`the request's branch ${problem}`, "branch");
  if (!COMMIT_ID.test(change.headSha)) {
    throw new PayloadError("the head commit id must be a hexadecimal commit hash", "sha");
  }
  if (!/^[\w{}-]{1,100}$/.test(change.id) || !/^\d{1,12}$/.test(change.number)) {
    throw new PayloadError("the request's id and number must be short identifiers", "number");
  }
  return { ...change, title: change.title.slice(0, 500), url: change.url.slice(0, 2000) };
}
