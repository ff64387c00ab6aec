// EventRelay on a real database with a recording fan-out: outbox events are logged once, fanned out and removed
// from the outbox; relays that overlap (twice, or with the sweeper) log nothing twice; the sweeper finishes what
// a crashed request or a failed fan-out left behind, so no event is lost.
import { expect } from "chai";
import type { Collection } from "mongodb";
import { userEvent, publishedEvent } from "../../src/events/event-factory.ts";
import type { EventFanout } from "../../src/events/event-fanout.ts";
import { EventRelay } from "../../src/events/event-relay.ts";
import { newEventId, newUserId } from "../../src/domain/ids.ts";
import type { Database } from "../../src/store/database.ts";
import { EventRepository, type EventDocument } from "../../src/store/event-repository.ts";
import type { OutboxEvent } from "../../src/store/outbox.ts";
import type { UserDocument } from "../../src/store/user-document.ts";
import { UserRepository } from "../../src/store/user-repository.ts";
import { freshDatabase } from "../support/database.ts";
import { uniquePhone } from "../support/phones.ts";

const STALE_AFTER_MS = 30_000;

class RecordingFanout implements EventFanout {
  calls: string[][] = [];
  /** The next calls fail with this error (a database outage in the webhooks module, say). */
  failWith: Error | null = null;
  /** Holds each call until released, to overlap relays. */
  gate: Promise<void> | null = null;

  async fanOut(events: readonly EventDocument[]): Promise<void> {
    if (this.gate) await this.gate;
    if (this.failWith) throw this.failWith;
    this.calls.push(events.map((e) => e._id));
  }

  /** Every event id fanned out, in order, with repetitions. */
  get fannedOut(): string[] {
    return this.calls.flat();
  }
}

describe("EventRelay", () => {
  let database: Database;
  let events: EventRepository;
  let users: UserRepository;
  let usersCollection: Collection<UserDocument>;
  let eventsCollection: Collection<EventDocument>;
  let fanout: RecordingFanout;
  let relay: EventRelay;
  let firstInserts: string[];
  let now: number;
  const clock = () => new Date(now);
  const projectId = "proj-relay";

  before(async () => {
    database = await freshDatabase("relay");
    events = new EventRepository(database.db);
    users = new UserRepository(database.db);
    await Promise.all([events.ensureIndexes(), users.ensureIndexes()]);
    usersCollection = database.db.collection<UserDocument>("users");
    eventsCollection = database.db.collection<EventDocument>("events");
    events.onInserted((inserted) => firstInserts.push(...inserted.map((e) => e._id)));
  });

  after(async () => {
    await database.close();
  });

  beforeEach(async () => {
    // Each test starts from empty collections, so the sweeper sees only what the test leaves.
    await Promise.all([usersCollection.deleteMany({}), eventsCollection.deleteMany({})]);
    now = Date.UTC(2026, 10, 22, 10, 0, 0);
    firstInserts = [];
    fanout = new RecordingFanout();
    relay = new EventRelay(events, users, fanout, clock);
  });

  function userDocument(outboxAt: Date[], overrides: Partial<UserDocument> = {}): UserDocument {
    const createdAt = outboxAt[0] ?? clock();
    const user: UserDocument = {
      _id: newUserId(),
      project_id: projectId,
      livemode: false,
      phone: uniquePhone(),
      external_id: null,
      verified: true,
      kyc_status: "none",
      suspended: false,
      wallet_status: "none",
      wallets: [],
      created_at: createdAt,
      last_login_at: null,
      profile: null,
      tagname_key: null,
      outbox: [],
      updated_at: createdAt,
      ...overrides,
    };
    user.outbox = outboxAt.map((at, i): OutboxEvent => userEvent(i === 0 ? "user.created" : "user.suspended", user, at));
    return user;
  }

  /** A user written with its outbox, as a request does before relaying. */
  async function storedUser(outboxAt: Date[]): Promise<UserDocument> {
    const user = userDocument(outboxAt);
    await usersCollection.insertOne(user);
    return user;
  }

  async function outboxOf(userId: string): Promise<string[]> {
    const user = await usersCollection.findOne({ _id: userId });
    return user!.outbox.map((e) => e.id);
  }

  async function loggedIds(): Promise<string[]> {
    return (await eventsCollection.find({}).sort({ _id: 1 }).toArray()).map((e) => e._id);
  }

  it("relays a user's outbox: logs each event once as fanned out, fans them out, clears the outbox", async () => {
    const user = await storedUser([clock(), clock()]);
    const ids = user.outbox.map((e) => e.id);
    await relay.relayUserOutbox(user);

    expect(fanout.calls).to.deep.equal([ids]);
    expect(await outboxOf(user._id)).to.deep.equal([]);
    const logged = await eventsCollection.find({ _id: { $in: ids } }).toArray();
    expect(logged.map((e) => e._id).sort()).to.deep.equal([...ids].sort());
    const created = logged.find((e) => e._id === ids[0])!;
    expect(created).to.deep.include({ project_id: projectId, livemode: false, type: "user.created", fanned_out: true });
    expect(created.created_at.getTime()).to.equal(now);
    expect((created.data.object as { id: string }).id).to.equal(user._id);
    expect(firstInserts.sort()).to.deep.equal([...ids].sort());
  });

  it("logs nothing twice when the same outbox is relayed twice", async () => {
    const user = await storedUser([clock()]);
    const [id] = user.outbox.map((e) => e.id);
    await relay.relayUserOutbox(user);
    // A stale copy of the user (the request relays again after a retry, say).
    await relay.relayUserOutbox(user);
    expect(await loggedIds()).to.deep.equal([id]);
    expect(firstInserts).to.deep.equal([id]);
    expect(await outboxOf(user._id)).to.deep.equal([]);
  });

  it("logs nothing twice when a request, the sweeper and another instance's sweeper relay the same outbox at once", async () => {
    const old = new Date(now - 2 * STALE_AFTER_MS);
    const user = await storedUser([old, old]);
    const ids = user.outbox.map((e) => e.id);
    const otherInstance = new EventRelay(events, users, fanout, clock);
    let release!: () => void;
    fanout.gate = new Promise((resolve) => (release = resolve));
    const running = Promise.all([relay.relayUserOutbox(user), relay.sweep(STALE_AFTER_MS), otherInstance.sweep(STALE_AFTER_MS)]);
    // Let every relay read the outbox and reach the fan-out before any of them finishes.
    await new Promise((resolve) => setTimeout(resolve, 50));
    release();
    const [, swept, sweptElsewhere] = await running;
    expect(swept).to.equal(2);
    expect(sweptElsewhere).to.equal(2);

    expect(await loggedIds()).to.deep.equal([...ids].sort());
    expect([...firstInserts].sort()).to.deep.equal([...ids].sort());
    expect(await eventsCollection.countDocuments({ fanned_out: false })).to.equal(0);
    expect(await outboxOf(user._id)).to.deep.equal([]);
    // The fan-out itself is idempotent (its contract), so it may hear an event more than once, never less.
    for (const id of ids) expect(fanout.fannedOut).to.include(id);
  });

  it("shares one batch between requests that relay at the same moment", async () => {
    const a = await storedUser([clock()]);
    const b = await storedUser([clock()]);
    await Promise.all([relay.relayUserOutbox(a), relay.relayUserOutbox(b)]);
    expect(fanout.calls).to.deep.equal([[a.outbox[0]!.id, b.outbox[0]!.id]]);
    expect(await outboxOf(a._id)).to.deep.equal([]);
    expect(await outboxOf(b._id)).to.deep.equal([]);
  });

  it("publishes a standalone event: logged once, fanned out, marked fanned out", async () => {
    const event = publishedEvent({ projectId, livemode: true }, "transaction.completed", { id: "txn_1", amount: 100 }, clock());
    await relay.publish(event);
    expect(fanout.calls).to.deep.equal([[event._id]]);
    const logged = await eventsCollection.findOne({ _id: event._id });
    expect(logged).to.deep.include({ project_id: projectId, livemode: true, type: "transaction.completed", fanned_out: true });
    expect(logged!.data).to.deep.equal({ object: { id: "txn_1", amount: 100 } });
    await relay.publish(event);
    expect(await loggedIds()).to.deep.equal([event._id]);
    expect(firstInserts).to.deep.equal([event._id]);
  });

  it("logs but does not fan out a standalone event that is already fanned out (a webhook test)", async () => {
    const event: EventDocument = { ...publishedEvent({ projectId, livemode: false }, "webhook.test", {}, clock()), fanned_out: true };
    await relay.publish(event);
    expect(fanout.fannedOut).to.deep.equal([]);
    expect(await eventsCollection.findOne({ _id: event._id })).to.deep.include({ fanned_out: true });
  });

  describe("sweep", () => {
    it("finishes the outbox of a request that crashed once it is older than staleAfter, and leaves young ones", async () => {
      const crashed = await storedUser([new Date(now - STALE_AFTER_MS - 1)]);
      const young = await storedUser([new Date(now - STALE_AFTER_MS + 1000)]);
      expect(await relay.sweep(STALE_AFTER_MS)).to.equal(1);
      expect(fanout.calls).to.deep.equal([[crashed.outbox[0]!.id]]);
      expect(await outboxOf(crashed._id)).to.deep.equal([]);
      expect(await outboxOf(young._id)).to.deep.equal([young.outbox[0]!.id]);
      expect(await loggedIds()).to.deep.equal([crashed.outbox[0]!.id]);
      expect(await eventsCollection.findOne({ _id: crashed.outbox[0]!.id })).to.deep.include({ type: "user.created", fanned_out: true });

      // Nothing stale left: the next sweep does nothing.
      expect(await relay.sweep(STALE_AFTER_MS)).to.equal(0);
      expect(fanout.calls).to.have.length(1);
      now += 2000;
      expect(await relay.sweep(STALE_AFTER_MS)).to.equal(1);
      expect(await outboxOf(young._id)).to.deep.equal([]);
    });

    it("relays only the stale events of an outbox that also holds a fresh one", async () => {
      const user = await storedUser([new Date(now - 2 * STALE_AFTER_MS), new Date(now - 1000)]);
      const [stale, fresh] = user.outbox.map((e) => e.id);
      expect(await relay.sweep(STALE_AFTER_MS)).to.equal(1);
      expect(fanout.fannedOut).to.deep.equal([stale]);
      expect(await outboxOf(user._id)).to.deep.equal([fresh]);
    });

    it("fans out an event logged but never fanned out", async () => {
      const event: EventDocument = {
        _id: newEventId(),
        project_id: projectId,
        livemode: false,
        type: "kyc.approved",
        created_at: new Date(now - 2 * STALE_AFTER_MS),
        data: { object: { id: "123456789" } },
        fanned_out: false,
      };
      await eventsCollection.insertOne(event);
      expect(await relay.sweep(STALE_AFTER_MS)).to.equal(1);
      expect(fanout.fannedOut).to.deep.equal([event._id]);
      expect(await eventsCollection.findOne({ _id: event._id })).to.deep.include({ fanned_out: true });
      expect(await eventsCollection.countDocuments({})).to.equal(1);
      expect(await relay.sweep(STALE_AFTER_MS)).to.equal(0);
    });
  });

  describe("a failed fan-out", () => {
    it("rejects the relay and leaves the outbox, unlogged, for the sweeper, which finishes it", async () => {
      const user = await storedUser([clock()]);
      const id = user.outbox[0]!.id; // one outbox entry: storedUser was given one time
      const outage = new Error("webhook store unavailable");
      fanout.failWith = outage;
      let thrown: unknown;
      await relay.relayUserOutbox(user).catch((error) => (thrown = error));
      expect(thrown).to.equal(outage);
      // The outbox entry stays: it is what tells the sweeper the fan-out may be unfinished (whether the
      // event is already in the log or not).
      expect(await outboxOf(user._id)).to.deep.equal([id]);
      expect(await eventsCollection.countDocuments({ _id: { $ne: id } })).to.equal(0);

      fanout.failWith = null;
      expect(await relay.sweep(STALE_AFTER_MS)).to.equal(0);
      now += STALE_AFTER_MS;
      expect(await relay.sweep(STALE_AFTER_MS)).to.equal(1);
      expect(fanout.calls).to.deep.equal([[id]]);
      expect(await outboxOf(user._id)).to.deep.equal([]);
      expect(await loggedIds()).to.deep.equal([id]);
      expect(firstInserts).to.deep.equal([id]);
      expect(await eventsCollection.findOne({ _id: id })).to.deep.include({ fanned_out: true });
    });

    it("rejects every request of the failed batch, and the relay keeps working afterwards", async () => {
      const a = await storedUser([clock()]);
      const b = await storedUser([clock()]);
      fanout.failWith = new Error("down");
      const outcomes = await Promise.allSettled([relay.relayUserOutbox(a), relay.relayUserOutbox(b)]);
      expect(outcomes.map((o) => o.status)).to.deep.equal(["rejected", "rejected"]);
      fanout.failWith = null;
      const c = await storedUser([clock()]);
      await relay.relayUserOutbox(c);
      expect(await outboxOf(c._id)).to.deep.equal([]);
      expect(await outboxOf(a._id)).to.have.length(1);
      expect(await outboxOf(b._id)).to.have.length(1);
    });

    it("keeps a standalone event logged as not fanned out, and the sweeper fans it out", async () => {
      const event = publishedEvent({ projectId, livemode: false }, "withdrawal.failed", { id: "wd_1" }, clock());
      fanout.failWith = new Error("down");
      let thrown: unknown;
      await relay.publish(event).catch((error) => (thrown = error));
      expect(thrown).to.be.instanceOf(Error);
      expect(await eventsCollection.findOne({ _id: event._id })).to.deep.include({ fanned_out: false });

      fanout.failWith = null;
      now += STALE_AFTER_MS;
      expect(await relay.sweep(STALE_AFTER_MS)).to.equal(1);
      expect(fanout.fannedOut).to.deep.equal([event._id]);
      expect(await eventsCollection.findOne({ _id: event._id })).to.deep.include({ fanned_out: true });
      expect(firstInserts).to.deep.equal([event._id]);
    });
  });
});
