/**
 * A server's Swarm nodes (cluster.getNodes; this machine's when no server is named): role,
 * availability, state and, for the organization's own servers, whether their agent answers.
 * Administrators drain or activate a node, promote or demote it, and remove it (cluster.updateNode,
 * cluster.removeWorker), each after a dialog that says what it does to the node's tasks.
 */
import { type Answer, mutate, query } from "./api.ts";
import { ConfirmButton, ErrorText, useLoad } from "./ui.tsx";

type Node = Answer<"cluster.getNodes">[number];

/** The Docker node fields the list reads (the API passes Docker's node through as it is). */
interface DockerFacts {
  Description?: { Hostname?: string };
  Spec?: { Role?: string; Availability?: string };
  Status?: { State?: string; Addr?: string };
  ManagerStatus?: { Leader?: boolean; Reachability?: string };
}

export function ClusterNodes({
  server,
  administers,
}: {
  /** Undefined: this machine. */
  server?: { serverId: string; name: string };
  administers: boolean;
}) {
  const where = server ? server.name : "this machine";
  const scope = server ? { serverId: server.serverId } : {};
  const nodes = useLoad(
    () => query<Node[]>("cluster.getNodes", scope),
    `nodes-${server?.serverId ?? "local"}`,
  );
  // Errors of the agent name a server by its id: the page says its name.
  const named = (message: string | undefined) =>
    server && message ? message.replaceAll(server.serverId, server.name) : message;
  const act =
    (input: Record<string, unknown>, procedure = "cluster.updateNode") =>
    async () => {
      try {
        await mutate(procedure, { ...scope, ...input });
      } catch (failure) {
        throw new Error(named((failure as Error).message));
      }
      nodes.reload();
    };
  const title = `Swarm nodes of ${where}`;
  return (
    <section aria-label={title} class="cluster">
      <h3>{title}</h3>
      <ErrorText error={named(nodes.error)} />
      <ul class="services" aria-label={title}>
        {nodes.data?.map((node) => {
          const facts = node as unknown as DockerFacts;
          const host = node.platform?.name ?? facts.Description?.Hostname ?? node.ID.slice(0, 12);
          const role = facts.Spec?.Role ?? "worker";
          const availability = facts.Spec?.Availability ?? "active";
          const state = facts.Status?.State ?? "unknown";
          const leader = facts.ManagerStatus?.Leader === true;
          return (
            <li key={node.ID} aria-label={`Node ${host}`}>
              <strong>{host}</strong> <span class="badge">{leader ? "manager (leader)" : role}</span>{" "}
              <span class="badge">{availability}</span> <span class={`badge status-${state}`}>{state}</span>{" "}
              {node.platform && (
                <span class="badge">{node.platform.agentOnline ? "agent up" : "agent down"}</span>
              )}
              {administers && (
                <div class="row">
                  {availability === "active" ? (
                    <ConfirmButton
                      label={`Drain ${host}`}
                      title={`Drain ${host}?`}
                      consequence={`Swarm moves every task off ${host} to the other nodes and places none there until it is activated again; services with a single replica pinned to it stop.`}
                      confirmLabel="Drain"
                      buttonClass="ghost"
                      action={act({ nodeId: node.ID, availability: "drain" })}
                    />
                  ) : (
                    <ConfirmButton
                      label={`Activate ${host}`}
                      title={`Activate ${host}?`}
                      consequence={`Swarm may place tasks on ${host} again.`}
                      confirmLabel="Activate"
                      danger={false}
                      action={act({ nodeId: node.ID, availability: "active" })}
                    />
                  )}
                  {role === "worker" ? (
                    <ConfirmButton
                      label={`Promote ${host}`}
                      title={`Promote ${host} to manager?`}
                      consequence={`${host} joins the managers that keep the Swarm's state; an even number of managers tolerates no more failures than one fewer.`}
                      confirmLabel="Promote"
                      danger={false}
                      action={act({ nodeId: node.ID, role: "manager" })}
                    />
                  ) : (
                    <ConfirmButton
                      label={`Demote ${host}`}
                      title={`Demote ${host} to worker?`}
                      consequence={`${host} stops being a manager; the Swarm refuses to demote its last manager.`}
                      confirmLabel="Demote"
                      buttonClass="ghost"
                      action={act({ nodeId: node.ID, role: "worker" })}
                    />
                  )}
                  <ConfirmButton
                    label={`Remove ${host}`}
                    title={`Remove ${host} from the Swarm?`}
                    consequence={`${host} is drained and leaves the Swarm of ${where}: its tasks move to other nodes, and it must join again to run any.`}
                    confirmLabel="Remove node"
                    action={act({ nodeId: node.ID }, "cluster.removeWorker")}
                  />
                </div>
              )}
            </li>
          );
        })}
        {nodes.data?.length === 0 && <li class="muted">No Swarm node answers.</li>}
      </ul>
    </section>
  );
}
