/**
 * TypeScript shapes of the messages in proto/agent.proto. Each message's type is generated
 * (generated/agent.pb.ts, `pnpm generate:protocol`) in the shape the codecs in codec.ts give:
 * camelCase fields, int64 as number, enums as their names, message fields optional, scalars,
 * lists and maps always present. The command -> reply table is generated too
 * (generated/commands.ts); from it come the two oneofs as discriminated unions (`command` in
 * CommandRequest, `result` in CommandReply). What is written here is only what the .proto
 * cannot say: the unions, the input shapes senders may leave fields out of, the value sets of
 * some string fields, and a few constants.
 */
import type * as pb from "./generated/agent.pb.ts";
import type { CommandTable, ReplyResultTable } from "./generated/commands.ts";

export * from "./generated/agent.pb.ts";
export {
  type CommandTable,
  type MessageTypes,
  RESULT_NAME_OF_COMMAND,
  type ReplyResultTable,
} from "./generated/commands.ts";

/**
 * What a sender may give for message T: any field may be left out, it is then sent as its
 * default ("", 0, false, empty, or no message), which is what a receiver reads back.
 */
export type Init<T> = T extends Uint8Array
  ? T
  : T extends readonly (infer Item)[]
    ? Init<Item>[]
    : T extends object
      ? { [K in keyof T]?: Init<T[K]> }
      : T;

// ---- the two oneofs ------------------------------------------------------------------------

export type CommandName = keyof CommandTable;

/** The `command` oneof: the discriminant names the member that is set. */
export type Command = {
  [K in CommandName]: { command: K } & { [M in K]: CommandTable[K]["command"] };
}[CommandName];

/** A command as a sender gives it (fields may be left out, see Init). */
export type CommandInput = {
  [K in CommandName]: { command: K } & { [M in K]: Init<CommandTable[K]["command"]> };
}[CommandName];

/**
 * What decoding yields for a request whose command this version does not know (a newer sender).
 * It is never sent; the agent answers it with UNIMPLEMENTED.
 */
export interface UnknownCommand {
  command: "unknown";
}

export interface CommandRequestHeader {
  requestId: string;
  serverId: string;
  /** Unix ms after which the agent refuses the command; 0 = no deadline. */
  deadlineUnixMs: number;
}

export type CommandRequest = CommandRequestHeader & (Command | UnknownCommand);

/** A request as a sender gives it. */
export type CommandRequestInput = CommandRequestHeader & (CommandInput | UnknownCommand);

export type ReplyResultName = keyof ReplyResultTable;

/** The `result` oneof of CommandReply. */
export type ReplyResult = {
  [R in ReplyResultName]: { result: R } & { [M in R]: ReplyResultTable[R] };
}[ReplyResultName];

export type CommandReply = { requestId: string } & ReplyResult;

/** Which reply message answers which command. */
export type ResultOfCommand = { [K in CommandName]: CommandTable[K]["reply"] };

export type ErrorCode = pb.Error_Code;
/** The proto's Error (named apart from JavaScript's Error). */
export type AgentErrorBody = pb.Error;
/** The proto's Event (named apart from the DOM's Event). */
export type AgentEvent = pb.Event;

// ---- value sets of string fields and enums -------------------------------------------------

/** BuildImageCommand.buildType. */
export type BuildType =
  | "dockerfile"
  | "static"
  | "nixpacks"
  | "railpack"
  | "heroku_buildpacks"
  | "paketo_buildpacks";

/** BuildImageCommand's `source` oneof as a sender gives it: exactly one of them. */
export type BuildSource =
  | { git: Init<pb.GitSource>; archive?: undefined }
  | { archive: Init<pb.ArchiveSource>; git?: undefined };

export type ServiceAction = Exclude<pb.ServiceActionCommand_Action, "ACTION_UNSPECIFIED">;
export type StackAction = Exclude<pb.StackActionCommand_Action, "ACTION_UNSPECIFIED">;
export type DatabaseEngine = Exclude<pb.ChangeDatabaseCredentialsCommand_Engine, "ENGINE_UNSPECIFIED">;

/** DatabaseAccess.kind. */
export type BackupDatabaseKind = "postgres" | "mysql" | "mariadb" | "mongo" | "redis";

/** `static` is traefik.yml (fileName ignored), `dynamic` dynamic/<name>, `certificate` PEM files. */
export type ProxyFileScope = "static" | "dynamic" | "certificate";

/**
 * Whose proxy file a command names: a tenant's (owner) or the platform's own (platformFile).
 * Dynamic and certificate files need exactly one; traefik.yml (static) is the platform's.
 */
export interface ProxyFileHolder {
  owner?: pb.ResourceOwner;
  platformFile?: boolean;
}

/** ReadAccessLogCommand.sortField ("" = timestamp). */
export type AccessLogSortField =
  | "timestamp"
  | "method"
  | "path"
  | "status"
  | "duration"
  | "ip"
  | "userAgent"
  | "host";

/** Swarm settings an application may set (ServiceSpec.swarmSettingsJson), as Docker's service API names them. */
export interface SwarmSettings {
  /** TaskTemplate.Placement. */
  Placement?: Record<string, unknown>;
  /** Replace the platform's default update and rollback configurations. */
  UpdateConfig?: Record<string, unknown>;
  RollbackConfig?: Record<string, unknown>;
  /** ContainerSpec.StopGracePeriod, nanoseconds. */
  StopGracePeriod?: number;
  /** ContainerSpec.Ulimits. */
  Ulimits?: { Name: string; Soft: number; Hard: number }[];
  /** EndpointSpec.Mode. */
  EndpointMode?: "vip" | "dnsrr";
  /** The service's Mode when not replicated (Dokploy's modeSwarm): absent = Replicated with `replicas`. */
  Mode?: SwarmMode;
  /** Aliases of the service on each of its networks (network name -> aliases; Dokploy's networkSwarm). */
  NetworkAliases?: Record<string, string[]>;
}

/** Swarm's non-replicated service modes. */
export type SwarmMode =
  | { Global: Record<string, never> }
  | { ReplicatedJob: { MaxConcurrent?: number; TotalCompletions?: number } }
  | { GlobalJob: Record<string, never> };

// ---- constants -----------------------------------------------------------------------------

/** Kept rollback images are named platform-rollback/<repository>:<tag>. */
export const ROLLBACK_IMAGE_REPOSITORY_PREFIX = "platform-rollback/";

/** The label that carries the deployment id on an application's Swarm service spec. */
export const DEPLOYMENT_ID_LABEL = "platform.deployment-id";
