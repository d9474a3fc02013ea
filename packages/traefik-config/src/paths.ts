/**
 * Where the proxy's files live: on the server under <main directory>/traefik, and inside the
 * Traefik container, where that directory is mounted at /etc/traefik. The control plane
 * generates Traefik's configuration with the container paths.
 */

import { ROLE_LABEL } from "@platform/ownership";

/** The proxy's directory, relative to the platform's main directory on the server. */
export const PROXY_DIRECTORY_NAME = "traefik";
/** Traefik's static configuration, relative to the proxy's directory. */
export const STATIC_CONFIG_FILE_NAME = "traefik.yml";
/** The file provider's directory, relative to the proxy's directory. */
export const DYNAMIC_DIRECTORY_NAME = "dynamic";
/** PEM files of custom certificates, relative to the dynamic directory. */
export const CERTIFICATES_DIRECTORY_NAME = "certificates";

/** The proxy's directory inside the Traefik container. */
export const TRAEFIK_CONTAINER_DIRECTORY = "/etc/traefik";
export const STATIC_CONFIG_PATH = `${TRAEFIK_CONTAINER_DIRECTORY}/${STATIC_CONFIG_FILE_NAME}`;
export const DYNAMIC_CONFIG_DIRECTORY = `${TRAEFIK_CONTAINER_DIRECTORY}/${DYNAMIC_DIRECTORY_NAME}`;
export const CERTIFICATES_DIRECTORY = `${DYNAMIC_CONFIG_DIRECTORY}/${CERTIFICATES_DIRECTORY_NAME}`;
export const ACME_STORAGE_PATH = `${TRAEFIK_CONTAINER_DIRECTORY}/acme.json`;
export const ACCESS_LOG_PATH = `${TRAEFIK_CONTAINER_DIRECTORY}/access.log`;

/** The Swarm service of the platform's proxy. */
export const PROXY_SERVICE_NAME = "platform-traefik";
/** Service label marking the platform's proxy. */
export const PROXY_SERVICE_LABEL = ROLE_LABEL;
export const PROXY_SERVICE_LABEL_VALUE = "proxy";
