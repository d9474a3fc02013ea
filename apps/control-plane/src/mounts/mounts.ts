/**
 * A service's mounts (Dokploy's `mount`, issue 27): named volumes, files whose content the
 * platform writes, and host paths (bind mounts, the instance organization only). The rules that
 * decide what may be mounted live here, and so does the lookup every deploy step asks:
 * `serviceMountsOf(db, kind, id)` answers the ServiceMounts of a service of any kind, so the
 * application pipeline, the database deployments and compose stacks share it.
 *
 * Volumes: the Docker volume is named `volumeName` as given (Dokploy's behaviour), and a name
 * belongs to one service across the instance: the agent creates it with that service's
 * ownership labels and refuses to mount an existing volume whose labels name anyone else, and
 * the API refuses (400 naming volumeName) a name another service's mount or database data
 * volume already uses, or a `platform-` name. So a tenant can never mount another
 * organization's volume, by the API or by racing a name onto the host.
 */
import type { Init, ServiceMount } from "@platform/agent-protocol";
import { isValidName, RESERVED_NAME_PREFIX } from "@platform/names";
import { dataVolumeOf } from "../databases/kinds.ts";
import type { Db } from "../db/database.ts";
import type { Mount, MountType } from "../db/schema.ts";
import { badRequest } from "../errors.ts";
import { isInstanceOrganization } from "../organizations/instance.ts";
import type { ServiceKind } from "../projects/workload-kinds.ts";

/** The biggest file a file mount holds (the agent writes it on the host). */
export const MAX_FILE_MOUNT_BYTES = 1024 * 1024;

const invalid = (field: string, message: string) =>
  badRequest(`Invalid input: ${field}: ${message}`, { fields: [field] });

// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it refuses
const CONTROL = /[\u0000-\u001f\u007f]/;

/** The parts of an absolute container path; 400 naming `field` for anything else. */
function containerPath(field: string, value: string): string {
  const parts = value.split("/").filter((part) => part && part !== ".");
  if (!value.startsWith("/") || CONTROL.test(value) || value.includes(",") || value.length > 4096) {
    throw invalid(field, "must be an absolute path without control characters or commas");
  }
  if (parts.length === 0 || parts.includes(".."))
    throw invalid(field, "must name a path below / without '..'");
  return `/${parts.join("/")}`;
}

/** A relative file name inside the service's files directory: segments of [A-Za-z0-9._-], no '..'. */
function relativeFilePath(value: string): string {
  const parts = value.split("/").filter((part) => part && part !== ".");
  if (parts.length === 0 || parts.some((part) => !isValidName(part) || /^\.+$/.test(part))) {
    throw invalid(
      "filePath",
      "must be a relative path of names of letters, digits, '.', '-' and '_' without '..'",
    );
  }
  return parts.join("/");
}

/** What a mount row holds, as create/update give it ("" and null both mean absent). */
export interface MountFields {
  type: MountType;
  mountPath?: string | null;
  volumeName?: string | null;
  filePath?: string | null;
  content?: string | null;
  hostPath?: string | null;
}

export interface MountOwner {
  organizationId: string;
  kind: ServiceKind;
  /** applicationId, databaseId or composeId. */
  serviceId: string;
}

const present = (value: string | null | undefined): value is string =>
  value !== undefined && value !== null && value !== "";

/**
 * The mount as it is stored, after every rule: a field of another type is refused (never kept
 * unused), a volume name used by another service or reserved is refused, host paths are the
 * instance organization's only. 400 naming the field, nothing stored.
 */
export async function checkMount(
  db: Db,
  owner: MountOwner,
  fields: MountFields,
  except?: string,
): Promise<
  Omit<
    Mount,
    "mountId" | "createdAt" | "serviceType" | "applicationId" | "databaseId" | "composeId" | "organizationId"
  >
> {
  const own: Record<MountType, readonly (keyof MountFields)[]> = {
    volume: ["volumeName"],
    file: ["content", "filePath"],
    bind: ["hostPath"],
  };
  for (const field of ["volumeName", "filePath", "content", "hostPath"] as const) {
    if (present(fields[field]) && !own[fields.type].includes(field)) {
      throw invalid(field, `is not used by a ${fields.type} mount`);
    }
  }
  if (owner.kind === "compose") return checkComposeMount(fields);
  if (!present(fields.mountPath)) throw invalid("mountPath", "is required");
  const mountPath = containerPath("mountPath", fields.mountPath);
  const row = {
    type: fields.type,
    mountPath,
    volumeName: null,
    filePath: null,
    content: null,
    hostPath: null,
  };
  if (fields.type === "volume") {
    return { ...row, volumeName: await checkVolumeName(db, owner, fields.volumeName, except) };
  }
  if (fields.type === "file") {
    const content = checkContent(fields.content);
    const filePath = relativeFilePath(present(fields.filePath) ? fields.filePath : mountPath);
    return { ...row, content, filePath };
  }
  if (!(await isInstanceOrganization(db, owner.organizationId))) {
    throw invalid(
      "hostPath",
      "bind mounts of host paths are for the instance organization only: use a volume",
    );
  }
  if (!present(fields.hostPath)) throw invalid("hostPath", "is required for a bind mount");
  return { ...row, hostPath: containerPath("hostPath", fields.hostPath) };
}

/** A file mount's content: an empty file is a file, only a missing content is refused. */
function checkContent(content: string | null | undefined): string {
  if (typeof content !== "string") throw invalid("content", "is required for a file mount");
  if (Buffer.byteLength(content) > MAX_FILE_MOUNT_BYTES) {
    throw invalid("content", `must be at most ${MAX_FILE_MOUNT_BYTES} bytes`);
  }
  return content;
}

/**
 * A compose stack's mount: a file the agent writes under the stack's files directory, which its
 * compose file binds as `../files/<filePath>` (Dokploy's layout; mountPath stays empty, "/" as
 * Dokploy's client sends it too, one mount per filePath). Volumes and host paths are declared in the compose file itself, where the
 * conversion namespaces the stack's volumes and refuses a tenant's host paths and foreign volumes.
 */
function checkComposeMount(fields: MountFields) {
  if (fields.type !== "file") {
    throw invalid(
      "type",
      "a compose stack's mounts are files (written under ../files/<filePath>): its volumes and bind mounts are declared in its compose file",
    );
  }
  // Dokploy's client sends "/" for a stack's file mount: it means none, as "" does.
  if (present(fields.mountPath) && fields.mountPath !== "/") {
    throw invalid(
      "mountPath",
      "a compose stack's file is bound where its compose file names ../files/<filePath>: leave mountPath empty",
    );
  }
  if (!present(fields.filePath)) throw invalid("filePath", "is required for a compose stack's file mount");
  return {
    type: "file" as const,
    mountPath: "",
    volumeName: null,
    filePath: relativeFilePath(fields.filePath),
    content: checkContent(fields.content),
    hostPath: null,
  };
}

export async function checkVolumeName(
  db: Db,
  owner: MountOwner,
  volumeName: string | null | undefined,
  except: string | undefined,
): Promise<string> {
  if (!present(volumeName)) throw invalid("volumeName", "is required for a volume mount");
  if (!isValidName(volumeName) || !/^[a-zA-Z0-9]/.test(volumeName) || volumeName.length > 255) {
    throw invalid(
      "volumeName",
      "must start with a letter or digit and hold only letters, digits, '.', '-' and '_'",
    );
  }
  if (volumeName.startsWith(RESERVED_NAME_PREFIX)) {
    throw invalid("volumeName", `names starting with ${RESERVED_NAME_PREFIX} are the platform's`);
  }
  const otherMount = await db
    .selectFrom("mounts")
    .select("mountId")
    .where("volumeName", "=", volumeName)
    .where((eb) =>
      eb.or([
        eb("applicationId", "is", null).and("databaseId", "is", null).and("composeId", "is", null),
        eb(eb.fn.coalesce("applicationId", "databaseId", "composeId"), "!=", owner.serviceId),
      ]),
    )
    .where("mountId", "!=", except ?? "")
    .limit(1)
    .executeTakeFirst();
  // A database's data volume (dataVolumeOf) is its own.
  const dataVolume = volumeName.endsWith(dataVolumeOf(""))
    ? await db
        .selectFrom("databaseServices")
        .select("databaseId")
        .where("appName", "=", volumeName.slice(0, -dataVolumeOf("").length))
        .executeTakeFirst()
    : undefined;
  if (otherMount || (dataVolume && dataVolume.databaseId !== owner.serviceId)) {
    throw invalid("volumeName", "is used by another service: a volume belongs to one service");
  }
  return volumeName;
}

/** The mounts of a service as the deploy step puts them on its ServiceSpec. */
export function toServiceMounts(rows: readonly Mount[]): Init<ServiceMount>[] {
  return rows.map((row): Init<ServiceMount> => {
    if (row.type === "volume") return { type: "volume", source: row.volumeName ?? "", target: row.mountPath };
    if (row.type === "bind") return { type: "bind", source: row.hostPath ?? "", target: row.mountPath };
    return { type: "file", source: row.filePath ?? "", target: row.mountPath, content: row.content ?? "" };
  });
}

/**
 * The mounts of the service of `kind` and `serviceId`, for its next deploy: the one lookup every
 * kind's deploy step calls. A compose stack's are file mounts (`source` its filePath) that the
 * agent writes under the stack's files directory, where its compose file binds them.
 */
export async function serviceMountsOf(
  db: Db,
  kind: ServiceKind,
  serviceId: string,
): Promise<Init<ServiceMount>[]> {
  const column = kind === "application" ? "applicationId" : kind === "compose" ? "composeId" : "databaseId";
  const rows = await db
    .selectFrom("mounts")
    .selectAll()
    .where(column, "=", serviceId)
    .orderBy("mountPath")
    .execute();
  return toServiceMounts(rows);
}
