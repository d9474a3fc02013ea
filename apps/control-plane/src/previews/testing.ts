/**
 * Test fixtures of preview deployments, shared by the integration test, the Docker e2e and the
 * fault test: each provider's pull/merge request event for acme/web (opened, new commit, closed)
 * with its signature headers, and an application of each provider with previews active.
 */
import { createHmac } from "node:crypto";
import type { StandIns } from "../git-providers/testing/fixtures.ts";
import { providerCases } from "../git-providers/testing/fixtures.ts";
import type { TestPlatform } from "../testing/harness.ts";

export const KINDS = ["github", "gitlab", "gitea", "bitbucket"] as const;
export type Kind = (typeof KINDS)[number];
export const HOOK_SECRET = "preview-hook-secret-31";
/** The request's author as each provider names it (login, GitLab user id, Bitbucket uuid). */
export const AUTHORS: Record<Kind, string> = {
  github: "alice",
  gitea: "alice",
  gitlab: "42",
  bitbucket: "{alice}",
};

export interface RequestEvent {
  action: "open" | "update" | "close";
  number: number;
  branch: string;
  sha: string;
  title?: string;
  labels?: string[];
}

const hmac = (secret: string, body: string) => createHmac("sha256", secret).update(body).digest("hex");

/** The event's body and headers (signed with `secret`; null: unsigned). */
export function requestEvent(
  kind: Kind,
  event: RequestEvent,
  secret: string | null = HOOK_SECRET,
  deliveryId = `delivery-${kind}-${event.number}-${event.sha}`,
): { body: string; headers: Record<string, string> } {
  const title = event.title ?? `Change ${event.number}`;
  const labels = (event.labels ?? []).map((name) => ({ name, title: name }));
  let payload: unknown;
  let headers: Record<string, string>;
  switch (kind) {
    case "github":
    case "gitea": {
      const actions = {
        open: "opened",
        update: kind === "github" ? "synchronize" : "synchronized",
        close: "closed",
      };
      payload = {
        action: actions[event.action],
        number: event.number,
        pull_request: {
          id: 5000 + event.number,
          number: event.number,
          html_url: `https://${kind}.example.com/acme/web/pull/${event.number}`,
          title,
          head: { ref: event.branch, sha: event.sha },
          user: { login: AUTHORS[kind] },
          labels,
        },
        repository: { full_name: "acme/web", name: "web", owner: { login: "acme" } },
      };
      headers =
        kind === "github"
          ? { "x-github-event": "pull_request", "x-github-delivery": deliveryId }
          : { "x-gitea-event": "pull_request", "x-gitea-delivery": deliveryId };
      break;
    }
    case "gitlab":
      payload = {
        object_kind: "merge_request",
        user: { id: Number(AUTHORS.gitlab), username: "alice" },
        project: { id: 7, path_with_namespace: "acme/web" },
        labels,
        object_attributes: {
          id: 7000 + event.number,
          iid: event.number,
          action: { open: "open", update: "update", close: "merge" }[event.action],
          url: `https://gitlab.example.com/acme/web/-/merge_requests/${event.number}`,
          title,
          source_branch: event.branch,
          author_id: Number(AUTHORS.gitlab),
          ...(event.action === "update" ? { oldrev: "0".repeat(40) } : {}),
          last_commit: { id: event.sha },
        },
      };
      headers = { "x-gitlab-event": "Merge Request Hook", "x-gitlab-event-uuid": deliveryId };
      break;
    case "bitbucket":
      payload = {
        pullrequest: {
          id: event.number,
          title,
          links: { html: { href: `https://bitbucket.org/acme/web/pull-requests/${event.number}` } },
          source: { branch: { name: event.branch }, commit: { hash: event.sha } },
          author: { uuid: AUTHORS.bitbucket },
        },
        repository: { full_name: "acme/web" },
      };
      headers = {
        "x-event-key": {
          open: "pullrequest:created",
          update: "pullrequest:updated",
          close: "pullrequest:fulfilled",
        }[event.action],
        "x-request-uuid": deliveryId,
      };
      break;
  }
  const body = JSON.stringify(payload);
  if (secret !== null) {
    if (kind === "gitlab") headers["x-gitlab-token"] = secret;
    else if (kind === "gitea") headers["x-gitea-signature"] = hmac(secret, body);
    else if (kind === "bitbucket") headers["x-hub-signature"] = `sha256=${hmac(secret, body)}`;
    else headers["x-hub-signature-256"] = `sha256=${hmac(secret, body)}`;
  }
  return { body, headers: { "content-type": "application/json", ...headers } };
}

export interface PreviewApp {
  kind: Kind;
  applicationId: string;
  refreshToken: string;
}

/**
 * For each kind: its provider on the stand-in, an application of acme/web with previews active
 * at `*.<wildcard>` and the webhook secret, built from the repository's Dockerfile.
 */
export async function createPreviewApps(
  platform: TestPlatform,
  token: string,
  stands: StandIns,
  options: {
    environmentId: string;
    appNames: Record<Kind, string>;
    wildcard: string;
    kinds?: readonly Kind[];
  },
): Promise<Record<Kind, PreviewApp>> {
  const ok = (name: string, input: unknown) => platform.mutateOk(name, input, { token });
  const apps = {} as Record<Kind, PreviewApp>;
  for (const c of providerCases(stands)) {
    if (options.kinds && !options.kinds.includes(c.kind)) continue;
    const provider = await ok(`${c.kind}.create`, c.create());
    const app = await ok("application.create", {
      name: `${c.kind} previews`,
      appName: options.appNames[c.kind],
      environmentId: options.environmentId,
    });
    const [saveName, saveInput] = c.save(provider[c.idField]) as [string, Record<string, unknown>];
    await ok(saveName, { applicationId: app.applicationId, ...saveInput });
    await ok("application.saveBuildType", {
      applicationId: app.applicationId,
      buildType: "dockerfile",
      dockerfile: "Dockerfile",
      dockerContextPath: ".",
      dockerBuildStage: "",
    });
    await ok("application.update", {
      applicationId: app.applicationId,
      webhookSecret: HOOK_SECRET,
      isPreviewDeploymentsActive: true,
      previewWildcard: `*.${options.wildcard}`,
      previewPort: 8080,
      previewHttps: false,
      previewLimit: 2,
      previewRequireCollaboratorPermissions: false,
      previewEnv: "GREETING=preview",
    });
    apps[c.kind] = { kind: c.kind, applicationId: app.applicationId, refreshToken: app.refreshToken };
  }
  return apps;
}

/** Sends the event to the application's webhook. */
export function sendEvent(
  platform: TestPlatform,
  app: PreviewApp,
  event: { body: string; headers: Record<string, string> },
) {
  return platform.request(
    `/api/deploy/${app.kind}/${app.applicationId}?refreshToken=${encodeURIComponent(app.refreshToken)}`,
    { method: "POST", body: event.body, headers: event.headers },
  );
}
