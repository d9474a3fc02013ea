/**
 * Pull-request events (spec 6.2, preview deployments). Every provider's pull-request event is
 * verified like a push (signature or token) and handed to `onPullRequestEvent`; preview
 * deployments are a later issue, which fills this hook. Until then it records nothing and the
 * webhook answers 200 "ignored: previews not enabled" (docs/decisions.md).
 */
import type { ServiceContext } from "../context.ts";
import type { WebhookProvider } from "./payload.ts";

export interface PullRequestEvent {
  provider: WebhookProvider;
  /** The verified payload, as the provider sent it. */
  payload: unknown;
  /** Applications the event concerns (the one of a per-application webhook, or a GitHub App's matches). */
  applicationIds: string[];
}

export const PREVIEWS_NOT_ENABLED = "ignored: previews not enabled";

/** Pull-request event names per provider (headers X-GitHub-Event, X-Gitea-Event, X-Gitlab-Event, X-Event-Key). */
export function isPullRequestEvent(provider: WebhookProvider, event: string): boolean {
  switch (provider) {
    case "github":
    case "gitea":
      return event === "pull_request";
    case "gitlab":
      return event === "Merge Request Hook";
    case "bitbucket":
      return event.startsWith("pullrequest:");
  }
}

/** Test seam: every verified pull-request event passes here (tests observe the calls). */
export const pullRequestHook = {
  calls: 0,
  /** The preview issue replaces this with preview deployments; answers the webhook's message. */
  async handle(_services: ServiceContext, _event: PullRequestEvent): Promise<string> {
    return PREVIEWS_NOT_ENABLED;
  },
};

export async function onPullRequestEvent(services: ServiceContext, event: PullRequestEvent): Promise<string> {
  pullRequestHook.calls++;
  return pullRequestHook.handle(services, event);
}
