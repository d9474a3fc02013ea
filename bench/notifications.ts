/**
 * `pnpm bench:notifications`: (1) events per second through the notification outbox (fan-out,
 * leased delivery, Custom channel's POST) to a receiver on 127.0.0.1, beside the same number of
 * bare POSTs to that receiver (as many at once as the outbox sends); (2) a deployment's time from
 * application.deploy to `done` with ten channels toggled for appDeploy, beside the same
 * deployment with none, alternating round by round. The control plane runs in-process on NATS
 * and a fresh Postgres database with its agent on the local Docker Engine (what the tests need).
 * BENCH_EVENTS (default 2000), BENCH_ROUNDS (default 4), BENCH_RECEIVER_PORT (default: any free).
 */

import { mkdtemp, rm } from "node:fs/promises";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { recordEvent } from "../apps/control-plane/src/deployments/events.ts";
import { docker, median, startBenchPlatform } from "./support.ts";

const EVENTS = Number(process.env.BENCH_EVENTS ?? 2000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 4);
const CONCURRENCY = 50;
const image = process.env.PLATFORM_TEST_BUSYBOX_IMAGE ?? "platform-test/busybox:latest";

async function main(): Promise<void> {
  let count = 0;
  let waiting: { target: number; resolve: () => void } | undefined;
  const receiver = createServer((request, response) => {
    request.resume();
    request.on("end", () => {
      count++;
      if (waiting && count >= waiting.target) waiting.resolve();
      response.writeHead(200).end("ok");
    });
  });
  await new Promise<void>((resolve) =>
    receiver.listen(Number(process.env.BENCH_RECEIVER_PORT ?? 0), "127.0.0.1", resolve),
  );
  const endpoint = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
  const reached = (target: number) =>
    new Promise<void>((resolve) => {
      if (count >= target) resolve();
      else waiting = { target, resolve };
    });

  const workDir = await mkdtemp(path.join(tmpdir(), "bench-notifications-"));
  const bench = await startBenchPlatform(
    "notifications",
    { PLATFORM_OUTBOUND_ALLOW: "127.0.0.0/8" },
    workDir,
  );
  const services: string[] = [];
  try {
    const { platform, call, environmentId } = bench;
    const organizationId = (
      await platform.ctx.db.selectFrom("organizations").select("organizationId").executeTakeFirstOrThrow()
    ).organizationId;

    // (1) Reference: bare POSTs, CONCURRENCY at a time.
    const body = JSON.stringify({ event: "appDeploy", timestamp: new Date().toISOString(), data: {} });
    let next = 0;
    const bareStarted = performance.now();
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (next++ < EVENTS) {
          const answer = await fetch(endpoint, {
            method: "POST",
            headers: { "content-type": "application/json" },
            body,
          });
          await answer.arrayBuffer();
        }
      }),
    );
    const bareSeconds = (performance.now() - bareStarted) / 1000;

    // (1) Through the outbox: EVENTS events written as emitters write them (in one transaction,
    // so that Postgres's commit rate does not set the pace), then delivered to one channel.
    const channel = await call("notification.createCustom", { name: "bench", appDeploy: true, endpoint });
    count = 0;
    const writeStarted = performance.now();
    await platform.ctx.db.transaction().execute(async (trx) => {
      for (let i = 0; i < EVENTS; i++) {
        await recordEvent(
          trx,
          {
            organizationId,
            kind: "appDeploy",
            applicationId: null,
            payload: { applicationName: "bench", status: "success", message: `event ${i}` },
          },
          new Date(),
        );
      }
    });
    const outboxStarted = performance.now();
    platform.ctx.notifications.kick();
    await reached(EVENTS);
    const outboxSeconds = (performance.now() - outboxStarted) / 1000;
    await call("notification.delete", { notificationId: channel.notificationId });

    // (2) A deployment with ten channels toggled for appDeploy, and with none.
    const channels: string[] = [];
    for (let i = 0; i < 10; i++) {
      const created = await call("notification.createCustom", { name: `bench ${i}`, endpoint });
      channels.push(created.notificationId);
    }
    const toggle = async (on: boolean) => {
      for (const notificationId of channels) {
        await call("notification.updateCustom", { notificationId, appDeploy: on });
      }
    };
    const withNone: number[] = [];
    const withTen: number[] = [];
    for (let round = 0; round < ROUNDS * 2; round++) {
      const on = round % 2 === 1;
      await toggle(on);
      const appName = `bench-notif-${process.pid}-${round}`;
      services.push(appName);
      const app = await call("application.create", { name: "bench", appName, environmentId });
      await call("application.saveDockerProvider", { applicationId: app.applicationId, dockerImage: image });
      await call("application.update", {
        applicationId: app.applicationId,
        command: `sh -c 'trap "exit 0" TERM; sleep 3600 & wait'`,
      });
      const before = count;
      const started = performance.now();
      const { deploymentId } = await call("application.deploy", { applicationId: app.applicationId });
      for (;;) {
        const row = await platform.ctx.db
          .selectFrom("deployments")
          .select("status")
          .where("deploymentId", "=", deploymentId)
          .executeTakeFirstOrThrow();
        if (row.status === "done") break;
        if (row.status === "error") throw new Error(`deployment ${deploymentId} failed`);
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      const ms = performance.now() - started;
      (on ? withTen : withNone).push(ms);
      if (on) await reached(before + 10);
      process.stdout.write(
        `round ${round + 1}/${ROUNDS * 2}: ${on ? "ten channels" : "no channel  "} ${ms.toFixed(0)} ms\n`,
      );
    }

    console.log(`\nnotification outbox, ${EVENTS} events to one Custom channel on 127.0.0.1`);
    console.log(
      `  ${"through the outbox (fan out, lease, POST, mark)".padEnd(50)} ${(EVENTS / outboxSeconds).toFixed(0).padStart(7)} events/s`,
    );
    console.log(
      `  ${"writing the events (one transaction)".padEnd(50)} ${(EVENTS / ((outboxStarted - writeStarted) / 1000)).toFixed(0).padStart(7)} events/s`,
    );
    console.log(
      `  ${`bare POSTs, ${CONCURRENCY} at a time (reference)`.padEnd(50)} ${(EVENTS / bareSeconds).toFixed(0).padStart(7)} requests/s`,
    );
    const none = median(withNone);
    const ten = median(withTen);
    console.log(`\ndeploy of a prebuilt image until done (median of ${ROUNDS} rounds each)`);
    console.log(`  ${"no channel toggled".padEnd(50)} ${none.toFixed(0).padStart(7)} ms`);
    console.log(`  ${"ten channels toggled for appDeploy".padEnd(50)} ${ten.toFixed(0).padStart(7)} ms`);
    console.log(`  ${"added latency".padEnd(50)} ${(ten - none).toFixed(0).padStart(7)} ms`);
  } finally {
    for (const name of services) await docker(["service", "rm", name]).catch(() => {});
    await bench.platform.close();
    receiver.closeAllConnections();
    receiver.close();
    await rm(workDir, { recursive: true, force: true });
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
