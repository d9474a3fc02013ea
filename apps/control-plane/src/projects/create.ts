/**
 * The writes that make a project or an environment with more than one row: a project with its
 * default environment (project.create), and a copy of an environment with its services
 * (project.duplicate). Each is one transaction, so a failure leaves nothing half made.
 */
import type { SecretBox } from "../crypto/secret-box.ts";
import type { Db } from "../db/database.ts";
import {
  type Environment,
  insertEnvironment,
  insertProject,
  type Project,
  type ProjectValues,
  uniqueEnvironmentName,
} from "./repository.ts";
import { DEFAULT_ENVIRONMENT } from "./schemas.ts";
import { copyServices, type ServiceSelection } from "./workload-kinds.ts";

/** A project and its default environment, whose variables are `environmentEnv`. */
async function insertProjectWithDefaultEnvironment(
  trx: Db,
  values: ProjectValues,
  environmentEnv: string,
): Promise<{ project: Project; environment: Environment }> {
  const project = await insertProject(trx, values);
  const environment = await insertEnvironment(trx, {
    projectId: project.projectId,
    ...DEFAULT_ENVIRONMENT,
    env: environmentEnv,
    isDefault: true,
  });
  return { project, environment };
}

export function createProject(
  db: Db,
  values: ProjectValues,
): Promise<{ project: Project; environment: Environment }> {
  return db.transaction().execute((trx) => insertProjectWithDefaultEnvironment(trx, values, ""));
}

export interface EnvironmentCopy {
  source: Environment;
  sourceProject: Project;
  name: string;
  description: string | null | undefined;
  /** Into a new environment of the source's project, else into a new project of the organization. */
  sameProject: boolean;
  selection: "all" | "none" | readonly ServiceSelection[];
}

/**
 * Copies `source` (already found in the caller's organization) with the selected services; a
 * name already taken in the project is a 409 naming `name`.
 */
export function duplicateEnvironment(
  db: Db,
  secrets: SecretBox,
  copy: EnvironmentCopy,
): Promise<{ project: Project; environment: Environment }> {
  const { source, sourceProject } = copy;
  return uniqueEnvironmentName(copy.name, () =>
    db.transaction().execute(async (trx) => {
      let project = sourceProject;
      let environment: Environment;
      if (copy.sameProject) {
        environment = await insertEnvironment(trx, {
          projectId: sourceProject.projectId,
          name: copy.name,
          description: copy.description !== undefined ? copy.description : source.description,
          env: source.env,
          isDefault: false,
        });
      } else {
        ({ project, environment } = await insertProjectWithDefaultEnvironment(
          trx,
          {
            organizationId: sourceProject.organizationId,
            name: copy.name,
            description: copy.description ?? null,
            env: sourceProject.env,
          },
          source.env,
        ));
      }
      await copyServices(trx, {
        sourceEnvironmentId: source.environmentId,
        targetEnvironmentId: environment.environmentId,
        sameProject: copy.sameProject,
        selection: copy.selection,
        secrets,
      });
      return { project, environment };
    }),
  );
}
