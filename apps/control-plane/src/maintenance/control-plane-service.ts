/**
 * settings.reloadServer and settings.updateServer: the control plane restarts, or rolls to the
 * newest release, as Dokploy does with its own service. The platform's control plane runs as a
 * Swarm service when installed by deploy/install.sh; this machine's agent forces a new task of
 * it (`docker service update --force`), with the newest release's tag for an update. Run any
 * other way (a process manager, a plain container) it is refused with a 400 that says how to
 * restart it.
 */
import { callAgent } from "../agents/errors.ts";
import { LOCAL_SERVER_ID } from "../agents/hub.ts";
import type { ServiceContext } from "../context.ts";
import { ApiError, badRequest } from "../errors.ts";
import { releaseTag, updateData } from "./instance-settings.ts";

const NOT_A_SERVICE =
  "The control plane does not run as a Swarm service on this machine (deploy/install.sh installs it as one); " +
  "restart it with what runs it (systemctl restart, docker restart, your process manager), " +
  "or set PLATFORM_CONTROL_PLANE_SERVICE to its service's name";

async function restart(ctx: ServiceContext, tag: string): Promise<string> {
  const restarted = await callAgent(
    LOCAL_SERVER_ID,
    () =>
      ctx.agents.client.restartControlPlane(LOCAL_SERVER_ID, {
        serviceName: ctx.config.controlPlaneService ?? "",
        tag,
      }),
    ctx.logger,
  );
  if (!restarted.found) throw badRequest(NOT_A_SERVICE);
  return restarted.image;
}

/** A new task of the control plane's service, same image (`docker service update --force`). */
export async function reloadControlPlane(ctx: ServiceContext): Promise<void> {
  const image = await restart(ctx, "");
  ctx.logger.info({ image }, "settings.reloadServer: the control plane's service restarts");
}

/**
 * Rolls the control plane's service to the newest release's tag when PLATFORM_RELEASE_URL names
 * a newer one than this; a 400 says why not otherwise.
 */
export async function updateControlPlane(ctx: ServiceContext): Promise<{ image: string; version: string }> {
  const data = await updateData(ctx);
  if (!data.latestVersion) {
    throw new ApiError(
      "BAD_REQUEST",
      "No release is known: set PLATFORM_RELEASE_URL to the document naming the newest release",
    );
  }
  if (!data.updateAvailable) {
    throw new ApiError(
      "BAD_REQUEST",
      `No newer release: this control plane runs ${releaseTag(ctx)}, the newest release is ${data.latestVersion}`,
      { latestVersion: data.latestVersion },
    );
  }
  const image = await restart(ctx, data.latestVersion);
  ctx.logger.info(
    { image },
    "settings.updateServer: the control plane's service rolls to the newest release",
  );
  return { image, version: data.latestVersion };
}
