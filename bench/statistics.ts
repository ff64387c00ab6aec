// Summaries of a bench's per-round figures: every bench takes the median of its rounds, and the request-log bench
// says how far that median could move with other rounds of the same machine (a bootstrap interval).
import { seededRandom } from "../test/support/seeded-random.ts";

/** The median of some figures (the mean of the middle two of an even count). */
export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

/**
 * The 95% percentile-bootstrap interval of the median: the rounds resampled with replacement `resamples` times, and
 * the 2.5th and 97.5th percentiles of those samples' medians. Rounds are taken as independent draws of the machine,
 * which is what fresh processes every round are for.
 */
export function medianInterval(values: readonly number[], resamples = 10_000): { low: number; high: number } {
  if (values.length === 0) throw new Error("no figures to summarise");
  const random = seededRandom(values.length);
  const medians = new Float64Array(resamples);
  const sample = new Array<number>(values.length);
  for (let r = 0; r < resamples; r++) {
    for (let i = 0; i < values.length; i++) sample[i] = values[Math.floor(random() * values.length)]!;
    medians[r] = median(sample);
  }
  medians.sort();
  return { low: medians[Math.floor(0.025 * resamples)]!, high: medians[Math.ceil(0.975 * resamples) - 1]! };
}
