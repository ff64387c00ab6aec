// The poll behind the fast path: pending deliveries due for a while that no worker holds (their process
// crashed, stopped, or another process created them) are attempted here; deliveries whose last attempt was
// cut short with no attempt left are settled as failed.
import type { Clock } from "../domain/clock.ts";
import type { WebhookDeliveryRepository } from "../store/webhook-delivery-repository.ts";
import { MAX_DELIVERY_ATTEMPTS } from "./delivery-policy.ts";

export interface BackstopOptions {
  intervalMs: number;
  /** Deliveries due more recently than this still belong to the fast path of the process that made them. */
  staleAfterMs: number;
  batchSize: number;
}

/**
 * Deliveries are exhausted only when a crash cut their 7th attempt short and its lease (tens of seconds) ran
 * out; looking for them takes a scan, so it is done this often rather than at every poll.
 */
const EXHAUSTED_CHECK_MS = 5000;

export class DeliveryBackstop {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private exhaustedCheckedAt = -Infinity;

  constructor(
    private readonly deliveries: WebhookDeliveryRepository,
    private readonly dispatch: (deliveryId: string) => void,
    private readonly clock: Clock,
    private readonly options: BackstopOptions,
    private readonly onError: (error: unknown) => void,
  ) {}

  start(): void {
    this.timer ??= setInterval(() => {
      this.running ??= this.sweepNow()
        .catch(this.onError)
        .finally(() => {
          this.running = null;
        });
    }, this.options.intervalMs);
    this.timer.unref();
  }

  async sweepNow(): Promise<void> {
    const now = this.clock();
    if (now.getTime() - this.exhaustedCheckedAt >= EXHAUSTED_CHECK_MS) {
      this.exhaustedCheckedAt = now.getTime();
      await this.deliveries.settleExhausted(MAX_DELIVERY_ATTEMPTS, now);
    }
    const dueBy = new Date(now.getTime() - this.options.staleAfterMs);
    const due = await this.deliveries.findDue(now, dueBy, this.options.batchSize);
    // Workers polling together read the same oldest deliveries; each tries them in its own order, so their
    // claims (conditional updates) mostly go to different deliveries instead of colliding.
    for (let i = due.length - 1; i > 0; i--) {
      const j = Math.floor(Math.random() * (i + 1));
      [due[i], due[j]] = [due[j]!, due[i]!];
    }
    for (const id of due) this.dispatch(id);
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.running;
  }
}
