/**
 * The agent's side of the generated command table (generated/commands.ts): one handler per
 * command of proto/agent.proto, given the command's decoded message and resolving to the message
 * of the reply that answers it. CommandHandlers names every command, so a command added to the
 * .proto fails the typecheck until the agent handles it; the client needs nothing new
 * (AgentClient.call).
 */
import { errorReply } from "./codec.ts";
import {
  type CommandName,
  type CommandReply,
  type CommandRequest,
  type CommandTable,
  RESULT_NAME_OF_COMMAND,
  type ResultOfCommand,
} from "./messages.ts";

export type CommandHandlers = {
  [K in CommandName]: (command: CommandTable[K]["command"]) => Promise<ResultOfCommand[K]>;
};

/**
 * Answers a request with the handler of its command, its result put into the reply member that
 * answers the command; a command this version does not know is answered UNIMPLEMENTED. A
 * handler's failure is left to the caller (it rejects).
 */
export async function dispatchCommand(
  handlers: CommandHandlers,
  request: CommandRequest,
): Promise<CommandReply> {
  const { requestId } = request;
  if (request.command === "unknown" || !Object.hasOwn(handlers, request.command)) {
    return errorReply(requestId, "UNIMPLEMENTED", "this agent does not know the command");
  }
  const name = request.command;
  // TypeScript does not relate handlers[name] to request[name] across the union of names.
  const handler = handlers[name] as (command: unknown) => Promise<unknown>;
  const result = await handler((request as unknown as Record<CommandName, unknown>)[name]);
  const resultName = RESULT_NAME_OF_COMMAND[name];
  return { requestId, result: resultName, [resultName]: result } as unknown as CommandReply;
}
