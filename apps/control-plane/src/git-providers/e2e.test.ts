/**
 * Git providers end to end on the real Docker Engine: for GitHub, GitLab, Gitea and Bitbucket,
 * create → testConnection → branches → save<Provider>Provider → application.deploy builds the
 * "release" branch of the private repository acme/web, which the stand-in's git http-backend
 * serves only to the provider's token (the agent clones it through its askpass helper). Then a
 * wrong credential per provider fails the deployment at the clone (GitHub: at the installation
 * token, bought with a wrong private key) with a clear message; no secret is in the message or
 * the deployment log. The four deployments of each round run side by side. A compose stack of
 * each provider reads its file from the same branch through the same clone path.
 */
import { generateKeyPairSync } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { removeDeployedApps, requireDocker, TEST_IMAGE, uniqueName } from "@platform/agent/testing/docker.ts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Session, startTestPlatform, type TestPlatform } from "../testing/harness.ts";
import { providerCases, type StandIns, seedRepo, standInEnv, startStandIns } from "./testing/fixtures.ts";

const DEPLOY_WAIT_MS = 120_000;
const DOCKERFILE = `FROM ${TEST_IMAGE}
COPY index.html /www/index.html
CMD ["httpd", "-f", "-p", "8080", "-h", "/www"]
`;
/** Compose's own container, from the test image the Dockerfile builds on (no build needed). */
const COMPOSE_FILE = `services:
  web:
    image: ${TEST_IMAGE}
    command: ["httpd", "-f", "-p", "8080", "-h", "/www"]
`;
const KINDS = ["github", "gitlab", "gitea", "bitbucket"] as const;
type Kind = (typeof KINDS)[number];

let platform: TestPlatform;
let stands: StandIns;
let owner: Session;
let directory: string;
const appNames = Object.fromEntries(KINDS.map((kind) => [kind, uniqueName(`gp-${kind}`)])) as Record<
  Kind,
  string
>;
const providerIds = {} as Record<Kind, string>;
const applicationIds = {} as Record<Kind, string>;
const composeIds = {} as Record<Kind, string>;
const as = () => ({ token: owner.token });
const ok = (name: string, input: unknown) => platform.mutateOk(name, input, as());

beforeAll(async () => {
  await requireDocker();
  stands = await startStandIns();
  directory = await mkdtemp(path.join(tmpdir(), "git-providers-e2e-"));
  platform = await startTestPlatform(standInEnv(stands), {
    agents: { localAgent: { mainDirectory: directory } },
  });
  owner = await platform.registerOwner();
}, 60_000);

afterAll(async () => {
  for (const composeId of Object.values(composeIds))
    await platform?.mutate("compose.delete", { composeId, deleteVolumes: true }, as()).catch(() => {});
  await platform?.close();
  if (directory) await rm(directory, { recursive: true, force: true });
  for (const stand of Object.values(stands ?? {})) await stand.close();
  await removeDeployedApps(Object.values(appNames));
}, 120_000);

/** Deploys every provider's application at once; the finished deployment rows by kind. */
async function deployAll() {
  const started = await Promise.all(
    KINDS.map((kind) => ok("application.deploy", { applicationId: applicationIds[kind] })),
  );
  const rows = await Promise.all(
    started.map(({ deploymentId }) => platform.waitForDeployment(deploymentId, DEPLOY_WAIT_MS)),
  );
  return Object.fromEntries(KINDS.map((kind, index) => [kind, rows[index]!])) as Record<
    Kind,
    (typeof rows)[number]
  >;
}

describe("a private repository of each provider, deployed on Docker", () => {
  it("deploys the saved branch with the provider's token; a wrong credential fails with no secret shown", async () => {
    const cases = providerCases(stands);
    const project = await ok("project.create", { name: "Provider deploys" });
    const releaseShas = {} as Record<Kind, string>;
    for (const c of cases) {
      releaseShas[c.kind] = await seedRepo(stands[c.kind], {
        Dockerfile: DOCKERFILE,
        "docker-compose.yml": COMPOSE_FILE,
      });
      const created = await ok(`${c.kind}.create`, c.create());
      providerIds[c.kind] = created[c.idField];
      expect(await ok(`${c.kind}.testConnection`, { [c.idField]: providerIds[c.kind] })).toBe(
        "Found 1 repositories",
      );
      const [branchesName, branchesInput] = c.branches(providerIds[c.kind]) as [
        string,
        Record<string, unknown>,
      ];
      const branches = await platform.query(branchesName, branchesInput, as());
      expect(branches.body).toContainEqual({ name: "release", commit: { sha: releaseShas[c.kind] } });
      const app = await ok("application.create", {
        name: `${c.kind} web`,
        appName: appNames[c.kind],
        environmentId: project.environment.environmentId,
      });
      applicationIds[c.kind] = app.applicationId;
      const [saveName, saveInput] = c.save(providerIds[c.kind]) as [string, Record<string, unknown>];
      await ok(saveName, { applicationId: app.applicationId, ...saveInput });
      // The same repository as a compose stack's source (the provider's fields less the build path).
      const stack = await ok("compose.create", {
        name: `${c.kind} stack`,
        appName: `${appNames[c.kind]}-stack`.replace(/_/g, "-").toLowerCase(),
        environmentId: project.environment.environmentId,
        sourceType: c.kind,
      });
      composeIds[c.kind] = stack.composeId;
      const repositoryFields = Object.fromEntries(
        Object.entries(saveInput).filter(
          ([key]) => !/buildPath$|BuildPath$|triggerType|watchPaths/.test(key),
        ),
      );
      await ok("compose.update", { composeId: stack.composeId, ...repositoryFields });
      await ok("application.saveBuildType", {
        applicationId: app.applicationId,
        buildType: "dockerfile",
        dockerfile: "Dockerfile",
        dockerContextPath: ".",
        dockerBuildStage: "",
      });
    }

    const deployed = await deployAll();
    for (const kind of KINDS) {
      const row = deployed[kind];
      expect(row.status, `${kind}: ${row.errorMessage}\n${row.logs}`).toBe("done");
      expect(row.commitHash, kind).toBe(releaseShas[kind]);
      expect(row.logs, kind).not.toContain(stands[kind].token);
    }

    const stacks = await Promise.all(
      KINDS.map(async (kind) => {
        const { deploymentId } = await ok("compose.deploy", { composeId: composeIds[kind] });
        return platform.waitForDeployment(deploymentId, DEPLOY_WAIT_MS);
      }),
    );
    KINDS.forEach((kind, index) => {
      const row = stacks[index]!;
      expect(row.status, `${kind} stack: ${row.errorMessage}\n${row.logs}`).toBe("done");
      expect(row.logs, kind).toContain(`Read ./docker-compose.yml at commit ${releaseShas[kind]}`);
      expect(row.logs, kind).not.toContain(stands[kind].token);
    });

    const wrong: Record<Kind, [string, Record<string, unknown>, string]> = {
      github: [
        "github.update",
        {
          githubId: providerIds.github,
          githubPrivateKey: generateKeyPairSync("rsa", { modulusLength: 2048 })
            .privateKey.export({ type: "pkcs1", format: "pem" })
            .toString(),
        },
        "BEGIN RSA PRIVATE KEY",
      ],
      gitlab: [
        "gitlab.update",
        {
          gitlabId: providerIds.gitlab,
          accessToken: "glpat-wrong-token-XYZ",
          expiresAt: Math.floor(Date.now() / 1000) + 3600,
        },
        "glpat-wrong-token-XYZ",
      ],
      gitea: [
        "gitea.update",
        { giteaId: providerIds.gitea, accessToken: "gitea-wrong-token-XYZ" },
        "gitea-wrong-token-XYZ",
      ],
      bitbucket: [
        "bitbucket.update",
        { bitbucketId: providerIds.bitbucket, apiToken: "bb-wrong-token-XYZ" },
        "bb-wrong-token-XYZ",
      ],
    };
    for (const kind of KINDS) await ok(wrong[kind][0], wrong[kind][1]);
    const refused = await deployAll();
    for (const kind of KINDS) {
      const row = refused[kind];
      const secret = wrong[kind][2];
      expect(row.status, kind).toBe("error");
      expect(row.errorMessage, kind).toMatch(
        kind === "github"
          ? /GitHub provider .* gave no access token: GitHub answered 401/
          : /git clone failed/,
      );
      expect(`${row.errorMessage}\n${row.logs}`, kind).not.toContain(secret);
    }
  }, 300_000);
});
