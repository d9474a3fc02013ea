/**
 * The agent's own check of proxy file holders, seen from the API (issue 22, finding 9): when the
 * file an application's commands name is recorded for someone else (as a control-plane bug
 * could cause), the agent refuses and the API answers 409; the file is left as it was.
 */
import { readFile } from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LOCAL_SERVER_ID } from "../agents/hub.ts";
import {
  createApplication,
  dynamicFile,
  type ProxyTestPlatform,
  startProxyTestPlatform,
} from "./test-support.ts";

let test: ProxyTestPlatform;

beforeAll(async () => {
  test = await startProxyTestPlatform();
}, 60_000);

afterAll(async () => {
  await test?.close();
});

describe("an application's Traefik file recorded for another holder (issue 22, finding 9)", () => {
  it("read and update answer 409 and leave the other holder's file as it was", async () => {
    const app = await createApplication(test);
    const fileName = `${app.appName}.yml`;
    const theirs = "http: {}\n";
    await test.platform.ctx.agents.client.writeProxyFile(LOCAL_SERVER_ID, "dynamic", fileName, theirs, {
      owner: { organizationId: "another-organization", resource: "application:another-app" },
    });
    const token = { token: test.owner.token };
    const read = await test.platform.query(
      "application.readTraefikConfig",
      { applicationId: app.applicationId },
      token,
    );
    expect(read.status, JSON.stringify(read.body)).toBe(409);
    const update = await test.platform.mutate(
      "application.updateTraefikConfig",
      { applicationId: app.applicationId, traefikConfig: "http:\n  routers: {}\n" },
      token,
    );
    expect(update.status, JSON.stringify(update.body)).toBe(409);
    expect(await readFile(dynamicFile(test, fileName), "utf8")).toBe(theirs);
  });
});
