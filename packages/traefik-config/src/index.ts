/**
 * @platform/traefik-config: Traefik v3 configuration for the platform's proxy. The per-service
 * dynamic configuration (file provider) and the static configuration are generated here; user
 * YAML is parsed and checked against the official schemas; hosts, paths, ports and Basic-auth
 * credentials are validated with the same functions by the routers and the generator.
 */
export * from "./dynamic.ts";
export * from "./errors.ts";
export * from "./htpasswd.ts";
export * from "./names.ts";
export * from "./paths.ts";
export * from "./priorities.ts";
export * from "./rule-parser.ts";
export * from "./schemas.ts";
export * from "./static.ts";
export * from "./types.ts";
export * from "./user-config.ts";
export * from "./validation.ts";
