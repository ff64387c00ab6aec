// KYC sessions of users (docs/contract.md, KYC sessions). Sessions live in their user's document, so every
// move of a session, the user's new `kyc_status` and the `kyc.*` event it emits (in the user's outbox) are one
// conditional write of that document, guarded by the user's `kyc_rev`: never lost, never duplicated, and
// relayed like every outbox event (right away, and by the sweeper after a crash). Finished sessions beyond the
// newest few move to the KycSessionArchive when a session is created, and reads look there too. A session still
// `requires_input` 24 hours after its creation expires: an Agenda job is scheduled for that moment, and any
// read or move of the user's sessions settles due expiries first, so the answer never depends on the job's timing.
import type { Clock } from "../domain/clock.ts";
import { svcError } from "../domain/errors.ts";
import { newKycSessionId, USER_ID_PATTERN } from "../domain/ids.ts";
import { CHANGED, compareAndSet } from "../lib/compare-and-set.ts";
import {
  checkMove,
  checkNewSession,
  KYC_REJECTED_ERROR_CODE,
  KYC_SESSION_ID_PATTERN,
  KYC_SESSION_LIFETIME_MS,
  kycEventTypeOf,
  kycStatusAfter,
  moveOf,
  sessionsToArchive,
  type KycMove,
  type KycStatus,
  type StoredKycSession,
} from "../domain/kyc.ts";
import type { MoveMark } from "../domain/reserved-ids.ts";
import type { TenantScope } from "../domain/tenant-scope.ts";
import { kycEvent } from "../events/event-factory.ts";
import type { EventRelay } from "../events/event-relay.ts";
import type { KycProvider } from "../identity/kyc-provider.ts";
import type { JobQueue } from "../jobs/job-queue.ts";
import type { KycSessionArchive } from "../store/kyc-session-archive.ts";
import type { OutboxEvent } from "../store/outbox.ts";
import type { UserDocument } from "../store/user-document.ts";
import type { UserRepository } from "../store/user-repository.ts";
import type { TenantSettings } from "./tenant-settings.ts";

const EXPIRE_KYC_SESSION_JOB = "expire-kyc-session";
/** How long a client is told to wait after 503 kyc_session_unavailable. */
const PROVIDER_RETRY_AFTER_S = 30;

interface ExpireKycSessionJob {
  userId: string;
  sessionId: string;
}

export interface KycLifecycleDependencies {
  users: UserRepository;
  /** Where finished sessions go once their user holds more than FINISHED_KYC_SESSIONS_KEPT. */
  archive: KycSessionArchive;
  settings: TenantSettings;
  relay: EventRelay;
  provider: KycProvider;
  jobs: JobQueue;
  clock: Clock;
  /** The service's own base URL (`http://host:port`): sandbox sessions point at its dashboard. */
  baseUrl: () => string;
  providerTimeoutMs?: number;
  onBackgroundError: (error: unknown) => void;
}

/** The filter that holds while the user's sessions are as they were read. */
function sessionsAsRead(user: UserDocument) {
  return { kyc_rev: user.kyc_rev ?? { $exists: false } };
}

export class KycLifecycle {
  constructor(private readonly deps: KycLifecycleDependencies) {
    deps.jobs.define<ExpireKycSessionJob>(EXPIRE_KYC_SESSION_JOB, async (job) => {
      const user = await deps.users.findById(job.userId);
      if (user) await this.settleExpired({ projectId: user.project_id, livemode: user.livemode }, user);
    });
  }

  /**
   * Opens a session for a user: checks in the contract's order (user, live setting, suspension, state), asks
   * the provider in live, then writes the session, cancelling one still `requires_input`. A creation with an
   * Idempotency-Key brings the session id reserved for it; when an earlier run of the same request died holding
   * the key (`resumed`), the session that run wrote, if it got that far, is the answer.
   */
  async create(
    scope: TenantScope,
    userId: string,
    returnUrl: string | null,
    reserved: { id: string; resumed: boolean } | null,
  ): Promise<{ user: UserDocument; session: StoredKycSession }> {
    if (reserved?.resumed) {
      const earlier = await this.findIn(scope, reserved.id);
      if (earlier && earlier.user._id === userId) return earlier;
    }
    let user = await this.findUser(scope, userId);
    if (scope.livemode && !(await this.deps.settings.project(scope.projectId))?.live_kyc_enabled) throw svcError("feature_unavailable");
    if (user.suspended) throw svcError("user_suspended");
    user = await this.settleExpired(scope, user);
    checkNewSession(user.kyc_status, user.kyc_sessions ?? []);
    const id = reserved?.id ?? newKycSessionId();
    const url = scope.livemode ? await this.openAtProvider(scope, user, id, returnUrl) : `${this.deps.baseUrl()}/dashboard/kyc/${id}`;
    const now = this.deps.clock();
    const expiresAt = new Date(now.getTime() + KYC_SESSION_LIFETIME_MS);
    // Scheduled before the session exists: a job whose session was never written finds nothing to do.
    await this.deps.jobs.schedule<ExpireKycSessionJob>(EXPIRE_KYC_SESSION_JOB, { userId: user._id, sessionId: id }, expiresAt, ["sessionId"]);
    const read = async (attempt: number) => (attempt === 0 ? user : this.settleExpired(scope, await this.findUser(scope, userId)));
    return compareAndSet(`new KYC session of user ${userId}`, read, async (user) => {
      const replaced = checkNewSession(user.kyc_status, user.kyc_sessions ?? []);
      // Copied before the write that drops them: a crash in between leaves them in both places, never in none.
      const archived = sessionsToArchive(user.kyc_sessions ?? []);
      await this.deps.archive.keep(user, archived);
      const sessions = (user.kyc_sessions ?? []).filter((s) => !archived.includes(s));
      const session: StoredKycSession = {
        id,
        status: "requires_input",
        url,
        return_url: returnUrl,
        expires_at: expiresAt,
        last_error: null,
        // A replaced session made the status pending: what comes back on cancel or expiry is what it replaced.
        previous_kyc_status: replaced ? replaced.previous_kyc_status : user.kyc_status,
        created_at: now,
        updated_at: now,
      };
      const next = [...sessions.map((s) => (s.id === replaced?.id ? { ...s, status: "canceled" as const, updated_at: now } : s)), session];
      const updated = await this.deps.users.update(
        scope,
        user._id,
        { $set: { kyc_sessions: next, kyc_status: "pending", updated_at: now }, $inc: { kyc_rev: 1 } },
        sessionsAsRead(user),
      );
      return updated ? { user: updated, session } : CHANGED;
    });
  }

  /** A session of the tenant by id, due expiries settled; 404 kyc_session_not_found otherwise. */
  async find(scope: TenantScope | null, sessionId: string): Promise<{ user: UserDocument; session: StoredKycSession }> {
    const found = await this.findIn(scope, sessionId);
    if (!found) throw svcError("kyc_session_not_found");
    return found;
  }

  /** A session of the tenant by id, due expiries settled, or null. Its user document's copy comes first. */
  private async findIn(scope: TenantScope | null, sessionId: string): Promise<{ user: UserDocument; session: StoredKycSession } | null> {
    if (!KYC_SESSION_ID_PATTERN.test(sessionId)) return null;
    const found = await this.deps.users.findByKycSession(scope, sessionId);
    if (found) {
      const user = await this.settleExpired({ projectId: found.project_id, livemode: found.livemode }, found);
      return { user, session: user.kyc_sessions!.find((s) => s.id === sessionId)! };
    }
    const archived = await this.deps.archive.find(scope, sessionId);
    const user = archived ? await this.deps.users.find({ projectId: archived.project_id, livemode: archived.livemode }, archived.user_id) : null;
    return user && archived ? { user, session: archived.session } : null;
  }

  /** The sessions of a user, newest first, due expiries settled, archived ones included. */
  async sessionsOf(scope: TenantScope, userId: string): Promise<{ user: UserDocument; sessions: StoredKycSession[] }> {
    const user = await this.settleExpired(scope, await this.findUser(scope, userId));
    const inline = user.kyc_sessions ?? [];
    const archived = (await this.deps.archive.sessionsOf(user))
      .filter((s) => !inline.some((i) => i.id === s.id))
      // Archived sessions are older than every session still in the document; ties keep one fixed order.
      .sort((a, b) => a.created_at.getTime() - b.created_at.getTime() || (a.id < b.id ? -1 : 1));
    return { user, sessions: [...archived, ...inline].reverse() };
  }

  /**
   * Moves a session (submit, approve, reject, cancel): 409 invalid_state from any other status. A decision
   * writes the user's kyc_status and its `kyc.*` event in the same update, then relays the event. A move with an
   * Idempotency-Key (`mark`) adds its stamp to the session in that update; a resumed run of the same request
   * that finds its stamp there answers the session as it is (its event was written with the move) instead of
   * 409 invalid_state, which any other mover's session still gets.
   */
  async move(
    scope: TenantScope | null,
    sessionId: string,
    move: KycMove,
    reason: string | null = null,
    mark: MoveMark | null = null,
  ): Promise<{ user: UserDocument; session: StoredKycSession }> {
    const found = await this.find(scope, sessionId);
    const tenant = { projectId: found.user.project_id, livemode: found.user.livemode };
    const read = (attempt: number) => (attempt === 0 ? found : this.find(tenant, sessionId));
    return compareAndSet(`move of KYC session ${sessionId}`, read, async ({ user, session }) => {
      if (mark?.resumed && session.moved_by?.includes(mark.stamp)) {
        if (user.outbox.length > 0) await this.deps.relay.relayUserOutbox(user).catch(this.deps.onBackgroundError);
        return { user, session };
      }
      checkMove(session, move);
      const now = this.deps.clock();
      const kycStatus = kycStatusAfter(move, session);
      const moved: StoredKycSession = {
        ...session,
        status: moveOf(move).to,
        updated_at: now,
        ...(move === "reject" ? { last_error: { code: KYC_REJECTED_ERROR_CODE, reason } } : {}),
        ...(mark ? { moved_by: [...(session.moved_by ?? []), mark.stamp] } : {}),
      };
      const next = (user.kyc_sessions ?? []).map((s) => (s.id === session.id ? moved : s));
      const eventType = kycEventTypeOf(move);
      const event: OutboxEvent | null = eventType ? kycEvent(eventType, { ...user, kyc_status: kycStatus }, now) : null;
      const updated = await this.deps.users.update(
        tenant,
        user._id,
        {
          $set: { kyc_sessions: next, kyc_status: kycStatus, updated_at: now },
          $inc: { kyc_rev: 1 },
          ...(event ? { $push: { outbox: event } } : {}),
        },
        sessionsAsRead(user),
      );
      if (updated) {
        if (event) await this.deps.relay.relayUserOutbox({ ...updated, outbox: [event] }).catch(this.deps.onBackgroundError);
        return { user: updated, session: moved };
      }
      return CHANGED;
    });
  }

  /** Expires the user's sessions still `requires_input` past their time, restoring the kyc_status before them. */
  async settleExpired(scope: TenantScope, user: UserDocument): Promise<UserDocument> {
    let seen = user;
    const read = (attempt: number) => (attempt === 0 ? user : this.deps.users.find(scope, user._id));
    return compareAndSet(`KYC expiry of user ${user._id}`, read, async (current) => {
      // Deleted in between: nothing left to expire.
      if (!current) return seen;
      seen = current;
      const now = this.deps.clock();
      const sessions = current.kyc_sessions ?? [];
      const due = sessions.filter((s) => s.status === "requires_input" && s.expires_at.getTime() <= now.getTime());
      if (due.length === 0) return current;
      let kycStatus: KycStatus = current.kyc_status;
      for (const s of due) kycStatus = kycStatusAfter("expire", s);
      const next = sessions.map((s) => (due.includes(s) ? { ...s, status: "expired" as const, updated_at: now } : s));
      const updated = await this.deps.users.update(
        scope,
        current._id,
        { $set: { kyc_sessions: next, kyc_status: kycStatus, updated_at: now }, $inc: { kyc_rev: 1 } },
        sessionsAsRead(current),
      );
      return updated ?? CHANGED;
    });
  }

  private async openAtProvider(scope: TenantScope, user: UserDocument, sessionId: string, returnUrl: string | null): Promise<string> {
    try {
      const { url } = await this.deps.provider.openSession(
        { sessionId, userId: user._id, projectId: scope.projectId, returnUrl },
        AbortSignal.timeout(this.deps.providerTimeoutMs ?? 10_000),
      );
      return url;
    } catch {
      throw svcError("kyc_session_unavailable", undefined, { metadata: { retry_after: String(PROVIDER_RETRY_AFTER_S) } });
    }
  }

  private async findUser(scope: TenantScope, id: string): Promise<UserDocument> {
    const user = USER_ID_PATTERN.test(id) ? await this.deps.users.find(scope, id) : null;
    if (!user) throw svcError("user_not_found");
    return user;
  }
}
