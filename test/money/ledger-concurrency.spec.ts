// The ledger under concurrency and over the other transports: 50 parallel withdrawals against a balance that covers
// 10, parallel complete and fail of one transaction, AdminService.RecordDeposit (idempotent on reference) and
// SettleTransaction, PublishEvent refusing money events, and the money routes through a stock gRPC client.
import * as grpc from "@grpc/grpc-js";
import { expect } from "chai";
import { eventually } from "../support/eventually.ts";
import { bearer, GrpcTestClient } from "../support/grpc-client.ts";
import { startTestService, type TestService } from "../support/test-service.ts";
import { approvedUser, balanceOf, eventsOf, fund } from "./support.ts";

describe("money: concurrency, admin settlement and gRPC", function () {
  this.timeout(60_000);
  let svc: TestService;
  let client: GrpcTestClient;

  before(async () => {
    svc = await startTestService({ timings: { jobPollMs: 100 } });
    client = new GrpcTestClient(svc.grpcAddress);
  });
  after(async () => {
    client.close();
    await svc.stop();
  });

  it("accepts exactly 10 of 50 parallel withdrawals against a balance covering 10; available ends at exactly 0", async () => {
    const user = await approvedUser(svc);
    await fund(svc, user, 100);
    const answers = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        svc.request("POST", `/v1/users/${user}/withdrawals`, { body: { amount_usd: 10 }, headers: { "idempotency-key": `par-${user}-${i}` } }),
      ),
    );
    const accepted = answers.filter((a) => a.status === 201);
    const refused = answers.filter((a) => a.status === 409);
    expect(accepted).to.have.length(10);
    expect(refused).to.have.length(40);
    for (const r of refused) expect(r.body.error.code).to.equal("insufficient_funds");
    // The accepted ones hold 100 until their steps settle them (2 s after each was created, maybe before this read).
    const held = await balanceOf(svc, user);
    expect(held.available_usd).to.equal(0);
    expect(held.pending_in_usd).to.equal(0);
    expect([0, 10, 20, 30, 40, 50, 60, 70, 80, 90, 100]).to.include(held.pending_out_usd);
    const settled = await eventually(
      () => balanceOf(svc, user),
      (balance) => balance.pending_out_usd === 0,
      10_000,
    );
    expect(settled).to.deep.equal({ available_usd: 0, pending_in_usd: 0, pending_out_usd: 0 });
  });

  it("lets one of a parallel complete and fail win, with one set of events", async () => {
    for (let round = 0; round < 5; round++) {
      const user = await approvedUser(svc);
      await fund(svc, user, 10);
      const w = await svc.request("POST", `/v1/users/${user}/withdrawals`, { body: { amount_usd: 5 } });
      const [complete, fail] = await Promise.all([
        svc.request("POST", `/v1/sandbox/transactions/${w.body.id}/complete`),
        svc.request("POST", `/v1/sandbox/transactions/${w.body.id}/fail`),
      ]);
      const statuses = [complete.status, fail.status].sort();
      expect(statuses).to.deep.equal([200, 409]);
      const final = await svc.request("GET", `/v1/transactions/${w.body.id}`);
      const types = (await eventsOf(svc, w.body.id)).map((e) => e.type).sort();
      if (final.body.status === "completed") {
        expect(types).to.deep.equal(["transaction.completed", "withdrawal.completed"]);
        expect(await balanceOf(svc, user)).to.deep.equal({ available_usd: 5, pending_in_usd: 0, pending_out_usd: 0 });
      } else {
        expect(types).to.deep.equal(["withdrawal.failed"]);
        expect(await balanceOf(svc, user)).to.deep.equal({ available_usd: 10, pending_in_usd: 0, pending_out_usd: 0 });
      }
    }
  });

  it("records live deposits once per reference and settles them through AdminService", async () => {
    const user = await approvedUser(svc, svc.liveKey);
    const request = {
      projectId: svc.projectId,
      livemode: true,
      userId: user,
      amountUsd: 25,
      feeUsd: 1,
      fiatCurrency: "usd",
      reference: `ref-${user}`,
    };
    const [a, b] = await Promise.all([svc.admin.recordDeposit(request), svc.admin.recordDeposit(request)]);
    expect(a.transaction!.id).to.equal(b.transaction!.id);
    expect(a.transaction!.status).to.equal("pending");
    expect(await balanceOf(svc, user, svc.liveKey)).to.deep.equal({ available_usd: 0, pending_in_usd: 24, pending_out_usd: 0 });
    const settled = await svc.admin.settleTransaction({ id: a.transaction!.id, outcome: "completed" });
    expect(settled.transaction!.status).to.equal("completed");
    const again = await svc.admin.recordDeposit(request);
    expect(again.transaction!.status).to.equal("completed");
    expect(await balanceOf(svc, user, svc.liveKey)).to.deep.equal({ available_usd: 24, pending_in_usd: 0, pending_out_usd: 0 });
    expect((await eventsOf(svc, a.transaction!.id)).map((e) => e.type)).to.deep.equal(["transaction.received", "transaction.completed"]);
    await svc.admin.settleTransaction({ id: a.transaction!.id, outcome: "failed" }).then(
      () => expect.fail("settled twice"),
      (error: { rawMessage: string; code: number }) => expect(error.code).to.equal(9),
    );
    // A live withdrawal goes to the custodian (processing), then AdminService settles it.
    const w = await svc.request("POST", `/v1/users/${user}/withdrawals`, { key: svc.liveKey, body: { amount_usd: 4 } });
    expect(w.status).to.equal(201);
    // The same failure_code rule (and message) as the sandbox's fail route.
    await svc.admin.settleTransaction({ id: w.body.id, outcome: "failed", failureCode: "Bad Code" }).then(
      () => expect.fail("a malformed failure_code was accepted"),
      (error: { rawMessage: string; code: number }) => {
        expect(error.code).to.equal(3);
        expect(error.rawMessage).to.equal("failure_code must be 1 to 64 lowercase letters, digits and underscores, starting with a letter.");
      },
    );
    const failed = await svc.admin.settleTransaction({ id: w.body.id, outcome: "failed", failureCode: "account_closed" });
    expect(failed.transaction).to.include({ status: "failed", failureCode: "account_closed" });
    expect(await balanceOf(svc, user, svc.liveKey)).to.deep.equal({ available_usd: 24, pending_in_usd: 0, pending_out_usd: 0 });
  });

  it("refuses transaction.* and withdrawal.* in PublishEvent: the ledger owns them", async () => {
    for (const type of ["transaction.completed", "withdrawal.failed"]) {
      await svc.admin.publishEvent({ projectId: svc.projectId, livemode: false, type, object: {} }).then(
        () => expect.fail(`${type} was published`),
        (error: { code: number }) => expect(error.code).to.equal(3),
      );
    }
  });

  it("serves the money routes over gRPC with the same codes", async () => {
    const md = bearer(svc.sandboxKey);
    const user = await approvedUser(svc);
    const deposit = await client.ok(
      "SandboxTransactionsService",
      "CreateSandboxDeposit",
      { user_id: user, amount_usd: 12.5, complete_after_seconds: 3600 },
      md,
    );
    expect(deposit.message.transaction).to.include({ status: "pending", amount_cents: "1250", type: "deposit" });
    const id = deposit.message.transaction.id;
    await client.ok("SandboxTransactionsService", "CompleteSandboxTransaction", { id }, md);
    const got = await client.ok("TransactionsService", "GetTransaction", { id }, md);
    expect(got.message.transaction.status).to.equal("completed");
    const list = await client.ok("TransactionsService", "ListUserTransactions", { user_id: user, type: "deposit" }, md);
    expect(list.message.data).to.have.length(1);
    const wallets = await client.ok("UsersService", "ListUserWallets", { user_id: user }, md);
    expect(wallets.message.data[0].balance).to.include({ available_cents: "1250" });
    const w = await client.ok("TransactionsService", "CreateWithdrawal", { user_id: user, amount_usd: 2 }, { ...md, "idempotency-key": `g-${user}` });
    await client.ok("TransactionsService", "CancelTransaction", { id: w.message.transaction.id }, md);
    await client.fails("TransactionsService", "CancelTransaction", { id: w.message.transaction.id }, md, {
      code: grpc.status.FAILED_PRECONDITION,
      reason: "invalid_state",
    });
    await client.fails("TransactionsService", "CreateWithdrawal", { user_id: user, amount_usd: 1000 }, md, {
      code: grpc.status.FAILED_PRECONDITION,
      reason: "insufficient_funds",
    });
    await client.fails("TransactionsService", "CreateWithdrawal", { user_id: user, amount_usd: 1.001 }, md, {
      code: grpc.status.INVALID_ARGUMENT,
      reason: "validation_error",
      param: "amount_usd",
    });
    await client.fails("TransactionsService", "GetTransaction", { id: "txn_nope" }, md, {
      code: grpc.status.NOT_FOUND,
      reason: "transaction_not_found",
    });
    await client.fails("SandboxTransactionsService", "CreateSandboxDeposit", { user_id: user, amount_usd: 1 }, bearer(svc.liveKey), {
      code: grpc.status.PERMISSION_DENIED,
      reason: "sandbox_only",
    });
  });
});
