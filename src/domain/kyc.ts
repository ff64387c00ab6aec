// Identity verification (KYC) sessions (docs/contract.md, KYC sessions): statuses, the moves between them and
// what each move does to the user's `kyc_status`. Pure: the service writes each move, the user's new
// `kyc_status` and its event in one conditional update of the user document.
import { svcError, validationError } from "./errors.ts";
import { codePointLength } from "./text.ts";

export type KycStatus = "none" | "pending" | "approved" | "rejected";
export type KycSessionStatus = "requires_input" | "processing" | "approved" | "rejected" | "canceled" | "expired";

export const KYC_STATUSES: readonly KycStatus[] = ["none", "pending", "approved", "rejected"];
export const KYC_SESSION_STATUSES: readonly KycSessionStatus[] = ["requires_input", "processing", "approved", "rejected", "canceled", "expired"];
export const KYC_SESSION_LIFETIME_MS = 24 * 60 * 60 * 1000;
export const KYC_SESSION_ID_PATTERN = /^kyc_[A-Za-z0-9]{24}$/;
export const KYC_RETURN_URL_MAX_LENGTH = 2048;
export const KYC_REJECTION_REASON_MAX_LENGTH = 500;
/** `last_error.code` of a rejected session. */
export const KYC_REJECTED_ERROR_CODE = "verification_rejected";

export interface StoredKycSession {
  id: string;
  status: KycSessionStatus;
  url: string;
  return_url: string | null;
  expires_at: Date;
  last_error: { code: string; reason: string | null } | null;
  /** The user's kyc_status before this session made it pending: restored on cancel and expiry. */
  previous_kyc_status: KycStatus;
  created_at: Date;
  updated_at: Date;
  /**
   * The stamps (moveStamp) of the Idempotency-Keys whose calls moved the session, one per such move, each
   * written with its move; absent until a call with a key moves it.
   */
  moved_by?: string[];
}

/** How many finished sessions a user document keeps; older finished ones move to the archive. */
export const FINISHED_KYC_SESSIONS_KEPT = 10;

/** A session no move can change again. */
function isFinished(session: Pick<StoredKycSession, "status">): boolean {
  return session.status !== "requires_input" && session.status !== "processing";
}

/** The finished sessions beyond the newest `kept` finished ones (`sessions` oldest first, as stored). */
export function sessionsToArchive(sessions: readonly StoredKycSession[], kept = FINISHED_KYC_SESSIONS_KEPT): StoredKycSession[] {
  const finished = sessions.filter(isFinished);
  return finished.slice(0, Math.max(0, finished.length - kept));
}

/** A move and the session statuses it may start from. */
export type KycMove = "submit" | "approve" | "reject" | "cancel" | "expire";

const MOVES: Record<KycMove, { from: readonly KycSessionStatus[]; to: KycSessionStatus }> = {
  submit: { from: ["requires_input"], to: "processing" },
  approve: { from: ["requires_input", "processing"], to: "approved" },
  reject: { from: ["requires_input", "processing"], to: "rejected" },
  cancel: { from: ["requires_input"], to: "canceled" },
  // A session still waiting for its end user expires; one being processed waits for its decision.
  expire: { from: ["requires_input"], to: "expired" },
};

export function moveOf(move: KycMove): { from: readonly KycSessionStatus[]; to: KycSessionStatus } {
  return MOVES[move];
}

/** The user's kyc_status after a move of its session. */
export function kycStatusAfter(move: KycMove, session: Pick<StoredKycSession, "previous_kyc_status">): KycStatus {
  switch (move) {
    case "submit":
      return "pending";
    case "approve":
      return "approved";
    case "reject":
      return "rejected";
    default:
      return session.previous_kyc_status;
  }
}

/** The event a move emits: only decisions do. */
export function kycEventTypeOf(move: KycMove): "kyc.approved" | "kyc.rejected" | null {
  return move === "approve" ? "kyc.approved" : move === "reject" ? "kyc.rejected" : null;
}

/** 409 invalid_state unless the session may make `move`. */
export function checkMove(session: StoredKycSession, move: KycMove): void {
  if (!MOVES[move].from.includes(session.status)) {
    throw svcError(
      "invalid_state",
      `The KYC session is ${session.status}; it cannot be ${MOVES[move].to === "processing" ? "submitted" : MOVES[move].to} now.`,
    );
  }
}

/**
 * Whether a new session may open for a user: 409 invalid_state when KYC is approved or a session is being
 * processed. Answers the session `requires_input` the new one cancels, if any.
 */
export function checkNewSession(kycStatus: KycStatus, sessions: readonly StoredKycSession[]): StoredKycSession | null {
  if (kycStatus === "approved") throw svcError("invalid_state", "KYC is already approved for this user.");
  if (sessions.some((s) => s.status === "processing")) throw svcError("invalid_state", "A KYC session of this user is being processed.");
  return sessions.find((s) => s.status === "requires_input") ?? null;
}

/** `return_url`: absolute https (http too in sandbox), at most 2,048 characters, no credentials. */
export function checkReturnUrl(raw: string, livemode: boolean): string {
  const refuse = (why: string) => validationError("return_url", `return_url ${why}.`);
  if (codePointLength(raw) > KYC_RETURN_URL_MAX_LENGTH) throw refuse(`must be at most ${KYC_RETURN_URL_MAX_LENGTH} characters`);
  if (/\s/.test(raw)) throw refuse("may not contain spaces");
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw refuse("must be an absolute URL");
  }
  const schemes = livemode ? ["https:"] : ["https:", "http:"];
  if (!schemes.includes(url.protocol)) throw refuse(livemode ? "must be an https URL" : "must be an http or https URL");
  if (url.username || url.password) throw refuse("may not contain a user name or password");
  return raw;
}

export function checkRejectionReason(reason: string | undefined): string | null {
  if (reason === undefined) return null;
  if (codePointLength(reason) < 1 || codePointLength(reason) > KYC_REJECTION_REASON_MAX_LENGTH) {
    throw validationError("reason", `reason must be 1 to ${KYC_REJECTION_REASON_MAX_LENGTH} characters.`);
  }
  return reason;
}
