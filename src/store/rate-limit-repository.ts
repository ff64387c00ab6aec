// Request counters per subject (API key or client address) and fixed window, shared by every instance.
import type { Collection, Db } from "mongodb";
import { isDuplicateKeyError } from "./database.ts";

interface RateLimitWindowDocument {
  _id: string;
  count: number;
  expires_at: Date;
}

export class RateLimitRepository {
  private readonly collection: Collection<RateLimitWindowDocument>;

  constructor(db: Db) {
    this.collection = db.collection<RateLimitWindowDocument>("rate_limit_windows");
  }

  async ensureIndexes(): Promise<void> {
    await this.collection.createIndex({ expires_at: 1 }, { expireAfterSeconds: 0 });
  }

  /** Counts `amount` more requests in the window and answers the window's total. */
  async add(subject: string, windowStart: Date, windowEnd: Date, amount = 1): Promise<number> {
    const filter = { _id: `${subject}|${windowStart.getTime()}` };
    const update = { $inc: { count: amount }, $setOnInsert: { expires_at: windowEnd } };
    for (let attempt = 0; ; attempt++) {
      try {
        const doc = await this.collection.findOneAndUpdate(filter, update, {
          upsert: true,
          returnDocument: "after",
          projection: { count: 1 },
        });
        return doc!.count;
      } catch (error) {
        // Two first requests of a window may race to insert it; the loser retries as an update.
        if (!isDuplicateKeyError(error) || attempt > 2) throw error;
      }
    }
  }
}
