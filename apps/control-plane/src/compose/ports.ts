/**
 * The host ports a stack's file publishes are claimed like an application's (servers/host-ports.ts):
 * checked against every other service of the server and stored (compose.published_ports) in one
 * transaction under the server's port lock, so that the port checks of applications, databases
 * and other stacks see them, and two requests never both take a free port.
 */
import { type PublishedPort, publishedPortsOf } from "@platform/compose-config";
import type { ServiceContext } from "../context.ts";
import type { Db } from "../db/database.ts";
import { conflict } from "../errors.ts";
import { hostPortTaken, lockHostPorts } from "../servers/host-ports.ts";

/**
 * Checks the ports of `document` (the converted file) on the stack's server, then runs `write`
 * in the same transaction after storing them on the stack. A port another service publishes
 * there is a 409 naming composeFile, and nothing is written.
 */
export async function claimComposePorts<T>(
  ctx: ServiceContext,
  stack: { composeId: string; serverId: string | null },
  document: Record<string, unknown> | undefined,
  write: (trx: Db) => Promise<T>,
): Promise<T> {
  const ports: PublishedPort[] = document ? publishedPortsOf(document) : [];
  return ctx.db.transaction().execute(async (trx) => {
    await lockHostPorts(trx, stack.serverId);
    for (const { port, protocol } of ports) {
      const claim = {
        serverId: stack.serverId,
        port,
        protocol,
        field: "composeFile",
        except: { composeId: stack.composeId },
      };
      if (await hostPortTaken(trx, claim)) {
        throw conflict(`Invalid compose file: port ${port}/${protocol} is already published on this server`, {
          fields: ["composeFile"],
        });
      }
    }
    const result = await write(trx);
    await trx
      .updateTable("compose")
      .set({ publishedPorts: JSON.stringify(ports) as unknown as PublishedPort[] })
      .where("composeId", "=", stack.composeId)
      .execute();
    return result;
  });
}
