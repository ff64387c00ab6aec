// The in-process queue of fan-out's first attempts: new deliveries start as soon as fan-out has built them, without
// waiting for their job. At most `concurrency` attempts run at once; an id already queued is not queued twice.
// Attempts start at most `startsPerTurn` to an event-loop turn, those of a fan-out and those taking the slot of an
// attempt that ended alike: starting one (URL checks, signing, opening its request) costs a fraction of a
// millisecond, and hundreds started together made turns of 50 to 100 ms in which nothing else of the process (an
// event stream's write, a database reply) ran. Slots are freed together too: the outcomes of a batch are recorded by
// one bulk write, and its reply ended every attempt of the batch in the same turn.

export type AttemptRunner<H> = (deliveryId: string, hints: H | undefined) => Promise<void>;

/**
 * Attempts that may wait, in slots' worth, before a fan-out waits for room (`room`): enough queued work for the
 * slots while the relay writes its next batch (at one slot's worth, attempts ran out between batches and slots
 * went idle), little enough that a record held until its outcome waits a fraction of a second in memory.
 */
const ROOM_IN_SLOTS = 4;

/** Attempts started in one event-loop turn unless the constructor says otherwise. */
export const DEFAULT_STARTS_PER_TURN = 32;

interface RoomWaiter {
  resolve: () => void;
  timer: NodeJS.Timeout;
}

interface QueuedAttempt<H> {
  deliveryId: string;
  hints: H | undefined;
}

export class DeliveryDispatcher<H> {
  private queue: QueuedAttempt<H>[] = [];
  private head = 0;
  private readonly queued = new Set<string>();
  /** Hints that arrived for an id already queued: a claim made since must reach the attempt that runs. */
  private readonly laterHints = new Map<string, H>();
  private running = 0;
  private stopped = false;
  private idle: (() => void)[] = [];
  /** Attempts started in this turn; a turn that starts any ends by resetting it and starting the ones held back. */
  private startedThisTurn = 0;
  /** Fan-outs waiting for the backlog to shrink (`room`). */
  private readonly roomWaiters = new Set<RoomWaiter>();

  constructor(
    private readonly run: AttemptRunner<H>,
    private readonly concurrency: number,
    private readonly onError: (error: unknown) => void,
    private readonly startsPerTurn = DEFAULT_STARTS_PER_TURN,
  ) {}

  submit(deliveryId: string, hints?: H): void {
    if (this.stopped) return;
    if (this.queued.has(deliveryId)) {
      if (hints !== undefined) this.laterHints.set(deliveryId, hints);
      return;
    }
    this.queued.add(deliveryId);
    this.queue.push({ deliveryId, hints });
    this.pump();
  }

  /** Resolves once no attempt runs or waits. */
  whenIdle(): Promise<void> {
    if (this.isIdle()) return Promise.resolve();
    return new Promise<void>((resolve) => this.idle.push(resolve));
  }

  private isIdle(): boolean {
    return this.running === 0 && (this.stopped || this.backlog === 0);
  }

  private settleIdle(): void {
    if (this.isIdle()) for (const resolve of this.idle.splice(0)) resolve();
  }

  /** Attempts waiting for a free slot. */
  get backlog(): number {
    return this.queue.length - this.head;
  }

  /**
   * Resolves once at most ROOM_IN_SLOTS times `concurrency` attempts wait for a slot, or `maxWaitMs` has passed:
   * what a fan-out waits for before it goes on, so that events are not relayed much faster than their first
   * attempts run, while a slow receiver holding every slot delays a relay by `maxWaitMs` at most.
   */
  room(maxWaitMs: number): Promise<void> {
    if (this.hasRoom()) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const timer = setTimeout(() => this.admit(waiter), maxWaitMs);
      const waiter = { resolve, timer };
      this.roomWaiters.add(waiter);
    });
  }

  private hasRoom(): boolean {
    return this.stopped || this.backlog <= ROOM_IN_SLOTS * this.concurrency;
  }

  private admit(waiter: RoomWaiter): void {
    clearTimeout(waiter.timer);
    this.roomWaiters.delete(waiter);
    waiter.resolve();
  }

  private admitWaiters(): void {
    if (this.roomWaiters.size > 0 && this.hasRoom()) for (const waiter of [...this.roomWaiters]) this.admit(waiter);
  }

  /** Starts what the free slots and this turn's count allow. */
  private pump(): void {
    while (this.startedThisTurn < this.startsPerTurn && this.startOne()) {
      // setImmediate runs after the I/O this turn's poll found ready: the next turn's starts wait for that, not longer,
      // so the count spreads starts over turns without leaving the loop idle while attempts wait.
      if (this.startedThisTurn++ === 0) setImmediate(() => this.nextTurn());
    }
  }

  /** Starts the next queued attempt if a slot is free; whether it did. */
  private startOne(): boolean {
    if (this.stopped || this.running >= this.concurrency || this.head >= this.queue.length) return false;
    const item = this.queue[this.head]!;
    this.queue[this.head++] = undefined as never;
    if (this.head > 1024 && this.head * 2 > this.queue.length) {
      this.queue = this.queue.slice(this.head);
      this.head = 0;
    }
    this.running += 1;
    const hints = this.laterHints.get(item.deliveryId) ?? item.hints;
    this.laterHints.delete(item.deliveryId);
    this.run(item.deliveryId, hints)
      .catch(this.onError)
      .finally(() => {
        this.running -= 1;
        this.queued.delete(item.deliveryId);
        // A claim that arrived while this attempt ran (which then found the delivery held) runs next.
        const later = this.laterHints.get(item.deliveryId);
        if (later !== undefined) {
          this.laterHints.delete(item.deliveryId);
          this.submit(item.deliveryId, later);
        }
        this.pump();
        this.settleIdle();
      });
    return true;
  }

  private nextTurn(): void {
    this.startedThisTurn = 0;
    this.pump();
    this.admitWaiters();
    this.settleIdle();
  }

  /**
   * Takes no more work and waits for the running attempts. Queued ones stay pending in the database, and their
   * jobs run them once their lease is over, in any process.
   */
  async stop(): Promise<void> {
    this.stopped = true;
    this.queue = [];
    this.head = 0;
    this.queued.clear();
    this.laterHints.clear();
    this.admitWaiters();
    if (this.running > 0) await new Promise<void>((resolve) => this.idle.push(resolve));
  }
}
