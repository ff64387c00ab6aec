// Helpers of the money tests: users able to transact, their balance, and the events of a transaction.
import { expect } from "chai";
import { eventually } from "../support/eventually.ts";
import { uniquePhone } from "../support/phones.ts";
import type { TestService } from "../support/test-service.ts";

/**
 * A user whose kyc_status is approved. Set directly in the database: the KYC sessions' sandbox approval is a
 * different feature with its own tests, and these tests need only its outcome.
 */
export async function approvedUser(svc: TestService, key = svc.sandboxKey): Promise<string> {
  const created = await svc.request("POST", "/v1/users", { key, body: { phone: uniquePhone() } });
  expect(created.status).to.equal(201);
  await svc.database.db.collection("users").updateOne({ _id: created.body.id }, { $set: { kyc_status: "approved" } });
  return created.body.id as string;
}

export async function balanceOf(svc: TestService, userId: string, key = svc.sandboxKey) {
  const wallets = await svc.request("GET", `/v1/users/${userId}/wallets`, { key });
  expect(wallets.status).to.equal(200);
  return wallets.body.data[0].balance as { available_usd: number; pending_in_usd: number; pending_out_usd: number };
}

/** A completed sandbox deposit of `amount` dollars (complete_after_seconds 0), waited for. */
export async function fund(svc: TestService, userId: string, amount: number): Promise<void> {
  const deposit = await svc.request("POST", `/v1/sandbox/users/${userId}/deposits`, { body: { amount_usd: amount, complete_after_seconds: 0 } });
  expect(deposit.status).to.equal(201);
  await eventually(
    () => svc.request("GET", `/v1/transactions/${deposit.body.id}`),
    (r) => r.body.status === "completed",
    8000,
  );
}

/** The event log's events about one transaction, oldest first. */
export async function eventsOf(
  svc: TestService,
  transactionId: string,
): Promise<{ id: string; type: string; data: { object: Record<string, unknown> } }[]> {
  const events = await svc.database.db.collection("events").find({ "data.object.id": transactionId }).sort({ created_at: 1 }).toArray();
  return events.map((e) => ({ id: String(e._id), type: e.type as string, data: e.data as { object: Record<string, unknown> } }));
}
