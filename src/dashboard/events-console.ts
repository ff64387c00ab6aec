// The project console's events: the list filtered by type, and an event's JSON with every delivery of it.
import { EventsService } from "../../gen/svc/v1/events_pb.ts";
import { EVENT_TYPES } from "../domain/event-types.ts";
import { eventJson } from "../representations/events.ts";
import { seg, type ConsoleRouter } from "./console-router.ts";
import { deliveryPath } from "./delivery-console.ts";
import { html } from "./html.ts";
import { filteredResults, jsonBlock, nextPageLink, page, statusTag, table, time } from "./layout.ts";
import { dateOf, PAGE_SIZE, scopeOf } from "./project-console-common.ts";

export function registerEventsConsole(router: ConsoleRouter): void {
  const { queries } = router.options;
  const P = "project" as const;

  router.page(P, "/events", async (ctx) => {
    const q = ctx.query;
    const answer = await ctx.call(EventsService.method.listEvents, {
      limit: PAGE_SIZE,
      ...(q.type ? { type: q.type } : {}),
      ...(q.starting_after ? { startingAfter: q.starting_after } : {}),
    });
    return page(
      ctx.shell("Events", "events"),
      html`<h1>Events</h1>
      <form method="get" action="/dashboard/events" class="row" aria-label="Filter events" data-filter>
        <div class="field"><label for="f-type">Event type</label><select id="f-type" name="type"><option value="">Every type</option>${EVENT_TYPES.map(
          (type) => html`<option value="${type}"${type === q.type ? html` selected` : ""}>${type}</option>`,
        )}</select></div>
        <button type="submit">Filter</button>
      </form>
      ${filteredResults(html`${table(
        "Events, newest first",
        ["Event", "Type", "Created"],
        answer.data.map(
          (e) =>
            html`<tr><td><a href="/dashboard/events/${seg(e.id)}"><code>${e.id}</code></a></td><td>${e.type}</td><td>${time(dateOf(e.createdAt))}</td></tr>`,
        ),
        "No event matches.",
      )}
      ${nextPageLink("/dashboard/events", { type: q.type }, answer.data.at(-1)?.id, answer.hasMore)}`)}`,
    );
  });

  router.page(P, "/events/:id", async (ctx) => {
    const scope = scopeOf(ctx);
    const answer = await ctx.call(EventsService.method.getEvent, { id: ctx.params.id! });
    const event = answer.event!;
    const deliveries = await queries.deliveriesOfEvent(scope, event.id);
    return page(
      ctx.shell(`Event ${event.id}`, "events"),
      html`<h1>Event <code>${event.id}</code></h1>
      <p>${event.type} · ${time(dateOf(event.createdAt))}</p>
      ${jsonBlock("Event JSON", eventJson(event))}
      <h2>Delivered to</h2>
      ${table(
        "Deliveries of this event",
        ["Endpoint", "Status", "Attempts", "Last attempt"],
        deliveries.map(
          (
            d,
          ) => html`<tr><td><a href="/dashboard/webhooks/${seg(d.endpoint_id)}"><code>${d.endpoint_id}</code></a></td><td><a href="${deliveryPath(d.endpoint_id, d._id)}">${statusTag(d.status)}</a></td><td>${d.attempt_count}</td>
          <td>${d.last_attempt ? html`${time(d.last_attempt.attempted_at)} ${d.last_attempt.response_status ?? ""} ${d.last_attempt.error ?? ""}` : "—"}</td></tr>`,
        ),
        "Not delivered to any endpoint (none subscribed, or a test event).",
      )}`,
    );
  });
}
