/**
 * Who may delete applications. As for projects (projects/permissions.ts), every member of the
 * organization may see, create and change its services; deleting one is irreversible, like
 * removing an environment, so members need canDeleteProjects for it too.
 */
import type { Caller } from "../context.ts";
import { forbidden } from "../errors.ts";

export function requireCanDeleteServices(caller: Caller): void {
  if (caller.role === "member" && !caller.canDeleteProjects) {
    throw forbidden("You do not have permission to delete services (canDeleteProjects)");
  }
}
