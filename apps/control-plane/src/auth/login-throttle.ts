/**
 * Login throttling per account and per client address, counted in the database (table
 * login_throttle) so that every control plane on it agrees. An attempt is counted before the
 * password is checked, so concurrent attempts and every call of a tRPC batch count; past the
 * limit the answer is 429 with Retry-After until the window (from the first attempt) ends. A
 * successful login clears the account's count and takes its attempt back from the address.
 */
import { isIP } from "node:net";
import type { ServiceContext } from "../context.ts";
import { ApiError } from "../errors.ts";

export const LOGIN_WINDOW_SECONDS = 15 * 60;
export const LOGIN_MAX_ATTEMPTS = { account: 10, address: 50 } as const;

/** Clients without a socket address (in-process calls) share one. */
const UNKNOWN_ADDRESS = "unknown";

/** An IPv6 client is counted by its /64: one subscriber commonly holds a whole /64. */
function addressKey(address: string | null): string {
  if (address === null) return UNKNOWN_ADDRESS;
  const bare = address.split("%")[0]!;
  if (isIP(bare) !== 6) return bare;
  const [head = "", tail] = bare.split("::");
  const front = head === "" ? [] : head.split(":");
  const back = tail === undefined || tail === "" ? [] : tail.split(":");
  const groups =
    tail === undefined ? front : [...front, ...Array(8 - front.length - back.length).fill("0"), ...back];
  return `${groups
    .slice(0, 4)
    .map((group) => Number.parseInt(group, 16).toString(16))
    .join(":")}::/64`;
}

function keys(email: string, address: string | null) {
  return { account: `account:${email}`, address: `address:${addressKey(address)}` };
}

/** Counts one attempt for the account and the address; throws 429 when either is over its limit. */
export async function takeLoginAttempt(
  services: Pick<ServiceContext, "db" | "now">,
  email: string,
  address: string | null,
): Promise<void> {
  const now = services.now();
  const cutoff = new Date(now.getTime() - LOGIN_WINDOW_SECONDS * 1000).toISOString();
  const { account, address: addressKey } = keys(email, address);
  const rows = await services.db
    .insertInto("loginThrottle")
    .values([account, addressKey].map((key) => ({ key, attempts: 1, windowStartedAt: now.toISOString() })))
    .onConflict((oc) =>
      oc.column("key").doUpdateSet((eb) => {
        const expired = eb("loginThrottle.windowStartedAt", "<=", cutoff);
        return {
          attempts: eb
            .case()
            .when(expired)
            .then(1)
            .else(eb("loginThrottle.attempts", "+", 1))
            .end(),
          windowStartedAt: eb
            .case()
            .when(expired)
            .then(eb.ref("excluded.windowStartedAt"))
            .else(eb.ref("loginThrottle.windowStartedAt"))
            .end(),
        };
      }),
    )
    .returning(["key", "attempts", "windowStartedAt"])
    .execute();
  // Now and then, forget windows that have ended.
  if (Math.random() < 0.02) {
    await services.db.deleteFrom("loginThrottle").where("windowStartedAt", "<=", cutoff).execute();
  }
  let retryAfterSeconds = 0;
  for (const row of rows) {
    const max = row.key === account ? LOGIN_MAX_ATTEMPTS.account : LOGIN_MAX_ATTEMPTS.address;
    if (row.attempts <= max) continue;
    const endsAt = new Date(row.windowStartedAt).getTime() + LOGIN_WINDOW_SECONDS * 1000;
    retryAfterSeconds = Math.max(retryAfterSeconds, Math.ceil((endsAt - now.getTime()) / 1000), 1);
  }
  if (retryAfterSeconds > 0) {
    throw new ApiError(
      "TOO_MANY_REQUESTS",
      `Too many login attempts: try again in ${retryAfterSeconds} s`,
      { retryAfterSeconds },
      { "Retry-After": String(retryAfterSeconds) },
    );
  }
}

/** After a successful login: the account starts afresh, and the address gets its attempt back. */
export async function loginSucceeded(
  services: Pick<ServiceContext, "db">,
  email: string,
  address: string | null,
): Promise<void> {
  const { account, address: addressKey } = keys(email, address);
  await services.db.deleteFrom("loginThrottle").where("key", "=", account).execute();
  await services.db
    .updateTable("loginThrottle")
    .set((eb) => ({ attempts: eb("attempts", "-", 1) }))
    .where("key", "=", addressKey)
    .where("attempts", ">", 0)
    .execute();
}
