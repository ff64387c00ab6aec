// A transaction as the ledger holds it in flight, for the store's and the ledger's tests: a simulated USD deposit of
// $10.00, pending at version 1, with the fields a test names in place of these.
import type { TransactionRecord } from "../../src/store/transaction-repository.ts";

export function transactionRecord(fields: Pick<TransactionRecord, "id" | "user_id"> & Partial<TransactionRecord>): TransactionRecord {
  const at = fields.created_at ?? new Date("2026-01-01T00:00:00Z");
  return {
    project_id: "proj_records",
    livemode: false,
    wallet_id: `wal_${fields.user_id}`,
    type: "deposit",
    amount_cents: 1000,
    fee_cents: 0,
    status: "pending",
    failure_code: null,
    failure_message: null,
    fiat_currency: "USD",
    fiat_amount_minor: 1000,
    fiat_exponent: 2,
    description: null,
    simulated: true,
    reference: null,
    created_at: at,
    updated_at: at,
    version: 1,
    ...fields,
  };
}
