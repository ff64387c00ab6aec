// What a creating method learns from the Idempotency-Key claim of its call: the seed of its reserved ids, and
// whether an earlier run of the same request died holding the key (it may have written its object already).
// It also collects the method's writes that may finish alongside the storing of its answer.
import { createContextKey, type HandlerContext } from "@connectrpc/connect";

export interface CreationReservation {
  seed: string;
  /** An earlier run died after claiming the key: look for what it wrote before writing anything. */
  resumed: boolean;
  /**
   * Writes the answer must wait for that need not precede the storing of it (a projection of what the method
   * wrote): the pipeline awaits them together with that write, so the call makes one round trip fewer. They
   * never reject: a failure is theirs to report.
   */
  answerWrites: Promise<void>[];
}

export const creationReservationKey = createContextKey<CreationReservation | null>(null, { description: "idempotent creation" });

/** The call's reservation, or null when it carries no Idempotency-Key. */
export function reservationOf(context: HandlerContext): CreationReservation | null {
  return context.values.get(creationReservationKey);
}

/**
 * Finishes `write` before the call answers: alongside the storing of the answer when the call has an
 * Idempotency-Key, at once otherwise.
 */
export async function finishBeforeAnswer(reservation: CreationReservation | null, write: Promise<void>): Promise<void> {
  if (reservation) reservation.answerWrites.push(write);
  else await write;
}
