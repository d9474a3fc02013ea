/**
 * keepStackRollbackImages on the real Docker Engine, for a `docker-compose` project (the `stack`
 * path runs in the control plane's rollback e2e): the image ID each of the owner's services runs
 * is tagged platform-rollback/<appName>-<service>:<tag> (service names made repository-safe),
 * another owner's container of the same project name is left out, a stack with none of the
 * owner's services is NOT_FOUND, and a bad tag is INVALID_ARGUMENT.
 */
import { ownershipLabels } from "@platform/ownership";
import type Docker from "dockerode";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  dockerCli,
  removeContainer,
  requireDocker,
  runTestContainer,
  uniqueName,
} from "../testing/docker.ts";
import { keepStackRollbackImages } from "./stack.ts";

let docker: Docker;
const appName = uniqueName("rbimg").replace(/_/g, "-");
const owner = { organizationId: "org-rb", resource: "compose:rb-1" };
const containers: string[] = [];
const images: string[] = [];

const project = (service: string, labels = ownershipLabels(owner)) => ({
  "com.docker.compose.project": appName,
  "com.docker.compose.service": service,
  ...labels,
});

beforeAll(async () => {
  docker = await requireDocker();
  for (const [name, service, labels] of [
    [`${appName}-web`, "Web_App", ownershipLabels(owner)],
    [`${appName}-other`, "intruder", ownershipLabels({ organizationId: "org-x", resource: "compose:x" })],
  ] as const) {
    containers.push(name);
    await runTestContainer(name, ["sleep", "600"], project(service, labels));
  }
}, 60_000);

afterAll(async () => {
  for (const name of containers) await removeContainer(name);
  for (const image of images) await dockerCli(["image", "rm", image]).catch(() => {});
});

describe("keepStackRollbackImages", () => {
  it("tags the image each of the owner's services runs, by ID, and leaves others' out", async () => {
    const kept = await keepStackRollbackImages(docker, {
      appName,
      composeType: "docker-compose",
      owner,
      tag: "d-1",
    });
    images.push(...kept.images.map((image) => image.image));
    const imageId = await dockerCli(["inspect", "-f", "{{.Image}}", `${appName}-web`]);
    expect(kept.images).toEqual([
      { service: "Web_App", image: `platform-rollback/${appName}-web-app:d-1`, imageId },
    ]);
    expect(await dockerCli(["image", "inspect", "-f", "{{.Id}}", kept.images[0]!.image])).toBe(imageId);
  });

  it("is NOT_FOUND without the owner's services and INVALID_ARGUMENT for a bad tag", async () => {
    await expect(
      keepStackRollbackImages(docker, {
        appName,
        composeType: "docker-compose",
        owner: { organizationId: "org-none", resource: "compose:none" },
        tag: "d-1",
      }),
    ).rejects.toMatchObject({ code: "NOT_FOUND" });
    await expect(
      keepStackRollbackImages(docker, { appName, composeType: "docker-compose", owner, tag: "-bad" }),
    ).rejects.toMatchObject({ code: "INVALID_ARGUMENT" });
  });
});
