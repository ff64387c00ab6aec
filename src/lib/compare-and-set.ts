// The one way to change a stored document that others may change at the same time: read it, decide, write on
// the condition that it is still as read, and when the write finds it changed, read again and decide anew. The
// number of attempts is bounded, so a document that keeps changing ends in an error rather than a spinning request.

/** What a conditional write answers when the state it was decided from had changed in between. */
export const CHANGED: unique symbol = Symbol("changed");
export type Changed = typeof CHANGED;

/** Attempts before giving up; each is one read and one write, so this many in a row means heavy contention. */
export const MAX_COMPARE_AND_SET_ATTEMPTS = 50;

/** Thrown when every attempt found its state changed; not a client error (internal, worth retrying later). */
export class TooManyConcurrentChanges extends Error {
  constructor(what: string, attempts: number) {
    super(`${what}: changed concurrently in each of ${attempts} attempts; gave up`);
    this.name = "TooManyConcurrentChanges";
  }
}

/**
 * Runs `read` then `write` until `write` answers something other than CHANGED, and answers that. Both learn the
 * attempt number (0 first), so a caller holding a fresh state can hand it to the first attempt without reading.
 * Whatever either throws ends the loop (a refusal decided from the state is thrown by `write`).
 */
export async function compareAndSet<S, R>(
  what: string,
  read: (attempt: number) => S | Promise<S>,
  write: (state: S, attempt: number) => R | Changed | Promise<R | Changed>,
  maxAttempts = MAX_COMPARE_AND_SET_ATTEMPTS,
): Promise<R> {
  for (let attempt = 0; attempt < maxAttempts; attempt++) {
    const outcome = await write(await read(attempt), attempt);
    if (outcome !== CHANGED) return outcome as R;
  }
  throw new TooManyConcurrentChanges(what, maxAttempts);
}
