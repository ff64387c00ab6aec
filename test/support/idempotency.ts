// Idempotency-Key records as a crash would leave them, for the tests of recovery points.
import { expect } from "chai";
import type { TestService } from "./test-service.ts";

/** As a process killed after writing would leave it: the key still claimed, its holder gone, nothing stored. */
export async function cutOff(svc: TestService, key: string): Promise<void> {
  const records = svc.database.db.collection("idempotency_keys");
  const updated = await records.updateOne(
    { _id: { $regex: `\\|${key}$` } as never },
    { $set: { state: "running", response: null, locked_until: new Date(0) } },
  );
  expect(updated.matchedCount, `the record of ${key}`).to.equal(1);
}
