/**
 * Test helpers: a connection to the development NATS server (127.0.0.1:4222 unless NATS_URL
 * says otherwise), failing with a clear hint when it is not running.
 */
import { connect, type NatsConnection } from "@nats-io/transport-node";

export const TEST_NATS_URL = process.env.NATS_URL ?? "nats://127.0.0.1:4222";

export async function connectTestNats(): Promise<NatsConnection> {
  try {
    return await connect({ servers: TEST_NATS_URL, timeout: 3000, name: "agent-protocol-tests" });
  } catch (error) {
    throw new Error(
      `NATS is not reachable at ${TEST_NATS_URL} (${(error as Error).message}): run scripts/start-test-services.sh`,
    );
  }
}

/** A server id no other test run uses, so tests sharing one NATS server do not cross. */
export function uniqueServerId(prefix = "test"): string {
  return `${prefix}-${process.pid}-${Math.random().toString(36).slice(2, 10)}`;
}
