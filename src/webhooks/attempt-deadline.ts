// The time limit of one delivery attempt: one timer, and what ends the phase the attempt is in (resolving and
// vetting its host, or its request) when the limit passes or the attempt is cut short. Not an AbortController: a
// signal and its listeners per attempt cost more of the main thread than the rest of an attempt's bookkeeping.

export class AttemptDeadline {
  /** Whether the limit passed (or the attempt was cut short): a failure from then on is a `timeout`. */
  passed = false;
  /** Ends the attempt now (`pass`, bound once): the timer's callback, and what a cut-short calls. */
  readonly end: () => void;
  private onPass: (() => void) | null = null;
  private readonly timer: ReturnType<typeof setTimeout>;

  constructor(limitMs: number) {
    this.end = this.pass.bind(this);
    this.timer = setTimeout(this.end, limitMs);
  }

  /** What ends the current phase when the limit passes; run at once if it has passed. */
  during(onPass: () => void): void {
    if (this.passed) onPass();
    else this.onPass = onPass;
  }

  /** The current phase is over: nothing to end any more. */
  phaseDone(): void {
    this.onPass = null;
  }

  /** The attempt is over. */
  dispose(): void {
    clearTimeout(this.timer);
    this.onPass = null;
  }

  private pass(): void {
    if (this.passed) return;
    this.passed = true;
    const onPass = this.onPass;
    this.onPass = null;
    onPass?.();
  }
}
