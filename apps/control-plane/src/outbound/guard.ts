/**
 * The outbound guard lives in @platform/outbound-guard so the agents apply
 * the same rules (monitoring callbacks); the control plane imports it from here.
 */
export {
  type AllowList,
  carriedIPv4,
  checkOutboundHost,
  EMPTY_ALLOW_LIST,
  type HostResolver,
  normalizeHost,
  OutboundRefusedError,
  outboundAddressProblem,
  parseAllowList,
  systemResolver,
} from "@platform/outbound-guard";
