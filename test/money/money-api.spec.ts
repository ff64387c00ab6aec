// Money over REST: the wallet balance, sandbox deposits, withdrawals and their states, cancel, the simulator's
// complete and fail, the check order of money movements, lists and their filters, and the events.
import { expect } from "chai";
import { eventually } from "../support/eventually.ts";
import { uniquePhone } from "../support/phones.ts";
import { startTestService, type TestService } from "../support/test-service.ts";
import { approvedUser, balanceOf, eventsOf, fund } from "./support.ts";

describe("money: balances, deposits, withdrawals", function () {
  this.timeout(30_000);
  let svc: TestService;

  before(async () => {
    svc = await startTestService({ timings: { jobPollMs: 100 } });
  });
  after(async () => {
    await svc.stop();
  });

  it("shows a zero balance on a new wallet", async () => {
    const user = await approvedUser(svc);
    const wallets = await svc.request("GET", `/v1/users/${user}/wallets`);
    expect(wallets.body.data[0]).to.include({ object: "wallet", currency: "usd", user_id: user });
    expect(wallets.body.data[0].balance).to.deep.equal({ available_usd: 0, pending_in_usd: 0, pending_out_usd: 0 });
    expect(wallets.body.data[0].updated_at).to.be.a("string");
  });

  it("simulates a deposit: 201 pending with transaction.received, then completed by the job", async () => {
    const user = await approvedUser(svc);
    const res = await svc.request("POST", `/v1/sandbox/users/${user}/deposits`, {
      body: { amount_usd: 100.5, fee_usd: 0.5, fiat_currency: "eur", fiat_amount: 92.345, complete_after_seconds: 1 },
    });
    expect(res.status).to.equal(201);
    expect(res.body).to.include({ object: "transaction", type: "deposit", direction: "in", status: "pending", amount_usd: 100.5, fee_usd: 0.5 });
    expect(res.body).to.include({ fiat_currency: "EUR", fiat_amount: 92.35, livemode: false, user_id: user, failure_code: null });
    expect(res.body.id).to.match(/^txn_[A-Za-z0-9]{24}$/);
    expect(await balanceOf(svc, user)).to.deep.equal({ available_usd: 0, pending_in_usd: 100, pending_out_usd: 0 });
    const done = await eventually(
      () => svc.request("GET", `/v1/transactions/${res.body.id}`),
      (r) => r.body.status === "completed",
      8000,
    );
    expect(await balanceOf(svc, user)).to.deep.equal({ available_usd: 100, pending_in_usd: 0, pending_out_usd: 0 });
    const events = await eventsOf(svc, res.body.id);
    expect(events.map((e) => e.type)).to.deep.equal(["transaction.received", "transaction.completed"]);
    expect(events[0]!.data.object).to.deep.equal(res.body);
    expect(events[1]!.data.object).to.deep.equal(done.body);
  });

  it("rounds fiat amounts to the currency's minor unit (JPY 0 decimals, BHD 3)", async () => {
    const user = await approvedUser(svc);
    const jpy = await svc.request("POST", `/v1/sandbox/users/${user}/deposits`, {
      body: { amount_usd: 10, fiat_currency: "JPY", fiat_amount: 1500.6, complete_after_seconds: 3600 },
    });
    expect(jpy.body).to.include({ fiat_currency: "JPY", fiat_amount: 1501 });
    const bhd = await svc.request("POST", `/v1/sandbox/users/${user}/deposits`, {
      body: { amount_usd: 10, fiat_currency: "bhd", fiat_amount: 3.7654, complete_after_seconds: 3600 },
    });
    expect(bhd.body).to.include({ fiat_currency: "BHD", fiat_amount: 3.765 });
    const usd = await svc.request("POST", `/v1/sandbox/users/${user}/deposits`, { body: { amount_usd: 10.1, complete_after_seconds: 3600 } });
    expect(usd.body).to.include({ fiat_currency: "USD", fiat_amount: 10.1 });
  });

  it("refuses bad amounts and fields with 422 validation_error naming them", async () => {
    const user = await approvedUser(svc);
    const cases: [Record<string, unknown>, string][] = [
      [{ amount_usd: 1.234 }, "amount_usd"],
      [{ amount_usd: 0 }, "amount_usd"],
      [{ amount_usd: -5 }, "amount_usd"],
      [{ amount_usd: 1_000_000.01 }, "amount_usd"],
      [{ amount_usd: "5" }, "amount_usd"],
      [{ amount_usd: 5, fee_usd: 5 }, "fee_usd"],
      [{ amount_usd: 5, fee_usd: -1 }, "fee_usd"],
      [{ amount_usd: 5, fee_usd: 0.001 }, "fee_usd"],
      [{ amount_usd: 5, fiat_currency: "XYZ", fiat_amount: 1 }, "fiat_currency"],
      [{ amount_usd: 5, fiat_currency: "EUR" }, "fiat_amount"],
      [{ amount_usd: 5, complete_after_seconds: 3601 }, "complete_after_seconds"],
      [{ amount_usd: 5, nope: 1 }, "nope"],
    ];
    for (const [body, param] of cases) {
      const res = await svc.request("POST", `/v1/sandbox/users/${user}/deposits`, { body });
      expect(res.status, JSON.stringify(body)).to.equal(422);
      expect(res.body.error, JSON.stringify(body)).to.include({ code: "validation_error", param });
    }
    const max = await svc.request("POST", `/v1/sandbox/users/${user}/deposits`, { body: { amount_usd: 1_000_000, complete_after_seconds: 3600 } });
    expect(max.status).to.equal(201);
    const withdrawal = await svc.request("POST", `/v1/users/${user}/withdrawals`, { body: { amount_usd: 0.001 } });
    expect(withdrawal.body.error).to.include({ code: "validation_error", param: "amount_usd" });
    const long = await svc.request("POST", `/v1/users/${user}/withdrawals`, { body: { amount_usd: 1, description: "x".repeat(501) } });
    expect(long.body.error).to.include({ code: "validation_error", param: "description" });
  });

  it("applies the check order: 422, 404, user_suspended, kyc_required, wallet_not_ready, insufficient_funds", async () => {
    const body = { amount_usd: 5 };
    // 422 before 404.
    expect((await svc.request("POST", "/v1/users/999999999/withdrawals", { body: { amount_usd: 0 } })).status).to.equal(422);
    const notFound = await svc.request("POST", "/v1/users/999999999/withdrawals", { body });
    expect([notFound.status, notFound.body.error.code]).to.deep.equal([404, "user_not_found"]);
    expect((await svc.request("POST", "/v1/users/abc/withdrawals", { body })).body.error.code).to.equal("user_not_found");
    // Suspended and not approved: suspension first.
    const created = await svc.request("POST", "/v1/users", { body: { phone: uniquePhone() } });
    await svc.admin.suspendUser({ projectId: svc.projectId, livemode: false, userId: created.body.id });
    for (const path of [`/v1/users/${created.body.id}/withdrawals`, `/v1/sandbox/users/${created.body.id}/deposits`]) {
      const res = await svc.request("POST", path, { body });
      expect([res.status, res.body.error.code]).to.deep.equal([409, "user_suspended"]);
    }
    await svc.admin.unsuspendUser({ projectId: svc.projectId, livemode: false, userId: created.body.id });
    for (const path of [`/v1/users/${created.body.id}/withdrawals`, `/v1/sandbox/users/${created.body.id}/deposits`]) {
      const res = await svc.request("POST", path, { body });
      expect([res.status, res.body.error.code]).to.deep.equal([409, "kyc_required"]);
    }
    // A wallet not ready: kyc approved directly, wallet pending.
    await svc.database.db
      .collection("users")
      .updateOne({ _id: created.body.id }, { $set: { kyc_status: "approved", wallet_status: "pending", wallets: [] } });
    const notReady = await svc.request("POST", `/v1/users/${created.body.id}/withdrawals`, { body });
    expect([notReady.status, notReady.body.error.code]).to.deep.equal([409, "wallet_not_ready"]);
    const user = await approvedUser(svc);
    const poor = await svc.request("POST", `/v1/users/${user}/withdrawals`, { body });
    expect([poor.status, poor.body.error.code]).to.deep.equal([409, "insufficient_funds"]);
  });

  it("answers the same checks for a wallet it has seen (opened without a read): suspension, funds, another tenant", async () => {
    const user = await approvedUser(svc);
    await fund(svc, user, 10);
    const first = await svc.request("POST", `/v1/users/${user}/withdrawals`, { body: { amount_usd: 4 } });
    expect(first.status).to.equal(201);
    const overdraft = await svc.request("POST", `/v1/users/${user}/withdrawals`, { body: { amount_usd: 6.01 } });
    expect([overdraft.status, overdraft.body.error.code]).to.deep.equal([409, "insufficient_funds"]);
    const otherTenant = await svc.request("POST", `/v1/users/${user}/withdrawals`, { key: svc.liveKey, body: { amount_usd: 1 } });
    expect([otherTenant.status, otherTenant.body.error.code]).to.deep.equal([404, "user_not_found"]);
    await svc.admin.suspendUser({ projectId: svc.projectId, livemode: false, userId: user });
    for (const path of [`/v1/users/${user}/withdrawals`, `/v1/sandbox/users/${user}/deposits`]) {
      const res = await svc.request("POST", path, { body: { amount_usd: 1 } });
      expect([res.status, res.body.error.code]).to.deep.equal([409, "user_suspended"]);
    }
    await svc.admin.unsuspendUser({ projectId: svc.projectId, livemode: false, userId: user });
    const last = await svc.request("POST", `/v1/users/${user}/withdrawals`, { body: { amount_usd: 6 } });
    expect(last.status).to.equal(201);
    // Both withdrawals hold or took all of it (the first may have settled by now).
    expect((await balanceOf(svc, user)).available_usd).to.equal(0);
  });

  it("refuses live keys on sandbox routes (403 sandbox_only) before any lookup", async () => {
    for (const [path, body] of [
      ["/v1/sandbox/users/999999999/deposits", { amount_usd: 0 }],
      ["/v1/sandbox/transactions/txn_nope/complete", {}],
      ["/v1/sandbox/transactions/txn_nope/fail", {}],
    ] as const) {
      const res = await svc.request("POST", path, { key: svc.liveKey, body });
      expect([res.status, res.body.error.code]).to.deep.equal([403, "sandbox_only"]);
    }
  });

  it("runs a sandbox withdrawal: pending (amount + fee held), processing, completed with both events", async () => {
    const user = await approvedUser(svc);
    await fund(svc, user, 50);
    const res = await svc.request("POST", `/v1/users/${user}/withdrawals`, {
      body: { amount_usd: 20.25, description: "rent" },
      headers: { "idempotency-key": `w-${user}` },
    });
    expect(res.status).to.equal(201);
    expect(res.body).to.include({
      type: "withdrawal",
      direction: "out",
      status: "pending",
      amount_usd: 20.25,
      fee_usd: 0,
      description: "rent",
      fiat_currency: "USD",
    });
    expect(await balanceOf(svc, user)).to.deep.equal({ available_usd: 29.75, pending_in_usd: 0, pending_out_usd: 20.25 });
    await eventually(
      () => svc.request("GET", `/v1/transactions/${res.body.id}`),
      (r) => r.body.status === "processing",
      5000,
    );
    const done = await eventually(
      () => svc.request("GET", `/v1/transactions/${res.body.id}`),
      (r) => r.body.status === "completed",
      5000,
    );
    expect(await balanceOf(svc, user)).to.deep.equal({ available_usd: 29.75, pending_in_usd: 0, pending_out_usd: 0 });
    const events = await eventsOf(svc, res.body.id);
    expect(events.map((e) => e.type).sort()).to.deep.equal(["transaction.completed", "withdrawal.completed"]);
    for (const event of events) expect(event.data.object).to.deep.equal(done.body);
    // The same key answers the same withdrawal.
    const replay = await svc.request("POST", `/v1/users/${user}/withdrawals`, {
      body: { amount_usd: 20.25, description: "rent" },
      headers: { "idempotency-key": `w-${user}` },
    });
    expect(replay.body.id).to.equal(res.body.id);
  });

  it("fails a sandbox withdrawal of exactly 13.13 with destination_rejected, releasing the hold", async () => {
    const user = await approvedUser(svc);
    await fund(svc, user, 20);
    const res = await svc.request("POST", `/v1/users/${user}/withdrawals`, { body: { amount_usd: 13.13 } });
    const failed = await eventually(
      () => svc.request("GET", `/v1/transactions/${res.body.id}`),
      (r) => r.body.status === "failed",
      6000,
    );
    expect(failed.body).to.include({ failure_code: "destination_rejected" });
    expect(failed.body.failure_message).to.be.a("string");
    expect(await balanceOf(svc, user)).to.deep.equal({ available_usd: 20, pending_in_usd: 0, pending_out_usd: 0 });
    const events = await eventsOf(svc, res.body.id);
    expect(events.map((e) => e.type)).to.deep.equal(["withdrawal.failed"]);
    expect(events[0]!.data.object).to.deep.equal(failed.body);
  });

  it("cancels a pending withdrawal only (409 invalid_state after), and not deposits", async () => {
    const user = await approvedUser(svc);
    await fund(svc, user, 10);
    const res = await svc.request("POST", `/v1/users/${user}/withdrawals`, { body: { amount_usd: 4 } });
    const canceled = await svc.request("POST", `/v1/transactions/${res.body.id}/cancel`);
    expect(canceled.status).to.equal(200);
    expect(canceled.body.status).to.equal("canceled");
    expect(await balanceOf(svc, user)).to.deep.equal({ available_usd: 10, pending_in_usd: 0, pending_out_usd: 0 });
    const again = await svc.request("POST", `/v1/transactions/${res.body.id}/cancel`);
    expect([again.status, again.body.error.code]).to.deep.equal([409, "invalid_state"]);
    const deposit = await svc.request("POST", `/v1/sandbox/users/${user}/deposits`, { body: { amount_usd: 1, complete_after_seconds: 3600 } });
    const refused = await svc.request("POST", `/v1/transactions/${deposit.body.id}/cancel`);
    expect([refused.status, refused.body.error.code]).to.deep.equal([409, "invalid_state"]);
    const missing = await svc.request("POST", "/v1/transactions/txn_AAAAAAAAAAAAAAAAAAAAAAAA/cancel");
    expect([missing.status, missing.body.error.code]).to.deep.equal([404, "transaction_not_found"]);
    // Processing: too late to cancel.
    const other = await svc.request("POST", `/v1/users/${user}/withdrawals`, { body: { amount_usd: 1 } });
    await eventually(
      () => svc.request("GET", `/v1/transactions/${other.body.id}`),
      (r) => r.body.status !== "pending",
      5000,
    );
    const late = await svc.request("POST", `/v1/transactions/${other.body.id}/cancel`);
    expect(late.body.error.code).to.equal("invalid_state");
  });

  it("completes and fails sandbox transactions on demand; a settled one is 409 invalid_state", async () => {
    const user = await approvedUser(svc);
    const d1 = await svc.request("POST", `/v1/sandbox/users/${user}/deposits`, {
      body: { amount_usd: 30, fee_usd: 1, complete_after_seconds: 3600 },
    });
    const done = await svc.request("POST", `/v1/sandbox/transactions/${d1.body.id}/complete`);
    if (done.status !== 200) console.log(done.status, done.text);
    expect(done.body.status).to.equal("completed");
    expect(await balanceOf(svc, user)).to.deep.equal({ available_usd: 29, pending_in_usd: 0, pending_out_usd: 0 });
    const d2 = await svc.request("POST", `/v1/sandbox/users/${user}/deposits`, { body: { amount_usd: 5, complete_after_seconds: 3600 } });
    const failed = await svc.request("POST", `/v1/sandbox/transactions/${d2.body.id}/fail`, { body: { failure_code: "card_declined" } });
    expect(failed.body).to.include({ status: "failed", failure_code: "card_declined" });
    expect(await balanceOf(svc, user)).to.deep.equal({ available_usd: 29, pending_in_usd: 0, pending_out_usd: 0 });
    expect((await eventsOf(svc, d2.body.id)).map((e) => e.type)).to.deep.equal(["transaction.received"]);
    const again = await svc.request("POST", `/v1/sandbox/transactions/${d1.body.id}/fail`);
    expect([again.status, again.body.error.code]).to.deep.equal([409, "invalid_state"]);
    const badCode = await svc.request("POST", `/v1/sandbox/transactions/${d1.body.id}/fail`, { body: { failure_code: "Bad Code" } });
    expect(badCode.body.error).to.include({ code: "validation_error", param: "failure_code" });
    const w = await svc.request("POST", `/v1/users/${user}/withdrawals`, { body: { amount_usd: 9 } });
    const wf = await svc.request("POST", `/v1/sandbox/transactions/${w.body.id}/fail`);
    expect(wf.body).to.include({ status: "failed", failure_code: "simulated_failure" });
    expect(await balanceOf(svc, user)).to.deep.equal({ available_usd: 29, pending_in_usd: 0, pending_out_usd: 0 });
  });

  it("lists a user's transactions newest first with type and status filters; GET answers 404 transaction_not_found", async () => {
    const user = await approvedUser(svc);
    await fund(svc, user, 10);
    const pending = await svc.request("POST", `/v1/sandbox/users/${user}/deposits`, { body: { amount_usd: 2, complete_after_seconds: 3600 } });
    const withdrawal = await svc.request("POST", `/v1/users/${user}/withdrawals`, { body: { amount_usd: 1 } });
    const all = await svc.request("GET", `/v1/users/${user}/transactions`);
    expect(all.body).to.include({ object: "list", url: `/v1/users/${user}/transactions`, has_more: false });
    expect(all.body.data.map((t: { id: string }) => t.id).slice(0, 2)).to.deep.equal([withdrawal.body.id, pending.body.id]);
    expect(all.body.data).to.have.length(3);
    const deposits = await svc.request("GET", `/v1/users/${user}/transactions?type=deposit&status=pending`);
    expect(deposits.body.data.map((t: { id: string }) => t.id)).to.deep.equal([pending.body.id]);
    const page = await svc.request("GET", `/v1/users/${user}/transactions?limit=1&starting_after=${withdrawal.body.id}`);
    expect(page.body.data[0].id).to.equal(pending.body.id);
    expect(page.body.has_more).to.equal(true);
    expect((await svc.request("GET", `/v1/users/${user}/transactions?type=refund`)).body.error).to.include({
      code: "validation_error",
      param: "type",
    });
    expect((await svc.request("GET", `/v1/users/${user}/transactions?status=done`)).body.error).to.include({
      code: "validation_error",
      param: "status",
    });
    expect((await svc.request("GET", `/v1/users/${user}/transactions?starting_after=txn_x`)).body.error.code).to.equal("invalid_cursor");
    expect((await svc.request("GET", "/v1/users/999999999/transactions")).body.error.code).to.equal("user_not_found");
    const missing = await svc.request("GET", "/v1/transactions/txn_AAAAAAAAAAAAAAAAAAAAAAAA");
    expect([missing.status, missing.body.error.code]).to.deep.equal([404, "transaction_not_found"]);
    // Another environment does not see it.
    const live = await svc.request("GET", `/v1/transactions/${pending.body.id}`, { key: svc.liveKey });
    expect(live.body.error.code).to.equal("transaction_not_found");
  });

  it("charges the project's withdrawal fee on top of the amount", async () => {
    await svc.admin.updateProject({ id: svc.projectId, withdrawalFeeUsd: 1.5 });
    try {
      const user = await approvedUser(svc);
      await fund(svc, user, 10);
      // The settings cache lives 1 s.
      const res = await eventually(
        () => svc.request("POST", `/v1/users/${user}/withdrawals`, { body: { amount_usd: 3 } }),
        (r) => r.status !== 201 || r.body.fee_usd === 1.5,
        3000,
      );
      expect(res.body).to.include({ amount_usd: 3, fee_usd: 1.5 });
      expect(await balanceOf(svc, user)).to.deep.equal({ available_usd: 5.5, pending_in_usd: 0, pending_out_usd: 4.5 });
      const tooMuch = await svc.request("POST", `/v1/users/${user}/withdrawals`, { body: { amount_usd: 4.01 } });
      expect(tooMuch.body.error.code).to.equal("insufficient_funds");
      const belowFee = await svc.request("POST", `/v1/users/${user}/withdrawals`, { body: { amount_usd: 1.5 } });
      expect(belowFee.body.error).to.include({ code: "validation_error", param: "amount_usd" });
    } finally {
      await svc.admin.updateProject({ id: svc.projectId, withdrawalFeeUsd: 0 });
    }
  });
});
