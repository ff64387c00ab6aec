// The in-process queue of fan-out's first attempts: new deliveries start as soon as their record exists, without
// waiting for their job. At most `concurrency` attempts run at once; an id already queued is not queued twice.

export type AttemptRunner<H> = (deliveryId: string, hints: H | undefined) => Promise<void>;

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

  constructor(
    private readonly run: AttemptRunner<H>,
    private readonly concurrency: number,
    private readonly onError: (error: unknown) => void,
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
    if (this.running === 0) return Promise.resolve();
    return new Promise<void>((resolve) => this.idle.push(resolve));
  }

  /** Attempts waiting for a free slot. */
  get backlog(): number {
    return this.queue.length - this.head;
  }

  private pump(): void {
    while (!this.stopped && this.running < this.concurrency && this.head < this.queue.length) {
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
          if (this.running === 0) for (const resolve of this.idle.splice(0)) resolve();
        });
    }
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
    if (this.running > 0) await new Promise<void>((resolve) => this.idle.push(resolve));
  }
}
