/**
 * The checks of a service's Git source at save time, shared by applications and compose stacks:
 * a provider connection of the caller's organization, an allowed custom Git URL, an SSH key of
 * the organization.
 */

import type { Caller, ServiceContext } from "../context.ts";
import type { GitProviderType } from "../db/schema.ts";
import { badRequest, notFound } from "../errors.ts";
import { findProvider, PROVIDER_ID_FIELD, PROVIDER_NAMES } from "../git-providers/repository.ts";
import { sshKeyBelongsTo } from "./repository.ts";
import { gitUrlProblem } from "./validation.ts";

/**
 * The Git source checks that depend on configuration or on other rows: provider ids of the
 * caller's organization, a custom Git URL the outbound guard allows (PLATFORM_OUTBOUND_ALLOW) and
 * an SSH key of the caller's organization.
 */
export async function checkGitSource(
  ctx: ServiceContext,
  caller: Caller,
  input: { customGitUrl?: string | null; customGitSSHKeyId?: string | null } & Partial<
    Record<(typeof PROVIDER_ID_FIELD)[GitProviderType], string | null>
  >,
): Promise<void> {
  // A provider id set through update is checked like save*Provider's: another organization's is a 404.
  for (const [kind, field] of Object.entries(PROVIDER_ID_FIELD) as [GitProviderType, keyof typeof input][]) {
    const providerId = input[field];
    if (providerId) await requireOwnProvider(ctx, caller, kind, providerId);
  }
  const loopbackProblem =
    input.customGitUrl && gitUrlProblem(input.customGitUrl, { outbound: ctx.config.outboundAllow });
  if (loopbackProblem) {
    throw badRequest(`customGitUrl is not an allowed Git URL: ${loopbackProblem}`, {
      fields: ["customGitUrl"],
    });
  }
  const sshKeyId = input.customGitSSHKeyId;
  if (sshKeyId && !(await sshKeyBelongsTo(ctx.db, caller.organizationId, sshKeyId))) {
    throw notFound("SSH key");
  }
}

/**
 * The provider connection a save*Provider names must be one of the caller's organization (404
 * otherwise, like any other id of another organization). Returns nothing to patch.
 */
export async function requireOwnProvider(
  ctx: ServiceContext,
  caller: Caller,
  kind: GitProviderType,
  providerId: string,
): Promise<Record<string, never>> {
  if (!(await findProvider(ctx.db, caller.organizationId, kind, providerId, caller))) {
    throw notFound(`${PROVIDER_NAMES[kind]} provider`);
  }
  return {};
}
