// A server started moments ago keeps no change stream history from before its start, so a resume cursor created in
// its first seconds cannot be found there (EventRepository.lateArrivals answers null). Tests of late arrivals wait
// until the history reaches back far enough for an event created now (probes of a project of their own).
import { newEventId } from "../../src/domain/ids.ts";
import { newUuid } from "../../src/domain/random.ts";
import type { EventRepository } from "../../src/store/event-repository.ts";

export async function untilHistoryCoversNewEvents(events: EventRepository): Promise<void> {
  const scope = { projectId: newUuid(), livemode: false };
  for (;;) {
    const probe = {
      _id: newEventId(),
      project_id: scope.projectId,
      livemode: false,
      type: "webhook.test",
      created_at: new Date(),
      data: { message: "probe of the change stream's history" },
      fanned_out: true,
    };
    await events.insertOnce(probe);
    if ((await events.lateArrivals(scope, probe, null)) !== null) return;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}
