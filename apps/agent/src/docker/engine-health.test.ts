/**
 * The image settings.updateServer rolls the control plane to: its image's repository with the
 * new release's tag, whatever registry (with a port) or digest it was pinned by.
 */
import { describe, expect, it } from "vitest";
import { retagged } from "./engine-health.ts";

describe("retagged", () => {
  it.each([
    ["platform/control-plane:1.0.0", "platform/control-plane:1.2.0"],
    ["platform/control-plane", "platform/control-plane:1.2.0"],
    ["registry.example.com:5000/platform/cp:1.0.0", "registry.example.com:5000/platform/cp:1.2.0"],
    ["registry.example.com:5000/platform/cp", "registry.example.com:5000/platform/cp:1.2.0"],
    [`platform/cp:1.0.0@sha256:${"a".repeat(64)}`, "platform/cp:1.2.0"],
  ])("%s becomes %s", (image, expected) => {
    expect(retagged(image, "1.2.0")).toBe(expected);
  });
});
