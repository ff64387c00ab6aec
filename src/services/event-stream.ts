// The one event stream of a caller's project and environment: the events logged after a cursor first, oldest
// first in the log's order (creation time, then id), then those that reached the log after the cursor but sort
// before it, then a `caught_up` message, then live ones as they are logged, each once. The live subscription is
// taken before the history is read, so nothing logged in between is missed; an event both read from history and
// heard live is sent once.
import { create } from "@bufbuild/protobuf";
import { type Event, type StreamEventsRequest, type StreamEventsResponse, StreamEventsResponseSchema } from "../../gen/svc/v1/events_pb.ts";
import type { Clock } from "../domain/clock.ts";
import { svcError, validationError } from "../domain/errors.ts";
import { MAX_EVENTS_PER_MESSAGE } from "../domain/limits.ts";
import type { TenantScope } from "../domain/tenant-scope.ts";
import { checkEventTypes } from "../domain/webhook-endpoint-rules.ts";
import type { LiveEvents } from "../events/live-events.ts";
import { encodedOnce } from "../messages/encoded-once.ts";
import { eventMessage } from "../messages/event-messages.ts";
import type { EventDocument, EventRepository } from "../store/event-repository.ts";

/** Events read from the log per query while catching up. */
const HISTORY_PAGE = 100;
/**
 * History events created this recently may also be heard live (logged after the subscription began, or heard late):
 * their ids are remembered so they are sent once. Older ones were logged before the subscription began.
 */
const OVERLAP_MS = 60_000;

export interface EventStreamDeps {
  events: EventRepository;
  live: LiveEvents;
  clock: Clock;
  /** The database keeps a change stream history (a replica set), where a resume finds the events logged late. */
  changeStreams: boolean;
}

/** How a stream's messages are made: with the deprecated Struct or not, encoded once (binary codecs) or not. */
interface MessageForm {
  structData: boolean;
  /** The stream's codec is binary: its messages carry their fields' bytes, encoded once (encoded-once.ts). */
  encoded: boolean;
}

/**
 * A form's messages by logged document: the live feed hands the same document to every stream of its project, which
 * then share one message (built once, not once per stream) and, on binary codecs, one encoding of it.
 */
class SharedMessages {
  private readonly events = new WeakMap<EventDocument, Event>();
  private readonly single = new WeakMap<EventDocument, StreamEventsResponse>();
  /** The last message of several events made from each first event, with the events it holds. */
  private readonly batches = new WeakMap<EventDocument, { documents: readonly EventDocument[]; message: StreamEventsResponse }>();

  constructor(private readonly form: MessageForm) {}

  /** The message of one event, in `event`. */
  one(document: EventDocument): StreamEventsResponse {
    let message = this.single.get(document);
    if (message === undefined) {
      message = create(StreamEventsResponseSchema, { event: eventMessage(document, this.form), projectId: document.project_id });
      if (this.form.encoded) message = encodedOnce(StreamEventsResponseSchema, message);
      this.single.set(document, message);
    }
    return message;
  }

  /**
   * One message of several events, in `events` (`max_events_per_message`), each event's message shared; the streams
   * that take the same events together (a burst reaching every stream of a project) share the whole message, so on
   * binary codecs it is encoded once, not once per stream. Its events are not encoded on their own first: encoding
   * them in the batch costs an event less than half of its own encoding (each message encoded once pays a fixed
   * cost of several microseconds), and a batch made again for another stream's split encodes them again.
   */
  many(documents: readonly EventDocument[]): StreamEventsResponse {
    const first = documents[0]!;
    const made = this.batches.get(first);
    if (made !== undefined && (made.documents === documents || sameDocuments(made.documents, documents))) return made.message;
    const events = documents.map((document) => this.event(document));
    let message = create(StreamEventsResponseSchema, { events, projectId: first.project_id });
    if (this.form.encoded) message = encodedOnce(StreamEventsResponseSchema, message);
    this.batches.set(first, { documents, message });
    return message;
  }

  private event(document: EventDocument): Event {
    let message = this.events.get(document);
    if (message === undefined) {
      message = eventMessage(document, this.form);
      this.events.set(document, message);
    }
    return message;
  }
}

function sameDocuments(a: readonly EventDocument[], b: readonly EventDocument[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

const SHARED = [false, true].flatMap((structData) => [false, true].map((encoded) => new SharedMessages({ structData, encoded })));

function sharedMessages(form: MessageForm): SharedMessages {
  return SHARED[(form.structData ? 2 : 0) + (form.encoded ? 1 : 0)]!;
}

/** The most events one message may carry, from the request: 1 for one event per message in `event`. */
function batchSizeOf(request: StreamEventsRequest): number {
  const max = request.maxEventsPerMessage;
  if (max > MAX_EVENTS_PER_MESSAGE) {
    throw validationError("max_events_per_message", `max_events_per_message must be 0 to ${MAX_EVENTS_PER_MESSAGE}.`);
  }
  return Math.max(1, max);
}

/** The types a stream asks for: null for every type (none listed, or `*`), else the checked list. */
function typesOf(request: StreamEventsRequest): string[] | null {
  if (request.types.length === 0) return null;
  const types = checkEventTypes(request.types, "types");
  return types.includes("*") ? null : types;
}

export async function* eventStream(
  deps: EventStreamDeps,
  scope: TenantScope,
  request: StreamEventsRequest,
  signal: AbortSignal,
  binary: boolean,
): AsyncGenerator<StreamEventsResponse> {
  const types = typesOf(request);
  const batchSize = batchSizeOf(request);
  const shared = sharedMessages({ structData: !request.excludeStructData, encoded: binary });
  const message = (events: readonly EventDocument[]) => (batchSize > 1 ? shared.many(events) : shared.one(events[0]!));
  // Events read from the log, `batchSize` to a message.
  const messagesOf = function* (events: readonly EventDocument[]) {
    for (let i = 0; i < events.length; i += batchSize) yield message(events.slice(i, i + batchSize));
  };
  let position: EventDocument | null = null;
  if (request.startingAfter !== undefined) {
    position = await deps.events.find(scope, request.startingAfter);
    if (!position) throw svcError("invalid_cursor");
  }
  const subscribedAt = deps.clock().getTime();
  const live = await deps.live.subscribe(scope, types);
  const close = () => live.close();
  signal.addEventListener("abort", close, { once: true });
  try {
    const sentRecently = new Set<string>();
    const cursor = position;
    while (position !== null) {
      const page: EventDocument[] = await deps.events.listAfter(scope, position, types, HISTORY_PAGE);
      for (const event of page) if (event.created_at.getTime() >= subscribedAt - OVERLAP_MS) sentRecently.add(event._id);
      yield* messagesOf(page);
      position = page.length === HISTORY_PAGE ? page[page.length - 1]! : null;
    }
    // A client that received the cursor live got the events in the order they reached the log, which is not always
    // the log's order: those logged after the cursor that sort before it are not after it in the log.
    const late = cursor !== null && deps.changeStreams ? await deps.events.lateArrivals(scope, cursor, types) : null;
    if (late !== null) {
      for (const event of late) sentRecently.add(event._id);
      yield* messagesOf(late);
    }
    yield create(StreamEventsResponseSchema, { caughtUp: true });
    if (batchSize === 1) {
      // One event to a message: no arrays made, as this runs for every event and every stream.
      for await (const event of live) if (!sentRecently.delete(event._id)) yield shared.one(event);
    } else {
      // With batches, the events already waiting go in the same message: none is held back to fill one. The array
      // read is the one every stream of the project read (the events of one write): their message is found by it.
      for (let events = await live.read(batchSize); events !== null; events = await live.read(batchSize)) {
        const unsent = sentRecently.size === 0 ? events : events.filter((e) => !sentRecently.delete(e._id));
        if (unsent.length > 0) yield shared.many(unsent);
      }
    }
  } finally {
    signal.removeEventListener("abort", close);
    live.close();
  }
}
