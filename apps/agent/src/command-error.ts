/** A command's failure with the protocol error code it is answered with. */
import type { ErrorCode } from "@platform/agent-protocol";

export class CommandError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
  ) {
    super(message);
    this.name = "CommandError";
  }
}
