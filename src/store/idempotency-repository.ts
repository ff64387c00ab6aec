// Idempotency records: the first completed response to a key, replayed for 24 hours.
import { randomUUID } from "node:crypto";
import type { Collection, Db } from "mongodb";
import { batchedInsert, batchedUpdate, throwDocumentError } from "./write-batcher.ts";

/** A stored answer: its status, the request id it was first given, and the call pipeline's record of it in `body`. */
export interface StoredResponse {
  status: number;
  body: unknown;
  request_id: string;
}

interface IdempotencyDocument {
  _id: string;
  fingerprint: string;
  /**
   * Random bytes drawn when the key is first claimed, kept by whoever takes the claim over: the ids a creation
   * gives its new objects derive from it, so a retry after a crash finds what the first run wrote.
   */
  seed?: string;
  state: "running" | "completed";
  /** A running request whose holder crashed may be taken over after this. */
  locked_until: Date;
  response: StoredResponse | null;
  created_at: Date;
  expires_at: Date;
}

export type IdempotencyBegin =
  /** `resumed`: an earlier run holding the key died; it may have written part of its work. */
  | { outcome: "started"; seed: string; resumed: boolean }
  | { outcome: "in_progress" }
  | { outcome: "mismatch" }
  | { outcome: "completed"; response: StoredResponse };

export interface IdempotencyTimes {
  now: Date;
  lockMs: number;
  retentionMs: number;
}

export class IdempotencyRepository {
  private readonly collection: Collection<IdempotencyDocument>;
  // Every idempotent request writes its record twice (claim, then answer): concurrent requests share commands.
  private readonly insert: ReturnType<typeof batchedInsert<IdempotencyDocument>>;
  private readonly update: ReturnType<typeof batchedUpdate<IdempotencyDocument>>;

  constructor(db: Db) {
    this.collection = db.collection<IdempotencyDocument>("idempotency_keys");
    this.insert = batchedInsert(db, this.collection.collectionName);
    this.update = batchedUpdate(db, this.collection.collectionName);
  }

  async ensureIndexes(): Promise<void> {
    await this.collection.createIndex({ expires_at: 1 }, { expireAfterSeconds: 0 });
  }

  /**
   * Claims `id` for a request with `fingerprint`, or says why it cannot run: another request with the key
   * is running, the key was used for a different request, or a response is stored.
   */
  async begin(id: string, fingerprint: string, times: IdempotencyTimes): Promise<IdempotencyBegin> {
    const { now, lockMs, retentionMs } = times;
    // randomUUID draws from an entropy pool Node keeps; randomBytes(16) would make a syscall-backed buffer per claim.
    const seed = randomUUID();
    const fresh = (): IdempotencyDocument => ({
      _id: id,
      fingerprint,
      seed,
      state: "running",
      locked_until: new Date(now.getTime() + lockMs),
      response: null,
      created_at: now,
      expires_at: new Date(now.getTime() + retentionMs),
    });
    for (let attempt = 0; attempt < 5; attempt++) {
      const error = await this.insert(fresh());
      if (error === null) return { outcome: "started", seed, resumed: false };
      if (error.code !== 11000) throwDocumentError(error);
      const existing = await this.collection.findOne({ _id: id });
      if (!existing) continue; // expired or abandoned in between: claim it again
      if (existing.expires_at <= now) {
        // Past retention (the TTL sweeper has not run yet): the key is free again.
        const replaced = await this.collection.findOneAndReplace({ _id: id, expires_at: existing.expires_at }, fresh());
        if (replaced) return { outcome: "started", seed, resumed: false };
        continue;
      }
      if (existing.fingerprint !== fingerprint) return { outcome: "mismatch" };
      if (existing.state === "completed" && existing.response) {
        return { outcome: "completed", response: existing.response };
      }
      if (existing.locked_until <= now) {
        // The run holding the key died: take it over with its seed (a record from before seeds gets one).
        const kept = existing.seed ?? seed;
        const taken = await this.collection.findOneAndUpdate(
          { _id: id, state: "running", locked_until: existing.locked_until },
          { $set: { locked_until: new Date(now.getTime() + lockMs), seed: kept } },
        );
        if (taken) return { outcome: "started", seed: kept, resumed: true };
        continue;
      }
      return { outcome: "in_progress" };
    }
    return { outcome: "in_progress" };
  }

  async complete(id: string, response: StoredResponse): Promise<void> {
    const error = await this.update({ updateOne: { filter: { _id: id, state: "running" }, update: { $set: { state: "completed", response } } } });
    if (error) throwDocumentError(error);
  }

  /** Leaves a running claim for the next request with the key to take over at once, seed and all. */
  async abandon(id: string, now: Date): Promise<void> {
    await this.collection.updateOne({ _id: id, state: "running" }, { $set: { locked_until: now } });
  }

  /** Frees the key after a refusal that must not be stored. */
  async release(id: string): Promise<void> {
    await this.collection.deleteOne({ _id: id, state: "running" });
  }
}
