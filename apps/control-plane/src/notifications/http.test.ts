/**
 * How a receiver that never answers is reported: the timeout error fetch throws (here after
 * 50 ms, in production DELIVERY_TIMEOUT_MS) is named in our own words, without the receiver's
 * address path or anything it sent.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { expect, it } from "vitest";
import { DELIVERY_TIMEOUT_MS, transportReason } from "./http.ts";

it("names a receiver that never answers as a timeout", async () => {
  const silent = createServer(() => {});
  await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
  const port = (silent.address() as AddressInfo).port;
  const error = await fetch(`http://127.0.0.1:${port}/hook?key=secret`, {
    method: "POST",
    body: "{}",
    signal: AbortSignal.timeout(50),
  }).catch((caught: unknown) => caught);
  silent.closeAllConnections();
  silent.close();
  expect(transportReason(error)).toBe(`no answer within ${DELIVERY_TIMEOUT_MS / 1000} seconds`);
});
