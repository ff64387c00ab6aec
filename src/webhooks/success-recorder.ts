// Successful attempts, recorded together: outcomes that arrive within a few milliseconds go to the database in
// one bulk write instead of one round trip each (at 1,000 deliveries/s, round trips per delivery are what the
// database cannot afford), and so do the ends of their endpoints' runs of failures. The receiver has its answer
// already, so the wait costs no delivery latency. Only successes come here; a failure needs its own answer (was
// its retry time written?) before the process wakes up for that retry.
//
// Every success ends its endpoint's run of failures, whatever the endpoint looked like when the attempt started:
// failures of other deliveries counted meanwhile are before this success, and an endpoint whose deliveries
// alternate between failing and succeeding must never reach the count that disables it.
import type { AttemptOutcome, WebhookDeliveryRepository } from "../store/webhook-delivery-repository.ts";
import type { WebhookEndpointRepository } from "../store/webhook-endpoint-repository.ts";

interface PendingRecord {
  id: string;
  attempt: number;
  outcome: AttemptOutcome;
  now: Date;
  endpointId: string;
}

/** How long the first outcome of a batch waits for others. */
const BATCH_WINDOW_MS = 5;
const MAX_BATCH = 500;

export class SuccessRecorder {
  private batch: PendingRecord[] = [];
  private flushing: Promise<void> | null = null;

  constructor(
    private readonly deliveries: WebhookDeliveryRepository,
    private readonly endpoints: WebhookEndpointRepository,
  ) {}

  /** Resolves once the outcome and the end of its endpoint's failures are written (with the others of its batch). */
  record(id: string, attempt: number, outcome: AttemptOutcome, now: Date, endpointId: string): Promise<void> {
    this.batch.push({ id, attempt, outcome, now, endpointId });
    const flushing = (this.flushing ??= new Promise<void>((resolve, reject) => {
      this.flushNow = () => {
        clearTimeout(timer);
        const batch = this.batch;
        this.batch = [];
        this.flushing = null;
        this.flushNow = null;
        const endpointIds = [...new Set(batch.map((r) => r.endpointId))];
        Promise.all([this.deliveries.recordAttempts(batch), this.endpoints.endFailureStreaks(endpointIds)]).then(() => resolve(), reject);
      };
      const timer = setTimeout(() => this.flushNow?.(), BATCH_WINDOW_MS);
    }));
    if (this.batch.length >= MAX_BATCH) this.flushNow?.();
    return flushing;
  }

  private flushNow: (() => void) | null = null;
}
