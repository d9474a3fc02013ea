/**
 * user.assignPermissions' accessedServers and accessedGitProviders (Dokploy CLI 0.30.7): a
 * member restricted to some servers and git providers sees only those in the server and provider
 * lists, and naming another one (serverId of any procedure, a provider's id) is a 404; ids that
 * are not the organization's are a 400 naming the field; null lifts the restriction;
 * administrators are never restricted; a provider's creator keeps seeing their own.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { insertProvider } from "../git-providers/repository.ts";
import { type Session, startTestPlatform, type TestPlatform } from "../testing/harness.ts";
import { createUserDirectly } from "./test-support.ts";

let platform: TestPlatform;
let owner: Session;
let admin: Session;
let member: Session;
let stranger: Session;
const as = (session: Session) => ({ token: session.token });
const servers = {} as Record<"granted" | "other" | "theirs", string>;
const providers = {} as Record<
  "granted" | "other" | "membersOwn" | "theirs",
  { gitProviderId: string; giteaId: string }
>;

async function createServer(session: Session, name: string) {
  const created = await platform.mutate(
    "server.create",
    { name, ipAddress: "198.51.100.40", username: "root" },
    as(session),
  );
  expect(created.status, JSON.stringify(created.body)).toBe(200);
  return created.body.serverId as string;
}

async function createGitea(session: Session, name: string) {
  const provider = await insertProvider(platform.ctx, {
    providerType: "gitea",
    name,
    organizationId: session.user.organizationId,
    userId: session.user.userId,
    settings: { giteaUrl: "https://gitea.example.com" },
    secrets: {},
  });
  return { gitProviderId: provider.row.gitProviderId, giteaId: provider.row.providerId };
}

const assign = (input: Record<string, unknown>) =>
  platform.mutate("user.assignPermissions", { id: member.user.userId, ...input }, as(owner));
const serverNames = async (session: Session, procedure = "server.all") => {
  const listed = await platform.query(procedure, {}, as(session));
  expect(listed.status, JSON.stringify(listed.body)).toBe(200);
  return (listed.body as { serverId: string }[]).map((server) => server.serverId).sort();
};
const providerIds = async (session: Session) => {
  const listed = await platform.query("gitProvider.getAll", {}, as(session));
  expect(listed.status, JSON.stringify(listed.body)).toBe(200);
  return (listed.body as { gitProviderId: string }[]).map((provider) => provider.gitProviderId).sort();
};

beforeAll(async () => {
  platform = await startTestPlatform();
  owner = await platform.registerOwner();
  admin = await platform.addMember(owner, "admin");
  member = await platform.addMember(owner, "member");
  stranger = await createUserDirectly(platform, { email: "grants-stranger@example.com" });
  servers.granted = await createServer(owner, "granted");
  servers.other = await createServer(owner, "other");
  servers.theirs = await createServer(stranger, "theirs");
  providers.granted = await createGitea(owner, "granted");
  providers.other = await createGitea(owner, "other");
  providers.membersOwn = await createGitea(member, "members-own");
  providers.theirs = await createGitea(stranger, "theirs");
  const flags = await assign({ canAccessToGitProviders: true });
  expect(flags.status, JSON.stringify(flags.body)).toBe(200);
});

afterAll(async () => {
  await platform?.close();
});

describe("accessedServers and accessedGitProviders", () => {
  it("a member without these lists uses every server and provider of the organization", async () => {
    expect(await serverNames(member)).toEqual([servers.granted, servers.other].sort());
    expect(await providerIds(member)).toEqual(
      [providers.granted, providers.other, providers.membersOwn].map((p) => p.gitProviderId).sort(),
    );
  });

  it("ids that are not the organization's are a 400 naming the field, and nothing changes", async () => {
    const badServer = await assign({ accessedServers: [servers.granted, servers.theirs] });
    expect(badServer.status).toBe(400);
    expect(badServer.body.error.data.fields).toEqual(["accessedServers"]);
    const badProvider = await assign({ accessedGitProviders: [providers.theirs.gitProviderId] });
    expect(badProvider.status).toBe(400);
    expect(badProvider.body.error.data.fields).toEqual(["accessedGitProviders"]);
    const view = await platform.query("user.one", { userId: member.user.userId }, as(owner));
    expect(view.body).toMatchObject({ accessedServers: null, accessedGitProviders: null });
  });

  it("restricts the member to the listed servers and providers: lists filtered, the others a 404", async () => {
    const restricted = await assign({
      accessedServers: [servers.granted],
      accessedGitProviders: [providers.granted.gitProviderId],
    });
    expect(restricted.status, JSON.stringify(restricted.body)).toBe(200);
    const view = await platform.query("user.one", { userId: member.user.userId }, as(owner));
    expect(view.body).toMatchObject({
      accessedServers: [servers.granted],
      accessedGitProviders: [providers.granted.gitProviderId],
    });

    expect(await serverNames(member)).toEqual([servers.granted]);
    expect((await platform.query("server.one", { serverId: servers.granted }, as(member))).status).toBe(200);
    for (const [procedure, input] of [
      ["server.one", { serverId: servers.other }],
      ["server.getServices", { serverId: servers.other }],
      ["network.all", { serverId: servers.other }],
    ] as const) {
      const refused = await platform.query(procedure, input, as(member));
      expect(refused.status, `${procedure} ${JSON.stringify(refused.body)}`).toBe(404);
    }
    // An application placed on a server not listed is refused as that server is unknown.
    const project = await platform.mutate("project.create", { name: "grants" }, as(owner));
    const placed = await platform.mutate(
      "application.create",
      { name: "placed", environmentId: project.body.environment.environmentId, serverId: servers.other },
      as(member),
    );
    expect(placed.status, JSON.stringify(placed.body)).toBe(404);

    expect(await providerIds(member)).toEqual(
      [providers.granted.gitProviderId, providers.membersOwn.gitProviderId].sort(),
    );
    expect(
      (await platform.query("gitea.one", { giteaId: providers.granted.giteaId }, as(member))).status,
    ).toBe(200);
    expect((await platform.query("gitea.one", { giteaId: providers.other.giteaId }, as(member))).status).toBe(
      404,
    );
    expect(
      (await platform.query("gitea.giteaProviders", {}, as(member))).body.map((p: any) => p.giteaId),
    ).toEqual(expect.not.arrayContaining([providers.other.giteaId]));
    // Its creator keeps their own provider.
    expect(
      (await platform.query("gitea.one", { giteaId: providers.membersOwn.giteaId }, as(member))).status,
    ).toBe(200);

    // Administrators are never restricted.
    expect(await serverNames(admin)).toEqual([servers.granted, servers.other].sort());
    expect((await providerIds(admin)).length).toBe(3);
  });

  it("null lifts the restriction", async () => {
    const lifted = await assign({ accessedServers: null, accessedGitProviders: null });
    expect(lifted.status, JSON.stringify(lifted.body)).toBe(200);
    expect(await serverNames(member)).toEqual([servers.granted, servers.other].sort());
    expect((await platform.query("gitea.one", { giteaId: providers.other.giteaId }, as(member))).status).toBe(
      200,
    );
  });
});
