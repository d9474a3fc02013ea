/**
 * The agent's schedule jobs refuse what would not be an argv of a known shell, or a container
 * chosen without an owner, before they touch Docker (the engine stand-in here fails any call).
 * Runs on the real engine are in the control plane's schedules/e2e.test.ts.
 */
import type Docker from "dockerode";
import { describe, expect, it } from "vitest";
import { LogStream, SecretMasker } from "../deploy/log-stream.ts";
import { runHostScript, runSchedule } from "./index.ts";

const untouchable = new Proxy(
  {},
  {
    get: () => {
      throw new Error("Docker must not be called");
    },
  },
) as unknown as Docker;
const log = () => new LogStream("", () => {}, new SecretMasker([]));
const signal = new AbortController().signal;
const owner = { organizationId: "org-1", resource: "application:app-1" };
const command = {
  jobId: "d-1",
  logStreamId: "",
  owner,
  swarmServiceName: "web",
  composeProject: "",
  composeService: "",
  shell: "sh",
  command: "echo hi",
  timezone: "",
};

describe("runSchedule / runHostScript", () => {
  it.each([
    [{ shell: "zsh" }, /shell must be bash or sh/],
    [{ shell: "/bin/sh -c id;" }, /shell must be bash or sh/],
    [{ command: "" }, /command is required/],
    [{ timezone: "UTC; id" }, /timezone/],
    [{ timezone: "$(id)" }, /timezone/],
    [{ owner: undefined }, /owner/],
    [{ owner: { organizationId: "", resource: "application:app-1" } }, /owner/],
    [{ swarmServiceName: "" }, /swarmServiceName, or composeProject and composeService/],
    [{ swarmServiceName: "web;id" }, /swarmServiceName/],
    [{ swarmServiceName: "", composeProject: "shop", composeService: "$(id)" }, /composeService/],
  ])("refuses %j before touching Docker", async (change, message) => {
    await expect(runSchedule(untouchable, { ...command, ...change }, log(), signal)).rejects.toThrow(message);
  });

  it("refuses a host script of an unknown shell or time zone", async () => {
    const script = { jobId: "d-2", logStreamId: "", shell: "sh", script: "true", timezone: "" };
    await expect(runHostScript({ ...script, shell: "python" }, log(), signal)).rejects.toThrow(/shell/);
    await expect(runHostScript({ ...script, timezone: "a b" }, log(), signal)).rejects.toThrow(/timezone/);
    await expect(runHostScript({ ...script, script: "" }, log(), signal)).rejects.toThrow(
      /script is required/,
    );
  });

  it("runs a host script as one argument of the shell, its exit code failing the job", async () => {
    const lines: string[] = [];
    const stream = new LogStream(
      "s",
      (chunk) => lines.push(new TextDecoder().decode(chunk.data)),
      new SecretMasker([]),
    );
    const script = { jobId: "d-3", logStreamId: "s", shell: "sh", timezone: "Asia/Tokyo" };
    const done = await runHostScript({ ...script, script: `echo "$TZ;$((1+1))" 'a|b'` }, stream, signal);
    expect(done.exitCode).toBe(0);
    expect(lines.join("")).toContain("Asia/Tokyo;2 a|b");
    await expect(runHostScript({ ...script, script: "exit 3" }, stream, signal)).rejects.toThrow(/code 3/);
  });
});
