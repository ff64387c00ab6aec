// Idempotency keys of mutating calls: one record per key in its scope (a project and environment, or the
// operator's), whatever door the call came through; the call pipeline claims, settles and replays them.
import { createHash } from "node:crypto";
import type { Clock } from "../domain/clock.ts";
import { svcError } from "../domain/errors.ts";
import type { IdempotencyRepository, StoredResponse } from "../store/idempotency-repository.ts";
import type { CreationReservation } from "./creation-reservation.ts";

export const IDEMPOTENCY_KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;
const IDEMPOTENCY_RETENTION_MS = 24 * 60 * 60 * 1000;
/** A running request whose process died frees its key after this, by default. */
const DEFAULT_RUNNING_LOCK_MS = 30_000;

export interface IdempotencyClaim {
  recordId: string;
  /** Set when a response is already stored: replay it instead of running the call. */
  replay: StoredResponse | null;
  /** For a call that runs: the seed of its reserved ids, and whether an earlier run died holding the key. */
  reservation: CreationReservation | null;
}

export class IdempotencyGuard {
  constructor(
    private readonly records: IdempotencyRepository,
    private readonly clock: Clock,
    private readonly lockMs: number = DEFAULT_RUNNING_LOCK_MS,
  ) {}

  /** 1 to 255 visible ASCII characters, else 400 `idempotency_key_invalid`. */
  static checkKey(key: string): void {
    if (!IDEMPOTENCY_KEY_PATTERN.test(key)) throw svcError("idempotency_key_invalid");
  }

  static fingerprint(...parts: (string | Uint8Array)[]): string {
    const hash = createHash("sha256");
    for (const part of parts) hash.update(part).update("\0");
    return hash.digest("hex");
  }

  /**
   * Whether an answer is kept for replay: only once the operation ran, as at Stripe: a success, or the 404 and
   * 409 answers of its business rules. Refusals before it ran (400, 401, 403, 413, 415, 422, 429) and failures
   * (5xx) keep nothing, so a corrected retry with the same key runs.
   */
  static isReplayable(status: number): boolean {
    return (status >= 200 && status < 300) || status === 404 || status === 409;
  }

  /** `scope`: the project and environment of the key (or the operator's); `fingerprint`: what the request is. */
  async claim(scope: string, key: string, fingerprint: string): Promise<IdempotencyClaim> {
    IdempotencyGuard.checkKey(key);
    const recordId = `${scope}|${key}`;
    const begun = await this.records.begin(recordId, fingerprint, {
      now: this.clock(),
      lockMs: this.lockMs,
      retentionMs: IDEMPOTENCY_RETENTION_MS,
    });
    switch (begun.outcome) {
      case "started":
        return { recordId, replay: null, reservation: { seed: begun.seed, resumed: begun.resumed, answerWrites: [] } };
      case "completed":
        return { recordId, replay: begun.response, reservation: null };
      case "mismatch":
        throw svcError("idempotency_key_reuse");
      case "in_progress":
        throw svcError("idempotency_in_progress");
    }
  }

  /**
   * Stores the response if it is replayable. A refusal frees the key for a corrected retry. After a failure
   * (5xx) the operation may have written part of its work, so the key stays claimed with its seed and is free
   * to be taken over at once: the retry resumes (finds what was written) instead of conflicting with it.
   */
  async settle(recordId: string, response: StoredResponse): Promise<void> {
    if (IdempotencyGuard.isReplayable(response.status)) await this.records.complete(recordId, response);
    else if (response.status >= 500) await this.records.abandon(recordId, this.clock());
    else await this.records.release(recordId);
  }
}
