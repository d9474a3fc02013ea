/**
 * The placement check of a new deployment (deployments/start.ts registerPlacementCheck, the
 * servers feature's agentServerId registered from features.ts): this machine runs only the
 * instance organization's services, so another organization's stack or application deployed
 * without a serverId is a 400 naming serverId that records no deployment. Proves the check still
 * runs now that deployments/ imports no servers/ code, for a target kind (compose, through
 * startTargetDeployment) and for applications (applications/start-deployment.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Session, startTestPlatform, type TestPlatform } from "../testing/harness.ts";

let platform: TestPlatform;
let tenant: Session;
let environmentId: string;

beforeAll(async () => {
  platform = await startTestPlatform();
  const owner = await platform.registerOwner();
  tenant = await platform.addMember(owner, "member");
  const created = await platform.mutateOk("organization.create", { name: "Tenant" }, tenant);
  await platform.mutateOk("organization.setActive", { organizationId: created.id }, tenant);
  const project = await platform.mutateOk("project.create", { name: "Tenant project" }, tenant);
  environmentId = project.environment.environmentId;
});

afterAll(async () => {
  await platform?.close();
});

const deploymentsOf = (serviceId: string) =>
  platform.ctx.db
    .selectFrom("deployments")
    .select("deploymentId")
    .where("targetId", "=", serviceId)
    .execute();

describe("a deployment of another organization's service on this machine", () => {
  it("compose.deploy without a serverId is a 400 naming serverId and records no deployment", async () => {
    const { composeId } = await platform.mutateOk(
      "compose.create",
      {
        name: "stack",
        appName: "tenant-stack",
        environmentId,
        composeType: "stack",
        composeFile: "services:\n  web:\n    image: platform-test/busybox:latest\n",
      },
      tenant,
    );
    const refused = await platform.mutate("compose.deploy", { composeId }, tenant);
    expect(refused.status, JSON.stringify(refused.body)).toBe(400);
    expect(JSON.stringify(refused.body)).toContain("serverId");
    expect(await deploymentsOf(composeId)).toEqual([]);
  });

  it("application.deploy without a serverId is a 400 naming serverId and records no deployment", async () => {
    const { applicationId } = await platform.mutateOk(
      "application.create",
      { name: "app", appName: "tenant-app", environmentId },
      tenant,
    );
    const refused = await platform.mutate("application.deploy", { applicationId }, tenant);
    expect(refused.status, JSON.stringify(refused.body)).toBe(400);
    expect(JSON.stringify(refused.body)).toContain("serverId");
    expect(await deploymentsOf(applicationId)).toEqual([]);
  });
});
