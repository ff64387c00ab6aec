// Fiat amounts exactly half-way between two minor units of a currency, with the minor amount that rounding half
// away from zero gives, computed on the digits with BigInt (never with binary floats).

export interface HalfWayValue {
  /** The amount as written in the request: its shortest decimal representation. */
  text: string;
  value: number;
  /** The currency's number of decimals. */
  exponent: number;
  /** In minor units, rounded half away from zero. */
  minor: bigint;
}

/**
 * `count` amounts of (k + 1/2) minor units of a currency with `exponent` decimals: k = 0 to 99 (0.5 and 2.5 JPY,
 * 0.005 USD, 0.0005 KWD), then 2.675 USD and some that `value * 10 ** exponent` rounds down (1.005 USD,
 * 0.5005 KWD), and a deterministic spread up to 10^9 minor units.
 */
export function halfWayValues(exponent: number, count = 200): HalfWayValue[] {
  const ks: bigint[] = [];
  for (let k = 0n; k < 100n && ks.length < count; k++) ks.push(k);
  for (const k of [100n, 267n, 500n, 503n, 1000n, 1001n, 1234n, 2675n, 4999n, 10_000n, 10_005n, 10_049n, 123_456n, 999_999n])
    if (ks.length < count) ks.push(k);
  let seed = 12_345n;
  while (ks.length < count) {
    seed = (seed * 1_103_515_245n + 12_345n) % 2_147_483_648n;
    const k = seed % 1_000_000_000n;
    if (!ks.includes(k)) ks.push(k);
  }
  return ks.map((k) => {
    // (k + 1/2) minor units = (2k + 1) * 5 units of 10^-(exponent + 1): its digits end in 5.
    const digits = (2n * k + 1n) * 5n;
    const text = withPoint(digits, exponent + 1);
    return { text, value: Number(text), exponent, minor: (digits + 5n) / 10n };
  });
}

/** `digits` × 10^-places as a decimal string ("0.005", "1.005", "12.5"). */
function withPoint(digits: bigint, places: number): string {
  const padded = digits.toString().padStart(places + 1, "0");
  return `${padded.slice(0, -places)}.${padded.slice(-places)}`;
}
