// The one shape of everything a process starts after it is built and stops when it drains, and the one order in
// which a process does both.

/** A piece of background work or serving that the process starts at `listen` and stops at `close`. */
export interface Worker {
  start(): Promise<void>;
  /** Stops taking work at once; work still running at `deadline` (a `performance.now()` time) is cut short. */
  stop(deadline: number): Promise<void>;
}

/** Starts the workers one after the other, in the order given: a worker may rely on those before it. */
export async function startInOrder(workers: readonly Worker[]): Promise<void> {
  for (const worker of workers) await worker.start();
}

/** Stops the workers in the reverse order of their start, all within the one deadline of the drain. */
export async function stopInReverse(workers: readonly Worker[], deadline: number): Promise<void> {
  for (const worker of [...workers].reverse()) await worker.stop(deadline);
}

/** Workers started one after the other and stopped at the same time: their stops depend on each other. */
export function together(...workers: Worker[]): Worker {
  return {
    start: () => startInOrder(workers),
    stop: async (deadline) => {
      await Promise.all(workers.map((worker) => worker.stop(deadline)));
    },
  };
}

/** Milliseconds left until `deadline`, never negative. */
export function remainingMs(deadline: number): number {
  return Math.max(0, deadline - performance.now());
}

const nothing = async (): Promise<void> => {};

/** A worker with only a start (its work lives in the job queue, which stops it) or only a stop. */
export function worker(parts: { start?: () => Promise<void>; stop?: (deadline: number) => Promise<void> }): Worker {
  return { start: parts.start ?? nothing, stop: parts.stop ?? nothing };
}
