/**
 * auth.register's write: the first user with their organization (needing the set-up token when
 * not from this machine), or a new user joining through a pending invitation's secret token.
 * One transaction under a lock on users, so two first registrations cannot both become owner.
 * Closed registration answers alike for taken and free emails.
 */
import type { ServiceContext } from "../context.ts";
import { newId } from "../crypto/ids.ts";
import { ApiError, badRequest, conflict, forbidden } from "../errors.ts";
import { insertOrganizationWithOwner } from "../organizations/repository.ts";
import { findPendingInvitationByToken, joinByInvitation } from "../users/invitations.ts";
import { anyUserExists, findUserByEmail, insertUser, lockUsersForRegistration } from "../users/repository.ts";
import { requireSetupToken, spendSetupTokens } from "./setup-token.ts";

export interface Registration {
  email: string;
  name: string;
  passwordHash: string;
  invitationId?: string | undefined;
  token?: string | undefined;
  setupToken?: string | undefined;
}

/** Creates the user; answers their id and the organization their first session opens. */
export function registerUser(
  ctx: Pick<ServiceContext, "db" | "now">,
  registration: Registration,
  fromLoopback: boolean,
): Promise<{ userId: string; organizationId: string }> {
  const { email, name, passwordHash, invitationId, token } = registration;
  return ctx.db.transaction().execute(async (trx) => {
    await lockUsersForRegistration(trx);
    const userId = newId();

    if (!(await anyUserExists(trx))) {
      if (invitationId || token)
        throw badRequest("No invitation can exist before the first user", {
          fields: [token ? "token" : "invitationId"],
        });
      if (!fromLoopback) await requireSetupToken(trx, registration.setupToken);
      await spendSetupTokens(trx);
      const organizationId = newId();
      await insertUser(trx, { userId, email, name, passwordHash });
      await insertOrganizationWithOwner(trx, organizationId, userId, `${name}'s organization`);
      return { userId, organizationId };
    }

    // Nothing here depends on whether the email is taken: no one learns which accounts exist.
    if (token === undefined) {
      if (invitationId !== undefined) {
        throw badRequest("token is required: the invitation's secret token from the inviting administrator", {
          fields: ["token"],
        });
      }
      throw forbidden("Registration is closed: ask an administrator of an organization for an invitation");
    }
    const invitation = await findPendingInvitationByToken(
      trx,
      { token, email, invitationId },
      ctx.now().toISOString(),
    );
    if (!invitation) {
      throw new ApiError("NOT_FOUND", "No pending invitation with this token for this email", {
        fields: ["token"],
      });
    }
    if (await findUserByEmail(trx, email)) {
      throw conflict("A user with this email already exists: log in and use organization.acceptInvitation", {
        fields: ["email"],
      });
    }
    await insertUser(trx, { userId, email, name, passwordHash });
    await joinByInvitation(trx, invitation, userId);
    return { userId, organizationId: invitation.organizationId };
  });
}
