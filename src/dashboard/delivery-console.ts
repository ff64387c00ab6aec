// The project console's delivery page: one delivery of an event to an endpoint, with every attempt its history
// keeps, each showing the request as sent (URL, headers, the body exactly as signed) and the receiver's answer
// (status, headers, the first 4 KiB of its body, duration). Read through `GetWebhookDelivery`, as the API answers.
import { WebhookEndpointsService, type WebhookDeliveryAttempt } from "../../gen/svc/v1/webhook_endpoints_pb.ts";
import { ATTEMPT_REQUEST_BODY_KEPT_BYTES, ATTEMPT_RESPONSE_BODY_KEPT_BYTES, DELIVERY_ATTEMPTS_KEPT } from "../domain/limits.ts";
import { seg, type ConsoleRouter } from "./console-router.ts";
import { html, type Html } from "./html.ts";
import { actionButton, page, statusTag, time } from "./layout.ts";
import { dateOf } from "./project-console-common.ts";

/** Where a delivery's page is. */
export function deliveryPath(endpointId: string, deliveryId: string): string {
  return `/dashboard/webhooks/${seg(endpointId)}/deliveries/${seg(deliveryId)}`;
}

function headerList(label: string, headers: Record<string, string>): Html {
  const names = Object.keys(headers);
  if (names.length === 0) return html`<p class="empty">No headers.</p>`;
  return html`<dl class="facts headers" aria-label="${label}">${names.map((name) => html`<dt>${name}</dt><dd><code>${headers[name]}</code></dd>`)}</dl>`;
}

function bodyBlock(label: string, body: string, truncated: boolean, keptNote: string): Html {
  return html`<pre class="json attempt-body" tabindex="0" aria-label="${label}">${body === "" ? "(empty)" : body}</pre>
    ${truncated ? html`<p class="muted">${keptNote}</p>` : ""}`;
}

const SETTLED_UNTRIED: ReadonlySet<string> = new Set(["queue_full", "endpoint_disabled"]);

/** One attempt: what was sent, and what came back. `n`: its place in the history shown. */
function attemptSection(attempt: WebhookDeliveryAttempt, n: number): Html {
  const { request, response } = attempt;
  const number = request?.headers["Svc-Delivery-Attempt"];
  const id = `attempt-${n}`;
  // queue_full and endpoint_disabled settle a delivery without trying it; other failures without a request tried.
  const title = number ? `Attempt ${number}` : SETTLED_UNTRIED.has(attempt.error ?? "") ? "Settled without an attempt" : "Attempt, no request sent";
  return html`<section class="card attempt" aria-labelledby="${id}-title">
    <h2 id="${id}-title">${title} · ${time(dateOf(attempt.attemptedAt))}</h2>
    <p>${statusTag(attempt.error ? "failed" : "succeeded")} · response <span class="response-status">${attempt.responseStatus ?? "none"}</span>${
      attempt.error ? html` · <code>${attempt.error}</code>` : ""
    } · <span class="duration">${attempt.durationMs} ms</span></p>
    <div class="exchange">
      <div class="exchange-part"><h3>Request</h3>${
        request
          ? html`<p><code>POST ${request.url}</code></p>${headerList("Request headers", request.headers)}
            ${bodyBlock("Request body", request.body, request.bodyTruncated, `Only the first ${ATTEMPT_REQUEST_BODY_KEPT_BYTES / 1024} KiB are kept.`)}`
          : html`<p class="empty">No request was sent.</p>`
      }</div>
      <div class="exchange-part"><h3>Response</h3>${
        response
          ? html`${headerList("Response headers", response.headers)}
            ${bodyBlock("Response body", response.body, response.bodyTruncated, `Only the first ${ATTEMPT_RESPONSE_BODY_KEPT_BYTES / 1024} KiB are kept.`)}`
          : html`<p class="empty">The receiver did not answer.</p>`
      }</div>
    </div>
  </section>`;
}

export function registerDeliveryConsole(router: ConsoleRouter): void {
  router.page("project", "/webhooks/:id/deliveries/:delivery", async (ctx) => {
    const answer = await ctx.call(WebhookEndpointsService.method.getWebhookDelivery, { endpointId: ctx.params.id!, id: ctx.params.delivery! });
    const d = answer.webhookDelivery!;
    const endpointBase = `/dashboard/webhooks/${seg(d.endpointId)}`;
    const attempts = [...d.attempts].reverse();
    return page(
      ctx.shell(`Delivery ${d.id}`, "webhooks"),
      html`<h1>Delivery <code>${d.id}</code></h1>
      <dl class="facts card">
        <dt>Endpoint</dt><dd><a href="${endpointBase}"><code>${d.endpointId}</code></a></dd>
        <dt>Event</dt><dd><a href="/dashboard/events/${seg(d.eventId)}"><code>${d.eventId}</code></a> (${d.eventType})</dd>
        <dt>Status</dt><dd>${statusTag(d.status)}</dd>
        <dt>Attempts</dt><dd>${d.attemptCount} in this cycle</dd>
        <dt>Next attempt</dt><dd>${time(dateOf(d.nextAttemptAt))}</dd>
        <dt>Created</dt><dd>${time(dateOf(d.createdAt))}</dd>
      </dl>
      <div class="actions">${
        d.status === "pending"
          ? actionButton(ctx.csrf, `${endpointBase}/deliveries/${seg(d.id)}/retry`, "Retry now")
          : actionButton(ctx.csrf, `${endpointBase}/deliveries/${seg(d.id)}/replay`, "Replay")
      }</div>
      <p class="muted">Newest first; the latest ${DELIVERY_ATTEMPTS_KEPT} attempts are kept.</p>
      ${attempts.length > 0 ? attempts.map((a, i) => attemptSection(a, i + 1)) : html`<p class="empty">No attempt yet.</p>`}`,
    );
  });
}
