/**
 * Test support for the domain, security and settings tests: a control plane whose in-process
 * local agent keeps its proxy files in a temporary main directory (read back from disk) and
 * names its proxy service uniquely, applications to route to, and self-signed certificates.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { expect } from "vitest";
import { createUserDirectly } from "../projects/test-support.ts";
import { type Session, startTestPlatform, type TestPlatform } from "../testing/harness.ts";

export interface ProxyTestPlatform {
  platform: TestPlatform;
  owner: Session;
  /** The owner of a second organization. */
  stranger: Session;
  mainDirectory: string;
  proxyServiceName: string;
  environmentId: string;
  strangerEnvironmentId: string;
  close(): Promise<void>;
}

export async function startProxyTestPlatform(env: Record<string, string> = {}): Promise<ProxyTestPlatform> {
  const mainDirectory = await mkdtemp(path.join(tmpdir(), "cp-proxy-main-"));
  const proxyServiceName = `cp-proxy-test-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
  const platform = await startTestPlatform(env, {
    agents: { localAgent: { mainDirectory, proxyServiceName } },
  });
  const owner = await platform.registerOwner();
  const stranger = await createUserDirectly(platform, { email: `stranger-${proxyServiceName}@example.com` });
  const project = async (session: Session) => {
    const created = await platform.mutate("project.create", { name: "Routing" }, { token: session.token });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    return created.body.environment.environmentId as string;
  };
  return {
    platform,
    owner,
    stranger,
    mainDirectory,
    proxyServiceName,
    environmentId: await project(owner),
    strangerEnvironmentId: await project(stranger),
    close: async () => {
      await platform.close();
      await rm(mainDirectory, { recursive: true, force: true });
    },
  };
}

export async function createApplication(
  test: ProxyTestPlatform,
  session: Session = test.owner,
  environmentId: string = test.environmentId,
): Promise<{ applicationId: string; appName: string }> {
  const created = await test.platform.mutate(
    "application.create",
    { name: "Routed app", environmentId },
    { token: session.token },
  );
  expect(created.status, JSON.stringify(created.body)).toBe(200);
  return { applicationId: created.body.applicationId, appName: created.body.appName };
}

/** <main>/traefik/dynamic/<name>, or <main>/traefik/dynamic/certificates/<name>. */
export function dynamicFile(test: ProxyTestPlatform, name: string): string {
  return path.join(test.mainDirectory, "traefik", "dynamic", name);
}

export function certificateFile(test: ProxyTestPlatform, name: string): string {
  return path.join(test.mainDirectory, "traefik", "dynamic", "certificates", name);
}

export function staticFile(test: ProxyTestPlatform): string {
  return path.join(test.mainDirectory, "traefik", "traefik.yml");
}

/** The file's text, or undefined when it does not exist. */
export async function readIfExists(file: string): Promise<string | undefined> {
  try {
    return await readFile(file, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
}

/** A self-signed certificate and its unencrypted key (PEM), made with openssl. */
export function selfSignedCertificate(commonName: string): { certificate: string; key: string } {
  const output = execFileSync(
    "openssl",
    [
      "req",
      "-x509",
      "-newkey",
      "ec",
      "-pkeyopt",
      "ec_paramgen_curve:prime256v1",
      "-nodes",
      "-days",
      "2",
      "-subj",
      `/CN=${commonName}`,
      "-keyout",
      "-",
    ],
    { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] },
  );
  const key = output.match(/-----BEGIN PRIVATE KEY-----[\s\S]+?-----END PRIVATE KEY-----\n/)?.[0];
  const certificate = output.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----\n/)?.[0];
  if (!key || !certificate) throw new Error("openssl did not print a certificate and a key");
  return { certificate, key };
}

/**
 * A certificate for `hosts` (DNS subjectAltNames) issued by a throw-away CA, made with openssl:
 * `chain` is the leaf then the CA, `key` the leaf's unencrypted key.
 */
export function issuedCertificate(hosts: string[]): { chain: string; leaf: string; ca: string; key: string } {
  const directory = mkdtempSync(path.join(tmpdir(), "cp-cert-"));
  const file = (name: string) => path.join(directory, name);
  const openssl = (args: string[]) =>
    execFileSync("openssl", args, { cwd: directory, stdio: ["ignore", "pipe", "pipe"] });
  const ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"];
  try {
    openssl([
      "req",
      "-x509",
      ...ec,
      "-days",
      "2",
      "-subj",
      "/CN=Test CA",
      "-keyout",
      "ca.key",
      "-out",
      "ca.crt",
    ]);
    openssl(["req", ...ec, "-subj", `/CN=${hosts[0]}`, "-keyout", "leaf.key", "-out", "leaf.csr"]);
    writeFileSync(file("ext.cnf"), `subjectAltName=${hosts.map((host) => `DNS:${host}`).join(",")}\n`);
    openssl([
      "x509",
      "-req",
      "-in",
      "leaf.csr",
      "-CA",
      "ca.crt",
      "-CAkey",
      "ca.key",
      "-CAcreateserial",
      "-days",
      "2",
      "-extfile",
      "ext.cnf",
      "-out",
      "leaf.crt",
    ]);
    const leaf = readFileSync(file("leaf.crt"), "utf8");
    const ca = readFileSync(file("ca.crt"), "utf8");
    return { chain: leaf + ca, leaf, ca, key: readFileSync(file("leaf.key"), "utf8") };
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }
}
