/**
 * The caller's effective permissions as Dokploy's user.getPermissions shows them: each resource
 * with each action true or false. Computed by the same rules the procedures enforce
 * (projects/permissions.ts: owners and administrators may do everything, a member by their
 * flags), so the answer is what the caller would meet, not a copy of the stored flags.
 */
import { z } from "zod";
import type { Caller } from "../context.ts";
import type { Db } from "../db/database.ts";
import { grantsOf, privileged } from "../projects/permissions.ts";

const actions = <const A extends readonly string[]>(names: A) =>
  z.object(
    Object.fromEntries(names.map((name) => [name, z.boolean()])) as { [K in A[number]]: z.ZodBoolean },
  );

export const permissionsSchema = z.object({
  project: actions(["create", "delete"]),
  environment: actions(["create", "delete"]),
  service: actions(["create", "delete"]),
  docker: actions(["read"]),
  traefikFiles: actions(["read"]),
  api: actions(["read"]),
  sshKeys: actions(["read"]),
  gitProviders: actions(["read"]),
  /** The organization's members: reading, inviting and removing (administrators), changing permissions (the owner). */
  member: actions(["read", "create", "update", "delete"]),
});
export type Permissions = z.infer<typeof permissionsSchema>;

export async function effectivePermissions(db: Db, caller: Caller): Promise<Permissions> {
  const grants = await grantsOf(db, caller);
  const all = privileged(caller);
  const feature = (name: keyof Caller["features"]) => ({ read: all || caller.features[name] });
  return {
    project: {
      create: all || caller.canCreateProjects,
      delete: all || caller.canDeleteProjects,
    },
    environment: { create: grants.canCreateEnvironments, delete: grants.canDeleteEnvironments },
    service: { create: grants.canCreateServices, delete: grants.canDeleteServices },
    docker: feature("docker"),
    traefikFiles: feature("traefikFiles"),
    api: feature("api"),
    sshKeys: feature("sshKeys"),
    gitProviders: feature("gitProviders"),
    member: { read: all, create: all, update: caller.role === "owner", delete: all },
  };
}
