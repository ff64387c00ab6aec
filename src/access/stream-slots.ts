// How many streams one API key may hold open at once on this process: a stream holds a subscription and a
// connection for as long as it lasts, so a key that opens them without end would exhaust both. The open itself is
// rate limited like any call; this bounds what stays open.
import { svcError } from "../domain/errors.ts";

export class StreamSlots {
  private readonly open = new Map<string, number>();

  constructor(readonly perKey: number) {}

  /** Takes a slot of `apiKeyId`, or refuses 429 `rate_limit_exceeded`; answers the function that gives it back (once). */
  take(apiKeyId: string): () => void {
    const held = this.open.get(apiKeyId) ?? 0;
    if (held >= this.perKey) {
      throw svcError("rate_limit_exceeded", `This API key already has ${this.perKey} streams open; close one before opening another.`);
    }
    this.open.set(apiKeyId, held + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const remaining = (this.open.get(apiKeyId) ?? 1) - 1;
      if (remaining === 0) this.open.delete(apiKeyId);
      else this.open.set(apiKeyId, remaining);
    };
  }
}
