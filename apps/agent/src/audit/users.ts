/** Accounts of the audited host, from /etc/passwd and /etc/group. */
import type { HostFiles } from "./host-files.ts";

export interface PasswdEntry {
  name: string;
  uid: number;
  gid: number;
  home: string;
  shell: string;
}

export interface GroupEntry {
  name: string;
  gid: number;
  members: string[];
}

function records(text: string | undefined): string[][] {
  return (text ?? "")
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line && !line.startsWith("#"))
    .map((line) => line.split(":"));
}

export async function readPasswd(files: HostFiles): Promise<PasswdEntry[]> {
  return records(await files.read("/etc/passwd"))
    .filter((fields) => fields.length >= 7)
    .map(([name, , uid, gid, , home, shell]) => ({
      name: name!,
      uid: Number(uid),
      gid: Number(gid),
      home: home ?? "",
      shell: shell ?? "",
    }));
}

export async function readGroups(files: HostFiles): Promise<GroupEntry[]> {
  return records(await files.read("/etc/group"))
    .filter((fields) => fields.length >= 3)
    .map(([name, , gid, members]) => ({
      name: name!,
      gid: Number(gid),
      members: (members ?? "").split(",").filter(Boolean),
    }));
}

/** Whether a login shell lets the user log in (not nologin, false or empty). */
export function isLoginShell(shell: string): boolean {
  const name = shell.split("/").pop() ?? "";
  return name !== "" && name !== "nologin" && name !== "false";
}
