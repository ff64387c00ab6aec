// The receiver-side check of an `Svc-Signature` header (docs/contract.md, Signing and verification). Self-contained on purpose:
// it depends on node:crypto only, so receivers can import it, or copy this one file.
import { createHmac, timingSafeEqual } from "node:crypto";

export const DEFAULT_TOLERANCE_SECONDS = 300;

export interface VerifyOptions {
  /** Largest accepted distance between now and `t`, in either direction. Default 300. */
  toleranceSeconds?: number;
  /** Current time in milliseconds; default Date.now. */
  now?: () => number;
}

interface ParsedHeader {
  /** `t` exactly as sent: the signed string starts with it. */
  timestampText: string;
  signatures: Buffer[];
}

const HEX_SHA256 = /^[0-9a-f]{64}$/i;

/**
 * Extracts `t` and every well-formed `v1`; unknown schemes are ignored, spaces around items tolerated.
 * Null when `t` is missing, repeated or not a plain integer.
 */
function parseSignatureHeader(header: string): ParsedHeader | null {
  let timestampText: string | null = null;
  const signatures: Buffer[] = [];
  for (const item of header.split(",")) {
    const separator = item.indexOf("=");
    if (separator === -1) continue;
    const key = item.slice(0, separator).trim();
    const value = item.slice(separator + 1).trim();
    if (key === "t") {
      if (timestampText !== null || !/^[0-9]{1,15}$/.test(value)) return null;
      timestampText = value;
    } else if (key === "v1" && HEX_SHA256.test(value)) {
      signatures.push(Buffer.from(value, "hex"));
    }
  }
  return timestampText === null ? null : { timestampText, signatures };
}

/**
 * Whether `header` carries a valid signature of `rawBody` (the bytes exactly as received) by any of
 * `secrets`, with a timestamp within the tolerance. Never throws for a malformed header or body.
 */
export function verifyWebhookSignature(
  rawBody: string | Buffer,
  header: string | readonly string[] | undefined,
  secrets: string | readonly string[],
  options: VerifyOptions = {},
): boolean {
  const tolerance = options.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS;
  if (!Number.isFinite(tolerance) || tolerance < 0) {
    throw new RangeError(`toleranceSeconds must be a non-negative number, got ${tolerance}.`);
  }
  if (typeof rawBody !== "string" && !Buffer.isBuffer(rawBody)) return false;
  const headerText = Array.isArray(header) ? header.join(",") : header;
  if (typeof headerText !== "string") return false;

  const parsed = parseSignatureHeader(headerText);
  if (parsed === null || parsed.signatures.length === 0) return false;
  const nowSeconds = Math.floor((options.now ?? Date.now)() / 1000);
  if (Math.abs(nowSeconds - Number(parsed.timestampText)) > tolerance) return false;

  // An empty secret is a misconfigured receiver; signatures keyed with it must never be accepted.
  const keys = (typeof secrets === "string" ? [secrets] : secrets).filter((s) => typeof s === "string" && s !== "");
  let matched = false;
  for (const key of keys) {
    const expected = createHmac("sha256", key).update(`${parsed.timestampText}.`).update(rawBody).digest();
    for (const candidate of parsed.signatures) {
      // Every candidate is compared, without stopping at a match, so timing reveals nothing about which one matched.
      if (candidate.length === expected.length && timingSafeEqual(candidate, expected)) matched = true;
    }
  }
  return matched;
}
