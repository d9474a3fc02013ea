/**
 * swarmSpec: an application's own Swarm update and rollback settings go over the platform's
 * defaults instead of replacing them, and a host-mode port keeps stop-first.
 */
import { asReceived, type Init, type ServiceSpec } from "@platform/agent-protocol";
import { describe, expect, it } from "vitest";
import { swarmSpec } from "./service.ts";

const owner = { organizationId: "org-1", resource: "application:app-1" };
const base: Init<ServiceSpec> = {
  name: "web-1",
  image: "busybox:latest",
  replicas: 1,
  networks: [],
  ports: [],
  env: [],
};
const specOf = (extra: Init<ServiceSpec>) =>
  swarmSpec(asReceived("ServiceSpec", { ...base, ...extra }), [], [], 1, owner) as Record<
    string,
    Record<string, unknown>
  >;

describe("swarmSpec update and rollback settings", () => {
  it("keeps the defaults (rollback on failure, the health monitor) under a partial user setting", () => {
    const spec = specOf({ swarmSettingsJson: JSON.stringify({ UpdateConfig: { Parallelism: 2 } }) });
    expect(spec.UpdateConfig).toMatchObject({
      Parallelism: 2,
      FailureAction: "rollback",
      Order: "start-first",
    });
    expect(spec.UpdateConfig!.Monitor).toBeGreaterThan(0);
    expect(spec.RollbackConfig).toMatchObject({ Parallelism: 1, FailureAction: "pause" });
  });

  it("keeps stop-first with a host-mode port, whatever order the user asked", () => {
    const spec = specOf({
      ports: [{ publishedPort: 18080, targetPort: 80, protocol: "tcp", publishMode: "host" }],
      swarmSettingsJson: JSON.stringify({ UpdateConfig: { Parallelism: 1, Order: "start-first" } }),
    });
    expect(spec.UpdateConfig!.Order).toBe("stop-first");
    expect(spec.RollbackConfig!.Order).toBe("stop-first");
  });
});
