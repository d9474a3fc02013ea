/**
 * The passwords of a database service, sealed with the SecretBox and bound to the service and
 * its organization, and what the API shows of a service.
 */
import type { SecretBox, SecretContext } from "../crypto/secret-box.ts";
import type { DatabaseService } from "../db/schema.ts";
import { type DatabaseKind, databaseKindFacts, imageOf, type OpenedDatabase } from "./kinds.ts";

export type DatabaseSecretField = "databasePassword" | "databaseRootPassword";

const secretContext = (
  field: DatabaseSecretField,
  databaseId: string,
  organizationId: string,
): SecretContext => ({ table: `database_services.${field}`, rowId: databaseId, organizationId });

export function sealDatabaseSecret(
  secrets: SecretBox,
  field: DatabaseSecretField,
  owner: { databaseId: string; organizationId: string },
  value: string,
): string {
  return secrets.encrypt(value, secretContext(field, owner.databaseId, owner.organizationId));
}

export function openDatabaseSecret(
  secrets: SecretBox,
  field: DatabaseSecretField,
  owner: { databaseId: string; organizationId: string },
  sealed: string,
): string {
  return secrets.decrypt(sealed, secretContext(field, owner.databaseId, owner.organizationId));
}

/** The service with its passwords opened (for its container environment and its URLs). */
export function openDatabase(
  secrets: SecretBox,
  row: DatabaseService & { organizationId: string },
): OpenedDatabase {
  return {
    appName: row.appName,
    databaseName: row.databaseName,
    databaseUser: row.databaseUser,
    databasePassword: openDatabaseSecret(secrets, "databasePassword", row, row.databasePasswordSealed),
    databaseRootPassword:
      row.databaseRootPasswordSealed === null
        ? null
        : openDatabaseSecret(secrets, "databaseRootPassword", row, row.databaseRootPasswordSealed),
    replicaSets: row.replicaSets,
    sqldNode: row.sqldNode,
    sqldPrimaryUrl: row.sqldPrimaryUrl,
    enableNamespaces: row.enableNamespaces,
  };
}

/** The fields every answer about a service carries (no secret): `<kind>Id` instead of databaseId. */
export function toDatabaseSummary(
  row: DatabaseService,
  defaultImages: Partial<Record<DatabaseKind, string>> | undefined,
) {
  const facts = databaseKindFacts[row.kind];
  return {
    [facts.idKey]: row.databaseId,
    name: row.name,
    appName: row.appName,
    description: row.description,
    dockerImage: imageOf(row, defaultImages),
    environmentId: row.environmentId,
    serverId: row.serverId,
    applicationStatus: row.applicationStatus,
    externalPort: row.externalPort,
    ...(facts.fields.databaseName ? { databaseName: row.databaseName } : {}),
    ...(facts.fields.databaseUser ? { databaseUser: row.databaseUser } : {}),
    ...(facts.fields.replicaSets ? { replicaSets: row.replicaSets } : {}),
    ...(facts.fields.sqld
      ? { sqldNode: row.sqldNode, sqldPrimaryUrl: row.sqldPrimaryUrl, enableNamespaces: row.enableNamespaces }
      : {}),
    ...Object.fromEntries((facts.extraPorts ?? []).map((extra) => [extra.field, row[extra.column]])),
    memoryLimit: row.memoryLimit,
    memoryReservation: row.memoryReservation,
    cpuLimit: row.cpuLimit,
    cpuReservation: row.cpuReservation,
    env: row.env,
    command: row.command,
    args: row.args,
    createdAt: row.createdAt,
  };
}
