// What identifies a deposit a provider reported (AdminService.RecordDeposit): its reference is its idempotency
// key, so a repeated reference must bring the same request. Pure: the service compares, the store keeps.

/** What a recorded deposit's request is once normalized: the fields a repeated reference must bring again. */
export interface DepositRequestFields {
  project_id: string;
  livemode: boolean;
  user_id: string;
  amount_cents: number;
  fee_cents: number;
  fiat_currency: string;
  fiat_amount_minor: number;
}

/**
 * The fingerprint of a deposit request (AdminService.RecordDeposit), from its normalized fields: the same for
 * `fiat_currency` in any case and for a USD `fiat_amount` given or left to its default. A stored deposit's fields
 * give the fingerprint of the request that recorded it.
 */
export function depositFingerprint(fields: DepositRequestFields): string {
  const { project_id, livemode, user_id, amount_cents, fee_cents, fiat_currency, fiat_amount_minor } = fields;
  return JSON.stringify([project_id, livemode, user_id, amount_cents, fee_cents, fiat_currency, fiat_amount_minor]);
}
