/**
 * Swarm service plumbing shared by applications and the proxy: inspect (missing is undefined),
 * update in place at a known version, and the ForceUpdate bump that restarts the tasks.
 */
import type Docker from "dockerode";
import { engineMessage, engineStatus } from "./engine.ts";

/** The service's inspect answer, or undefined when there is no such service. */
export async function inspectService<T>(docker: Docker, nameOrId: string): Promise<T | undefined> {
  try {
    return (await docker.getService(nameOrId).inspect()) as T;
  } catch (error) {
    if (engineStatus(error) === 404) return undefined;
    throw error;
  }
}

/**
 * Replaces the service's spec (the engine refuses a stale `version`); `authconfig` lets the
 * engine pull a private image.
 */
export async function updateService(
  docker: Docker,
  id: string,
  version: number,
  spec: object,
  authconfig?: object,
): Promise<void> {
  // `_query`/`_body` keep the version in the query string and the spec alone in the body.
  await docker.getService(id).update({
    _query: { version },
    _body: spec,
    ...(authconfig ? { authconfig } : {}),
  });
}

/** The spec with its task template's ForceUpdate counter incremented (restarts every task). */
export function withForceUpdate<Spec extends { TaskTemplate?: { ForceUpdate?: number } }>(spec: Spec): Spec {
  return {
    ...spec,
    TaskTemplate: { ...(spec.TaskTemplate ?? {}), ForceUpdate: (spec.TaskTemplate?.ForceUpdate ?? 0) + 1 },
  };
}

/**
 * Runs `update` (which reads the service's current version itself) again when Swarm refuses it
 * as "update out of sequence": another update came first, or the engine bumped the version of a
 * service it has just created (its allocator writes the endpoint). Other errors are thrown.
 */
export async function retryOutOfSequence<T>(update: () => Promise<T>, attempts = 3): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await update();
    } catch (error) {
      if (attempt >= attempts || !/update out of sequence/i.test(engineMessage(error))) throw error;
    }
  }
}
