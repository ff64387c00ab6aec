// What a creating method learns from the Idempotency-Key claim of its call: the seed of its reserved ids, and
// whether an earlier run of the same request died holding the key (it may have written its object already).
import { createContextKey, type HandlerContext } from "@connectrpc/connect";

export interface CreationReservation {
  seed: string;
  /** An earlier run died after claiming the key: look for what it wrote before writing anything. */
  resumed: boolean;
}

export const creationReservationKey = createContextKey<CreationReservation | null>(null, { description: "idempotent creation" });

/** The call's reservation, or null when it carries no Idempotency-Key. */
export function reservationOf(context: HandlerContext): CreationReservation | null {
  return context.values.get(creationReservationKey);
}
