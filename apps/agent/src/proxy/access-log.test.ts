/**
 * Reading the proxy's access log: a recorded Traefik JSON access log (fixtures/access.log, one
 * line cut by rotation) parsed, filtered and paged; a missing file is an empty page.
 */
import { mkdtemp, rm, symlink } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { asReceived } from "@platform/agent-protocol";
import { describe, expect, it } from "vitest";
import { CommandError } from "../command-error.ts";
import { parseAccessLogLine, readAccessLog } from "./access-log.ts";

const fixture = fileURLToPath(new URL("./fixtures/access.log", import.meta.url));

describe("the proxy's access log", () => {
  it("reads every request of Traefik's JSON lines and skips a cut one", async () => {
    const page = await readAccessLog(
      fixture,
      asReceived("ReadAccessLogCommand", { page: 1, pageSize: 100, sortField: "timestamp" }),
    );
    expect(page.exists).toBe(true);
    expect(page.totalCount).toBe(8);
    expect(page.entries[0]).toMatchObject({ path: "/", method: "GET", status: 200, ip: "203.0.113.7" });
    expect(parseAccessLogLine('{"ClientAddr":"192.0.2.44:5123')).toBeNull();
    expect(parseAccessLogLine("[1,2]")).toBeNull();
  });

  it("answers an empty page for a missing file and refuses a symlink or a bad page", async () => {
    const directory = await mkdtemp(path.join(tmpdir(), "agent-access-log-"));
    try {
      expect(
        await readAccessLog(
          path.join(directory, "access.log"),
          asReceived("ReadAccessLogCommand", { page: 1, pageSize: 10 }),
        ),
      ).toEqual({
        entries: [],
        totalCount: 0,
        exists: false,
      });
      await symlink(fixture, path.join(directory, "link.log"));
      await expect(
        readAccessLog(
          path.join(directory, "link.log"),
          asReceived("ReadAccessLogCommand", { page: 1, pageSize: 10 }),
        ),
      ).rejects.toThrow(CommandError);
      await expect(
        readAccessLog(fixture, asReceived("ReadAccessLogCommand", { page: 0, pageSize: 10 })),
      ).rejects.toThrow(/page/);
      await expect(
        readAccessLog(
          fixture,
          asReceived("ReadAccessLogCommand", { page: 1, pageSize: 10, status: ["7xx"] }),
        ),
      ).rejects.toThrow(/status/);
    } finally {
      await rm(directory, { recursive: true, force: true });
    }
  });

  it("refuses a sort field it does not know instead of reading it as a property of the entries", async () => {
    const sortedBy = (sortField: string) =>
      readAccessLog(fixture, asReceived("ReadAccessLogCommand", { page: 1, pageSize: 10, sortField }));
    for (const sortField of ["constructor", "__proto__", "size"]) {
      await expect(sortedBy(sortField), sortField).rejects.toThrow(/sortField must be one of/);
    }
    expect((await sortedBy("userAgent")).totalCount).toBe(8);
  });
});
