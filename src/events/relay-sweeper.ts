// Runs the event relay's sweep on a timer: events whose request died before relaying them are relayed here.
import type { EventRelay } from "./event-relay.ts";

export interface RelaySweeperOptions {
  intervalMs: number;
  /** Outboxes younger than this still belong to their request. */
  staleAfterMs: number;
}

export class RelaySweeper {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly relay: EventRelay,
    private readonly options: RelaySweeperOptions,
    private readonly onError: (error: unknown) => void,
  ) {}

  start(): void {
    this.timer ??= setInterval(() => {
      this.running = this.sweepNow().catch(this.onError);
    }, this.options.intervalMs);
    this.timer.unref();
  }

  /** Sweeps until nothing stale is left. */
  async sweepNow(): Promise<void> {
    while ((await this.relay.sweep(this.options.staleAfterMs)) > 0);
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.running;
  }
}
