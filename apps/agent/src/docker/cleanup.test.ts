/**
 * The scope rules of a Docker cleanup: exactly one of an organization or the whole engine, and
 * the ownerless build cache only for the whole engine. (The prunes themselves run on the real
 * engine in apps/control-plane/src/maintenance/docker-cleanup.test.ts.)
 */
import { asReceived } from "@platform/agent-protocol";
import { describe, expect, it } from "vitest";
import { CommandError } from "../command-error.ts";
import { cleanupFilters } from "./cleanup.ts";

const refusal = (run: () => unknown) => {
  try {
    run();
  } catch (error) {
    return error instanceof CommandError ? error.code : "other";
  }
  return "accepted";
};

describe("cleanupFilters", () => {
  it("keeps an organization's cleanup to the objects labelled with its id", () => {
    expect(
      cleanupFilters(asReceived("CleanDockerCommand", { containers: true, organizationId: "org-1" })),
    ).toEqual({
      label: ["platform.managed=true", "platform.organization=org-1"],
    });
  });

  it("leaves the platform's own objects out of a whole-engine cleanup", () => {
    expect(
      cleanupFilters(asReceived("CleanDockerCommand", { images: true, buildCache: true, wholeEngine: true })),
    ).toEqual({
      "label!": ["platform.internal"],
    });
  });

  it("refuses no scope, both scopes, a malformed id and the build cache of one organization", () => {
    expect(refusal(() => cleanupFilters(asReceived("CleanDockerCommand", { containers: true })))).toBe(
      "INVALID_ARGUMENT",
    );
    expect(
      refusal(() =>
        cleanupFilters(
          asReceived("CleanDockerCommand", { containers: true, organizationId: "org-1", wholeEngine: true }),
        ),
      ),
    ).toBe("INVALID_ARGUMENT");
    expect(
      refusal(() =>
        cleanupFilters(asReceived("CleanDockerCommand", { containers: true, organizationId: "a=b,c" })),
      ),
    ).toBe("INVALID_ARGUMENT");
    expect(
      refusal(() =>
        cleanupFilters(asReceived("CleanDockerCommand", { buildCache: true, organizationId: "org-1" })),
      ),
    ).toBe("INVALID_ARGUMENT");
  });
});
