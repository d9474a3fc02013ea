/**
 * The webhook's pure parts: each provider's push payload reduced to a PushEvent, the decision
 * (autoDeploy, branch, new tag, watchPaths with `!` excludes) and the signature checks.
 */
import { createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import type { Application } from "../db/schema.ts";
import { decideDeployment, watchPathsMatch } from "./decide.ts";
import { nonPushEvent, PayloadError, type PushEvent, parsePushEvent } from "./payload.ts";
import { bitbucketPush, giteaPush, githubPush, gitlabPush, SAMPLE_SHA } from "./samples.ts";
import { constantTimeEqual, verifySignature } from "./signature.ts";

const commits = [
  { message: "first", added: ["src/a.ts"], modified: ["README.md"] },
  { message: "fix the build\n\nlonger body", removed: ["docs/old.md"] },
];

describe("parsePushEvent", () => {
  it.each([
    ["github", githubPush("refs/heads/main", commits)],
    ["gitea", giteaPush("refs/heads/main", commits)],
    ["gitlab", gitlabPush("refs/heads/main", commits)],
  ] as const)("reads a %s branch push with every changed file", (provider, payload) => {
    expect(parsePushEvent(provider, payload)).toEqual({
      ref: "refs/heads/main",
      created: false,
      deleted: false,
      headSha: SAMPLE_SHA,
      headMessage: "fix the build\n\nlonger body",
      changedFiles: ["src/a.ts", "README.md", "docs/old.md"],
    });
  });

  it("reads a Bitbucket push, which lists no files", () => {
    expect(parsePushEvent("bitbucket", bitbucketPush("refs/heads/main", "fix"))).toEqual({
      ref: "refs/heads/main",
      created: false,
      deleted: false,
      headSha: SAMPLE_SHA,
      headMessage: "fix",
      changedFiles: null,
    });
  });

  it.each([
    ["github", githubPush("refs/tags/v1.2.0", [], { created: true })],
    ["gitea", giteaPush("refs/tags/v1.2.0", [], { created: true })],
    ["gitlab", gitlabPush("refs/tags/v1.2.0", [], { created: true })],
    ["bitbucket", bitbucketPush("refs/tags/v1.2.0", "release", { created: true })],
  ] as const)("sees a new tag in a %s payload", (provider, payload) => {
    expect(parsePushEvent(provider, payload)).toMatchObject({
      ref: "refs/tags/v1.2.0",
      created: true,
      deleted: false,
    });
  });

  it("sees a deleted branch (zero after SHA)", () => {
    const payload = { ...gitlabPush("refs/heads/main", []), after: "0".repeat(40) };
    expect(parsePushEvent("gitlab", payload)).toMatchObject({ deleted: true, headSha: "" });
  });

  it.each([
    ["github", { zen: "Keep it logically awesome." }],
    ["github", { ref: 42 }],
    ["gitlab", []],
    ["bitbucket", { push: { changes: [] } }],
    ["gitea", null],
  ] as const)("refuses a %s body that is not a push: %j", (provider, payload) => {
    expect(() => parsePushEvent(provider, payload)).toThrow(PayloadError);
  });

  it("knows the providers' event headers", () => {
    expect(nonPushEvent("github", new Headers({ "x-github-event": "ping" }))).toBe("ping");
    expect(nonPushEvent("github", new Headers({ "x-github-event": "push" }))).toBe(null);
    expect(nonPushEvent("gitlab", new Headers({ "x-gitlab-event": "Tag Push Hook" }))).toBe(null);
    expect(nonPushEvent("gitlab", new Headers({ "x-gitlab-event": "Merge Request Hook" }))).toBe(
      "Merge Request Hook",
    );
    expect(nonPushEvent("bitbucket", new Headers({ "x-event-key": "repo:push" }))).toBe(null);
    expect(nonPushEvent("gitea", new Headers({ "x-gitea-event": "issues" }))).toBe("issues");
    expect(nonPushEvent("gitea", new Headers())).toBe(null);
  });
});

describe("watchPathsMatch", () => {
  it.each([
    [["src/**"], ["src/a/b.ts"], true],
    [["src/**"], ["docs/x.md"], false],
    [["src/**", "!src/**/*.md"], ["src/notes.md"], false],
    [["src/**", "!src/**/*.md"], ["src/notes.md", "src/app.ts"], true],
    [["!docs/**"], ["docs/a.md"], false],
    [["!docs/**"], ["docs/a.md", "package.json"], true],
    [["*.json"], ["package.json"], true],
    [["*.json"], ["sub/package.json"], false],
    [["**/.env*"], ["app/.env.local"], true],
    [["src/**"], [], false],
  ])("%j against %j -> %s", (patterns, files, expected) => {
    expect(watchPathsMatch(patterns, files)).toBe(expected);
  });
});

describe("decideDeployment", () => {
  const app = (fields: Partial<Application> = {}) =>
    ({
      autoDeploy: true,
      sourceType: "github",
      branch: "main",
      triggerType: "push",
      watchPaths: null,
      gitlabBranch: null,
      giteaBranch: null,
      bitbucketBranch: null,
      customGitBranch: null,
      ...fields,
    }) as Application;
  const push = (fields: Partial<PushEvent> = {}): PushEvent => ({
    ref: "refs/heads/main",
    created: false,
    deleted: false,
    headSha: SAMPLE_SHA,
    headMessage: "m",
    changedFiles: ["src/a.ts"],
    ...fields,
  });

  it("deploys a push to the application's branch", () => {
    expect(decideDeployment(app(), push())).toEqual({ deploy: true });
  });

  it("takes the branch from the application's source kind", () => {
    expect(
      decideDeployment(app({ sourceType: "gitlab", gitlabBranch: "prod" }), push({ ref: "refs/heads/prod" }))
        .deploy,
    ).toBe(true);
    expect(decideDeployment(app({ sourceType: "gitlab", gitlabBranch: "prod" }), push()).deploy).toBe(false);
    expect(decideDeployment(app({ sourceType: "git", customGitBranch: "main" }), push()).deploy).toBe(true);
    expect(
      decideDeployment(app({ sourceType: "gitea", giteaBranch: "dev" }), push({ ref: "refs/heads/dev" }))
        .deploy,
    ).toBe(true);
    expect(
      decideDeployment(
        app({ sourceType: "bitbucket", bitbucketBranch: "dev" }),
        push({ ref: "refs/heads/dev" }),
      ).deploy,
    ).toBe(true);
  });

  it.each([
    [{ autoDeploy: false }, {}, /autoDeploy is off/],
    [{}, { ref: "refs/heads/feature" }, /not the application's branch/],
    [{}, { ref: "refs/heads/main-old" }, /not the application's branch/],
    [{}, { ref: "refs/tags/main" }, /not the application's branch/],
    [{}, { deleted: true }, /was deleted/],
    [{ branch: null }, {}, /no branch configured/],
    [{ sourceType: "docker" as const }, {}, /source is docker/],
    [{ watchPaths: ["docs/**"] }, {}, /watchPaths/],
    [{ watchPaths: ["src/**", "!src/a.ts"] }, {}, /watchPaths/],
    [{ triggerType: "tag" as const }, {}, /not a tag/],
    [{ triggerType: "tag" as const }, { ref: "refs/tags/v1", created: false }, /not a new tag/],
    [{ triggerType: "tag" as const }, { ref: "refs/tags/v1", created: true, deleted: true }, /was deleted/],
  ])("does not deploy %j on %j", (appFields, pushFields, reason) => {
    const decision = decideDeployment(app(appFields), push(pushFields));
    expect(decision.deploy).toBe(false);
    if (!decision.deploy) expect(decision.reason).toMatch(reason);
  });

  it("deploys a new tag with triggerType tag, whatever the watchPaths", () => {
    const decision = decideDeployment(
      app({ triggerType: "tag", watchPaths: ["docs/**"] }),
      push({ ref: "refs/tags/v2.0.0", created: true, changedFiles: [] }),
    );
    expect(decision).toEqual({ deploy: true });
  });

  it("deploys when watchPaths match, and says so when the payload lists no files", () => {
    expect(decideDeployment(app({ watchPaths: ["src/**"] }), push())).toEqual({ deploy: true });
    const decision = decideDeployment(app({ watchPaths: ["src/**"] }), push({ changedFiles: null }));
    expect(decision).toMatchObject({
      deploy: true,
      note: expect.stringMatching(/watchPaths were not applied/),
    });
  });
});

describe("verifySignature", () => {
  const body = new TextEncoder().encode('{"ref":"refs/heads/main"}');
  const secret = "webhook-secret";
  const hex = createHmac("sha256", secret).update(body).digest("hex");

  it("checks GitHub's X-Hub-Signature-256 over the raw body", () => {
    expect(
      verifySignature("github", secret, new Headers({ "x-hub-signature-256": `sha256=${hex}` }), body),
    ).toBe(true);
    expect(
      verifySignature("github", "other", new Headers({ "x-hub-signature-256": `sha256=${hex}` }), body),
    ).toBe(false);
    const altered = new TextEncoder().encode('{"ref":"refs/heads/main" }');
    expect(
      verifySignature("github", secret, new Headers({ "x-hub-signature-256": `sha256=${hex}` }), altered),
    ).toBe(false);
    expect(verifySignature("github", secret, new Headers({ "x-hub-signature-256": hex }), body)).toBe(false);
    expect(verifySignature("github", secret, new Headers(), body)).toBe(false);
  });

  it("checks Gitea's X-Gitea-Signature (bare hex), Bitbucket's X-Hub-Signature and GitLab's token", () => {
    expect(verifySignature("gitea", secret, new Headers({ "x-gitea-signature": hex }), body)).toBe(true);
    expect(verifySignature("gitea", secret, new Headers({ "x-gitea-signature": "0".repeat(64) }), body)).toBe(
      false,
    );
    expect(
      verifySignature("bitbucket", secret, new Headers({ "x-hub-signature": `sha256=${hex}` }), body),
    ).toBe(true);
    expect(verifySignature("gitlab", secret, new Headers({ "x-gitlab-token": secret }), body)).toBe(true);
    expect(verifySignature("gitlab", secret, new Headers({ "x-gitlab-token": `${secret}x` }), body)).toBe(
      false,
    );
    expect(
      verifySignature("gitlab", secret, new Headers({ "x-hub-signature-256": `sha256=${hex}` }), body),
    ).toBe(false);
  });

  it("compares strings of any lengths", () => {
    expect(constantTimeEqual("abc", "abc")).toBe(true);
    expect(constantTimeEqual("abc", "abcd")).toBe(false);
    expect(constantTimeEqual("", "x")).toBe(false);
  });
});
