/**
 * The baseline for bench/agent.ts: a bare NATS responder in its own process that answers every
 * request on BENCH_SUBJECT with the request's own bytes.
 */
import { connect } from "../packages/agent-protocol/src/index.ts";

const connection = await connect({ servers: process.env.NATS_URL ?? "nats://127.0.0.1:4222" });
connection.subscribe(process.env.BENCH_SUBJECT ?? "bench.echo", {
  callback: (_error, message) => {
    message.respond(message.data);
  },
});
await connection.flush();
console.log("ready");
process.on("SIGTERM", () => void connection.drain().then(() => process.exit(0)));
