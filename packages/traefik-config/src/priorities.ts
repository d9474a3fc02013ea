/**
 * Router priorities on the shared proxy. Traefik tries routers in descending priority, and a
 * router without one (or with 0) gets its rule's length in bytes. Three bands, so that no
 * tenant can put a router in front of the platform's:
 * - tenants' own files (application.updateTraefikConfig): 0 to MAX_USER_ROUTER_PRIORITY, and
 *   rules no longer than that, so the implicit priority stays in the band too;
 * - routers generated for applications' domains: GENERATED_ROUTER_PRIORITY_BASE plus the rule's
 *   length, which keeps Traefik's longest-rule-first order among them;
 * - the control plane's own domain: CONTROL_PLANE_ROUTER_PRIORITY, above every other router and
 *   below the range Traefik reserves for its internal routers (MaxInt - 1000, MaxInt being
 *   MaxInt32 on 32-bit builds).
 */
export const MAX_USER_ROUTER_PRIORITY = 10_000;
export const GENERATED_ROUTER_PRIORITY_BASE = 1_000_000;
export const CONTROL_PLANE_ROUTER_PRIORITY = 2_147_483_647 - 1001;

/** The priority Traefik gives a router without one: its rule's length in bytes. */
export const implicitRulePriority = (rule: string) => Buffer.byteLength(rule, "utf8");

/** The priority of a generated application router with this rule. */
export const generatedRouterPriority = (rule: string) =>
  GENERATED_ROUTER_PRIORITY_BASE + implicitRulePriority(rule);
