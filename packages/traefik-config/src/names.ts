/**
 * Names of what one service's dynamic configuration defines. Routers and services follow Dokploy
 * (`<appName>-router-<key>`, `<appName>-router-websecure-<key>`, `<appName>-service-<key>`), so
 * do the per-domain and auth middlewares (`stripprefix-<appName>-<key>`,
 * `addprefix-<appName>-<key>`, `auth-<appName>`); the HTTPS redirect is `redirect-to-https-<appName>`
 * because every file is self-contained (Dokploy shares one `redirect-to-https` in middlewares.yml).
 * `<key>` is the domain's uniqueConfigKey.
 */
import { posix } from "node:path";

export type DomainKey = string | number;

export const routerName = (appName: string, key: DomainKey) => `${appName}-router-${key}`;
export const secureRouterName = (appName: string, key: DomainKey) => `${appName}-router-websecure-${key}`;
export const serviceName = (appName: string, key: DomainKey) => `${appName}-service-${key}`;
export const stripPrefixMiddlewareName = (appName: string, key: DomainKey) => `stripprefix-${appName}-${key}`;
export const addPrefixMiddlewareName = (appName: string, key: DomainKey) => `addprefix-${appName}-${key}`;
export const basicAuthMiddlewareName = (appName: string) => `auth-${appName}`;
export const redirectToHttpsMiddlewareName = (appName: string) => `redirect-to-https-${appName}`;
/** A redirect of the redirects router (Dokploy: `redirect-<appName>-<uniqueConfigKey>`). */
export const redirectRegexMiddlewareName = (appName: string, key: DomainKey) => `redirect-${appName}-${key}`;

/** A domain's forward auth (the forwardAuth router; Dokploy: `forward-auth-<appName>-<uniqueConfigKey>`). */
export const forwardAuthMiddlewareName = (appName: string, key: DomainKey) =>
  `forward-auth-${appName}-${key}`;

/** The file, in the dynamic configuration directory, that holds one service's configuration. */
export const dynamicConfigFileName = (appName: string) => `${appName}.yml`;

/**
 * Where the agent writes the PEM files of a domain's custom certificate, and where the
 * configuration tells Traefik to read them (the directory is mounted at the same path in Traefik).
 */
export function customCertificateFiles(
  certificatesDirectory: string,
  appName: string,
  key: DomainKey,
): { certFile: string; keyFile: string } {
  const base = posix.join(certificatesDirectory, `${appName}-${key}`);
  return { certFile: `${base}.crt`, keyFile: `${base}.key` };
}

/**
 * A stored certificate of the certificates router: its PEM files and the dynamic file that adds
 * them to Traefik's TLS store. The `platform-` prefix is one no appName may take, so these
 * never collide with an application's file.
 */
export function storedCertificateFiles(
  certificatesDirectory: string,
  certificateId: string,
): { certFile: string; keyFile: string } {
  const base = posix.join(certificatesDirectory, `platform-certificate-${certificateId}`);
  return { certFile: `${base}.crt`, keyFile: `${base}.key` };
}
export const storedCertificateConfigFileName = (certificateId: string) =>
  `platform-certificate-${certificateId}.yml`;

/** Entry points and certificate resolver the static configuration defines and routers use. */
export const WEB_ENTRYPOINT = "web";
export const WEBSECURE_ENTRYPOINT = "websecure";
export const DASHBOARD_ENTRYPOINT = "traefik";
export const LETSENCRYPT_RESOLVER = "letsencrypt";
