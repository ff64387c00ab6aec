// The attempts a delivering process has in flight, which it cuts short all at once when it stops. Each attempt adds
// its own abort while it runs. One listener per attempt on a shared AbortSignal would cost a walk of the signal's
// listeners at every addition and removal, with hundreds of attempts in flight at the service's concurrency.

export class InFlightAttempts {
  private readonly aborts = new Set<() => void>();
  private cut = false;

  /** Whether `cutShort` was called: an attempt that fails from now on failed because of it. */
  get isCutShort(): boolean {
    return this.cut;
  }

  /** Registers an attempt's abort; calls it at once if the attempts are already cut short. */
  add(abort: () => void): void {
    if (this.cut) abort();
    else this.aborts.add(abort);
  }

  delete(abort: () => void): void {
    this.aborts.delete(abort);
  }

  /** Aborts every attempt in flight, and every one added later. */
  cutShort(): void {
    this.cut = true;
    for (const abort of this.aborts) abort();
    this.aborts.clear();
  }
}
