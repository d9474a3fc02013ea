/**
 * Service-state probes for the audit: whether a systemd unit is active or enabled. The default
 * asks `systemctl` (argv, no shell, with a timeout); tests inject fixed answers.
 */
import { execFile } from "node:child_process";

export interface ServiceProbe {
  isActive(unit: string): Promise<boolean>;
  isEnabled(unit: string): Promise<boolean>;
}

const UNIT_PATTERN = /^[a-zA-Z0-9@._-]+$/;

function systemctlSucceeds(args: string[], timeoutMs: number): Promise<boolean> {
  return new Promise((resolve) => {
    execFile("systemctl", args, { timeout: timeoutMs }, (error) => resolve(!error));
  });
}

/** Asks systemd; a missing systemctl or a timeout reads as "no". */
export function systemctlProbe(timeoutMs = 5000): ServiceProbe {
  const ask = (verb: string, unit: string) => {
    if (!UNIT_PATTERN.test(unit)) return Promise.resolve(false);
    return systemctlSucceeds([verb, "--quiet", unit], timeoutMs);
  };
  return {
    isActive: (unit) => ask("is-active", unit),
    isEnabled: (unit) => ask("is-enabled", unit),
  };
}

/** Fixed answers, for tests and for hosts without systemd: units listed are active/enabled. */
export function staticProbe(states: { active?: string[]; enabled?: string[] }): ServiceProbe {
  const active = new Set(states.active ?? []);
  const enabled = new Set(states.enabled ?? []);
  return {
    isActive: async (unit) => active.has(unit),
    isEnabled: async (unit) => enabled.has(unit),
  };
}
