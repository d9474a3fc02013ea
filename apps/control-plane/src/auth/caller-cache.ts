/**
 * The callers of recently seen credentials, kept in this process so that a request does not
 * read its session or API key and membership from the database each time.
 *
 * Freshness, on every control plane sharing the database: triggers NOTIFY `platform_callers`
 * on any write that can change a caller (migration 20261124-85-caller-invalidation), and each
 * notification empties the cache. A hit is used only after a fence (db/database.ts): the
 * notifications of every commit made before the request arrived have then been received, so a
 * revoked key, a logged-out session, a role change or a removed member takes effect on the very
 * next request, whichever instance made the change. Expiry is checked on each hit. While the
 * listening connection is down (and when a fence fails) the cache answers nothing, so the
 * request asks the database as before and meets its outage (503) like any other query.
 *
 * API keys with a usage budget or a rate limit are never cached: each request must spend from
 * them in the database (auth/api-key.ts).
 */
import type { Caller } from "../context.ts";
import type { Notifications } from "../db/database.ts";

export const CALLER_CHANNEL = "platform_callers";

/** Beyond this many credentials the oldest entry makes room (a bound, not a tuning knob). */
const MAX_ENTRIES = 10_000;

interface Entry {
  caller: Caller;
  /** Epoch milliseconds from which the credential has expired (Infinity: never). */
  expiresAtMs: number;
}

export class CallerCache {
  private readonly entries = new Map<string, Entry>();
  private notifications: Notifications | null = null;
  /** Bumped by every invalidation: a lookup that began before one must not store its answer. */
  private generation = 0;

  constructor(private readonly now: () => Date) {}

  /** Starts trusting the cache once `notifications` tell about changes. */
  attach(notifications: Notifications): void {
    this.notifications = notifications;
  }

  invalidate(): void {
    this.generation++;
    this.entries.clear();
  }

  /** The cached caller of `key`, current as of this request's arrival, else undefined. */
  async lookup(key: string): Promise<Caller | undefined> {
    const notifications = this.notifications;
    if (!notifications?.live || !this.entries.has(key)) return undefined;
    try {
      await notifications.fence();
    } catch {
      return undefined;
    }
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    if (entry.expiresAtMs <= this.now().getTime()) {
      this.entries.delete(key);
      return undefined;
    }
    return entry.caller;
  }

  /** What to pass to store(): taken before the database is read. */
  begin(): number {
    return this.generation;
  }

  /** Keeps a caller read from the database since begin() returned `generation`. */
  store(key: string, generation: number, caller: Caller, expiresAt: string | null): void {
    if (!this.notifications?.live || generation !== this.generation) return;
    if (this.entries.size >= MAX_ENTRIES) {
      const oldest = this.entries.keys().next().value;
      if (oldest !== undefined) this.entries.delete(oldest);
    }
    Object.freeze(caller.features);
    Object.freeze(caller.credential);
    this.entries.set(key, {
      caller: Object.freeze(caller),
      expiresAtMs: expiresAt === null ? Number.POSITIVE_INFINITY : new Date(expiresAt).getTime(),
    });
  }
}
