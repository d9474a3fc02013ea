/**
 * Organization networks on the real engine: created in the caller's namespace with its labels
 * (overlay, attachable), inspected and removed only when both the name and the labels say they
 * are the caller's. Another organization's network, the platform's own and the engine's ingress
 * are NOT_FOUND and stay; a network a container uses is refused, naming the container.
 */
import { randomBytes } from "node:crypto";
import { asReceived, type ContainerScope } from "@platform/agent-protocol";
import { organizationNetworkName } from "@platform/ownership";
import type Docker from "dockerode";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CommandError } from "../command-error.ts";
import { requireDocker, TEST_IMAGE } from "../testing/docker.ts";
import { createNetwork, inspectNetwork, removeNetwork } from "./networks.ts";

const suffix = randomBytes(4).toString("hex");
const orgA = `org-a-${suffix}`;
const orgB = `org-b-${suffix}`;
const scopeA: ContainerScope = { organizationId: orgA, includeUnmanaged: false };
const scopeB: ContainerScope = { organizationId: orgB, includeUnmanaged: false };
const nameA = organizationNetworkName(orgA, "backend");
const nameB = organizationNetworkName(orgB, "backend");
let docker: Docker;
const cleanup: (() => Promise<unknown>)[] = [];

async function codeOf(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
    return "ok";
  } catch (error) {
    if (error instanceof CommandError) return `${error.code}: ${error.message}`;
    throw error;
  }
}

const create = (name: string, scope: ContainerScope, extra: Record<string, unknown> = {}) =>
  createNetwork(docker, asReceived("CreateNetworkCommand", { name, scope, driver: "overlay", ...extra }));

const exists = (name: string) =>
  docker
    .getNetwork(name)
    .inspect()
    .then(
      () => true,
      () => false,
    );

/** Swarm forgets a removed overlay on this node a moment later: waits (bounded) for it to go. */
async function goneEventually(name: string): Promise<boolean> {
  for (let attempt = 0; attempt < 60; attempt++) {
    if (!(await exists(name))) return true;
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  return false;
}

beforeAll(async () => {
  docker = await requireDocker();
}, 60_000);

afterAll(async () => {
  for (const step of cleanup.reverse()) await step().catch(() => {});
  for (const name of [nameA, nameB])
    await docker
      .getNetwork(name)
      .remove()
      .catch(() => {});
});

describe("organization networks", () => {
  it("createNetwork makes an attachable overlay in the organization's namespace, labelled with it", async () => {
    const created = await create(nameA, scopeA, { labels: { "com.example.tier": "backend" } });
    const info = JSON.parse(created.inspectJson);
    expect(info).toMatchObject({ Name: nameA, Driver: "overlay", Attachable: true });
    expect(info.Labels).toMatchObject({ "platform.organization": orgA, "com.example.tier": "backend" });
    expect(created.networkId).toBe(info.Id);
    expect(nameA).not.toBe(nameB);
    expect(await codeOf(create(nameA, scopeA))).toMatch(/^FAILED_PRECONDITION: .*already exists/);
  }, 60_000);

  it("a create outside the caller's namespace (another organization's, platform-network, ingress) or with platform.* labels is refused", async () => {
    for (const name of [nameB, "platform-network", "ingress", "backend"]) {
      expect(await codeOf(create(name, scopeA))).toMatch(/^INVALID_ARGUMENT: name:/);
    }
    expect(
      await codeOf(
        create(organizationNetworkName(orgA, "sneaky"), scopeA, {
          labels: { "platform.organization": orgB },
        }),
      ),
    ).toMatch(/^INVALID_ARGUMENT: labels:/);
    expect(await exists(organizationNetworkName(orgA, "sneaky"))).toBe(false);
  });

  it("another organization's network, platform-network and ingress are NOT_FOUND to inspect and remove, and stay", async () => {
    await create(nameB, scopeB);
    for (const name of [nameB, "platform-network", "ingress"]) {
      expect(
        await codeOf(inspectNetwork(docker, asReceived("InspectNetworkCommand", { name, scope: scopeA }))),
      ).toMatch(/^NOT_FOUND/);
      expect(
        await codeOf(removeNetwork(docker, asReceived("RemoveNetworkCommand", { name, scope: scopeA }))),
      ).toMatch(/^NOT_FOUND/);
    }
    expect(await exists(nameB)).toBe(true);
    expect(await exists("ingress")).toBe(true);
  }, 60_000);

  it("a network in the caller's namespace labelled for another organization is NOT_FOUND (labels are checked, not only names)", async () => {
    const forged = organizationNetworkName(orgA, "forged");
    await docker.createNetwork({
      Name: forged,
      Driver: "overlay",
      Attachable: true,
      Labels: { "platform.organization": orgB },
    });
    cleanup.push(() => docker.getNetwork(forged).remove());
    expect(
      await codeOf(
        removeNetwork(docker, asReceived("RemoveNetworkCommand", { name: forged, scope: scopeA })),
      ),
    ).toMatch(/^NOT_FOUND/);
    expect(await exists(forged)).toBe(true);
  }, 60_000);

  it("removeNetwork refuses a network a container uses, naming it, then removes it once unused", async () => {
    const containerName = `net-user-${suffix}`;
    const container = await docker.createContainer({
      name: containerName,
      Image: TEST_IMAGE,
      Cmd: ["sleep", "300"],
      HostConfig: { NetworkMode: nameA },
    });
    cleanup.push(() => container.remove({ force: true }));
    await container.start();
    const refused = await codeOf(
      removeNetwork(docker, asReceived("RemoveNetworkCommand", { name: nameA, scope: scopeA })),
    );
    expect(refused).toMatch(/^FAILED_PRECONDITION: .*in use by .*net-user-/);
    expect(await exists(nameA)).toBe(true);
    await container.remove({ force: true });
    expect(
      await codeOf(removeNetwork(docker, asReceived("RemoveNetworkCommand", { name: nameA, scope: scopeA }))),
    ).toBe("ok");
    expect(await goneEventually(nameA)).toBe(true);
    const inspected = await codeOf(
      inspectNetwork(docker, asReceived("InspectNetworkCommand", { name: nameB, scope: scopeB })),
    );
    expect(inspected).toBe("ok");
  }, 60_000);
});
