/** Helpers for the tests of the caches kept fresh by notifications (db/notified-cache.ts). */

/**
 * Reads through `read` until `holds` says the answer is kept (at most 20 reads). A notification
 * of an earlier write may still arrive during a read, which then keeps nothing (it may have
 * missed that write): a later read keeps it, as a later request would.
 */
export async function readUntilHeld(holds: () => boolean, read: () => Promise<unknown>): Promise<void> {
  for (let attempt = 0; attempt < 20 && !holds(); attempt++) await read();
}
