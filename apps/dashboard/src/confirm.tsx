/**
 * What the instance pages (templates, backups, schedules, notifications, certificates) share:
 * a button that asks before a destructive action and names what will be lost, the services of
 * the caller's projects as pickers list them, and the log of a run (a deployment) shown in place.
 */
import { type Project, query } from "./api.ts";
import { LiveLog } from "./log.tsx";
import { ConfirmButton as AskFirst } from "./ui.tsx";
import "./instance-pages.css";

/**
 * ui.tsx's confirmation button as the instance pages word it: the dialog asks "<label>?", says what
 * will be lost, and its confirm button repeats the label ("Yes, delete"), so the choice reads the
 * same twice.
 */
export function ConfirmButton({
  label,
  lost,
  action,
  class: className = "ghost",
}: {
  label: string;
  lost: string;
  action: () => Promise<void>;
  class?: string;
}) {
  return (
    <AskFirst
      label={label}
      title={`${label}?`}
      consequence={lost}
      confirmLabel={`Yes, ${label.charAt(0).toLowerCase()}${label.slice(1)}`}
      action={action}
      buttonClass={className}
    />
  );
}

/** A service a picker offers: its kind (application, compose or a database kind), id and names. */
export interface ServiceChoice {
  type: "application" | "compose" | "postgres" | "mysql" | "mariadb" | "mongo" | "redis";
  id: string;
  name: string;
  appName: string;
  /** "Project / environment". */
  where: string;
}

const DATABASE_TYPES = ["postgres", "mysql", "mariadb", "mongo", "redis"] as const;

/** Every service of the caller's projects (project.all), in project order. */
export async function loadServices(): Promise<ServiceChoice[]> {
  const projects = await query<Project[]>("project.all");
  const services: ServiceChoice[] = [];
  for (const project of projects) {
    for (const environment of project.environments) {
      const where = `${project.name} / ${environment.name}`;
      for (const app of environment.applications) {
        services.push({
          type: "application",
          id: String(app.applicationId),
          name: app.name,
          appName: String(app.appName),
          where,
        });
      }
      for (const compose of environment.compose) {
        services.push({
          type: "compose",
          id: String(compose.composeId),
          name: compose.name,
          appName: String(compose.appName),
          where,
        });
      }
      for (const type of DATABASE_TYPES) {
        for (const db of environment[type]) {
          const row = db as unknown as Record<string, unknown>;
          services.push({
            type,
            id: String(row[`${type}Id`]),
            name: db.name,
            appName: String(row.appName),
            where,
          });
        }
      }
    }
  }
  return services;
}

/** A run's log (a deployment's), shown under a heading that says what ran. */
export function RunLog({
  title,
  deploymentId,
  onEnd,
}: {
  title: string;
  deploymentId: string;
  onEnd?: () => void;
}) {
  return (
    <section class="card" aria-label={title}>
      <h3>{title}</h3>
      <LiveLog key={deploymentId} deploymentId={deploymentId} onEnd={onEnd} />
    </section>
  );
}

/** A date as the reader's locale writes it; "—" for none. */
export function when(value: string | null | undefined): string {
  return value ? new Date(value).toLocaleString() : "—";
}

/** Bytes as KB/MB. */
export function size(bytes: number | null | undefined): string {
  if (bytes === null || bytes === undefined) return "—";
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}
