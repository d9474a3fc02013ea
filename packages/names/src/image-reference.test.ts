/** Image references as the engine's grammar accepts them, and what it refuses. */

import { describe, expect, it } from "vitest";
import { isImageReference } from "./names.ts";

const digest = `sha256:${"a1".repeat(32)}`;

describe("isImageReference", () => {
  it.each([
    "traefik",
    "traefik:v3",
    "traefik:v3.1.2",
    "library/traefik:v3",
    "docker.io/library/traefik:v3",
    "localhost:5000/platform/traefik:latest",
    "Registry.Example.com/team/traefik",
    "[::1]:5000/traefik:v3",
    "platform-test/traefik-standin:latest",
    "my__image_name.x--y:TAG_1",
    `traefik@${digest}`,
    `traefik:v3@${digest}`,
    `traefik:${"t".repeat(128)}`,
  ])("accepts %s", (reference) => {
    expect(isImageReference(reference)).toBe(true);
  });

  it.each([
    "",
    "Traefik",
    "UPPER/Case:v3",
    "traefik:",
    "traefik:-v3",
    ":v3",
    "traefik v3",
    "traefik:v3; rm -rf /",
    "traefik:v3\n",
    "$(reboot)",
    "a//b",
    "/traefik",
    "traefik/",
    "-traefik",
    "--privileged",
    "traefik@sha256:abc",
    `traefik:${"t".repeat(129)}`,
    "a".repeat(256),
  ])("refuses %j", (reference) => {
    expect(isImageReference(reference)).toBe(false);
  });

  it("refuses what is not a string", () => {
    expect(isImageReference(undefined)).toBe(false);
    expect(isImageReference(42)).toBe(false);
  });
});
