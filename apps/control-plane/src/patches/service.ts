/**
 * Patches of a service (patch.*): the caller's application or compose stack found first (404
 * otherwise), then its patches. Saving keeps a service's patches within one build command's
 * budget (400 naming `content`); two patches of one path are a 409 naming `filePath`.
 */
import { findApplication } from "../applications/repository.ts";
import { loadCallerCompose } from "../compose/repository.ts";
import type { Caller, ServiceContext } from "../context.ts";
import type { Db } from "../db/database.ts";
import { badRequest, conflict, notFound } from "../errors.ts";
import { requireApplicationAccess } from "../projects/permissions.ts";
import {
  deletePatch,
  findPatch,
  findPatchByPath,
  insertPatch,
  listPatches,
  type Patch,
  type PatchOwner,
  type PatchType,
  patchBytesOf,
  updatePatch,
} from "./repository.ts";
import { MAX_SERVICE_PATCH_BYTES } from "./validation.ts";

export type { Patch };
export type ServiceKind = "application" | "compose";

/** The caller's application or stack as the owner of patches; 404 naming it otherwise. */
export async function loadPatchOwner(
  ctx: ServiceContext,
  caller: Caller,
  kind: ServiceKind,
  id: string,
): Promise<PatchOwner> {
  if (kind === "compose") {
    const compose = await loadCallerCompose(ctx.db, caller, id);
    return { composeId: compose.composeId };
  }
  const application = await findApplication(ctx.db, caller.organizationId, id);
  if (!application) throw notFound("Application");
  await requireApplicationAccess(ctx.db, caller, application.applicationId);
  return { applicationId: application.applicationId };
}

/** A patch of the caller's organization that the caller may see; 404 otherwise. */
export async function loadCallerPatch(ctx: ServiceContext, caller: Caller, patchId: string): Promise<Patch> {
  const patch = await findPatch(ctx.db, caller.organizationId, patchId);
  if (!patch) throw notFound("Patch");
  if (patch.applicationId) await requireApplicationAccess(ctx.db, caller, patch.applicationId, "Patch");
  else if (patch.composeId) await loadCallerCompose(ctx.db, caller, patch.composeId, "Patch");
  return patch;
}

export function ownerOf(patch: Patch): PatchOwner {
  return patch.applicationId
    ? { applicationId: patch.applicationId }
    : { composeId: patch.composeId as string };
}

async function checkBudget(db: Db, owner: PatchOwner, content: string, exceptPatchId?: string) {
  const others = await patchBytesOf(db, owner, exceptPatchId);
  if (others + Buffer.byteLength(content, "utf8") > MAX_SERVICE_PATCH_BYTES)
    throw badRequest(
      `content: the service's patches would hold more than ${MAX_SERVICE_PATCH_BYTES} bytes (they travel in one build command)`,
      { fields: ["content"] },
    );
}

const duplicatePath = () =>
  conflict("The service already has a patch of this filePath", { fields: ["filePath"] });

export async function createPatch(
  ctx: ServiceContext,
  owner: PatchOwner,
  values: { filePath: string; content: string; type: PatchType; enabled: boolean },
): Promise<Patch> {
  const content = values.type === "delete" ? "" : values.content;
  await checkBudget(ctx.db, owner, content);
  return (await insertPatch(ctx.db, owner, { ...values, content })) ?? Promise.reject(duplicatePath());
}

export async function changePatch(
  ctx: ServiceContext,
  patch: Patch,
  changes: Partial<Pick<Patch, "filePath" | "content" | "type" | "enabled">>,
): Promise<Patch> {
  const type = changes.type ?? patch.type;
  const content = type === "delete" ? "" : (changes.content ?? patch.content);
  if (content !== patch.content) await checkBudget(ctx.db, ownerOf(patch), content, patch.patchId);
  return (
    (await updatePatch(ctx.db, patch.patchId, { ...changes, content })) ?? Promise.reject(duplicatePath())
  );
}

/** Creates the path's patch or changes the one the service has (saveFileAsPatch, markFileForDeletion). */
export async function savePatchOfPath(
  ctx: ServiceContext,
  owner: PatchOwner,
  values: { filePath: string; content: string; type: PatchType },
): Promise<Patch> {
  const existing = await findPatchByPath(ctx.db, owner, values.filePath);
  if (existing) return changePatch(ctx, existing, { content: values.content, type: values.type });
  return createPatch(ctx, owner, { ...values, enabled: true });
}

export async function removePatch(ctx: ServiceContext, patch: Patch): Promise<Patch> {
  await deletePatch(ctx.db, patch.patchId);
  return patch;
}

export function patchesOf(ctx: ServiceContext, owner: PatchOwner): Promise<Patch[]> {
  return listPatches(ctx.db, owner);
}
