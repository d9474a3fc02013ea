/**
 * The SQL of an application's published ports (the port router). A port is found through its
 * application -> environment -> project, so another organization's is not. A port is stored under
 * its server's host-port claim (servers/host-ports.ts): a port another service publishes on the
 * same server is a 409, and so is a (publishedPort, protocol) the application already has.
 */
import type { Insertable } from "kysely";
import type { ServiceContext } from "../context.ts";
import { newId } from "../crypto/ids.ts";
import type { Db } from "../db/database.ts";
import { ownedBy } from "../db/owned.ts";
import type { Application, Port, PortTable } from "../db/schema.ts";
import { conflict } from "../errors.ts";
import { isUniqueViolation } from "../projects/repository.ts";
import { claimHostPort } from "../servers/host-ports.ts";

const PORT_UNIQUE_CONSTRAINT = "ports_application_published_protocol_unique";

type PortOwner = Pick<Application, "applicationId" | "serverId">;

/** The port if its application belongs to the organization. */
export function findPort(db: Db, organizationId: string, portId: string): Promise<Port | undefined> {
  return ownedBy(
    db.selectFrom("ports").innerJoin("applications", "applications.applicationId", "ports.applicationId"),
    "applications.environmentId",
    organizationId,
  )
    .selectAll("ports")
    .where("ports.portId", "=", portId)
    .executeTakeFirst();
}

/** Runs `write` under the claim of `publishedPort`/`protocol` on the application's server. */
async function claimApplicationPort<T>(
  ctx: ServiceContext,
  application: PortOwner,
  claimed: { publishedPort: number; protocol: "tcp" | "udp" },
  write: (trx: Db) => Promise<T>,
): Promise<T> {
  const claim = {
    serverId: application.serverId,
    port: claimed.publishedPort,
    protocol: claimed.protocol,
    field: "publishedPort",
    except: { applicationId: application.applicationId },
  };
  try {
    return await claimHostPort(ctx, claim, write);
  } catch (error) {
    if (isUniqueViolation(error, PORT_UNIQUE_CONSTRAINT)) {
      throw conflict("The application already publishes this port with this protocol", {
        fields: ["publishedPort"],
      });
    }
    throw error;
  }
}

/** Publishes a port of an application already found in the caller's organization. */
export function insertPort(
  ctx: ServiceContext,
  application: PortOwner,
  values: Omit<Insertable<PortTable>, "portId"> & { protocol: "tcp" | "udp" },
): Promise<Port> {
  return claimApplicationPort(ctx, application, values, (trx) =>
    trx
      .insertInto("ports")
      .values({ portId: newId(), ...values, applicationId: application.applicationId })
      .returningAll()
      .executeTakeFirstOrThrow(),
  );
}

/** Applies `changes` (at least one) to a port of `application`. */
export function updatePort(
  ctx: ServiceContext,
  application: PortOwner,
  port: Port,
  changes: Partial<Pick<Port, "publishedPort" | "targetPort" | "protocol" | "publishMode">>,
): Promise<Port> {
  const claimed = {
    publishedPort: changes.publishedPort ?? port.publishedPort,
    protocol: changes.protocol ?? port.protocol,
  };
  return claimApplicationPort(ctx, application, claimed, (trx) =>
    trx
      .updateTable("ports")
      .set(changes)
      .where("portId", "=", port.portId)
      .returningAll()
      .executeTakeFirstOrThrow(),
  );
}

export async function deletePort(db: Db, portId: string): Promise<void> {
  await db.deleteFrom("ports").where("portId", "=", portId).execute();
}
