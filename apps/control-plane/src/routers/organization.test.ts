import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Session, startTestPlatform, type TestPlatform } from "../testing/harness.ts";
import { insertServer } from "../testing/servers.ts";
import { createOtherOrganization, login } from "../users/test-support.ts";

describe("organization", () => {
  let platform: TestPlatform;
  let owner: Session;
  let admin: Session;
  let member: Session;
  let other: Session & { organizationId: string };
  const as = (session: Session) => ({ token: session.token });
  const orgId = () => owner.user.organizationId;

  beforeAll(async () => {
    platform = await startTestPlatform();
    owner = await platform.registerOwner();
    admin = await platform.addMember(owner, "admin");
    member = await platform.addMember(owner, "member");
    other = await createOtherOrganization(platform);
  });
  afterAll(() => platform.close());

  describe("inviteMember", () => {
    it("creates a pending invitation valid for 7 days", async () => {
      const before = Date.now();
      const r = await platform.mutate(
        "organization.inviteMember",
        { email: "New.Person@Example.com", role: "member" },
        as(admin),
      );
      expect(r.status).toBe(200);
      expect(r.body).toMatchObject({
        invitationId: expect.any(String),
        email: "new.person@example.com",
        role: "member",
        status: "pending",
        organizationId: orgId(),
        inviterId: admin.user.id,
      });
      // The secret that accepts it is answered here once: never listed, stored or logged in clear.
      expect(r.body.token).toMatch(/^[A-Za-z0-9_-]{43}$/);
      const listed = await platform.query("organization.allInvitations", {}, as(admin));
      expect(JSON.stringify(listed.body)).not.toContain(r.body.token);
      const row = await platform.ctx.db
        .selectFrom("invitations")
        .selectAll()
        .where("invitationId", "=", r.body.invitationId)
        .executeTakeFirstOrThrow();
      expect(JSON.stringify(row)).not.toContain(r.body.token);
      expect(platform.logLines.join("\n")).not.toContain(r.body.token);
      const expiresAt = new Date(r.body.expiresAt).getTime();
      expect(expiresAt).toBeGreaterThanOrEqual(before + 7 * 86_400_000 - 1000);
      expect(expiresAt).toBeLessThanOrEqual(Date.now() + 7 * 86_400_000 + 1000);
    });

    it("is 409 for an existing member and for an email with a pending invitation", async () => {
      const existing = await platform.mutate(
        "organization.inviteMember",
        { email: member.user.email, role: "member" },
        as(owner),
      );
      expect(existing.status).toBe(409);
      expect(existing.body.error.data.fields).toEqual(["email"]);
      const twice = await platform.mutate(
        "organization.inviteMember",
        { email: "new.person@example.com", role: "member" },
        as(owner),
      );
      expect(twice.status).toBe(409);
    });

    it("lets only the owner invite administrators", async () => {
      const byAdmin = await platform.mutate(
        "organization.inviteMember",
        { email: "would-be-admin@example.com", role: "admin" },
        as(admin),
      );
      expect(byAdmin.status).toBe(403);
      const byOwner = await platform.mutate(
        "organization.inviteMember",
        { email: "would-be-admin@example.com", role: "admin" },
        as(owner),
      );
      expect(byOwner.status).toBe(200);
    });

    it("is 403 for members, 401 without credentials, 400 naming bad fields", async () => {
      const input = { email: "someone@example.com", role: "member" };
      expect((await platform.mutate("organization.inviteMember", input, as(member))).status).toBe(403);
      expect((await platform.mutate("organization.inviteMember", input)).status).toBe(401);
      const bad = await platform.mutate(
        "organization.inviteMember",
        { email: "nope", role: "owner" },
        as(owner),
      );
      expect(bad.status).toBe(400);
      expect(bad.body.error.data.fields).toEqual(["email", "role"]);
    });
  });

  describe("allInvitations and removeInvitation", () => {
    it("lists the organization's invitations to administrators only", async () => {
      const r = await platform.query("organization.allInvitations", {}, as(admin));
      expect(r.status).toBe(200);
      expect(r.body.map((i: any) => i.email)).toEqual(
        expect.arrayContaining(["new.person@example.com", "would-be-admin@example.com"]),
      );
      expect(r.body.every((i: any) => i.organizationId === orgId())).toBe(true);
      expect((await platform.query("organization.allInvitations", {}, as(member))).status).toBe(403);
      expect((await platform.query("organization.allInvitations", {}, as(other))).body).toEqual([]);
    });

    it("cancels an invitation, which then cannot be used to register", async () => {
      const invite = await platform.mutate(
        "organization.inviteMember",
        { email: "canceled@example.com", role: "member" },
        as(admin),
      );
      const r = await platform.mutate(
        "organization.removeInvitation",
        { invitationId: invite.body.invitationId },
        as(admin),
      );
      expect(r.status).toBe(200);
      expect(r.body).toEqual({ success: true });
      const listed = (await platform.query("organization.allInvitations", {}, as(admin))).body.find(
        (i: any) => i.id === invite.body.invitationId,
      );
      expect(listed.status).toBe("canceled");
      const register = await platform.mutate("auth.register", {
        email: "canceled@example.com",
        password: "correct-horse-battery",
        name: "Canceled",
        invitationId: invite.body.invitationId,
        token: invite.body.token,
      });
      expect(register.status).toBe(404);
      // The email can be invited again.
      const again = await platform.mutate(
        "organization.inviteMember",
        { email: "canceled@example.com", role: "member" },
        as(admin),
      );
      expect(again.status).toBe(200);
    });

    it("shows an expired invitation as expired", async () => {
      const invite = await platform.mutate(
        "organization.inviteMember",
        { email: "late@example.com", role: "member" },
        as(owner),
      );
      await platform.ctx.db
        .updateTable("invitations")
        .set({ expiresAt: new Date(Date.now() - 1000).toISOString() })
        .where("invitationId", "=", invite.body.invitationId)
        .execute();
      const listed = (await platform.query("organization.allInvitations", {}, as(owner))).body.find(
        (i: any) => i.id === invite.body.invitationId,
      );
      expect(listed.status).toBe("expired");
    });

    it("is 404 for another organization's invitation, 409 for an accepted one, 403 for members", async () => {
      const theirs = await platform.mutate(
        "organization.inviteMember",
        { email: "theirs@example.com", role: "member" },
        as(other),
      );
      const r = await platform.mutate(
        "organization.removeInvitation",
        { invitationId: theirs.body.invitationId },
        as(owner),
      );
      expect(r.status).toBe(404);

      const joined = await platform.addMember(owner, "member", "joined@example.com");
      const accepted = (await platform.query("organization.allInvitations", {}, as(owner))).body.find(
        (i: any) => i.email === joined.user.email,
      );
      expect(accepted.status).toBe("accepted");
      const late = await platform.mutate(
        "organization.removeInvitation",
        { invitationId: accepted.id },
        as(owner),
      );
      expect(late.status).toBe(409);
      expect(
        (await platform.mutate("organization.removeInvitation", { invitationId: accepted.id }, as(member)))
          .status,
      ).toBe(403);
    });
  });

  describe("acceptInvitation", () => {
    it("lets a registered user with the invited email join the organization", async () => {
      const invite = await platform.mutate(
        "organization.inviteMember",
        { email: other.user.email, role: "member" },
        as(owner),
      );
      const wrongUser = await platform.mutate(
        "organization.acceptInvitation",
        { invitationId: invite.body.invitationId, token: invite.body.token },
        as(member),
      );
      expect(wrongUser.status).toBe(404);

      const r = await platform.mutate(
        "organization.acceptInvitation",
        { invitationId: invite.body.invitationId, token: invite.body.token },
        as(other),
      );
      expect(r.status).toBe(200);
      expect(r.body).toMatchObject({ id: orgId(), role: "member", ownerId: owner.user.id });
      const all = await platform.query("organization.all", {}, as(other));
      expect(all.body.map((o: any) => [o.id, o.role])).toEqual([
        [other.organizationId, "owner"],
        [orgId(), "member"],
      ]);
      const again = await platform.mutate(
        "organization.acceptInvitation",
        { invitationId: invite.body.invitationId, token: invite.body.token },
        as(other),
      );
      expect(again.status).toBe(404);
      const users = await platform.query("user.all", {}, as(owner));
      expect(users.body.map((u: any) => u.email)).toContain(other.user.email);
    });

    it("is 404 for an expired invitation", async () => {
      const invitee = await createOtherOrganization(platform, "expired-invitee@example.com");
      const invite = await platform.mutate(
        "organization.inviteMember",
        { email: "expired-invitee@example.com", role: "member" },
        as(owner),
      );
      await platform.ctx.db
        .updateTable("invitations")
        .set({ expiresAt: new Date(Date.now() - 1000).toISOString() })
        .where("invitationId", "=", invite.body.invitationId)
        .execute();
      const r = await platform.mutate(
        "organization.acceptInvitation",
        { invitationId: invite.body.invitationId, token: invite.body.token },
        as(invitee),
      );
      expect(r.status).toBe(404);
    });
  });

  describe("all and one", () => {
    it("lists the caller's organizations with the caller's role", async () => {
      const r = await platform.query("organization.all", {}, as(member));
      expect(r.status).toBe(200);
      expect(r.body).toEqual([
        {
          id: orgId(),
          name: "Owner's organization",
          ownerId: owner.user.id,
          createdAt: expect.any(String),
          role: "member",
        },
      ]);
      expect((await platform.query("organization.all")).status).toBe(401);
    });

    it("gives one organization of the caller, 404 for another", async () => {
      const r = await platform.query("organization.one", { organizationId: orgId() }, as(admin));
      expect(r.body).toMatchObject({ id: orgId(), role: "admin" });
      const theirs = await platform.query(
        "organization.one",
        { organizationId: other.organizationId },
        as(admin),
      );
      expect(theirs.status).toBe(404);
      const missing = await platform.query("organization.one", {}, as(admin));
      expect(missing.status).toBe(400);
      expect(missing.body.error.data.fields).toEqual(["organizationId"]);
    });
  });

  describe("update", () => {
    it("lets the owner rename the organization", async () => {
      const r = await platform.mutate(
        "organization.update",
        { organizationId: orgId(), name: "  Acme  " },
        as(owner),
      );
      expect(r.status).toBe(200);
      expect(r.body).toMatchObject({ id: orgId(), name: "Acme", role: "owner" });
      expect(
        (await platform.query("organization.one", { organizationId: orgId() }, as(member))).body.name,
      ).toBe("Acme");
    });

    it("is 403 for administrators, 400 naming name, 404 for another organization", async () => {
      const byAdmin = await platform.mutate(
        "organization.update",
        { organizationId: orgId(), name: "X" },
        as(admin),
      );
      expect(byAdmin.status).toBe(403);
      const blank = await platform.mutate(
        "organization.update",
        { organizationId: orgId(), name: " " },
        as(owner),
      );
      expect(blank.status).toBe(400);
      expect(blank.body.error.data.fields).toEqual(["name"]);
      const theirs = await platform.mutate(
        "organization.update",
        { organizationId: other.organizationId, name: "Mine now" },
        as(owner),
      );
      expect(theirs.status).toBe(404);
      expect(
        (await platform.query("organization.one", { organizationId: other.organizationId }, as(other))).body
          .name,
      ).toBe("Other organization");
    });

    it("acts only on the active organization", async () => {
      // The owner of ours joins the other organization as a member, then acts from ours.
      const invite = await platform.mutate(
        "organization.inviteMember",
        { email: owner.user.email, role: "member" },
        as(other),
      );
      await platform.mutate(
        "organization.acceptInvitation",
        { invitationId: invite.body.invitationId, token: invite.body.token },
        as(owner),
      );
      const r = await platform.mutate(
        "organization.update",
        { organizationId: other.organizationId, name: "Renamed from elsewhere" },
        as(owner),
      );
      expect(r.status).toBe(403);
      expect(r.body.error.message).toMatch(/active organization/);
    });
  });

  describe("setActive", () => {
    it("switches the session's active organization", async () => {
      const session = await login(platform, other.user.email);
      expect((await platform.query("user.get", {}, as(session))).body.organizationId).toBe(
        other.organizationId,
      );
      const r = await platform.mutate("organization.setActive", { organizationId: orgId() }, as(session));
      expect(r.status).toBe(200);
      expect(r.body).toMatchObject({ id: orgId(), role: "member" });
      const me = await platform.query("user.get", {}, as(session));
      expect(me.body).toMatchObject({ organizationId: orgId(), role: "member" });
      expect((await platform.query("user.all", {}, as(session))).status).toBe(403);
      await platform.mutate("organization.setActive", { organizationId: other.organizationId }, as(session));
      expect((await platform.query("user.all", {}, as(session))).status).toBe(200);
    });

    it("is 404 for an organization the caller is not in, 400 for an API key", async () => {
      const r = await platform.mutate(
        "organization.setActive",
        { organizationId: other.organizationId },
        as(member),
      );
      expect(r.status).toBe(404);
      const { body: key } = await platform.mutate(
        "user.createApiKey",
        { name: "k", organizationId: orgId(), metadata: { organizationId: orgId() } },
        as(member),
      );
      const viaKey = await platform.mutate(
        "organization.setActive",
        { organizationId: orgId() },
        { apiKey: key.key },
      );
      expect(viaKey.status).toBe(400);
      expect(viaKey.body.error.data.fields).toEqual(["organizationId"]);
    });
  });

  describe("active and setDefault", () => {
    it("active answers the session's organization, and follows setActive", async () => {
      const session = await login(platform, other.user.email, other.organizationId);
      let active = await platform.query("organization.active", {}, as(session));
      expect(active.status, JSON.stringify(active.body)).toBe(200);
      expect(active.body).toMatchObject({ id: other.organizationId, role: "owner" });
      await platform.mutateOk("organization.setActive", { organizationId: orgId() }, as(session));
      active = await platform.query("organization.active", {}, as(session));
      expect(active.body).toMatchObject({ id: orgId(), role: "member" });
      expect((await platform.query("organization.active", {})).status).toBe(401);
    });

    it("setDefault makes login without an organization start there; another organization is a 404", async () => {
      // Without a default, login picks the organization the user owns.
      expect(
        (await platform.query("user.get", {}, as(await login(platform, other.user.email)))).body
          .organizationId,
      ).toBe(other.organizationId);
      const session = await login(platform, other.user.email);
      expect(
        (await platform.mutate("organization.setDefault", { organizationId: orgId() }, as(session))).body,
      ).toEqual({ success: true });
      const next = await login(platform, other.user.email);
      expect((await platform.query("user.get", {}, as(next))).body.organizationId).toBe(orgId());
      // Naming an organization at login still wins.
      const named = await login(platform, other.user.email, other.organizationId);
      expect((await platform.query("user.get", {}, as(named))).body.organizationId).toBe(
        other.organizationId,
      );
      // Only one default: setting another moves it.
      await platform.mutateOk(
        "organization.setDefault",
        { organizationId: other.organizationId },
        as(session),
      );
      const back = await login(platform, other.user.email);
      expect((await platform.query("user.get", {}, as(back))).body.organizationId).toBe(other.organizationId);
      const defaults = await platform.ctx.db
        .selectFrom("members")
        .select("organizationId")
        .where("userId", "=", other.user.id)
        .where("isDefault", "=", true)
        .execute();
      expect(defaults).toEqual([{ organizationId: other.organizationId }]);

      const refused = await platform.mutate(
        "organization.setDefault",
        { organizationId: other.organizationId },
        as(member),
      );
      expect(refused.status).toBe(404);
      const memberDefaults = await platform.ctx.db
        .selectFrom("members")
        .select("isDefault")
        .where("userId", "=", member.user.id)
        .execute();
      expect(memberDefaults.every((row) => !row.isDefault)).toBe(true);
    });
  });

  describe("updateMemberRole", () => {
    const memberIdOf = async (userId: string) => {
      const users = (await platform.query("user.all", {}, as(owner))).body as {
        userId: string;
        memberId: string;
      }[];
      return users.find((user) => user.userId === userId)!.memberId;
    };
    const roleOf = async (userId: string) =>
      ((await platform.query("user.all", {}, as(owner))).body as { userId: string; role: string }[]).find(
        (user) => user.userId === userId,
      )!.role;

    it("administrators promote and demote members; only the owner changes an administrator's role", async () => {
      const target = await platform.addMember(owner, "member");
      const memberId = await memberIdOf(target.user.id);
      expect(memberId).toEqual(expect.any(String));
      await platform.mutateOk("organization.updateMemberRole", { memberId, role: "admin" }, as(admin));
      expect(await roleOf(target.user.id)).toBe("admin");
      // The role takes effect: the promoted user lists the organization's users now.
      expect((await platform.query("user.all", {}, as(target))).status).toBe(200);

      const byAdmin = await platform.mutate(
        "organization.updateMemberRole",
        { memberId, role: "member" },
        as(admin),
      );
      expect(byAdmin.status).toBe(403);
      expect(await roleOf(target.user.id)).toBe("admin");
      await platform.mutateOk("organization.updateMemberRole", { memberId, role: "member" }, as(owner));
      expect(await roleOf(target.user.id)).toBe("member");
      expect((await platform.query("user.all", {}, as(target))).status).toBe(403);
    });

    it("refuses one's own role, the owner's, role owner, members and another organization", async () => {
      const target = await platform.addMember(owner, "member");
      const memberId = await memberIdOf(target.user.id);
      const own = await platform.mutate(
        "organization.updateMemberRole",
        { memberId: await memberIdOf(admin.user.id), role: "member" },
        as(admin),
      );
      expect(own.status).toBe(403);
      const ownersRole = await platform.mutate(
        "organization.updateMemberRole",
        { memberId: await memberIdOf(owner.user.id), role: "admin" },
        as(admin),
      );
      expect(ownersRole.status).toBe(403);
      const toOwner = await platform.mutate(
        "organization.updateMemberRole",
        { memberId, role: "owner" },
        as(owner),
      );
      expect(toOwner.status).toBe(400);
      expect(toOwner.body.error.data.fields).toEqual(["role"]);
      const byMember = await platform.mutate(
        "organization.updateMemberRole",
        { memberId, role: "admin" },
        as(member),
      );
      expect(byMember.status).toBe(403);
      const stranger = await login(platform, other.user.email, other.organizationId);
      const foreign = await platform.mutate(
        "organization.updateMemberRole",
        { memberId, role: "admin" },
        as(stranger),
      );
      expect(foreign.status).toBe(404);
      expect(await roleOf(target.user.id)).toBe("member");
      expect(await roleOf(admin.user.id)).toBe("admin");
      expect(await roleOf(owner.user.id)).toBe("owner");
    });
  });

  describe("create and delete: organizations are tenants", () => {
    it("create: any signed-in user creates an organization and owns it; the active one stays", async () => {
      const r = await platform.mutate("organization.create", { name: "  Side project  " }, as(member));
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      expect(r.body).toEqual({
        id: expect.any(String),
        name: "Side project",
        ownerId: member.user.id,
        createdAt: expect.any(String),
        role: "owner",
      });
      const all = (await platform.query("organization.all", {}, as(member))).body;
      expect(all.map((o: any) => [o.id, o.role])).toEqual([
        [orgId(), "member"],
        [r.body.id, "owner"],
      ]);
      expect((await platform.query("user.get", {}, as(member))).body.role).toBe("member");
      // Its owner invites into it once active there.
      const there = await platform.mutate(
        "organization.setActive",
        { organizationId: r.body.id },
        as(member),
      );
      expect(there.status).toBe(200);
      const inside = await login(platform, member.user.email, r.body.id);
      expect((await platform.query("user.all", {}, as(inside))).status).toBe(200);

      const blank = await platform.mutate("organization.create", { name: " " }, as(member));
      expect(blank.status).toBe(400);
      expect(blank.body.error.data.fields).toEqual(["name"]);
      const forged = await platform.mutate("organization.create", { name: "Acme\nERROR forged" }, as(member));
      expect(forged.status).toBe(400);
      expect(forged.body.error.data.fields).toEqual(["name"]);
      expect((await platform.mutate("organization.create", { name: "Anonymous" })).status).toBe(401);
      await platform.mutate("organization.setActive", { organizationId: orgId() }, as(member));
    });

    it("delete: only by its owner, never the instance organization, 404 for a stranger", async () => {
      const created = await platform.mutateOk("organization.create", { name: "Short-lived" }, as(admin));
      const instance = await platform.mutate("organization.delete", { organizationId: orgId() }, as(owner));
      expect(instance.status).toBe(403);
      expect(instance.body.error.message).toMatch(/instance organization/);
      const stranger = await platform.mutate(
        "organization.delete",
        { organizationId: created.id },
        as(other),
      );
      expect(stranger.status).toBe(404);
      const missing = await platform.mutate("organization.delete", {}, as(admin));
      expect(missing.status).toBe(400);
      expect(missing.body.error.data.fields).toEqual(["organizationId"]);

      // A member (even an administrator) of it is not its owner.
      const adminThere = await login(platform, admin.user.email, created.id);
      const invite = await platform.mutateOk(
        "organization.inviteMember",
        { email: member.user.email, role: "admin" },
        as(adminThere),
      );
      await platform.mutateOk("organization.acceptInvitation", { token: invite.token }, as(member));
      const invited = await platform.mutateOk(
        "organization.inviteMember",
        { email: "only-there@example.com", role: "member" },
        as(adminThere),
      );
      const onlyThere = await platform.mutateOk(
        "auth.register",
        {
          email: "only-there@example.com",
          password: "correct-horse-battery",
          name: "Only there",
          token: invited.token,
        },
        {},
      );
      const byAdmin = await platform.mutate(
        "organization.delete",
        { organizationId: created.id },
        as(member),
      );
      expect(byAdmin.status).toBe(403);
      expect(byAdmin.body.error.message).toMatch(/owner/);

      // The owner, active in it, deletes it: their session moves to their other organization,
      // the member's memberships, invitations and API keys of it are gone.
      const ok = await platform.mutate("organization.delete", { organizationId: created.id }, as(adminThere));
      expect(ok.status, JSON.stringify(ok.body)).toBe(200);
      expect(ok.body).toEqual({ success: true });
      const me = await platform.query("user.get", {}, as(adminThere));
      expect(me.status).toBe(200);
      expect(me.body.organizationId).toBe(orgId());
      expect(
        (await platform.query("organization.all", {}, as(member))).body.map((o: any) => o.id),
      ).not.toContain(created.id);
      const rows = await platform.ctx.db
        .selectFrom("organizations")
        .select("organizationId")
        .where("organizationId", "=", created.id)
        .execute();
      expect(rows).toEqual([]);
      const again = await platform.mutate("organization.delete", { organizationId: created.id }, as(admin));
      expect(again.status).toBe(404);
      // A user whose only organization it was is removed, as user.remove does.
      const joinedOnly = await platform.ctx.db
        .selectFrom("users")
        .select("userId")
        .where("email", "=", "only-there@example.com")
        .execute();
      expect(joinedOnly).toEqual([]);
      expect((await platform.query("user.get", {}, as(onlyThere))).status).toBe(401);
    });

    it("delete: refused (409) while it has services or servers, and for the caller's only organization", async () => {
      const solo = await createOtherOrganization(platform, "solo-owner@example.com", "Solo");
      const only = await platform.mutate(
        "organization.delete",
        { organizationId: solo.organizationId },
        as(solo),
      );
      expect(only.status).toBe(403);
      expect(only.body.error.message).toMatch(/only organization/);

      const busy = await platform.mutateOk("organization.create", { name: "Busy" }, as(solo));
      const inBusy = await login(platform, solo.user.email, busy.id);
      const project = await platform.mutateOk("project.create", { name: "Work" }, as(inBusy));
      const application = await platform.mutate(
        "application.create",
        { name: "Web", environmentId: project.environment.environmentId },
        as(inBusy),
      );
      expect(application.status, JSON.stringify(application.body)).toBe(200);
      const withService = await platform.mutate("organization.delete", { organizationId: busy.id }, as(solo));
      expect(withService.status).toBe(409);
      expect(withService.body.error.message).toMatch(/1 service\b/);
      expect(withService.body.error.data.fields).toEqual(["organizationId"]);
      await platform.ctx.db
        .deleteFrom("applications")
        .where("applicationId", "=", application.body.applicationId)
        .execute();

      // A database service keeps it too: its Swarm service and volume would outlive the rows.
      const redis = await platform.mutate(
        "redis.create",
        {
          name: "Cache",
          appName: "busy-cache",
          environmentId: project.environment.environmentId,
          databasePassword: "s3cret-Pass@1",
        },
        as(inBusy),
      );
      expect(redis.status, JSON.stringify(redis.body)).toBe(200);
      const withDatabase = await platform.mutate(
        "organization.delete",
        { organizationId: busy.id },
        as(solo),
      );
      expect(withDatabase.status).toBe(409);
      expect(withDatabase.body.error.message).toMatch(/1 service\b/);
      await platform.ctx.db.deleteFrom("databaseServices").where("appName", "like", "busy-cache%").execute();

      await insertServer(platform.ctx.db, busy.id, {
        serverId: `srv-${busy.id}`,
        name: "box",
        ipAddress: "198.51.100.30",
      });
      const withServer = await platform.mutate("organization.delete", { organizationId: busy.id }, as(solo));
      expect(withServer.status).toBe(409);
      expect(withServer.body.error.message).toMatch(/1 server\b/);
      expect(
        await platform.ctx.db
          .selectFrom("projects")
          .select("projectId")
          .where("organizationId", "=", busy.id)
          .execute(),
      ).toHaveLength(1);

      await platform.ctx.db.deleteFrom("servers").where("organizationId", "=", busy.id).execute();
      // An empty project does not keep it.
      expect(
        (await platform.mutate("organization.delete", { organizationId: busy.id }, as(solo))).status,
      ).toBe(200);
      expect(
        await platform.ctx.db
          .selectFrom("projects")
          .select("projectId")
          .where("organizationId", "=", busy.id)
          .execute(),
      ).toEqual([]);
    });
  });
});
