import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Session, startTestPlatform, type TestPlatform } from "../testing/harness.ts";
import { createOtherOrganization, login, TEST_PASSWORD } from "../users/test-support.ts";

describe("user", () => {
  let platform: TestPlatform;
  let owner: Session;
  let admin: Session;
  let member: Session;
  let other: Session & { organizationId: string };
  const as = (session: Session) => ({ token: session.token });

  beforeAll(async () => {
    platform = await startTestPlatform();
    owner = await platform.registerOwner();
    admin = await platform.addMember(owner, "admin");
    member = await platform.addMember(owner, "member");
    other = await createOtherOrganization(platform);
  });
  afterAll(() => platform.close());

  describe("all", () => {
    it("lists the users of the caller's organization for administrators", async () => {
      const r = await platform.query("user.all", {}, as(admin));
      expect(r.status).toBe(200);
      expect(r.body.map((u: any) => u.email)).toEqual([
        owner.user.email,
        admin.user.email,
        member.user.email,
      ]);
      expect(r.body[0]).toMatchObject({
        id: owner.user.id,
        userId: owner.user.id,
        role: "owner",
        organizationId: owner.user.organizationId,
        canCreateProjects: true,
      });
      expect(JSON.stringify(r.body)).not.toMatch(/scrypt|passwordHash/);
    });

    it("shows another organization only its own users", async () => {
      const r = await platform.query("user.all", {}, as(other));
      expect(r.body.map((u: any) => u.email)).toEqual([other.user.email]);
    });

    it("is 403 for a member and 401 without credentials", async () => {
      const r = await platform.query("user.all", {}, as(member));
      expect(r.status).toBe(403);
      expect(r.body.error.code).toBe("FORBIDDEN");
      const anonymous = await platform.query("user.all");
      expect(anonymous.status).toBe(401);
      expect(anonymous.body.error.code).toBe("UNAUTHORIZED");
    });
  });

  describe("one", () => {
    it("gives a member their own record", async () => {
      const r = await platform.query("user.one", { userId: member.user.id }, as(member));
      expect(r.status).toBe(200);
      expect(r.body).toMatchObject({ id: member.user.id, email: member.user.email, role: "member" });
    });

    it("gives administrators any member, members only themselves", async () => {
      expect((await platform.query("user.one", { userId: member.user.id }, as(admin))).status).toBe(200);
      expect((await platform.query("user.one", { userId: owner.user.id }, as(admin))).status).toBe(200);
      const r = await platform.query("user.one", { userId: admin.user.id }, as(member));
      expect(r.status).toBe(403);
    });

    it("is 404 for a user of another organization, 400 naming userId when it is missing", async () => {
      const r = await platform.query("user.one", { userId: other.user.id }, as(owner));
      expect(r.status).toBe(404);
      expect(r.body.error.code).toBe("NOT_FOUND");
      const missing = await platform.query("user.one", {}, as(owner));
      expect(missing.status).toBe(400);
      expect(missing.body.error.data.fields).toEqual(["userId"]);
    });

    it("is served on the tRPC prefix too", async () => {
      const input = encodeURIComponent(JSON.stringify({ json: { userId: owner.user.id } }));
      const r = await platform.request(`/api/trpc/user.one?input=${input}`, { token: owner.token });
      expect(r.body.result.data.json).toMatchObject({ id: owner.user.id, role: "owner" });
    });
  });

  describe("get", () => {
    it("returns the current user with an apiKeys list", async () => {
      const r = await platform.query("user.get", {}, as(member));
      expect(r.status).toBe(200);
      expect(r.body).toMatchObject({ id: member.user.id, role: "member", apiKeys: [] });
      expect(JSON.stringify(r.body)).not.toMatch(/scrypt|passwordHash/);
    });

    it("is 401 without credentials", async () => {
      expect((await platform.query("user.get")).status).toBe(401);
    });
  });

  describe("update", () => {
    it("changes the name; a new email stays pending until an instance administrator applies it", async () => {
      const user = await platform.addMember(owner, "member", "rename-me@example.com");
      const r = await platform.mutate(
        "user.update",
        { name: "Renamed", email: "Renamed@Example.com", password: "", currentPassword: TEST_PASSWORD },
        as(user),
      );
      expect(r.status).toBe(200);
      expect(r.body).toEqual({ success: true });
      const me = await platform.query("user.get", {}, as(user));
      expect(me.body).toMatchObject({
        name: "Renamed",
        email: "rename-me@example.com",
        pendingEmail: "renamed@example.com",
      });
      // The instance administrator applies the pending address.
      const applied = await platform.mutate("user.changeEmail", { userId: user.user.id }, as(owner));
      expect(applied.status, JSON.stringify(applied.body)).toBe(200);
      expect((await platform.query("user.get", {}, as(user))).body).toMatchObject({
        email: "renamed@example.com",
        pendingEmail: null,
      });
      expect((await login(platform, "renamed@example.com")).user.id).toBe(user.user.id);
      // Sending one's own email again (Dokploy's form does with every save) needs no password.
      expect((await platform.mutate("user.update", { email: "renamed@example.com" }, as(user))).status).toBe(
        200,
      );
    });

    it("takes the caller's own id (Dokploy's CLI sends it) and refuses another's with a 400, changing nothing", async () => {
      const mine = await platform.mutate(
        "user.update",
        { id: member.user.id, image: "/avatars/avatar-2.png" },
        as(member),
      );
      expect(mine.status, JSON.stringify(mine.body)).toBe(200);
      const theirs = await platform.mutate("user.update", { id: owner.user.id, image: null }, as(member));
      expect(theirs.status).toBe(400);
      expect(theirs.body.error.data.fields).toEqual(["id"]);
      expect((await platform.query("user.get", {}, as(member))).body.image).toBe("/avatars/avatar-2.png");
    });

    it('stores firstName and lastName (Dokploy CLI 0.30.7) and answers them in get, one and all; "" clears one, a control character is a 400 naming it', async () => {
      const set = await platform.mutate(
        "user.update",
        { firstName: " Ada ", lastName: "Lovelace" },
        as(member),
      );
      expect(set.status, JSON.stringify(set.body)).toBe(200);
      expect((await platform.query("user.get", {}, as(member))).body).toMatchObject({
        firstName: "Ada",
        lastName: "Lovelace",
      });
      expect((await platform.query("user.one", { userId: member.user.id }, as(admin))).body).toMatchObject({
        firstName: "Ada",
        lastName: "Lovelace",
      });
      const listed = (await platform.query("user.all", {}, as(admin))).body.find(
        (u: any) => u.id === member.user.id,
      );
      expect(listed).toMatchObject({ firstName: "Ada", lastName: "Lovelace" });
      expect((await platform.query("user.get", {}, as(owner))).body).toMatchObject({
        firstName: "",
        lastName: "",
      });
      const bad = await platform.mutate("user.update", { firstName: "Ada\u202e" }, as(member));
      expect(bad.status).toBe(400);
      expect(bad.body.error.data.fields).toEqual(["firstName"]);
      await platform.mutate("user.update", { lastName: "" }, as(member));
      expect((await platform.query("user.get", {}, as(member))).body).toMatchObject({
        firstName: "Ada",
        lastName: "",
      });
    });

    it("sets and clears the image", async () => {
      await platform.mutate("user.update", { image: "/avatars/avatar-1.png" }, as(member));
      expect((await platform.query("user.get", {}, as(member))).body.image).toBe("/avatars/avatar-1.png");
      await platform.mutate("user.update", { image: null }, as(member));
      expect((await platform.query("user.get", {}, as(member))).body.image).toBeNull();
    });

    it("finding 5 (issue 22): answers the same for a taken and a free email, and takes neither", async () => {
      const withPassword = { currentPassword: TEST_PASSWORD };
      const answers = [];
      for (const email of [owner.user.email, other.user.email, "free-address@example.com"]) {
        const r = await platform.mutate("user.update", { email, ...withPassword }, as(member));
        answers.push([r.status, r.body]);
        expect((await platform.query("user.get", {}, as(member))).body.email).toBe(member.user.email);
      }
      expect(answers).toEqual(Array(3).fill([200, { success: true }]));
    });

    it("finding 5 (issue 22): only an instance administrator changes another account's email", async () => {
      const target = await platform.addMember(owner, "member", "change-target@example.com");
      const byMember = await platform.mutate(
        "user.changeEmail",
        { userId: target.user.id, email: "x@example.com" },
        as(member),
      );
      expect(byMember.status).toBe(403);
      // The owner of another organization is an administrator, but not of the instance.
      const byTenant = await platform.mutate(
        "user.changeEmail",
        { userId: target.user.id, email: "x@example.com" },
        as(other),
      );
      expect(byTenant.status).toBe(403);
      const taken = await platform.mutate(
        "user.changeEmail",
        { userId: target.user.id, email: other.user.email },
        as(owner),
      );
      expect(taken.status).toBe(409);
      expect(taken.body.error.data.fields).toEqual(["email"]);
      const none = await platform.mutate("user.changeEmail", { userId: target.user.id }, as(owner));
      expect(none.status).toBe(400);
      expect(none.body.error.data.fields).toEqual(["email"]);
      const done = await platform.mutate(
        "user.changeEmail",
        { userId: target.user.id, email: "changed-target@example.com" },
        as(owner),
      );
      expect(done.status).toBe(200);
      expect((await platform.query("user.get", {}, as(target))).body.email).toBe(
        "changed-target@example.com",
      );
      // Another organization's user: a 404, unless applying the address they asked for.
      const foreign = await createOtherOrganization(platform, "foreign-user@example.com", "Foreign");
      const change = (input: Record<string, unknown>) =>
        platform.mutate("user.changeEmail", { userId: foreign.user.id, ...input }, as(owner));
      expect((await change({ email: "taken-over@example.com" })).status).toBe(404);
      expect((await change({})).status).toBe(404);
      const requested = await platform.mutate(
        "user.update",
        { email: "foreign-renamed@example.com", currentPassword: TEST_PASSWORD },
        as(foreign),
      );
      expect(requested.status).toBe(200);
      expect((await change({ email: "not-what-they-asked@example.com" })).status).toBe(404);
      expect((await change({})).status).toBe(200);
      expect((await platform.query("user.get", {}, as(foreign))).body.email).toBe(
        "foreign-renamed@example.com",
      );
    });

    it("is 400 naming each invalid field", async () => {
      const r = await platform.mutate(
        "user.update",
        { email: "nope", name: "   ", password: "short" },
        as(member),
      );
      expect(r.status).toBe(400);
      expect(r.body.error.data.fields).toEqual(expect.arrayContaining(["email", "name", "password"]));
    });

    it("finding 3: an invitation cannot be hijacked by taking the invited email", async () => {
      const attacker = await platform.addMember(owner, "member", "attacker@example.com");
      const invite = await platform.mutate(
        "organization.inviteMember",
        { email: "invited-admin@example.com", role: "admin" },
        as(other),
      );
      expect(invite.status).toBe(200);

      // Changing the email needs the current password: missing and wrong are 400 naming it.
      const missing = await platform.mutate(
        "user.update",
        { email: "invited-admin@example.com" },
        as(attacker),
      );
      expect(missing.status).toBe(400);
      expect(missing.body.error.data.fields).toEqual(["currentPassword"]);
      expect(missing.body.error.message).toMatch(/currentPassword is required to change the email/);
      const wrong = await platform.mutate(
        "user.update",
        { email: "invited-admin@example.com", currentPassword: "not-my-password" },
        as(attacker),
      );
      expect(wrong.status).toBe(400);
      expect(wrong.body.error.data.fields).toEqual(["currentPassword"]);
      expect((await platform.query("user.get", {}, as(attacker))).body.email).toBe("attacker@example.com");

      // Even with their own password the address is only requested (issue 22 finding 5): it is
      // not theirs, and invitations are never shown by email.
      const taken = await platform.mutate(
        "user.update",
        { email: "invited-admin@example.com", currentPassword: TEST_PASSWORD },
        as(attacker),
      );
      expect(taken.status).toBe(200);
      expect((await platform.query("user.get", {}, as(attacker))).body.email).toBe("attacker@example.com");
      const listed = (await platform.query("user.getInvitations", {}, as(attacker))).body;
      expect(listed).toEqual([]);
      expect(JSON.stringify(listed)).not.toContain(invite.body.token);
      const row = await platform.ctx.db
        .selectFrom("invitations")
        .select("tokenHash")
        .where("invitationId", "=", invite.body.invitationId)
        .executeTakeFirstOrThrow();
      expect(row.tokenHash).not.toContain(invite.body.token);
      expect(JSON.stringify(listed)).not.toContain(row.tokenHash);
      const byId = await platform.mutate(
        "organization.acceptInvitation",
        { invitationId: invite.body.invitationId },
        as(attacker),
      );
      expect(byId.status).toBe(400);
      expect(byId.body.error.data.fields).toEqual(["token"]);
      const guessed = await platform.mutate(
        "organization.acceptInvitation",
        { invitationId: invite.body.invitationId, token: row.tokenHash },
        as(attacker),
      );
      expect(guessed.status).toBe(404);
      expect(
        await platform.ctx.db
          .selectFrom("members")
          .select("memberId")
          .where("userId", "=", attacker.user.id)
          .where("organizationId", "=", other.organizationId)
          .execute(),
      ).toEqual([]);
      const invitation = await platform.ctx.db
        .selectFrom("invitations")
        .select("status")
        .where("invitationId", "=", invite.body.invitationId)
        .executeTakeFirstOrThrow();
      expect(invitation.status).toBe("pending");
    });

    it("needs the right current password to change the password, then revokes other sessions", async () => {
      const user = await platform.addMember(owner, "member", "password-change@example.com");
      const second = await login(platform, "password-change@example.com");

      const missing = await platform.mutate("user.update", { password: "a-new-password" }, as(user));
      expect(missing.status).toBe(400);
      expect(missing.body.error.data.fields).toEqual(["currentPassword"]);

      const wrong = await platform.mutate(
        "user.update",
        { password: "a-new-password", currentPassword: "not-my-password" },
        as(user),
      );
      expect(wrong.status).toBe(400);
      expect(wrong.body.error.data.fields).toEqual(["currentPassword"]);
      // A wrong current password leaves the session alone.
      expect((await platform.query("user.get", {}, as(user))).status).toBe(200);

      const ok = await platform.mutate(
        "user.update",
        { password: "a-new-password", currentPassword: TEST_PASSWORD },
        as(user),
      );
      expect(ok.status).toBe(200);
      expect((await platform.query("user.get", {}, as(user))).status).toBe(200);
      expect((await platform.query("user.get", {}, as(second))).status).toBe(401);

      const oldLogin = await platform.mutate("auth.login", {
        email: "password-change@example.com",
        password: TEST_PASSWORD,
      });
      expect(oldLogin.status).toBe(401);
      const newLogin = await platform.mutate("auth.login", {
        email: "password-change@example.com",
        password: "a-new-password",
      });
      expect(newLogin.status).toBe(200);
      expect(platform.logLines.join("\n")).not.toContain("a-new-password");
    });
  });

  describe("remove", () => {
    it("is refused to members (403)", async () => {
      const target = await platform.addMember(owner, "member");
      const r = await platform.mutate("user.remove", { userId: target.user.id }, as(member));
      expect(r.status).toBe(403);
    });

    it("never removes the owner, not even by the owner", async () => {
      const byAdmin = await platform.mutate("user.remove", { userId: owner.user.id }, as(admin));
      expect(byAdmin.status).toBe(403);
      expect(byAdmin.body.error.message).toMatch(/owner cannot be removed/);
      const byOwner = await platform.mutate("user.remove", { userId: owner.user.id }, as(owner));
      expect(byOwner.status).toBe(403);
    });

    it("does not let an administrator remove themselves", async () => {
      const r = await platform.mutate("user.remove", { userId: admin.user.id }, as(admin));
      expect(r.status).toBe(403);
      expect(r.body.error.message).toMatch(/cannot remove themselves/);
    });

    it("lets only the owner remove administrators", async () => {
      const target = await platform.addMember(owner, "admin");
      const byAdmin = await platform.mutate("user.remove", { userId: target.user.id }, as(admin));
      expect(byAdmin.status).toBe(403);
      expect(byAdmin.body.error.message).toMatch(/Only the organization owner/);
      const byOwner = await platform.mutate("user.remove", { userId: target.user.id }, as(owner));
      expect(byOwner.status).toBe(200);
      expect(byOwner.body).toEqual({ success: true });
    });

    it("removes a member with their sessions and API keys, and the user row when no organization is left", async () => {
      const target = await platform.addMember(owner, "member", "leaving@example.com");
      const { body: key } = await platform.mutate(
        "user.createApiKey",
        {
          name: "ci",
          organizationId: owner.user.organizationId,
          metadata: { organizationId: owner.user.organizationId },
        },
        as(target),
      );
      expect((await platform.query("user.get", {}, { apiKey: key.key })).status).toBe(200);

      const r = await platform.mutate("user.remove", { userId: target.user.id }, as(admin));
      expect(r.status).toBe(200);
      expect((await platform.query("user.get", {}, as(target))).status).toBe(401);
      expect((await platform.query("user.get", {}, { apiKey: key.key })).status).toBe(401);
      expect((await platform.query("user.one", { userId: target.user.id }, as(admin))).status).toBe(404);
      const db = platform.ctx.db;
      expect(await db.selectFrom("users").where("userId", "=", target.user.id).selectAll().execute()).toEqual(
        [],
      );
      expect(
        await db.selectFrom("apiKeys").where("userId", "=", target.user.id).selectAll().execute(),
      ).toEqual([]);
      const again = await platform.mutate("user.remove", { userId: target.user.id }, as(admin));
      expect(again.status).toBe(404);
    });

    it("keeps a user who belongs to another organization, with that organization's keys", async () => {
      // A member of the other organization joins ours through an invitation.
      const invite = await platform.mutate(
        "organization.inviteMember",
        { email: other.user.email, role: "member" },
        as(owner),
      );
      expect(
        (
          await platform.mutate(
            "organization.acceptInvitation",
            { invitationId: invite.body.invitationId, token: invite.body.token },
            as(other),
          )
        ).status,
      ).toBe(200);
      const ours = await login(platform, other.user.email, owner.user.organizationId);
      const theirKey = await platform.mutate(
        "user.createApiKey",
        // Dokploy's form: only metadata.organizationId.
        { name: "home", metadata: { organizationId: other.organizationId } },
        as(other),
      );
      const ourKey = await platform.mutate(
        "user.createApiKey",
        {
          name: "guest",
          organizationId: owner.user.organizationId,
          metadata: { organizationId: owner.user.organizationId },
        },
        as(ours),
      );
      expect(
        (await platform.query("user.checkUserOrganizations", { userId: other.user.id }, as(owner))).body,
      ).toEqual({ count: 2 });

      expect((await platform.mutate("user.remove", { userId: other.user.id }, as(owner))).status).toBe(200);
      expect((await platform.query("user.get", {}, as(ours))).status).toBe(401);
      expect((await platform.query("user.get", {}, { apiKey: ourKey.body.key })).status).toBe(401);
      const home = await platform.query("user.get", {}, { apiKey: theirKey.body.key });
      expect(home.status).toBe(200);
      expect(home.body).toMatchObject({
        id: other.user.id,
        role: "owner",
        organizationId: other.organizationId,
      });
      expect((await platform.query("user.get", {}, as(other))).status).toBe(200);
      expect(
        (await platform.query("user.checkUserOrganizations", { userId: other.user.id }, as(other))).body,
      ).toEqual({ count: 1 });
    });

    it("is 404 for a user of another organization", async () => {
      const r = await platform.mutate("user.remove", { userId: other.user.id }, as(owner));
      expect(r.status).toBe(404);
      expect((await platform.query("user.get", {}, as(other))).status).toBe(200);
    });
  });

  describe("assignPermissions", () => {
    it("lets the owner change a member's role and flags", async () => {
      const target = await platform.addMember(owner, "member");
      expect((await platform.query("user.all", {}, as(target))).status).toBe(403);
      const r = await platform.mutate(
        "user.assignPermissions",
        { id: target.user.id, role: "admin", canCreateProjects: true, canAccessAuditLog: true },
        as(owner),
      );
      expect(r.status).toBe(200);
      expect(r.body).toEqual({ success: true });
      const view = await platform.query("user.one", { userId: target.user.id }, as(owner));
      expect(view.body).toMatchObject({
        role: "admin",
        canCreateProjects: true,
        canDeleteProjects: false,
        canAccessAuditLog: true,
      });
      // The new role applies to the member's existing session.
      expect((await platform.query("user.all", {}, as(target))).status).toBe(200);
    });

    it("is 403 for administrators and members", async () => {
      const body = { id: member.user.id, canCreateProjects: true };
      const byAdmin = await platform.mutate("user.assignPermissions", body, as(admin));
      expect(byAdmin.status).toBe(403);
      expect(byAdmin.body.error.message).toMatch(/owner/);
      expect((await platform.mutate("user.assignPermissions", body, as(member))).status).toBe(403);
    });

    it("refuses role owner and any change to the owner with 400 naming the field", async () => {
      const toOwner = await platform.mutate(
        "user.assignPermissions",
        { id: member.user.id, role: "owner" },
        as(owner),
      );
      expect(toOwner.status).toBe(400);
      expect(toOwner.body.error.data.fields).toEqual(["role"]);
      const ownerChange = await platform.mutate(
        "user.assignPermissions",
        { id: owner.user.id, role: "member" },
        as(owner),
      );
      expect(ownerChange.status).toBe(400);
      expect(ownerChange.body.error.data.fields).toEqual(["id"]);
      const badRole = await platform.mutate(
        "user.assignPermissions",
        { id: member.user.id, role: "root" },
        as(owner),
      );
      expect(badRole.status).toBe(400);
      expect(badRole.body.error.data.fields).toEqual(["role"]);
      expect((await platform.query("user.one", { userId: owner.user.id }, as(owner))).body.role).toBe(
        "owner",
      );
    });

    it("is 404 for a user of another organization", async () => {
      const r = await platform.mutate(
        "user.assignPermissions",
        { id: other.user.id, role: "member" },
        as(owner),
      );
      expect(r.status).toBe(404);
    });
  });

  describe("getInvitations", () => {
    it("shows the pending, unexpired invitation of a token, never one matched by email (issue 22 finding 5)", async () => {
      const invitee = await createOtherOrganization(
        platform,
        "invitee@example.com",
        "Invitee's organization",
      );
      const live = await platform.mutate(
        "organization.inviteMember",
        { email: "invitee@example.com", role: "member" },
        as(owner),
      );
      const canceled = await platform.mutate(
        "organization.inviteMember",
        { email: "invitee@example.com", role: "admin" },
        as(other),
      );
      await platform.mutate(
        "organization.removeInvitation",
        { invitationId: canceled.body.invitationId },
        as(other),
      );
      // The token travels in tRPC's ?input= form (a plain ?token= is refused as a credential).
      const byToken = (token: string) =>
        platform.request(`/api/user.getInvitations?input=${encodeURIComponent(JSON.stringify({ token }))}`, {
          token: invitee.token,
        });
      // Addressed to the invitee's email, but without the token nothing is shown.
      expect((await platform.query("user.getInvitations", {}, as(invitee))).body).toEqual([]);

      const r = await byToken(live.body.token);
      expect(r.status).toBe(200);
      const organization = (
        await platform.query("organization.one", { organizationId: owner.user.organizationId }, as(owner))
      ).body;
      expect(r.body).toEqual([
        {
          id: live.body.invitationId,
          email: "invitee@example.com",
          role: "member",
          status: "pending",
          expiresAt: live.body.expiresAt,
          organization: { id: organization.id, name: organization.name, createdAt: organization.createdAt },
        },
      ]);
      expect((await byToken(canceled.body.token)).body).toEqual([]);

      await platform.ctx.db
        .updateTable("invitations")
        .set({ expiresAt: new Date(Date.now() - 1000).toISOString() })
        .where("invitationId", "=", live.body.invitationId)
        .execute();
      expect((await byToken(live.body.token)).body).toEqual([]);
    });
  });

  describe("checkUserOrganizations", () => {
    it("counts the organizations of the caller or of a member, for administrators", async () => {
      expect(
        (await platform.query("user.checkUserOrganizations", { userId: member.user.id }, as(member))).body,
      ).toEqual({ count: 1 });
      const r = await platform.query("user.checkUserOrganizations", { userId: member.user.id }, as(admin));
      expect(r.body).toEqual({ count: 1 });
    });

    it("is 403 for a member asking about someone else, 404 for another organization's user", async () => {
      expect(
        (await platform.query("user.checkUserOrganizations", { userId: admin.user.id }, as(member))).status,
      ).toBe(403);
      expect(
        (await platform.query("user.checkUserOrganizations", { userId: other.user.id }, as(owner))).status,
      ).toBe(404);
      expect(
        (await platform.query("user.checkUserOrganizations", {}, as(owner))).body.error.data.fields,
      ).toEqual(["userId"]);
    });
  });

  describe("sessions", () => {
    it("lists the caller's live sessions without tokens, marks the current one, and session names it", async () => {
      const first = await platform.addMember(owner, "member", "sessions@example.com");
      const second = await login(platform, "sessions@example.com");
      const list = await platform.query("user.listSessions", {}, as(second));
      expect(list.status).toBe(200);
      expect(list.body).toHaveLength(2);
      expect(list.body.every((s: any) => s.userId === first.user.id)).toBe(true);
      expect(list.body.filter((s: any) => s.current)).toHaveLength(1);
      const text = JSON.stringify(list.body);
      expect(text).not.toContain(first.token);
      expect(text).not.toContain(second.token);
      expect(Object.keys(list.body[0]).sort()).toEqual(
        ["activeOrganizationId", "createdAt", "current", "expiresAt", "id", "userId"].sort(),
      );

      const current = await platform.query("user.session", {}, as(second));
      expect(current.status).toBe(200);
      expect(current.body.session.id).toBe(list.body.find((s: any) => s.current).id);
      expect(current.body.session.activeOrganizationId).toBe(owner.user.organizationId);
      expect(current.body.user).toMatchObject({ id: first.user.id, email: "sessions@example.com" });
      expect(JSON.stringify(current.body)).not.toContain(second.token);
      // Another user's list never shows these sessions.
      const ownerList = await platform.query("user.listSessions", {}, as(owner));
      expect(ownerList.body.some((s: any) => s.userId !== owner.user.id)).toBe(false);
    });

    it("revokes one of the caller's own sessions: its token stops working, the others keep working", async () => {
      const first = await platform.addMember(owner, "member", "revoke-session@example.com");
      const second = await login(platform, "revoke-session@example.com");
      const firstId = (await platform.query("user.session", {}, as(first))).body.session.id;
      const r = await platform.mutate("user.revokeSession", { sessionId: firstId }, as(second));
      expect(r.status).toBe(200);
      expect(r.body).toEqual({ success: true });
      expect((await platform.query("user.get", {}, as(first))).status).toBe(401);
      expect((await platform.query("user.get", {}, as(second))).status).toBe(200);
      const list = await platform.query("user.listSessions", {}, as(second));
      expect(list.body.map((s: any) => s.id)).not.toContain(firstId);
      // Revoked already: a 404 naming nothing changed.
      const again = await platform.mutate("user.revokeSession", { sessionId: firstId }, as(second));
      expect(again.status).toBe(404);
    });

    it("is 404 for another user's session (same or other organization) and changes nothing", async () => {
      const victimSession = (await platform.query("user.session", {}, as(member))).body.session.id;
      const otherSession = (await platform.query("user.session", {}, as(other))).body.session.id;
      for (const sessionId of [victimSession, otherSession]) {
        const r = await platform.mutate("user.revokeSession", { sessionId }, as(owner));
        expect(r.status).toBe(404);
        expect(r.body.error.code).toBe("NOT_FOUND");
      }
      expect((await platform.query("user.get", {}, as(member))).status).toBe(200);
      expect((await platform.query("user.get", {}, as(other))).status).toBe(200);
      const missing = await platform.mutate("user.revokeSession", {}, as(owner));
      expect(missing.status).toBe(400);
      expect(missing.body.error.data.fields).toEqual(["sessionId"]);
    });

    it("answers a session without id to an API key, and 401 without credentials", async () => {
      const created = await platform.mutate(
        "user.createApiKey",
        { name: "session-probe", metadata: { organizationId: owner.user.organizationId } },
        as(owner),
      );
      const r = await platform.query("user.session", {}, { apiKey: created.body.key });
      expect(r.status).toBe(200);
      expect(r.body.session).toEqual({
        id: null,
        activeOrganizationId: owner.user.organizationId,
        createdAt: null,
        expiresAt: null,
      });
      expect(r.body.user.id).toBe(owner.user.id);
      const listed = await platform.query("user.listSessions", {}, { apiKey: created.body.key });
      expect(listed.body.length).toBeGreaterThan(0);
      expect(listed.body.every((s: any) => s.current === false)).toBe(true);
      expect((await platform.query("user.listSessions")).status).toBe(401);
      expect((await platform.query("user.session")).status).toBe(401);
    });
  });

  describe("getPermissions", () => {
    it("answers what the procedures enforce: everything for administrators, a member's flags, and follows assignPermissions", async () => {
      const admins = await platform.query("user.getPermissions", {}, as(admin));
      expect(admins.status).toBe(200);
      for (const actions of Object.values(admins.body) as Record<string, boolean>[]) {
        for (const [action, allowed] of Object.entries(actions)) {
          // Only the owner changes permissions.
          expect(allowed).toBe(action !== "update");
        }
      }
      expect((await platform.query("user.getPermissions", {}, as(owner))).body.member.update).toBe(true);

      const user = await platform.addMember(owner, "member", "permissions-view@example.com");
      await platform.mutate(
        "user.assignPermissions",
        { id: user.user.id, canCreateProjects: false, canAccessToDocker: false, canCreateServices: false },
        as(owner),
      );
      const before = await platform.query("user.getPermissions", {}, as(user));
      expect(before.body).toMatchObject({
        project: { create: false },
        docker: { read: false },
        service: { create: false },
        member: { read: false, create: false, update: false, delete: false },
      });
      expect((await platform.mutate("project.create", { name: "perm-denied" }, as(user))).status).toBe(403);
      expect((await platform.query("docker.getContainers", {}, as(user))).status).toBe(403);

      await platform.mutate(
        "user.assignPermissions",
        { id: user.user.id, canCreateProjects: true, canAccessToDocker: true },
        as(owner),
      );
      const after = await platform.query("user.getPermissions", {}, as(user));
      expect(after.body).toMatchObject({ project: { create: true }, docker: { read: true } });
      expect((await platform.mutate("project.create", { name: "perm-allowed" }, as(user))).status).toBe(200);
      expect((await platform.query("docker.getContainers", {}, as(user))).status).not.toBe(403);
      expect((await platform.query("user.getPermissions")).status).toBe(401);
    });
  });

  describe("haveRootAccess", () => {
    it("is true for the instance organization's owner and administrators only", async () => {
      expect((await platform.query("user.haveRootAccess", {}, as(owner))).body).toBe(true);
      expect((await platform.query("user.haveRootAccess", {}, as(admin))).body).toBe(true);
      expect((await platform.query("user.haveRootAccess", {}, as(member))).body).toBe(false);
      expect((await platform.query("user.haveRootAccess", {}, as(other))).body).toBe(false);
      expect((await platform.query("user.haveRootAccess")).status).toBe(401);
    });
  });

  describe("generateToken", () => {
    it("creates an API key for the caller's organization and answers it once; the key works", async () => {
      const r = await platform.mutate("user.generateToken", {}, as(admin));
      expect(r.status).toBe(200);
      expect(typeof r.body).toBe("string");
      const me = await platform.query("user.get", {}, { apiKey: r.body });
      expect(me.status).toBe(200);
      expect(me.body.id).toBe(admin.user.id);
      expect(me.body.organizationId).toBe(owner.user.organizationId);
      const listed = me.body.apiKeys.filter((key: any) => key.name === "Generated token");
      expect(listed).toHaveLength(1);
      expect(JSON.stringify(me.body)).not.toContain(r.body);
      // A second call makes another key: the first keeps working until deleted.
      const second = await platform.mutate("user.generateToken", {}, as(admin));
      expect(second.body).not.toBe(r.body);
      expect((await platform.query("user.get", {}, { apiKey: r.body })).status).toBe(200);
    });

    it("is 403 for a member without canAccessToAPI, 401 without credentials", async () => {
      const user = await platform.addMember(owner, "member", "generate-token@example.com");
      await platform.mutate("user.assignPermissions", { id: user.user.id, canAccessToAPI: false }, as(owner));
      const r = await platform.mutate("user.generateToken", {}, as(user));
      expect(r.status).toBe(403);
      const keys = await platform.ctx.db
        .selectFrom("apiKeys")
        .select("apiKeyId")
        .where("userId", "=", user.user.id)
        .execute();
      expect(keys).toEqual([]);
      expect((await platform.mutate("user.generateToken", {})).status).toBe(401);
    });
  });

  describe("getUserByToken", () => {
    it("answers the invitation of a secret token without credentials, never one named by its id", async () => {
      const invite = await platform.mutate(
        "organization.inviteMember",
        { email: "by-token@example.com", role: "admin" },
        as(owner),
      );
      const r = await platform.query("user.getUserByToken", { token: invite.body.token });
      expect(r.status).toBe(200);
      expect(r.body).toEqual({
        id: invite.body.invitationId,
        email: "by-token@example.com",
        status: "pending",
        role: "admin",
        inviterId: owner.user.id,
        isExpired: false,
        userAlreadyExists: false,
      });
      const byId = await platform.query("user.getUserByToken", { token: invite.body.invitationId });
      expect(byId.status).toBe(404);
      expect(byId.body.error.data.fields).toEqual(["token"]);
      const missing = await platform.query("user.getUserByToken", {});
      expect(missing.status).toBe(400);
      expect(missing.body.error.data.fields).toEqual(["token"]);

      await platform.ctx.db
        .updateTable("invitations")
        .set({ expiresAt: new Date(Date.now() - 1000).toISOString() })
        .where("invitationId", "=", invite.body.invitationId)
        .execute();
      expect((await platform.query("user.getUserByToken", { token: invite.body.token })).body.isExpired).toBe(
        true,
      );
    });

    it("tells whether the invited email has an account already (sign in rather than register)", async () => {
      const invite = await platform.mutate(
        "organization.inviteMember",
        { email: other.user.email, role: "member" },
        as(owner),
      );
      const r = await platform.query("user.getUserByToken", { token: invite.body.token });
      expect(r.body).toMatchObject({ email: other.user.email, userAlreadyExists: true, status: "pending" });
    });
  });

  describe("createUserWithCredentials", () => {
    it("lets an administrator create a member who then signs in with that password", async () => {
      const r = await platform.mutate(
        "user.createUserWithCredentials",
        { email: "With-Password@example.com", password: "initial-password-1", role: "member" },
        as(admin),
      );
      expect(r.status).toBe(200);
      expect(r.body).toMatchObject({
        email: "with-password@example.com",
        name: "with-password",
        role: "member",
        organizationId: owner.user.organizationId,
      });
      expect(JSON.stringify(r.body)).not.toContain("initial-password-1");
      const signIn = await platform.mutate("auth.login", {
        email: "with-password@example.com",
        password: "initial-password-1",
      });
      expect(signIn.status).toBe(200);
      expect(signIn.body.user).toMatchObject({ id: r.body.id, organizationId: owner.user.organizationId });
      const users = await platform.query("user.all", {}, as(owner));
      expect(users.body.map((u: any) => u.email)).toContain("with-password@example.com");
      const named = await platform.mutate(
        "user.createUserWithCredentials",
        { email: "named@example.com", password: "initial-password-1", role: "member", name: "Named One" },
        as(owner),
      );
      expect(named.body.name).toBe("Named One");
    });

    it("refuses another role, a short password and a taken email, each naming its field, creating nothing", async () => {
      const cases: [Record<string, unknown>, number, string][] = [
        [{ email: "admin-role@example.com", password: "initial-password-1", role: "admin" }, 400, "role"],
        [{ email: "owner-role@example.com", password: "initial-password-1", role: "owner" }, 400, "role"],
        [{ email: "short@example.com", password: "short", role: "member" }, 400, "password"],
        [{ email: "not-an-email", password: "initial-password-1", role: "member" }, 400, "email"],
        [{ email: other.user.email, password: "initial-password-1", role: "member" }, 409, "email"],
        [{ email: member.user.email, password: "initial-password-1", role: "member" }, 409, "email"],
      ];
      for (const [input, status, field] of cases) {
        const r = await platform.mutate("user.createUserWithCredentials", input, as(owner));
        expect(r.status, JSON.stringify(input)).toBe(status);
        expect(r.body.error.data.fields).toEqual([field]);
      }
      const created = await platform.ctx.db
        .selectFrom("users")
        .select("email")
        .where("email", "in", ["admin-role@example.com", "owner-role@example.com", "short@example.com"])
        .execute();
      expect(created).toEqual([]);
      // The other organization's user stays where they were, with their password.
      expect((await platform.query("user.all", {}, as(owner))).body.map((u: any) => u.email)).not.toContain(
        other.user.email,
      );
      expect((await login(platform, other.user.email)).token).toBeTruthy();
    });

    it("is 403 for a member and 401 without credentials", async () => {
      const input = { email: "by-member@example.com", password: "initial-password-1", role: "member" };
      expect((await platform.mutate("user.createUserWithCredentials", input, as(member))).status).toBe(403);
      expect((await platform.mutate("user.createUserWithCredentials", input)).status).toBe(401);
      const row = await platform.ctx.db
        .selectFrom("users")
        .select("userId")
        .where("email", "=", "by-member@example.com")
        .executeTakeFirst();
      expect(row).toBeUndefined();
    });
  });

  describe("getBackups", () => {
    it("shows instance administrators the organization's web-server backups with their destination, never its secret", async () => {
      const destination = await platform.mutate(
        "destination.create",
        {
          name: "Control plane bucket",
          provider: "Minio",
          accessKey: "access-key",
          secretAccessKey: "get-backups-secret",
          bucket: "control-plane",
          region: "us-east-1",
          endpoint: "https://s3.example.com",
        },
        as(owner),
      );
      expect(destination.status, JSON.stringify(destination.body)).toBe(200);
      const backup = await platform.mutate(
        "backup.create",
        {
          schedule: "0 3 * * *",
          prefix: "control-plane",
          destinationId: destination.body.destinationId,
          database: "",
          databaseType: "web-server",
        },
        as(owner),
      );
      expect(backup.status, JSON.stringify(backup.body)).toBe(200);

      for (const session of [owner, admin]) {
        const r = await platform.query("user.getBackups", {}, as(session));
        expect(r.status).toBe(200);
        expect(r.body.id).toBe(session.user.id);
        expect(r.body.backups.map((b: any) => b.backupId)).toEqual([backup.body.backupId]);
        expect(r.body.backups[0]).toMatchObject({
          databaseType: "web-server",
          destination: { destinationId: destination.body.destinationId, name: "Control plane bucket" },
          lastRun: null,
        });
        expect(JSON.stringify(r.body)).not.toContain("get-backups-secret");
      }
      // Another organization's owner is no instance administrator: none of ours, and none at all.
      const theirs = await platform.query("user.getBackups", {}, as(other));
      expect(theirs.status).toBe(200);
      expect(theirs.body).toMatchObject({ id: other.user.id, backups: [] });
      expect((await platform.query("user.getBackups", {}, as(member))).status).toBe(403);
      expect((await platform.query("user.getBackups")).status).toBe(401);
    });
  });

  describe("listPasskeys", () => {
    it("answers an empty list to a signed-in caller (passkeys cannot be registered) and 401 to nobody", async () => {
      const listed = await platform.query("user.listPasskeys", {}, as(owner));
      expect(listed.status).toBe(200);
      expect(listed.body).toEqual([]);
      expect((await platform.query("user.listPasskeys")).status).toBe(401);
      expect((await platform.mutate("user.registerPasskey", {}, as(owner))).status).toBe(404);
    });
  });

  describe("template bookmarks", () => {
    it("toggles the caller's own bookmarks, kept per user", async () => {
      const user = await platform.addMember(owner, "member", "bookmarks@example.com");
      expect((await platform.query("user.getBookmarkedTemplates", {}, as(user))).body).toEqual([]);
      const add = await platform.mutate("user.toggleTemplateBookmark", { templateId: "plausible" }, as(user));
      expect(add.status).toBe(200);
      expect(add.body).toEqual({ isBookmarked: true });
      await platform.mutate("user.toggleTemplateBookmark", { templateId: "n8n" }, as(user));
      expect((await platform.query("user.getBookmarkedTemplates", {}, as(user))).body).toEqual([
        "plausible",
        "n8n",
      ]);
      const remove = await platform.mutate(
        "user.toggleTemplateBookmark",
        { templateId: "plausible" },
        as(user),
      );
      expect(remove.body).toEqual({ isBookmarked: false });
      expect((await platform.query("user.getBookmarkedTemplates", {}, as(user))).body).toEqual(["n8n"]);
      // Nobody else's list changes; a new session sees the same bookmarks.
      expect((await platform.query("user.getBookmarkedTemplates", {}, as(owner))).body).toEqual([]);
      expect((await platform.query("user.getBookmarkedTemplates", {}, as(other))).body).toEqual([]);
      const again = await login(platform, "bookmarks@example.com");
      expect((await platform.query("user.getBookmarkedTemplates", {}, as(again))).body).toEqual(["n8n"]);
    });

    it("is 400 naming templateId for something that is no template id, 401 without credentials", async () => {
      for (const templateId of ["", "../etc", "a b", "x".repeat(101)]) {
        const r = await platform.mutate("user.toggleTemplateBookmark", { templateId }, as(member));
        expect(r.status, templateId).toBe(400);
        expect(r.body.error.data.fields).toEqual(["templateId"]);
      }
      expect((await platform.query("user.getBookmarkedTemplates", {}, as(member))).body).toEqual([]);
      expect((await platform.mutate("user.toggleTemplateBookmark", { templateId: "n8n" })).status).toBe(401);
      expect((await platform.query("user.getBookmarkedTemplates")).status).toBe(401);
    });
  });
});
