// LiveEvents without a change stream (a database that is not a replica set): the events this process logs reach
// the subscriptions of their project and environment as they are written; a subscription that falls too far behind
// ends (its client resumes from the log), and the drain ends every subscription.
import { expect } from "chai";
import { newEventId } from "../../src/domain/ids.ts";
import { newUuid } from "../../src/domain/random.ts";
import { LiveEvents } from "../../src/events/live-events.ts";
import type { Database } from "../../src/store/database.ts";
import { type EventDocument, EventRepository } from "../../src/store/event-repository.ts";
import { freshDatabase } from "../support/database.ts";

function eventOf(projectId: string, type = "user.created", livemode = false): EventDocument {
  return { _id: newEventId(), project_id: projectId, livemode, type, created_at: new Date(), data: {}, fanned_out: true };
}

async function collect(subscription: AsyncIterable<EventDocument>): Promise<string[]> {
  const ids: string[] = [];
  for await (const event of subscription) ids.push(event._id);
  return ids;
}

describe("LiveEvents without a replica set", () => {
  let database: Database;
  let events: EventRepository;

  before(async () => {
    database = await freshDatabase();
    events = new EventRepository(database.db);
    await events.ensureIndexes();
  });
  after(async () => {
    await database?.close();
  });

  it("hears the events this process logs, by project, environment and type, without opening a change stream", async () => {
    const live = new LiveEvents(events, { changeStreams: false, onError: (error) => expect.fail(String(error)) });
    const project = newUuid();
    const all = await live.subscribe({ projectId: project, livemode: false }, null);
    const kycOnly = await live.subscribe({ projectId: project, livemode: false }, ["kyc.approved"]);
    const collected = [collect(all), collect(kycOnly)];
    const mine = [eventOf(project), eventOf(project, "kyc.approved")];
    await events.insertManyOnce([mine[0]!, eventOf(newUuid()), eventOf(project, "user.created", true)]);
    await events.insertOnce(mine[1]!);
    // Logged twice (a relay run again): heard once.
    await events.insertOnce(mine[1]!);
    await live.drain();
    expect(await Promise.all(collected)).to.deep.equal([mine.map((e) => e._id), [mine[1]!._id]]);
    expect(live.feedsOpened).to.equal(0);
    expect(live.size).to.equal(0);
  });

  it("ends a subscription that falls behind by more than it may hold", async () => {
    const live = new LiveEvents(events, { changeStreams: false, maxBuffered: 3, onError: (error) => expect.fail(String(error)) });
    const project = newUuid();
    const slow = await live.subscribe({ projectId: project, livemode: false }, null);
    for (let i = 0; i < 5; i++) await events.insertOnce(eventOf(project));
    expect(live.size).to.equal(0);
    // What it held is still read, then it ends: its client resumes from the log after the last one.
    expect(await collect(slow)).to.have.length(3);
    await live.drain();
  });

  it("ends a subscription taken while draining at once", async () => {
    const live = new LiveEvents(events, { changeStreams: false, onError: (error) => expect.fail(String(error)) });
    await live.drain();
    expect(await collect(await live.subscribe({ projectId: newUuid(), livemode: false }, null))).to.deep.equal([]);
  });
});
