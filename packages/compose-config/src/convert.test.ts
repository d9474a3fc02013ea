/** convertCompose beyond the golden files: its errors, its scoping and the v3 format for stacks. */
import { execFileSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { type ConvertComposeInput, convertCompose, pinComposeImages, scopedName } from "./convert.ts";
import { ComposeFileError, type ComposeIssue } from "./errors.ts";
import { validateComposeDocument } from "./schema.ts";
import { AGENT_ENV, baseInput, readAsCompose, testTenant } from "./testing.ts";

type Doc = Record<string, any>;

function convert(composeFile: string, overrides: Partial<ConvertComposeInput> = {}) {
  return convertCompose(baseInput({ composeFile, ...overrides }));
}

function issuesOf(composeFile: string, overrides: Partial<ConvertComposeInput> = {}): ComposeIssue[] {
  try {
    convert(composeFile, overrides);
  } catch (error) {
    if (error instanceof ComposeFileError) return error.issues;
    throw error;
  }
  throw new Error("expected a ComposeFileError");
}

const twoServices = `
services:
  web:
    image: nginx:1.27
    container_name: web
    volumes: [data:/data]
    networks: [back]
  db:
    image: postgres:16
    networks: [back]
networks:
  back:
    name: backend
volumes:
  data:
    name: data
`;

/** Every Docker name a converted document makes: networks, volumes, containers, upstreams. */
function dockerNames(result: ReturnType<typeof convert>, appName: string, stack: boolean): string[] {
  const document = result.document as Doc;
  const names: string[] = [];
  for (const section of ["networks", "volumes"]) {
    for (const [key, entry] of Object.entries<Doc | null>(document[section] ?? {})) {
      if (entry?.external) continue;
      names.push(entry?.name ?? `${appName}_${key}`);
    }
  }
  for (const [key, service] of Object.entries<Doc>(document.services)) {
    names.push(stack ? `${appName}_${key}` : (service.container_name ?? `${appName}-${key}-1`));
  }
  return [...names, ...Object.values(result.upstreams)];
}

describe("convertCompose", () => {
  it("scopes every name so two stacks with the same file never share one", () => {
    for (const composeType of ["docker-compose", "stack"] as const) {
      const domains = [{ host: "a.example.com", serviceName: "web", port: 80 }];
      const first = convert(twoServices, { composeType, appName: "shop-aaaaaa", domains });
      const second = convert(twoServices, { composeType, appName: "shop-bbbbbb", domains });
      const firstNames = dockerNames(first, "shop-aaaaaa", composeType === "stack");
      const secondNames = dockerNames(second, "shop-bbbbbb", composeType === "stack");
      expect(firstNames.length).toBeGreaterThan(4);
      expect(firstNames.filter((name) => secondNames.includes(name))).toEqual([]);
      for (const name of firstNames) expect(name.startsWith("shop-aaaaaa")).toBe(true);
    }
  });

  it("never shares a name between a stack and one whose appName extends it with '-'", () => {
    // Stack "shop" with service "x-web" and stack "shop-x" with service "web".
    const file = (service: string) => `services:\n  ${service}:\n    image: nginx\n`;
    for (const composeType of ["docker-compose", "stack"] as const) {
      const first = convert(file("x-web"), {
        composeType,
        appName: "shop",
        domains: [{ host: "a", serviceName: "x-web", port: 80 }],
      });
      const second = convert(file("web"), {
        composeType,
        appName: "shop-x",
        domains: [{ host: "b", serviceName: "web", port: 80 }],
      });
      expect(first.upstreams["x-web"]).not.toBe(second.upstreams.web);
      const containers = (result: typeof first) =>
        Object.values<Doc>((result.document as Doc).services).map((service) => service.container_name);
      if (composeType === "docker-compose") {
        expect(containers(first)).toEqual(["shop_x-web"]);
        expect(containers(second)).toEqual(["shop-x_web"]);
      }
    }
  });

  it("leaves Compose's own container names to a scaled service", () => {
    const document = convert(
      "services:\n  a:\n    image: nginx\n    scale: 2\n  b:\n    image: nginx\n    deploy: {replicas: 3}\n",
    ).document as Doc;
    expect(document.services.a.container_name).toBeUndefined();
    expect(document.services.b.container_name).toBeUndefined();
  });

  it("keeps a prefix that is already the stack's, and no appName can reach into another's prefix", () => {
    expect(scopedName("shop", "shop_data")).toBe("shop_data");
    expect(scopedName("shop", "data")).toBe("shop_data");
    // shop-x's names start with "shop-x_", which "shop_" never does: '_' is not allowed in appName.
    expect(issuesOf(twoServices, { appName: "shop_x" })[0]!.path).toBe("appName");
    expect(issuesOf(twoServices, { appName: "Shop" })[0]!.path).toBe("appName");
  });

  it("puts the ownership labels on services, created networks and volumes, never on external ones, and they win over the file's", () => {
    const file = `
services:
  web:
    image: nginx
    labels: {platform.organization: someone-else, keep: me}
    volumes: [mine:/m, theirs:/t]
volumes:
  mine: {}
  theirs: {external: true, name: acme-uploads}
`;
    const labels = { "platform.organization": "org_acme", "platform.service": "compose_1" };
    for (const composeType of ["docker-compose", "stack"] as const) {
      const document = convert(file, { composeType }).document as Doc;
      expect(document.services.web.labels).toEqual({ ...labels, keep: "me" });
      expect(document.volumes.mine.labels).toEqual(labels);
      expect(document.volumes.theirs).toEqual({ external: true, name: "acme-uploads" });
      expect(document.networks.default.labels).toEqual(labels);
      if (composeType === "stack") expect(document.services.web.deploy.labels).toEqual(labels);
    }
  });

  it("joins a service with a domain to the platform network, keeping its networks, and names its upstream", () => {
    const result = convert(twoServices, {
      domains: [
        { host: "a.example.com", serviceName: "db", port: 5432 },
        { host: "b.example.com", serviceName: "db", port: 5432, path: "/x" },
      ],
    });
    const document = result.document as Doc;
    expect(document.services.db.networks).toEqual({
      back: null,
      "platform-network": { aliases: ["shop-k3x9qa_db"] },
    });
    expect(document.services.web.networks).toEqual(["back"]);
    expect(document.networks["platform-network"]).toEqual({ name: "platform-network", external: true });
    expect(result.upstreams).toEqual({ db: "shop-k3x9qa_db" });
    expect(document.networks.default).toBeUndefined();
  });

  it("adds nothing for the platform network when no service has a domain", () => {
    const document = convert(twoServices).document as Doc;
    expect(document.networks["platform-network"]).toBeUndefined();
  });

  it("reuses the file's own declaration of the platform network under another key", () => {
    const file = `
services:
  web:
    image: nginx
    networks: [proxy]
networks:
  proxy:
    external: true
    name: platform-network
`;
    const result = convert(file, {
      domains: [{ host: "a.example.com", serviceName: "web", port: 80 }],
      composeType: "stack",
    });
    const document = result.document as Doc;
    expect(document.services.web.networks).toEqual({ proxy: null });
    expect(Object.keys(document.networks)).toEqual(["proxy"]);
    expect(result.upstreams).toEqual({ web: "shop-k3x9qa_web" });
  });

  it("refuses a network of the file that takes the platform network's name", () => {
    const file =
      "services:\n  web:\n    image: nginx\n    networks: [platform-network]\nnetworks:\n  platform-network: {}\n";
    expect(issuesOf(file, { domains: [{ host: "a.example.com", serviceName: "web", port: 80 }] })).toEqual([
      expect.objectContaining({ path: "networks.platform-network" }),
    ]);
  });

  it("refuses a domain whose service is not in the file, naming the domain", () => {
    expect(
      issuesOf(twoServices, {
        domains: [
          { host: "a.example.com", serviceName: "web", port: 80 },
          { host: "b.example.com", serviceName: "api", port: 80 },
        ],
      }),
    ).toEqual([{ path: "domains.1.serviceName", message: "api is not a service of the Compose file" }]);
    expect(
      issuesOf(twoServices, { domains: [{ host: "a", serviceName: "web", port: 70000 }] })[0]!.path,
    ).toBe("domains.0.port");
  });

  it("refuses a service with a domain whose network_mode keeps it off the platform network", () => {
    const file = "services:\n  web:\n    image: nginx\n    network_mode: none\n";
    expect(
      issuesOf(file, { domains: [{ host: "a.example.com", serviceName: "web", port: 80 }] })[0]!.path,
    ).toBe("services.web.network_mode");
  });

  it("refuses references to volumes and networks the file does not declare", () => {
    const file =
      "services:\n  web:\n    image: nginx\n    volumes: [nowhere:/x, {type: volume, source: gone, target: /y}]\n    networks: [lost]\n";
    expect(issuesOf(file).map((issue) => issue.path)).toEqual([
      "services.web.volumes.0",
      "services.web.volumes.1",
      "services.web.networks.lost",
    ]);
  });

  it("refuses a file without services", () => {
    expect(issuesOf("services: {}\n")).toEqual([
      { path: "services", message: "the file declares no service" },
    ]);
  });

  it("reports an interpolation failure and a value made invalid by interpolation where they are", () => {
    expect(issuesOf("services:\n  web:\n    image: ${IMAGE:?an image is needed}\n")).toEqual([
      { path: "services.web.image", message: "required variable IMAGE is missing: an image is needed" },
    ]);
    expect(
      issuesOf("services:\n  web:\n    image: nginx\n    read_only: ${RO}\n", { env: { RO: "maybe" } }),
    ).toEqual([{ path: "services.web.read_only", message: "must be true or false" }]);
  });

  it("rewrites container_name with the stack's prefix in compose mode and drops it for Swarm", () => {
    expect((convert(twoServices).document as Doc).services.web.container_name).toBe("shop-k3x9qa_web");
    expect(
      (convert(twoServices, { composeType: "stack" }).document as Doc).services.web.container_name,
    ).toBeUndefined();
  });

  it("sets the Compose project name to the stack's when the file names one", () => {
    expect(convert("name: mine\nservices:\n  a:\n    image: nginx\n").document.name).toBe("shop-k3x9qa");
    expect(convert("services:\n  a:\n    image: nginx\n").document.name).toBeUndefined();
    expect(
      convert("name: mine\nservices:\n  a:\n    image: nginx\n", { composeType: "stack" }).document.name,
    ).toBeUndefined();
  });

  it("keeps ../files sources relative to the file's directory, normalized, for the instance organization too", () => {
    const file =
      "services:\n  a:\n    image: nginx\n    volumes: ['./../files/d/../x.conf:/x.conf:ro', './local:/l']\n    env_file: [../files/a.env]\n";
    const document = convert(file).document as Doc;
    expect(document.services.a.volumes).toEqual(["../files/x.conf:/x.conf:ro", "./local:/l"]);
    expect(document.services.a.env_file).toEqual(["../files/a.env"]);
  });

  it("serializes with the yaml library: values that look like YAML stay data", () => {
    const result = convert(
      'services:\n  a:\n    image: nginx\n    environment:\n      A: "yes"\n      B: "22:22"\n      C: ${C}\n',
      {
        env: { C: "x\n  privileged: true" },
      },
    );
    expect(parse(result.yaml)).toEqual(result.document);
    expect(result.yaml).toContain('A: "yes"');
    expect(result.yaml).toContain('B: "22:22"');
    expect((result.document as Doc).services.a.privileged).toBeUndefined();
  });

  it("validates its input", () => {
    expect(issuesOf(twoServices, { filesDirectory: "relative/files" })[0]!.path).toBe("filesDirectory");
    expect(issuesOf(twoServices, { platformNetwork: "bad name" })[0]!.path).toBe("platformNetwork");
    expect(issuesOf(twoServices, { labels: { "bad key": "x" } })[0]!.path).toBe("labels.bad key");
  });
});

describe("convertCompose for stack: the v3 format", () => {
  const stack = (file: string, overrides: Partial<ConvertComposeInput> = {}) =>
    convert(file, { composeType: "stack", ...overrides }).document as Doc;
  const stackIssues = (file: string) => issuesOf(file, { composeType: "stack" });

  it("refuses build with a message that says what to do", () => {
    expect(stackIssues("services:\n  web:\n    build: .\n")).toEqual([
      {
        path: "services.web.build",
        message: expect.stringContaining("docker stack deploy does not build images"),
      },
    ]);
  });

  it.each([
    ["profiles", "profiles: [debug]", "services.web.profiles"],
    ["volumes_from", "volumes_from: [other]", "services.web.volumes_from"],
    [
      "a port bound to one address",
      "ports: [{target: 80, published: 8080, host_ip: 127.0.0.1}]",
      "services.web.ports.0.host_ip",
    ],
    [
      "a published range in long syntax",
      "ports: [{target: 80, published: '8080-8081'}]",
      "services.web.ports.0.published",
    ],
    ["post_start hooks", "post_start: [{command: [echo]}]", "services.web.post_start"],
    [
      "pids limit under deploy",
      "deploy: {resources: {limits: {pids: 10}}}",
      "services.web.deploy.resources.limits.pids",
    ],
    [
      "a volume subpath",
      "volumes: [{type: volume, source: v, target: /v, volume: {subpath: a}}]",
      "services.web.volumes.0.volume.subpath",
    ],
  ])("refuses %s", (_name, line, path) => {
    const file = `services:\n  web:\n    image: nginx\n    ${line}\n  other:\n    image: nginx\nvolumes:\n  v: {}\n`;
    expect(stackIssues(file).map((issue) => issue.path)).toContain(path);
  });

  it("converts what has a v3 form and drops what only advises Compose", () => {
    const document = stack(`
services:
  web:
    image: nginx
    depends_on: {db: {condition: service_healthy, restart: true}}
    restart: on-failure:3
    scale: 3
    mem_limit: 512m
    cpus: 1.5
    mem_reservation: 128m
    pull_policy: always
    platform: linux/amd64
    healthcheck: {test: [CMD, "true"], start_interval: 1s, retries: "3"}
    ports: [{target: "80", published: "8080", name: http, app_protocol: http}]
    networks: {back: {aliases: [w], priority: 10}}
  db:
    image: postgres
networks:
  back: {enable_ipv6: false}
`);
    const web = document.services.web;
    expect(web.depends_on).toEqual(["db"]);
    expect(web.deploy.replicas).toBe(3);
    expect(web.deploy.restart_policy).toEqual({ condition: "on-failure", max_attempts: 3 });
    expect(web.deploy.resources).toEqual({
      limits: { memory: "512m", cpus: "1.5" },
      reservations: { memory: "128m" },
    });
    expect(web.healthcheck).toEqual({ test: ["CMD", "true"], retries: 3 });
    expect(web.ports).toEqual([{ target: 80, published: 8080 }]);
    expect(web.networks).toEqual({ back: { aliases: ["w"] } });
    for (const key of ["restart", "scale", "mem_limit", "cpus", "pull_policy", "platform"])
      expect(web[key]).toBeUndefined();
    expect(document.networks.back.enable_ipv6).toBeUndefined();
    expect(document.version).toBe("3.8");
    expect(validateComposeDocument(document)).toEqual([]);
  });

  it("leaves replicas of the file as they are, above scale", () => {
    expect(
      stack("services:\n  a:\n    image: nginx\n    scale: 2\n    deploy: {replicas: 5}\n").services.a.deploy
        .replicas,
    ).toBe(5);
  });

  it("applies tenant refusals in stack mode as in compose mode", () => {
    const issues = issuesOf("services:\n  a:\n    image: nginx\n    privileged: true\n", {
      composeType: "stack",
      tenant: testTenant(),
    });
    expect(issues.map((issue) => issue.path)).toEqual(["services.a.privileged"]);
  });
});

/** True when the text holds a `$` that is not half of a `$$`: one Compose would interpolate. */
const hasUnescapedDollar = (yaml: string) => yaml.replaceAll("$$", "").includes("$");

describe("the converted file and Compose's own interpolation of it", () => {
  // Compose and docker stack deploy interpolate the file they read with the agent's environment:
  // the converted file must spell every `$` of a value `$$` so that they read the checked value.
  const dollars = `services:
  web:
    image: nginx:1.27
    build:
      context: "$\${HOME}"
    environment:
      FOO: "a$$b"
      HOME_LITERAL: "$\${HOME}"
      FROM_VARIABLE: \${TOKEN}
    labels:
      note: "$$HOME"
`;

  it("writes every $ of a value as $$: Compose reads the value the tenancy checks saw, not the agent's environment", () => {
    const result = convert(dollars, { tenant: testTenant(), env: { TOKEN: "t$ken${HOME}" } });
    const web = (result.document as Doc).services.web;
    // What the checks ran on: a relative build context named `${HOME}` (accepted), not the agent's home.
    expect(web.build.context).toBe("${HOME}");
    expect(web.environment).toEqual({ FOO: "a$b", HOME_LITERAL: "${HOME}", FROM_VARIABLE: "t$ken${HOME}" });
    expect(web.labels.note).toBe("$HOME");
    expect(parse(result.yaml).services.web.build.context).toBe("$${HOME}");
    expect(parse(result.yaml).services.web.environment.FOO).toBe("a$$b");
    expect(hasUnescapedDollar(result.yaml)).toBe(false);
    expect(readAsCompose(result.yaml)).toEqual(result.document);
  });

  it("carries $${X:-platform/...} as that literal, an image name no registry serves, never platform/...", () => {
    const file = 'services:\n  web:\n    image: "$${X:-platform/foo:1}"\n    environment: {FOO: "a$$b"}\n';
    for (const composeType of ["docker-compose", "stack"] as const) {
      const result = convert(file, { composeType, tenant: testTenant() });
      expect((result.document as Doc).services.web.image).toBe("${X:-platform/foo:1}");
      expect(parse(result.yaml).services.web.image).toBe("$${X:-platform/foo:1}");
      expect((readAsCompose(result.yaml) as Doc).services.web.image).toBe("${X:-platform/foo:1}");
    }
    // One interpolation is the platform's: the default is what the checks see, and they refuse it.
    expect(
      issuesOf('services:\n  web:\n    image: "${X:-platform/foo:1}"\n', { tenant: testTenant() }).map(
        (issue) => issue.path,
      ),
    ).toEqual(["services.web.image"]);
  });

  it("is read by docker stack deploy's own loader, with the agent's environment, as the document's values", () => {
    const result = convert(
      'services:\n  web:\n    image: "$${X:-platform/foo:1}"\n    environment:\n      FOO: "a$$b"\n      HOME_LITERAL: "$${HOME}"\n      "KEY_$${HOME}": kept\n',
      { composeType: "stack", tenant: testTenant() },
    );
    const stdout = execFileSync("docker", ["stack", "config", "-c", "-"], {
      input: result.yaml,
      env: { PATH: process.env.PATH, ...AGENT_ENV },
      encoding: "utf8",
    });
    const read = parse(stdout).services.web;
    expect(read.image).toBe("${X:-platform/foo:1}");
    // Keys are not interpolated (by Compose, docker stack deploy or the platform): read as written.
    expect(read.environment).toEqual({
      FOO: "a$b",
      HOME_LITERAL: "${HOME}",
      "KEY_$${HOME}": "kept",
    });
    expect(read.environment).toEqual((result.document as Doc).services.web.environment);
  });

  it("keeps the $ of a rollback's file as deployed when its images are pinned", () => {
    const result = convert(dollars, { env: { TOKEN: "t$ken" } });
    const pinned = pinComposeImages(result.document, { web: "platform-rollback/shop-k3x9qa-web:d1" });
    expect(hasUnescapedDollar(pinned)).toBe(false);
    const read = readAsCompose(pinned) as Doc;
    expect(read.services.web.image).toBe("platform-rollback/shop-k3x9qa-web:d1");
    expect(read.services.web.build).toBeUndefined();
    expect(read.services.web.environment).toEqual((result.document as Doc).services.web.environment);
    expect(read.services.web.labels).toEqual((result.document as Doc).services.web.labels);
  });
});
