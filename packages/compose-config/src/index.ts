/**
 * @platform/compose-config: Compose files for compose stacks. Parsing and validation against the
 * Compose Specification, interpolation as Compose does it, the tenant refusals, and the
 * conversion to the file the platform deploys (`docker stack deploy` or Compose).
 */
export * from "./collision.ts";
export * from "./convert.ts";
export * from "./errors.ts";
export * from "./interpolate.ts";
export * from "./mounts.ts";
export * from "./ports.ts";
export * from "./schema.ts";
export * from "./stack-format.ts";
export * from "./tenancy.ts";
