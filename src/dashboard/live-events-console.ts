// The project console's live events: the latest events, then each new one as it is logged, fed by
// EventsService.StreamEvents opened in process through the pipeline and sent to the browser as server-sent events
// (no polling). The stream starts after the newest event the page showed, and a browser that reconnects resumes
// after the last event it received (Last-Event-ID), so no event is missed between the two or shown twice.
import { EventsService, type StreamEventsResponse } from "../../gen/svc/v1/events_pb.ts";
import { eventJson } from "../representations/events.ts";
import { requiredIsoTime } from "../representations/json-values.ts";
import { seg, type ConsoleRouter, type ServerSentEvent } from "./console-router.ts";
import { html } from "./html.ts";
import { page, time } from "./layout.ts";

const SHOWN = 25;
const STREAM_PATH = "/dashboard/live-events/stream";

/** What the page's script needs of an event to add its row. */
export interface LiveEventRow {
  id: string;
  type: string;
  created_at: string;
}

async function* serverSentEvents(messages: AsyncIterable<StreamEventsResponse>): AsyncIterable<ServerSentEvent> {
  for await (const message of messages) {
    if (message.caughtUp) {
      yield { event: "ready", data: "" };
      continue;
    }
    const event = message.event!;
    const row: LiveEventRow = { id: event.id, type: event.type, created_at: requiredIsoTime(event.createdAt) };
    yield { id: event.id, event: "event", data: JSON.stringify(row) };
  }
}

export function registerLiveEvents(router: ConsoleRouter): void {
  router.page("project", "/live-events", async (ctx) => {
    const latest = await ctx.call(EventsService.method.listEvents, { limit: SHOWN });
    const newest = latest.data[0]?.id;
    const source = newest ? `${STREAM_PATH}?after=${encodeURIComponent(newest)}` : STREAM_PATH;
    return page(
      ctx.shell("Live events", "live"),
      html`<h1>Live events</h1>
      <p id="live-status" role="status" aria-live="polite" class="muted">Without JavaScript this page shows the latest events; reload it for new ones.</p>
      <div class="table-wrap" data-live-events="${source}"><table>
        <caption>Events, newest first</caption>
        <thead><tr><th scope="col">Event</th><th scope="col">Type</th><th scope="col">Created</th></tr></thead>
        <tbody>${latest.data.map((e) => {
          const json = eventJson(e);
          return html`<tr><td><a href="/dashboard/events/${seg(json.id)}"><code>${json.id}</code></a></td><td>${json.type}</td><td>${time(json.created_at)}</td></tr>`;
        })}</tbody>
      </table></div>`,
    );
  });

  router.eventStream("project", "/live-events/stream", async (ctx, lastEventId, signal) => {
    const after = lastEventId ?? ctx.query.after;
    // A row shows no data: the stream leaves the deprecated Struct out.
    const messages = await ctx.stream(
      EventsService.method.streamEvents,
      { excludeStructData: true, ...(after ? { startingAfter: after } : {}) },
      signal,
    );
    return serverSentEvents(messages);
  });
}
