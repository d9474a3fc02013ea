/**
 * Scheduled jobs (the agent's runSchedule / runHostScript jobs): a schedule's command run as
 * `<shell> -c <command>`, an argv, never a shell line built here. In a container, only in a
 * running container of the named service that carries the owner's ownership labels (none: the
 * run fails before anything runs, so a control plane naming another organization's service
 * gets nothing executed). On the server
 * itself (instance administrators' jobs, checked by the control plane), as the agent's user.
 * The output goes to the job's log stream line by line; the answer carries the exit code, and a
 * non-zero exit fails the job (FAILED).
 */
import { spawn } from "node:child_process";
import type {
  RunHostScriptCommand,
  RunScheduleCommand,
  ScheduledCommandResult,
} from "@platform/agent-protocol";
import { assertValidName } from "@platform/names";
import { isCompleteOwner, isOwnedBy, ownershipLabels } from "@platform/ownership";
import type Docker from "dockerode";
import { startExec } from "../backup/exec.ts";
import { CommandError } from "../command-error.ts";
import { throwIfCancelled } from "../deploy/jobs.ts";
import type { LogStream } from "../deploy/log-stream.ts";
import { COMPOSE_PROJECT_LABEL, SWARM_SERVICE_LABEL } from "../docker/containers.ts";

const COMPOSE_SERVICE_LABEL = "com.docker.compose.service";
const SHELLS = new Set(["bash", "sh"]);
/** An IANA zone name (Area/Location, Etc/GMT+3, UTC); "" = none. */
const TIMEZONE = /^$|^[A-Za-z][A-Za-z0-9_+-]*(\/[A-Za-z0-9_+-]+)*$/;

function checkCall(shell: string, command: string, timezone: string, field: string): void {
  if (!SHELLS.has(shell)) throw new CommandError("INVALID_ARGUMENT", "shell must be bash or sh");
  if (!command) throw new CommandError("INVALID_ARGUMENT", `${field} is required`);
  if (!TIMEZONE.test(timezone)) throw new CommandError("INVALID_ARGUMENT", "timezone is not a zone name");
}

const envOf = (timezone: string) => (timezone ? [`TZ=${timezone}`] : []);

/**
 * The running container to run in: one of the service's (by its Swarm or Compose labels) that
 * carries the owner's ownership labels. Containers of the same service name with other labels
 * (another tenant's container labelled to look like this service, the platform's own) are never
 * chosen, and do not stop the owner's run either.
 */
async function ownedContainer(docker: Docker, command: RunScheduleCommand): Promise<string> {
  const owner = command.owner;
  if (!isCompleteOwner(owner))
    throw new CommandError("INVALID_ARGUMENT", "owner: organizationId and resource are required");
  const labels = Object.entries(ownershipLabels(owner)).map(([key, value]) => `${key}=${value}`);
  if (command.swarmServiceName) {
    labels.push(`${SWARM_SERVICE_LABEL}=${assertValidName(command.swarmServiceName, "swarmServiceName")}`);
  } else if (command.composeProject && command.composeService) {
    labels.push(`${COMPOSE_PROJECT_LABEL}=${assertValidName(command.composeProject, "composeProject")}`);
    labels.push(`${COMPOSE_SERVICE_LABEL}=${assertValidName(command.composeService, "composeService")}`);
  } else {
    throw new CommandError(
      "INVALID_ARGUMENT",
      "swarmServiceName, or composeProject and composeService, are required",
    );
  }
  const containers = await docker.listContainers({ filters: { label: labels, status: ["running"] } });
  // The engine filtered by the labels; checked again here (and no platform-internal one).
  const container = containers.find((info) => isOwnedBy(info.Labels, owner));
  if (!container) {
    throw new CommandError(
      "FAILED_PRECONDITION",
      "no running container of the service carries this schedule's organization's labels: nothing was run",
    );
  }
  return container.Id;
}

/** `<shell> -c <command>` in a running container of the owner's service. */
export async function runSchedule(
  docker: Docker,
  command: RunScheduleCommand,
  log: LogStream,
  signal: AbortSignal,
): Promise<ScheduledCommandResult> {
  checkCall(command.shell, command.command, command.timezone, "command");
  const containerId = await ownedContainer(docker, command);
  throwIfCancelled(signal);
  log.line(`Running the command with ${command.shell} in container ${containerId.slice(0, 12)}`);
  const output = log.lineWriter();
  const started = await startExec(
    docker,
    containerId,
    { cmd: [command.shell, "-c", command.command], env: envOf(command.timezone) },
    { onStderr: (data) => output.write(data) },
  );
  started.stdout.on("data", (data: Buffer) => output.write(data));
  const onAbort = () => started.destroy();
  signal.addEventListener("abort", onAbort, { once: true });
  try {
    const exitCode = await started.exitCode;
    output.flush();
    throwIfCancelled(signal);
    return settled(exitCode, containerId);
  } finally {
    signal.removeEventListener("abort", onAbort);
  }
}

/** `<shell> -c <script>` on this server, as the agent's user. */
export async function runHostScript(
  command: RunHostScriptCommand,
  log: LogStream,
  signal: AbortSignal,
): Promise<ScheduledCommandResult> {
  checkCall(command.shell, command.script, command.timezone, "script");
  throwIfCancelled(signal);
  log.line(`Running the script with ${command.shell} on the server`);
  const output = log.lineWriter();
  const child = spawn(command.shell, ["-c", command.script], {
    env: { ...process.env, ...(command.timezone ? { TZ: command.timezone } : {}) },
    stdio: ["ignore", "pipe", "pipe"],
    signal,
  });
  child.stdout.on("data", (data: Buffer) => output.write(data));
  child.stderr.on("data", (data: Buffer) => output.write(data));
  const exitCode = await new Promise<number>((resolve, reject) => {
    child.once("error", (error) => {
      if (signal.aborted) resolve(-1);
      else reject(new CommandError("FAILED", `the shell could not be started: ${error.message}`));
    });
    child.once("close", (code) => resolve(code ?? -1));
  });
  output.flush();
  throwIfCancelled(signal);
  return settled(exitCode, "");
}

function settled(exitCode: number, containerId: string): ScheduledCommandResult {
  if (exitCode !== 0) throw new CommandError("FAILED", `the command exited with code ${exitCode}`);
  return { exitCode, containerId };
}
