/**
 * The composition root's registrations: each feature's service kinds, deployment targets, kinds
 * of runs and recoveries and the placement check of deployments, handed to the generic modules
 * that run them (projects/workload-kinds.ts, deployments/targets.ts, deployments/recovery.ts,
 * deployments/start.ts), which import no feature. buildServiceContext calls registerFeatures once per
 * process, before anything reads the registries.
 */

import { loadApplicationTarget } from "./applications/deploy-target.ts";
import { applicationHooks } from "./applications/service-kind.ts";
import {
  composeBackupRunTarget,
  failInterruptedComposeBackupRun,
  isComposeBackupRunKind,
} from "./backups/compose-runs.ts";
import { backupRunTarget, isBackupRunKind, takeOverBackupRun } from "./backups/runs.ts";
import { failInterruptedWebServerRun, loadWebServerTarget } from "./backups/web-server-runs.ts";
import { loadComposeTarget } from "./compose/deploy.ts";
import { composeHooks } from "./compose/service-kind.ts";
import { loadDatabaseTarget } from "./databases/deploy.ts";
import { databaseHooks } from "./databases/service-kind.ts";
import { registerInterruptedRunHandler } from "./deployments/recovery.ts";
import { registerPlacementCheck } from "./deployments/start.ts";
import { registerRunKind, registerTargetKind } from "./deployments/targets.ts";
import { loadPreviewTarget } from "./previews/previews.ts";
import { registerServiceKindHooks } from "./projects/workload-kinds.ts";
import { runComposeRollbackDeployment, runRollbackDeployment } from "./rollbacks/run.ts";
import { loadScheduleTarget, takeOverScheduleRun } from "./schedules/runs.ts";
import { deploymentServerId } from "./servers/placement.ts";
import {
  cancelVolumeJob,
  isVolumeRunKind,
  takeOverVolumeRun,
  volumeRunTarget,
} from "./volume-backups/volume-backups.ts";

let registered = false;

export function registerFeatures(): void {
  if (registered) return;
  registered = true;

  registerServiceKindHooks({ application: applicationHooks, ...databaseHooks, compose: composeHooks });

  // A deployment of an organization's service runs on one of its servers, or this machine for
  // the instance organization unless it is remote-servers-only (servers/placement.ts).
  registerPlacementCheck(deploymentServerId);

  registerTargetKind("application", loadApplicationTarget);
  registerTargetKind("database", loadDatabaseTarget);
  registerTargetKind("compose", loadComposeTarget);
  registerTargetKind("schedule", loadScheduleTarget);
  registerTargetKind("preview", loadPreviewTarget);
  registerTargetKind("webServer", loadWebServerTarget);

  // Runs of a backup are deployments of its database that leave the database's status alone.
  registerRunKind({ targetKind: "database", matches: isBackupRunKind, adapt: backupRunTarget });
  // Runs of a backup of a database inside a stack are deployments of the stack (same rules).
  registerRunKind({ targetKind: "compose", matches: isComposeBackupRunKind, adapt: composeBackupRunTarget });
  // Runs of a volume backup are deployments of its service that leave its status alone.
  registerRunKind({ matches: isVolumeRunKind, adapt: volumeRunTarget });
  // A rollback deploys a kept spec and image instead of building.
  registerRunKind({
    targetKind: "application",
    matches: (kind) => kind === "rollback",
    adapt: (target) => ({ ...target, run: runRollbackDeployment }),
  });
  // A stack's rollback deploys its kept file and images again, run again from the start after a
  // restart like every stack deployment (recovery runAgain).
  registerRunKind({
    targetKind: "compose",
    matches: (kind) => kind === "rollback",
    adapt: (target) => ({ ...target, run: runComposeRollbackDeployment }),
  });

  // A backup run is never run again: its agent job, which goes on, is followed to its end and
  // its outcome recorded; a job the agent no longer knows fails the run (backups/runs.ts).
  registerInterruptedRunHandler({
    matches: (row) => row.targetKind === "database" && isBackupRunKind(row.kind),
    settle: (ctx, row, _runAgain, stop) => takeOverBackupRun(ctx, { ...row, databaseId: row.targetId }, stop),
  });
  // A stack's backup run fails: its upload died with the process.
  registerInterruptedRunHandler({
    matches: (row) => row.targetKind === "compose" && isComposeBackupRunKind(row.kind),
    settle: (ctx, row) => failInterruptedComposeBackupRun(ctx, row),
  });
  // Nor is a run of the control plane's own backup: its upload died with the process.
  registerInterruptedRunHandler({
    matches: (row) => row.targetKind === "webServer",
    settle: (ctx, row) => failInterruptedWebServerRun(ctx, row),
  });
  // A schedule's run is never run again either (the command is not known to be idempotent): its
  // outcome is recorded from the agent when it still has it.
  registerInterruptedRunHandler({
    matches: (row) => row.targetKind === "schedule",
    settle: (ctx, row, _runAgain, stop) => takeOverScheduleRun(ctx, row, stop),
  });
  // Nor is a volume backup run: its agent job's outcome is recorded, or it fails when the agent
  // no longer knows it (a service it stopped is scaled back by the agent). A restore runs again
  // (it writes the same archive), its old agent job cancelled.
  registerInterruptedRunHandler({
    matches: (row) => isVolumeRunKind(row.kind),
    settle: async (ctx, row, runAgain, stop) => {
      if (row.kind !== "volumeRestore") return takeOverVolumeRun(ctx, row, stop);
      await cancelVolumeJob(ctx, row);
      await runAgain(row);
    },
  });
}
