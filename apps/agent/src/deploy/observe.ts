/**
 * observeServices: what Docker says now about application services (current and previous
 * deployment label, UpdateStatus, desired and running tasks, the newest task error). The
 * control plane follows deployments and reconciles applications from this observed state, so an
 * outcome survives the loss of a reply (agent restart, NATS restart, control-plane restart).
 */
import {
  DEPLOYMENT_ID_LABEL,
  type ObservedService,
  type ObservedServices,
  type ObserveServicesCommand,
} from "@platform/agent-protocol";
import { isCompleteOwner, isLegacyOwnedBy, isOwnedBy } from "@platform/ownership";
import type Docker from "dockerode";
import { checkExistingAppName, invalid } from "./validate.ts";

interface InspectedService {
  ID: string;
  Spec: {
    Name?: string;
    Labels?: Record<string, string>;
    TaskTemplate?: { ForceUpdate?: number; ContainerSpec?: { Image?: string } };
    Mode?: { Replicated?: { Replicas?: number } };
  };
  PreviousSpec?: { Labels?: Record<string, string> };
  UpdateStatus?: { State?: string; Message?: string };
}

interface InspectedTask {
  ServiceID?: string;
  CreatedAt?: string;
  DesiredState?: string;
  Spec?: { ForceUpdate?: number; ContainerSpec?: { Image?: string; Labels?: Record<string, string> } };
  Status?: { State?: string; Err?: string; Message?: string; Timestamp?: string };
}

const MAX_SERVICES = 1000;

export async function observeServices(
  docker: Docker,
  command: ObserveServicesCommand,
  isJobRunning: (jobId: string) => boolean,
): Promise<ObservedServices> {
  const names = [...new Set(command.serviceNames ?? [])].slice(0, MAX_SERVICES);
  const owners = command.owners ?? {};
  for (const name of names) {
    checkExistingAppName("serviceNames", name);
    if (!isCompleteOwner(owners[name])) throw invalid("owners", `the owner of ${name} is required`);
  }
  const wanted = new Set(names);
  const services: ObservedService[] = [];
  if (names.length > 0) {
    const all = (await docker.listServices()) as InspectedService[];
    const named = all.filter((service) => wanted.has(service.Spec.Name ?? ""));
    // A service of that name labelled for someone else is reported as such and nothing more.
    const isOwners = (service: InspectedService) => {
      const owner = owners[service.Spec.Name ?? ""]!;
      return isOwnedBy(service.Spec.Labels, owner) || isLegacyOwnedBy(service.Spec.Labels, owner);
    };
    const found = named.filter(isOwners);
    const byId = new Map(found.map((service) => [service.ID, service]));
    const tasks =
      found.length === 0
        ? []
        : ((await docker.listTasks({
            filters: { service: found.map((service) => service.ID) },
          })) as InspectedTask[]);
    const running = new Map<string, number>();
    const outdated = new Map<string, number>();
    const newestError = new Map<string, { at: string; error: string; deploymentId: string }>();
    for (const task of tasks) {
      const id = task.ServiceID ?? "";
      if (!byId.has(id)) continue;
      const service = byId.get(id)!;
      const state = task.Status?.State ?? "";
      const current =
        (task.Spec?.ForceUpdate ?? 0) === (service.Spec.TaskTemplate?.ForceUpdate ?? 0) &&
        task.Spec?.ContainerSpec?.Image === service.Spec.TaskTemplate?.ContainerSpec?.Image;
      if (task.DesiredState === "running" && !current) outdated.set(id, (outdated.get(id) ?? 0) + 1);
      if (task.DesiredState === "running" && state === "running" && current)
        running.set(id, (running.get(id) ?? 0) + 1);
      if (state === "failed" || state === "rejected") {
        const at = task.Status?.Timestamp ?? task.CreatedAt ?? "";
        // Whole: the engine puts the cause last, and deployments/error-message.ts shortens it.
        const error = task.Status?.Err || task.Status?.Message || state;
        const seen = newestError.get(id);
        const deploymentId = task.Spec?.ContainerSpec?.Labels?.[DEPLOYMENT_ID_LABEL] ?? "";
        // RFC 3339 with trimmed fractions does not sort as text: compare the instants.
        if (!seen || Date.parse(seen.at) < Date.parse(at)) newestError.set(id, { at, error, deploymentId });
      }
    }
    for (const name of names) {
      const service = found.find((candidate) => candidate.Spec.Name === name);
      if (!service) {
        const foreign = named.some((candidate) => candidate.Spec.Name === name);
        services.push({
          name,
          found: foreign,
          ownerMismatch: foreign,
          deploymentId: "",
          previousDeploymentId: "",
          image: "",
          updateState: "",
          updateMessage: "",
          desiredReplicas: 0,
          runningTasks: 0,
          taskError: "",
          outdatedTasks: 0,
          taskErrorDeploymentId: "",
        });
        continue;
      }
      services.push({
        name,
        found: true,
        deploymentId: service.Spec.Labels?.[DEPLOYMENT_ID_LABEL] ?? "",
        previousDeploymentId: service.PreviousSpec?.Labels?.[DEPLOYMENT_ID_LABEL] ?? "",
        image: service.Spec.TaskTemplate?.ContainerSpec?.Image ?? "",
        updateState: service.UpdateStatus?.State ?? "",
        updateMessage: service.UpdateStatus?.Message ?? "",
        desiredReplicas: service.Spec.Mode?.Replicated?.Replicas ?? 0,
        runningTasks: running.get(service.ID) ?? 0,
        taskError: newestError.get(service.ID)?.error ?? "",
        outdatedTasks: outdated.get(service.ID) ?? 0,
        taskErrorDeploymentId: newestError.get(service.ID)?.deploymentId ?? "",
        ownerMismatch: false,
      });
    }
  }
  const activeJobs = [...new Set(command.jobIds ?? [])].filter((jobId) => isJobRunning(jobId));
  return { services, activeJobs };
}
