/**
 * The user's Docker Swarm settings of an application (ServiceSpec.swarmSettingsJson: Dokploy's
 * placementSwarm, updateConfigSwarm, rollbackConfigSwarm, stopGracePeriodSwarm, ulimitsSwarm and
 * endpointSpecSwarm.Mode). The control plane validated them; the agent checks their shape again
 * before they reach the Docker API, so a bad command is refused with INVALID_ARGUMENT.
 */
import type { SwarmSettings } from "@platform/agent-protocol";
import { CommandError } from "../command-error.ts";
import { hasControlCharacters } from "./validate.ts";

const FIELD = "spec.swarmSettingsJson";
const refuse = (message: string) => new CommandError("INVALID_ARGUMENT", `${FIELD}: ${message}`);

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);
const isCount = (value: unknown) => Number.isSafeInteger(value) && (value as number) >= 0;
const isText = (value: unknown) =>
  typeof value === "string" && value.length <= 500 && !hasControlCharacters(value);

function checkPlacement(placement: unknown): void {
  if (!isObject(placement)) throw refuse("Placement must be an object");
  for (const [key, value] of Object.entries(placement)) {
    const list = Array.isArray(value) ? value : undefined;
    if (key === "Constraints" && list?.every(isText)) continue;
    if (key === "MaxReplicas" && isCount(value)) continue;
    if (
      key === "Preferences" &&
      list?.every((p) => isObject(p) && isObject(p.Spread) && isText(p.Spread.SpreadDescriptor))
    )
      continue;
    if (key === "Platforms" && list?.every((p) => isObject(p) && isText(p.Architecture) && isText(p.OS)))
      continue;
    throw refuse(`Placement.${key} is not allowed or malformed`);
  }
}

function checkUpdateConfig(name: string, config: unknown): void {
  if (!isObject(config)) throw refuse(`${name} must be an object`);
  for (const [key, value] of Object.entries(config)) {
    if (["Parallelism", "Delay", "Monitor"].includes(key) && isCount(value)) continue;
    if (key === "MaxFailureRatio" && typeof value === "number" && value >= 0 && value <= 1) continue;
    if (key === "FailureAction" && ["continue", "pause", "rollback"].includes(value as string)) continue;
    if (key === "Order" && ["stop-first", "start-first"].includes(value as string)) continue;
    throw refuse(`${name}.${key} is not allowed or malformed`);
  }
}

function checkMode(mode: unknown): void {
  const entries = isObject(mode) ? Object.entries(mode) : [];
  const [kind, options] = entries[0] ?? [];
  const valid =
    entries.length === 1 &&
    isObject(options) &&
    (kind === "Global" || kind === "GlobalJob"
      ? Object.keys(options).length === 0
      : kind === "ReplicatedJob" &&
        Object.entries(options).every(
          ([name, value]) => (name === "MaxConcurrent" || name === "TotalCompletions") && isCount(value),
        ));
  if (!valid)
    throw refuse(
      "Mode must be one of {Global: {}}, {GlobalJob: {}}, {ReplicatedJob: {MaxConcurrent, TotalCompletions}}",
    );
}

/** The Swarm mode's name a spec asks for: Replicated unless its settings name another. */
export function modeKind(settings: SwarmSettings): "Replicated" | "Global" | "ReplicatedJob" | "GlobalJob" {
  return settings.Mode ? (Object.keys(settings.Mode)[0] as "Global") : "Replicated";
}

export const isJobMode = (kind: string) => kind === "ReplicatedJob" || kind === "GlobalJob";

/** The settings of `json` ("" or absent: none); throws INVALID_ARGUMENT when malformed. */
export function parseSwarmSettings(json: string | undefined): SwarmSettings {
  if (!json) return {};
  let settings: unknown;
  try {
    settings = JSON.parse(json);
  } catch {
    throw refuse("is not JSON");
  }
  if (!isObject(settings)) throw refuse("must be an object");
  for (const [key, value] of Object.entries(settings)) {
    if (key === "Placement") checkPlacement(value);
    else if (key === "UpdateConfig" || key === "RollbackConfig") checkUpdateConfig(key, value);
    else if (key === "StopGracePeriod") {
      if (!isCount(value)) throw refuse("StopGracePeriod must be a number of nanoseconds");
    } else if (key === "Ulimits") {
      const valid =
        Array.isArray(value) &&
        value.every(
          (limit) =>
            isObject(limit) &&
            typeof limit.Name === "string" &&
            /^[a-z]+$/.test(limit.Name) &&
            Number.isSafeInteger(limit.Soft) &&
            Number.isSafeInteger(limit.Hard),
        );
      if (!valid) throw refuse("Ulimits must be [{Name, Soft, Hard}]");
    } else if (key === "NetworkAliases") {
      const valid =
        isObject(value) &&
        Object.values(value).every(
          (list) =>
            Array.isArray(list) &&
            list.every((alias) => isText(alias) && /^[a-zA-Z0-9][a-zA-Z0-9_.-]*$/.test(alias)),
        );
      if (!valid) throw refuse("NetworkAliases must map network names to lists of aliases");
    } else if (key === "Mode") {
      checkMode(value);
    } else if (key === "EndpointMode") {
      if (value !== "vip" && value !== "dnsrr") throw refuse("EndpointMode must be vip or dnsrr");
    } else throw refuse(`${key} is not a Swarm setting the platform applies`);
  }
  return settings as SwarmSettings;
}
