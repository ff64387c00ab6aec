// Agenda's notification channels, able to wake this process's own job processor: the job repository stops
// locking a job name at its lock limit, and wakes Agenda to lock more once runs have made room.
import { MongoChangeStreamNotificationChannel } from "@agendajs/mongo-backend";
import { InMemoryNotificationChannel, type JobNotification, toJobId } from "agenda";

/** A notification that makes Agenda look for due jobs of `jobName` now (it names no particular job). */
function wakeUp(jobName: string): JobNotification {
  return { jobId: toJobId(""), jobName, nextRunAt: null, priority: 0, timestamp: new Date() };
}

export class WakeableChangeStreamChannel extends MongoChangeStreamNotificationChannel {
  wake(jobName: string): Promise<void> {
    return this.notifyHandlers(wakeUp(jobName));
  }
}

export class WakeableInMemoryChannel extends InMemoryNotificationChannel {
  wake(jobName: string): Promise<void> {
    return this.notifyHandlers(wakeUp(jobName));
  }
}
