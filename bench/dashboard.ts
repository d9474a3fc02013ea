/**
 * `pnpm bench:dashboard` (issue 29): the web dashboard's first load in Debian's chromium
 * (headless, a fresh browser context each round, so nothing is cached) — the bytes transferred
 * (compressed, headers included) and the time from navigation to a rendered list of the
 * organization's projects (BENCH_PROJECTS, default 100) — beside a reference measured in the
 * same run: a static HTML page of the same list, rendered by the server from the same
 * project.all answer, gzipped, served by the same process. Signed in by the session cookie, as
 * a user is. The server listens on 127.0.0.1:BENCH_DASHBOARD_PORT (else a free port).
 */
import type { AddressInfo } from "node:net";
import { gzipSync } from "node:zlib";
import { serve } from "@hono/node-server";
import { Hono } from "hono";
import { chromium } from "playwright-core";
import { startTestPlatform } from "../apps/control-plane/src/testing/harness.ts";
import { buildDashboard } from "../scripts/build-dashboard.mjs";
import { median } from "./support.ts";

const CHROMIUM = process.env.PLATFORM_TEST_CHROMIUM ?? "/usr/bin/chromium";
const projects = Number(process.env.BENCH_PROJECTS ?? 100);
const rounds = Number(process.env.BENCH_ROUNDS ?? 7);
const AIM_BYTES = 200 * 1024;

await buildDashboard();
const platform = await startTestPlatform({ LOG_LEVEL: "warn" });
const owner = await platform.registerOwner();
for (let i = 1; i <= projects; i++) {
  await platform.mutateOk(
    "project.create",
    { name: `Project ${String(i).padStart(3, "0")}` },
    { token: owner.token },
  );
}
const login = await platform.app.request("/api/auth.login", {
  method: "POST",
  headers: { "content-type": "application/json" },
  body: JSON.stringify({ email: "owner@example.com", password: "correct-horse-battery" }),
});
const cookies = login.headers.getSetCookie().map((line) => {
  const [pair] = line.split(";");
  const [name, value] = [pair!.slice(0, pair!.indexOf("=")), pair!.slice(pair!.indexOf("=") + 1)];
  return { name, value };
});

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

// The reference: the same list as static HTML from the same answer, in the same process.
const server = new Hono();
server.get("/bench/static", async (c) => {
  const answer = await platform.app.request("/api/project.all", {
    headers: { cookie: c.req.header("cookie") ?? "" },
  });
  const list = (await answer.json()) as { projectId: string; name: string }[];
  const html = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Projects</title></head><body><main><h1>Projects</h1><ul class="cards">${list
    .map(
      (p) =>
        `<li><a class="title" href="#/project/${escapeHtml(p.projectId)}">${escapeHtml(p.name)}</a></li>`,
    )
    .join("")}</ul></main></body></html>`;
  return c.body(new Uint8Array(gzipSync(html)), 200, {
    "content-type": "text/html; charset=utf-8",
    "content-encoding": "gzip",
  });
});
server.all("*", (c) => platform.app.fetch(c.req.raw, c.env));
const listening = serve({
  fetch: server.fetch,
  hostname: "127.0.0.1",
  port: Number(process.env.BENCH_DASHBOARD_PORT ?? 0),
});
await new Promise((resolve) => listening.once("listening", resolve));
const base = `http://127.0.0.1:${(listening.address() as AddressInfo).port}`;

const browser = await chromium.launch({
  executablePath: CHROMIUM,
  args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run"],
});

async function firstLoad(path: string): Promise<{ bytes: number; ms: number }> {
  const context = await browser.newContext();
  await context.addCookies(cookies.map(({ name, value }) => ({ name, value, url: base })));
  const page = await context.newPage();
  const responses: Promise<number>[] = [];
  page.on("response", (response) =>
    responses.push(
      response
        .request()
        .sizes()
        .then((sizes) => sizes.responseBodySize + sizes.responseHeadersSize)
        .catch(() => 0),
    ),
  );
  const started = performance.now();
  await page.goto(`${base}${path}`);
  await page
    .locator(".cards a.title")
    .nth(projects - 1)
    .waitFor();
  const ms = performance.now() - started;
  // The first load's bytes include the requests still running after the list shows.
  await page.waitForLoadState("networkidle");
  const bytes = (await Promise.all(responses)).reduce((sum, size) => sum + size, 0);
  await context.close();
  return { bytes, ms };
}

const results: Record<string, { bytes: number[]; ms: number[] }> = {
  dashboard: { bytes: [], ms: [] },
  static: { bytes: [], ms: [] },
};
// One warm-up of each (the server's first answers compile and fill caches), then alternating rounds.
await firstLoad("/");
await firstLoad("/bench/static");
for (let round = 0; round < rounds; round++) {
  for (const [name, path] of [
    ["dashboard", "/"],
    ["static", "/bench/static"],
  ] as const) {
    const { bytes, ms } = await firstLoad(path);
    results[name]!.bytes.push(bytes);
    results[name]!.ms.push(ms);
  }
}
await browser.close();
await new Promise((resolve) => listening.close(resolve));
await platform.close();

const kb = (bytes: number) => `${(bytes / 1024).toFixed(1)} KiB`;
console.log(`first load of a list of ${projects} projects, signed in, median of ${rounds} rounds`);
for (const [name, figures] of Object.entries(results)) {
  console.log(
    `  ${name.padEnd(9)} transferred ${kb(median(figures.bytes)).padStart(10)}   rendered list in ${median(figures.ms).toFixed(0).padStart(5)} ms`,
  );
}
const dashboardBytes = median(results.dashboard!.bytes);
console.log(
  `  dashboard/static: ${(median(results.dashboard!.ms) / median(results.static!.ms)).toFixed(2)}× the time, ${(dashboardBytes / median(results.static!.bytes)).toFixed(1)}× the bytes; aim ≤ ${kb(AIM_BYTES)}: ${dashboardBytes <= AIM_BYTES ? "met" : "NOT met"}`,
);
