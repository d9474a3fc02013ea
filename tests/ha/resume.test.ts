/**
 * Work resuming after the loss of a copy, with NATS JetStream (issue 40 item 6e): two copies on
 * one database and one NATS (JWT), an application deployed twice in a row. kill -9 of the copy
 * running the first deployment: the other copy finishes both, each ran once (the service's
 * container starts, counted in a bind-mounted file, one per deployment that reached it), and the
 * two never ran at the same time, though the short ack wait hands the dead copy's message out
 * again long before its lease runs out (observed: the running deployments of the application
 * sampled all along, and their recorded start and end).
 */
import { chmod, mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { dockerCli, requireDocker, TEST_IMAGE, uniqueName } from "../../apps/agent/src/testing/docker.ts";
import { type JwtNats, startJwtNats } from "../../apps/control-plane/src/agents/testing/nats-jwt.ts";
import { openDatabase } from "../../apps/control-plane/src/db/database.ts";
import { createTestDatabase } from "../../apps/control-plane/src/testing/harness.ts";
import type { ApiClient, ControlPlaneProcess } from "../support/control-plane.ts";
import { Stop, startCopy as startSharedCopy, waitFor } from "./support.ts";

let nats: JwtNats;
let database: Awaited<ReturnType<typeof createTestDatabase>>;
const copies: ControlPlaneProcess[] = [];
const cleanups: (() => Promise<unknown>)[] = [];
const copySet = { prefix: "ha-resume-", copies, cleanups };
const byName = new Map<string, { copy: ControlPlaneProcess; api: ApiClient }>();

async function startCopy(name: string): Promise<{ copy: ControlPlaneProcess; api: ApiClient }> {
  const started = await startSharedCopy(
    copySet,
    name,
    {
      ...nats.env,
      PLATFORM_SECRET_KEY: "ha-resume-secret-key-0123456789abcdef01",
      RECONCILE_INTERVAL_MS: "1000",
    },
    database,
  );
  byName.set(name, started);
  return started;
}

function until(what: string, check: () => Promise<boolean>, timeoutMs = 90_000): Promise<void> {
  return waitFor(copies, what, check, { timeoutMs });
}

beforeAll(async () => {
  await requireDocker();
  nats = await startJwtNats({ jetstream: true });
  database = await createTestDatabase();
  const a = await startCopy("resume-a");
  const b = await startCopy("resume-b");
  const session = await a.api.mutateOk("auth.register", {
    email: "owner@example.com",
    password: "correct-horse-battery",
    name: "Owner",
  });
  a.api.token = session.token;
  b.api.token = session.token;
}, 180_000);

afterAll(async () => {
  for (const copy of copies) await copy.stop();
  for (const cleanup of cleanups.reverse()) await cleanup().catch(() => {});
  await database?.drop();
  await nats?.stop();
}, 120_000);

describe("kill -9 of the copy running a deployment, with NATS", () => {
  it("the other copy finishes it and the one queued behind it, each run once, never two at a time", async () => {
    const a = byName.get("resume-a")!.api;
    const created = await a.mutateOk("project.create", { name: "Resume" });
    const environmentId = created.environment.environmentId as string;
    const appName = uniqueName("ha-resume");
    const { applicationId } = await a.mutateOk("application.create", {
      name: appName,
      appName,
      environmentId,
    });
    cleanups.push(() => dockerCli(["service", "rm", appName]));
    const starts = await mkdtemp(path.join(tmpdir(), "ha-resume-starts-"));
    await chmod(starts, 0o777);
    cleanups.push(() => rm(starts, { recursive: true, force: true }));
    await a.mutateOk("application.saveDockerProvider", { applicationId, dockerImage: TEST_IMAGE });
    // One line per container start: one per deployment that reached the service.
    await a.mutateOk("application.update", {
      applicationId,
      command: `sh -c 'trap "exit 0" TERM; echo start >> /starts/count; mkdir -p /tmp/w && echo ok > /tmp/w/index.html && httpd -f -p 8080 -h /tmp/w & wait'`,
    });
    await a.mutateOk("mounts.create", {
      type: "bind",
      hostPath: starts,
      mountPath: "/starts",
      serviceType: "application",
      serviceId: applicationId,
    });

    const db = await openDatabase(database.target);
    cleanups.push(() => db.close());
    const running = () =>
      db.db
        .selectFrom("deployments")
        .select("deploymentId")
        .where("applicationId", "=", applicationId)
        .where("status", "=", "running")
        .execute();
    // Sampled all along: never two running deployments of the application.
    let mostRunning = 0;
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        mostRunning = Math.max(mostRunning, (await running().catch(() => [])).length);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    })();

    try {
      const first = await a.mutateOk("application.deploy", { applicationId });
      const second = await a.mutateOk("application.deploy", { applicationId });
      const ids = [first.deploymentId as string, second.deploymentId as string];
      expect(ids.every(Boolean)).toBe(true);
      // The copy whose lease holds the first deployment is the one to kill.
      let holder: string | undefined;
      await until("the first deployment running under a copy's lease", async () => {
        const lease = await db.db
          .selectFrom("deploymentLeases")
          .innerJoin("deployments", "deployments.deploymentId", "deploymentLeases.deploymentId")
          .select(["deploymentLeases.owner", "deployments.status"])
          .where("deploymentLeases.deploymentId", "=", ids[0]!)
          .executeTakeFirst();
        if (!lease) {
          const row = await statusOf(ids[0]!);
          if (row === "done" || row === "error")
            throw new Stop(`the first deployment ended (${row}) before the kill`);
          return false;
        }
        holder = lease.owner;
        return lease.status === "running";
      });
      const killed = byName.get(holder!);
      expect(killed, `the lease owner ${holder} is one of the copies`).toBeDefined();
      killed!.copy.child.kill("SIGKILL");
      const survivor = [...byName.entries()].find(([name]) => name !== holder)![1].api;

      await until(
        "both deployments done on the surviving copy",
        async () => {
          const all = await survivor.queryOk<{ deploymentId: string; status: string }[]>("deployment.all", {
            applicationId,
          });
          const statuses = ids.map((id) => all.find((d) => d.deploymentId === id)?.status);
          if (statuses.includes("error")) throw new Stop(`a deployment failed: ${statuses.join(",")}`);
          return statuses.every((status) => status === "done");
        },
        120_000,
      );
      // Each ran once: one container start per deployment.
      const lines = (await readFile(path.join(starts, "count"), "utf8")).split("\n").filter(Boolean);
      expect(lines).toHaveLength(2);
      const rows = await db.db
        .selectFrom("deployments")
        .select(["deploymentId", "startedAt", "completedAt"])
        .where("deploymentId", "in", ids)
        .execute();
      const [one, two] = ids.map((id) => rows.find((row) => row.deploymentId === id)!);
      // The second started once the first had ended, as recorded.
      expect(new Date(two!.startedAt!).getTime()).toBeGreaterThanOrEqual(
        new Date(one!.completedAt!).getTime(),
      );
    } finally {
      sampling = false;
      await sampler;
    }
    expect(mostRunning).toBe(1);

    async function statusOf(deploymentId: string): Promise<string | undefined> {
      const row = await db.db
        .selectFrom("deployments")
        .select("status")
        .where("deploymentId", "=", deploymentId)
        .executeTakeFirst();
      return row?.status;
    }
  }, 300_000);
});
