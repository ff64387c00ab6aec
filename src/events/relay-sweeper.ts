// Runs the event relay's sweep as a recurring Agenda job (one process at a time): events whose request died before
// relaying them are relayed here.
import type { JobQueue } from "../jobs/job-queue.ts";
import type { EventRelay } from "./event-relay.ts";

/** The recurring job of the relay's sweep. */
const RELAY_SWEEP_JOB = "relay-sweep";

export interface RelaySweeperOptions {
  intervalMs: number;
  /** Outboxes younger than this still belong to their request. */
  staleAfterMs: number;
}

export class RelaySweeper {
  constructor(
    private readonly relay: EventRelay,
    private readonly jobs: JobQueue,
    private readonly options: RelaySweeperOptions,
  ) {}

  /** Schedules the sweep (roles all and worker); it runs wherever Agenda runs. */
  async start(): Promise<void> {
    await this.jobs.every(RELAY_SWEEP_JOB, this.options.intervalMs, () => this.sweepUntilDone());
  }

  /** Sweeps until nothing stale is left. */
  async sweepUntilDone(): Promise<void> {
    while ((await this.relay.sweep(this.options.staleAfterMs)) > 0);
  }
}
