/**
 * Tool probes with fake executables on a private PATH: versions are read from `--version`
 * output, and a missing, failing or hanging tool is reported as not installed.
 */
import { chmod, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { validateServer } from "./index.ts";
import { composeStatus, findComposeCommand, parseVersion, toolStatus } from "./tools.ts";

let bin: string;

async function fakeTool(name: string, script: string): Promise<void> {
  const file = path.join(bin, name);
  await writeFile(file, `#!/bin/sh\n${script}\n`);
  await chmod(file, 0o755);
}

beforeAll(async () => {
  bin = await mkdtemp(path.join(tmpdir(), "agent-tools-"));
  await fakeTool("rclone", 'echo "rclone v1.68.2"; echo "- os/version: debian 12.7"');
  await fakeTool("nixpacks", 'echo "nixpacks 1.29.0"');
  await fakeTool("pack", 'echo "0.36.0+git-1a2b3c4.build-6543"');
  await fakeTool("railpack", "sleep 5");
  await fakeTool("broken", 'echo "boom" >&2; exit 3');
});

afterAll(async () => {
  await rm(bin, { recursive: true, force: true });
});

describe("tool probes", () => {
  it("parses the versions tools print", () => {
    expect(parseVersion("rclone v1.68.2\n- os/version")).toBe("1.68.2");
    expect(parseVersion("nixpacks 1.29.0")).toBe("1.29.0");
    expect(parseVersion("0.36.0+git-1a2b3c4.build-6543")).toBe("0.36.0+git-1a2b3c4.build-6543");
    expect(parseVersion("railpack version 0.0.64")).toBe("0.0.64");
    expect(parseVersion("Docker version 27.3.1, build ce12230")).toBe("27.3.1");
    expect(parseVersion("no digits here")).toBeUndefined();
  });

  it("reports installed tools with their versions and the others as absent", async () => {
    const options = { searchPath: bin, timeoutMs: 500 };
    expect(await toolStatus("rclone", options)).toEqual({ enabled: true, version: "1.68.2" });
    expect(await toolStatus("nixpacks", options)).toEqual({ enabled: true, version: "1.29.0" });
    expect(await toolStatus("pack", options)).toEqual({
      enabled: true,
      version: "0.36.0+git-1a2b3c4.build-6543",
    });
    expect(await toolStatus("absent-tool", options)).toEqual({ enabled: false });
    expect(await toolStatus("broken", options)).toEqual({ enabled: false });
  });

  it("gives up on a tool that hangs", async () => {
    const started = Date.now();
    expect(await toolStatus("railpack", { searchPath: bin, timeoutMs: 300 })).toEqual({ enabled: false });
    expect(Date.now() - started).toBeLessThan(4000);
  });

  it("puts the probes under the spec's names (buildpacks is the pack CLI)", async () => {
    const result = await validateServer(
      // No engine: the Docker facts read as absent.
      (await import("../docker/engine.ts")).createDockerClient("/nonexistent/docker.sock"),
      { mainDirectory: bin, searchPath: bin, timeoutMs: 300 },
    );
    expect(result).toEqual({
      docker: { enabled: false },
      rclone: { enabled: true, version: "1.68.2" },
      nixpacks: { enabled: true, version: "1.29.0" },
      buildpacks: { enabled: true, version: "0.36.0+git-1a2b3c4.build-6543" },
      railpack: { enabled: false },
      isPlatformNetworkInstalled: false,
      isSwarmInstalled: false,
      isMainDirectoryInstalled: true,
      // No docker CLI on this search path: no buildx, no Compose either.
      buildx: { enabled: false },
      compose: { enabled: false },
    });
  });

  it("finds Compose: the docker CLI's compose plugin first, else the docker-compose command (v1)", async () => {
    const v1Only = await mkdtemp(path.join(tmpdir(), "agent-compose-v1-"));
    const both = await mkdtemp(path.join(tmpdir(), "agent-compose-v2-"));
    try {
      const v1 = 'echo "docker-compose version 1.29.2, build unknown"';
      const docker =
        '[ "$1" = compose ] && [ "$2" = version ] && echo "Docker Compose version v2.29.1" || exit 1';
      for (const [directory, name, script] of [
        [v1Only, "docker-compose", v1],
        [v1Only, "docker", "exit 1"],
        [both, "docker-compose", v1],
        [both, "docker", docker],
      ] as const) {
        await writeFile(path.join(directory, name), `#!/bin/sh\n${script}\n`);
        await chmod(path.join(directory, name), 0o755);
      }
      expect(await findComposeCommand("docker", { searchPath: v1Only })).toEqual({
        command: "docker-compose",
        args: [],
        version: "1.29.2",
      });
      expect(await composeStatus({ searchPath: v1Only })).toEqual({ enabled: true, version: "1.29.2" });
      expect(await findComposeCommand("docker", { searchPath: both })).toEqual({
        command: "docker",
        args: ["compose"],
        version: "2.29.1",
      });
      expect(await findComposeCommand("docker", { searchPath: bin })).toBeUndefined();
    } finally {
      await rm(v1Only, { recursive: true, force: true });
      await rm(both, { recursive: true, force: true });
    }
  });
});
