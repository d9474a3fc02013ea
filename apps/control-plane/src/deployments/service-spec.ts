/**
 * What every Swarm service the control plane sends shares, whichever feature owns it: the platform
 * network, variables with inheritance and references, command lines, networks, endpoint ports and the stored *Swarm
 * fields. An application's own spec is applications/service-spec.ts.
 */
import type { Init, ServicePort, ServiceSpec, SwarmSettings } from "@platform/agent-protocol";
import type { Selectable } from "kysely";
import type { Application, SwarmColumns } from "../db/schema.ts";
import { type EnvVar, mergeEnv, parseEnv } from "../env-vars.ts";

/** The overlay network every application joins (created by scripts/docker-setup.sh / server setup). */
export const PLATFORM_NETWORK = "platform-network";

/** Where createEnvFile puts the application's variables inside its containers. */
export const ENV_FILE_PATH = "/app/.env";

/**
 * Resolves `${{project.KEY}}` and `${{environment.KEY}}` (Dokploy's shared-variable syntax) in
 * the values of `vars`. An unknown reference fails the deployment naming the reference (a
 * variable name, never a value).
 */
export function resolveEnvReferences(
  vars: readonly EnvVar[],
  scopes: { project: readonly EnvVar[]; environment: readonly EnvVar[] },
): EnvVar[] {
  const lookup = {
    project: new Map(scopes.project.map(({ key, value }) => [key, value])),
    environment: new Map(scopes.environment.map(({ key, value }) => [key, value])),
  };
  return vars.map(({ key, value }) => ({
    key,
    value: value.replace(
      /\$\{\{\s*(project|environment)\.([A-Za-z_][A-Za-z0-9_.-]*)\s*\}\}/g,
      (_match, scope: "project" | "environment", name: string) => {
        const resolved = lookup[scope].get(name);
        if (resolved === undefined) {
          throw new Error(`The variable ${key} refers to \${{${scope}.${name}}}, which is not defined`);
        }
        return resolved;
      },
    ),
  }));
}

/** The application's variables: project -> environment -> application, references resolved. */
export function applicationEnv(
  app: Pick<Application, "env">,
  projectEnv: string,
  environmentEnv: string,
): EnvVar[] {
  const project = parseEnv(projectEnv);
  const environment = parseEnv(environmentEnv);
  return resolveEnvReferences(mergeEnv(project, environment, app.env), { project, environment });
}

/**
 * Splits a command line into argv the way a POSIX shell splits words (single and double
 * quotes, backslash escapes), without any expansion: no shell ever runs it.
 */
export function splitCommandLine(text: string): string[] {
  const words: string[] = [];
  let word = "";
  let inWord = false;
  let quote: "'" | '"' | null = null;
  for (let i = 0; i < text.length; i++) {
    const char = text[i]!;
    if (quote === "'") {
      if (char === "'") quote = null;
      else word += char;
    } else if (quote === '"') {
      if (char === '"') quote = null;
      else if (char === "\\" && i + 1 < text.length && '"\\$`'.includes(text[i + 1]!)) word += text[++i];
      else word += char;
    } else if (char === "'" || char === '"') {
      quote = char;
      inWord = true;
    } else if (char === "\\" && i + 1 < text.length) {
      word += text[++i];
      inWord = true;
    } else if (/\s/.test(char)) {
      if (inWord) words.push(word);
      word = "";
      inWord = false;
    } else {
      word += char;
      inWord = true;
    }
  }
  if (quote) throw new Error("The command has an unterminated quote");
  if (inWord) words.push(word);
  return words;
}

/** A spec the control plane sends to an agent: the fields it leaves out are sent as their defaults. */
export type ServiceSpecToSend = Init<ServiceSpec> & Pick<ServiceSpec, "name" | "image">;

/**
 * The Swarm fields Dokploy stores on applications and database services alike, and the network
 * choices of applications (detachDokployNetwork; networkNames: the engine's names of the
 * networks networkIds names, which the caller looks up).
 */
export type SwarmFields = Selectable<SwarmColumns> & {
  networkNames?: readonly string[];
  detachDokployNetwork?: boolean;
};

/**
 * The networks the service joins: the platform network unless detachDokployNetwork, then the
 * networks of networkSwarm and networkIds (networkNames), each once. The agent joins only networks carrying the
 * organization's ownership labels (and the platform network).
 */
export function serviceNetworks(
  fields: Pick<SwarmFields, "networkSwarm" | "networkNames" | "detachDokployNetwork">,
): string[] {
  const named = (fields.networkSwarm ?? [])
    .map((network) => network.Target)
    .filter((t): t is string => typeof t === "string");
  const all = [
    ...(fields.detachDokployNetwork ? [] : [PLATFORM_NETWORK]),
    ...named,
    ...(fields.networkNames ?? []),
  ];
  return [...new Set(all)];
}

/** networkSwarm's aliases per network (only networks that name some). */
function networkAliases(fields: Pick<SwarmFields, "networkSwarm">): Record<string, string[]> | undefined {
  const entries = (fields.networkSwarm ?? [])
    .filter(
      (network) =>
        typeof network.Target === "string" && Array.isArray(network.Aliases) && network.Aliases.length > 0,
    )
    .map((network) => [network.Target as string, network.Aliases as string[]] as const);
  return entries.length > 0 ? Object.fromEntries(entries) : undefined;
}

/** endpointSpecSwarm.Ports as service ports (Docker's defaults: tcp, ingress). */
export function endpointPorts(fields: Pick<SwarmFields, "endpointSpecSwarm">): ServicePort[] {
  const ports = (fields.endpointSpecSwarm?.Ports ?? []) as {
    Protocol?: "tcp" | "udp";
    TargetPort?: number;
    PublishedPort?: number;
    PublishMode?: "host" | "ingress";
  }[];
  return ports
    .filter((port) => port.TargetPort !== undefined)
    .map((port) => ({
      publishedPort: port.PublishedPort ?? 0,
      targetPort: port.TargetPort as number,
      protocol: port.Protocol ?? "tcp",
      publishMode: port.PublishMode ?? "ingress",
    }));
}

/** modeSwarm when it names a mode other than Replicated (Global, ReplicatedJob, GlobalJob). */
function swarmModeOf(fields: Pick<SwarmFields, "modeSwarm">): SwarmSettings["Mode"] {
  const mode = fields.modeSwarm ?? {};
  if (mode.Global) return { Global: {} };
  if (mode.GlobalJob) return { GlobalJob: {} };
  if (mode.ReplicatedJob) return { ReplicatedJob: { ...(mode.ReplicatedJob as object) } };
  return undefined;
}

/** modeSwarm's replicated count (Dokploy's form) when given, else `replicas`. */
function replicasOf(app: Pick<SwarmFields, "replicas" | "modeSwarm">): number {
  const replicated = app.modeSwarm?.Replicated as { Replicas?: number } | undefined;
  return typeof replicated?.Replicas === "number" ? replicated.Replicas : app.replicas;
}

/**
 * Puts the stored Swarm fields on `spec`: replicas, the user's labels under the spec's own
 * (the platform's always win), health check, restart policy and the settings the agent applies
 * as Docker names them, over those the spec already has.
 */
export function applySwarmFields(spec: ServiceSpecToSend, fields: SwarmFields): ServiceSpecToSend {
  spec.replicas = replicasOf(fields);
  spec.labels = { ...(fields.labelsSwarm ?? {}), ...spec.labels };
  const health = fields.healthCheckSwarm;
  if (health && (health.Test?.length ?? 0) > 0) {
    spec.healthCheck = {
      test: health.Test ?? [],
      intervalNs: health.Interval,
      timeoutNs: health.Timeout,
      startPeriodNs: health.StartPeriod,
      retries: health.Retries,
    };
  }
  const restart = fields.restartPolicySwarm;
  if (restart) {
    spec.restartPolicy = {
      condition: restart.Condition ?? "any",
      delayNs: restart.Delay,
      maxAttempts: restart.MaxAttempts,
      windowNs: restart.Window,
    };
  }
  spec.networks = serviceNetworks(fields);
  spec.ports = [...(spec.ports ?? []), ...endpointPorts(fields)];
  const base = spec.swarmSettingsJson ? (JSON.parse(spec.swarmSettingsJson) as SwarmSettings) : {};
  const swarm = { ...base, ...swarmSettingsOf(fields) };
  if (Object.keys(swarm).length > 0) spec.swarmSettingsJson = JSON.stringify(swarm);
  return spec;
}

/** The stored *Swarm fields the agent applies (validated by the update procedures). */
function swarmSettingsOf(app: SwarmFields): SwarmSettings {
  const settings: SwarmSettings = {};
  if (app.placementSwarm) settings.Placement = app.placementSwarm;
  if (app.updateConfigSwarm) settings.UpdateConfig = app.updateConfigSwarm;
  if (app.rollbackConfigSwarm) settings.RollbackConfig = app.rollbackConfigSwarm;
  if (app.stopGracePeriodSwarm != null) settings.StopGracePeriod = Number(app.stopGracePeriodSwarm);
  if (app.ulimitsSwarm) settings.Ulimits = app.ulimitsSwarm as SwarmSettings["Ulimits"];
  const mode = app.endpointSpecSwarm?.Mode;
  if (mode === "vip" || mode === "dnsrr") settings.EndpointMode = mode;
  const swarmMode = swarmModeOf(app);
  if (swarmMode) settings.Mode = swarmMode;
  const aliases = networkAliases(app);
  if (aliases) settings.NetworkAliases = aliases;
  return settings;
}
