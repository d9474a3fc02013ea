/**
 * The tenant refusals (issue 23, item 6): each one names the service (or entry) and the key; the
 * instance organization (tenant null) is not refused; interpolation happens before the checks.
 */
import { describe, expect, it } from "vitest";
import { type ConvertComposeInput, convertCompose } from "./convert.ts";
import { ComposeFileError, type ComposeIssue, IssueList } from "./errors.ts";
import { checkTenancy } from "./tenancy.ts";
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
    tmpfs: {size: 64m}
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

/**
 * Issue 37: the keys the refusal list missed (lifecycle hooks, provider services, images by ID and
 * image mounts, resource abuse, inline Dockerfiles) and the allowlist that refuses any key no rule
 * classifies.
 */
describe("the tenant allowlist (issue 37)", () => {
  const digest = `sha256:${"ab".repeat(32)}`;
  const cases: [string, string, string, RegExp][] = [
    [
      "a post_start hook",
      "post_start: [{command: id, privileged: true}]",
      "services.app.post_start",
      /post_start is refused/,
    ],
    [
      "a pre_stop hook",
      "pre_stop: [{command: id, user: root}]",
      "services.app.pre_stop",
      /pre_stop is refused/,
    ],
    [
      "a provider service",
      "provider: {type: model, options: {model: x}}",
      "services.app.provider",
      /provider is refused.*host/,
    ],
    ["an image by full ID", `image: ${digest}`, "services.app.image", /image ID is refused/],
    ["an image by a bare 12-digit ID", "image: 6963fc32313f", "services.app.image", /image ID/],
    ["an image by a short ID prefix", "image: '6963'", "services.app.image", /image ID/],
    [
      "an image mount of a rollback image",
      "volumes: [{type: image, source: platform-rollback/shop-web:d1, target: /x}]",
      "services.app.volumes.0.source",
      /rollbacks/,
    ],
    [
      "an image mount by ID",
      `volumes: [{type: image, source: '${digest}', target: /x}]`,
      "services.app.volumes.0.source",
      /image ID/,
    ],
    [
      "a build cache from a platform image",
      "build: {context: ., cache_from: [platform/shop-web:d1]}",
      "services.app.build.cache_from.0",
      /rollbacks/,
    ],
    [
      "a build cache from a host path",
      "build: {context: ., cache_from: ['type=local,src=/var/lib']}",
      "services.app.build.cache_from.0",
      /cache_from type=local/,
    ],
    [
      "a build cache written out",
      "build: {context: ., cache_to: ['type=local,dest=/tmp/x']}",
      "services.app.build.cache_to",
      /cache_to is refused/,
    ],
    [
      "an additional context of a rollback image",
      "build: {context: ., additional_contexts: {base: 'docker-image://platform-rollback/x:1'}}",
      "services.app.build.additional_contexts.base",
      /rollbacks/,
    ],
    [
      "an additional context by ID, list form",
      `build: {context: ., additional_contexts: ['base=docker-image://${digest}']}`,
      "services.app.build.additional_contexts.0",
      /image ID/,
    ],
    [
      "an additional context on the host",
      "build: {context: ., additional_contexts: {etc: /etc}}",
      "services.app.build.additional_contexts.etc",
      /additional context \/etc is refused/,
    ],
    [
      "a build tagging a platform image",
      "build: {context: ., tags: ['platform-rollback/victim:1']}",
      "services.app.build.tags.0",
      /rollbacks/,
    ],
    [
      "an inline Dockerfile FROM an ID",
      `build: {context: ., dockerfile_inline: "FROM ${digest}\\n"}`,
      "services.app.build.dockerfile_inline",
      /line 1: FROM sha256:.*image ID/,
    ],
    [
      "an inline Dockerfile copying from a rollback image",
      'build: {context: ., dockerfile_inline: "FROM alpine:3.20\\nCOPY --from=platform-rollback/x:1 /app /app\\n"}',
      "services.app.build.dockerfile_inline",
      /line 2: COPY --from platform-rollback/,
    ],
    [
      "an inline Dockerfile copying a parent path",
      'build: {context: ., dockerfile_inline: "FROM alpine:3.20\\nCOPY ../secrets /s\\n"}',
      "services.app.build.dockerfile_inline",
      /COPY \.\.\/secrets: a path outside the build context/,
    ],
    [
      "an inline Dockerfile copying an absolute path",
      'build: {context: ., dockerfile_inline: "FROM alpine:3.20\\nADD /etc/shadow /s\\n"}',
      "services.app.build.dockerfile_inline",
      /ADD \/etc\/shadow/,
    ],
    [
      "an inline Dockerfile adding a URL",
      'build: {context: ., dockerfile_inline: "FROM alpine:3.20\\nADD http://127.0.0.1:2375/info /i\\n"}',
      "services.app.build.dockerfile_inline",
      /engine host's own network/,
    ],
    [
      "an inline Dockerfile mounting an image by ID",
      `build: {context: ., dockerfile_inline: "FROM alpine:3.20\\nRUN --mount=type=bind,from=${digest},target=/m cat /m\\n"}`,
      "services.app.build.dockerfile_inline",
      /RUN --mount from/,
    ],
    [
      "an inline Dockerfile FROM a variable",
      'build: {context: ., dockerfile_inline: "ARG BASE\\nFROM $${BASE}\\n"}',
      "services.app.build.dockerfile_inline",
      /variable/,
    ],
    ["a negative oom_score_adj", "oom_score_adj: -500", "services.app.oom_score_adj", /below 0/],
    [
      "oom_kill_disable",
      "oom_kill_disable: true",
      "services.app.oom_kill_disable",
      /oom_kill_disable is refused/,
    ],
    ["an unlimited pids_limit", "pids_limit: -1", "services.app.pids_limit", /1 to 32768/],
    ["a pids_limit above the cap", "pids_limit: 100000", "services.app.pids_limit", /1 to 32768/],
    [
      "unlimited deploy pids",
      "deploy: {resources: {limits: {pids: -1}}}",
      "services.app.deploy.resources.limits.pids",
      /deploy.resources.limits.pids -1 is refused/,
    ],
    [
      "nofile above the engine's default",
      "ulimits: {nofile: {soft: 1024, hard: 4194304}}",
      "services.app.ulimits.nofile",
      /above 1048576/,
    ],
    ["unlimited nproc", "ulimits: {nproc: -1}", "services.app.ulimits.nproc", /above 1048576/],
    ["real-time priority", "ulimits: {rtprio: 99}", "services.app.ulimits.rtprio", /host's other processes/],
    [
      "a build ulimit",
      "build: {context: ., ulimits: {nofile: 9999999}}",
      "services.app.build.ulimits.nofile",
      /above/,
    ],
    ["a tmpfs without a size", "tmpfs: /run", "services.app.tmpfs", /without a size/],
    [
      "a tmpfs list item over the cap",
      "tmpfs: ['/run:size=64m', '/big:size=2g']",
      "services.app.tmpfs.1",
      /tmpfs of 2g/,
    ],
    [
      "a tmpfs mount without a size",
      "volumes: [{type: tmpfs, target: /t}]",
      "services.app.volumes.0.tmpfs",
      /without a size/,
    ],
    [
      "a tmpfs mount over the cap",
      "volumes: [{type: tmpfs, target: /t, tmpfs: {size: 8589934592}}]",
      "services.app.volumes.0.tmpfs.size",
      /at most 1g/,
    ],
    ["storage_opt", "storage_opt: {size: 100G}", "services.app.storage_opt", /storage_opt is refused/],
    [
      "a sysctl outside the safe set",
      "sysctls: {net.ipv4.ip_forward: 1}",
      "services.app.sysctls.net.ipv4.ip_forward",
      /sysctl net.ipv4.ip_forward is refused/,
    ],
    ["a sysctl in list form", "sysctls: ['kernel.msgmax=65536']", "services.app.sysctls.0", /kernel.msgmax/],
    ["real-time CPU time", "cpu_rt_runtime: 95000", "services.app.cpu_rt_runtime", /real-time/],
    [
      "develop (compose watch)",
      "develop: {watch: [{action: sync+exec, path: ., exec: {command: id, privileged: true}}]}",
      "services.app.develop",
      /compose watch/,
    ],
    ["a service model", "models: [llm]", "services.app.models", /Model Runner/],
    [
      "endpoint driver options",
      "networks: {n: {driver_opts: {com.docker.network.endpoint.sysctls: 'net.ipv4.conf.IFNAME.forwarding=1'}}}",
      "services.app.networks.n.driver_opts",
      /driver options/,
    ],
  ];
  it.each(cases)(
    "refuses %s, naming its path, and not for the instance organization",
    (_name, lines, path, message) => {
      const models = lines.startsWith("models") ? "models:\n  llm: {model: ai/x}\n" : "";
      const rest = `networks:\n  n: {}\n${models}`;
      // app() names an image of its own.
      const file = lines.startsWith("image:")
        ? `services:\n  app:\n    ${lines}\n  other:\n    image: alpine:3.20\n${rest}`
        : app(lines, rest);
      expectRefused(file, path, message);
      expect(refusals(file, { tenant: null }).find((issue) => issue.path === path)).toBeUndefined();
    },
  );

  it("refuses top-level models, and secrets through a driver of the host", () => {
    expectRefused(app("init: true", "models:\n  llm: {model: ai/x}\n"), "models", /Model Runner/);
    expectRefused(
      "services:\n  app:\n    image: alpine\n    secrets: [s]\nsecrets:\n  s:\n    driver: vault\n",
      "secrets.s.driver",
      /plugin of the host/,
    );
  });

  it("allows the harmless forms: tagged or namespaced hex names, local caches, sized tmpfs, capped resources", () => {
    expectAllowed(
      app(
        `ulimits: {nofile: {soft: 262144, hard: 262144}, nproc: 65535, memlock: -1, core: 0, rtprio: 0}
pids_limit: 4096
oom_score_adj: 100
oom_kill_disable: false
tmpfs: ['/run:size=64m,mode=1777', '/cache:size=1g']
sysctls: ['net.core.somaxconn=1024', 'net.ipv4.tcp_keepalive_time=600']
deploy: {resources: {limits: {pids: 512, memory: 256M}}}
volumes: [{type: image, source: 'alpine:3.20', target: /img}, {type: tmpfs, target: /t, tmpfs: {size: 1073741824}}]
build:
  context: .
  cache_from: ['redis:7', 'type=registry,ref=registry.example.com/acme/cache:web']
  additional_contexts: {base: 'docker-image://alpine:3.20', sibling: 'service:other', shared: ./shared}
  tags: ['acme/web:1']
  dockerfile_inline: |
    # syntax=docker/dockerfile:1
    FROM alpine:3.20 AS builder
    RUN --mount=type=cache,target=/root/.cache echo built > /out
    COPY <<EOF /etc/motd
    COPY ../../escape-is-heredoc-text /x
    EOF
    FROM abcdef123456:latest
    COPY --from=builder /out /out
    COPY --from=0 /etc/motd /motd
    COPY ["package.json", "./"]
    ADD ./local.tar.gz /srv/
x-notes: anything`,
        "x-defaults: &defaults\n  restart: always\n",
      ),
    );
    expectAllowed("services:\n  app:\n    image: myorg/abcdef123456\n  b:\n    image: abcdef123456:1.0\n");
  });

  it("checks a service named like an extension key", () => {
    expectRefused(
      "services:\n  x-web:\n    image: alpine\n    privileged: true\n",
      "services.x-web.privileged",
    );
  });

  it("refuses a key no rule classifies, naming its path (a key of a newer Compose release)", () => {
    const issues = new IssueList();
    checkTenancy(
      { services: { web: { image: "alpine", future_key: { anything: true } } }, future_top: 1, "x-ok": 1 },
      {
        tenant: testTenant(),
        appName: "shop-k3x9qa",
        filesDirectory: FILES_DIRECTORY,
        platformNetwork: "platform-network",
      },
      issues,
    );
    expect(issues.issues).toEqual([
      {
        path: "services.web.future_key",
        message: expect.stringMatching(/future_key is refused.*no tenancy rule/),
      },
      { path: "future_top", message: expect.stringMatching(/future_top is refused/) },
    ]);
  });
});
