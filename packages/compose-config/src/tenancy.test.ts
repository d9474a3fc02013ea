/**
 * The tenant refusals (issue 23, item 6): each one names the service (or entry) and the key; the
 * instance organization (tenant null) is not refused; interpolation happens before the checks.
 */
import { describe, expect, it } from "vitest";
import { type ConvertComposeInput, convertCompose } from "./convert.ts";
import { ComposeFileError, type ComposeIssue } from "./errors.ts";
import { baseInput, FILES_DIRECTORY, testTenant } from "./testing.ts";

function refusals(composeFile: string, overrides: Partial<ConvertComposeInput> = {}): ComposeIssue[] {
  try {
    convertCompose(baseInput({ composeFile, tenant: testTenant(), ...overrides }));
  } catch (error) {
    if (error instanceof ComposeFileError) return error.issues;
    throw error;
  }
  return [];
}

/** A one-service file whose service `app` carries the given YAML lines. */
function app(lines: string, rest = ""): string {
  const body = lines
    .trim()
    .split("\n")
    .map((line) => `    ${line}`)
    .join("\n");
  return `services:\n  app:\n    image: alpine:3.20\n${body}\n  other:\n    image: alpine:3.20\n${rest}`;
}

function expectRefused(
  composeFile: string,
  path: string,
  message?: RegExp,
  overrides: Partial<ConvertComposeInput> = {},
) {
  const issues = refusals(composeFile, overrides);
  const issue = issues.find((candidate) => candidate.path === path);
  expect(issue, `no refusal at ${path}; got ${JSON.stringify(issues)}`).toBeDefined();
  if (message) expect(issue!.message).toMatch(message);
  // The instance organization may do it (unless the file is wrong for other reasons).
  return issue!;
}

function expectAllowed(composeFile: string, overrides: Partial<ConvertComposeInput> = {}) {
  expect(refusals(composeFile, overrides)).toEqual([]);
}

describe("tenant refusals", () => {
  const cases: [string, string, string, RegExp][] = [
    ["privileged", "privileged: true", "services.app.privileged", /privileged is refused/],
    ["network_mode host", "network_mode: host", "services.app.network_mode", /host's namespace/],
    ["network_mode bridge", "network_mode: bridge", "services.app.network_mode", /not a namespace/],
    [
      "network_mode container",
      "network_mode: container:other-stack-web-1",
      "services.app.network_mode",
      /container outside/,
    ],
    [
      "network_mode of a service not in the file",
      "network_mode: service:elsewhere",
      "services.app.network_mode",
      /not in this file/,
    ],
    ["pid host", "pid: host", "services.app.pid", /host's namespace/],
    ["pid of another container", "pid: container:abc", "services.app.pid", /container outside/],
    ["ipc host", "ipc: host", "services.app.ipc", /host's namespace/],
    ["userns_mode host", "userns_mode: host", "services.app.userns_mode", /host's namespace/],
    ["uts host", "uts: host", "services.app.uts", /host's namespace/],
    ["cgroup host", "cgroup: host", "services.app.cgroup", /host's namespace/],
    ["cap_add", "cap_add: [NET_ADMIN]", "services.app.cap_add", /capabilities/],
    ["devices", "devices: ['/dev/kvm:/dev/kvm']", "services.app.devices", /devices/],
    [
      "device_cgroup_rules",
      "device_cgroup_rules: ['c 1:3 mr']",
      "services.app.device_cgroup_rules",
      /devices/,
    ],
    ["gpus", "gpus: all", "services.app.gpus", /GPUs/],
    ["cgroup_parent", "cgroup_parent: /system.slice", "services.app.cgroup_parent", /cgroup/],
    ["use_api_socket", "use_api_socket: true", "services.app.use_api_socket", /Docker API/],
    [
      "external_links",
      "external_links: ['other_db_1:db']",
      "services.app.external_links",
      /not part of this stack/,
    ],
    [
      "seccomp unconfined",
      "security_opt: ['seccomp:unconfined']",
      "services.app.security_opt.0",
      /security_opt "seccomp:unconfined"/,
    ],
    [
      "apparmor unconfined",
      "security_opt: ['apparmor=unconfined']",
      "services.app.security_opt.0",
      /apparmor=unconfined/,
    ],
    ["label disable", "security_opt: ['label=disable']", "services.app.security_opt.0", /label=disable/],
    [
      "a seccomp profile file of the host",
      "security_opt: ['seccomp=/etc/profile.json']",
      "services.app.security_opt.0",
      /refused/,
    ],
    [
      "systempaths unconfined",
      "security_opt: ['systempaths=unconfined']",
      "services.app.security_opt.0",
      /refused/,
    ],
    ["another runtime", "runtime: runsc-unconfined", "services.app.runtime", /runtime/],
    [
      "a remote logging driver",
      "logging: {driver: syslog, options: {syslog-address: 'tcp://10.0.0.1:514'}}",
      "services.app.logging.driver",
      /logging driver syslog/,
    ],
    [
      "deploy devices",
      "deploy: {resources: {reservations: {devices: [{capabilities: [gpu]}]}}}",
      "services.app.deploy.resources.reservations.devices",
      /devices/,
    ],
    [
      "volumes_from a container",
      "volumes_from: ['container:someone-else']",
      "services.app.volumes_from.0",
      /only services of this file/,
    ],
    [
      "extends from another file",
      "extends: {file: /etc/compose.yml, service: x}",
      "services.app.extends.file",
      /another file/,
    ],
    [
      "a build context on the host",
      "build: {context: /}",
      "services.app.build.context",
      /build context \/ is refused/,
    ],
    ["a build context leaving the sources", "build: ../../..", "services.app.build.context", /is refused/],
    [
      "a build forwarding the SSH agent",
      "build: {context: ., ssh: [default]}",
      "services.app.build.ssh",
      /build.ssh/,
    ],
    [
      "a build on the host network",
      "build: {context: ., network: host}",
      "services.app.build.network",
      /build.network host/,
    ],
    ["an env_file of the host", "env_file: /etc/environment", "services.app.env_file", /host path/],
    [
      "an env_file list item leaving files",
      "env_file: ['../files/a.env', '../files/../../../root/.env']",
      "services.app.env_file.1",
      /leaves the stack's files directory/,
    ],
    [
      "a placement constraint naming a node",
      "deploy: {placement: {constraints: ['node.platform.os == linux', 'node.hostname == manager-1']}}",
      "services.app.deploy.placement.constraints.1",
      /placement constraint "node.hostname == manager-1" is refused.*picks Swarm nodes/,
    ],
    [
      "a placement constraint on node labels",
      "deploy: {placement: {constraints: ['node.labels.tenant==other']}}",
      "services.app.deploy.placement.constraints.0",
      /picks Swarm nodes/,
    ],
  ];
  it.each(cases)("%s", (_name, lines, path, message) => {
    expectRefused(app(lines), path, message);
    // The instance organization's file is not refused for it.
    expect(refusals(app(lines), { tenant: null }).find((issue) => issue.path === path)).toBeUndefined();
  });

  it("refuses an image the platform built or keeps for another service's rollbacks (platform/, platform-rollback/)", () => {
    for (const image of [
      "platform-rollback/shop-web:d1",
      "docker.io/platform-rollback/shop-web:d1",
      "platform/shop-web:d1",
      "docker.io/library/platform/shop-web:d1",
    ]) {
      expectRefused(`services:\n  app:\n    image: ${image}\n`, "services.app.image", /rollbacks/);
    }
    expectAllowed("services:\n  app:\n    image: platform-test/busybox:latest\n");
  });

  it("allows the harmless forms of the same keys", () => {
    expectAllowed(
      app(`
network_mode: service:other
ipc: shareable
pid: service:other
security_opt: ['no-new-privileges:true', 'no-new-privileges']
cap_drop: [ALL]
privileged: false
logging: {driver: json-file, options: {max-size: 10m}}
sysctls: {net.core.somaxconn: 1024}
build: {context: ./web, dockerfile: docker/Dockerfile}
env_file: ../files/app.env
deploy: {placement: {constraints: ['node.platform.os == linux', 'node.platform.arch!=s390x']}}
runtime: runc`),
    );
  });

  it("checks values after interpolation, so a variable cannot smuggle a refused value", () => {
    expectRefused(app("privileged: ${PRIV}"), "services.app.privileged", undefined, {
      env: { PRIV: "true" },
    });
    expectRefused(app("network_mode: ${MODE}"), "services.app.network_mode", /host/, {
      env: { MODE: "host" },
    });
    expectRefused(app("volumes: ['${HOST_PATH}:/data']"), "services.app.volumes.0", /host path \/etc/, {
      env: { HOST_PATH: "/etc" },
    });
    expectRefused(
      app("volumes: [{type: bind, source: '${SOCK:-/var/run/docker.sock}', target: /sock}]"),
      "services.app.volumes.0.source",
      /Docker socket/,
    );
    expectAllowed(app("privileged: ${PRIV}"), { env: { PRIV: "false" } });
  });

  describe("bind mounts", () => {
    it.each([
      [
        "the Docker socket, short syntax",
        "volumes: ['/var/run/docker.sock:/var/run/docker.sock']",
        "services.app.volumes.0",
        /Docker socket/,
      ],
      [
        "the Docker socket, long syntax",
        "volumes:\n  - type: bind\n    source: /var/run/docker.sock\n    target: /var/run/docker.sock",
        "services.app.volumes.0.source",
        /Docker socket/,
      ],
      ["the host root", "volumes: ['/:/host:ro']", "services.app.volumes.0", /host path \//],
      ["a relative path", "volumes: ['./data:/data']", "services.app.volumes.0", /host path .\/data/],
      ["a home path", "volumes: ['~/.ssh:/root/.ssh']", "services.app.volumes.0", /host path ~\/.ssh/],
      [
        "../files escaping with ..",
        "volumes: ['../files/../../etc:/etc-host']",
        "services.app.volumes.0",
        /leaves the stack's files directory/,
      ],
      [
        "../files escaping in long syntax",
        "volumes:\n  - type: bind\n    source: ../files/a/../../../../../etc/shadow\n    target: /s",
        "services.app.volumes.0.source",
        /leaves/,
      ],
      ["../filesX, a sibling", "volumes: ['../filesX/a:/a']", "services.app.volumes.0", /host path/],
      [
        "an absolute path beside the files directory",
        `volumes: ['${FILES_DIRECTORY}-other/a:/a']`,
        "services.app.volumes.0",
        /host path/,
      ],
      [
        "a long-syntax bind without a source",
        "volumes:\n  - type: bind\n    target: /a",
        "services.app.volumes.0.source",
        /host path/,
      ],
      [
        "an npipe mount",
        "volumes:\n  - type: npipe\n    source: //./pipe/docker_engine\n    target: //./pipe/docker_engine",
        "services.app.volumes.0.type",
        /npipe/,
      ],
    ])("refuses %s", (_name, lines, path, message) => {
      expectRefused(app(lines), path, message);
    });

    it("allows sources under ../files that stay inside, named volumes, tmpfs and anonymous volumes", () => {
      expectAllowed(
        app(
          `volumes:
  - ../files/config.yml:/etc/config.yml:ro
  - ./../files/certs:/certs
  - ../files:/all-files
  - ../files/a/../b:/b
  - ${FILES_DIRECTORY}/c:/c
  - data:/data
  - /anonymous
  - type: tmpfs
    target: /tmp
  - type: volume
    source: data
    target: /more`,
          "volumes:\n  data: {}\n",
        ),
      );
    });
  });

  describe("networks and volumes", () => {
    it("refuses an external network the organization does not own, under every way of naming it", () => {
      expectRefused(
        app("networks: [theirs]", "networks:\n  theirs:\n    external: true\n"),
        "networks.theirs.external",
        /external network theirs/,
      );
      expectRefused(
        app("networks: [n]", "networks:\n  n:\n    external: true\n    name: other-org-net\n"),
        "networks.n.external",
        /other-org-net/,
      );
      expectRefused(
        app("networks: [n]", "networks:\n  n:\n    external:\n      name: other-org-net\n"),
        "networks.n.external",
        /other-org-net/,
      );
      expectRefused(
        app("networks: [n]", "networks:\n  n:\n    external: ${EXT}\n    name: other-org-net\n"),
        "networks.n.external",
        /other-org-net/,
        {
          env: { EXT: "true" },
        },
      );
    });

    it("allows an owned external network and the platform network", () => {
      expectAllowed(
        app(
          "networks: [mine, platform]",
          "networks:\n  mine:\n    external: true\n    name: acme-net\n  platform:\n    external: true\n    name: platform-network\n",
        ),
      );
    });

    it("refuses an external volume the organization does not own, and allows its own", () => {
      expectRefused(
        app("volumes: ['v:/v']", "volumes:\n  v:\n    external: true\n    name: other-org-data\n"),
        "volumes.v.external",
        /other-org-data/,
      );
      expectAllowed(app("volumes: ['v:/v']", "volumes:\n  v:\n    external: true\n    name: acme-uploads\n"));
    });

    it("refuses a local volume with options (a bind mount in disguise) and other volume drivers", () => {
      expectRefused(
        app("volumes: ['v:/v']", "volumes:\n  v:\n    driver_opts: {type: none, o: bind, device: /etc}\n"),
        "volumes.v.driver_opts",
        /host path/,
      );
      expectRefused(
        app("volumes: ['v:/v']", "volumes:\n  v:\n    driver: some-plugin\n"),
        "volumes.v.driver",
        /local only/,
      );
    });

    it("refuses network drivers that reach the host's networks, driver options and address management", () => {
      expectRefused(
        app("networks: [n]", "networks:\n  n:\n    driver: macvlan\n"),
        "networks.n.driver",
        /macvlan/,
      );
      expectRefused(
        app("networks: [n]", "networks:\n  n:\n    driver_opts: {parent: eth0}\n"),
        "networks.n.driver_opts",
      );
      expectRefused(
        app("networks: [n]", "networks:\n  n:\n    ipam: {config: [{subnet: 10.0.0.0/8}]}\n"),
        "networks.n.ipam",
        /subnets/,
      );
      expectAllowed(app("networks: [n]", "networks:\n  n:\n    driver: overlay\n    attachable: true\n"));
    });
  });

  describe("secrets and configs", () => {
    it("refuses files of the host, external ones and the deploying process's environment", () => {
      const file = (section: string, body: string) =>
        `services:\n  app:\n    image: alpine\n    ${section}: [s]\n${section}:\n  s:\n${body}`;
      expectRefused(file("secrets", "    file: /etc/shadow\n"), "secrets.s.file", /host path/);
      expectRefused(file("configs", "    file: ../files/../../../etc/passwd\n"), "configs.s.file", /leaves/);
      expectRefused(file("secrets", "    external: true\n"), "secrets.s.external", /external secrets/);
      expectRefused(
        file("secrets", "    environment: PLATFORM_SECRET_KEY\n"),
        "secrets.s.environment",
        /environment/,
      );
      expectAllowed(file("secrets", "    file: ../files/s.txt\n"));
    });
  });

  describe("published ports", () => {
    it("asks the port rules about every published port, in every syntax", () => {
      const tenant = testTenant();
      expectAllowed(
        app(`ports:
  - "8080:80"
  - "127.0.0.1:8081:81"
  - "[::1]:8082:82/udp"
  - "9000-9002:9000-9002"
  - "80"
  - 3000
  - target: 443
    published: 8444
  - target: 53
    published: "5353"
    protocol: udp`),
        { tenant },
      );
      expect(tenant.askedPorts).toEqual([
        "8080/tcp",
        "8081/tcp",
        "8082/udp",
        "9000/tcp",
        "9001/tcp",
        "9002/tcp",
        "8444/tcp",
        "5353/udp",
      ]);
    });

    it.each([
      [
        "short syntax",
        "ports: ['22:22']",
        /published port 22\/tcp is refused for this organization: port 22 is reserved/,
      ],
      ["with a host address", "ports: ['0.0.0.0:8443:443']", /8443\/tcp .*taken/],
      ["in a range", "ports: ['8440-8445:8440-8445']", /8443\/tcp/],
      ["long syntax", "ports: [{target: 443, published: 8443}]", /8443\/tcp/],
      ["long syntax, a string range", "ports: [{target: 22, published: '20-30'}]", /22\/tcp/],
      ["interpolated", "ports: ['${SSH_PORT}:22']", /22\/tcp/],
    ])("refuses a reserved or taken port: %s", (_name, lines, message) => {
      expectRefused(app(lines), "services.app.ports.0", message, { env: { SSH_PORT: "22" } });
    });

    it("refuses a range longer than the limit and protocols other than tcp and udp", () => {
      expectRefused(app("ports: ['10000-20000:10000-20000']"), "services.app.ports.0", /range of 10001/);
      expectRefused(app("ports: ['9000:9000/sctp']"), "services.app.ports.0", /sctp/);
    });
  });

  it("reports every refusal of a file at once", () => {
    const issues = refusals(
      app("privileged: true\ncap_add: [SYS_ADMIN]\nvolumes: ['/:/host']\nports: ['22:22']"),
    );
    expect(issues.map((issue) => issue.path).sort()).toEqual([
      "services.app.cap_add",
      "services.app.ports.0",
      "services.app.privileged",
      "services.app.volumes.0",
    ]);
  });

  it("refuses aliases and fixed addresses on the platform network that are not the stack's own", () => {
    const rest = "networks:\n  proxy:\n    external: true\n    name: platform-network\n";
    expectRefused(
      app("networks: {proxy: {aliases: [victim-app, victim_web]}}", rest),
      "services.app.networks.proxy.aliases.0",
      /alias victim-app on the platform network is refused/,
    );
    expectRefused(
      app("networks: {proxy: {aliases: [victim-app, victim_web]}}", rest),
      "services.app.networks.proxy.aliases.1",
    );
    expectRefused(
      app("networks: {proxy: {ipv4_address: 10.0.1.5}}", rest),
      "services.app.networks.proxy.ipv4_address",
    );
    expectAllowed(app("networks: {proxy: {aliases: [shop-k3x9qa_api]}}", rest));
    // On the stack's own networks, any alias.
    expectAllowed(app("networks: {own: {aliases: [victim-app]}}", "networks:\n  own: {}\n"));
  });

  it("refuses include, which reads other files of the host", () => {
    expectRefused(
      "include: [/etc/compose.yml]\nservices:\n  a:\n    image: alpine\n",
      "include",
      /other files/,
    );
  });
});
