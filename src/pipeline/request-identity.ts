// A request as its Idempotency-Key identifies it. Money given in a deprecated dollars field (a binary float) counts
// as its exact field: `amount_usd` 0.29 is `amount_cents` 29, a `fiat_amount` is its minor units as rounded. The
// REST API fills the dollars fields (its members are numbers of dollars) and gRPC clients the exact ones, so
// without this one request sent through two doors under one key would be two requests.
import { clone, type DescField, type DescMessage, type Message } from "@bufbuild/protobuf";
import { AMOUNT_FIELDS, centsOf, FEE_FIELDS, fiatCurrencyOf, fiatMinorOf, WITHDRAWAL_FEE_FIELDS } from "../domain/money.ts";

/** A deprecated dollars field, the exact field it stands for, and how its value becomes the exact one. */
interface MoneyPair {
  dollars: DescField;
  exact: DescField;
  /** The exact value (throws what the method would refuse). */
  exactOf: (value: number, request: Record<string, unknown>) => number;
}

const CONVERSIONS: { dollars: string; exact: string; exactOf: MoneyPair["exactOf"] }[] = [
  ...[AMOUNT_FIELDS, FEE_FIELDS, WITHDRAWAL_FEE_FIELDS].map((fields) => ({
    dollars: fields.usd,
    exact: fields.cents,
    exactOf: (value: number) => centsOf(fields.usd, value, { min: 0 }),
  })),
  {
    dollars: "fiat_amount",
    exact: "fiat_amount_minor",
    exactOf: (value, request) => fiatMinorOf("fiat_amount", value, fiatCurrencyOf(request.fiatCurrency as string | undefined).exponent),
  },
];

const pairsBySchema = new WeakMap<DescMessage, MoneyPair[]>();

function pairsOf(schema: DescMessage): MoneyPair[] {
  let pairs = pairsBySchema.get(schema);
  if (!pairs) {
    const field = (name: string) => schema.fields.find((f) => f.name === name);
    pairs = CONVERSIONS.flatMap(({ dollars, exact, exactOf }) => {
      const [d, e] = [field(dollars), field(exact)];
      return d && e ? [{ dollars: d, exact: e, exactOf }] : [];
    });
    pairsBySchema.set(schema, pairs);
  }
  return pairs;
}

/**
 * The request with every deprecated dollars value that converts moved to its exact field (a copy; the method still
 * gets the request as sent, so its refusals name the field the caller used). A value that does not convert, or
 * one given beside its exact field, stays: the method refuses it, and a refusal is never stored under a key.
 */
export function identityForm(schema: DescMessage, request: Message): Message {
  const pairs = pairsOf(schema);
  let copy: Record<string, unknown> | undefined;
  for (const { dollars, exact, exactOf } of pairs) {
    const fields = (copy ?? request) as unknown as Record<string, unknown>;
    const value = fields[dollars.localName];
    // A deprecated amount without presence is 0 when not given (and no amount is 0).
    if (typeof value !== "number" || (value === 0 && !dollars.proto.proto3Optional) || fields[exact.localName] !== undefined) continue;
    let converted: number;
    try {
      converted = exactOf(value, fields);
    } catch {
      continue;
    }
    copy ??= clone(schema, request as never) as unknown as Record<string, unknown>;
    copy[exact.localName] = BigInt(converted);
    copy[dollars.localName] = dollars.proto.proto3Optional ? undefined : 0;
  }
  return (copy ?? request) as Message;
}
