/**
 * A service's deployments with the live log of the one watched (the newest unless another is
 * picked): the panel an application's and a compose stack's pages share.
 */
import { useState } from "preact/hooks";
import type { Deployment } from "./api.ts";
import { LiveLog } from "./log.tsx";
import { MissingNetworkFix } from "./platform-network.tsx";
import { ErrorText, Status, useLoad } from "./ui.tsx";

/** The deployments, loaded from `load`, and which one's log is shown (`watch` picks another). */
export function useDeployments(load: () => Promise<Deployment[]>, key: string) {
  const list = useLoad(load, key);
  const [watching, watch] = useState<string>();
  return { ...list, shown: watching ?? list.data?.[0]?.deploymentId, watch };
}

export function DeploymentsPanel({
  deployments,
  onEnd,
}: {
  deployments: ReturnType<typeof useDeployments>;
  /** Called when the watched deployment ends (the list is reloaded already). */
  onEnd: () => void;
}) {
  const { data, error, shown, watch } = deployments;
  return (
    <section class="card" aria-labelledby="deployments-title">
      <h2 id="deployments-title">Deployments</h2>
      <ErrorText error={error} />
      <ul class="services" aria-label="Deployments">
        {data?.map((d) => (
          <li key={d.deploymentId}>
            <button
              type="button"
              class="link"
              aria-pressed={d.deploymentId === shown}
              onClick={() => watch(d.deploymentId)}
            >
              {d.title}
            </button>{" "}
            <Status value={d.status} /> <span class="muted">{new Date(d.createdAt).toLocaleString()}</span>
            {d.status === "error" && d.errorMessage && <span class="error-inline"> {d.errorMessage}</span>}
            {d.status === "error" && d.errorMessage && d.deploymentId === data[0]?.deploymentId && (
              <MissingNetworkFix message={d.errorMessage} serverId={d.serverId} />
            )}
          </li>
        ))}
        {data?.length === 0 && <li class="muted">Not deployed yet.</li>}
      </ul>
      {shown && (
        <LiveLog
          key={shown}
          deploymentId={shown}
          onEnd={() => {
            deployments.reload();
            onEnd();
          }}
        />
      )}
    </section>
  );
}
