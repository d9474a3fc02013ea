/**
 * Schedules: the scheduled jobs (a cron command run in an application's or a compose service's
 * container, or on a server for instance administrators) of every service the caller sees, with
 * their runs (schedule.list answers them): create, edit, delete, run now, and a run's log.
 */
import { useState } from "preact/hooks";
import { type Answer, mutate, query } from "./api.ts";
import { ConfirmButton, loadServices, RunLog, type ServiceChoice, when } from "./confirm.tsx";
import { ErrorText, FormButtons, Status, useLoad, useSubmit } from "./ui.tsx";

type Schedule = Answer<"schedule.list">[number];
type Server = { serverId: string; name: string };

/** Where a job runs: a service's container, a server, or this machine. */
interface Target {
  key: string;
  label: string;
  scheduleType: "application" | "compose" | "server" | "dokploy-server";
  id: string;
}

async function loadTargets(instanceAdmin: boolean): Promise<Target[]> {
  const services = await loadServices();
  const targets: Target[] = services
    .filter(
      (s): s is ServiceChoice & { type: "application" | "compose" } =>
        s.type === "application" || s.type === "compose",
    )
    .map((s) => ({
      key: `${s.type}:${s.id}`,
      label: `${s.name} (${s.type}, ${s.where})`,
      scheduleType: s.type,
      id: s.id,
    }));
  if (instanceAdmin) {
    const servers = await query<Server[]>("server.all").catch(() => [] as Server[]);
    for (const server of servers) {
      targets.push({
        key: `server:${server.serverId}`,
        label: `Server ${server.name}`,
        scheduleType: "server",
        id: server.serverId,
      });
    }
    targets.push({
      key: "dokploy-server",
      label: "This machine (the control plane's host)",
      scheduleType: "dokploy-server",
      id: "local",
    });
  }
  return targets;
}

function ScheduleForm({
  targets,
  schedule,
  onDone,
}: {
  targets: Target[];
  schedule?: Schedule;
  onDone: () => void;
}) {
  const [targetKey, setTargetKey] = useState(targets[0]?.key ?? "");
  const target = targets.find((t) => t.key === targetKey);
  const type = schedule?.scheduleType ?? target?.scheduleType;
  const [fields, setFields] = useState({
    name: schedule?.name ?? "",
    cronExpression: schedule?.cronExpression ?? "0 * * * *",
    command: schedule?.command ?? "",
    serviceName: schedule?.serviceName ?? "",
    timezone: schedule?.timezone ?? "",
    shellType: schedule?.shellType ?? "bash",
  });
  const [enabled, setEnabled] = useState(schedule?.enabled ?? true);
  const set =
    (key: keyof typeof fields) =>
    (e: { currentTarget: HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement }) =>
      setFields({ ...fields, [key]: e.currentTarget.value });
  const save = useSubmit(async () => {
    const common = {
      name: fields.name,
      cronExpression: fields.cronExpression,
      command: fields.command,
      shellType: fields.shellType,
      timezone: fields.timezone || null,
      enabled,
      ...(type === "compose" ? { serviceName: fields.serviceName } : {}),
    };
    if (schedule) {
      await mutate("schedule.update", { scheduleId: schedule.scheduleId, ...common });
    } else if (target) {
      await mutate("schedule.create", {
        ...common,
        scheduleType: target.scheduleType,
        ...(target.scheduleType === "application" ? { applicationId: target.id } : {}),
        ...(target.scheduleType === "compose" ? { composeId: target.id } : {}),
        ...(target.scheduleType === "server" ? { serverId: target.id } : {}),
      });
    }
    onDone();
  });
  const titleId = schedule ? `edit-schedule-${schedule.scheduleId}` : "new-schedule";
  return (
    <form onSubmit={save.onSubmit} class="card inline" aria-labelledby={titleId}>
      <h3 id={titleId}>{schedule ? `Edit schedule ${schedule.name}` : "New scheduled job"}</h3>
      {!schedule && (
        <label>
          Runs in
          <select value={targetKey} onChange={(e) => setTargetKey(e.currentTarget.value)}>
            {targets.map((t) => (
              <option key={t.key} value={t.key}>
                {t.label}
              </option>
            ))}
          </select>
        </label>
      )}
      <label>
        Job name
        <input required value={fields.name} onInput={set("name")} />
      </label>
      <label>
        Schedule (cron: minute hour day month weekday)
        <input required value={fields.cronExpression} onInput={set("cronExpression")} />
      </label>
      <label>
        Time zone (empty: UTC)
        <input value={fields.timezone} placeholder="Europe/Paris" onInput={set("timezone")} />
      </label>
      {type === "compose" && (
        <label>
          Compose service whose container runs it
          <input required value={fields.serviceName} onInput={set("serviceName")} />
        </label>
      )}
      <label>
        Shell
        <select value={fields.shellType} onChange={set("shellType")}>
          <option value="bash">bash</option>
          <option value="sh">sh</option>
        </select>
      </label>
      <label>
        Command
        <textarea required rows={3} spellcheck={false} value={fields.command} onInput={set("command")} />
      </label>
      <label class="check">
        <input type="checkbox" checked={enabled} onChange={(e) => setEnabled(e.currentTarget.checked)} />{" "}
        Enabled
      </label>
      <FormButtons noun="schedule" editing={!!schedule} busy={save.busy} onCancel={onDone} />
      <ErrorText error={save.error} />
    </form>
  );
}

function ScheduleItem({
  schedule,
  where,
  onChanged,
}: {
  schedule: Schedule;
  where: string;
  onChanged: () => void;
}) {
  const [editing, setEditing] = useState(false);
  const [shown, setShown] = useState<string>();
  const run = useSubmit(async () => {
    const answer = await mutate<Answer<"schedule.runManually">>("schedule.runManually", {
      scheduleId: schedule.scheduleId,
    });
    setShown(answer.deploymentId);
    onChanged();
  });
  const shownRun = schedule.deployments.find((d) => d.deploymentId === shown);
  return (
    <li>
      <strong>{schedule.name}</strong> <span class="muted">{where}</span>{" "}
      <span class="badge">{schedule.cronExpression}</span>{" "}
      {!schedule.enabled && <span class="badge">disabled</span>}
      <p class="muted wrap-anywhere">
        {schedule.shellType}: {schedule.command}
        {schedule.nextRunAt ? ` · next run ${when(schedule.nextRunAt)}` : ""}
      </p>
      <div class="row">
        <button type="button" disabled={run.busy} onClick={run.onSubmit}>
          {run.busy ? "Running…" : `Run ${schedule.name} now`}
        </button>
        <button type="button" class="ghost" aria-expanded={editing} onClick={() => setEditing(!editing)}>
          Edit {schedule.name}
        </button>
        <ConfirmButton
          label={`Delete schedule ${schedule.name}`}
          lost={`The job stops running and its ${schedule.deployments.length} run${schedule.deployments.length === 1 ? "" : "s"} with their logs are deleted.`}
          action={async () => {
            await mutate("schedule.delete", { scheduleId: schedule.scheduleId });
            onChanged();
          }}
        />
      </div>
      <ErrorText error={run.error} />
      {editing && (
        <ScheduleForm
          targets={[]}
          schedule={schedule}
          onDone={() => {
            setEditing(false);
            onChanged();
          }}
        />
      )}
      <details>
        <summary>
          Runs of {schedule.name} ({schedule.deployments.length})
        </summary>
        {schedule.deployments.length === 0 && (
          <p class="muted">No run yet: use Run now, or wait for the schedule.</p>
        )}
        <ul class="services" aria-label={`Runs of ${schedule.name}`}>
          {schedule.deployments.map((d) => (
            <li key={d.deploymentId}>
              <Status value={d.status} /> {when(d.createdAt)}
              {d.errorMessage && <span class="error-inline"> {d.errorMessage}</span>}{" "}
              <button type="button" class="link" onClick={() => setShown(d.deploymentId)}>
                Log of the run of {when(d.createdAt)}
              </button>
            </li>
          ))}
        </ul>
      </details>
      {shown && (
        <RunLog
          title={`Log of ${schedule.name}${shownRun ? ` at ${when(shownRun.createdAt)}` : ""}`}
          deploymentId={shown}
        />
      )}
    </li>
  );
}

export function SchedulesPage({ instanceAdmin }: { instanceAdmin: boolean }) {
  const [round, setRound] = useState(0);
  const reload = () => setRound((n) => n + 1);
  const targets = useLoad(() => loadTargets(instanceAdmin), `targets-${instanceAdmin}-${round}`);
  const schedules = useLoad(
    async () =>
      (
        await Promise.all(
          (targets.data ?? []).map(async (target) =>
            (
              await query<Schedule[]>("schedule.list", { id: target.id, scheduleType: target.scheduleType })
            ).map((schedule) => ({ schedule, where: target.label })),
          ),
        )
      ).flat(),
    `schedules-${round}-${targets.data ? targets.data.length : "waiting"}`,
  );
  const list = schedules.data ?? [];
  return (
    <div class="instance-page">
      <h1>Schedules</h1>
      <p class="muted">
        Commands run on a cron schedule in a service's container{instanceAdmin ? " or on a server" : ""}.
      </p>
      <ErrorText error={targets.error ?? schedules.error} />
      {targets.data && schedules.data && list.length === 0 && (
        <p class="muted">
          {targets.data.length === 0
            ? "No application or compose stack yet: create one in a project, then schedule jobs in it here."
            : "No scheduled job yet: create one below."}
        </p>
      )}
      <ul class="services" aria-label="Scheduled jobs">
        {list.map(({ schedule, where }) => (
          <ScheduleItem key={schedule.scheduleId} schedule={schedule} where={where} onChanged={reload} />
        ))}
      </ul>
      {targets.data && targets.data.length > 0 && (
        <ScheduleForm key={`new-${round}`} targets={targets.data} onDone={reload} />
      )}
    </div>
  );
}
