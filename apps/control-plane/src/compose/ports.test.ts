/**
 * The host ports a stack's file publishes are the server's like an application's: they are
 * claimed when the file is stored (compose.create, compose.update), an application's port check
 * sees them (409), a stack cannot take a port another service publishes (409 naming
 * composeFile, nothing stored), its own ports never count against it, and a port it no longer
 * publishes is free again.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Session, startTestPlatform, type TestPlatform } from "../testing/harness.ts";

let platform: TestPlatform;
let owner: Session;
let environmentId: string;
let applicationId: string;

const publishing = (...ports: string[]) => `services:
  web:
    image: platform-test/busybox:latest
    ports:
${ports.map((port) => `      - "${port}"`).join("\n")}
`;

async function query(name: string, input: Record<string, unknown>) {
  const response = await platform.query(name, input, owner);
  expect(response.status, JSON.stringify(response.body)).toBe(200);
  return response.body as any;
}

const appName = () => `ports-${Math.random().toString(36).slice(2, 10)}`;

beforeAll(async () => {
  platform = await startTestPlatform();
  owner = await platform.registerOwner();
  const project = await platform.mutateOk("project.create", { name: "Ports" }, owner);
  environmentId = project.environment.environmentId;
  const application = await platform.mutateOk("application.create", { name: "app", environmentId }, owner);
  applicationId = application.applicationId;
  await platform.mutateOk("port.create", { applicationId, publishedPort: 18190, targetPort: 80 }, owner);
});

afterAll(async () => {
  await platform?.close();
});

describe("ports published by compose stacks", () => {
  it("are seen by the other services' port checks, and a stack's own ports never count against it", async () => {
    const stack = await platform.mutateOk(
      "compose.create",
      { name: "s", appName: appName(), environmentId, composeFile: publishing("18181:80", "18182:53/udp") },
      owner,
    );

    // An application cannot publish what the stack publishes (same protocol).
    const taken = await platform.mutate(
      "port.create",
      { applicationId, publishedPort: 18181, targetPort: 80 },
      owner,
    );
    expect(taken.status, JSON.stringify(taken.body)).toBe(409);
    expect(taken.body.error.data.fields).toEqual(["publishedPort"]);
    await platform.mutateOk(
      "port.create",
      { applicationId, publishedPort: 18182, targetPort: 80, protocol: "tcp" },
      owner,
    );

    // Another stack cannot either; nothing of it is stored.
    const second = appName();
    const refused = await platform.mutate(
      "compose.create",
      { name: "s2", appName: second, environmentId, composeFile: publishing("18181:8080") },
      owner,
    );
    expect(refused.status, JSON.stringify(refused.body)).toBe(409);
    expect(refused.body.error.data.fields).toEqual(["composeFile"]);
    expect(JSON.stringify(await query("project.all", {}))).not.toContain(second);

    // Nor can a stack take an application's port at update; the file stays as it was.
    const update = await platform.mutate(
      "compose.update",
      { composeId: stack.composeId, composeFile: publishing("18181:80", "18190:80") },
      owner,
    );
    expect(update.status, JSON.stringify(update.body)).toBe(409);
    const one = await query("compose.one", { composeId: stack.composeId });
    expect(one.composeFile).toBe(publishing("18181:80", "18182:53/udp"));

    // Its own ports are its own; a port it no longer publishes is free again.
    await platform.mutateOk(
      "compose.update",
      { composeId: stack.composeId, composeFile: publishing("18181:80", "18183:80") },
      owner,
    );
    await platform.mutateOk(
      "compose.update",
      { composeId: stack.composeId, composeFile: publishing("18183:80") },
      owner,
    );
    await platform.mutateOk("port.create", { applicationId, publishedPort: 18181, targetPort: 80 }, owner);

    // Deleting the stack frees its ports.
    await platform.mutateOk("compose.delete", { composeId: stack.composeId }, owner);
    await platform.mutateOk("port.create", { applicationId, publishedPort: 18183, targetPort: 80 }, owner);
  });
});
