/** The host ports ensureProxy publishes: defaults for unset ports, the dashboard's only when on. */
import { describe, expect, it } from "vitest";
import { hostPorts } from "./index.ts";

describe("hostPorts", () => {
  it("uses the entry points' own ports for unset (0) ports", () => {
    expect(hostPorts({ httpPort: 0, httpsPort: 0, dashboard: true, dashboardPort: 0 })).toEqual({
      httpPort: 80,
      httpsPort: 443,
      dashboardPort: 8080,
    });
  });

  it("publishes the dashboard's port only when the dashboard is on", () => {
    expect(hostPorts({ httpPort: 8000, httpsPort: 8443, dashboard: false, dashboardPort: 9000 })).toEqual({
      httpPort: 8000,
      httpsPort: 8443,
      dashboardPort: undefined,
    });
    expect(hostPorts({ httpPort: 8000, httpsPort: 8443, dashboard: true, dashboardPort: 9000 })).toEqual({
      httpPort: 8000,
      httpsPort: 8443,
      dashboardPort: 9000,
    });
  });

  it("does not mind an invalid dashboard port while the dashboard is off", () => {
    expect(hostPorts({ httpPort: 1, httpsPort: 65535, dashboard: false, dashboardPort: 1 })).toMatchObject({
      httpPort: 1,
      httpsPort: 65535,
    });
  });

  it.each([
    ["httpPort", { httpPort: 65_536, httpsPort: 0, dashboard: false, dashboardPort: 0 }],
    ["httpsPort", { httpPort: 0, httpsPort: -443, dashboard: false, dashboardPort: 0 }],
    ["httpsPort", { httpPort: 0, httpsPort: Number.NaN, dashboard: false, dashboardPort: 0 }],
    ["dashboardPort", { httpPort: 0, httpsPort: 0, dashboard: true, dashboardPort: 80.5 }],
    ["must differ", { httpPort: 443, httpsPort: 0, dashboard: false, dashboardPort: 0 }],
    ["must differ", { httpPort: 0, httpsPort: 0, dashboard: true, dashboardPort: 80 }],
  ])("refuses a bad %s", (field, command) => {
    expect(() => hostPorts(command)).toThrow(expect.objectContaining({ code: "INVALID_ARGUMENT" }));
    expect(() => hostPorts(command)).toThrow(field);
  });
});
