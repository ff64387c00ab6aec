// A user as stored: one document holds the user, its profile, its phone verification, its KYC sessions, its
// wallets and its outbox of events, so that each change and its event are one single-document write. Written
// only by UserRepository (store/user-repository.ts), the collection's one repository.
import type { KycStatus, StoredKycSession } from "../domain/kyc.ts";
import type { StoredVerification } from "../domain/phone-verification.ts";
import type { ProfileFieldValues } from "../domain/profile-rules.ts";
import type { OutboxEvent } from "./outbox.ts";

export type WalletStatus = "none" | "pending" | "ready" | "failed";

export interface WalletRecord {
  id: string;
  status: "ready";
  simulated: boolean;
  created_at: Date;
}

/** Stored profile: fields never set are absent. */
export type StoredProfile = Partial<ProfileFieldValues> & { updated_at: Date };

export interface UserDocument {
  _id: string;
  project_id: string;
  livemode: boolean;
  phone: string;
  external_id: string | null;
  verified: boolean;
  kyc_status: KycStatus;
  suspended: boolean;
  wallet_status: WalletStatus;
  wallets: WalletRecord[];
  created_at: Date;
  last_login_at: Date | null;
  profile: StoredProfile | null;
  /** Lowercased tagname, unique per project and environment. */
  tagname_key: string | null;
  outbox: OutboxEvent[];
  updated_at: Date;
  /**
   * The latest phone verification, in the user document so that approving it and setting `verified` are one
   * write, and attempts are counted by conditional updates of one document. Absent until the first start.
   */
  phone_verification?: StoredVerification | null;
  /** Times of the verification sends of the last hour (older ones are dropped at the next send). */
  verification_sends?: Date[];
  /**
   * Every KYC session of the user, oldest first: a session's move, the user's `kyc_status` and its `kyc.*`
   * event are one write of this document.
   */
  kyc_sessions?: StoredKycSession[];
  /** Incremented by every write of `kyc_sessions`: each is made only if none happened since it was read. */
  kyc_rev?: number;
  /**
   * The stamps (moveStamp) of the Idempotency-Keys whose calls changed `suspended` lately (the newest
   * SUSPENSION_STAMPS_KEPT), each written with its change; absent until a call with a key changes it.
   */
  suspension_moved_by?: string[];
}

/** How many stamps of suspension changes a user keeps: enough for the changes a key's lifetime sees. */
export const SUSPENSION_STAMPS_KEPT = 10;
