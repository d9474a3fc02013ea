/**
 * Who holds each dynamic and certificate file of the proxy: a tenant (its ResourceOwner) or the
 * platform itself. A file has no labels, so the agent records its holder when it writes it, in
 * <main directory>/proxy-holders/<scope>/<SHA-256 of the file name>.json (a file name may be as
 * long as the file system allows), beside and not inside the directory
 * Traefik reads. A command naming another holder than the recorded one is refused
 * (FAILED_PRECONDITION): a control-plane bug cannot make the agent read, overwrite or remove
 * another tenant's routes or keys. A file written before holders were recorded has none; its
 * next write records one.
 */
import { createHash, randomBytes } from "node:crypto";
import { mkdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import type { ProxyFileHolder, ResourceOwner } from "@platform/agent-protocol";
import { isCompleteOwner } from "@platform/ownership";
import { CommandError } from "../command-error.ts";

export const HOLDERS_DIRECTORY_NAME = "proxy-holders";

type Holder = { platform: true } | ResourceOwner;

/** The holder a command names; static (traefik.yml) is the platform's and takes none. */
export function commandHolder(scope: string, command: ProxyFileHolder): Holder | undefined {
  const owner =
    command.owner && (command.owner.organizationId || command.owner.resource) ? command.owner : undefined;
  if (scope === "static") {
    if (owner)
      throw new CommandError("INVALID_ARGUMENT", "owner: traefik.yml is the platform's, not a tenant's");
    return undefined;
  }
  if (owner && command.platformFile)
    throw new CommandError("INVALID_ARGUMENT", "owner: a file is a tenant's or the platform's, not both");
  if (command.platformFile) return { platform: true };
  if (!isCompleteOwner(owner))
    throw new CommandError(
      "INVALID_ARGUMENT",
      "owner: organizationId and resource (or platformFile) are required",
    );
  return { organizationId: owner.organizationId, resource: owner.resource };
}

const holderName = (holder: Holder) =>
  "platform" in holder
    ? "the platform"
    : `${holder.resource.split(":")[0] || "resource"} ${holder.resource.split(":")[1] ?? ""}`.trim();

function sameHolder(a: Holder, b: Holder): boolean {
  if ("platform" in a || "platform" in b) return "platform" in a && "platform" in b;
  return a.organizationId === b.organizationId && a.resource === b.resource;
}

export class ProxyFileHolders {
  /** The last command on each file: commands on one file run one after the other. */
  private readonly queues = new Map<string, Promise<unknown>>();

  constructor(private readonly mainDirectory: string) {}

  /** Runs `action` after every earlier command on the same file (check and act as one step). */
  exclusive<T>(scope: string, fileName: string, action: () => Promise<T>): Promise<T> {
    const key = `${scope}/${fileName}`;
    const previous = this.queues.get(key) ?? Promise.resolve();
    const next = previous.then(action, action);
    const settled = next.catch(() => {});
    this.queues.set(key, settled);
    settled.then(() => {
      if (this.queues.get(key) === settled) this.queues.delete(key);
    });
    return next;
  }

  /** `fileName` has been checked (a plain file name) by proxyFileLocation. */
  private recordPath(scope: string, fileName: string): string {
    const key = createHash("sha256").update(fileName).digest("hex");
    return path.join(this.mainDirectory, HOLDERS_DIRECTORY_NAME, scope, `${key}.json`);
  }

  /** The holder recorded for the file: a tenant, the platform, or undefined when none is. */
  async holderOf(scope: string, fileName: string): Promise<Holder | undefined> {
    return this.recorded(scope, fileName);
  }

  private async recorded(scope: string, fileName: string): Promise<Holder | undefined> {
    try {
      return JSON.parse(await readFile(this.recordPath(scope, fileName), "utf8")) as Holder;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
      throw error;
    }
  }

  /** Throws FAILED_PRECONDITION when the file is recorded for another holder than `holder`. */
  async check(scope: string, fileName: string, holder: Holder | undefined): Promise<void> {
    if (!holder) return;
    const recorded = await this.recorded(scope, fileName);
    if (recorded && !sameHolder(recorded, holder)) {
      throw new CommandError(
        "FAILED_PRECONDITION",
        `the ${scope} file ${fileName} belongs to someone else than ${holderName(holder)}: nothing was done`,
      );
    }
  }

  /** Records `holder` for the file (before the file is written: never a file without one). */
  async record(scope: string, fileName: string, holder: Holder | undefined): Promise<void> {
    if (!holder) return;
    const file = this.recordPath(scope, fileName);
    await mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
    const temporary = `${file}.${randomBytes(6).toString("hex")}.tmp`;
    await writeFile(temporary, JSON.stringify(holder), { mode: 0o600 });
    await rename(temporary, file);
  }

  async forget(scope: string, fileName: string, holder: Holder | undefined): Promise<void> {
    if (!holder) return;
    await rm(this.recordPath(scope, fileName), { force: true });
  }
}
