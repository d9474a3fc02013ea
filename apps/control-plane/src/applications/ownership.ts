/**
 * The owner an application's Docker objects are labelled with (@platform/ownership):
 * its organization and `application:<applicationId>`. Every command that creates or acts on the
 * application's service carries it, and the agent refuses a service labelled otherwise.
 */
import type { ResourceOwner } from "@platform/agent-protocol";
import { applicationOwner } from "@platform/ownership";
import type { Db } from "../db/database.ts";
import { withOwner } from "../db/owned.ts";
import type { Application } from "../db/schema.ts";

/** The owner of `app`'s objects; `organizationId` is read through its project when not given. */
export async function ownerOfApplication(
  db: Db,
  app: Pick<Application, "applicationId" | "environmentId"> & { organizationId?: string },
): Promise<ResourceOwner> {
  if (app.organizationId) return applicationOwner(app.organizationId, app.applicationId);
  const row = await withOwner(db.selectFrom("environments"), "environments")
    .select("projects.organizationId")
    .where("environments.environmentId", "=", app.environmentId)
    .executeTakeFirstOrThrow();
  return applicationOwner(row.organizationId, app.applicationId);
}

/** The owner of the objects of the application with this id (read through its project). */
export async function ownerOfApplicationId(db: Db, applicationId: string): Promise<ResourceOwner> {
  const row = await withOwner(db.selectFrom("applications"), "applications.environmentId")
    .select("projects.organizationId")
    .where("applications.applicationId", "=", applicationId)
    .executeTakeFirstOrThrow();
  return applicationOwner(row.organizationId, applicationId);
}
