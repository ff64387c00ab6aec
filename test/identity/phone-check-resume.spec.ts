// A phone verification check is a move (pending -> approved): with an Idempotency-Key, a retry of a check whose
// first run approved the code and was then cut off answers the approved verification, not 409
// no_pending_verification; a check approved by another request is still 409 to that retry.
import { expect } from "chai";
import { cutOff } from "../support/idempotency.ts";
import { uniquePhone } from "../support/phones.ts";
import { startTestService, type TestService } from "../support/test-service.ts";

describe("phone verification check across a cut-off run", () => {
  let svc: TestService;
  before(async () => {
    svc = await startTestService();
  });
  after(async () => {
    await svc.stop();
  });

  async function pendingVerification(): Promise<string> {
    const user = await svc.request("POST", "/v1/users", { body: { phone: uniquePhone() } });
    const started = await svc.request("POST", `/v1/users/${user.body.id}/verification`);
    expect(started.status).to.equal(200);
    return user.body.id as string;
  }

  const check = (userId: string, key: string | null) =>
    svc.request("POST", `/v1/users/${userId}/verification/check`, { body: { code: "000000" }, headers: key ? { "idempotency-key": key } : {} });

  it("answers the approval its first run wrote", async () => {
    const userId = await pendingVerification();
    const key = `phone-check-${userId}`;
    const first = await check(userId, key);
    expect(first.status).to.equal(200);
    await cutOff(svc, key);
    const retry = await check(userId, key);
    expect(retry.status, JSON.stringify(retry.body)).to.equal(200);
    expect(retry.headers.get("idempotent-replayed")).to.equal(null);
    expect(retry.body).to.deep.equal(first.body);
  });

  it("is still 409 no_pending_verification when another request approved it", async () => {
    const userId = await pendingVerification();
    const key = `phone-check-other-${userId}`;
    const mine = await check(userId, key);
    expect(mine.status).to.equal(200);
    await cutOff(svc, key);
    // The approval on record as a check without a key leaves it: no stamp of this key's run.
    await svc.database.db.collection("users").updateOne({ _id: userId as never }, { $unset: { "phone_verification.approved_by": "" } });
    const retry = await check(userId, key);
    expect(retry.status).to.equal(409);
    expect(retry.body.error.code).to.equal("no_pending_verification");
  });
});
