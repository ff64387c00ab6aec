// Signing of webhook deliveries (docs/contract.md, "Delivery request" and "Signing and verification"):
// HMAC-SHA256 hex over `<t>.<raw body>`, keyed with the whole secret string including `whsec_`, so
// Stripe-style verifiers work unchanged.
import { createHmac } from "node:crypto";
import { randomBase62 } from "./random.ts";

export const WEBHOOK_SECRET_PREFIX = "whsec_";
const SECRET_RANDOM_LENGTH = 32;

function assertTimestamp(timestamp: number): void {
  if (!Number.isSafeInteger(timestamp) || timestamp < 0) {
    throw new RangeError(`A signature timestamp must be a non-negative integer of unix seconds, got ${timestamp}.`);
  }
}

/** The hex HMAC-SHA256 of `<timestamp>.<raw body>` keyed with the whole secret. */
export function computeSignature(secret: string, timestamp: number, rawBody: string | Buffer): string {
  assertTimestamp(timestamp);
  return createHmac("sha256", secret).update(`${timestamp}.`).update(rawBody).digest("hex");
}

/** The `Svc-Signature` header: `t=<t>,v1=<hex>` with one `v1` per secret, the newest secret first. */
export function signatureHeader(secrets: readonly string[], timestamp: number, rawBody: string | Buffer): string {
  if (secrets.length === 0) throw new RangeError("A signature header needs at least one secret.");
  const signatures = secrets.map((secret) => `v1=${computeSignature(secret, timestamp, rawBody)}`);
  return [`t=${timestamp}`, ...signatures].join(",");
}

/** The User-Agent of every delivery. */
export const WEBHOOK_USER_AGENT = "Svc-Webhooks/1.0";

/** The headers of a signed delivery (docs/contract.md, Delivery request), for the worker and `svc listen` alike. */
export function deliveryHeaders(delivery: {
  secrets: readonly string[];
  timestamp: number;
  body: string;
  eventId: string;
  eventType: string;
  attempt: number;
}): Record<string, string> {
  return {
    "Svc-Signature": signatureHeader(delivery.secrets, delivery.timestamp, delivery.body),
    "Svc-Event-Id": delivery.eventId,
    "Svc-Event-Type": delivery.eventType,
    "Svc-Delivery-Attempt": String(delivery.attempt),
    "User-Agent": WEBHOOK_USER_AGENT,
  };
}

/** `whsec_` + 32 base62 characters, drawn without modulo bias (about 190 bits of entropy). */
export function generateWebhookSecret(): string {
  return WEBHOOK_SECRET_PREFIX + randomBase62(SECRET_RANDOM_LENGTH);
}
