/**
 * registryLogin through AgentCore against the real Docker Engine and real registries
 * (scripts/start-test-registry.sh): the right password logs in; a wrong password, a host that
 * does not resolve and a self-signed certificate each fail with the registry's own reason.
 */
import {
  asReceived,
  type CommandInput,
  type CommandReply,
  makeCommandRequest,
} from "@platform/agent-protocol";
import { beforeAll, describe, expect, it } from "vitest";
import { AgentCore } from "../core.ts";
import { createDockerClient } from "../docker/engine.ts";
import { requireDocker } from "../testing/docker.ts";
import { startTestRegistries, type TestRegistries } from "../testing/registry.ts";
import { withoutSecret } from "./login.ts";

let core: AgentCore;
let registries: TestRegistries;

beforeAll(async () => {
  const docker = await requireDocker();
  registries = await startTestRegistries();
  core = new AgentCore({ serverId: "registry-test", docker, mainDirectory: "/nonexistent" });
}, 300_000);

function login(serverAddress: string, username: string, password: string): Promise<CommandReply> {
  const command: CommandInput = {
    command: "registryLogin",
    registryLogin: { auth: { serverAddress, username, password } },
  };
  return core.handle(asReceived(makeCommandRequest("registry-test", command, 60_000)));
}

function failure(reply: CommandReply): { code: string; message: string } {
  if (reply.result !== "error") throw new Error(`expected an error, got ${JSON.stringify(reply)}`);
  return reply.error;
}

describe("registryLogin", () => {
  it("logs in with the right credentials", async () => {
    const reply = await login(registries.http, registries.username, registries.password);
    expect(reply).toMatchObject({ result: "registryLogin", registryLogin: { status: "Login Succeeded" } });
  });

  it("fails with the registry's refusal for a wrong password, without echoing it", async () => {
    const error = failure(await login(registries.http, registries.username, "wrong-password-123"));
    expect(error.code).toBe("FAILED");
    expect(error.message).toMatch(/401|unauthorized/i);
    expect(error.message).not.toContain("wrong-password-123");
  });

  it("a one-character password leaves the registry's refusal readable", async () => {
    const error = failure(await login(registries.http, registries.username, "p"));
    expect(error.code).toBe("FAILED");
    expect(error.message).not.toContain("***");
    expect(error.message).toMatch(/p/);
  });

  it("masks whole passwords of four characters or more, never parts of words", () => {
    const message = "login to https://reg.example.com failed: pass pass1234 p";
    expect(withoutSecret(message, "p")).toBe(message);
    expect(withoutSecret(message, "pas")).toBe(message);
    expect(withoutSecret(message, "pass1234")).toBe("login to https://reg.example.com failed: pass *** p");
  });

  it("fails naming the lookup failure for a host that does not resolve", async () => {
    const error = failure(await login("registry.invalid:5000", registries.username, registries.password));
    expect(error.code).toBe("FAILED");
    expect(error.message).toMatch(/registry\.invalid/);
    expect(error.message).toMatch(/no such host|lookup/i);
  });

  it("fails naming the certificate problem for a self-signed registry", async () => {
    const error = failure(await login(registries.tls, registries.username, registries.password));
    expect(error.code).toBe("FAILED");
    expect(error.message).toMatch(/certificate|x509/i);
  });

  it("reports an unreachable engine as UNAVAILABLE, not as a registry refusal", async () => {
    const offline = new AgentCore({
      serverId: "registry-test",
      docker: createDockerClient("/nonexistent/docker.sock"),
      mainDirectory: "/nonexistent",
    });
    const command: CommandInput = {
      command: "registryLogin",
      registryLogin: { auth: { serverAddress: registries.http, username: "u", password: "p" } },
    };
    const error = failure(
      await offline.handle(asReceived(makeCommandRequest("registry-test", command, 10_000))),
    );
    expect(error.code).toBe("UNAVAILABLE");
  });

  it.each(["https://127.0.0.1:5050", "user:pw@127.0.0.1:5050", "127.0.0.1:5050/../x", "127.0.0.1 :5050", ""])(
    "refuses the server address %j before calling the engine",
    async (serverAddress) => {
      const error = failure(await login(serverAddress, registries.username, registries.password));
      expect(error.code).toBe("INVALID_ARGUMENT");
    },
  );
});
