/**
 * The JSON progress stream of an image pull or push: followed to its end, its first error event
 * (e.g. a refused registry login) turned into a rejection.
 */
import type Docker from "dockerode";

export interface ProgressEvent {
  status?: string;
  id?: string;
  error?: string;
  errorDetail?: { message?: string };
}

/** Resolves when the stream ends; `onEvent` sees every event that is not an error. */
export function followProgress(
  docker: Docker,
  stream: NodeJS.ReadableStream,
  onEvent?: (event: ProgressEvent) => void,
): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    docker.modem.followProgress(
      stream,
      (error: Error | null) => (error ? reject(error) : resolve()),
      (event: ProgressEvent) => {
        if (event.error || event.errorDetail) reject(new Error(event.errorDetail?.message ?? event.error));
        else onEvent?.(event);
      },
    );
  });
}
