// Failed attempts, written together: the attempts that fail in the same event-loop turn count against their
// endpoints in one bulk write (and one read of the counts), and their outcomes go to their records in another. In a
// retry storm hundreds of attempts fail at once; one round trip each was most of what the process did. Unlike
// successes, each caller waits for its answer (the endpoint's run of failures, whether its outcome was recorded)
// before its job is moved on, so the batch is of one turn, without a window.
import { TurnBatch } from "../lib/turn-batch.ts";
import type { OutcomeWrite, WebhookDeliveryRepository } from "../store/webhook-delivery-repository.ts";
import type { WebhookEndpointRepository } from "../store/webhook-endpoint-repository.ts";

export class FailureRecorder {
  private readonly counts: TurnBatch<string, number | null>;
  private readonly outcomes: TurnBatch<OutcomeWrite, boolean>;

  constructor(deliveries: WebhookDeliveryRepository, endpoints: WebhookEndpointRepository) {
    this.counts = new TurnBatch<string, number | null>(async (endpointIds) => {
      const failures = new Map<string, number>();
      for (const id of endpointIds) failures.set(id, (failures.get(id) ?? 0) + 1);
      const runs = await endpoints.recordFailures(failures);
      // The failures of one endpoint in this batch are its run's last ones, numbered in the order they came.
      const before = new Map([...failures].map(([id, count]) => [id, (runs.get(id) ?? Number.NaN) - count]));
      return endpointIds.map((id) => {
        const run = before.get(id)! + 1;
        before.set(id, run);
        return Number.isNaN(run) ? null : run;
      });
    });
    this.outcomes = new TurnBatch<OutcomeWrite, boolean>((records) => deliveries.recordAttemptsEach(records));
  }

  /** Counts a failed attempt against its endpoint; answers the endpoint's consecutive failures with it (null: gone). */
  countFailure(endpointId: string): Promise<number | null> {
    return this.counts.add(endpointId);
  }

  /** Records an outcome other than success; answers whether it was recorded (false: the delivery moved on). */
  record(write: OutcomeWrite): Promise<boolean> {
    return this.outcomes.add(write);
  }
}
