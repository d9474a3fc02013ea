/**
 * The Swarm fields of a database service (Dokploy's <kind>.update takes them as
 * application.update does, with applications/validation.ts's schemas): how `one` shows them and
 * what the next deploy puts on the Swarm service.
 */
import { z } from "zod";
import { swarmSpecDetailFields } from "../applications/validation.ts";
import type { DatabaseService } from "../db/schema.ts";
import type { SwarmFields } from "../deployments/service-spec.ts";

const jsonObject = z.record(z.string(), z.unknown());

/** How `one` shows them (as stored; null: not set). */
export const swarmDetailFields = {
  replicas: z.number().int(),
  healthCheckSwarm: jsonObject.nullable(),
  restartPolicySwarm: jsonObject.nullable(),
  ...swarmSpecDetailFields,
  networkIds: z.array(z.string()),
};

/** The row's Swarm fields as `one` shows them. */
export function swarmDetailsOf(row: DatabaseService) {
  return {
    replicas: row.replicas,
    healthCheckSwarm: row.healthCheckSwarm as Record<string, unknown> | null,
    restartPolicySwarm: row.restartPolicySwarm as Record<string, unknown> | null,
    placementSwarm: row.placementSwarm,
    updateConfigSwarm: row.updateConfigSwarm,
    rollbackConfigSwarm: row.rollbackConfigSwarm,
    modeSwarm: row.modeSwarm,
    labelsSwarm: row.labelsSwarm,
    networkSwarm: row.networkSwarm,
    stopGracePeriodSwarm: row.stopGracePeriodSwarm === null ? null : Number(row.stopGracePeriodSwarm),
    endpointSpecSwarm: row.endpointSpecSwarm,
    ulimitsSwarm: row.ulimitsSwarm,
    networkIds: row.networkIds,
  };
}

/**
 * The row's Swarm fields for the spec. Two tasks must never share one data directory: without
 * an update or rollback configuration of the user's, the old task stops before the new starts.
 */
export function databaseSwarmFields(row: DatabaseService): SwarmFields {
  return {
    ...row,
    updateConfigSwarm: row.updateConfigSwarm ?? { Order: "stop-first" },
    rollbackConfigSwarm: row.rollbackConfigSwarm ?? { Order: "stop-first" },
  };
}
