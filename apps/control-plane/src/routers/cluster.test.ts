/**
 * cluster.addWorker / addManager without joinServerId against the test engine (a Swarm manager):
 * an administrator receives Dokploy's join command, token included, and that token is written to
 * no log line the platform records (the control plane's and its local agent's); a member never
 * receives it. The join between two Platform servers is tests/e2e/cluster.test.ts.
 */
import { dockerCli, requireDocker } from "@platform/agent/testing/docker.ts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createUserDirectly } from "../projects/test-support.ts";
import { type Session, startTestPlatform, type TestPlatform } from "../testing/harness.ts";

describe("cluster join commands (issue 37 finding 10)", () => {
  let platform: TestPlatform;
  let owner: Session;

  beforeAll(async () => {
    await requireDocker();
    platform = await startTestPlatform();
    owner = await platform.registerOwner();
  });
  afterAll(() => platform?.close());

  it.each([
    ["addWorker", "worker"],
    ["addManager", "manager"],
  ])("%s answers the %s join command to an administrator and logs no token", async (procedure, role) => {
    const token = await dockerCli(["swarm", "join-token", "-q", role]);
    const response = await platform.query(`cluster.${procedure}`, {}, { token: owner.token });
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    expect(response.body.command).toMatch(new RegExp(`^docker swarm join --token ${token} \\S+:2377$`));
    const logged = platform.logLines.join("\n");
    expect(logged).toContain(`"path":"/api/cluster.${procedure}"`);
    expect(logged).not.toContain(token);
    expect(logged).not.toContain("SWMTKN");
  });

  it("is refused to a member (403): the token joins any machine to the Swarm", async () => {
    const member = await createUserDirectly(platform, {
      email: "member@example.com",
      organizationId: owner.user.organizationId,
      role: "member",
    });
    await platform.mutateOk(
      "user.assignPermissions",
      { id: member.user.id, canAccessToDocker: true },
      { token: owner.token },
    );
    for (const procedure of ["addWorker", "addManager"]) {
      const response = await platform.query(`cluster.${procedure}`, {}, { token: member.token });
      expect(response.status, procedure).toBe(403);
      expect(JSON.stringify(response.body)).not.toContain("SWMTKN");
    }
  });
});
