// The project console: what one secret API key's project and environment holds. Every read and change goes
// through the public services (and AdminService for the sandbox's user suspension), as the API's do.
import { timestampDate, timestampFromDate, type Timestamp } from "@bufbuild/protobuf/wkt";
import { AdminService } from "../../gen/svc/admin/v1/admin_pb.ts";
import { EventsService } from "../../gen/svc/v1/events_pb.ts";
import { UsersService } from "../../gen/svc/v1/users_pb.ts";
import { WebhookEndpointsService, type WebhookDelivery, type WebhookEndpoint, type WebhookTest } from "../../gen/svc/v1/webhook_endpoints_pb.ts";
import { svcError } from "../domain/errors.ts";
import { eventJson } from "../representations/events.ts";
import { profileJson, userJson, walletJson } from "../representations/users.ts";
import { COUNT_CAP } from "../store/console-queries.ts";
import { optionalMethod, seg, type ConsoleContext, type ConsoleRouter } from "./console-router.ts";
import { html, type Html } from "./html.ts";
import { actionButton, jsonBlock, nextPageLink, page, postForm, secretOnce, statusTag, table, time } from "./layout.ts";

const PAGE_SIZE = 25;

function date(value: Timestamp | undefined): Date | null {
  return value ? timestampDate(value) : null;
}

function scopeOf(ctx: ConsoleContext) {
  if (!ctx.scope) throw svcError("missing_api_key");
  return ctx.scope;
}

function countText(n: number): string {
  return n >= COUNT_CAP ? `${COUNT_CAP.toLocaleString("en-US")}+` : n.toLocaleString("en-US");
}

/** Sections of the user page, in order; a feature adds its own (KYC, verification, money) as it lands. */
type UserSection = (ctx: ConsoleContext, userId: string, stored: Record<string, any> | null) => Promise<Html | null>;

export function registerProjectConsole(router: ConsoleRouter): void {
  const { registry, queries } = router.options;
  const P = "project" as const;
  const listUsers = optionalMethod(registry, "svc.v1.UsersService", "listUsers");
  const recover = optionalMethod(registry, "svc.v1.WebhookEndpointsService", "recoverWebhookDeliveries");

  // ---- Overview
  router.page(P, "/", async (ctx) => {
    const scope = scopeOf(ctx);
    const [counts, failing] = await Promise.all([queries.counts(scope), queries.failingEndpoints(scope)]);
    const rows = failing.map(
      (
        e,
      ) => html`<tr><td><a href="/dashboard/webhooks/${seg(e._id)}">${e.url}</a></td><td>${e.enabled ? statusTag("enabled") : statusTag("disabled")}</td>
        <td>${e.disabled_reason ?? ""}</td><td>${e.consecutive_failures}</td></tr>`,
    );
    return page(
      ctx.shell("Overview", "overview"),
      html`<h1>Overview</h1>
      <div class="grid">
        <div class="stat"><span class="value">${countText(counts.users)}</span> users</div>
        <div class="stat"><span class="value">${countText(counts.events)}</span> events (30 days)</div>
        <div class="stat"><span class="value">${counts.endpoints}</span> webhook endpoints</div>
        <div class="stat"><span class="value">${failing.length}</span> failing endpoints</div>
      </div>
      <h2>Failing endpoints</h2>
      ${table("Endpoints disabled or failing since their last success", ["URL", "State", "Disabled because", "Consecutive failures"], rows, "No endpoint is failing.")}`,
    );
  });

  // ---- Users
  router.page(P, "/users", async (ctx) => {
    const scope = scopeOf(ctx);
    const q = ctx.query;
    const bool = (v: string | undefined) => (v === "true" ? true : v === "false" ? false : undefined);
    let rows: { id: string; phone: string; kyc: string; verified: boolean; suspended: boolean; created: Date | null }[];
    let hasMore: boolean;
    if (listUsers) {
      const init: Record<string, unknown> = { limit: PAGE_SIZE };
      if (q.starting_after) init.startingAfter = q.starting_after;
      if (q.phone) init.phone = q.phone;
      if (q.kyc_status) init.kycStatus = q.kyc_status;
      if (bool(q.verified) !== undefined) init.verified = bool(q.verified);
      if (bool(q.suspended) !== undefined) init.suspended = bool(q.suspended);
      const answer = await ctx.callFound(listUsers, init);
      rows = (answer.data as any[]).map((u) => ({
        id: u.id,
        phone: u.phone,
        kyc: u.kycStatus,
        verified: u.verified,
        suspended: u.suspended,
        created: date(u.createdAt),
      }));
      hasMore = answer.hasMore;
    } else {
      const after = q.starting_after ? await queries.findUser(scope, q.starting_after) : null;
      const found = await queries.listUsers(
        scope,
        {
          ...(q.kyc_status ? { kyc_status: q.kyc_status } : {}),
          ...(q.phone ? { phone: q.phone } : {}),
          ...(bool(q.verified) !== undefined ? { verified: bool(q.verified)! } : {}),
          ...(bool(q.suspended) !== undefined ? { suspended: bool(q.suspended)! } : {}),
        },
        PAGE_SIZE,
        after,
      );
      rows = found.items.map((u) => ({
        id: u._id,
        phone: u.phone,
        kyc: u.kyc_status,
        verified: u.verified,
        suspended: u.suspended,
        created: u.created_at,
      }));
      hasMore = found.hasMore;
    }
    const option = (name: string, value: string, label: string) =>
      html`<option value="${value}"${q[name] === value ? html` selected` : ""}>${label}</option>`;
    return page(
      ctx.shell("Users", "users"),
      html`<h1>Users</h1>
      <form method="get" action="/dashboard/users" class="row" aria-label="Filter users">
        <div class="field"><label for="f-phone">Phone (E.164)</label><input type="text" id="f-phone" name="phone" value="${q.phone ?? ""}"></div>
        <div class="field"><label for="f-kyc">KYC status</label><select id="f-kyc" name="kyc_status">${option("kyc_status", "", "Any")}${["none", "pending", "approved", "rejected"].map((s) => option("kyc_status", s, s))}</select></div>
        <div class="field"><label for="f-verified">Verified</label><select id="f-verified" name="verified">${option("verified", "", "Any")}${option("verified", "true", "yes")}${option("verified", "false", "no")}</select></div>
        <div class="field"><label for="f-suspended">Suspended</label><select id="f-suspended" name="suspended">${option("suspended", "", "Any")}${option("suspended", "true", "yes")}${option("suspended", "false", "no")}</select></div>
        <button type="submit">Filter</button>
      </form>
      ${table(
        "Users, newest first",
        ["User", "Phone", "KYC", "Verified", "Suspended", "Created"],
        rows.map(
          (u) => html`<tr><td><a href="/dashboard/users/${seg(u.id)}"><code>${u.id}</code></a></td><td>${u.phone}</td><td>${statusTag(u.kyc)}</td>
          <td>${u.verified ? "yes" : "no"}</td><td>${u.suspended ? statusTag("suspended") : "no"}</td><td>${time(u.created)}</td></tr>`,
        ),
        "No user matches.",
      )}
      ${nextPageLink("/dashboard/users", { phone: q.phone, kyc_status: q.kyc_status, verified: q.verified, suspended: q.suspended }, rows.at(-1)?.id, hasMore)}`,
    );
  });

  const userSections: UserSection[] = [
    async (ctx, userId) => {
      const answer = await ctx.call(UsersService.method.listUserWallets, { userId, limit: 10 });
      return html`<h2>Wallets</h2>${table(
        "Wallets",
        ["Wallet", "Status", "Simulated", "Created"],
        answer.data.map((w) => {
          const j = walletJson(w);
          return html`<tr><td><code>${w.id}</code></td><td>${statusTag(w.status)}</td><td>${w.simulated ? "yes" : "no"}</td><td>${time(j.created_at as string)}</td></tr>`;
        }),
        "No wallet yet.",
      )}`;
    },
    async (_ctx, _userId, stored) => {
      const v = stored?.phone_verification;
      if (!v) return null;
      return html`<h2>Phone verification</h2>${jsonBlock("Phone verification", { status: v.status, channel: v.channel, created_at: v.created_at, expires_at: v.expires_at })}`;
    },
    async (_ctx, _userId, stored) => {
      const sessions = stored?.kyc_sessions as any[] | undefined;
      if (!sessions?.length) return null;
      return html`<h2>KYC sessions</h2>${table(
        "KYC sessions, oldest first",
        ["Session", "Status", "Created"],
        sessions.map((s) => html`<tr><td><code>${s.id}</code></td><td>${statusTag(String(s.status))}</td><td>${time(s.created_at)}</td></tr>`),
      )}`;
    },
  ];

  router.page(P, "/users/:id", async (ctx) => {
    const scope = scopeOf(ctx);
    const id = ctx.params.id!;
    const answer = await ctx.call(UsersService.method.getUser, { id });
    const user = answer.user!;
    const stored = (await queries.findUser(scope, id)) as Record<string, any> | null;
    const sections = (await Promise.all(userSections.map((s) => s(ctx, id, stored)))).filter((s) => s !== null);
    const sandbox = !scope.livemode;
    return page(
      ctx.shell(`User ${id}`, "users"),
      html`<h1>User <code>${id}</code></h1>
      ${user.suspended ? html`<p>${statusTag("suspended")}</p>` : ""}
      <div class="card"><h2>User</h2>${jsonBlock("User", userJson(user))}</div>
      <div class="card"><h2>Profile</h2>${jsonBlock("Profile", profileJson(answer.profile))}</div>
      ${sections}
      ${
        sandbox
          ? html`<h2>Sandbox actions</h2><div class="actions">${
              user.suspended
                ? actionButton(ctx.csrf, `/dashboard/users/${seg(id)}/unsuspend`, "Unsuspend user")
                : actionButton(ctx.csrf, `/dashboard/users/${seg(id)}/suspend`, "Suspend user", { danger: true, confirm: "Suspend this user?" })
            }</div>`
          : ""
      }`,
    );
  });

  for (const [verb, suspend] of [
    ["suspend", true],
    ["unsuspend", false],
  ] as const) {
    router.action(
      P,
      `/users/:id/${verb}`,
      (ctx) => `/dashboard/users/${seg(ctx.params.id!)}`,
      async (ctx) => {
        const scope = scopeOf(ctx);
        if (scope.livemode) throw svcError("validation_error", "Suspending users from the dashboard is a sandbox tool.");
        const request = { projectId: scope.projectId, livemode: false, userId: ctx.params.id! };
        if (suspend) await ctx.call(AdminService.method.suspendUser, request);
        else await ctx.call(AdminService.method.unsuspendUser, request);
        return { redirect: `/dashboard/users/${seg(ctx.params.id!)}`, notice: suspend ? "User suspended." : "User unsuspended." };
      },
    );
  }

  // ---- Events
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
      <form method="get" action="/dashboard/events" class="row" aria-label="Filter events">
        <div class="field"><label for="f-type">Event type</label><input type="text" id="f-type" name="type" value="${q.type ?? ""}" placeholder="user.created"></div>
        <button type="submit">Filter</button>
      </form>
      ${table(
        "Events, newest first",
        ["Event", "Type", "Created"],
        answer.data.map(
          (e) =>
            html`<tr><td><a href="/dashboard/events/${seg(e.id)}"><code>${e.id}</code></a></td><td>${e.type}</td><td>${time(date(e.createdAt))}</td></tr>`,
        ),
        "No event matches.",
      )}
      ${nextPageLink("/dashboard/events", { type: q.type }, answer.data.at(-1)?.id, answer.hasMore)}`,
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
      <p>${event.type} · ${time(date(event.createdAt))}</p>
      ${jsonBlock("Event JSON", eventJson(event))}
      <h2>Delivered to</h2>
      ${table(
        "Deliveries of this event",
        ["Endpoint", "Status", "Attempts", "Last attempt"],
        deliveries.map(
          (
            d,
          ) => html`<tr><td><a href="/dashboard/webhooks/${seg(d.endpoint_id)}"><code>${d.endpoint_id}</code></a></td><td>${statusTag(d.status)}</td><td>${d.attempt_count}</td>
          <td>${d.last_attempt ? html`${time(d.last_attempt.attempted_at)} ${d.last_attempt.response_status ?? ""} ${d.last_attempt.error ?? ""}` : "—"}</td></tr>`,
        ),
        "Not delivered to any endpoint (none subscribed, or a test event).",
      )}`,
    );
  });

  // ---- Webhooks
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
      const answer = await ctx.call(WebhookEndpointsService.method.createWebhookEndpoint, {
        url: ctx.form.get("url") ?? "",
        eventTypes: eventTypesOf(ctx.form.get("event_types")),
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
    const grace = date(e.previousSecretExpiresAt);
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
        ${e.enabled ? actionButton(ctx.csrf, `${base}/disable`, "Disable", { danger: true }) : actionButton(ctx.csrf, `${base}/enable`, "Enable")}
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
        html`<div class="row"><div class="field"><label for="r-grace">Hours the old secret keeps signing (0 to 72)</label>
        <input type="number" id="r-grace" name="grace_period_hours" min="0" max="72" value="24"></div><button type="submit">Rotate secret</button></div>`,
        { label: "Rotate secret" },
      )}</section>
      ${
        recover
          ? html`<section class="card" aria-labelledby="recover-title"><h2 id="recover-title">Recover failed deliveries</h2>
        ${postForm(
          ctx.csrf,
          `${base}/recover`,
          html`<div class="row"><div class="field"><label for="rc-since">Failed since (UTC)</label><input type="datetime-local" id="rc-since" name="since" required></div>
          <button type="submit">Recover</button></div>`,
          { label: "Recover failed deliveries" },
        )}</section>`
          : ""
      }
      <h2>Deliveries</h2>
      <p class="row" aria-label="Delivery status filter">Status: ${filter("", "all")} ${filter("pending", "pending")} ${filter("succeeded", "succeeded")} ${filter("failed", "failed")}</p>
      ${table(
        "Deliveries, newest first",
        ["Event", "Type", "Status", "Attempts", "Last attempt", "Next attempt", ""],
        deliveries.data.map((d) => deliveryRow(ctx, base, d)),
        "No delivery.",
      )}
      ${nextPageLink(base, { status }, deliveries.data.at(-1)?.id, deliveries.hasMore)}`,
    );
  }

  function deliveryRow(ctx: ConsoleContext, base: string, d: WebhookDelivery): Html {
    const last = d.lastAttempt;
    return html`<tr class="delivery" data-event-type="${d.eventType}"><td><a href="/dashboard/events/${seg(d.eventId)}"><code>${d.eventId}</code></a></td><td>${d.eventType}</td>
      <td>${statusTag(d.status)}</td><td>${d.attemptCount}</td>
      <td>${last ? html`${time(date(last.attemptedAt))} · ${last.responseStatus ?? "no answer"}${last.error ? html` · ${last.error}` : ""} · ${last.durationMs} ms` : "—"}</td>
      <td>${time(date(d.nextAttemptAt))}</td>
      <td>${d.status === "pending" ? "" : actionButton(ctx.csrf, `${base}/deliveries/${seg(d.id)}/replay`, "Replay")}</td></tr>`;
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
    const hours = Number(ctx.form.get("grace_period_hours") ?? "");
    if (!Number.isInteger(hours))
      throw svcError("validation_error", "grace_period_hours must be a whole number of hours.", { param: "grace_period_hours" });
    const answer = await ctx.call(WebhookEndpointsService.method.rotateWebhookEndpointSecret, { id: ctx.params.id!, gracePeriodHours: hours });
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
  router.action(P, "/webhooks/:id/deliveries/:delivery/replay", back, async (ctx) => {
    await ctx.call(WebhookEndpointsService.method.replayWebhookDelivery, { endpointId: ctx.params.id!, id: ctx.params.delivery! });
    return { redirect: back(ctx), notice: "Delivery replayed: a new cycle of attempts has started." };
  });
  if (recover) {
    router.action(P, "/webhooks/:id/recover", back, async (ctx) => {
      const since = new Date(`${ctx.form.get("since") ?? ""}Z`);
      if (Number.isNaN(since.getTime())) throw svcError("validation_error", "since must be a date and time.", { param: "since" });
      const answer = await ctx.callFound(recover, { id: ctx.params.id!, since: timestampFromDate(since) });
      const queued = answer.webhookRecovery?.deliveriesQueued ?? 0;
      return { redirect: back(ctx), notice: `Recovery started: ${queued} failed deliveries queued again.` };
    });
  }

  // ---- Sandbox tools
  router.page(P, "/sandbox", async (ctx) => {
    const scope = scopeOf(ctx);
    if (scope.livemode) throw svcError("validation_error", "Sandbox tools exist in the sandbox environment only.");
    return page(
      ctx.shell("Sandbox tools", "sandbox"),
      html`<h1>Sandbox tools</h1>
      <section class="card" aria-labelledby="suspend-title"><h2 id="suspend-title">Suspend a user</h2>
      ${postForm(
        ctx.csrf,
        "/dashboard/sandbox/suspend",
        html`<div class="row"><div class="field"><label for="s-user">User id</label><input type="text" id="s-user" name="user_id" required></div><button type="submit">Suspend</button></div>`,
        { label: "Suspend a user" },
      )}</section>
      <p class="muted">Deposits and KYC sessions are driven from here once this build has them.</p>`,
    );
  });
  router.action(
    P,
    "/sandbox/suspend",
    () => "/dashboard/sandbox",
    async (ctx) => {
      const scope = scopeOf(ctx);
      if (scope.livemode) throw svcError("validation_error", "Sandbox tools exist in the sandbox environment only.");
      const userId = ctx.form.get("user_id") ?? "";
      await ctx.call(AdminService.method.suspendUser, { projectId: scope.projectId, livemode: false, userId });
      return { redirect: `/dashboard/users/${seg(userId)}`, notice: "User suspended." };
    },
  );
}
