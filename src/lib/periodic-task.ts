// A task run every `intervalMs`, one run at a time: a tick that finds the last run still going is skipped, so a
// slow database never piles sweeps up on top of each other (each one making the next slower).
export class PeriodicTask {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;

  constructor(
    private readonly task: () => Promise<unknown>,
    private readonly intervalMs: number,
    private readonly onError: (error: unknown) => void,
  ) {}

  start(): void {
    this.timer ??= setInterval(() => void this.runNow(), this.intervalMs);
    this.timer.unref();
  }

  /** Runs the task now, or joins the run already going; resolves when that run ends (errors go to onError). */
  runNow(): Promise<void> {
    this.running ??= this.task()
      .then(() => undefined, this.onError)
      .finally(() => {
        this.running = null;
      });
    return this.running;
  }

  /** Stops the ticks and waits for the run going, if any. */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.running;
  }
}
