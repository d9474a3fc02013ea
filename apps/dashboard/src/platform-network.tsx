/**
 * The way out of a deployment refused on this machine for its missing platform network (the
 * agent's refusal: "the network <name> does not exist on this server: create it with `docker
 * network create …`"): for the instance administrators (whoever settings.getWebServerSettings
 * answers), a button that has the API create it (settings.createPlatformNetwork), then says to
 * deploy again. Others read the refusal, which names the command.
 */
import { useEffect, useState } from "preact/hooks";
import { type Answer, mutate, query } from "./api.ts";
import { ErrorText, useSubmit } from "./ui.tsx";

const MISSING_NETWORK = /the network (\S+) does not exist on this server/;

export function MissingNetworkFix({ message, serverId }: { message: string; serverId: string | null }) {
  const missing = serverId === null ? MISSING_NETWORK.exec(message)?.[1] : undefined;
  const [instanceAdmin, setInstanceAdmin] = useState(false);
  const [done, setDone] = useState<string>();
  useEffect(() => {
    if (!missing) return;
    query("settings.getWebServerSettings").then(
      () => setInstanceAdmin(true),
      () => setInstanceAdmin(false),
    );
  }, [missing]);
  const create = useSubmit(async () => {
    const network = await mutate<Answer<"settings.createPlatformNetwork">>("settings.createPlatformNetwork");
    setDone(
      `${network.created ? "Created" : "Found"} the network ${network.name} on this machine: deploy again.`,
    );
  });
  if (!missing || !instanceAdmin) return null;
  return (
    <form class="row" onSubmit={create.onSubmit} aria-label="Missing platform network">
      <p>
        This machine has no network <code>{missing}</code> (the installer creates it; it was skipped here).
      </p>
      {done ? (
        <p role="status">{done}</p>
      ) : (
        <button type="submit" disabled={create.busy}>
          Create the network {missing}
        </button>
      )}
      <ErrorText error={create.error} />
    </form>
  );
}
