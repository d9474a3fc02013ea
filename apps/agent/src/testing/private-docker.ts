/**
 * A private Docker Engine for tests that must prune a whole engine: its own dockerd (and the
 * containerd it starts) in a network namespace of its own, with its own data, exec root and
 * socket under a temporary directory, no bridge and no iptables rules, so nothing of the shared
 * engine (or the host's network) is touched.
 * Needs root and Debian's docker.io (`dockerd`), which scripts/docker-setup.sh installs.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { createReadStream } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import type Docker from "dockerode";
import { createDockerClient } from "../docker/engine.ts";
import { dockerCli } from "./docker.ts";

export interface PrivateDocker {
  docker: Docker;
  socketPath: string;
  stop(): Promise<void>;
}

export async function startPrivateDocker(): Promise<PrivateDocker> {
  const directory = await mkdtemp(path.join(tmpdir(), "private-dockerd-"));
  const socketPath = path.join(directory, "docker.sock");
  const namespace = path.basename(directory).replace(/[^a-zA-Z0-9]/g, "");
  // In a network namespace of its own: with --bridge=none dockerd deletes any `docker0` link
  // it sees, which on the host is the shared engine's bridge.
  const daemon: ChildProcess = spawn(
    "unshare",
    [
      "--net",
      "--",
      "dockerd",
      `--data-root=${directory}/data`,
      `--exec-root=${directory}/exec`,
      `--pidfile=${directory}/dockerd.pid`,
      `--host=unix://${socketPath}`,
      "--bridge=none",
      "--iptables=false",
      "--ip6tables=false",
      "--ip-masq=false",
      "--storage-driver=vfs",
      `--containerd-namespace=${namespace}`,
      `--containerd-plugins-namespace=${namespace}-plugins`,
    ],
    { stdio: "ignore" },
  );
  const exited = new Promise<void>((resolve) => daemon.once("exit", () => resolve()));
  const stop = async () => {
    if (daemon.exitCode === null) {
      daemon.kill("SIGTERM");
      const killed = setTimeout(() => daemon.kill("SIGKILL"), 15_000);
      await exited;
      clearTimeout(killed);
    }
    await rm(directory, { recursive: true, force: true });
  };
  const docker = createDockerClient(socketPath, 60_000);
  for (let waited = 0; ; waited += 200) {
    try {
      await docker.ping();
      break;
    } catch (error) {
      if (waited > 30_000 || daemon.exitCode !== null) {
        await stop();
        throw new Error(`the private dockerd did not start: ${(error as Error).message}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
  return { docker, socketPath, stop };
}

/** Copies an image of the shared engine into the private one (docker save | docker load). */
export async function copyImageInto(engine: PrivateDocker, image: string): Promise<void> {
  const archive = path.join(path.dirname(engine.socketPath), "image.tar");
  await dockerCli(["save", "-o", archive, image]);
  const output = await engine.docker.loadImage(createReadStream(archive));
  await new Promise((resolve, reject) =>
    engine.docker.modem.followProgress(output, (error) => (error ? reject(error) : resolve(undefined))),
  );
  await rm(archive, { force: true });
}
