// A request's identity under an Idempotency-Key: money given in a deprecated dollars field counts as its exact field.
import { create, equals } from "@bufbuild/protobuf";
import { expect } from "chai";
import { CreateSandboxDepositRequestSchema, CreateWithdrawalRequestSchema, GetTransactionRequestSchema } from "../../gen/svc/v1/transactions_pb.ts";
import { UpdateProjectRequestSchema } from "../../gen/svc/admin/v1/admin_pb.ts";
import { identityForm } from "../../src/pipeline/request-identity.ts";

describe("request identity: money in its exact fields", () => {
  it("moves dollars to cents, and a fiat amount to its currency's minor units as rounded, in a copy", () => {
    const sent = create(CreateWithdrawalRequestSchema, { userId: "1", amountUsd: 7.1 });
    const identity = identityForm(CreateWithdrawalRequestSchema, sent);
    expect(
      equals(CreateWithdrawalRequestSchema, identity as never, create(CreateWithdrawalRequestSchema, { userId: "1", amountCents: 710n })),
    ).to.equal(true);
    expect(sent.amountUsd, "the method still gets the request as sent").to.equal(7.1);

    const deposit = create(CreateSandboxDepositRequestSchema, { userId: "1", amountUsd: 100.5, feeUsd: 0, fiatCurrency: "EUR", fiatAmount: 92.345 });
    const exact = create(CreateSandboxDepositRequestSchema, {
      userId: "1",
      amountCents: 10_050n,
      feeCents: 0n,
      fiatCurrency: "EUR",
      fiatAmountMinor: 9235n,
    });
    expect(equals(CreateSandboxDepositRequestSchema, identityForm(CreateSandboxDepositRequestSchema, deposit) as never, exact)).to.equal(true);
    const fee = create(UpdateProjectRequestSchema, { id: "p", withdrawalFeeUsd: 0.3 });
    expect(
      equals(
        UpdateProjectRequestSchema,
        identityForm(UpdateProjectRequestSchema, fee) as never,
        create(UpdateProjectRequestSchema, { id: "p", withdrawalFeeCents: 30n }),
      ),
    ).to.equal(true);
  });

  it("leaves what the method refuses, or what has no money, as sent", () => {
    const unchanged = [
      create(CreateWithdrawalRequestSchema, { userId: "1", amountUsd: 7.123 }),
      create(CreateWithdrawalRequestSchema, { userId: "1", amountUsd: 7.1, amountCents: 710n }),
      create(CreateWithdrawalRequestSchema, { userId: "1" }),
    ];
    for (const request of unchanged) expect(identityForm(CreateWithdrawalRequestSchema, request)).to.equal(request);
    const unknownCurrency = create(CreateSandboxDepositRequestSchema, { userId: "1", amountCents: 5n, fiatCurrency: "XXQ", fiatAmount: 1 });
    expect(identityForm(CreateSandboxDepositRequestSchema, unknownCurrency)).to.equal(unknownCurrency);
    const read = create(GetTransactionRequestSchema, { id: "txn_1" });
    expect(identityForm(GetTransactionRequestSchema, read)).to.equal(read);
  });
});
