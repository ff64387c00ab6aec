// KYC session creation with an Idempotency-Key: a replay answers the stored session, and a retry whose first run
// was cut off (a crash, or a 5xx) answers the session that run wrote under its reserved id instead of opening a
// second one, or opens it under that id when the first run wrote nothing.
import { expect } from "chai";
import type { SimulatedKycProvider } from "../../src/identity/kyc-provider.ts";
import { expectError } from "../support/errors.ts";
import { cutOff } from "../support/idempotency.ts";
import { uniquePhone } from "../support/phones.ts";
import { startTestService, type TestService } from "../support/test-service.ts";

describe("KYC session creation with an Idempotency-Key", function () {
  this.timeout(30_000);
  let svc: TestService;
  const newUser = async (key = svc.sandboxKey) => {
    const created = await svc.request("POST", "/v1/users", { key, body: { phone: uniquePhone() } });
    expect(created.status, created.text).to.equal(201);
    return created.body.id as string;
  };
  const createSession = (userId: string, idempotencyKey: string, key = svc.sandboxKey) =>
    svc.request("POST", `/v1/users/${userId}/kyc-sessions`, { key, body: {}, headers: { "idempotency-key": idempotencyKey } });
  const sessionIdsOf = async (userId: string, key = svc.sandboxKey) => {
    const listed = await svc.request("GET", `/v1/users/${userId}/kyc-sessions`, { key });
    expect(listed.status, listed.text).to.equal(200);
    return (listed.body.data as { id: string; status: string }[]).map((s) => `${s.id}:${s.status}`);
  };

  before(async () => {
    svc = await startTestService();
  });
  after(async () => {
    await svc.stop();
  });

  it("replays the stored answer: the same session, one session in the list", async () => {
    const userId = await newUser();
    const first = await createSession(userId, "kyc-replay-1");
    expect(first.status, first.text).to.equal(201);
    const replayed = await createSession(userId, "kyc-replay-1");
    expect(replayed.status).to.equal(201);
    expect(replayed.headers.get("idempotent-replayed")).to.equal("true");
    expect(replayed.body).to.deep.equal(first.body);
    expect(await sessionIdsOf(userId)).to.deep.equal([`${first.body.id}:requires_input`]);
  });

  it("answers the session a cut-off first run wrote (201, same id) instead of replacing it with a second", async () => {
    const userId = await newUser();
    const first = await createSession(userId, "kyc-cut-1");
    expect(first.status, first.text).to.equal(201);
    await cutOff(svc, "kyc-cut-1");
    const retried = await createSession(userId, "kyc-cut-1");
    expect(retried.status, retried.text).to.equal(201);
    expect(retried.headers.get("idempotent-replayed")).to.equal(null);
    expect(retried.body).to.deep.equal(first.body);
    expect(await sessionIdsOf(userId)).to.deep.equal([`${first.body.id}:requires_input`]);
    // Now stored: the next retry is a plain replay.
    const replayed = await createSession(userId, "kyc-cut-1");
    expect(replayed.headers.get("idempotent-replayed")).to.equal("true");
    expect(replayed.body.id).to.equal(first.body.id);
  });

  it("opens the session under its reserved id when the cut-off first run wrote nothing", async () => {
    const userId = await newUser();
    const first = await createSession(userId, "kyc-cut-2");
    expect(first.status, first.text).to.equal(201);
    // As if the first run had died before its write: the session and the pending status are gone.
    const users = svc.database.db.collection<{ _id: string }>("users");
    await users.updateOne({ _id: userId }, { $set: { kyc_sessions: [], kyc_status: "none" } });
    await cutOff(svc, "kyc-cut-2");
    const retried = await createSession(userId, "kyc-cut-2");
    expect(retried.status, retried.text).to.equal(201);
    expect(retried.body.id, "the id reserved for this key").to.equal(first.body.id);
    expect(await sessionIdsOf(userId)).to.deep.equal([`${first.body.id}:requires_input`]);
  });

  it("does not answer another user's session: a cut-off key retried for another user is refused as a reuse", async () => {
    const userId = await newUser();
    const other = await newUser();
    const first = await createSession(userId, "kyc-cut-3");
    expect(first.status, first.text).to.equal(201);
    await cutOff(svc, "kyc-cut-3");
    const reused = await createSession(other, "kyc-cut-3");
    expectError(reused, 422, "idempotency_error", "idempotency_key_reuse");
    expect(await sessionIdsOf(other)).to.deep.equal([]);
  });

  it("live: after the provider's 503 the retry with the same key opens one session, under the key's id", async () => {
    const provider = svc.app.kycProvider as SimulatedKycProvider;
    const userId = await newUser(svc.liveKey);
    provider.failNext(1);
    const failed = await createSession(userId, "kyc-live-1", svc.liveKey);
    expectError(failed, 503, "api_error", "kyc_session_unavailable");
    const retried = await createSession(userId, "kyc-live-1", svc.liveKey);
    expect(retried.status, retried.text).to.equal(201);
    expect(retried.body.url).to.equal(`https://kyc.simulated.invalid/sessions/${retried.body.id}`);
    const again = await createSession(userId, "kyc-live-1", svc.liveKey);
    expect(again.headers.get("idempotent-replayed")).to.equal("true");
    expect(again.body.id).to.equal(retried.body.id);
    expect(await sessionIdsOf(userId, svc.liveKey)).to.deep.equal([`${retried.body.id}:requires_input`]);
  });
});
