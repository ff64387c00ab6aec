// svc.v1.EventsService.StreamEvents: live events within 100 ms of being logged, resuming after a cursor with
// nothing lost or repeated, several events to a message on request, tenant isolation, the pipeline's refusals, the
// per-key stream limit, a reader cut off when it falls behind, the three RPC
// protocols, one change stream for every stream of a process, and streams ended cleanly by the drain.
import { Code, createClient, type Client, type Interceptor, type Transport } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport, createGrpcWebTransport } from "@connectrpc/connect-node";
import { expect } from "chai";
import { EventsService, type StreamEventsResponse } from "../../gen/svc/v1/events_pb.ts";
import { newEventId } from "../../src/domain/ids.ts";
import { untilHistoryCoversNewEvents } from "../support/change-stream-history.ts";
import { rpcErrorOf } from "../support/errors.ts";
import { uniquePhone } from "../support/phones.ts";
import { createKey, createOtherProject } from "../support/tenancy.ts";
import { startTestService, type TestService } from "../support/test-service.ts";

function withKey(key: string | null): Interceptor {
  return (next) => (request) => {
    if (key !== null) request.header.set("authorization", `Bearer ${key}`);
    return next(request);
  };
}

type Protocol = "connect" | "grpc" | "grpc-web";

/** A transport of `protocol`, with binary messages unless `json` (each stream's messages are encoded by its codec). */
function transportOf(svc: TestService, key: string | null, protocol: Protocol = "connect", json = false): Transport {
  const options = { interceptors: [withKey(key)], useBinaryFormat: !json };
  if (protocol === "grpc") return createGrpcTransport({ baseUrl: `http://${svc.grpcAddress}`, ...options });
  if (protocol === "grpc-web") return createGrpcWebTransport({ baseUrl: svc.baseUrl, httpVersion: "1.1", ...options });
  return createConnectTransport({ baseUrl: svc.baseUrl, httpVersion: "1.1", ...options });
}

/** An open stream: what it received (with the time each arrived), and how it ended. */
class OpenStream {
  readonly received: { id: string; type: string; objectId: string | undefined; dataJson: string; at: number }[] = [];
  readonly ended: Promise<unknown>;
  /** Settles when the stream says it is caught up (live from then on). */
  readonly caughtUp: Promise<void>;
  private markCaughtUp: () => void = () => {};
  private readonly abort = new AbortController();
  private waiters: (() => void)[] = [];

  constructor(client: Client<typeof EventsService>, request: { types?: string[]; startingAfter?: string; maxEventsPerMessage?: number } = {}) {
    this.caughtUp = new Promise((resolve) => (this.markCaughtUp = resolve));
    this.ended = (async () => {
      try {
        for await (const message of client.streamEvents(request, { signal: this.abort.signal }) as AsyncIterable<StreamEventsResponse>) {
          if (message.caughtUp) {
            expect(message.event).to.equal(undefined);
            this.caughtUpAfter = this.received.length;
            this.markCaughtUp();
            continue;
          }
          const carried = message.event ? [message.event] : message.events;
          this.eventsPerMessage.push(carried.length);
          for (const event of carried) {
            const object = event.data?.object as { id?: string } | undefined;
            this.received.push({ id: event.id, type: event.type, objectId: object?.id, dataJson: event.dataJson, at: performance.now() });
          }
          for (const wake of this.waiters.splice(0)) wake();
        }
        return null;
      } catch (error) {
        return error;
      } finally {
        for (const wake of this.waiters.splice(0)) wake();
      }
    })();
  }

  /** How many events came before the caught-up message. */
  caughtUpAfter: number | null = null;
  /** How many events each message carried. */
  readonly eventsPerMessage: number[] = [];

  get ids(): string[] {
    return this.received.map((r) => r.id);
  }

  /** Waits until `count` events arrived (or `timeoutMs` passed). */
  async waitFor(count: number, timeoutMs = 5000): Promise<void> {
    const deadline = performance.now() + timeoutMs;
    while (this.received.length < count && performance.now() < deadline) {
      await Promise.race([new Promise<void>((resolve) => this.waiters.push(resolve)), new Promise((r) => setTimeout(r, 50))]);
    }
  }

  async close(): Promise<void> {
    this.abort.abort();
    await this.ended;
  }
}

/** A user created over REST (its id), when its answer arrived, and the id of its `user.created` event. */
async function createUser(svc: TestService, key = svc.sandboxKey): Promise<{ userId: string; eventId: string; answeredAt: number }> {
  const response = await svc.request("POST", "/v1/users", { key, body: { phone: uniquePhone() } });
  const answeredAt = performance.now();
  expect(response.status, response.text).to.equal(201);
  const events = await svc.request("GET", "/v1/events?type=user.created&limit=100", { key });
  const event = (events.body.data as { id: string; data: { object: { id: string } } }[]).find((e) => e.data.object.id === response.body.id);
  return { userId: response.body.id, eventId: event!.id, answeredAt };
}

/** Opens a stream and waits until it is caught up (its live subscription in place). */
async function openLive(client: Client<typeof EventsService>, request = {}): Promise<OpenStream> {
  const stream = new OpenStream(client, request);
  await Promise.race([stream.caughtUp, stream.ended.then((error) => expect.fail(`the stream ended: ${String(error)}`))]);
  return stream;
}

describe("StreamEvents", () => {
  let svc: TestService;
  let events: Client<typeof EventsService>;

  before(async () => {
    svc = await startTestService();
    events = createClient(EventsService, transportOf(svc, svc.sandboxKey));
  });
  after(async () => {
    await svc?.stop();
  });

  it("delivers events created over REST within 100 ms of their answer", async () => {
    const stream = await openLive(events);
    const created: { eventId: string; answeredAt: number }[] = [];
    for (let i = 0; i < 10; i++) created.push(await createUser(svc));
    await stream.waitFor(10);
    await stream.close();
    expect(stream.ids).to.deep.equal(created.map((c) => c.eventId));
    // The event is logged before the answer is sent, so this bounds the time from log to stream from above.
    const delays = created.map((c, i) => stream.received[i]!.at - c.answeredAt).sort((a, b) => a - b);
    expect(delays[Math.floor(delays.length / 2)], `delays ${delays.map(Math.round).join(", ")} ms`).to.be.below(100);
  });

  it("resumed after an event, sends exactly the events logged while it was away, in order, then live ones", async function () {
    // 52 users one after another: seconds on a loaded machine.
    this.timeout(90_000);
    const first = await openLive(events);
    await createUser(svc);
    await first.waitFor(1);
    await first.close();
    const lastSeen = first.ids.at(-1)!;

    const missed: string[] = [];
    for (let i = 0; i < 50; i++) missed.push((await createUser(svc)).eventId);

    const resumed = await openLive(events, { startingAfter: lastSeen });
    await resumed.waitFor(50);
    const live = await createUser(svc);
    await resumed.waitFor(51);
    await new Promise((r) => setTimeout(r, 200));
    await resumed.close();
    expect(resumed.ids).to.deep.equal([...missed, live.eventId]);
    // The 50 from the log, then the caught-up message, then the live one.
    expect(resumed.caughtUpAfter).to.equal(50);
  });

  it("resumed after an event, also sends those that reached the log after it but sort before it, each once", async () => {
    const repository = svc.app.repositories.events;
    await untilHistoryCoversNewEvents(repository);
    const now = Date.now();
    const logged = (offsetMs: number) => ({
      _id: newEventId(),
      project_id: svc.projectId,
      livemode: false,
      type: "webhook.test",
      created_at: new Date(now + offsetMs),
      data: { message: `logged ${offsetMs} ms after the test began` },
      fanned_out: true,
    });
    const [earlier, later, next, live] = [logged(0), logged(5), logged(10), logged(20)];
    const first = await openLive(events);
    // Created in this order, logged in the other: a slower relay of `earlier`, or the sweeper's after a crash.
    await repository.insertOnce(later);
    await first.waitFor(1);
    await first.close();
    expect(first.ids).to.deep.equal([later._id]);
    await repository.insertOnce(earlier);
    await repository.insertOnce(next);

    const resumed = await openLive(events, { startingAfter: later._id });
    await repository.insertOnce(live);
    await resumed.waitFor(3);
    await new Promise((r) => setTimeout(r, 200));
    await resumed.close();
    // After the cursor in the log's order, then the one logged late, then live: nothing missed, nothing twice.
    expect(resumed.ids).to.deep.equal([next._id, earlier._id, live._id]);
    expect(resumed.caughtUpAfter).to.equal(2);
  });

  it("switches from history to live without a gap or a repeat while events keep coming", async () => {
    const start = (await createUser(svc)).eventId;
    const writes: Promise<{ userId: string }>[] = [];
    for (let i = 0; i < 30; i++) writes.push(createUser(svc));
    const resumed = new OpenStream(events, { startingAfter: start });
    const users = (await Promise.all(writes)).map((w) => w.userId);
    await resumed.waitFor(30);
    await new Promise((r) => setTimeout(r, 200));
    await resumed.close();
    const streamed = resumed.received.map((r) => r.objectId);
    expect(streamed).to.have.members(users);
    expect(new Set(resumed.ids).size).to.equal(30);
  });

  it("with max_events_per_message, sends the events waiting for the stream together, in order, each once", async () => {
    const stream = await openLive(events, { maxEventsPerMessage: 10 });
    // 25 events logged in one write reach the stream together (one batch of the change stream): 10 to a message.
    const logged = Array.from({ length: 25 }, (_, i) => ({
      _id: newEventId(),
      project_id: svc.projectId,
      livemode: false,
      // The log's test type: its data is a message, so the log stays valid for the REST lists of later tests.
      type: "webhook.test",
      created_at: new Date(Date.now() + i),
      data: { message: `batch ${i}` },
      fanned_out: true,
    }));
    await svc.app.repositories.events.insertManyOnce(logged);
    await stream.waitFor(25);
    await stream.close();
    const ids = logged.map((e) => e._id);
    expect(stream.ids).to.deep.equal(ids);
    expect(stream.eventsPerMessage).to.deep.equal([10, 10, 5]);
    // Resumed after the first: the other 24 from the log, 10 to a message, then live.
    const resumed = await openLive(events, { startingAfter: ids[0]!, maxEventsPerMessage: 10 });
    await resumed.close();
    expect(resumed.ids).to.deep.equal(ids.slice(1));
    expect(resumed.eventsPerMessage).to.deep.equal([10, 10, 4]);
    // Streams of other filters take other events of the same write, some alike (the same first and last, as many):
    // each gets its own, in a project of its own (these events' data are not those of their types).
    const other = await createOtherProject(svc);
    const otherEvents = createClient(EventsService, transportOf(svc, other.sandboxKey, "grpc"));
    const filters = [["user.created", "kyc.approved"], ["user.created", "kyc.rejected"], []];
    const filtered = await Promise.all(filters.map((types) => openLive(otherEvents, { types, maxEventsPerMessage: 10 })));
    const mixed = (["user.created", "kyc.approved", "kyc.rejected", "user.created"] as const).map((type, i) => ({
      ...logged[0]!,
      _id: newEventId(),
      project_id: other.projectId,
      type,
      created_at: new Date(Date.now() + i),
    }));
    await svc.app.repositories.events.insertManyOnce(mixed);
    await Promise.all(filtered.map((s, i) => s.waitFor(i === 2 ? 4 : 3)));
    await Promise.all(filtered.map((s) => s.close()));
    filtered.forEach((stream, i) => {
      const wanted = mixed.filter((e) => filters[i]!.length === 0 || filters[i]!.includes(e.type)).map((e) => e._id);
      expect(stream.ids).to.deep.equal(wanted);
      expect(stream.eventsPerMessage).to.deep.equal([wanted.length]);
    });
    expect(await rpcErrorOf(consume(events, { maxEventsPerMessage: 101 }))).to.deep.equal({
      code: Code.InvalidArgument,
      reason: "validation_error",
      param: "max_events_per_message",
    });
  });

  it("filters by type as an endpoint's event_types does", async () => {
    const users = await openLive(events, { types: ["user.created"] });
    const kyc = await openLive(events, { types: ["kyc.approved"] });
    const everything = await openLive(events, { types: ["*"] });
    const { eventId } = await createUser(svc);
    await users.waitFor(1);
    await everything.waitFor(1);
    await new Promise((r) => setTimeout(r, 200));
    await Promise.all([users.close(), kyc.close(), everything.close()]);
    expect(users.ids).to.deep.equal([eventId]);
    expect(everything.ids).to.deep.equal([eventId]);
    expect(kyc.ids).to.deep.equal([]);
  });

  it("never sends another project's or environment's events", async () => {
    const other = await createOtherProject(svc);
    const otherSandbox = await openLive(createClient(EventsService, transportOf(svc, other.sandboxKey)));
    const ownLive = await openLive(createClient(EventsService, transportOf(svc, svc.liveKey)));
    const own = await openLive(events);
    const { eventId } = await createUser(svc);
    const otherEvent = await createUser(svc, other.sandboxKey);
    await own.waitFor(1);
    await otherSandbox.waitFor(1);
    await new Promise((r) => setTimeout(r, 200));
    await Promise.all([otherSandbox.close(), ownLive.close(), own.close()]);
    expect(own.ids).to.deep.equal([eventId]);
    expect(otherSandbox.ids).to.deep.equal([otherEvent.eventId]);
    expect(ownLive.ids).to.deep.equal([]);
    // Another project's event is no cursor of this one.
    const refused = await rpcErrorOf(consume(events, { startingAfter: otherEvent.eventId }));
    expect(refused).to.deep.equal({ code: Code.InvalidArgument, reason: "invalid_cursor", param: undefined });
  });

  it("refuses as every call is refused: the key, an unknown cursor, a wrong type", async () => {
    expect(await rpcErrorOf(consume(createClient(EventsService, transportOf(svc, null)), {}))).to.deep.equal({
      code: Code.Unauthenticated,
      reason: "missing_api_key",
      param: undefined,
    });
    expect(await rpcErrorOf(consume(createClient(EventsService, transportOf(svc, "svc_test_unknown")), {}))).to.include({
      code: Code.Unauthenticated,
      reason: "invalid_api_key",
    });
    expect(await rpcErrorOf(consume(events, { startingAfter: "evt_00000000-0000-4000-8000-000000000000" }))).to.include({
      code: Code.InvalidArgument,
      reason: "invalid_cursor",
    });
    expect(await rpcErrorOf(consume(events, { types: ["user.deleted"] }))).to.deep.equal({
      code: Code.InvalidArgument,
      reason: "validation_error",
      param: "types",
    });
  });

  it("serves Connect, gRPC-Web and gRPC alike, binary and JSON, one event to a message or several", async () => {
    const protocols = (["connect", "grpc-web", "grpc"] as const).flatMap((protocol) => [false, true].map((json) => ({ protocol, json })));
    const requests = [{}, { maxEventsPerMessage: 10 }];
    const streams = await Promise.all(
      protocols.flatMap(({ protocol, json }) =>
        requests.map((request) => openLive(createClient(EventsService, transportOf(svc, svc.sandboxKey, protocol, json)), request)),
      ),
    );
    const { userId, eventId } = await createUser(svc);
    await Promise.all(streams.map((s) => s.waitFor(1)));
    await Promise.all(streams.map((s) => s.close()));
    const expected = streams[0]!.received.map(({ id, type, objectId, dataJson }) => ({ id, type, objectId, dataJson }));
    expect(expected).to.have.length(1);
    expect(expected[0]).to.include({ id: eventId, type: "user.created", objectId: userId });
    expect(JSON.parse(expected[0]!.dataJson).object.id).to.equal(userId);
    for (const stream of streams)
      expect(stream.received.map(({ id, type, objectId, dataJson }) => ({ id, type, objectId, dataJson }))).to.deep.equal(expected);
  });

  it("holds one change stream for all the streams of the process", async () => {
    const opened = svc.app.liveEvents.feedsOpened;
    const streams: OpenStream[] = [];
    for (let i = 0; i < 15; i++) streams.push(await openLive(events));
    const { eventId } = await createUser(svc);
    await Promise.all(streams.map((s) => s.waitFor(1)));
    await Promise.all(streams.map((s) => s.close()));
    for (const stream of streams) expect(stream.ids).to.deep.equal([eventId]);
    expect(svc.app.liveEvents.feedsOpened).to.equal(opened);
  });
});

describe("StreamEvents limits and the drain", () => {
  let svc: TestService;
  let stopped = false;

  before(async () => {
    svc = await startTestService({ env: { SVC_MAX_STREAMS_PER_KEY: "2", SVC_MAX_STREAM_BACKLOG: "20" } });
  });
  after(async () => {
    if (!stopped) await svc?.stop();
  });

  it("refuses a key's stream beyond its limit with 429 rate_limit_exceeded, and admits one again once another ends", async () => {
    const client = createClient(EventsService, transportOf(svc, svc.sandboxKey));
    const open = [await openLive(client), await openLive(client)];
    expect(await rpcErrorOf(consume(client, {}))).to.include({ code: Code.ResourceExhausted, reason: "rate_limit_exceeded" });
    // Another key of the project has its own streams.
    const other = await createKey(svc, svc.projectId);
    const third = await openLive(createClient(EventsService, transportOf(svc, other.secret)));
    await open[0]!.close();
    const again = await openLive(client);
    await Promise.all([open[1]!.close(), third.close(), again.close()]);
  });

  it("cuts off a stream whose reader falls behind with stream_fell_behind, holding up no other; it resumes losing nothing", async () => {
    const grpc = createClient(EventsService, transportOf(svc, svc.sandboxKey, "grpc"));
    const slowAbort = new AbortController();
    const slow = (grpc.streamEvents({}, { signal: slowAbort.signal }) as AsyncIterable<StreamEventsResponse>)[Symbol.asyncIterator]();
    expect((await slow.next()).value.caughtUp).to.equal(true);
    // Events of 8 KB, 10 at a time, each time read by the other stream: a few fill the slow reader's HTTP/2 window,
    // the rest wait for it at the service, past its bound of 20.
    const logged = Array.from({ length: 200 }, (_, i) => ({
      _id: newEventId(),
      project_id: svc.projectId,
      livemode: false,
      type: "webhook.test",
      created_at: new Date(Date.now() + i),
      data: { message: "x".repeat(8192) },
      fanned_out: true,
    }));
    const ids = logged.map((e) => e._id);
    const read: string[] = [];
    try {
      const reader = await openLive(createClient(EventsService, transportOf(svc, svc.sandboxKey)));
      for (let i = 0; i < logged.length; i += 10) {
        await svc.app.repositories.events.insertManyOnce(logged.slice(i, i + 10));
        await reader.waitFor(i + 10);
      }
      await reader.close();
      expect(reader.ids).to.deep.equal(ids);

      // The slow reader now reads: the events that were on their way, then the refusal.
      const failure = await (async () => {
        for (;;) {
          const next = await slow.next();
          if (next.done) return null;
          read.push(next.value.event!.id);
        }
      })().catch((error: unknown) => error);
      expect(read.length).to.be.below(ids.length - 20);
      expect(read).to.deep.equal(ids.slice(0, read.length));
      expect(await rpcErrorOf(Promise.reject(failure))).to.deep.equal({ code: Code.Aborted, reason: "stream_fell_behind", param: undefined });
    } finally {
      slowAbort.abort();
    }
    // Resumed after the last event it read: the rest, from the log, each once.
    const resumed = await openLive(grpc, { startingAfter: read.at(-1)! });
    await resumed.close();
    expect([...read, ...resumed.ids]).to.deep.equal(ids);
  });

  it("ends every open stream cleanly when the service drains", async () => {
    const client = createClient(EventsService, transportOf(svc, svc.sandboxKey));
    const grpc = createClient(EventsService, transportOf(svc, svc.sandboxKey, "grpc"));
    const streams = [await openLive(client), await openLive(grpc)];
    const started = performance.now();
    stopped = true;
    await svc.stop();
    const outcomes = await Promise.all(streams.map((s) => s.ended));
    expect(outcomes).to.deep.equal([null, null]);
    // Well before the grace period's end (10 s), when running calls are cut.
    expect(performance.now() - started).to.be.below(5000);
  });
});

/** Reads a stream until it ends or fails (a refusal is thrown at the first read). */
async function consume(
  client: Client<typeof EventsService>,
  request: { types?: string[]; startingAfter?: string; maxEventsPerMessage?: number },
): Promise<void> {
  for await (const _ of client.streamEvents(request)) break;
}
