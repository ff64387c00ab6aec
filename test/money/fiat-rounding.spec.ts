// Fiat amounts end to end: 200 amounts half-way between two minor units in each of JPY (0 decimals), USD (2) and
// KWD (3), sent as JSON numbers to the sandbox deposit route (and a part of them to AdminService.RecordDeposit), are
// stored rounded half away from zero on their decimal digits (1.005 USD is 1.01, 2.5 JPY is 3), as computed with
// BigInt from the digits. Currency codes are three ASCII letters before uppercasing: "uſd" is no USD.
import { expect } from "chai";
import { expectError } from "../support/errors.ts";
import { halfWayValues, type HalfWayValue } from "../support/half-way-values.ts";
import { startTestService, type TestService } from "../support/test-service.ts";
import { approvedUser } from "./support.ts";

const CURRENCIES = [
  ["JPY", 0],
  ["USD", 2],
  ["KWD", 3],
] as const;

/** Runs `task` over `items`, `width` at a time. */
async function inBatches<T>(items: readonly T[], width: number, task: (item: T, index: number) => Promise<void>): Promise<void> {
  for (let start = 0; start < items.length; start += width) {
    await Promise.all(items.slice(start, start + width).map((item, i) => task(item, start + i)));
  }
}

/** The fiat amount the API answers for `minor` minor units: the number with `exponent` decimals. */
function answered(minor: bigint, exponent: number): number {
  const digits = minor.toString().padStart(exponent + 1, "0");
  return Number(exponent === 0 ? digits : `${digits.slice(0, -exponent)}.${digits.slice(-exponent)}`);
}

describe("fiat amounts rounded on decimal digits, end to end", function () {
  this.timeout(120_000);
  let svc: TestService;
  /** Users the deposits are spread over: one wallet would serialize them all. */
  let users: string[];

  before(async () => {
    svc = await startTestService();
    users = await Promise.all(Array.from({ length: 10 }, () => approvedUser(svc)));
  });
  after(async () => {
    await svc.stop();
  });

  for (const [currency, exponent] of CURRENCIES) {
    it(`POST /v1/sandbox/users/{id}/deposits: 200 half-way amounts in ${currency} round half away from zero`, async () => {
      const values = halfWayValues(exponent);
      const wrong: string[] = [];
      await inBatches(values, 20, async ({ text, value, minor }: HalfWayValue, index) => {
        const user = users[index % users.length]!;
        // The JSON number is written with the digits of the amount, as any client writes it.
        const rawBody = `{"amount_usd": 1, "fiat_currency": "${currency.toLowerCase()}", "fiat_amount": ${text}, "complete_after_seconds": 3600}`;
        const res = await svc.request("POST", `/v1/sandbox/users/${user}/deposits`, { rawBody });
        expect(res.status, `${text} ${currency}: ${res.text}`).to.equal(201);
        expect(res.body.fiat_currency).to.equal(currency);
        if (res.body.fiat_amount !== answered(minor, exponent)) wrong.push(`${value} -> ${res.body.fiat_amount}`);
        const stored = await svc.database.db.collection("transactions").findOne({ _id: res.body.id });
        if (BigInt(stored?.fiat_amount_minor ?? -1) !== minor) wrong.push(`${value} stored ${stored?.fiat_amount_minor}`);
      });
      expect(wrong).to.deep.equal([]);
    });
  }

  it("AdminService.RecordDeposit: the same rule (every 5th of those amounts, and all that binary floats round down)", async () => {
    const values = CURRENCIES.flatMap(([currency, exponent]) =>
      halfWayValues(exponent)
        .filter((v, i) => i % 5 === 0 || BigInt(Math.round(v.value * 10 ** exponent)) !== v.minor)
        .map((v) => ({ ...v, currency })),
    );
    expect(values.map((v) => `${v.text} ${v.currency}`)).to.include.members(["1.005 USD", "0.5005 KWD", "0.5 JPY"]);
    const wrong: string[] = [];
    await inBatches(values, 10, async ({ value, minor, exponent, currency }, index) => {
      const answer = await svc.admin.recordDeposit({
        projectId: svc.projectId,
        livemode: false,
        userId: users[index % users.length]!,
        amountUsd: 1,
        fiatCurrency: currency,
        fiatAmount: value,
        reference: `rounding-${index}`,
      });
      const t = answer.transaction!;
      if (t.fiatCurrency !== currency || t.fiatExponent !== exponent || BigInt(t.fiatAmountMinor) !== minor) {
        wrong.push(`${value} ${currency} -> ${t.fiatAmountMinor} ${t.fiatCurrency}`);
      }
    });
    expect(wrong).to.deep.equal([]);
  });

  it("refuses currency codes that only uppercasing would make ISO 4217, on deposits, withdrawals and RecordDeposit", async () => {
    const user = await approvedUser(svc);
    for (const fiat_currency of ["u\u017fd", "\u0131nr", "\uff35\uff33\uff24", "us d"]) {
      const deposit = await svc.request("POST", `/v1/sandbox/users/${user}/deposits`, { body: { amount_usd: 1, fiat_currency, fiat_amount: 1 } });
      expectError(deposit, 422, "invalid_request_error", "validation_error", "fiat_currency");
      const withdrawal = await svc.request("POST", `/v1/users/${user}/withdrawals`, { body: { amount_usd: 1, fiat_currency } });
      expectError(withdrawal, 422, "invalid_request_error", "validation_error", "fiat_currency");
    }
    const recorded = await svc.admin
      .recordDeposit({
        projectId: svc.projectId,
        livemode: false,
        userId: user,
        amountUsd: 1,
        fiatCurrency: "\u0131nr",
        fiatAmount: 1,
        reference: "ascii",
      })
      .then(
        () => "accepted",
        (error: Error) => error.message,
      );
    expect(recorded).to.contain("fiat_currency must be an ISO 4217 currency code.");
    expect(await svc.database.db.collection("transactions").countDocuments({ user_id: user })).to.equal(0);
  });
});
