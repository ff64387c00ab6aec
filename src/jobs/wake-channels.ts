// Agenda's notification channels, able to wake this process's own job processor: the job repository stops
// locking a job name at its lock limit, and wakes Agenda to lock more once runs have made room.
import { MongoChangeStreamNotificationChannel } from "@agendajs/mongo-backend";
import { InMemoryNotificationChannel, type JobNotification, toJobId } from "agenda";
import type { ChangeStreamOptions, Db } from "mongodb";

/** A notification that makes Agenda look for due jobs of `jobName` now (it names no particular job). */
function wakeUp(jobName: string): JobNotification {
  return { jobId: toJobId(""), jobName, nextRunAt: null, priority: 0, timestamp: new Date() };
}

/**
 * Hears of inserted jobs only, and only of those due soon. Agenda's channel asks the database for insert, update and
 * replace events and, without full documents, drops the updates it receives: the database would build and send an
 * event for every lock and state save of every run, for nothing. A job's own runs, locks and reschedules are found by
 * the process running it, and looking every update up would cost a read and a lock attempt per run. Agenda also drops
 * the notice of a job due after its next scan, which that scan finds in time: such a job (a delivery's guarantee,
 * due one lease later, written for every delivery) is not sent at all. Due within two poll intervals of its write
 * (the database's clock) passes, a margin for the clocks of the database and of the worker. The channel is given the
 * jobs collection through a view whose `watch` asks for these alone (the channel only ever calls `collection().watch`).
 */
export class WakeableChangeStreamChannel extends MongoChangeStreamNotificationChannel {
  constructor({ db, collection, pollIntervalMs }: { db: Db; collection: string; pollIntervalMs: number }) {
    const dueSoon = { $expr: { $lte: ["$fullDocument.nextRunAt", { $add: ["$wallTime", 2 * pollIntervalMs] }] } };
    const watchInserts = {
      collection: (name: string) => ({
        watch: (_pipeline: unknown, options: ChangeStreamOptions) =>
          db.collection(name).watch([{ $match: { operationType: "insert" } }, { $match: dueSoon }], options),
      }),
    };
    super({ db: watchInserts as unknown as Db, collection, fullDocument: false });
  }

  wake(jobName: string): Promise<void> {
    return this.notifyHandlers(wakeUp(jobName));
  }
}

export class WakeableInMemoryChannel extends InMemoryNotificationChannel {
  wake(jobName: string): Promise<void> {
    return this.notifyHandlers(wakeUp(jobName));
  }
}
