/** Needs a Docker Engine in Swarm mode (scripts/docker-setup.sh) and the local busybox test image. */
import type Docker from "dockerode";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { requireDocker, TEST_IMAGE, uniqueName } from "../testing/docker.ts";
import { inspectService, retryOutOfSequence, updateService } from "./swarm.ts";

type ServiceInfo = { ID: string; Version: { Index: number }; Spec: Docker.ServiceSpec };

let docker: Docker;
const name = uniqueName("swarm-test");

beforeAll(async () => {
  docker = await requireDocker();
  await docker.createService({
    Name: name,
    TaskTemplate: { ContainerSpec: { Image: TEST_IMAGE, Command: ["sleep", "3600"] } },
    Mode: { Replicated: { Replicas: 0 } },
  });
});

afterAll(async () => {
  await docker
    ?.getService(name)
    .remove()
    .catch(() => {});
});

describe("retryOutOfSequence", () => {
  it("re-runs an update the engine refused for a stale version, and only that", async () => {
    const stale = (await inspectService<ServiceInfo>(docker, name))!;
    // Someone else updates first: the version read above is now stale.
    await updateService(docker, stale.ID, stale.Version.Index, { ...stale.Spec, Labels: { first: "1" } });

    let attempts = 0;
    await retryOutOfSequence(async () => {
      attempts++;
      const current = attempts === 1 ? stale : (await inspectService<ServiceInfo>(docker, name))!;
      await updateService(docker, current.ID, current.Version.Index, {
        ...current.Spec,
        Labels: { ...current.Spec.Labels, second: "2" },
      });
    });
    expect(attempts).toBe(2);
    expect((await inspectService<ServiceInfo>(docker, name))!.Spec.Labels).toEqual({
      first: "1",
      second: "2",
    });

    let otherAttempts = 0;
    await expect(
      retryOutOfSequence(async () => {
        otherAttempts++;
        throw new Error("no such image");
      }),
    ).rejects.toThrow("no such image");
    expect(otherAttempts).toBe(1);
  });

  it("gives up after its attempts", async () => {
    const stale = (await inspectService<ServiceInfo>(docker, name))!;
    await updateService(docker, stale.ID, stale.Version.Index, stale.Spec);
    let attempts = 0;
    await expect(
      retryOutOfSequence(async () => {
        attempts++;
        await updateService(docker, stale.ID, stale.Version.Index, stale.Spec);
      }, 2),
    ).rejects.toThrow(/out of sequence/);
    expect(attempts).toBe(2);
  });
});
