// One money shape on every wire: REST answers JSON numbers of dollars (at most 2 decimals); Connect JSON, Connect
// binary and gRPC answer the same amounts as integers (cents, a currency's minor unit), equal digit for digit.
// Requests take the exact fields; the deprecated dollars fields are still accepted; AdminService answers the
// public Transaction message.
import { createClient, type Interceptor } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { expect } from "chai";
import { RecordDepositResponseSchema, SettleTransactionResponseSchema } from "../../gen/svc/admin/v1/admin_pb.ts";
import { SandboxTransactionsService, TransactionSchema, TransactionsService } from "../../gen/svc/v1/transactions_pb.ts";
import { UsersService } from "../../gen/svc/v1/users_pb.ts";
import { MAX_AMOUNT_CENTS } from "../../src/domain/money.ts";
import { expectConnectError, expectError } from "../support/errors.ts";
import { eventually } from "../support/eventually.ts";
import { bearer, grpc, GrpcTestClient } from "../support/grpc-client.ts";
import { startTestService, type TestService } from "../support/test-service.ts";
import { approvedUser } from "./support.ts";

/** An integer amount in minor units as the decimal text of its major units ("29", 2 -> "0.29"), as String() writes a number. */
function decimalText(minor: bigint | string | number, exponent: number): string {
  const digits = BigInt(minor)
    .toString()
    .padStart(exponent + 1, "0");
  const whole = digits.slice(0, digits.length - exponent);
  const fraction = digits.slice(digits.length - exponent).replace(/0+$/, "");
  return fraction === "" ? whole : `${whole}.${fraction}`;
}

/** The money of a Transaction in any of its integer forms (Connect JSON strings, bigints, grpc-js strings). */
interface ExactTransaction {
  amount_cents?: string | bigint;
  fee_cents?: string | bigint;
  fiat_amount_minor?: string | bigint;
  fiat_exponent?: number;
}

/** Every money field of an exact answer equals the REST answer's number, compared as decimal text (no float arithmetic). */
function expectSameMoney(exact: ExactTransaction, rest: { amount_usd: number; fee_usd: number; fiat_amount: number }, door: string): void {
  // A field left out of an answer is its default, 0.
  expect(decimalText(exact.amount_cents ?? 0, 2), `${door} amount`).to.equal(String(rest.amount_usd));
  expect(decimalText(exact.fee_cents ?? 0, 2), `${door} fee`).to.equal(String(rest.fee_usd));
  expect(decimalText(exact.fiat_amount_minor ?? 0, exact.fiat_exponent ?? 0), `${door} fiat amount`).to.equal(String(rest.fiat_amount));
}

describe("money: one shape on every wire", function () {
  this.timeout(60_000);
  let svc: TestService;
  let grpcClient: GrpcTestClient;
  const withKey =
    (key: () => string): Interceptor =>
    (next) =>
    (req) => {
      req.header.set("authorization", `Bearer ${key()}`);
      return next(req);
    };
  const binaryClients = () => {
    const transport = createConnectTransport({
      baseUrl: svc.baseUrl,
      httpVersion: "1.1",
      useBinaryFormat: true,
      interceptors: [withKey(() => svc.sandboxKey)],
    });
    return {
      transactions: createClient(TransactionsService, transport),
      sandbox: createClient(SandboxTransactionsService, transport),
      users: createClient(UsersService, transport),
    };
  };
  /** A Connect JSON call of a public method, as any HTTP client makes it. */
  const connectJson = (method: string, body: object, init: { key?: string; headers?: Record<string, string> } = {}) =>
    svc.request("POST", `/svc.v1.${method}`, { body, ...init });
  const adminJson = (method: string, body: object) =>
    svc.request("POST", `/svc.admin.v1.AdminService/${method}`, { key: null, headers: { authorization: `Bearer ${svc.adminToken}` }, body });

  before(async () => {
    svc = await startTestService();
    grpcClient = new GrpcTestClient(svc.grpcAddress);
  });
  after(async () => {
    grpcClient.close();
    await svc.stop();
  });

  it("answers every amount, fee, fiat amount and balance on Connect JSON, Connect binary and gRPC equal to REST's number", async () => {
    const user = await approvedUser(svc);
    const rpc = binaryClients();
    // 0.29 (no binary float holds it), the largest amount, a fee, fiat amounts of 0, 2 and 3 decimals; the
    // balance they make is 1,234,567.89 net of fees.
    const requests = [
      { amountCents: 29n },
      { amountCents: BigInt(MAX_AMOUNT_CENTS), feeCents: 1n },
      { amountCents: 23_456_761n, fiatCurrency: "JPY", fiatAmountMinor: 2_567_890n },
      { amountCents: 1999n, feeCents: 999n, fiatCurrency: "BHD", fiatAmountMinor: 1_234_567n },
    ];
    const ids: string[] = [];
    for (const request of requests) {
      const { transaction } = await rpc.sandbox.createSandboxDeposit({ userId: user, completeAfterSeconds: 3600, ...request });
      expect(transaction!.amountCents).to.equal(request.amountCents);
      ids.push(transaction!.id);
    }
    for (const id of ids.slice(0, 3)) await rpc.sandbox.completeSandboxTransaction({ id });

    for (const id of ids) {
      const rest = await svc.request("GET", `/v1/transactions/${id}`);
      expect(rest.status, rest.text).to.equal(200);
      const json = await connectJson("TransactionsService/GetTransaction", { id });
      expect(json.status, json.text).to.equal(200);
      // Connect JSON writes int64 as strings: exact in any JSON reader. No amount travels as a number.
      expect(json.body.transaction.amount_cents).to.be.a("string");
      expect(json.body.transaction).to.not.have.any.keys("amount_usd", "fee_usd", "fiat_amount");
      expectSameMoney(json.body.transaction, rest.body, "Connect JSON");
      const binary = (await rpc.transactions.getTransaction({ id })).transaction!;
      expectSameMoney(
        {
          amount_cents: binary.amountCents,
          fee_cents: binary.feeCents,
          fiat_amount_minor: binary.fiatAmountMinor,
          fiat_exponent: binary.fiatExponent,
        },
        rest.body,
        "Connect binary",
      );
      const viaGrpc = await grpcClient.ok("TransactionsService", "GetTransaction", { id }, bearer(svc.sandboxKey));
      expectSameMoney(viaGrpc.message.transaction, rest.body, "gRPC");
    }
    const restAmounts = await Promise.all(ids.map(async (id) => (await svc.request("GET", `/v1/transactions/${id}`)).body));
    expect(restAmounts.map((t) => [t.amount_usd, t.fee_usd, t.fiat_amount])).to.deep.equal([
      [0.29, 0, 0.29],
      [1_000_000, 0.01, 1_000_000],
      [234_567.61, 0, 2_567_890],
      [19.99, 9.99, 1234.567],
    ]);

    const restBalance = (await svc.request("GET", `/v1/users/${user}/wallets`)).body.data[0].balance;
    expect(restBalance).to.deep.equal({ available_usd: 1_234_567.89, pending_in_usd: 10, pending_out_usd: 0 });
    const jsonBalance = (await connectJson("UsersService/ListUserWallets", { user_id: user })).body.data[0].balance;
    const binaryBalance = (await rpc.users.listUserWallets({ userId: user })).data[0]!.balance!;
    const grpcBalance = (await grpcClient.ok("UsersService", "ListUserWallets", { user_id: user }, bearer(svc.sandboxKey))).message.data[0].balance;
    for (const [door, balance] of [
      ["Connect JSON", jsonBalance],
      [
        "Connect binary",
        {
          available_cents: binaryBalance.availableCents,
          pending_in_cents: binaryBalance.pendingInCents,
          pending_out_cents: binaryBalance.pendingOutCents,
        },
      ],
      ["gRPC", grpcBalance],
    ] as const) {
      expect(decimalText(balance.available_cents ?? 0, 2), door).to.equal(String(restBalance.available_usd));
      expect(decimalText(balance.pending_in_cents ?? 0, 2), door).to.equal(String(restBalance.pending_in_usd));
      expect(decimalText(balance.pending_out_cents ?? 0, 2), door).to.equal(String(restBalance.pending_out_usd));
    }
  });

  it("still takes the deprecated dollars fields over gRPC and Connect, as exactly as the exact fields", async () => {
    const user = await approvedUser(svc);
    const viaGrpc = await grpcClient.ok(
      "SandboxTransactionsService",
      "CreateSandboxDeposit",
      { user_id: user, amount_usd: 0.29, fee_usd: 0.1, fiat_currency: "EUR", fiat_amount: 1.005, complete_after_seconds: 3600 },
      bearer(svc.sandboxKey),
    );
    expect(viaGrpc.message.transaction).to.include({ amount_cents: "29", fee_cents: "10", fiat_amount_minor: "101", fiat_exponent: 2 });
    const viaJson = await connectJson("SandboxTransactionsService/CreateSandboxDeposit", {
      user_id: user,
      amount_usd: 1234.56,
      complete_after_seconds: 3600,
    });
    expect(viaJson.status, viaJson.text).to.equal(200);
    expect(viaJson.body.transaction).to.include({ amount_cents: "123456", fiat_amount_minor: "123456" });
  });

  it("checks the exact fields as the dollars ones, naming the field sent; REST takes only its dollars", async () => {
    const user = await approvedUser(svc);
    const deposit = (body: object) =>
      connectJson("SandboxTransactionsService/CreateSandboxDeposit", { user_id: user, complete_after_seconds: 3600, ...body });
    const refusals: [object, string, RegExp][] = [
      [{ amount_cents: "0" }, "amount_cents", /amount_cents must be greater than 0/],
      [{ amount_cents: "-5" }, "amount_cents", /greater than 0/],
      [{ amount_cents: String(MAX_AMOUNT_CENTS + 1) }, "amount_cents", /at most 100000000 \(1000000 dollars\)/],
      [{ amount_cents: "9223372036854775807" }, "amount_cents", /at most/],
      [{ amount_cents: "500", amount_usd: 5 }, "amount_cents", /amount_cents or amount_usd, not both/],
      [{ amount_cents: "500", fee_cents: "500" }, "fee_cents", /fee_cents must be below amount_cents/],
      [{ amount_cents: "500", fee_usd: 5 }, "fee_usd", /fee_usd must be below amount_cents/],
      [{ amount_cents: "500", fee_cents: "1", fee_usd: 0.01 }, "fee_cents", /not both/],
      [{ amount_cents: "500", fiat_currency: "EUR", fiat_amount_minor: "-1" }, "fiat_amount_minor", /0 to 1000000000000000/],
      [{ amount_cents: "500", fiat_currency: "EUR", fiat_amount_minor: "460", fiat_amount: 4.6 }, "fiat_amount_minor", /not both/],
      [{ amount_cents: "500", fiat_currency: "EUR" }, "fiat_amount", /required when fiat_currency is not USD/],
      [{ amount_usd: 0.291 }, "amount_usd", /at most 2 decimals/],
    ];
    for (const [body, param, message] of refusals) {
      const refused = await deposit(body);
      expectConnectError(refused, 400, "invalid_argument", "validation_error", param);
      expect(refused.body.message, JSON.stringify(body)).to.match(message);
    }
    // An exact field as a string must be a whole decimal literal, before the method sees it.
    expectConnectError(await deposit({ amount_cents: "0x10" }), 400, "invalid_argument", "validation_error", "amount_cents");
    expectConnectError(await deposit({ amount_cents: "29.5" }), 400, "invalid_argument", "validation_error", "amount_cents");
    await grpcClient.fails("TransactionsService", "CreateWithdrawal", { user_id: user, amount_cents: "0" }, bearer(svc.sandboxKey), {
      code: grpc.status.INVALID_ARGUMENT,
      reason: "validation_error",
      param: "amount_cents",
    });

    // REST is the contract's: dollars only; the exact fields are no members of its bodies.
    const rest = await svc.request("POST", `/v1/sandbox/users/${user}/deposits`, { body: { amount_cents: 500 } });
    expectError(rest, 422, "invalid_request_error", "validation_error", "amount_cents");
    expect(rest.body.error.message).to.equal("Unknown parameter: amount_cents.");
    expectError(
      await svc.request("POST", `/v1/users/${user}/withdrawals`, { body: { amount_cents: 500 } }),
      422,
      "invalid_request_error",
      "validation_error",
      "amount_cents",
    );
  });

  it("keeps one key space: the same withdrawal in REST dollars and in gRPC cents is one request under one key", async () => {
    const user = await approvedUser(svc);
    await binaryClients().sandbox.createSandboxDeposit({ userId: user, amountCents: 10_000n, completeAfterSeconds: 0 });
    await eventually(
      () => svc.request("GET", `/v1/users/${user}/wallets`),
      (r) => r.body.data[0].balance.available_usd === 100,
      8000,
    );
    const key = `money-shape-${Date.now()}`;
    const rest = await svc.request("POST", `/v1/users/${user}/withdrawals`, { body: { amount_usd: 7.1 }, headers: { "idempotency-key": key } });
    expect(rest.status, rest.text).to.equal(201);
    const again = await connectJson(
      "TransactionsService/CreateWithdrawal",
      { user_id: user, amount_cents: "710" },
      { headers: { "idempotency-key": key } },
    );
    expect(again.status, again.text).to.equal(200);
    expect(again.body.transaction.id).to.equal(rest.body.id);
    expect(again.headers.get("idempotent-replayed")).to.equal("true");
    const other = await connectJson(
      "TransactionsService/CreateWithdrawal",
      { user_id: user, amount_cents: "711" },
      { headers: { "idempotency-key": key } },
    );
    expectConnectError(other, 400, "invalid_argument", "idempotency_key_reuse");
  });

  it("answers AdminService's money in the public Transaction message; its requests take the exact fields too", async () => {
    expect(RecordDepositResponseSchema.fields.map((f) => f.message)).to.deep.equal([TransactionSchema]);
    expect(SettleTransactionResponseSchema.fields.map((f) => f.message)).to.deep.equal([TransactionSchema]);
    const user = await approvedUser(svc, svc.liveKey);
    const recorded = await adminJson("RecordDeposit", {
      project_id: svc.projectId,
      livemode: true,
      user_id: user,
      amount_cents: "123456",
      fee_cents: "56",
      fiat_currency: "JPY",
      fiat_amount_minor: "17890",
      reference: `shape-${Date.now()}`,
    });
    expect(recorded.status, recorded.text).to.equal(200);
    expect(Object.keys(recorded.body)).to.deep.equal(["transaction"]);
    const publicView = await connectJson("TransactionsService/GetTransaction", { id: recorded.body.transaction.id }, { key: svc.liveKey });
    expect(recorded.body.transaction).to.deep.equal(publicView.body.transaction);
    const rest = await svc.request("GET", `/v1/transactions/${recorded.body.transaction.id}`, { key: svc.liveKey });
    expect(rest.body).to.include({ amount_usd: 1234.56, fee_usd: 0.56, fiat_currency: "JPY", fiat_amount: 17_890 });
    expectSameMoney(recorded.body.transaction, rest.body, "AdminService");

    const settled = await adminJson("SettleTransaction", { id: recorded.body.transaction.id, outcome: "completed" });
    const settledPublic = await connectJson("TransactionsService/GetTransaction", { id: recorded.body.transaction.id }, { key: svc.liveKey });
    expect(settled.body.transaction).to.deep.equal(settledPublic.body.transaction);

    // The deprecated dollars fields are still served, and the withdrawal fee takes cents.
    const old = await adminJson("RecordDeposit", {
      project_id: svc.projectId,
      livemode: true,
      user_id: user,
      amount_usd: 0.29,
      reference: `shape-old-${Date.now()}`,
    });
    expect(old.body.transaction).to.include({ amount_cents: "29", fiat_amount_minor: "29" });
    const project = await adminJson("CreateProject", { organization_id: svc.organizationId, name: "Fees", withdrawal_fee_cents: "125" });
    expect(project.body.project.withdrawal_fee_cents).to.equal("125");
    const updated = await adminJson("UpdateProject", { id: project.body.project.id, withdrawal_fee_usd: 0.3 });
    expect(updated.body.project.withdrawal_fee_cents).to.equal("30");
    const both = await adminJson("UpdateProject", { id: project.body.project.id, withdrawal_fee_usd: 0.3, withdrawal_fee_cents: "30" });
    expectConnectError(both, 400, "invalid_argument", "validation_error", "withdrawal_fee_cents");
  });
});
