/**
 * Images kept for rollbacks (rollback.rollback): the image a deployment ran, tagged by its image
 * ID as platform-rollback/<repository>:<tag>. Images built or imported locally have no
 * repository digest, so the tag is what keeps them: image cleanups leave these tags alone
 * (docker/cleanup.ts) and the control plane removes them when their rollback goes. Only names
 * under platform-rollback/ are ever tagged or untagged here.
 */
import {
  type KeepRollbackImageCommand,
  ROLLBACK_IMAGE_REPOSITORY_PREFIX,
  type RollbackImageKept,
  type RollbackImageStatus,
  type RollbackImagesRemoved,
} from "@platform/agent-protocol";
import type Docker from "dockerode";
import { CommandError } from "../command-error.ts";
import { engineMessage, engineStatus } from "../docker/engine.ts";
import { pushImage } from "./build.ts";
import { LogStream, SecretMasker } from "./log-stream.ts";
import { checkImageName, invalid } from "./validate.ts";

const ROLLBACK_IMAGE = /^platform-rollback\/[a-z0-9]+(?:[._-][a-z0-9]+)*:[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$/;

/** Throws INVALID_ARGUMENT unless `image` is a kept rollback image's name. */
export function checkRollbackImage(field: string, image: string): { repository: string; tag: string } {
  if (!ROLLBACK_IMAGE.test(image)) {
    throw invalid(field, `must be ${ROLLBACK_IMAGE_REPOSITORY_PREFIX}<repository>:<tag>`);
  }
  const colon = image.lastIndexOf(":");
  return { repository: image.slice(0, colon), tag: image.slice(colon + 1) };
}

export async function imageIdOf(docker: Docker, image: string): Promise<string | undefined> {
  try {
    const inspected = (await docker.getImage(image).inspect()) as { Id: string };
    return inspected.Id;
  } catch (error) {
    if (engineStatus(error) === 404) return undefined;
    throw new CommandError("UNAVAILABLE", `inspecting ${image} failed: ${engineMessage(error)}`);
  }
}

/** Tags the image `imageId` as the kept rollback image `image` (platform-rollback/<repository>:<tag>). */
export async function tagRollbackImage(docker: Docker, imageId: string, image: string): Promise<void> {
  const { repository, tag } = checkRollbackImage("image", image);
  try {
    await docker.getImage(imageId).tag({ repo: repository, tag });
  } catch (error) {
    throw new CommandError("FAILED", `tagging ${image} failed: ${engineMessage(error)}`);
  }
}

export async function keepRollbackImage(
  docker: Docker,
  command: KeepRollbackImageCommand,
): Promise<RollbackImageKept> {
  checkImageName("sourceImage", command.sourceImage);
  const { repository } = checkRollbackImage("image", command.image);
  const imageId = await imageIdOf(docker, command.sourceImage);
  if (!imageId) throw new CommandError("NOT_FOUND", `the image ${command.sourceImage} is not on this server`);
  await tagRollbackImage(docker, imageId, command.image);
  let pushedImage = "";
  if (command.registry?.serverAddress) {
    const log = new LogStream("", () => {}, new SecretMasker([command.registry.password]));
    pushedImage = await pushImage(
      docker,
      command.image,
      command.registry,
      command.imagePrefix ?? "",
      repository.slice(ROLLBACK_IMAGE_REPOSITORY_PREFIX.length),
      log,
      new AbortController().signal,
    );
  }
  return { imageId, pushedImage };
}

export async function rollbackImageStatus(docker: Docker, image: string): Promise<RollbackImageStatus> {
  checkRollbackImage("image", image);
  const imageId = await imageIdOf(docker, image);
  return { exists: imageId !== undefined, imageId: imageId ?? "" };
}

export async function removeRollbackImages(docker: Docker, images: string[]): Promise<RollbackImagesRemoved> {
  for (const image of images) checkRollbackImage("images", image);
  const removed: string[] = [];
  for (const image of images) {
    try {
      // Without force: a tag is removed; the layers stay while another tag or a container holds them.
      await docker.getImage(image).remove({ noprune: false });
      removed.push(image);
    } catch (error) {
      const status = engineStatus(error);
      if (status === 404) continue;
      // 409: a container (a stopped task of the service) still uses this image ID as its only
      // tag; the untag must not delete it from under the container: keep the tag's name gone.
      if (status === 409) {
        await untagOnly(docker, image);
        removed.push(image);
        continue;
      }
      throw new CommandError("FAILED", `removing ${image} failed: ${engineMessage(error)}`);
    }
  }
  return { removed };
}

/** Removes only the tag (Docker keeps an image a container uses as <none> when forced). */
async function untagOnly(docker: Docker, image: string): Promise<void> {
  try {
    await docker.getImage(image).remove({ force: true, noprune: true });
  } catch (error) {
    if (engineStatus(error) !== 404) {
      throw new CommandError("FAILED", `removing ${image} failed: ${engineMessage(error)}`);
    }
  }
}
