// Limits of the public contract, stated once: the rules enforce these and the messages and documents quote them.

/** Largest request body (JSON, Connect or gRPC message) accepted, read no further. */
export const MAX_BODY_BYTES = 64 * 1024;

/** Webhook endpoints per project and environment. */
export const MAX_WEBHOOK_ENDPOINTS = 20;

/** Items per page of a list: `limit` defaults to this... */
export const DEFAULT_PAGE_SIZE = 10;
/** ...and may be at most this. */
export const MAX_PAGE_SIZE = 100;

/** Deepest nesting of objects and arrays accepted in a JSON body (the body itself is level 1). */
export const MAX_JSON_DEPTH = 64;

/** A request's headers and body must have arrived this long after it started, else the connection is closed. */
export const REQUEST_RECEIVE_TIMEOUT_MS = 10_000;

/** Attempts a webhook delivery keeps in its history, across replays: its record stays bounded. */
export const DELIVERY_ATTEMPTS_KEPT = 10;

/** What a delivery attempt keeps of the receiver's answer body. */
export const ATTEMPT_RESPONSE_BODY_KEPT_BYTES = 4 * 1024;

/** What a delivery attempt keeps of its own request body (the Event as signed). */
export const ATTEMPT_REQUEST_BODY_KEPT_BYTES = 64 * 1024;

/** Event streams one API key may hold open at once on one process, unless configured (SVC_MAX_STREAMS_PER_KEY). */
export const DEFAULT_MAX_STREAMS_PER_KEY = 20;

/**
 * Events (or request logs) a live stream may hold for a reader that does not keep up, unless configured
 * (SVC_MAX_STREAM_BACKLOG); past it the stream fails with `stream_fell_behind` and its client resumes from the log,
 * rather than the process holding an unbounded queue.
 */
export const DEFAULT_MAX_STREAM_BACKLOG = 10_000;

/** Events one message of an event stream may carry (`max_events_per_message`). */
export const MAX_EVENTS_PER_MESSAGE = 100;
