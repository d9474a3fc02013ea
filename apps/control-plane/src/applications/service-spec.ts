/**
 * An application row (and its project's and environment's variables, and its ports) as the
 * Swarm service the agent creates or updates: env with inheritance and references resolved,
 * resources, command/args, replicas, health check, restart policy, ports, network and labels.
 */
import type { Init, ServiceMount, ServicePort } from "@platform/agent-protocol";
import type { Application, Port } from "../db/schema.ts";
import {
  applySwarmFields,
  ENV_FILE_PATH,
  PLATFORM_NETWORK,
  type ServiceSpecToSend,
  splitCommandLine,
} from "../deployments/service-spec.ts";
import type { EnvVar } from "../env-vars.ts";
import { memoryBytes, nanoCpus } from "./validation.ts";

export interface ServiceSpecInput {
  app: Application;
  image: string;
  env: readonly EnvVar[];
  ports: readonly Port[];
  /** The service's mounts (mounts/mounts.ts serviceMountsOf). */
  mounts?: readonly Init<ServiceMount>[];
  /** The engine's names of the application's networkIds (networks/ networkDockerNames). */
  networkNames?: readonly string[];
}

/** The Swarm service of the application running `image`. */
export function buildServiceSpec({
  app,
  image,
  env,
  ports,
  mounts = [],
  networkNames = [],
}: ServiceSpecInput): ServiceSpecToSend {
  const envLines = env.map(({ key, value }) => `${key}=${value}`);
  const spec: ServiceSpecToSend = {
    name: app.appName,
    image,
    env: envLines,
    replicas: 1,
    labels: { "platform.applicationId": app.applicationId, "platform.appName": app.appName },
    networks: [PLATFORM_NETWORK],
    ports: ports.map(
      (port): ServicePort => ({
        publishedPort: port.publishedPort,
        targetPort: port.targetPort,
        protocol: port.protocol,
        publishMode: port.publishMode,
      }),
    ),
  };
  if (app.command?.trim()) spec.command = splitCommandLine(app.command);
  if (app.args && app.args.length > 0) spec.args = [...app.args];
  if (app.memoryLimit) spec.memoryLimitBytes = memoryBytes(app.memoryLimit);
  if (app.memoryReservation) spec.memoryReservationBytes = memoryBytes(app.memoryReservation);
  if (app.cpuLimit) spec.nanoCpusLimit = nanoCpus(app.cpuLimit);
  if (app.cpuReservation) spec.nanoCpusReservation = nanoCpus(app.cpuReservation);
  if (app.createEnvFile) spec.files = { [ENV_FILE_PATH]: `${envLines.join("\n")}\n` };
  if (mounts.length > 0) spec.mounts = [...mounts];
  return applySwarmFields(spec, { ...app, networkNames });
}
