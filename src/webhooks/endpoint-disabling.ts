// What disabling an endpoint means for its deliveries, whoever disables it (a PATCH by hand, the 20th failure in
// a row, or a worker that finds the endpoint disabled when it claims an attempt): none of them stays pending.
// Each settles as failed with `endpoint_disabled`, and can be replayed once the endpoint is enabled again.
import type { WebhookDeliveryRepository } from "../store/webhook-delivery-repository.ts";

export const ENDPOINT_DISABLED = "endpoint_disabled";

/** An attempt a worker claimed and will not send: it is given back, so it does not count. */
export interface UnsentAttempt {
  deliveryId: string;
  attempt: number;
}

/**
 * Settles every pending delivery of a disabled endpoint as failed (`endpoint_disabled`). Attempts already in
 * flight still complete; their outcome is not recorded over the settlement.
 */
export async function settleDeliveriesOfDisabledEndpoint(
  deliveries: WebhookDeliveryRepository,
  endpointId: string,
  now: Date,
  unsent?: UnsentAttempt,
): Promise<void> {
  if (unsent) await deliveries.settleUnsent(unsent.deliveryId, unsent.attempt, ENDPOINT_DISABLED, now);
  await deliveries.settleEndpointPending(endpointId, ENDPOINT_DISABLED, now);
}
