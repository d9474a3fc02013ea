import type { KeyPair } from "@nats-io/nkeys";

export interface NatsAuthority {
  /** The platform account's key pair: it signs the users' JWTs (NATS_ACCOUNT_SEED is its seed). */
  account: KeyPair;
  /** nats-server configuration lines trusting the operator and preloading both accounts. */
  serverConfig: string;
  /** A user JWT without subject limits (the control plane's) for `user`. */
  controlPlaneJwt(user: KeyPair): Promise<string>;
}

/** `operatorName` defaults to "platform"; `jetstream` (default false) lets the account use it. */
export function generateNatsAuthority(options?: {
  operatorName?: string;
  jetstream?: boolean;
}): Promise<NatsAuthority>;
