/** Tests of subject naming. */

import { assertValidServerId, InvalidNameError } from "@platform/names";
import { describe, expect, it } from "vitest";
import {
  agentSubjectsWildcard,
  commandSubject,
  eventsSubject,
  heartbeatSubject,
  logsSubject,
  serverIdOfSubject,
} from "./subjects.ts";

describe("subjects", () => {
  it("names the subjects of one server", () => {
    expect(commandSubject("srv_1-a")).toBe("agent.srv_1-a.cmd");
    expect(heartbeatSubject("srv1")).toBe("agent.srv1.heartbeat");
    expect(eventsSubject("srv1")).toBe("agent.srv1.events");
    expect(logsSubject("srv1", "build-42")).toBe("agent.srv1.logs.build-42");
    expect(agentSubjectsWildcard("srv1")).toBe("agent.srv1.>");
  });

  it("refuses server ids that would change the subject", () => {
    for (const bad of ["a.b", "*", ">", "", "a b", "a/b", "x.>"]) {
      expect(() => commandSubject(bad)).toThrow(InvalidNameError);
      expect(() => assertValidServerId(bad)).toThrow(/server id/);
    }
    expect(() => logsSubject("srv1", "a.b")).toThrow(InvalidNameError);
  });

  it("reads the server id back from a subject", () => {
    expect(serverIdOfSubject("agent.srv1.heartbeat")).toBe("srv1");
    expect(serverIdOfSubject("other.srv1.heartbeat")).toBeUndefined();
  });
});
