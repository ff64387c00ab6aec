// AdminService.RecordDeposit's reference is the deposit's idempotency key (per project and environment): the same
// request again answers the same transaction; the reference with another user, amount, fee, currency or fiat
// amount is 422 idempotency_key_reuse (Connect: invalid_argument with ErrorInfo reason idempotency_key_reuse),
// and nobody is credited by it. Concurrent requests with one reference make one deposit.
import { expect } from "chai";
import { expectConnectError } from "../support/errors.ts";
import { startTestService, type TestService } from "../support/test-service.ts";
import { approvedUser, balanceOf, eventsOf } from "./support.ts";

describe("AdminService.RecordDeposit: the reference as idempotency key", function () {
  this.timeout(60_000);
  let svc: TestService;
  let serial = 0;

  before(async () => {
    svc = await startTestService();
  });
  after(async () => {
    await svc.stop();
  });

  /** RecordDeposit in Connect JSON, as any HTTP client sends it. */
  const record = (body: Record<string, unknown>) =>
    svc.request("POST", "/svc.admin.v1.AdminService/RecordDeposit", {
      key: null,
      headers: { authorization: `Bearer ${svc.adminToken}` },
      body: { project_id: svc.projectId, livemode: true, ...body },
    });
  const liveUser = () => approvedUser(svc, svc.liveKey);
  const liveBalance = (userId: string) => balanceOf(svc, userId, svc.liveKey);
  const NOTHING = { available_usd: 0, pending_in_usd: 0, pending_out_usd: 0 };
  const transactionCount = (userId: string) => svc.database.db.collection("transactions").countDocuments({ user_id: userId });

  it("replays the deposit for the same request, also written differently (currency case, USD fiat_amount given)", async () => {
    const userId = await liveUser();
    const reference = `dep-replay-${serial++}`;
    const first = await record({ user_id: userId, amount_usd: 25, fee_usd: 1, fiat_currency: "usd", reference });
    expect(first.status, first.text).to.equal(200);
    for (const body of [
      { user_id: userId, amount_usd: 25, fee_usd: 1, fiat_currency: "usd", reference },
      { user_id: userId, amount_usd: 25, fee_usd: 1, fiat_currency: "USD", fiat_amount: 25, reference },
    ]) {
      const again = await record(body);
      expect(again.status, again.text).to.equal(200);
      expect(again.body).to.deep.equal(first.body);
    }
    expect(await liveBalance(userId)).to.deep.equal({ available_usd: 0, pending_in_usd: 24, pending_out_usd: 0 });
    expect((await eventsOf(svc, first.body.transaction.id)).map((e) => e.type)).to.deep.equal(["transaction.received"]);
  });

  it("refuses the reference with another user, amount, fee, currency or fiat amount: 422 idempotency_key_reuse, nobody credited", async () => {
    const userId = await liveUser();
    const other = await liveUser();
    const reference = `dep-reuse-${serial++}`;
    const original = { user_id: userId, amount_usd: 50, fee_usd: 2, fiat_currency: "EUR", fiat_amount: 46.5, reference };
    const first = await record(original);
    expect(first.status, first.text).to.equal(200);
    const variants: [string, Record<string, unknown>][] = [
      ["user", { user_id: other }],
      ["amount", { amount_usd: 51 }],
      ["fee", { fee_usd: 0 }],
      ["currency", { fiat_currency: "GBP" }],
      ["fiat amount", { fiat_amount: 46.6 }],
    ];
    for (const [what, change] of variants) {
      const refused = await record({ ...original, ...change });
      expectConnectError(refused, 400, "invalid_argument", "idempotency_key_reuse", "reference");
      expect(refused.body.message, what).to.match(/reference/);
    }
    expect(await liveBalance(other), "the other user is not credited").to.deep.equal(NOTHING);
    expect(await transactionCount(other)).to.equal(0);
    expect(await liveBalance(userId)).to.deep.equal({ available_usd: 0, pending_in_usd: 48, pending_out_usd: 0 });
    const again = await record(original);
    expect(again.body).to.deep.equal(first.body);
    // Settled since: the same request still answers it, another one is still refused.
    expect((await svc.admin.settleTransaction({ id: first.body.transaction.id, outcome: "completed" })).transaction!.status).to.equal("completed");
    expect((await record(original)).body.transaction.status).to.equal("completed");
    expectConnectError(await record({ ...original, user_id: other }), 400, "invalid_argument", "idempotency_key_reuse", "reference");
  });

  it("keeps references apart per environment: the same reference in sandbox is another deposit", async () => {
    const userId = await liveUser();
    const sandboxUser = await approvedUser(svc);
    const reference = `dep-env-${serial++}`;
    const live = await record({ user_id: userId, amount_usd: 10, reference });
    const sandbox = await record({ livemode: false, user_id: sandboxUser, amount_usd: 10, reference });
    expect(live.status, live.text).to.equal(200);
    expect(sandbox.status, sandbox.text).to.equal(200);
    expect(sandbox.body.transaction.id).to.not.equal(live.body.transaction.id);
  });

  it("makes one deposit of concurrent calls with the same request", async () => {
    const userId = await liveUser();
    const reference = `dep-concurrent-${serial++}`;
    const answers = await Promise.all(Array.from({ length: 12 }, () => record({ user_id: userId, amount_usd: 30, reference })));
    for (const answer of answers) expect(answer.status, answer.text).to.equal(200);
    expect(new Set(answers.map((a) => a.body.transaction.id)).size).to.equal(1);
    expect(await transactionCount(userId)).to.equal(1);
    expect(await liveBalance(userId)).to.deep.equal({ available_usd: 0, pending_in_usd: 30, pending_out_usd: 0 });
    expect((await eventsOf(svc, answers[0]!.body.transaction.id)).map((e) => e.type)).to.deep.equal(["transaction.received"]);
  });

  it("lets exactly one of concurrent calls for different users have the reference; the others are refused", async () => {
    const users = await Promise.all(Array.from({ length: 6 }, () => liveUser()));
    const reference = `dep-race-${serial++}`;
    const answers = await Promise.all(users.map((userId) => record({ user_id: userId, amount_usd: 40, reference })));
    const accepted = answers.filter((a) => a.status === 200);
    expect(accepted, answers.map((a) => a.text).join("\n")).to.have.length(1);
    for (const refused of answers.filter((a) => a.status !== 200))
      expectConnectError(refused, 400, "invalid_argument", "idempotency_key_reuse", "reference");
    const credited = [];
    for (const userId of users) if ((await liveBalance(userId)).pending_in_usd !== 0) credited.push(userId);
    expect(credited).to.deep.equal([accepted[0]!.body.transaction.user_id]);
  });

  it("compares a deposit recorded before references were kept by its stored fields", async () => {
    const userId = await liveUser();
    const other = await liveUser();
    const reference = `dep-legacy-${serial++}`;
    const first = await record({ user_id: userId, amount_usd: 12, reference });
    expect(first.status, first.text).to.equal(200);
    await svc.database.db.collection("deposit_references").deleteMany({});
    expect((await record({ user_id: userId, amount_usd: 12, reference })).body).to.deep.equal(first.body);
    expectConnectError(await record({ user_id: other, amount_usd: 12, reference }), 400, "invalid_argument", "idempotency_key_reuse", "reference");
    expectConnectError(await record({ user_id: userId, amount_usd: 13, reference }), 400, "invalid_argument", "idempotency_key_reuse", "reference");
    expect(await liveBalance(other)).to.deep.equal(NOTHING);
  });

  it("leaves the reference free when the request is refused before a deposit is opened", async () => {
    const userId = await liveUser();
    const reference = `dep-refused-${serial++}`;
    const unknown = await record({ user_id: "123456789", amount_usd: 12, reference });
    expectConnectError(unknown, 404, "not_found", "user_not_found");
    const corrected = await record({ user_id: userId, amount_usd: 12, reference });
    expect(corrected.status, corrected.text).to.equal(200);
    expect(await liveBalance(userId)).to.deep.equal({ available_usd: 0, pending_in_usd: 12, pending_out_usd: 0 });
  });
});
