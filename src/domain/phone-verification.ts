// Phone verification rules (docs/contract.md, Phone verification): pure functions over the stored state of a
// user's latest verification and the times of its recent sends. The service applies their verdicts with
// conditional single-document writes, so concurrent requests cannot count a send or an attempt twice.
import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import { svcError } from "./errors.ts";

export const VERIFICATION_CODE_PATTERN = /^\d{6}$/;
export const VERIFICATION_CODE_VALIDITY_MS = 10 * 60 * 1000;
export const VERIFICATION_MAX_ATTEMPTS = 5;
const VERIFICATION_RESEND_DELAY_MS = 30 * 1000;
export const VERIFICATION_SENDS_PER_HOUR = 5;
const VERIFICATION_SEND_WINDOW_MS = 60 * 60 * 1000;
export const VERIFICATION_CHANNELS = ["sms"] as const;
/** Sandbox: no SMS is sent and this is always the code. */
export const SANDBOX_VERIFICATION_CODE = "000000";
/** Sandbox: a user whose phone ends so gets 503 verification_unavailable on every send. */
export const SANDBOX_UNAVAILABLE_PHONE_SUFFIX = "0503";
/** How long a client is told to wait after 503 verification_unavailable. */
export const VERIFICATION_UNAVAILABLE_RETRY_AFTER_S = 30;

/** Stored statuses; `expired` and `max_attempts_reached` are derived from the time and the attempts left. */
export type StoredVerificationStatus = "pending" | "approved" | "canceled";
export type VerificationStatus = StoredVerificationStatus | "expired" | "max_attempts_reached";

/** The latest verification of a user, as stored in the user document (never answered as is). */
export interface StoredVerification {
  /** Random; binds the code's HMAC to this code. */
  id: string;
  channel: "sms";
  status: StoredVerificationStatus;
  attempts_remaining: number;
  /** Random nonce the code is derived from with the service's key: a resend sends the same code again. */
  code_nonce: string;
  /** HMAC of the code: the code itself is never stored. */
  code_hmac: string;
  expires_at: Date;
  last_sent_at: Date;
  created_at: Date;
  updated_at: Date;
  /** Incremented by every write: a send is written only if nothing changed since it was planned. */
  rev: number;
  /** The move stamp of the check that approved it with an Idempotency-Key: its retry answers the approval. */
  approved_by?: string;
}

/** The status a client sees now. */
export function effectiveStatus(v: StoredVerification, now: Date): VerificationStatus {
  if (v.status !== "pending") return v.status;
  if (v.attempts_remaining <= 0) return "max_attempts_reached";
  if (now.getTime() >= v.expires_at.getTime()) return "expired";
  return "pending";
}

/** Send times still inside the rolling hour before `now`. */
export function sendsInWindow(sends: readonly Date[], now: Date): Date[] {
  return sends.filter((t) => now.getTime() - t.getTime() < VERIFICATION_SEND_WINDOW_MS);
}

/** When the next send is allowed: 30 s after the last one, and after the oldest of 5 sends in the hour leaves it. */
export function nextSendAt(sends: readonly Date[], now: Date): Date {
  const recent = sendsInWindow(sends, now).sort((a, b) => a.getTime() - b.getTime());
  let at = now.getTime();
  const last = recent[recent.length - 1];
  if (last) at = Math.max(at, last.getTime() + VERIFICATION_RESEND_DELAY_MS);
  if (recent.length >= VERIFICATION_SENDS_PER_HOUR) {
    at = Math.max(at, recent[recent.length - VERIFICATION_SENDS_PER_HOUR]!.getTime() + VERIFICATION_SEND_WINDOW_MS);
  }
  return new Date(at);
}

export function sendsRemaining(sends: readonly Date[], now: Date): number {
  return Math.max(0, VERIFICATION_SENDS_PER_HOUR - sendsInWindow(sends, now).length);
}

/** What a start does: re-send the pending code, or issue a new one. */
export type SendPlan = { kind: "resend" } | { kind: "new" };

/**
 * The start route's verdict: 429 `rate_limit_exceeded` with the exact wait when a send is not allowed yet,
 * else whether the pending code is re-sent (valid, attempts left: same code, same attempts) or a new one issued.
 */
export function planSend(current: StoredVerification | null, sends: readonly Date[], now: Date): SendPlan {
  const allowedAt = nextSendAt(sends, now);
  const waitMs = allowedAt.getTime() - now.getTime();
  if (waitMs > 0) {
    const retryAfter = Math.max(1, Math.ceil(waitMs / 1000));
    const hourly = sendsInWindow(sends, now).length >= VERIFICATION_SENDS_PER_HOUR;
    throw svcError(
      "rate_limit_exceeded",
      hourly
        ? `At most ${VERIFICATION_SENDS_PER_HOUR} codes may be sent per hour; retry in ${retryAfter} seconds.`
        : `A code was sent less than ${VERIFICATION_RESEND_DELAY_MS / 1000} seconds ago; retry in ${retryAfter} seconds.`,
      { metadata: { retry_after: String(retryAfter) } },
    );
  }
  return current && effectiveStatus(current, now) === "pending" ? { kind: "resend" } : { kind: "new" };
}

/**
 * The refusal a check gets, in the contract's order, before its code is compared: nothing pending, expired,
 * or no attempts left. Null when the code may be compared.
 */
export function checkRefusal(current: StoredVerification | null, now: Date): Error | null {
  if (current?.status !== "pending") return svcError("no_pending_verification");
  if (now.getTime() >= current.expires_at.getTime()) return svcError("verification_expired");
  if (current.attempts_remaining <= 0) return svcError("verification_attempts_exceeded");
  return null;
}

export function wrongCodeError(attemptsRemaining: number): Error {
  return svcError("invalid_verification_code", `Wrong code; ${attemptsRemaining} attempts remaining.`);
}

/**
 * Codes are derived and compared with a key of the service: a code is HMAC(key, nonce) reduced to six digits
 * (so a resend can send the same code without storing it), and stored only as HMAC(key, id:code).
 */
export class VerificationCodes {
  constructor(private readonly key: Buffer) {}

  newNonce(): string {
    return randomBytes(16).toString("base64url");
  }

  /** The live code of a nonce: 48 bits of the HMAC reduced to 6 digits (bias below 1 in 10^8). */
  liveCode(nonce: string): string {
    const digest = createHmac("sha256", this.key).update(`code:${nonce}`).digest();
    return String(digest.readUIntBE(0, 6) % 1_000_000).padStart(6, "0");
  }

  hmac(verificationId: string, code: string): string {
    return createHmac("sha256", this.key).update(`check:${verificationId}:${code}`).digest("base64url");
  }

  matches(v: Pick<StoredVerification, "id" | "code_hmac">, code: string): boolean {
    const expected = Buffer.from(v.code_hmac, "base64url");
    const given = Buffer.from(this.hmac(v.id, code), "base64url");
    return expected.length === given.length && timingSafeEqual(expected, given);
  }
}
