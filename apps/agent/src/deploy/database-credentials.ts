/**
 * changeDatabaseCredentials: a database user's new name or password, set inside the running
 * database of a service with the database's own client, run in the service's task container
 * through the Engine's exec API (an argument vector; no shell ever parses a value).
 *
 * Where a password goes:
 * - postgres: as a SCRAM-SHA-256 verifier computed here (the server stores exactly that), so the
 *   plain password is in no argument, statement or server log; connects over the local socket
 *   (the images' local trust). A rename runs as a temporary superuser (PostgreSQL cannot rename
 *   the session user), dropped afterwards.
 * - mariadb: as its mysql_native_password hash (`IDENTIFIED BY PASSWORD '*…'`); mysql 8 has no
 *   such hash of its default plugin, so it gets `IDENTIFIED BY '…'` in the client's argument.
 *   The root password reaches the client through MYSQL_PWD in the exec's environment.
 * - redis: the old one through REDISCLI_AUTH (environment), the new one as CONFIG SET's
 *   argument; the service's `--requirepass` argument is then updated so a restart keeps it.
 * - mongo: mongosh with the values as JSON string literals of its --eval argument.
 * Output of the clients is reported only with every password masked.
 */
import { createHash, createHmac, pbkdf2Sync, randomBytes } from "node:crypto";
import type { ChangeDatabaseCredentialsCommand, DatabaseCredentialsChanged } from "@platform/agent-protocol";
import type Docker from "dockerode";
import { CommandError } from "../command-error.ts";
import { engineMessage } from "../docker/engine.ts";
import { type ExecOutcome, execIn } from "../docker/exec.ts";
import { updateService } from "../docker/swarm.ts";
import { checkServiceOwner, findService, requireOwner } from "./service.ts";
import { checkExistingAppName, hasControlCharacters, invalid } from "./validate.ts";

const IDENTIFIER = /^[A-Za-z0-9_][A-Za-z0-9_.-]{0,62}$/;

/** PostgreSQL's SCRAM-SHA-256 verifier of `password` (RFC 7677; what `PASSWORD '…'` stores). */
export function scramSha256Verifier(password: string, salt = randomBytes(16), iterations = 4096): string {
  const salted = pbkdf2Sync(password.normalize("NFKC"), salt, iterations, 32, "sha256");
  const clientKey = createHmac("sha256", salted).update("Client Key").digest();
  const storedKey = createHash("sha256").update(clientKey).digest();
  const serverKey = createHmac("sha256", salted).update("Server Key").digest();
  return `SCRAM-SHA-256$${iterations}:${salt.toString("base64")}$${storedKey.toString("base64")}:${serverKey.toString("base64")}`;
}

/** MariaDB's mysql_native_password hash: "*" and SHA1(SHA1(password)) in upper-case hex. */
export function mysqlNativeHash(password: string): string {
  const inner = createHash("sha1").update(password, "utf8").digest();
  return `*${createHash("sha1").update(inner).digest("hex").toUpperCase()}`;
}

const sqlIdentifier = (name: string) => `"${name.replaceAll('"', '""')}"`;
/** A quoted SQL string; MySQL also treats backslashes as escapes, PostgreSQL does not. */
const sqlString = (value: string, backslashes = false) =>
  `'${(backslashes ? value.replaceAll("\\", "\\\\") : value).replaceAll("'", "''")}'`;

function masked(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const secret of secrets) if (secret) out = out.split(secret).join("***");
  return out;
}

/** The running task container of the service, else FAILED_PRECONDITION (stopped or starting). */
async function runningContainer(docker: Docker, serviceName: string): Promise<string> {
  const containers = await docker.listContainers({
    filters: { label: [`com.docker.swarm.service.name=${serviceName}`], status: ["running"] },
  });
  const container = containers[0];
  if (!container) {
    throw new CommandError(
      "FAILED_PRECONDITION",
      `the database ${serviceName} is not running: start it, then change its credentials`,
    );
  }
  return container.Id;
}

function checkCommand(command: ChangeDatabaseCredentialsCommand): void {
  checkExistingAppName("serviceName", command.serviceName);
  for (const field of ["adminUser", "user", "newUser", "database"] as const) {
    const value = command[field];
    if (value && !IDENTIFIER.test(value)) throw invalid(field, "is not a valid database identifier");
  }
  for (const field of ["adminPassword", "newPassword"] as const) {
    if (hasControlCharacters(command[field])) throw invalid(field, "must not contain control characters");
  }
  if (!command.newUser && !command.newPassword) throw invalid("newPassword", "nothing to change");
  if (command.engine !== "REDIS" && !command.user) throw invalid("user", "is required");
  if ((command.engine === "REDIS" || command.engine === "MONGO") && command.newUser) {
    throw invalid("newUser", `${command.engine.toLowerCase()} users cannot be renamed`);
  }
}

/** One client invocation: its argument vector, its environment, and the secrets to mask. */
interface Step {
  cmd: string[];
  env: string[];
}

function postgresSteps(command: ChangeDatabaseCredentialsCommand, secrets: string[]): Step[][] {
  const psql = (user: string, statements: string[]): Step => ({
    cmd: [
      "psql",
      "-X",
      "-q",
      "-v",
      "ON_ERROR_STOP=1",
      "-U",
      user,
      "-d",
      command.database || user,
      ...statements.flatMap((statement) => ["-c", statement]),
    ],
    env: [],
  });
  const target = command.newUser || command.user;
  const setPassword: string[] = [];
  if (command.newPassword) {
    const verifier = scramSha256Verifier(command.newPassword);
    secrets.push(verifier);
    setPassword.push(`ALTER ROLE ${sqlIdentifier(target)} WITH PASSWORD ${sqlString(verifier)}`);
  }
  if (!command.newUser || command.newUser === command.user) {
    return [[psql(command.adminUser || command.user, setPassword)]];
  }
  // The session user cannot be renamed: a temporary superuser renames it, then is dropped.
  const helper = `platform_rename_${randomBytes(6).toString("hex")}`;
  return [
    [psql(command.adminUser || command.user, [`CREATE ROLE ${sqlIdentifier(helper)} SUPERUSER LOGIN`])],
    [
      psql(helper, [
        `ALTER ROLE ${sqlIdentifier(command.user)} RENAME TO ${sqlIdentifier(command.newUser)}`,
        ...setPassword,
      ]),
    ],
    // Cleanup, run whatever the step before did (as the user under its new or old name).
    [
      psql(command.newUser, [`DROP ROLE ${sqlIdentifier(helper)}`]),
      psql(command.user, [`DROP ROLE ${sqlIdentifier(helper)}`]),
    ],
  ];
}

function mysqlSteps(command: ChangeDatabaseCredentialsCommand, engine: "MYSQL" | "MARIADB"): Step[][] {
  const hosts = command.user === "root" ? ["%", "localhost"] : ["%"];
  const statements: string[] = [];
  const target = command.newUser || command.user;
  if (command.newUser && command.newUser !== command.user) {
    for (const host of hosts) {
      statements.push(
        `RENAME USER ${sqlString(command.user)}@${sqlString(host)} TO ${sqlString(command.newUser)}@${sqlString(host)}`,
      );
    }
  }
  if (command.newPassword) {
    const identified =
      engine === "MARIADB"
        ? `IDENTIFIED BY PASSWORD ${sqlString(mysqlNativeHash(command.newPassword))}`
        : `IDENTIFIED BY ${sqlString(command.newPassword, true)}`;
    for (const host of hosts)
      statements.push(`ALTER USER ${sqlString(target)}@${sqlString(host)} ${identified}`);
  }
  statements.push("FLUSH PRIVILEGES");
  const client = engine === "MARIADB" ? "mariadb" : "mysql";
  return [
    [
      {
        cmd: [client, "--protocol=socket", "-u", command.adminUser || "root", "-e", statements.join("; ")],
        env: [`MYSQL_PWD=${command.adminPassword}`],
      },
    ],
  ];
}

function mongoSteps(command: ChangeDatabaseCredentialsCommand): Step[][] {
  const script = `db.getSiblingDB("admin").changeUserPassword(${JSON.stringify(command.user)}, ${JSON.stringify(command.newPassword)})`;
  return [
    [
      {
        cmd: [
          "mongosh",
          "--quiet",
          "--authenticationDatabase",
          "admin",
          "-u",
          command.adminUser || command.user,
          "-p",
          command.adminPassword,
          "--eval",
          script,
        ],
        env: [],
      },
    ],
  ];
}

function redisSteps(command: ChangeDatabaseCredentialsCommand): Step[][] {
  return [
    [
      {
        cmd: ["redis-cli", "--no-auth-warning", "CONFIG", "SET", "requirepass", command.newPassword],
        env: [`REDISCLI_AUTH=${command.adminPassword}`],
      },
    ],
  ];
}

function stepsOf(
  command: ChangeDatabaseCredentialsCommand,
  engine: ChangeDatabaseCredentialsCommand["engine"],
  secrets: string[],
) {
  switch (engine) {
    case "POSTGRES":
      return postgresSteps(command, secrets);
    case "MYSQL":
    case "MARIADB":
      return mysqlSteps(command, engine);
    case "MONGO":
      return mongoSteps(command);
    case "REDIS":
      return redisSteps(command);
    default:
      throw invalid("engine", "is not a known database engine");
  }
}

/** Replaces the value after `--requirepass` in the service's arguments; restarts its task. */
async function updateRedisArguments(docker: Docker, serviceName: string, password: string): Promise<boolean> {
  const service = await findService(docker, serviceName);
  if (!service) return false;
  const spec = structuredClone(service.Spec) as {
    TaskTemplate?: { ContainerSpec?: { Args?: string[]; Command?: string[] } };
  };
  const container = spec.TaskTemplate?.ContainerSpec;
  let updated = false;
  for (const list of [container?.Command, container?.Args]) {
    if (!list) continue;
    const at = list.indexOf("--requirepass");
    if (at >= 0 && at + 1 < list.length) {
      list[at + 1] = password;
      updated = true;
    }
  }
  if (updated) await updateService(docker, service.ID, service.Version.Index, spec);
  return updated;
}

export async function changeDatabaseCredentials(
  docker: Docker,
  command: ChangeDatabaseCredentialsCommand,
): Promise<DatabaseCredentialsChanged> {
  checkCommand(command);
  const owner = requireOwner(command.owner);
  const service = await findService(docker, command.serviceName);
  if (!service) throw new CommandError("NOT_FOUND", `service ${command.serviceName} does not exist`);
  checkServiceOwner(service, command.serviceName, owner);
  const containerId = await runningContainer(docker, command.serviceName);
  const secrets = [command.adminPassword, command.newPassword];
  const steps = stepsOf(command, command.engine, secrets);
  let failure: CommandError | undefined;
  for (const [index, alternatives] of steps.entries()) {
    const cleanup = index === 2; // postgres renames: the temporary role is dropped whatever happened
    if (failure && !cleanup) continue;
    for (const step of alternatives) {
      let outcome: ExecOutcome;
      try {
        outcome = await execIn(docker, containerId, step.cmd, { env: step.env });
      } catch (error) {
        if (error instanceof CommandError) throw error;
        throw new CommandError(
          "FAILED",
          `running ${step.cmd[0]} failed: ${masked(engineMessage(error), secrets)}`,
        );
      }
      if (outcome.exitCode === 0) break;
      if (cleanup) continue;
      const detail = masked(outcome.output.trim(), secrets).split("\n").slice(-3).join(" ").slice(0, 500);
      failure = new CommandError(
        "FAILED",
        `${step.cmd[0]} could not change the credentials (exit ${outcome.exitCode})${detail ? `: ${detail}` : ""}`,
      );
      break;
    }
  }
  if (failure) throw failure;
  const serviceUpdated =
    command.engine === "REDIS" && command.newPassword
      ? await updateRedisArguments(docker, command.serviceName, command.newPassword)
      : false;
  return { containerId, serviceUpdated };
}
