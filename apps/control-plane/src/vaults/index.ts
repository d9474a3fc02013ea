/**
 * Secret vaults (Dokploy's vaultProvider, issue 41 item 7): an organization's external secret
 * stores, read at deploy time. A service's variable names a secret as
 * `${{vault.<provider name>.<path>:<field>}}` (Dokploy's reference syntax; HashiCorp Vault KV v2
 * is the provider type served); the deploy reads it from the vault and hands the value to the
 * agent with the service spec, never to our database or a log (the log names the keys read).
 *
 * A provider is usable by the projects (and, when listed, only those environments) of its
 * `assignments`. Its token is sealed, bound to its row and organization, and answered only as
 * VAULT_SECRET_MASK; an update sending the mask keeps the stored token (Dokploy's merge).
 */
import { z } from "zod";
import type { ServiceContext } from "../context.ts";
import { newId } from "../crypto/ids.ts";
import type { SecretContext } from "../crypto/secret-box.ts";
import type { Db } from "../db/database.ts";
import { ownedBy } from "../db/owned.ts";
import type { VaultProviderAssignment, VaultProviderRow } from "../db/schema.ts";
import type { EnvVar } from "../env-vars.ts";
import { badRequest, conflict, notFound } from "../errors.ts";
import { type HashicorpConfig, readSecret, VaultError } from "./hashicorp.ts";

export const VAULT_SECRET_MASK = "********";

export const vaultProviderNameSchema = z
  .string()
  .min(1)
  .max(64)
  .regex(/^[a-zA-Z0-9_-]+$/, "Name can only contain letters, numbers, dashes and underscores");

/** Dokploy's hashicorp config. Its other provider types are not served (a 400 naming providerType). */
export const hashicorpConfigSchema = z.strictObject({
  providerType: z.literal("hashicorp"),
  url: z.url({ protocol: /^https?$/ }).max(2048),
  token: z.string().min(1).max(4096),
  namespace: z.string().max(256).optional(),
  mount: z
    .string()
    .min(1)
    .max(256)
    .regex(/^[^/]+$/, "mount is one path segment")
    .default("secret"),
});
export type VaultConfigInput = z.output<typeof hashicorpConfigSchema>;

export const assignmentSchema = z.strictObject({
  projectId: z.string().min(1),
  environmentIds: z.array(z.string().min(1)).max(200).default([]),
});

export const vaultProviderSchema = z.object({
  vaultProviderId: z.string(),
  name: z.string(),
  providerType: z.literal("hashicorp"),
  config: z.object({
    providerType: z.literal("hashicorp"),
    url: z.string(),
    token: z.literal(VAULT_SECRET_MASK),
    namespace: z.string().optional(),
    mount: z.string(),
  }),
  assignments: z.array(z.object({ projectId: z.string(), environmentIds: z.array(z.string()) })),
  organizationId: z.string(),
  createdAt: z.string(),
});
export type VaultProviderView = z.infer<typeof vaultProviderSchema>;

const sealContext = (row: { vaultProviderId: string; organizationId: string }): SecretContext => ({
  table: "vault_providers",
  rowId: row.vaultProviderId,
  organizationId: row.organizationId,
});

/** What responses show of a provider: the token masked. */
export function toVaultProviderView(row: VaultProviderRow): VaultProviderView {
  return {
    vaultProviderId: row.vaultProviderId,
    name: row.name,
    providerType: row.providerType,
    config: {
      providerType: row.providerType,
      url: row.url,
      token: VAULT_SECRET_MASK,
      ...(row.namespace ? { namespace: row.namespace } : {}),
      mount: row.mount,
    },
    assignments: row.assignments,
    organizationId: row.organizationId,
    createdAt: row.createdAt,
  };
}

/** The provider's connection with its token opened. */
export function openConfig(ctx: Pick<ServiceContext, "secrets">, row: VaultProviderRow): HashicorpConfig {
  return {
    url: row.url,
    mount: row.mount,
    namespace: row.namespace,
    token: ctx.secrets.decrypt(row.tokenSealed, sealContext(row)),
  };
}

/**
 * `incoming` with a masked token replaced by the stored one (Dokploy's mergeVaultProviderConfig);
 * the mask without a stored provider is refused.
 */
export function mergeConfig(
  ctx: Pick<ServiceContext, "secrets">,
  incoming: VaultConfigInput,
  existing: VaultProviderRow | undefined,
): HashicorpConfig {
  if (incoming.token !== VAULT_SECRET_MASK) return incoming;
  if (!existing) throw badRequest("config.token: the masked token can only stand for a stored provider's");
  return { ...incoming, token: openConfig(ctx, existing).token };
}

/**
 * Every assignment names a project of the organization and environments of that project: another
 * organization's project or environment is a 404, as everywhere.
 */
async function checkAssignments(db: Db, organizationId: string, assignments: VaultProviderAssignment[]) {
  for (const [index, assignment] of assignments.entries()) {
    const project = await db
      .selectFrom("projects")
      .select("projectId")
      .where("projectId", "=", assignment.projectId)
      .where("organizationId", "=", organizationId)
      .executeTakeFirst();
    if (!project) throw notFound(`assignments[${index}].projectId: Project`);
    if (assignment.environmentIds.length === 0) continue;
    const found = await db
      .selectFrom("environments")
      .select("environmentId")
      .where("projectId", "=", assignment.projectId)
      .where("environmentId", "in", assignment.environmentIds)
      .execute();
    if (found.length !== new Set(assignment.environmentIds).size) {
      throw notFound(`assignments[${index}].environmentIds: Environment of the project`);
    }
  }
}

const isNameTaken = (error: unknown) =>
  error instanceof Error && error.message.includes("vault_providers_organization_name_unique");
const nameTaken = (name: string) =>
  conflict(`A vault provider named "${name}" already exists in this organization`);

export interface VaultProviderFields {
  name: string;
  config: VaultConfigInput;
  assignments: VaultProviderAssignment[];
}

export async function createVaultProvider(
  ctx: ServiceContext,
  organizationId: string,
  fields: VaultProviderFields,
): Promise<VaultProviderRow> {
  const config = mergeConfig(ctx, fields.config, undefined);
  await checkAssignments(ctx.db, organizationId, fields.assignments);
  const vaultProviderId = newId();
  try {
    return await ctx.db
      .insertInto("vaultProviders")
      .values({
        vaultProviderId,
        organizationId,
        name: fields.name,
        providerType: "hashicorp",
        url: config.url,
        mount: config.mount,
        namespace: config.namespace || null,
        tokenSealed: ctx.secrets.encrypt(config.token, sealContext({ vaultProviderId, organizationId })),
        assignments: JSON.stringify(fields.assignments),
      })
      .returningAll()
      .executeTakeFirstOrThrow();
  } catch (error) {
    if (isNameTaken(error)) throw nameTaken(fields.name);
    throw error;
  }
}

export function findVaultProvider(
  db: Db,
  organizationId: string,
  vaultProviderId: string,
): Promise<VaultProviderRow | undefined> {
  return db
    .selectFrom("vaultProviders")
    .selectAll()
    .where("vaultProviderId", "=", vaultProviderId)
    .where("organizationId", "=", organizationId)
    .executeTakeFirst();
}

/** The provider of the organization, or a 404 (another organization's is one too). */
export async function requireVaultProvider(
  db: Db,
  organizationId: string,
  vaultProviderId: string,
): Promise<VaultProviderRow> {
  return (await findVaultProvider(db, organizationId, vaultProviderId)) ?? throwNotFound();
}

const throwNotFound = (): never => {
  throw notFound("Vault provider");
};

/** The organization's providers by name. */
export function listVaultProviders(db: Db, organizationId: string): Promise<VaultProviderRow[]> {
  return db
    .selectFrom("vaultProviders")
    .selectAll()
    .where("organizationId", "=", organizationId)
    .orderBy("name")
    .execute();
}

export async function updateVaultProvider(
  ctx: ServiceContext,
  organizationId: string,
  vaultProviderId: string,
  fields: VaultProviderFields,
): Promise<VaultProviderRow> {
  const existing = await requireVaultProvider(ctx.db, organizationId, vaultProviderId);
  const config = mergeConfig(ctx, fields.config, existing);
  await checkAssignments(ctx.db, organizationId, fields.assignments);
  try {
    return (
      (await ctx.db
        .updateTable("vaultProviders")
        .set({
          name: fields.name,
          url: config.url,
          mount: config.mount,
          namespace: config.namespace || null,
          tokenSealed: ctx.secrets.encrypt(config.token, sealContext(existing)),
          assignments: JSON.stringify(fields.assignments),
        })
        .where("vaultProviderId", "=", vaultProviderId)
        .where("organizationId", "=", organizationId)
        .returningAll()
        .executeTakeFirst()) ?? throwNotFound()
    );
  } catch (error) {
    if (isNameTaken(error)) throw nameTaken(fields.name);
    throw error;
  }
}

export async function removeVaultProvider(db: Db, organizationId: string, vaultProviderId: string) {
  const removed = await db
    .deleteFrom("vaultProviders")
    .where("vaultProviderId", "=", vaultProviderId)
    .where("organizationId", "=", organizationId)
    .executeTakeFirst();
  if (removed.numDeletedRows === 0n) throwNotFound();
}

/** The environment `environmentId` of the project `projectId`, or a 404. */
export async function requireEnvironmentOf(
  db: Db,
  projectId: string,
  environmentId: string,
): Promise<{ environmentId: string; projectId: string }> {
  const environment = await db
    .selectFrom("environments")
    .select(["environmentId", "projectId"])
    .where("environmentId", "=", environmentId)
    .where("projectId", "=", projectId)
    .executeTakeFirst();
  if (!environment) throw notFound("Environment");
  return environment;
}

/** Whether the provider may be used by the project's environment (Dokploy's isVaultProviderAssigned). */
export function isAssigned(
  assignments: readonly VaultProviderAssignment[],
  projectId: string,
  environmentId: string | undefined,
): boolean {
  return assignments.some(
    (assignment) =>
      assignment.projectId === projectId &&
      (assignment.environmentIds.length === 0 ||
        environmentId === undefined ||
        assignment.environmentIds.includes(environmentId)),
  );
}

const VAULT_REFERENCE = /\$\{\{\s*vault\.([a-zA-Z0-9_-]+)\.([^}\s]+?)\s*\}\}/g;

/** Where a deployment's variables come from, for the vault references in them. */
export interface VaultScope {
  organizationId: string;
  environmentId: string;
}

/**
 * The variables with every `${{vault.<provider>.<path>:<field>}}` replaced by the secret's
 * value, read now from the provider. The values join `secrets` (the deployment log's
 * redaction list) and `log` is told which keys were read from which provider, never a value.
 * Throws an Error naming the variable and reference when the provider is unknown or not
 * assigned to the environment's project, the token is refused, or the field is missing.
 */
export async function resolveVaultReferences(
  ctx: ServiceContext,
  scope: VaultScope,
  vars: EnvVar[],
  log: (line: string) => void,
  secrets: string[],
): Promise<EnvVar[]> {
  const referenced = vars.filter(({ value }) => value.includes("${{") && /\$\{\{\s*vault\./.test(value));
  if (referenced.length === 0) return vars;
  const environment = await ownedBy(ctx.db.selectFrom("environments"), "environments", scope.organizationId)
    .select("environments.projectId")
    .where("environments.environmentId", "=", scope.environmentId)
    .executeTakeFirstOrThrow();
  const providers = new Map<string, Promise<VaultProviderRow | undefined>>();
  const secretsRead = new Map<string, Promise<Record<string, unknown>>>();
  const readKeys = new Map<string, string[]>();

  const secretValue = async (key: string, providerName: string, ref: string): Promise<string> => {
    const reference = `\${{vault.${providerName}.${ref}}}`;
    const separator = ref.lastIndexOf(":");
    if (separator <= 0 || separator === ref.length - 1) {
      throw new Error(`The variable ${key} refers to ${reference}: expected <path>:<field>`);
    }
    const path = ref.slice(0, separator);
    const field = ref.slice(separator + 1);
    if (!providers.has(providerName)) {
      providers.set(
        providerName,
        ctx.db
          .selectFrom("vaultProviders")
          .selectAll()
          .where("organizationId", "=", scope.organizationId)
          .where("name", "=", providerName)
          .executeTakeFirst(),
      );
    }
    const provider = await providers.get(providerName)!;
    if (!provider) {
      throw new Error(
        `The variable ${key} refers to ${reference}: there is no vault provider named ${providerName}`,
      );
    }
    if (!isAssigned(provider.assignments, environment.projectId, scope.environmentId)) {
      throw new Error(
        `The variable ${key} refers to ${reference}: the vault provider ${providerName} is not enabled for this project or environment`,
      );
    }
    const secretKey = `${providerName}\u0000${path}`;
    if (!secretsRead.has(secretKey)) {
      const config = openConfig(ctx, provider);
      secretsRead.set(secretKey, readSecret(ctx, scope.organizationId, config, path));
    }
    let data: Record<string, unknown>;
    try {
      data = await secretsRead.get(secretKey)!;
    } catch (error) {
      if (error instanceof VaultError) {
        throw new Error(`The variable ${key} refers to ${reference}: ${error.message}`);
      }
      throw error;
    }
    const value = data[field];
    if (value === undefined || value === null) {
      throw new Error(
        `The variable ${key} refers to ${reference}: the secret "${path}" has no field ${field}`,
      );
    }
    const text = typeof value === "string" ? value : JSON.stringify(value);
    secrets.push(text);
    readKeys.set(providerName, [...(readKeys.get(providerName) ?? []), key]);
    return text;
  };

  const resolved: EnvVar[] = [];
  for (const { key, value } of vars) {
    const matches = [...value.matchAll(VAULT_REFERENCE)];
    if (matches.length === 0) {
      resolved.push({ key, value });
      continue;
    }
    let out = "";
    let last = 0;
    for (const match of matches) {
      out += value.slice(last, match.index) + (await secretValue(key, match[1]!, match[2]!));
      last = match.index + match[0].length;
    }
    resolved.push({ key, value: out + value.slice(last) });
  }
  for (const [providerName, keys] of readKeys) {
    log(`Read ${[...new Set(keys)].join(", ")} from the vault provider ${providerName}`);
  }
  return resolved;
}
