/**
 * organization: the caller's organizations (each a tenant: any user creates one and owns it),
 * switching the session's active organization, and invitations, accepted with their secret
 * token (the spec leaves this router's procedures open; see docs/decisions.md).
 */
import { z } from "zod";
import type { Invitation } from "../db/schema.ts";
import { displayNameSchema } from "../display-name.ts";
import { badRequest, conflict, forbidden, notFound } from "../errors.ts";
import { isInstanceOrganization } from "../organizations/instance.ts";
import { createOrganization, deleteOrganization, organizationInUse } from "../organizations/repository.ts";
import { defineRouter, mutation, noInput, query, success, successSchema } from "../procedure.ts";
import {
  acceptInvitation,
  createInvitation,
  displayStatus,
  findInvitation,
  hasLivePendingInvitation,
  INVITATION_TTL_MS,
  invitationTokenSchema,
  isMemberEmail,
  listInvitations,
  setInvitationStatus,
} from "../users/invitations.ts";
import { changeMemberRole } from "../users/members.ts";
import {
  countMemberships,
  findMembership,
  findOrganizationOf,
  listOrganizationsOf,
  renameOrganization,
  setDefaultOrganization,
  setSessionOrganization,
} from "../users/repository.ts";
import { emailSchema, roleSchema } from "../users/user-view.ts";

const organizationSchema = z.object({
  id: z.string(),
  name: z.string(),
  ownerId: z.string(),
  createdAt: z.string(),
  /** The caller's role in this organization. */
  role: roleSchema,
});

const invitationSchema = z.object({
  id: z.string(),
  invitationId: z.string(),
  organizationId: z.string(),
  email: z.string(),
  role: roleSchema,
  status: z.enum(["pending", "accepted", "canceled", "expired"]),
  inviterId: z.string(),
  expiresAt: z.string(),
  createdAt: z.string(),
});

function invitationView(invitation: Invitation, now: Date) {
  return {
    id: invitation.invitationId,
    invitationId: invitation.invitationId,
    organizationId: invitation.organizationId,
    email: invitation.email,
    role: invitation.role,
    status: displayStatus(invitation, now),
    inviterId: invitation.inviterId,
    expiresAt: invitation.expiresAt,
    createdAt: invitation.createdAt,
  };
}

const organizationIdInput = z.object({ organizationId: z.string().min(1).max(64) });
/** Shown in lists and logs: the one display-name rule (no control or bidi characters). */
const organizationName = displayNameSchema;
const invitationIdInput = z.object({ invitationId: z.string().min(1).max(64) });

export const organizationRouter = defineRouter("organization", {
  all: query({
    summary: "Organizations the caller belongs to, with the caller's role in each",
    access: "member",
    input: noInput,
    output: z.array(organizationSchema),
    handler: ({ ctx, caller }) => listOrganizationsOf(ctx.db, caller.userId),
  }),

  one: query({
    summary: "One organization the caller belongs to",
    access: "member",
    input: organizationIdInput,
    output: organizationSchema,
    handler: async ({ ctx, caller, input }) => {
      const organization = await findOrganizationOf(ctx.db, caller.userId, input.organizationId);
      if (!organization) throw notFound("Organization");
      return organization;
    },
  }),

  create: mutation({
    summary: "Create an organization owned by the caller (the active one stays as it is)",
    access: "member",
    input: z.object({ name: organizationName }),
    output: organizationSchema,
    handler: async ({ ctx, caller, input }) => {
      const organizationId = await createOrganization(ctx.db, caller.userId, input.name);
      const organization = await findOrganizationOf(ctx.db, caller.userId, organizationId);
      if (!organization) throw notFound("Organization");
      return organization;
    },
  }),

  delete: mutation({
    summary: "Delete an organization the caller owns, once it has no services and no servers",
    access: "member",
    input: organizationIdInput,
    output: successSchema,
    handler: async ({ ctx, caller, input }) => {
      const membership = await findMembership(ctx.db, input.organizationId, caller.userId);
      if (!membership) throw notFound("Organization");
      if (await isInstanceOrganization(ctx.db, input.organizationId)) {
        throw forbidden(
          "The instance organization (the first one, which owns this machine) cannot be deleted",
        );
      }
      if (membership.role !== "owner") throw forbidden("Only the organization owner can delete it");
      if ((await countMemberships(ctx.db, caller.userId)) <= 1) {
        throw forbidden("You cannot delete your only organization: create or join another one first");
      }
      const inUse = await organizationInUse(ctx.db, input.organizationId);
      if (inUse) {
        throw conflict(`The organization still has ${inUse}: delete them first`, {
          fields: ["organizationId"],
        });
      }
      await deleteOrganization(ctx.db, input.organizationId);
      return success;
    },
  }),

  update: mutation({
    summary: "Rename the active organization (owner only)",
    access: "owner",
    input: organizationIdInput.extend({ name: organizationName }),
    output: organizationSchema,
    handler: async ({ ctx, caller, input }) => {
      if (input.organizationId !== caller.organizationId) {
        // Callers act only within their active organization.
        if (!(await findMembership(ctx.db, input.organizationId, caller.userId))) {
          throw notFound("Organization");
        }
        throw forbidden("Only the active organization can be updated; switch with organization.setActive");
      }
      await renameOrganization(ctx.db, input.organizationId, input.name);
      const organization = await findOrganizationOf(ctx.db, caller.userId, input.organizationId);
      if (!organization) throw notFound("Organization");
      return organization;
    },
  }),

  setActive: mutation({
    summary: "Switch the session's active organization",
    access: "member",
    input: organizationIdInput,
    output: organizationSchema,
    handler: async ({ ctx, caller, input }) => {
      if (caller.credential.kind !== "session") {
        throw badRequest("An API key belongs to one organization; only a session can switch", {
          fields: ["organizationId"],
        });
      }
      const organization = await findOrganizationOf(ctx.db, caller.userId, input.organizationId);
      if (!organization) throw notFound("Organization");
      await setSessionOrganization(ctx.db, caller.credential.sessionId, input.organizationId);
      return organization;
    },
  }),

  active: query({
    summary: "The caller's active organization (the session's, or the API key's)",
    access: "member",
    input: noInput,
    output: organizationSchema,
    handler: async ({ ctx, caller }) => {
      const organization = await findOrganizationOf(ctx.db, caller.userId, caller.organizationId);
      if (!organization) throw notFound("Organization");
      return organization;
    },
  }),

  setDefault: mutation({
    summary: "Make an organization the caller belongs to the one login starts in when it names none",
    access: "member",
    input: organizationIdInput,
    output: successSchema,
    handler: async ({ ctx, caller, input }) => {
      if (!(await findMembership(ctx.db, input.organizationId, caller.userId)))
        throw notFound("Organization");
      await setDefaultOrganization(ctx.db, caller.userId, input.organizationId);
      return success;
    },
  }),

  updateMemberRole: mutation({
    summary:
      "Change a member's role between admin and member (administrators: members only; the owner's role and one's own are fixed)",
    access: "admin",
    input: z.object({ memberId: z.string().min(1).max(64), role: z.enum(["admin", "member"]) }),
    output: successSchema,
    handler: async ({ ctx, caller, input }) => {
      await changeMemberRole(ctx.db, caller, input.memberId, input.role);
      return success;
    },
  }),

  inviteMember: mutation({
    summary:
      "Invite someone by email into the active organization (valid 7 days); answers the secret `token` " +
      "that accepts it, once: pass it on to the invited person",
    access: "admin",
    input: z.object({ email: emailSchema, role: z.enum(["admin", "member"]) }),
    output: invitationSchema.extend({ token: z.string() }),
    handler: async ({ ctx, caller, input }) => {
      if (input.role === "admin" && caller.role !== "owner") {
        throw forbidden("Only the organization owner can invite administrators");
      }
      const now = ctx.now();
      if (await isMemberEmail(ctx.db, caller.organizationId, input.email)) {
        throw conflict("This user is already a member of the organization", { fields: ["email"] });
      }
      if (await hasLivePendingInvitation(ctx.db, caller.organizationId, input.email, now.toISOString())) {
        throw conflict("This email already has a pending invitation", { fields: ["email"] });
      }
      const { invitation, token } = await createInvitation(ctx.db, {
        organizationId: caller.organizationId,
        email: input.email,
        role: input.role,
        inviterId: caller.userId,
        expiresAt: new Date(now.getTime() + INVITATION_TTL_MS).toISOString(),
      });
      return { ...invitationView(invitation, now), token };
    },
  }),

  allInvitations: query({
    summary: "Invitations of the active organization, newest first",
    access: "admin",
    input: noInput,
    output: z.array(invitationSchema),
    handler: async ({ ctx, caller }) => {
      const now = ctx.now();
      return (await listInvitations(ctx.db, caller.organizationId)).map((i) => invitationView(i, now));
    },
  }),

  removeInvitation: mutation({
    summary: "Cancel an invitation of the active organization",
    access: "admin",
    input: invitationIdInput,
    output: successSchema,
    handler: async ({ ctx, caller, input }) => {
      const invitation = await findInvitation(ctx.db, caller.organizationId, input.invitationId);
      if (!invitation) throw notFound("Invitation");
      if (invitation.status === "accepted") {
        throw conflict("This invitation was already accepted; remove the user with user.remove", {
          fields: ["invitationId"],
        });
      }
      await setInvitationStatus(ctx.db, invitation.invitationId, "canceled");
      return success;
    },
  }),

  acceptInvitation: mutation({
    summary: "Join an organization with the secret token of an invitation addressed to the caller's email",
    access: "member",
    input: z.object({ token: invitationTokenSchema, invitationId: z.string().min(1).max(64).optional() }),
    output: organizationSchema,
    handler: async ({ ctx, caller, input }) => {
      const organizationId = await acceptInvitation(
        ctx.db,
        { ...input, email: caller.email },
        caller.userId,
        ctx.now().toISOString(),
      );
      const organization = await findOrganizationOf(ctx.db, caller.userId, organizationId);
      if (!organization) throw notFound("Organization");
      return organization;
    },
  }),
});
