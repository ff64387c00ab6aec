// Successful attempts, recorded together: outcomes that arrive within a few milliseconds go to the database in
// one bulk write instead of one round trip each (at 1,000 deliveries/s, round trips per delivery are what the
// database cannot afford), and so do the ends of their endpoints' runs of failures. The receiver has its answer
// already, so the wait costs no delivery latency. Only successes come here; a failure needs its own answer (was
// its retry time written?) before the process wakes up for that retry.
//
// Every success ends its endpoint's run of failures, whatever the endpoint looked like when the attempt started:
// failures of other deliveries counted meanwhile are before this success, and an endpoint whose deliveries
// alternate between failing and succeeding must never reach the count that disables it.
import { TurnBatch } from "../lib/turn-batch.ts";
import type { OutcomeWrite, WebhookDeliveryRepository } from "../store/webhook-delivery-repository.ts";
import type { WebhookEndpointRepository } from "../store/webhook-endpoint-repository.ts";

interface PendingRecord {
  write: OutcomeWrite;
  endpointId: string;
}

/** How long the first outcome of a batch waits for others. */
const BATCH_WINDOW_MS = 5;
const MAX_BATCH = 500;

export class SuccessRecorder {
  private readonly batch: TurnBatch<PendingRecord>;

  constructor(deliveries: WebhookDeliveryRepository, endpoints: WebhookEndpointRepository) {
    this.batch = new TurnBatch<PendingRecord>(
      async (records) => {
        const endpointIds = [...new Set(records.map((r) => r.endpointId))];
        await Promise.all([deliveries.recordAttempts(records.map((r) => r.write)), endpoints.endFailureStreaks(endpointIds)]);
        return records.map(() => undefined);
      },
      { windowMs: BATCH_WINDOW_MS, maxItems: MAX_BATCH },
    );
  }

  /** Resolves once the outcome and the end of its endpoint's failures are written (with the others of its batch). */
  record(write: OutcomeWrite, endpointId: string): Promise<void> {
    return this.batch.add({ write, endpointId });
  }
}
