/**
 * user: the users of the caller's organization, the caller's own profile and API keys, and the
 * invitations addressed to the caller (spec 4.10), and getMetricsToken (this machine's monitoring
 * configuration, for instance administrators). user.sendInvitation and the confirmation of a new
 * email go through the organization's Email or Resend channels (notifications/mail.ts). Issue 41's
 * leftovers: the caller's own sessions (users/sessions.ts, never a token), effective permissions
 * (users/permissions-view.ts), invitation lookup by secret token, members created with a password,
 * web-server backups, container metrics (server.getServerMetrics' function) and template bookmarks.
 */
import { z } from "zod";
import { appNameSchema as containerAppNameSchema } from "../agents/container-views.ts";
import { LOCAL_SERVER_ID } from "../agents/hub.ts";
import { createApiKey } from "../auth/api-key.ts";
import { loginSucceeded, takeLoginAttempt } from "../auth/login-throttle.ts";
import { hashPassword, verifyPassword } from "../auth/password.ts";
import { backupSchema } from "../backups/backups.ts";
import { toBackupView as backupView } from "../backups/views.ts";
import type { Caller, ServiceContext } from "../context.ts";
import { randomToken, sha256Hex } from "../crypto/ids.ts";
import { displayNameSchema } from "../display-name.ts";
import { ApiError, badRequest, conflict, forbidden, notFound } from "../errors.ts";
import { loadMonitoringConfig, metricsConfigSchema } from "../monitoring/monitoring-config.ts";
import { deliveryAsApiError } from "../notifications/http.ts";
import { firstMailChannel, MAIL_KINDS, mailThroughChannel, secretLink } from "../notifications/mail.ts";
import { findChannel } from "../notifications/repository.ts";
import { isInstanceAdmin } from "../organizations/instance.ts";
import { findOrganizationName } from "../organizations/repository.ts";
import { defineRouter, mutation, noInput, query, success, successSchema } from "../procedure.ts";
import { requireFeature, unknownGrantIds } from "../projects/permissions.ts";
import { isUniqueViolation } from "../projects/repository.ts";
import { loadWebServerSettings } from "../proxy/static-config.ts";
import { controlPlanePublicIp } from "../servers/public-ip.ts";
import { TEMPLATE_ID } from "../templates/catalogue.ts";
import { fetchContainerMetrics } from "../users/container-metrics.ts";
import {
  displayStatus,
  findInvitation,
  invitationByToken,
  invitationTokenSchema,
  pendingInvitationsByToken,
  replaceInvitationToken,
} from "../users/invitations.ts";
import { createMemberWithPassword, removeMember, updateMemberPermissions } from "../users/members.ts";
import { effectivePermissions, permissionsSchema } from "../users/permissions-view.ts";
import {
  changeUserEmail,
  confirmPendingEmail,
  countMemberships,
  deleteOwnApiKey,
  emailTakenByOther,
  findMembership,
  findPendingEmailRequest,
  findUserCredentials,
  listApiKeys,
  revokeOtherSessions,
  setPendingEmailToken,
  updateUser,
} from "../users/repository.ts";
import { findLiveSession, listLiveSessions, revokeOwnSession, sessionSchema } from "../users/sessions.ts";
import { listBookmarkedTemplates, toggleBookmark } from "../users/template-bookmarks.ts";
import {
  emailSchema,
  getUserView,
  listUserViews,
  passwordSchema,
  roleSchema,
  userSchema,
} from "../users/user-view.ts";
import { listWebServerBackups } from "../users/web-server-backups.ts";

/** Clients (Dokploy's UI among them) send "" for a field left empty: treat it as absent. */
const blankAsAbsent = (value: unknown) => (value === "" ? undefined : value);

const apiKeySummarySchema = z.object({
  id: z.string(),
  name: z.string(),
  prefix: z.string().nullable(),
  start: z.string(),
  organizationId: z.string(),
  createdAt: z.string(),
  expiresAt: z.string().nullable(),
});

const invitationSchema = z.object({
  id: z.string(),
  email: z.string(),
  role: roleSchema,
  status: z.enum(["pending", "accepted", "canceled"]),
  expiresAt: z.string(),
  organization: z.object({ id: z.string(), name: z.string(), createdAt: z.string() }),
});

const userIdInput = z.object({ userId: z.string().min(1).max(64) });

/** Longest rate-limit window or refill interval: the API key columns hold milliseconds in an int. */
export const MAX_API_KEY_INTERVAL_SECONDS = 24 * 24 * 3600;
export const MAX_API_KEY_EXPIRES_IN_SECONDS = 365 * 24 * 3600;
const MAX_COUNT = 1_000_000_000;

const optionalCount = (min: number) => z.number().int().min(min).max(MAX_COUNT).nullish();
const optionalSeconds = (max: number) => z.number().int().min(1).max(max).nullish();

/** Ids of projects, environments or services of the organization (checked by the handler). */
const grantIds = z.array(z.string().min(1).max(64)).max(10_000).nullish();

const createApiKeyInput = z.object({
  name: displayNameSchema,
  metadata: z.object({ organizationId: z.string().min(1).max(64) }),
  /** Not in Dokploy (it has only metadata.organizationId); kept for older clients, must agree. */
  organizationId: z.string().min(1).max(64).optional(),
  prefix: z.preprocess(
    blankAsAbsent,
    z
      .string()
      .regex(/^[a-zA-Z0-9_-]{1,32}$/, "must be 1 to 32 letters, digits, '_' or '-'")
      .nullish(),
  ),
  expiresIn: optionalSeconds(MAX_API_KEY_EXPIRES_IN_SECONDS),
  rateLimitEnabled: z.boolean().nullish(),
  rateLimitTimeWindow: optionalSeconds(MAX_API_KEY_INTERVAL_SECONDS),
  rateLimitMax: optionalCount(1),
  remaining: optionalCount(0),
  refillAmount: optionalCount(1),
  refillInterval: optionalSeconds(MAX_API_KEY_INTERVAL_SECONDS),
});

/** How long the link confirming a new email works. */
export const EMAIL_CONFIRMATION_TTL_MS = 24 * 3600 * 1000;

/**
 * Sends the link confirming `email` to that address through the organization's oldest Email or
 * Resend channel. Without one (or without PLATFORM_URL) the request stays for the instance
 * administrator (user.changeEmail). A failed send is logged, not answered: the answer stays the
 * same whatever the address.
 */
async function sendEmailConfirmation(ctx: ServiceContext, caller: Caller, email: string) {
  const token = randomToken(32);
  const channel = await firstMailChannel(ctx.db, caller.organizationId);
  const link = secretLink(ctx, "/confirm-email", token);
  const sent = channel !== undefined && link !== null;
  await setPendingEmailToken(
    ctx.db,
    caller.userId,
    sent
      ? {
          hash: sha256Hex(token),
          expiresAt: new Date(ctx.now().getTime() + EMAIL_CONFIRMATION_TTL_MS).toISOString(),
        }
      : null,
  );
  if (!sent) return;
  await mailThroughChannel(ctx, channel, email, {
    event: "emailConfirmation",
    timestamp: ctx.now().toISOString(),
    title: "Confirm your new email address",
    data: {
      applicationName: "Platform",
      status: "alert",
      message:
        "Someone signed in as you asked to use this address for their account. Open the link below while signed in to confirm it (it works for 24 hours); if it was not you, ignore this mail.",
      actionUrl: link,
    },
  }).catch((error) =>
    ctx.logger.warn(
      { notificationId: channel.notificationId, reason: error instanceof Error ? error.message : "unknown" },
      "the email confirmation could not be sent",
    ),
  );
}

/**
 * The user `userId` as `caller` may see it: their own record, or for administrators and the
 * owner any member of the organization. Users outside the organization are 404.
 */
async function visibleUser(ctx: ServiceContext, caller: Caller, userId: string) {
  const membership = await findMembership(ctx.db, caller.organizationId, userId);
  if (!membership) throw notFound("User");
  if (userId !== caller.userId && caller.role === "member") {
    throw forbidden("Administrator rights required to read another user");
  }
  return membership;
}

/** The name of the API keys user.generateToken creates (user.get lists them; user.deleteApiKey removes them). */
export const GENERATED_TOKEN_NAME = "Generated token";

const metricsTokenSchema = z.object({
  serverIp: z.string().nullable(),
  enabledFeatures: z.boolean(),
  metricsConfig: metricsConfigSchema.nullable(),
});

/**
 * This machine's address and monitoring configuration (user.getMetricsToken, user.getServerMetrics);
 * the configuration with its token only for instance administrators, null for everyone else.
 */
async function thisMachineMonitoring(ctx: ServiceContext, caller: Caller) {
  const settings = await loadWebServerSettings(ctx.db);
  const serverIp = settings.serverIp ?? (controlPlanePublicIp(ctx.config) || null);
  const allowed = await isInstanceAdmin(ctx.db, caller);
  const metricsConfig = allowed
    ? await loadMonitoringConfig(ctx, caller.organizationId, LOCAL_SERVER_ID)
    : null;
  return { serverIp, enabledFeatures: false, metricsConfig };
}

/** A metrics endpoint's address (server.getServerMetrics' rule). */
const metricsUrlSchema = z.url({ protocol: /^https?$/ }).max(2048);
const dataPointsSchema = z.string().regex(/^(all|[1-9]\d{0,5})$/, 'must be a number from 1 or "all"');

/** The session a request came with (null for an API key). */
function currentSessionId(caller: Caller): string | null {
  return caller.credential.kind === "session" ? caller.credential.sessionId : null;
}

export const userRouter = defineRouter("user", {
  all: query({
    summary: "Users of the caller's organization",
    access: "admin",
    input: noInput,
    output: z.array(userSchema),
    handler: ({ ctx, caller }) => listUserViews(ctx.db, caller.organizationId),
  }),

  one: query({
    summary: "One user: the caller's own record, or any member for administrators",
    access: "member",
    input: userIdInput,
    output: userSchema,
    handler: async ({ ctx, caller, input }) => {
      await visibleUser(ctx, caller, input.userId);
      return getUserView(ctx.db, caller.organizationId, input.userId);
    },
  }),

  get: query({
    summary: "The current user with their API keys (never the keys themselves)",
    access: "member",
    input: noInput,
    output: userSchema.extend({
      apiKeys: z.array(apiKeySummarySchema),
      /** A requested new email not confirmed yet (user.update), else null. */
      pendingEmail: z.string().nullable(),
    }),
    handler: async ({ ctx, caller }) => ({
      ...(await getUserView(ctx.db, caller.organizationId, caller.userId)),
      apiKeys: await listApiKeys(ctx.db, caller.userId),
      pendingEmail: (await findPendingEmailRequest(ctx.db, caller.userId))?.pendingEmail ?? null,
    }),
  }),

  update: mutation({
    summary:
      "Update the current user's profile; a new password needs the current password, a new email needs it too and is kept as pending until confirmed",
    access: "member",
    input: z.object({
      /** Dokploy's profile form sends the user's own id: it must be the caller's. */
      id: z.string().min(1).max(100).optional(),
      name: z.preprocess(blankAsAbsent, displayNameSchema.optional()),
      /** Dokploy's profile names; "" clears one. */
      firstName: z.literal("").or(displayNameSchema).optional(),
      lastName: z.literal("").or(displayNameSchema).optional(),
      email: z.preprocess(blankAsAbsent, emailSchema.optional()),
      image: z.string().max(262_144).nullish(),
      currentPassword: z.preprocess(blankAsAbsent, z.string().max(256).optional()),
      password: z.preprocess(blankAsAbsent, passwordSchema.optional()),
    }),
    output: successSchema,
    handler: async ({ ctx, caller, input, clientAddress }) => {
      if (input.id !== undefined && input.id !== caller.userId) {
        throw badRequest("Invalid input: id: must be your own user id (user.update changes only you)", {
          fields: ["id"],
        });
      }
      // Dokploy's profile form sends the unchanged email with every save: only a new one counts.
      const newEmail = input.email !== undefined && input.email !== caller.email;
      if (input.password !== undefined || newEmail) {
        const what = input.password !== undefined ? "the password" : "the email";
        if (input.currentPassword === undefined) {
          throw badRequest(`currentPassword is required to change ${what}`, { fields: ["currentPassword"] });
        }
        // Guesses of the current password count as login attempts: a stolen session cannot
        // try passwords faster than a login form.
        await takeLoginAttempt(ctx, caller.email, clientAddress);
        const user = await findUserCredentials(ctx.db, caller.userId);
        if (!user || !(await verifyPassword(input.currentPassword, user.passwordHash))) {
          throw badRequest("currentPassword is incorrect", { fields: ["currentPassword"] });
        }
        await loginSucceeded(ctx, caller.email, clientAddress);
      }
      const passwordHash = input.password !== undefined ? await hashPassword(input.password) : undefined;
      // A new email is only requested here (docs/decisions.md, issue 22 finding 5): whether the
      // address is taken is not looked at, so the answer is the same for taken and free ones.
      await updateUser(ctx.db, caller.userId, {
        name: input.name,
        firstName: input.firstName,
        lastName: input.lastName,
        pendingEmail: newEmail ? input.email : undefined,
        image: input.image === "" ? null : input.image,
        passwordHash,
      });
      if (newEmail && input.email) await sendEmailConfirmation(ctx, caller, input.email);
      if (passwordHash) {
        const keep = caller.credential.kind === "session" ? caller.credential.sessionId : null;
        await revokeOtherSessions(ctx.db, caller.userId, keep, ctx.now().toISOString());
      }
      return success;
    },
  }),

  confirmEmail: mutation({
    summary:
      "Apply the caller's pending email with the secret token its confirmation mail carried (valid 24 hours)",
    access: "member",
    input: z.object({ token: invitationTokenSchema }),
    output: successSchema,
    handler: async ({ ctx, caller, input }) => {
      const user = await findPendingEmailRequest(ctx.db, caller.userId);
      const valid =
        user?.pendingEmail != null &&
        user.pendingEmailTokenHash === sha256Hex(input.token) &&
        user.pendingEmailExpiresAt !== null &&
        new Date(user.pendingEmailExpiresAt) > ctx.now();
      if (!valid || !user?.pendingEmail) {
        throw new ApiError("NOT_FOUND", "No pending email has this token", { fields: ["token"] });
      }
      const email = user.pendingEmail;
      if (await emailTakenByOther(ctx.db, email, caller.userId)) {
        throw conflict("A user with this email already exists", { fields: ["token"] });
      }
      try {
        await confirmPendingEmail(ctx.db, caller.userId, email, sha256Hex(input.token));
      } catch (error) {
        if (isUniqueViolation(error)) {
          throw conflict("A user with this email already exists", { fields: ["token"] });
        }
        throw error;
      }
      return success;
    },
  }),

  sendInvitation: mutation({
    summary:
      "Mail an invitation of the active organization with a new secret accept link through one of its Email or Resend channels (the token inviteMember answered stops working)",
    access: "admin",
    input: z.object({
      invitationId: z.string().min(1).max(64),
      notificationId: z.string().min(1).max(64),
    }),
    output: successSchema,
    handler: async ({ ctx, caller, input }) => {
      const invitation = await findInvitation(ctx.db, caller.organizationId, input.invitationId);
      if (!invitation) throw notFound("Invitation");
      const channel = await findChannel(ctx.db, caller.organizationId, input.notificationId);
      if (!channel) throw notFound("Notification");
      if (!MAIL_KINDS.includes(channel.kind)) {
        throw badRequest("notificationId: must be an Email or Resend channel", {
          fields: ["notificationId"],
        });
      }
      if (displayStatus(invitation, ctx.now()) !== "pending") {
        throw conflict("Only a pending invitation can be sent", { fields: ["invitationId"] });
      }
      const token = randomToken(32);
      const link = secretLink(ctx, "/invitation", token);
      if (!link) {
        throw conflict("PLATFORM_URL is not set: the accept link needs the platform's address", {
          fields: ["invitationId"],
        });
      }
      const organizationName = await findOrganizationName(ctx.db, caller.organizationId);
      await replaceInvitationToken(ctx.db, invitation, token, () =>
        mailThroughChannel(ctx, channel, invitation.email, {
          event: "invitation",
          timestamp: ctx.now().toISOString(),
          title: `Invitation to join ${organizationName}`,
          data: {
            applicationName: organizationName,
            status: "success",
            message: `${caller.email} invites you to join ${organizationName} as ${invitation.role}. The link below accepts the invitation until ${new Date(invitation.expiresAt).toUTCString()}; it is yours alone.`,
            actionUrl: link,
          },
        }).catch(deliveryAsApiError),
      );
      return success;
    },
  }),

  changeEmail: mutation({
    summary:
      "Change a user's email (instance administrators only; users of an organization with an Email or Resend channel confirm their own with user.confirmEmail): any member of the instance organization, or apply the pending request of any user",
    access: "admin",
    input: z.object({ userId: z.string().min(1).max(64), email: emailSchema.optional() }),
    output: successSchema,
    handler: async ({ ctx, caller, input }) => {
      if (!(await isInstanceAdmin(ctx.db, caller))) {
        throw forbidden("Only an instance administrator may change an account's email");
      }
      const user = await findPendingEmailRequest(ctx.db, input.userId);
      const member = await findMembership(ctx.db, caller.organizationId, input.userId);
      // Another organization's user is reached only through their own request (their consent).
      const requested =
        user?.pendingEmail != null && (input.email ?? user.pendingEmail) === user.pendingEmail;
      if (!user || (!member && !requested)) throw notFound("User");
      const email = input.email ?? user.pendingEmail;
      if (!email) throw badRequest("email is required: the user has no pending email", { fields: ["email"] });
      if (await emailTakenByOther(ctx.db, email, input.userId)) {
        throw conflict("A user with this email already exists", { fields: ["email"] });
      }
      try {
        await changeUserEmail(ctx.db, input.userId, email);
      } catch (error) {
        if (isUniqueViolation(error)) {
          throw conflict("A user with this email already exists", { fields: ["email"] });
        }
        throw error;
      }
      return success;
    },
  }),

  remove: mutation({
    summary: "Remove a user from the organization (the owner cannot be removed)",
    access: "admin",
    input: userIdInput,
    output: successSchema,
    handler: async ({ ctx, caller, input }) => {
      await removeMember(ctx.db, caller, input.userId);
      return success;
    },
  }),

  assignPermissions: mutation({
    summary: "Set a member's role and permission flags (owner only)",
    access: "owner",
    input: z.object({
      id: z.string().min(1).max(64),
      role: roleSchema.optional(),
      canCreateProjects: z.boolean().optional(),
      canDeleteProjects: z.boolean().optional(),
      canAccessAuditLog: z.boolean().optional(),
      // Dokploy's permission fields (projects/permissions.ts applies them); a list null lifts the restriction.
      accessedProjects: grantIds,
      accessedEnvironments: grantIds,
      accessedServices: grantIds,
      // Remote servers (this machine is always reachable) and git providers by gitProviderId.
      accessedServers: grantIds,
      accessedGitProviders: grantIds,
      canCreateServices: z.boolean().optional(),
      canDeleteServices: z.boolean().optional(),
      canCreateEnvironments: z.boolean().optional(),
      canDeleteEnvironments: z.boolean().optional(),
      canAccessToDocker: z.boolean().optional(),
      canAccessToTraefikFiles: z.boolean().optional(),
      canAccessToAPI: z.boolean().optional(),
      canAccessToSSHKeys: z.boolean().optional(),
      canAccessToGitProviders: z.boolean().optional(),
    }),
    output: successSchema,
    handler: async ({ ctx, caller, input }) => {
      const target = await findMembership(ctx.db, caller.organizationId, input.id);
      if (!target) throw notFound("User");
      if (target.role === "owner") {
        throw badRequest("The owner's role and permissions cannot be changed", { fields: ["id"] });
      }
      if (input.role === "owner") {
        throw badRequest("role cannot be owner: transferring ownership is not supported", {
          fields: ["role"],
        });
      }
      const { id, role, canCreateProjects, canDeleteProjects, canAccessAuditLog, ...grants } = input;
      const unknown = await unknownGrantIds(ctx.db, caller.organizationId, grants);
      if (unknown.length > 0) {
        throw badRequest(
          unknown
            .map(({ field, ids }) => `${field}: no such id in this organization: ${ids.join(", ")}`)
            .join("; "),
          { fields: unknown.map(({ field }) => field) },
        );
      }
      await updateMemberPermissions(
        ctx.db,
        caller.organizationId,
        id,
        { role, canCreateProjects, canDeleteProjects, canAccessAuditLog },
        grants,
      );
      return success;
    },
  }),

  createApiKey: mutation({
    summary: "Create an API key; the key is returned once, only here",
    access: "member",
    input: createApiKeyInput,
    output: z.object({
      id: z.string(),
      name: z.string(),
      key: z.string(),
      prefix: z.string().nullable(),
      createdAt: z.string(),
      expiresAt: z.string().nullable(),
    }),
    handler: async ({ ctx, caller, input }) => {
      requireFeature(caller, "api");
      const organizationId = input.metadata.organizationId;
      if (input.organizationId !== undefined && input.organizationId !== organizationId) {
        throw badRequest("metadata.organizationId must equal organizationId", {
          fields: ["metadata.organizationId"],
        });
      }
      const hasRefillAmount = input.refillAmount != null;
      if (hasRefillAmount !== (input.refillInterval != null)) {
        const missing = hasRefillAmount ? "refillInterval" : "refillAmount";
        throw badRequest(`refillAmount and refillInterval go together: ${missing} is missing`, {
          fields: [missing],
        });
      }
      if (organizationId !== caller.organizationId) {
        if (!(await findMembership(ctx.db, organizationId, caller.userId))) {
          throw notFound("Organization");
        }
        if (caller.credential.kind === "apiKey") {
          throw new ApiError("FORBIDDEN", "An API key can only create keys for its own organization", {
            fields: ["organizationId"],
          });
        }
      }
      const { row, key } = await createApiKey(ctx, {
        name: input.name,
        userId: caller.userId,
        organizationId,
        prefix: input.prefix ?? undefined,
        metadata: { organizationId },
        expiresInSeconds: input.expiresIn ?? undefined,
        rateLimitEnabled: input.rateLimitEnabled ?? undefined,
        rateLimitTimeWindowSeconds: input.rateLimitTimeWindow ?? undefined,
        rateLimitMax: input.rateLimitMax ?? undefined,
        // A refill without a starting budget starts full.
        remaining: input.remaining ?? input.refillAmount ?? undefined,
        refillAmount: input.refillAmount ?? undefined,
        refillIntervalSeconds: input.refillInterval ?? undefined,
      });
      return {
        id: row.apiKeyId,
        name: row.name,
        key,
        prefix: row.prefix,
        createdAt: row.createdAt,
        expiresAt: row.expiresAt,
      };
    },
  }),

  deleteApiKey: mutation({
    summary: "Delete one of the caller's own API keys",
    access: "member",
    input: z.object({ apiKeyId: z.string().min(1).max(64) }),
    output: successSchema,
    handler: async ({ ctx, caller, input }) => {
      requireFeature(caller, "api");
      if (!(await deleteOwnApiKey(ctx.db, caller.userId, input.apiKeyId))) throw notFound("API key");
      return success;
    },
  }),

  getInvitations: query({
    summary:
      "The pending invitation a secret `token` names (an invitation is found by its token only, never by the email it was sent to); empty without one",
    access: "member",
    input: z.object({ token: invitationTokenSchema.optional() }).prefault({}),
    output: z.array(invitationSchema),
    handler: ({ ctx, input }) =>
      input.token === undefined
        ? []
        : pendingInvitationsByToken(ctx.db, input.token, ctx.now().toISOString()),
  }),

  checkUserOrganizations: query({
    summary: "How many organizations a user belongs to",
    access: "member",
    input: userIdInput,
    output: z.object({ count: z.number().int() }),
    handler: async ({ ctx, caller, input }) => {
      await visibleUser(ctx, caller, input.userId);
      return { count: await countMemberships(ctx.db, input.userId) };
    },
  }),

  getMetricsToken: query({
    summary:
      "This machine's monitoring configuration and its token (instance administrators only; null for others)",
    access: "member",
    input: noInput,
    output: metricsTokenSchema,
    handler: ({ ctx, caller }) => thisMachineMonitoring(ctx, caller),
  }),

  listSessions: query({
    summary:
      "The caller's own sign-in sessions that still work, newest first (ids and times, never a token); `current` marks the one this request came with",
    access: "member",
    input: noInput,
    output: z.array(sessionSchema),
    handler: ({ ctx, caller }) =>
      listLiveSessions(ctx.db, caller.userId, currentSessionId(caller), ctx.now().toISOString()),
  }),

  session: query({
    summary:
      "The session this request came with (its id and times; null ones for an API key) with its active organization and the user; never the token",
    access: "member",
    input: noInput,
    output: z.object({
      session: z.object({
        id: z.string().nullable(),
        activeOrganizationId: z.string(),
        createdAt: z.string().nullable(),
        expiresAt: z.string().nullable(),
      }),
      user: userSchema,
    }),
    handler: async ({ ctx, caller }) => {
      const sessionId = currentSessionId(caller);
      const session =
        sessionId === null
          ? undefined
          : await findLiveSession(ctx.db, caller.userId, sessionId, ctx.now().toISOString());
      return {
        session: {
          id: session?.id ?? null,
          activeOrganizationId: caller.organizationId,
          createdAt: session?.createdAt ?? null,
          expiresAt: session?.expiresAt ?? null,
        },
        user: await getUserView(ctx.db, caller.organizationId, caller.userId),
      };
    },
  }),

  revokeSession: mutation({
    summary:
      "Sign out one of the caller's own sessions by its id (user.listSessions); another user's session is a 404",
    access: "member",
    input: z.object({ sessionId: z.string().min(1).max(64) }),
    output: successSchema,
    handler: async ({ ctx, caller, input }) => {
      if (!(await revokeOwnSession(ctx.db, caller.userId, input.sessionId, ctx.now().toISOString()))) {
        throw notFound("Session");
      }
      return success;
    },
  }),

  getPermissions: query({
    summary:
      "What the caller may do in the active organization, by resource and action (as the procedures enforce it: administrators everything, a member by their permission flags)",
    access: "member",
    input: noInput,
    output: permissionsSchema,
    handler: ({ ctx, caller }) => effectivePermissions(ctx.db, caller),
  }),

  haveRootAccess: query({
    summary:
      "Whether the caller administers the whole instance (the owner or an administrator of the first organization)",
    access: "member",
    input: noInput,
    output: z.boolean(),
    handler: ({ ctx, caller }) => isInstanceAdmin(ctx.db, caller),
  }),

  generateToken: mutation({
    summary:
      "Create a new API key for the caller in the active organization (Dokploy's old per-user API token) and answer the key, once, as a string",
    access: "member",
    input: noInput,
    output: z.string(),
    handler: async ({ ctx, caller }) => {
      requireFeature(caller, "api");
      const { key } = await createApiKey(ctx, {
        name: GENERATED_TOKEN_NAME,
        userId: caller.userId,
        organizationId: caller.organizationId,
        metadata: { organizationId: caller.organizationId },
      });
      return key;
    },
  }),

  getUserByToken: query({
    summary:
      "The invitation a secret invitation token names (any status), whether it has expired and whether its email has an account already; 404 without one",
    access: "public",
    input: z.object({ token: invitationTokenSchema }),
    output: z.object({
      id: z.string(),
      email: z.string(),
      status: z.enum(["pending", "accepted", "canceled"]),
      role: roleSchema,
      inviterId: z.string(),
      isExpired: z.boolean(),
      userAlreadyExists: z.boolean(),
    }),
    handler: async ({ ctx, input }) => {
      const invitation = await invitationByToken(ctx.db, input.token, ctx.now());
      if (!invitation) throw new ApiError("NOT_FOUND", "Invitation not found", { fields: ["token"] });
      return invitation;
    },
  }),

  createUserWithCredentials: mutation({
    summary:
      "Create a user with an initial password as a member of the active organization (administrators; the role can only be member, granted more with user.assignPermissions)",
    access: "admin",
    input: z.object({
      email: emailSchema,
      password: passwordSchema,
      role: z.enum(["member"], {
        message: "must be member: an administrator is made with organization.updateMemberRole",
      }),
      /** Not in Dokploy (its users have no required name): the new user's name, else the email's local part. */
      name: z.preprocess(blankAsAbsent, displayNameSchema.optional()),
    }),
    output: userSchema,
    handler: async ({ ctx, caller, input }) => {
      const userId = await createMemberWithPassword(ctx.db, caller.organizationId, {
        email: input.email,
        name: input.name ?? input.email.split("@")[0] ?? input.email,
        passwordHash: await hashPassword(input.password),
      });
      return getUserView(ctx.db, caller.organizationId, userId);
    },
  }),

  getBackups: query({
    summary:
      "The caller with the control plane's own backups (web-server) of the organization, each with its destination and last runs (instance administrators; an empty list for other administrators)",
    access: "admin",
    input: noInput,
    output: userSchema.extend({ backups: z.array(backupSchema) }),
    handler: async ({ ctx, caller }) => {
      const user = await getUserView(ctx.db, caller.organizationId, caller.userId);
      if (!(await isInstanceAdmin(ctx.db, caller))) return { ...user, backups: [] };
      const rows = await listWebServerBackups(ctx.db, caller.organizationId);
      return { ...user, backups: await Promise.all(rows.map((row) => backupView(ctx, row))) };
    },
  }),

  getContainerMetrics: query({
    summary:
      "The series an agent keeps of one service's containers, read at `url`/metrics/containers?appName=… with the Bearer `token` (server.getServerMetrics' rules)",
    access: "member",
    input: z.object({
      url: metricsUrlSchema,
      token: z.string().min(1).max(512),
      appName: containerAppNameSchema,
      dataPoints: dataPointsSchema,
    }),
    output: z.array(z.record(z.string(), z.unknown())),
    handler: ({ ctx, caller, input }) =>
      fetchContainerMetrics(ctx, caller, input) as Promise<Record<string, unknown>[]>,
  }),

  getServerMetrics: query({
    summary:
      "The caller with this machine's address and monitoring configuration (user.getMetricsToken's: the token for instance administrators only)",
    access: "member",
    input: noInput,
    output: userSchema.extend(metricsTokenSchema.shape),
    handler: async ({ ctx, caller }) => ({
      ...(await getUserView(ctx.db, caller.organizationId, caller.userId)),
      ...(await thisMachineMonitoring(ctx, caller)),
    }),
  }),

  listPasskeys: query({
    summary: "The caller's passkeys: always none, as passkeys cannot be registered here (docs/decisions.md)",
    access: "member",
    input: noInput,
    output: z.array(z.object({ id: z.string(), name: z.string().nullable(), createdAt: z.string() })),
    handler: () => [],
  }),

  getBookmarkedTemplates: query({
    summary: "The ids of the catalogue templates the caller bookmarked, oldest bookmark first",
    access: "member",
    input: noInput,
    output: z.array(z.string()),
    handler: ({ ctx, caller }) => listBookmarkedTemplates(ctx.db, caller.userId),
  }),

  toggleTemplateBookmark: mutation({
    summary: "Bookmark a catalogue template for the caller, or remove the bookmark it has; answers which",
    access: "member",
    input: z.object({
      templateId: z.string().regex(TEMPLATE_ID, "must be a template id of the catalogue (compose.templates)"),
    }),
    output: z.object({ isBookmarked: z.boolean() }),
    handler: async ({ ctx, caller, input }) => ({
      isBookmarked: await toggleBookmark(ctx.db, caller.userId, input.templateId),
    }),
  }),
});
