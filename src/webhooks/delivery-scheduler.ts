// Decides when delivery attempts run in this process. The delivery records are the one schedule: a pending
// record's `next_attempt_at` is when its next attempt is due, and each attempt is claimed from the record with a
// conditional update. Everything here only learns which ids may be due and hands them to one in-process queue:
//
// - fan-out's first attempts, claimed at insertion: run at once (the fast path of fresh deliveries);
// - a retry time this process wrote: a timer wakes up for it, so its own retries are on time without a poll;
// - on a replica set, a change stream reports deliveries recorded or replayed elsewhere as they become due;
// - the poll, in every delivering process: due deliveries that nobody holds, whoever wrote them (retries of a
//   process that stopped, records of API processes on a standalone server, leases whose worker died).
//
// A wake-up that comes to nothing (the record was settled, replayed, deleted, or another process claimed it
// first) costs one failed claim; nothing is lost when one is missed, since the poll reads the records.
import type { Clock } from "../domain/clock.ts";
import { PeriodicTask } from "../lib/periodic-task.ts";
import type { WebhookDeliveryRepository } from "../store/webhook-delivery-repository.ts";
import { DeliveryDispatcher, type AttemptRunner } from "./delivery-dispatcher.ts";
import { MAX_DELIVERY_ATTEMPTS } from "./delivery-policy.ts";
import type { AttemptHints } from "./delivery-worker.ts";

export interface DeliverySchedulerOptions {
  /** Attempts in flight at once in this process. */
  concurrency: number;
  /** How often the poll reads the due deliveries nobody holds. */
  pollIntervalMs: number;
  /**
   * The poll leaves a delivery this long after it falls due to the process that wrote its retry (its timer):
   * two processes racing for every retry would cost a failed claim each time. 0 in workers.
   */
  pollStaleAfterMs: number;
  /** Whether the database reports changes (a replica set). */
  changeStreams: boolean;
  /** Retry wake-ups kept in memory at most; past that, the poll alone finds the later retries. */
  maxWakeUps?: number;
}

/**
 * Deliveries are exhausted only when a crash cut their 7th attempt short and its lease ran out; looking for them
 * takes a scan, so it is done this often rather than at every poll.
 */
const EXHAUSTED_CHECK_MS = 5000;
const DEFAULT_MAX_WAKE_UPS = 50_000;
/** setTimeout's longest delay; a later wake-up re-arms when this one fires. */
const MAX_TIMER_MS = 2_147_483_647;

export class DeliveryScheduler {
  private readonly dispatcher: DeliveryDispatcher<AttemptHints>;
  private readonly wakeUps = new WakeUpHeap();
  private wakeTimer: NodeJS.Timeout | null = null;
  private wakeTimerAt = Infinity;
  private readonly poll: PeriodicTask;
  private exhaustedCheckedAt = -Infinity;
  private stopWatching: (() => Promise<void>) | null = null;
  private stopped = false;
  private startedElsewhere: (deliveryId: string) => boolean = () => false;

  constructor(
    private readonly deliveries: WebhookDeliveryRepository,
    runAttempt: AttemptRunner<AttemptHints>,
    private readonly clock: Clock,
    private readonly options: DeliverySchedulerOptions,
    private readonly onError: (error: unknown) => void,
  ) {
    this.dispatcher = new DeliveryDispatcher(runAttempt, options.concurrency, onError);
    this.poll = new PeriodicTask(() => this.pollNow(), options.pollIntervalMs, onError);
  }

  /** A first attempt fan-out claimed when it inserted the record: it runs now, with what fan-out holds. */
  runClaimed(deliveryId: string, hints: AttemptHints): void {
    this.dispatcher.submit(deliveryId, hints);
  }

  /** A delivery due now (a replay): its next attempt runs now unless another worker holds it. */
  runDue(deliveryId: string): void {
    this.dispatcher.submit(deliveryId);
  }

  /** A retry time this process wrote into the record: wake up for it then. */
  wakeAt(deliveryId: string, at: Date): void {
    if (this.stopped || this.wakeUps.size >= (this.options.maxWakeUps ?? DEFAULT_MAX_WAKE_UPS)) return;
    this.wakeUps.push(at.getTime(), deliveryId);
    this.armWakeTimer();
  }

  /** Starts the poll and, on a replica set, the change stream. */
  start(): void {
    if (this.stopped) return;
    this.poll.start();
    if (this.options.changeStreams && !this.stopWatching) {
      this.stopWatching = this.deliveries.watchDue((id) => this.dispatcher.submit(id), this.onError);
    }
  }

  /**
   * One poll: settles the deliveries a crash left with no attempt, then queues the due ones nobody holds.
   * Answers once they are queued, not run.
   */
  async pollNow(): Promise<void> {
    const now = this.clock();
    if (now.getTime() - this.exhaustedCheckedAt >= EXHAUSTED_CHECK_MS) {
      this.exhaustedCheckedAt = now.getTime();
      await this.deliveries.settleExhausted(MAX_DELIVERY_ATTEMPTS, now);
    }
    const dueBy = new Date(now.getTime() - this.options.pollStaleAfterMs);
    const due = await this.deliveries.findDue(now, dueBy, this.options.concurrency);
    // Processes polling together read the same oldest deliveries; each tries them in its own order, so their
    // claims (conditional updates) mostly go to different deliveries instead of colliding.
    for (let i = due.length - 1; i > 0; i--) {
      const j = Math.floor(Math.random() * (i + 1));
      [due[i], due[j]] = [due[j]!, due[i]!];
    }
    for (const id of due) if (!this.startedElsewhere(id)) this.dispatcher.submit(id);
  }

  /** Deliveries another part of this process starts itself (recoveries, at their pace): the poll leaves them. */
  leaveToOthers(startedElsewhere: (deliveryId: string) => boolean): void {
    this.startedElsewhere = startedElsewhere;
  }

  /** Resolves once no attempt runs or waits in this process (tests). */
  whenIdle(): Promise<void> {
    return this.dispatcher.whenIdle();
  }

  /** Retry wake-ups waiting in this process. */
  get pendingWakeUps(): number {
    return this.wakeUps.size;
  }

  /** Stops every source and waits for the attempts in flight; what was queued stays due in the records. */
  async stop(): Promise<void> {
    this.stopped = true;
    await this.stopWatching?.();
    this.stopWatching = null;
    if (this.wakeTimer) clearTimeout(this.wakeTimer);
    this.wakeTimer = null;
    this.wakeUps.clear();
    await this.poll.stop();
    await this.dispatcher.stop();
  }

  /** One timer, for the earliest wake-up. */
  private armWakeTimer(): void {
    const next = this.wakeUps.earliest();
    if (next === undefined || (this.wakeTimer && this.wakeTimerAt <= next)) return;
    if (this.wakeTimer) clearTimeout(this.wakeTimer);
    this.wakeTimerAt = next;
    const delay = Math.min(MAX_TIMER_MS, Math.max(0, next - this.clock().getTime()));
    this.wakeTimer = setTimeout(() => this.wake(), delay);
    this.wakeTimer.unref();
  }

  private wake(): void {
    this.wakeTimer = null;
    this.wakeTimerAt = Infinity;
    const now = this.clock().getTime();
    for (let at = this.wakeUps.earliest(); at !== undefined && at <= now; at = this.wakeUps.earliest()) {
      this.dispatcher.submit(this.wakeUps.pop()!);
    }
    this.armWakeTimer();
  }
}

/** A binary min-heap of (time, delivery id). */
class WakeUpHeap {
  private readonly times: number[] = [];
  private readonly ids: string[] = [];

  get size(): number {
    return this.times.length;
  }

  earliest(): number | undefined {
    return this.times[0];
  }

  clear(): void {
    this.times.length = 0;
    this.ids.length = 0;
  }

  push(time: number, id: string): void {
    let i = this.times.length;
    this.times.push(time);
    this.ids.push(id);
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (this.times[parent]! <= time) break;
      this.move(parent, i);
      i = parent;
    }
    this.times[i] = time;
    this.ids[i] = id;
  }

  /** Removes the earliest entry; answers its id. */
  pop(): string | undefined {
    if (this.times.length === 0) return undefined;
    const top = this.ids[0];
    const time = this.times.pop()!;
    const id = this.ids.pop()!;
    const n = this.times.length;
    if (n > 0) {
      let i = 0;
      for (;;) {
        let child = 2 * i + 1;
        if (child >= n) break;
        if (child + 1 < n && this.times[child + 1]! < this.times[child]!) child += 1;
        if (this.times[child]! >= time) break;
        this.move(child, i);
        i = child;
      }
      this.times[i] = time;
      this.ids[i] = id;
    }
    return top;
  }

  private move(from: number, to: number): void {
    this.times[to] = this.times[from]!;
    this.ids[to] = this.ids[from]!;
  }
}
