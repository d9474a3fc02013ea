/**
 * The mark a volume backup leaves on a service it scaled to 0 (backup/volume.ts), on the real
 * Swarm: at its start an agent scales back what it stopped itself (or what an agent before the
 * stopped-by label stopped), never a service another agent of the same Swarm is backing up.
 * The services are created with 0 replicas: no task runs, the labels are all that is read.
 */
import type Docker from "dockerode";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { dockerCli, requireDocker, TEST_IMAGE, uniqueName } from "../testing/docker.ts";
import { REPLICAS_LABEL, restartServicesStoppedForVolumes, STOPPED_BY_LABEL } from "./volume.ts";

describe("services stopped for a volume backup", () => {
  let docker: Docker;
  const prefix = uniqueName("vbmark").toLowerCase();
  const names = { mine: `${prefix}-mine`, legacy: `${prefix}-legacy`, other: `${prefix}-other` };
  const serverId = `${prefix}-server`;

  async function createStopped(name: string, labels: Record<string, string>): Promise<void> {
    const label = Object.entries(labels).flatMap(([key, value]) => ["--label", `${key}=${value}`]);
    await dockerCli([
      "service",
      "create",
      "--detach",
      "--name",
      name,
      "--replicas",
      "0",
      ...label,
      TEST_IMAGE,
    ]);
  }

  async function state(name: string): Promise<{ replicas: number; labels: Record<string, string> }> {
    const spec = (await docker.getService(name).inspect()).Spec;
    return { replicas: spec.Mode.Replicated.Replicas, labels: spec.Labels ?? {} };
  }

  beforeAll(async () => {
    docker = await requireDocker();
    await createStopped(names.mine, { [REPLICAS_LABEL]: "2", [STOPPED_BY_LABEL]: serverId });
    await createStopped(names.legacy, { [REPLICAS_LABEL]: "1" });
    await createStopped(names.other, { [REPLICAS_LABEL]: "1", [STOPPED_BY_LABEL]: `${prefix}-elsewhere` });
  }, 60_000);

  afterAll(async () => {
    await dockerCli(["service", "rm", ...Object.values(names)]).catch(() => {});
  });

  it("scales back its own and unmarked services, and leaves another agent's stopped", async () => {
    const started = await restartServicesStoppedForVolumes(docker, serverId);
    // Another agent of the suite starting meanwhile may scale the unmarked one back first.
    expect(started).toContain(names.mine);
    expect(started).not.toContain(names.other);
    const mine = await state(names.mine);
    expect(mine.replicas).toBe(2);
    expect(mine.labels).not.toHaveProperty(REPLICAS_LABEL);
    expect(mine.labels).not.toHaveProperty(STOPPED_BY_LABEL);
    expect((await state(names.legacy)).replicas).toBe(1);
    const other = await state(names.other);
    expect(other.replicas).toBe(0);
    expect(other.labels[STOPPED_BY_LABEL]).toBe(`${prefix}-elsewhere`);
  });
});
