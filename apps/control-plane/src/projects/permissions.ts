/**
 * Who may create and delete projects and environments (spec 2.10 permission flags).
 * Owners and administrators always may; members need canCreateProjects / canDeleteProjects.
 * Everything else about projects and environments is open to every member of the organization.
 */
import type { Caller } from "../context.ts";
import { forbidden } from "../errors.ts";

const privileged = (caller: Caller) => caller.role === "owner" || caller.role === "admin";

/** project.create and project.duplicate into a new project. */
export function requireCanCreateProjects(caller: Caller): void {
  if (!privileged(caller) && !caller.canCreateProjects) {
    throw forbidden("You do not have permission to create projects (canCreateProjects)");
  }
}

/**
 * project.remove, environment.remove and the deletion of a service (application.delete,
 * clearing deployments): all irreversibly delete services.
 */
export function requireCanDeleteProjects(
  caller: Caller,
  what: "projects" | "environments" | "services",
): void {
  if (!privileged(caller) && !caller.canDeleteProjects) {
    throw forbidden(`You do not have permission to delete ${what} (canDeleteProjects)`);
  }
}
