// Suspension of users by internal services, each change emitting its event through the user's outbox.
import type { Clock } from "../domain/clock.ts";
import { svcError } from "../domain/errors.ts";
import { USER_ID_PATTERN } from "../domain/ids.ts";
import { CHANGED, compareAndSet } from "../lib/compare-and-set.ts";
import type { MoveMark } from "../domain/reserved-ids.ts";
import type { TenantScope } from "../domain/tenant-scope.ts";
import { SUSPENSION_STAMPS_KEPT, type UserDocument } from "../store/user-document.ts";
import type { UserRepository } from "../store/user-repository.ts";
import type { EventRelay } from "../events/event-relay.ts";
import { userEvent } from "../events/event-factory.ts";

export class UserLifecycle {
  constructor(
    private readonly users: UserRepository,
    private readonly relay: EventRelay,
    private readonly clock: Clock,
    private readonly onBackgroundError: (error: unknown) => void,
  ) {}

  /**
   * Sets `suspended`; emits `user.suspended` or `user.unsuspended` only when the value changes. A change made
   * with an Idempotency-Key (`mark`) keeps its stamp on the user, written with it: a resumed run of the same
   * request that finds it answers the user as it is rather than changing it again (even if someone changed it
   * back since).
   */
  async setSuspended(scope: TenantScope, userId: string, suspended: boolean, mark: MoveMark | null = null): Promise<UserDocument> {
    const read = () => (USER_ID_PATTERN.test(userId) ? this.users.find(scope, userId) : null);
    return compareAndSet(`suspension of user ${userId}`, read, async (current) => {
      if (!current) throw svcError("user_not_found");
      if (mark?.resumed && current.suspension_moved_by?.includes(mark.stamp)) {
        if (current.outbox.length > 0) await this.relay.relayUserOutbox(current).catch(this.onBackgroundError);
        return current;
      }
      if (current.suspended === suspended) return current;
      const now = this.clock();
      const after: UserDocument = { ...current, suspended, updated_at: now };
      const event = userEvent(suspended ? "user.suspended" : "user.unsuspended", after, now);
      const updated = await this.users.update(
        scope,
        userId,
        {
          $set: { suspended, updated_at: now },
          $push: {
            outbox: event,
            ...(mark ? { suspension_moved_by: { $each: [mark.stamp], $slice: -SUSPENSION_STAMPS_KEPT } } : {}),
          },
        },
        { suspended: !suspended },
      );
      if (updated) {
        await this.relay.relayUserOutbox({ ...updated, outbox: [event] }).catch(this.onBackgroundError);
        return updated;
      }
      return CHANGED;
    });
  }
}
