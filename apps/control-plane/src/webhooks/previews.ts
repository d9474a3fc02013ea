/**
 * Pull-request events (spec 6.2, preview deployments). Every provider's pull-request event is
 * verified like a push (signature or token) and handed to `onPullRequestEvent`, which makes,
 * updates or deletes the previews of the applications it concerns (previews/). When none of them
 * has previews active, the answer is 200 "ignored: previews not enabled" and nothing is read.
 */
import type { ServiceContext } from "../context.ts";
import { ApiError } from "../errors.ts";
import { parsePullRequestEvent } from "../previews/events.ts";
import { handlePullRequestChange } from "../previews/previews.ts";
import { PayloadError, type WebhookProvider } from "./payload.ts";

export interface PullRequestEvent {
  provider: WebhookProvider;
  /** The event's name as the provider's header says it (Bitbucket's tells the action). */
  event: string;
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
  async handle(ctx: ServiceContext, event: PullRequestEvent): Promise<string> {
    if (event.applicationIds.length === 0) return PREVIEWS_NOT_ENABLED;
    const active = await ctx.db
      .selectFrom("applications")
      .select("applicationId")
      .where("applicationId", "in", event.applicationIds)
      .where("isPreviewDeploymentsActive", "=", true)
      .execute();
    if (active.length === 0) return PREVIEWS_NOT_ENABLED;
    let change: ReturnType<typeof parsePullRequestEvent>;
    try {
      change = parsePullRequestEvent(event.provider, event.event, event.payload);
    } catch (error) {
      if (!(error instanceof PayloadError)) throw error;
      throw new ApiError("BAD_REQUEST", `Invalid webhook body: ${error.message}`, { fields: [error.field] });
    }
    return handlePullRequestChange(ctx, {
      provider: event.provider,
      change,
      applicationIds: active.map((row) => row.applicationId),
    });
  },
};

export async function onPullRequestEvent(ctx: ServiceContext, event: PullRequestEvent): Promise<string> {
  pullRequestHook.calls++;
  return pullRequestHook.handle(ctx, event);
}
