// The project console's webhook endpoints: the list and a new endpoint (its secret shown once), an endpoint's page
// with its deliveries, and its moves (edit, enable / disable, rotate, test, delete, retry / replay, recover).
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { WebhookEndpointsService, type WebhookDelivery, type WebhookEndpoint, type WebhookTest } from "../../gen/svc/v1/webhook_endpoints_pb.ts";
import { svcError } from "../domain/errors.ts";
import { MAX_GRACE_PERIOD_HOURS } from "../domain/webhook-endpoint-rules.ts";
import { seg, type ConsoleContext, type ConsoleRouter } from "./console-router.ts";
import { deliveryPath } from "./delivery-console.ts";
import { formDecimal } from "./form-fields.ts";
import { html, type Html } from "./html.ts";
import { actionButton, filteredResults, nextPageLink, page, postForm, secretOnce, statusTag, table, time } from "./layout.ts";
import { dateOf, PAGE_SIZE } from "./project-console-common.ts";

export function registerWebhooksConsole(router: ConsoleRouter): void {
  const P = "project" as const;

  router.page(P, "/webhooks", async (ctx) => {
    const answer = await ctx.call(WebhookEndpointsService.method.listWebhookEndpoints, { limit: 100 });
    return page(
      ctx.shell("Webhooks", "webhooks"),
      html`<h1>Webhook endpoints</h1>
      ${table(
        "Endpoints",
        ["URL", "Description", "Events", "State"],
        answer.data.map(
          (e) => html`<tr><td><a href="/dashboard/webhooks/${seg(e.id)}">${e.url}</a></td><td>${e.description}</td><td>${e.eventTypes.join(", ")}</td>
          <td>${e.enabled ? statusTag("enabled") : html`${statusTag("disabled")} ${e.disabledReason ?? ""}`}</td></tr>`,
        ),
        "No endpoint yet.",
      )}
      <section class="card" aria-labelledby="new-endpoint"><h2 id="new-endpoint">Add an endpoint</h2>
      ${postForm(
        ctx.csrf,
        "/dashboard/webhooks",
        html`<div class="field"><label for="n-url">URL</label><input type="url" id="n-url" name="url" required></div>
        <div class="field"><label for="n-description">Description</label><input type="text" id="n-description" name="description"></div>
        <div class="field"><label for="n-types">Event types (comma-separated; empty: every type)</label><input type="text" id="n-types" name="event_types" placeholder="*"></div>
        <p><button type="submit">Add endpoint</button></p>`,
        { className: "stack", label: "Add an endpoint" },
      )}</section>`,
    );
  });

  const eventTypesOf = (text: string | null) =>
    (text ?? "")
      .split(",")
      .map((t) => t.trim())
      .filter((t) => t !== "");

  router.action(
    P,
    "/webhooks",
    () => "/dashboard/webhooks",
    async (ctx) => {
      const description = ctx.form.get("description") ?? "";
      const eventTypes = eventTypesOf(ctx.form.get("event_types"));
      const answer = await ctx.call(WebhookEndpointsService.method.createWebhookEndpoint, {
        url: ctx.form.get("url") ?? "",
        // A field left empty sends no list: the default, every type (an empty list would be refused).
        ...(eventTypes.length > 0 ? { eventTypeList: { values: eventTypes } } : {}),
        ...(description !== "" ? { description } : {}),
      });
      const endpoint = answer.webhookEndpoint!;
      return { render: await endpointPage(ctx, endpoint.id, secretOnce("new-secret", "Signing secret of the new endpoint", endpoint.secret ?? "")) };
    },
  );

  async function endpointPage(ctx: ConsoleContext, id: string, notice: Html | null = null): Promise<string> {
    const status = ["pending", "succeeded", "failed"].includes(ctx.query.status ?? "") ? ctx.query.status : undefined;
    const [answer, deliveries] = await Promise.all([
      ctx.call(WebhookEndpointsService.method.getWebhookEndpoint, { id }),
      ctx.call(WebhookEndpointsService.method.listWebhookDeliveries, {
        endpointId: id,
        limit: PAGE_SIZE,
        ...(status ? { status } : {}),
        ...(ctx.request.method === "GET" && ctx.query.starting_after ? { startingAfter: ctx.query.starting_after } : {}),
      }),
    ]);
    const e: WebhookEndpoint = answer.webhookEndpoint!;
    const base = `/dashboard/webhooks/${seg(e.id)}`;
    const grace = dateOf(e.previousSecretExpiresAt);
    const filter = (value: string, label: string) =>
      html`<a href="${value ? `${base}?status=${value}` : base}"${(status ?? "") === value ? html` aria-current="true"` : ""}>${label}</a>`;
    return page(
      ctx.shell(`Endpoint ${e.url}`, "webhooks"),
      html`<h1>Endpoint</h1>
      ${notice}
      <dl class="facts card">
        <dt>URL</dt><dd>${e.url}</dd>
        <dt>Description</dt><dd class="endpoint-description">${e.description || "—"}</dd>
        <dt>Events</dt><dd>${e.eventTypes.join(", ")}</dd>
        <dt>State</dt><dd>${e.enabled ? statusTag("enabled") : html`${statusTag("disabled")} (${e.disabledReason ?? ""})`}</dd>
        <dt>Secret</dt><dd>whsec_…${e.secretLast4}${grace ? html` · previous secret signs until ${time(grace)}` : ""}</dd>
        <dt>Id</dt><dd><code>${e.id}</code></dd>
      </dl>
      <div class="actions">
        ${actionButton(ctx.csrf, `${base}/test`, "Send test event")}
        ${e.enabled ? actionButton(ctx.csrf, `${base}/disable`, "Disable", { caution: true }) : actionButton(ctx.csrf, `${base}/enable`, "Enable")}
        ${actionButton(ctx.csrf, `${base}/delete`, "Delete endpoint", { danger: true, confirm: "Delete this endpoint and its deliveries?" })}
      </div>
      <section class="card" aria-labelledby="edit-title"><h2 id="edit-title">Edit</h2>
      ${postForm(
        ctx.csrf,
        base,
        html`<div class="field"><label for="e-url">URL</label><input type="url" id="e-url" name="url" value="${e.url}" required></div>
        <div class="field"><label for="e-description">Description</label><input type="text" id="e-description" name="description" value="${e.description}"></div>
        <div class="field"><label for="e-types">Event types (comma-separated)</label><input type="text" id="e-types" name="event_types" value="${e.eventTypes.join(", ")}"></div>
        <p><button type="submit">Save</button></p>`,
        { className: "stack", label: "Edit endpoint" },
      )}</section>
      <section class="card" aria-labelledby="rotate-title"><h2 id="rotate-title">Rotate the signing secret</h2>
      ${postForm(
        ctx.csrf,
        `${base}/rotate`,
        html`<div class="row"><div class="field"><label for="r-grace">Hours the old secret keeps signing (0 to ${MAX_GRACE_PERIOD_HOURS})</label>
        <input type="number" id="r-grace" name="grace_period_hours" min="0" max="${MAX_GRACE_PERIOD_HOURS}" value="24"></div><button type="submit">Rotate secret</button></div>`,
        { label: "Rotate secret" },
      )}</section>
      <section class="card" aria-labelledby="recover-title"><h2 id="recover-title">Recover failed deliveries</h2>
        ${postForm(
          ctx.csrf,
          `${base}/recover`,
          html`<div class="row"><div class="field"><label for="rc-since">Failed since (UTC)</label><input type="datetime-local" id="rc-since" name="since" required></div>
          <button type="submit">Recover</button></div>`,
          { label: "Recover failed deliveries" },
        )}</section>
      <h2>Deliveries</h2>
      ${filteredResults(html`<p class="row" aria-label="Delivery status filter">Status: ${filter("", "all")} ${filter("pending", "pending")} ${filter("succeeded", "succeeded")} ${filter("failed", "failed")}</p>
      ${table(
        "Deliveries, newest first",
        ["Event", "Type", "Status", "Attempts", "Last attempt", "Next attempt", ""],
        deliveries.data.map((d) => deliveryRow(ctx, base, d)),
        "No delivery.",
      )}
      ${nextPageLink(base, { status }, deliveries.data.at(-1)?.id, deliveries.hasMore)}`)}`,
    );
  }

  function deliveryRow(ctx: ConsoleContext, base: string, d: WebhookDelivery): Html {
    const last = d.lastAttempt;
    return html`<tr class="delivery" data-event-type="${d.eventType}" data-delivery-id="${d.id}"><td><a href="/dashboard/events/${seg(d.eventId)}"><code>${d.eventId}</code></a>
      <br><span class="muted">delivery <a href="${deliveryPath(d.endpointId, d.id)}"><code>${d.id}</code></a></span></td><td>${d.eventType}</td>
      <td>${statusTag(d.status)}</td><td>${d.attemptCount}</td>
      <td>${last ? html`${time(dateOf(last.attemptedAt))} · ${last.responseStatus ?? "no answer"}${last.error ? html` · ${last.error}` : ""} · ${last.durationMs} ms` : "—"}</td>
      <td>${time(dateOf(d.nextAttemptAt))}</td>
      <td>${
        d.status === "pending"
          ? actionButton(ctx.csrf, `${base}/deliveries/${seg(d.id)}/retry`, "Retry now")
          : actionButton(ctx.csrf, `${base}/deliveries/${seg(d.id)}/replay`, "Replay")
      }</td></tr>`;
  }

  router.page(P, "/webhooks/:id", (ctx) => endpointPage(ctx, ctx.params.id!));

  const back = (ctx: ConsoleContext) => `/dashboard/webhooks/${seg(ctx.params.id!)}`;
  router.action(P, "/webhooks/:id", back, async (ctx) => {
    await ctx.call(WebhookEndpointsService.method.updateWebhookEndpoint, {
      id: ctx.params.id!,
      endpoint: {
        url: ctx.form.get("url") ?? "",
        description: ctx.form.get("description") ?? "",
        eventTypes: eventTypesOf(ctx.form.get("event_types")),
      },
      updateMask: { paths: ["url", "description", "event_types"] },
    });
    return { redirect: back(ctx), notice: "Endpoint saved." };
  });
  for (const [verb, enabled] of [
    ["enable", true],
    ["disable", false],
  ] as const) {
    router.action(P, `/webhooks/:id/${verb}`, back, async (ctx) => {
      await ctx.call(WebhookEndpointsService.method.updateWebhookEndpoint, {
        id: ctx.params.id!,
        endpoint: { enabled },
        updateMask: { paths: ["enabled"] },
      });
      return { redirect: back(ctx), notice: enabled ? "Endpoint enabled." : "Endpoint disabled: its pending deliveries are settled as failed." };
    });
  }
  router.action(P, "/webhooks/:id/delete", back, async (ctx) => {
    await ctx.call(WebhookEndpointsService.method.deleteWebhookEndpoint, { id: ctx.params.id! });
    return { redirect: "/dashboard/webhooks", notice: "Endpoint deleted." };
  });
  router.action(P, "/webhooks/:id/rotate", back, async (ctx) => {
    // Empty: the method's default grace period.
    const hours = formDecimal(ctx, "grace_period_hours", true);
    const answer = await ctx.call(WebhookEndpointsService.method.rotateWebhookEndpointSecret, {
      id: ctx.params.id!,
      ...(hours !== undefined ? { gracePeriodHours: hours } : {}),
    });
    return { render: await endpointPage(ctx, ctx.params.id!, secretOnce("new-secret", "New signing secret", answer.webhookEndpoint!.secret ?? "")) };
  });
  router.action(P, "/webhooks/:id/test", back, async (ctx) => {
    const answer = await ctx.call(WebhookEndpointsService.method.testWebhookEndpoint, { id: ctx.params.id! });
    const t: WebhookTest = answer.webhookTest!;
    const box = html`<section class="card test-result" aria-labelledby="test-title" role="status"><h2 id="test-title">Test event result</h2>
      <p>${statusTag(t.status)} · response ${t.responseStatus ?? "none"}${t.error ? html` · ${t.error}` : ""} · ${t.durationMs} ms ·
      event <a href="/dashboard/events/${seg(t.eventId)}"><code>${t.eventId}</code></a></p></section>`;
    return { render: await endpointPage(ctx, ctx.params.id!, box) };
  });
  router.action(P, "/webhooks/:id/deliveries/:delivery/retry", back, async (ctx) => {
    await ctx.call(WebhookEndpointsService.method.retryWebhookDelivery, { endpointId: ctx.params.id!, id: ctx.params.delivery! });
    return { redirect: back(ctx), notice: "Delivery retried: its next attempt runs now." };
  });
  router.action(P, "/webhooks/:id/deliveries/:delivery/replay", back, async (ctx) => {
    await ctx.call(WebhookEndpointsService.method.replayWebhookDelivery, { endpointId: ctx.params.id!, id: ctx.params.delivery! });
    return { redirect: back(ctx), notice: "Delivery replayed: a new cycle of attempts has started." };
  });
  router.action(P, "/webhooks/:id/recover", back, async (ctx) => {
    const since = new Date(`${ctx.form.get("since") ?? ""}Z`);
    if (Number.isNaN(since.getTime())) throw svcError("validation_error", "since must be a date and time.", { param: "since" });
    const answer = await ctx.call(WebhookEndpointsService.method.recoverWebhookDeliveries, { id: ctx.params.id!, since: timestampFromDate(since) });
    const queued = answer.webhookRecovery?.deliveriesQueued ?? 0;
    return { redirect: back(ctx), notice: `Recovery started: ${queued} failed deliveries queued again.` };
  });
}
