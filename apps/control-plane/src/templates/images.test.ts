/**
 * PLATFORM_TEMPLATE_IMAGES and PLATFORM_TEMPLATES_URL: how they are read from the environment
 * (a bad value names the variable), and which images an override replaces.
 */
import { describe, expect, it } from "vitest";
import { loadConfig } from "../config.ts";
import { type ImageOverrides, overrideImage, parseImageOverrides } from "./images.ts";

function overrides(text: string): ImageOverrides {
  const parsed = parseImageOverrides(text);
  if ("problem" in parsed) throw new Error(parsed.problem);
  return parsed.overrides;
}

describe("template image overrides", () => {
  it("replace an exact image, or a repository keeping the template's tag or digest", () => {
    const map = overrides(
      "postgres:16-alpine=registry.local/pg:test, redis=registry.local/mirror/redis, ghcr.io/acme/app=registry.local:5000/acme/app",
    );
    expect(overrideImage("postgres:16-alpine", map)).toBe("registry.local/pg:test");
    expect(overrideImage("docker.io/library/postgres:16-alpine", map)).toBe("registry.local/pg:test");
    expect(overrideImage("postgres:17", map)).toBe("postgres:17");
    expect(overrideImage("redis:7", map)).toBe("registry.local/mirror/redis:7");
    expect(overrideImage("library/redis", map)).toBe("registry.local/mirror/redis");
    expect(overrideImage(`redis@sha256:${"b".repeat(64)}`, map)).toBe(
      `registry.local/mirror/redis@sha256:${"b".repeat(64)}`,
    );
    expect(overrideImage("ghcr.io/acme/app:2.0", map)).toBe("registry.local:5000/acme/app:2.0");
    expect(overrideImage("ghcr.io/acme/other:2.0", map)).toBe("ghcr.io/acme/other:2.0");
    // A registry port is not a tag.
    const ported = overrides("registry.local:5000/app=mirror.local/app");
    expect(overrideImage("registry.local:5000/app:1", ported)).toBe("mirror.local/app:1");
    expect(overrideImage("nginx", undefined)).toBe("nginx");
  });

  it("read a JSON object too, and name a bad entry", () => {
    expect(overrideImage("nginx:1.27", overrides('{"nginx": "registry.local/nginx:stable"}'))).toBe(
      "registry.local/nginx:stable",
    );
    expect(parseImageOverrides("nginx")).toEqual({ problem: '"nginx" is not from=to' });
    expect(parseImageOverrides("nginx=bad image")).toEqual({
      problem: '"bad image" is not a Docker image reference',
    });
    expect(parseImageOverrides("{nope")).toEqual({ problem: "is not valid JSON" });
    expect(parseImageOverrides('{"a": 1}')).toEqual({ problem: 'the image for "a" must be a string' });
  });

  it("come from PLATFORM_TEMPLATE_IMAGES, and PLATFORM_TEMPLATES_URL must be http(s)", () => {
    const config = loadConfig({
      PLATFORM_TEMPLATE_IMAGES: "uptime-kuma=registry.local/kuma",
      PLATFORM_TEMPLATES_URL: "https://templates.example.com/",
    });
    expect(overrideImage("louislam/uptime-kuma:1", config.templateImages)).toBe("louislam/uptime-kuma:1");
    expect(overrideImage("uptime-kuma:1", config.templateImages)).toBe("registry.local/kuma:1");
    expect(config.templatesUrl).toBe("https://templates.example.com");
    expect(loadConfig({})).toMatchObject({ templatesUrl: undefined, templateImages: undefined });
    expect(() => loadConfig({ PLATFORM_TEMPLATE_IMAGES: "nope" })).toThrow(
      /PLATFORM_TEMPLATE_IMAGES: "nope" is not from=to/,
    );
    expect(() => loadConfig({ PLATFORM_TEMPLATES_URL: "file:///etc" })).toThrow(
      /PLATFORM_TEMPLATES_URL: must be an http/,
    );
  });
});
