// Runs the event relay's sweep on a timer: events whose request died before relaying them are relayed here.
import { PeriodicTask } from "../lib/periodic-task.ts";
import type { EventRelay } from "./event-relay.ts";

export interface RelaySweeperOptions {
  intervalMs: number;
  /** Outboxes younger than this still belong to their request. */
  staleAfterMs: number;
}

export class RelaySweeper {
  private readonly task: PeriodicTask;

  constructor(
    private readonly relay: EventRelay,
    private readonly options: RelaySweeperOptions,
    onError: (error: unknown) => void,
  ) {
    this.task = new PeriodicTask(() => this.sweepUntilDone(), options.intervalMs, onError);
  }

  start(): void {
    this.task.start();
  }

  /** Sweeps until nothing stale is left. */
  private async sweepUntilDone(): Promise<void> {
    while ((await this.relay.sweep(this.options.staleAfterMs)) > 0);
  }

  async stop(): Promise<void> {
    await this.task.stop();
  }
}
