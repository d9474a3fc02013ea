import { describe, expect, it } from "vitest";
import type { Application, Port } from "../db/schema.ts";
import { imageNameFor } from "../deployments/image-names.ts";
import { applicationEnv, ENV_FILE_PATH, splitCommandLine } from "../deployments/service-spec.ts";
import { buildServiceSpec } from "./service-spec.ts";
import { memoryBytes, nanoCpus } from "./validation.ts";

// biome-ignore lint/suspicious/noTemplateCurlyInString: Dokploy's reference syntax, not a template
const PROJECT_REFERENCE = "${{project.DB_HOST}}";
// biome-ignore lint/suspicious/noTemplateCurlyInString: Dokploy's reference syntax, not a template
const ENVIRONMENT_REFERENCE = "${{environment.STAGE}}";

describe("applicationEnv", () => {
  it("merges project -> environment -> application (later wins) and resolves references", () => {
    const env = applicationEnv(
      { env: `URL=postgres://${PROJECT_REFERENCE}/${ENVIRONMENT_REFERENCE}\nSHARED=app` },
      "DB_HOST=db.internal\nSHARED=project",
      "STAGE=production\nSHARED=environment",
    );
    expect(env).toEqual([
      { key: "DB_HOST", value: "db.internal" },
      { key: "SHARED", value: "app" },
      { key: "STAGE", value: "production" },
      { key: "URL", value: "postgres://db.internal/production" },
    ]);
  });

  it("fails on an unknown reference, naming the reference and never a value", () => {
    const env = `SECRET=hunter2-${"$"}{{project.MISSING}}`;
    expect(() => applicationEnv({ env }, "", "")).toThrow(/SECRET refers to \$\{\{project\.MISSING\}\}/);
    try {
      applicationEnv({ env }, "", "");
    } catch (error) {
      expect((error as Error).message).not.toContain("hunter2");
    }
  });
});

describe("splitCommandLine", () => {
  it.each([
    ["node server.js", ["node", "server.js"]],
    ["  sh  -c 'echo $HOME; ls'  ", ["sh", "-c", "echo $HOME; ls"]],
    ['echo "a \\"quoted\\" word" b\\ c', ["echo", 'a "quoted" word', "b c"]],
    ["''", [""]],
    ["", []],
  ])("%j -> %j", (line, argv) => {
    expect(splitCommandLine(line)).toEqual(argv);
  });

  it("refuses an unterminated quote", () => {
    expect(() => splitCommandLine("echo 'oops")).toThrow(/unterminated/);
  });
});

describe("sizes", () => {
  it.each([
    ["512m", 512 * 1024 ** 2],
    ["2g", 2 * 1024 ** 3],
    ["1.5g", 1.5 * 1024 ** 3],
    ["64mb", 64 * 1024 ** 2],
    ["268435456", 268435456],
    ["100k", 102400],
  ])("memoryBytes(%s) = %d", (text, bytes) => {
    expect(memoryBytes(text)).toBe(bytes);
  });

  it("nanoCpus", () => {
    expect(nanoCpus("0.5")).toBe(500_000_000);
    expect(nanoCpus("2")).toBe(2_000_000_000);
  });
});

describe("imageNameFor", () => {
  it("lowercases the appName into a Docker repository and keeps the deployment id as tag", () => {
    expect(imageNameFor("My_App.v2", "abcDEF123")).toBe("platform/my-app-v2:abcDEF123");
    expect(imageNameFor("--", "-starts-with-dash")).toBe("platform/app:d-starts-with-dash");
  });
});

describe("buildServiceSpec", () => {
  const app = {
    applicationId: "app-1",
    appName: "web-1",
    replicas: 2,
    command: "node 'server file.js'",
    args: ["--port", "3000"],
    memoryLimit: "512m",
    memoryReservation: "256m",
    cpuLimit: "1.5",
    cpuReservation: "0.25",
    healthCheckSwarm: { Test: ["CMD", "true"], Interval: 1e9, Retries: 3 },
    restartPolicySwarm: { Condition: "on-failure", MaxAttempts: 5 },
    createEnvFile: true,
  } as unknown as Application;
  const ports = [
    { publishedPort: 8080, targetPort: 3000, protocol: "tcp", publishMode: "host" },
  ] as unknown as Port[];

  it("maps every setting to the agent's ServiceSpec", () => {
    const spec = buildServiceSpec({
      app,
      image: "platform/web-1:d1",
      env: [{ key: "A", value: "b=c" }],
      ports,
    });
    expect(spec).toEqual({
      name: "web-1",
      image: "platform/web-1:d1",
      env: ["A=b=c"],
      replicas: 2,
      labels: { "platform.applicationId": "app-1", "platform.appName": "web-1" },
      networks: ["platform-network"],
      ports: [{ publishedPort: 8080, targetPort: 3000, protocol: "tcp", publishMode: "host" }],
      command: ["node", "server file.js"],
      args: ["--port", "3000"],
      memoryLimitBytes: 512 * 1024 ** 2,
      memoryReservationBytes: 256 * 1024 ** 2,
      nanoCpusLimit: 1_500_000_000,
      nanoCpusReservation: 250_000_000,
      healthCheck: {
        test: ["CMD", "true"],
        intervalNs: 1e9,
        timeoutNs: undefined,
        startPeriodNs: undefined,
        retries: 3,
      },
      restartPolicy: { condition: "on-failure", delayNs: undefined, maxAttempts: 5, windowNs: undefined },
      files: { [ENV_FILE_PATH]: "A=b=c\n" },
    });
  });

  it("adds labelsSwarm under the platform's labels and takes modeSwarm's replicated count", () => {
    const spec = buildServiceSpec({
      app: {
        ...app,
        labelsSwarm: { team: "shop", "platform.appName": "forged" },
        modeSwarm: { Replicated: { Replicas: 5 } },
      } as unknown as Application,
      image: "x",
      env: [],
      ports: [],
    });
    expect(spec.labels).toEqual({
      team: "shop",
      "platform.applicationId": "app-1",
      "platform.appName": "web-1",
    });
    expect(spec.replicas).toBe(5);
  });

  it("passes the stored Swarm settings to the agent as swarmSettingsJson", () => {
    const spec = buildServiceSpec({
      app: {
        ...app,
        placementSwarm: { Constraints: ["node.role==worker"] },
        updateConfigSwarm: { Parallelism: 2, Order: "stop-first" },
        rollbackConfigSwarm: null,
        stopGracePeriodSwarm: 5e9,
        ulimitsSwarm: [{ Name: "nofile", Soft: 1, Hard: 2 }],
        endpointSpecSwarm: { Mode: "dnsrr" },
      } as unknown as Application,
      image: "x",
      env: [],
      ports: [],
    });
    expect(JSON.parse(spec.swarmSettingsJson!)).toEqual({
      Placement: { Constraints: ["node.role==worker"] },
      UpdateConfig: { Parallelism: 2, Order: "stop-first" },
      StopGracePeriod: 5e9,
      Ulimits: [{ Name: "nofile", Soft: 1, Hard: 2 }],
      EndpointMode: "dnsrr",
    });
    expect(buildServiceSpec({ app, image: "x", env: [], ports: [] }).swarmSettingsJson).toBeUndefined();
  });

  it("leaves out what is not set", () => {
    const bare = {
      ...app,
      command: null,
      args: null,
      memoryLimit: null,
      memoryReservation: null,
      cpuLimit: null,
      cpuReservation: null,
      healthCheckSwarm: null,
      restartPolicySwarm: null,
      createEnvFile: false,
    } as unknown as Application;
    const spec = buildServiceSpec({ app: bare, image: "x", env: [], ports: [] });
    expect(Object.keys(spec).sort()).toEqual([
      "env",
      "image",
      "labels",
      "name",
      "networks",
      "ports",
      "replicas",
    ]);
  });

  it("puts Global and job modes, networks, aliases and endpoint ports on the spec", () => {
    const spec = buildServiceSpec({
      app: {
        ...app,
        modeSwarm: { Global: {} },
        networkSwarm: [{ Target: "shop-net", Aliases: ["api"] }],
        networkIds: ["net-1", "net-2"],
        endpointSpecSwarm: { Ports: [{ TargetPort: 80, PublishedPort: 18080, PublishMode: "host" }] },
      } as unknown as Application,
      image: "x",
      env: [],
      ports,
      // The engine's names of networkIds (the pipeline looks them up).
      networkNames: ["shop-net", "other-net"],
    });
    expect(spec.networks).toEqual(["platform-network", "shop-net", "other-net"]);
    expect(spec.ports).toEqual([
      { publishedPort: 8080, targetPort: 3000, protocol: "tcp", publishMode: "host" },
      { publishedPort: 18080, targetPort: 80, protocol: "tcp", publishMode: "host" },
    ]);
    expect(JSON.parse(spec.swarmSettingsJson!)).toMatchObject({
      Mode: { Global: {} },
      NetworkAliases: { "shop-net": ["api"] },
    });
    const job = buildServiceSpec({
      app: { ...app, modeSwarm: { ReplicatedJob: { TotalCompletions: 3 } } } as unknown as Application,
      image: "x",
      env: [],
      ports: [],
    });
    expect(JSON.parse(job.swarmSettingsJson!).Mode).toEqual({ ReplicatedJob: { TotalCompletions: 3 } });
  });

  it("leaves the platform network when detachDokployNetwork is set", () => {
    const spec = buildServiceSpec({
      app: { ...app, detachDokployNetwork: true, networkIds: ["net-1"] } as unknown as Application,
      image: "x",
      env: [],
      ports: [],
      networkNames: ["shop-net"],
    });
    expect(spec.networks).toEqual(["shop-net"]);
  });

  it("carries the service's mounts, never changing its name", () => {
    const mounts = [
      { type: "volume" as const, source: "shop-data", target: "/data" },
      { type: "file" as const, source: "conf/app.conf", target: "/etc/app.conf", content: "a=1" },
    ];
    const spec = buildServiceSpec({ app, image: "x", env: [], ports: [], mounts });
    expect(spec.mounts).toEqual(mounts);
    expect(spec.name).toBe("web-1");
  });
});
