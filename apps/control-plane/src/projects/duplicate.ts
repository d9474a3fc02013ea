/**
 * project.duplicate and environment.duplicate: a copy of an environment, into a new project or a
 * new environment of the same project, with the services the caller sees (all, none, or those
 * selected), each new one granted to a member who made it.
 */
import type { Caller, ServiceContext } from "../context.ts";
import { notFound } from "../errors.ts";
import { duplicateEnvironment } from "./create.ts";
import { withServices } from "./details.ts";
import {
  grantCreated,
  requireCanCreateEnvironments,
  requireCanCreateProjects,
  requireEnvironmentAccess,
  visibleServices,
} from "./permissions.ts";
import { findEnvironmentWithProject } from "./repository.ts";
import { type ServiceKind, serviceFields, serviceIdKey, serviceKinds } from "./workload-kinds.ts";

export interface DuplicateRequest {
  sourceEnvironmentId: string;
  name: string;
  description?: string | null | undefined;
  includeServices: boolean;
  selectedServices?: { id: string; type: ServiceKind }[] | undefined;
  duplicateInSameProject: boolean;
}

/** The copy, as environment.one shows it (its services and its project). */
export async function duplicateEnvironmentFor(ctx: ServiceContext, caller: Caller, input: DuplicateRequest) {
  if (!input.duplicateInSameProject) requireCanCreateProjects(caller);
  const found = await findEnvironmentWithProject(ctx.db, caller.organizationId, input.sourceEnvironmentId);
  if (!found) throw notFound("Environment");
  const { environment: source, project: sourceProject } = found;
  const grants = await requireEnvironmentAccess(ctx.db, caller, source);
  if (input.duplicateInSameProject) requireCanCreateEnvironments(grants);
  // A member limited to some services copies only those.
  let selection: "none" | "all" | { id: string; type: ServiceKind }[] = !input.includeServices
    ? "none"
    : (input.selectedServices ?? "all");
  if (grants.services !== null && selection !== "none") {
    const [shown] = await withServices(ctx.db, [source]);
    const visible = visibleServices(grants, shown!);
    const shownList = serviceKinds.flatMap((kind) =>
      (visible[serviceFields[kind]] as Record<string, string>[]).map((service) => ({
        id: service[serviceIdKey(kind)]!,
        type: kind,
      })),
    );
    const ids = new Set(shownList.map((service) => service.id));
    selection = selection === "all" ? shownList : selection.filter((service) => ids.has(service.id));
  }

  const created = await duplicateEnvironment(ctx.db, ctx.secrets, {
    source,
    sourceProject,
    name: input.name,
    description: input.description,
    sameProject: input.duplicateInSameProject,
    selection,
  });
  if (!input.duplicateInSameProject) {
    await grantCreated(ctx.db, caller, "projects", created.project.projectId);
  }
  await grantCreated(ctx.db, caller, "environments", created.environment.environmentId);
  const [environment] = await withServices(ctx.db, [created.environment]);
  for (const kind of serviceKinds) {
    for (const service of environment![serviceFields[kind]] as Record<string, string>[]) {
      await grantCreated(ctx.db, caller, "services", service[serviceIdKey(kind)]!);
    }
  }
  return { ...environment!, project: created.project };
}
