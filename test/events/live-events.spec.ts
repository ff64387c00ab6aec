// LiveEvents without a change stream (a database that is not a replica set): the events this process logs reach
// the subscriptions of their project and environment as they are written; a subscription that falls too far behind
// fails (its client resumes from the log) without holding up another, and the drain ends every subscription. On a
// replica set, the events a change stream's batch brings reach a subscription together, and a first subscription
// answers without waiting for its change stream's first getMore. EventRepository.lateArrivals: the events that sort
// before a resume's cursor in the log's order yet reached the log after it, read from the change stream's history,
// of the cursor's project, environment and types only; null when that history does not reach back to the cursor.
import { expect } from "chai";
import { SvcError } from "../../src/domain/errors.ts";
import { newEventId } from "../../src/domain/ids.ts";
import { newUuid } from "../../src/domain/random.ts";
import { LiveEvents } from "../../src/events/live-events.ts";
import { connectDatabase, type Database } from "../../src/store/database.ts";
import { type EventDocument, EventRepository } from "../../src/store/event-repository.ts";
import { type InsertSource, LiveInserts } from "../../src/store/live-inserts.ts";
import { untilHistoryCoversNewEvents } from "../support/change-stream-history.ts";
import { freshDatabase, freshDatabaseUri } from "../support/database.ts";

function eventOf(projectId: string, type = "user.created", livemode = false): EventDocument {
  return { _id: newEventId(), project_id: projectId, livemode, type, created_at: new Date(), data: {}, fanned_out: true };
}

async function collect(subscription: AsyncIterable<EventDocument>): Promise<string[]> {
  const ids: string[] = [];
  for await (const event of subscription) ids.push(event._id);
  return ids;
}

describe("LiveEvents", () => {
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

  it("cuts off a subscription that falls behind by more than it may hold, holding up no other", async () => {
    const live = new LiveEvents(events, { changeStreams: false, maxBuffered: 3, onError: (error) => expect.fail(String(error)) });
    const project = newUuid();
    const slow = await live.subscribe({ projectId: project, livemode: false }, null);
    const reader = await live.subscribe({ projectId: project, livemode: false }, null);
    const read = collect(reader);
    const logged = Array.from({ length: 5 }, () => eventOf(project));
    for (const event of logged) await events.insertOnce(event);
    expect(live.size).to.equal(1);
    // What it held is dropped at once (its client reads it again from the log when it resumes); its next read fails.
    const failure = await collect(slow).then(
      () => expect.fail("the slow subscription ended without an error"),
      (error: SvcError) => error,
    );
    expect(failure).to.be.instanceOf(SvcError);
    expect([failure.code, failure.message]).to.deep.equal([
      "stream_fell_behind",
      "The stream's reader fell 3 messages behind; open it again (an event stream with starting_after set to the last event received, to miss none).",
    ]);
    await live.drain();
    expect(await read).to.deep.equal(logged.map((e) => e._id));
  });

  it("ends a subscription taken while draining at once", async () => {
    const live = new LiveEvents(events, { changeStreams: false, onError: (error) => expect.fail(String(error)) });
    await live.drain();
    expect(await collect(await live.subscribe({ projectId: newUuid(), livemode: false }, null))).to.deep.equal([]);
  });

  it("settles a waiting reader's read with the event as it is heard, and a waiting read with the end at the drain", async () => {
    let hear: (inserted: readonly EventDocument[]) => void = () => expect.fail("nothing listened");
    const source: InsertSource<EventDocument> = {
      onInserted: (listener) => (hear = listener),
      changeStreamStart: () => expect.fail("no change stream without a replica set"),
      watchInserts: () => expect.fail("no change stream without a replica set"),
    };
    const live = new LiveInserts<EventDocument, null>(source, () => () => true, {
      changeStreams: false,
      onError: (error) => expect.fail(String(error)),
    });
    const project = newUuid();
    const reader = (await live.subscribe({ projectId: project, livemode: false }, null))[Symbol.asyncIterator]();
    const read = (iterator: AsyncIterator<EventDocument>) => {
      const result: { settled?: IteratorResult<EventDocument> } = {};
      void iterator.next().then((settled) => (result.settled = settled));
      return result;
    };
    const first = read(reader);
    const event = eventOf(project);
    hear([event]);
    // One promise turn: the read's own. A reader woken to read again took three more, for every message of every stream.
    await Promise.resolve();
    expect(first.settled).to.deep.equal({ done: false, value: event });
    const last = reader.next();
    await live.drain();
    expect(await last).to.deep.equal({ done: true, value: undefined });
  });

  describe("read", () => {
    let hear: (inserted: readonly EventDocument[]) => void;
    let live: LiveInserts<EventDocument, readonly string[]>;
    const project = newUuid();
    const scope = { projectId: project, livemode: false };
    const ids = (read: readonly EventDocument[] | null) => read?.map((e) => e._id);

    beforeEach(() => {
      hear = () => expect.fail("nothing listened");
      const source: InsertSource<EventDocument> = {
        onInserted: (listener) => (hear = listener),
        changeStreamStart: () => expect.fail("no change stream without a replica set"),
        watchInserts: () => expect.fail("no change stream without a replica set"),
      };
      live = new LiveInserts(source, (types) => (event) => types.includes(event.type), {
        changeStreams: false,
        maxBuffered: 5,
        onError: (error) => expect.fail(String(error)),
      });
    });

    it("hands every subscription of a tenant the same array of one write's events, waiting or not", async () => {
      const waiting = await live.subscribe(scope, null);
      const idle = await live.subscribe(scope, null);
      const other = await live.subscribe({ projectId: project, livemode: true }, null);
      const pending = waiting.read(10);
      const mine = [eventOf(project), eventOf(project)];
      const write = [mine[0]!, eventOf(project, "user.created", true), mine[1]!];
      hear(write);
      const [first, second, third] = [await pending, await idle.read(10), await other.read(10)];
      expect(ids(first)).to.deep.equal(mine.map((e) => e._id));
      expect(second).to.equal(first);
      expect(ids(third)).to.deep.equal([write[1]!._id]);
    });

    it("reads at most `max`, the rest at the next read, and the events of several writes together", async () => {
      const subscription = await live.subscribe(scope, null);
      const pending = subscription.read(2);
      const logged = Array.from({ length: 5 }, () => eventOf(project));
      hear(logged.slice(0, 3));
      expect(ids(await pending)).to.deep.equal(ids(logged.slice(0, 2)));
      hear(logged.slice(3));
      expect(ids(await subscription.read(2))).to.deep.equal(ids(logged.slice(2, 4)));
      expect(ids(await subscription.read(2))).to.deep.equal(ids(logged.slice(4)));
      // One by one too, from the same queue.
      hear(logged.slice(0, 2));
      expect(((await subscription[Symbol.asyncIterator]().next()).value as EventDocument)._id).to.equal(logged[0]!._id);
      expect(ids(await subscription.read(10))).to.deep.equal([logged[1]!._id]);
    });

    it("takes only the types of a subscription's filter", async () => {
      const kyc = await live.subscribe(scope, ["kyc.approved"]);
      const approved = eventOf(project, "kyc.approved");
      hear([eventOf(project), approved, eventOf(project)]);
      hear([eventOf(project)]);
      hear([approved]);
      expect(ids(await kyc.read(10))).to.deep.equal([approved._id, approved._id]);
    });

    it("fails the read of a subscription past its backlog once, then ends; settles a waiting read with null at the drain", async () => {
      const slow = await live.subscribe(scope, null);
      const reader = await live.subscribe(scope, null);
      hear(Array.from({ length: 5 }, () => eventOf(project)));
      expect(ids(await reader.read(10))).to.have.length(5);
      const last = eventOf(project);
      hear([last]);
      expect(live.size).to.equal(1);
      const failure = await slow.read(10).then(
        () => expect.fail("read past the backlog"),
        (error: SvcError) => error.code,
      );
      expect(failure).to.equal("stream_fell_behind");
      expect(await slow.read(10)).to.equal(null);
      expect(ids(await reader.read(10))).to.deep.equal([last._id]);
      const pending = reader.read(10);
      await live.drain();
      expect(await pending).to.equal(null);
    });
  });

  it("with a change stream, hands the events of one write to a subscription together, as its batch brought them", async () => {
    const live = new LiveEvents(events, { changeStreams: true, onError: (error) => expect.fail(String(error)) });
    const project = newUuid();
    const subscription = await live.subscribe({ projectId: project, livemode: false }, null);
    const logged = Array.from({ length: 20 }, () => eventOf(project));
    await events.insertManyOnce(logged);
    // All 20 reach a waiting read together (a batching stream sends them in one message).
    const read = await subscription.read(100);
    expect(read?.map((e) => e._id)).to.deep.equal(logged.map((e) => e._id));
    await live.drain();
    expect(live.feedsOpened).to.equal(1);
  });

  it("with a change stream, answers a first subscription before its stream's first getMore, hearing every event logged after the answer and none before", async () => {
    const monitored = await connectDatabase(await freshDatabaseUri(), { monitorCommands: true });
    const live = new LiveEvents(new EventRepository(monitored.db), { changeStreams: true, onError: (error) => expect.fail(String(error)) });
    try {
      const repository = new EventRepository(monitored.db);
      const sent: string[] = [];
      monitored.client.on("commandStarted", (command) => sent.push(command.commandName));
      const project = newUuid();
      await repository.insertOnce(eventOf(project));
      const subscription = await live.subscribe({ projectId: project, livemode: false }, null);
      // The getMore of a new change stream waits up to a second on an idle collection: none is awaited.
      expect(sent).to.not.include("getMore");
      const after = [eventOf(project), eventOf(project), eventOf(project)];
      await repository.insertOnce(after[0]!);
      await repository.insertManyOnce(after.slice(1));
      const reader = subscription[Symbol.asyncIterator]();
      const heard: string[] = [];
      while (heard.length < after.length) heard.push(((await reader.next()).value as EventDocument)._id);
      expect(heard).to.deep.equal(after.map((e) => e._id));
      expect(live.feedsOpened).to.equal(1);
    } finally {
      await live.drain();
      await monitored.close();
    }
  });

  it("with a change stream, fails a subscription whose stream's start cannot be read, and tries again for the next", async () => {
    let reads = 0;
    const unreachable = {
      changeStreamStart: () => Promise.reject(new Error(`read ${++reads} failed`)),
      watchInserts: () => expect.fail("a change stream opened without its start"),
      onInserted: () => {},
    } as unknown as EventRepository;
    const live = new LiveEvents(unreachable, { changeStreams: true, onError: (error) => expect.fail(String(error)) });
    const scope = { projectId: newUuid(), livemode: false };
    for (const expected of ["read 1 failed", "read 2 failed"]) {
      const failure = await live.subscribe(scope, null).then(
        () => expect.fail("subscribed"),
        (error: Error) => error.message,
      );
      expect(failure).to.equal(expected);
    }
    expect([live.feedsOpened, live.size]).to.deep.equal([0, 0]);
  });

  describe("EventRepository.lateArrivals", () => {
    before(async () => {
      await untilHistoryCoversNewEvents(events);
    });

    // Offsets from the start of each test.
    let now = 0;
    beforeEach(() => {
      now = Date.now();
    });
    function eventOf(projectId: string, offsetMs: number, type = "user.created", livemode = false): EventDocument {
      return { _id: newEventId(), project_id: projectId, livemode, type, created_at: new Date(now + offsetMs), data: {}, fanned_out: true };
    }

    it("finds the events of the scope and types logged after the cursor that sort before it, in the order they were logged", async () => {
      const project = newUuid();
      const cursor = eventOf(project, 50);
      const before = eventOf(project, 10);
      await events.insertOnce(before);
      await events.insertOnce(cursor);
      const late = [eventOf(project, 40), eventOf(project, 20, "kyc.approved"), eventOf(project, 30)];
      await events.insertOnce(late[0]!);
      // Not the scope's, or after the cursor in the log's order: not late arrivals.
      await events.insertManyOnce([eventOf(newUuid(), 20), eventOf(project, 20, "user.created", true), eventOf(project, 60)]);
      await events.insertManyOnce(late.slice(1));
      const scope = { projectId: project, livemode: false };
      expect((await events.lateArrivals(scope, cursor, null))?.map((e) => e._id)).to.deep.equal(late.map((e) => e._id));
      expect((await events.lateArrivals(scope, cursor, ["kyc.approved"]))?.map((e) => e._id)).to.deep.equal([late[1]!._id]);
      // Created a millisecond apart at the same moment: the id orders them.
      const twin = { ...eventOf(project, 50), _id: `${cursor._id.slice(0, -1)}${cursor._id.endsWith("0") ? "1" : "0"}` };
      await events.insertOnce(twin);
      const found = (await events.lateArrivals(scope, cursor, null))?.map((e) => e._id);
      expect(found?.includes(twin._id)).to.equal(twin._id < cursor._id);
    });

    it("reads the history only up to the window after the cursor: an event logged later is not a late arrival", async () => {
      const project = newUuid();
      const scope = { projectId: project, livemode: false };
      const cursor = eventOf(project, 50);
      await events.insertOnce(cursor);
      const inWindow = eventOf(project, 10);
      await events.insertOnce(inWindow);
      const windowMs = 400;
      while (Date.now() <= cursor.created_at.getTime() + windowMs + 50) await new Promise((resolve) => setTimeout(resolve, 25));
      const pastWindow = eventOf(project, 20);
      await events.insertOnce(pastWindow);
      expect((await events.lateArrivals(scope, cursor, null, windowMs))?.map((e) => e._id)).to.deep.equal([inWindow._id]);
      // With the default window (minutes), both are.
      expect((await events.lateArrivals(scope, cursor, null))?.map((e) => e._id)).to.deep.equal([inWindow._id, pastWindow._id]);
    });

    it("answers null when the change stream's history does not reach back to the cursor's insert", async () => {
      const project = newUuid();
      // Created before the server's history begins (the error of a change stream started there).
      const old = { ...eventOf(project, 0), created_at: new Date("2020-01-01T00:00:00Z") };
      await events.insertOnce(old);
      expect(await events.lateArrivals({ projectId: project, livemode: false }, old, null)).to.equal(null);
      // Never logged: no insert of it is found.
      expect(await events.lateArrivals({ projectId: project, livemode: false }, eventOf(project, 0), null)).to.equal(null);
    });
  });
});
