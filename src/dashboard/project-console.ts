// The project console: what one secret API key's project and environment holds. Every read and change goes
// through the public services (and AdminService for the sandbox's user suspension), as the API's do.
import { timestampDate, timestampFromDate, type Timestamp } from "@bufbuild/protobuf/wkt";
import { AdminService } from "../../gen/svc/admin/v1/admin_pb.ts";
import { EventsService } from "../../gen/svc/v1/events_pb.ts";
import { KycSessionsService, PhoneVerificationService, SandboxService, type KycSession } from "../../gen/svc/v1/identity_pb.ts";
import { SandboxTransactionsService, TransactionsService } from "../../gen/svc/v1/transactions_pb.ts";
import { UsersService } from "../../gen/svc/v1/users_pb.ts";
import { WebhookEndpointsService, type WebhookDelivery, type WebhookEndpoint, type WebhookTest } from "../../gen/svc/v1/webhook_endpoints_pb.ts";
import { describeError, svcError } from "../domain/errors.ts";
import { EVENT_TYPES } from "../domain/event-types.ts";
import { dollars } from "../domain/money.ts";
import { MAX_GRACE_PERIOD_HOURS } from "../domain/webhook-endpoint-rules.ts";
import { eventJson } from "../representations/events.ts";
import { kycSessionJson, phoneVerificationJson } from "../representations/identity.ts";
import { transactionJson, walletBalanceJson } from "../representations/transactions.ts";
import { profileJson, userJson, walletJson } from "../representations/users.ts";
import { COUNT_CAP } from "../store/console-queries.ts";
import { seg, type ConsoleContext, type ConsoleRouter } from "./console-router.ts";
import { formDecimal, usd } from "./form-fields.ts";
import { html, type Html } from "./html.ts";
import { deliveryPath } from "./delivery-console.ts";
import { transactionPath, withdrawalForm } from "./money-console.ts";
import { actionButton, filteredResults, jsonBlock, nextPageLink, page, postForm, secretOnce, statusTag, table, time } from "./layout.ts";

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
type UserSection = (ctx: ConsoleContext, userId: string) => Promise<Html | null>;

const SANDBOX_ONLY = "Sandbox tools exist in the sandbox environment only.";

export function registerProjectConsole(router: ConsoleRouter): void {
  const { queries } = router.options;
  const P = "project" as const;

  // ---- Overview
  router.page(P, "/", async (ctx) => {
    const scope = scopeOf(ctx);
    const [counts, failing, money, recent] = await Promise.all([
      queries.counts(scope),
      queries.failingEndpoints(scope),
      queries.moneyOverview(scope, router.options.clock()),
      queries.recentActivity(scope, 5),
    ]);
    const rows = failing.map(
      (
        e,
      ) => html`<tr><td><a href="/dashboard/webhooks/${seg(e._id)}">${e.url}</a></td><td>${e.enabled ? statusTag("enabled") : statusTag("disabled")}</td>
        <td>${e.disabled_reason ?? ""}</td><td>${e.consecutive_failures}</td></tr>`,
    );
    const cents = (value: number) => usd(dollars(value));
    return page(
      ctx.shell("Overview", "overview"),
      html`<h1>Overview</h1>
      <h2>Money (USD)</h2>
      <div class="grid money">
        <div class="stat"><span class="value money-available">${cents(money.availableCents)}</span> available</div>
        <div class="stat"><span class="value money-pending-in">${cents(money.pendingInCents)}</span> pending in</div>
        <div class="stat"><span class="value money-pending-out">${cents(money.pendingOutCents)}</span> pending out</div>
      </div>
      ${table(
        "Completed volume",
        ["", "Last 24 hours", "Last 7 days"],
        [
          html`<tr class="volume-deposits"><th scope="row">Deposits</th><td>${cents(money.deposits.dayCents)}</td><td>${cents(money.deposits.weekCents)}</td></tr>`,
          html`<tr class="volume-withdrawals"><th scope="row">Withdrawals</th><td>${cents(money.withdrawals.dayCents)}</td><td>${cents(money.withdrawals.weekCents)}</td></tr>`,
        ],
      )}
      <div class="grid">
        <div class="stat"><span class="value">${countText(counts.users)}</span> users</div>
        <div class="stat"><span class="value">${countText(counts.events)}</span> events (30 days)</div>
        <div class="stat"><span class="value">${counts.endpoints}</span> webhook endpoints</div>
        <div class="stat"><span class="value">${failing.length}</span> failing endpoints</div>
      </div>
      <h2>Recent activity</h2>
      ${table(
        "Latest transactions",
        ["Transaction", "Type", "Status", "Amount (USD)", "User", "Created"],
        recent.transactions.map(
          (
            t,
          ) => html`<tr class="recent-transaction"><td><a href="${transactionPath(t._id)}"><code>${t._id}</code></a></td><td>${t.type}</td><td>${statusTag(t.status)}</td>
          <td>${cents(t.amount_cents)}</td><td><a href="/dashboard/users/${seg(t.user_id)}"><code>${t.user_id}</code></a></td><td>${time(t.created_at)}</td></tr>`,
        ),
        "No transaction yet.",
      )}
      ${table(
        "Latest KYC decisions",
        ["Event", "Decision", "When"],
        recent.decisions.map(
          (e) =>
            html`<tr><td><a href="/dashboard/events/${seg(e._id)}"><code>${e._id}</code></a></td><td>${e.type}</td><td>${time(e.created_at)}</td></tr>`,
        ),
        "No KYC decision yet.",
      )}
      ${table(
        "Latest failed deliveries",
        ["Endpoint", "Event", "Attempts", "Last error"],
        recent.failedDeliveries.map(
          (d) => html`<tr><td><a href="/dashboard/webhooks/${seg(d.endpoint_id)}"><code>${d.endpoint_id}</code></a></td>
          <td><a href="/dashboard/events/${seg(d.event_id)}"><code>${d.event_id}</code></a></td><td>${d.attempt_count}</td><td><a href="${deliveryPath(d.endpoint_id, d._id)}">${d.last_attempt?.error ?? "details"}</a></td></tr>`,
        ),
        "No failed delivery.",
      )}
      <h2>Failing endpoints</h2>
      ${table("Endpoints disabled or failing since their last success", ["URL", "State", "Disabled because", "Consecutive failures"], rows, "No endpoint is failing.")}`,
    );
  });

  // ---- Users
  router.page(P, "/users", async (ctx) => {
    const q = ctx.query;
    const bool = (v: string | undefined) => (v === "true" ? true : v === "false" ? false : undefined);
    const answer = await ctx.call(UsersService.method.listUsers, {
      limit: PAGE_SIZE,
      ...(q.starting_after ? { startingAfter: q.starting_after } : {}),
      ...(q.phone ? { phone: q.phone } : {}),
      ...(q.kyc_status ? { kycStatus: q.kyc_status } : {}),
      ...(bool(q.verified) !== undefined ? { verified: bool(q.verified)! } : {}),
      ...(bool(q.suspended) !== undefined ? { suspended: bool(q.suspended)! } : {}),
    });
    const rows = answer.data.map((u) => ({
      id: u.id,
      phone: u.phone,
      kyc: u.kycStatus,
      verified: u.verified,
      suspended: u.suspended,
      created: date(u.createdAt),
    }));
    const hasMore = answer.hasMore;
    const option = (name: string, value: string, label: string) =>
      html`<option value="${value}"${q[name] === value ? html` selected` : ""}>${label}</option>`;
    return page(
      ctx.shell("Users", "users"),
      html`<h1>Users</h1>
      <form method="get" action="/dashboard/users" class="row" aria-label="Filter users" data-filter>
        <div class="field"><label for="f-phone">Phone (E.164)</label><input type="text" id="f-phone" name="phone" value="${q.phone ?? ""}"></div>
        <div class="field"><label for="f-kyc">KYC status</label><select id="f-kyc" name="kyc_status">${option("kyc_status", "", "Any")}${["none", "pending", "approved", "rejected"].map((s) => option("kyc_status", s, s))}</select></div>
        <div class="field"><label for="f-verified">Verified</label><select id="f-verified" name="verified">${option("verified", "", "Any")}${option("verified", "true", "yes")}${option("verified", "false", "no")}</select></div>
        <div class="field"><label for="f-suspended">Suspended</label><select id="f-suspended" name="suspended">${option("suspended", "", "Any")}${option("suspended", "true", "yes")}${option("suspended", "false", "no")}</select></div>
        <button type="submit">Filter</button>
      </form>
      ${filteredResults(html`${table(
        "Users, newest first",
        ["User", "Phone", "KYC", "Verified", "Suspended", "Created"],
        rows.map(
          (u) => html`<tr><td><a href="/dashboard/users/${seg(u.id)}"><code>${u.id}</code></a></td><td>${u.phone}</td><td>${statusTag(u.kyc)}</td>
          <td>${u.verified ? "yes" : "no"}</td><td>${u.suspended ? statusTag("suspended") : "no"}</td><td>${time(u.created)}</td></tr>`,
        ),
        "No user matches.",
      )}
      ${nextPageLink("/dashboard/users", { phone: q.phone, kyc_status: q.kyc_status, verified: q.verified, suspended: q.suspended }, rows.at(-1)?.id, hasMore)}`)}`,
    );
  });

  /** A section's answer, or null when the method answers 404 (nothing of this kind yet). */
  async function orNone<T>(call: Promise<T>, noneCodes: readonly string[]): Promise<T | null> {
    try {
      return await call;
    } catch (error) {
      if (noneCodes.includes(describeError(error).code)) return null;
      throw error;
    }
  }

  const userSections: UserSection[] = [
    async (ctx, userId) => {
      const answer = await ctx.call(UsersService.method.listUserWallets, { userId, limit: 10 });
      return html`<h2>Wallets</h2>${table(
        "Wallets and their balances (USD)",
        ["Wallet", "Status", "Available", "Pending in", "Pending out", "Simulated", "Created"],
        answer.data.map((w) => {
          const j = walletJson(w);
          const b = walletBalanceJson(w.balance);
          return html`<tr class="wallet"><td><code>${w.id}</code></td><td>${statusTag(w.status)}</td>
          <td class="balance-available">${usd(b.available_usd)}</td><td class="balance-pending-in">${usd(b.pending_in_usd)}</td><td>${usd(b.pending_out_usd)}</td>
          <td>${w.simulated ? "yes" : "no"}</td><td>${time(j.created_at as string)}</td></tr>`;
        }),
        "No wallet yet.",
      )}`;
    },
    async (ctx, userId) => {
      const answer = await ctx.call(TransactionsService.method.listUserTransactions, { userId, limit: PAGE_SIZE });
      return html`<h2>Transactions</h2>${table(
        "Transactions, newest first (the last 25)",
        ["Transaction", "Type", "Status", "Amount (USD)", "Fee (USD)", "Fiat", "Created"],
        answer.data.map((t) => {
          const j = transactionJson(t);
          return html`<tr class="transaction" id="${j.id}" data-type="${j.type}"><td><a href="${transactionPath(j.id)}"><code>${j.id}</code></a></td><td>${j.type}</td>
          <td>${statusTag(j.status)}${j.failure_code ? html` ${j.failure_code}` : ""}</td><td>${usd(j.amount_usd)}</td><td>${usd(j.fee_usd)}</td>
          <td>${j.fiat_amount} ${j.fiat_currency}</td><td>${time(j.created_at)}</td></tr>`;
        }),
        "No transaction yet.",
      )}`;
    },
    async (ctx, userId) => {
      // The latest verification as GET /v1/users/{id}/phone_verification answers it; 404 when none was started.
      const answer = await orNone(ctx.call(PhoneVerificationService.method.getPhoneVerification, { userId }), [
        "no_pending_verification",
        "live_feature_unavailable",
      ]);
      if (!answer?.phoneVerification) return null;
      return html`<h2>Phone verification</h2>${jsonBlock("Phone verification", phoneVerificationJson(answer.phoneVerification))}`;
    },
    async (ctx, userId) => {
      const answer = await ctx.call(KycSessionsService.method.listUserKycSessions, { userId, limit: 10 });
      return html`<h2>KYC sessions</h2>${table(
        "KYC sessions, newest first",
        ["Session", "Status", "Last error", "Expires", "Created"],
        answer.data.map(
          (k) => html`<tr class="kyc-session"><td><a href="/dashboard/kyc/${seg(k.id)}"><code>${k.id}</code></a></td><td>${statusTag(k.status)}</td>
          <td>${k.lastError ? html`${k.lastError.code}${k.lastError.reason ? html`: ${k.lastError.reason}` : ""}` : ""}</td>
          <td>${time(date(k.expiresAt))}</td><td>${time(date(k.createdAt))}</td></tr>`,
        ),
        "No KYC session yet.",
      )}`;
    },
  ];

  router.page(P, "/users/:id", async (ctx) => {
    const scope = scopeOf(ctx);
    const id = ctx.params.id!;
    const answer = await ctx.call(UsersService.method.getUser, { id });
    const user = answer.user!;
    const sections = (await Promise.all(userSections.map((s) => s(ctx, id)))).filter((s) => s !== null);
    const rawProfile = profileJson(answer.profile);
    const profile = (rawProfile ?? {}) as Record<string, string | null | undefined>;
    const wallets = await ctx.call(UsersService.method.listUserWallets, { userId: id, limit: 1 });
    const balance = wallets.data[0] ? walletBalanceJson(wallets.data[0].balance) : null;
    const sandbox = !scope.livemode;
    return page(
      ctx.shell(`User ${id}`, "users"),
      html`<h1>User <code>${id}</code></h1>
      <dl class="facts user-facts">
        <dt>Phone</dt><dd>${user.phone}${user.verified ? html` ${statusTag("verified")}` : html` <span class="muted">not verified</span>`}</dd>
        <dt>KYC</dt><dd>${statusTag(user.kycStatus)}</dd>
        <dt>Suspended</dt><dd>${user.suspended ? statusTag("suspended") : "no"}</dd>
        <dt>Wallet</dt><dd>${statusTag(user.walletStatus || "none")}${
          balance ? html` · <span class="user-available">${usd(balance.available_usd)}</span> USD available` : ""
        }</dd>
        ${profile.email ? html`<dt>Email</dt><dd>${profile.email}</dd>` : ""}
        ${profile.first_name || profile.last_name ? html`<dt>Name</dt><dd>${[profile.first_name, profile.last_name].filter(Boolean).join(" ")}</dd>` : ""}
        <dt>Created</dt><dd>${time(date(user.createdAt))}</dd>
      </dl>
      ${sections}
      <details class="card"><summary>Raw JSON: user and profile</summary>${jsonBlock("User", userJson(user))}${jsonBlock("Profile", rawProfile)}</details>
      ${withdrawalForm(ctx, id)}
      ${
        sandbox
          ? html`<h2>Sandbox actions</h2><div class="actions">${
              user.suspended
                ? actionButton(ctx.csrf, `/dashboard/users/${seg(id)}/unsuspend`, "Unsuspend user")
                : actionButton(ctx.csrf, `/dashboard/users/${seg(id)}/suspend`, "Suspend user", { danger: true, confirm: "Suspend this user?" })
            }${actionButton(ctx.csrf, `/dashboard/users/${seg(id)}/kyc-sessions`, "Start a KYC session")}</div>
            ${depositForm(ctx, id)}`
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

  // ---- Sandbox: deposits and KYC sessions, through SandboxTransactionsService, KycSessionsService and SandboxService
  function depositForm(ctx: ConsoleContext, userId: string | null): Html {
    const action = userId ? `/dashboard/users/${seg(userId)}/deposits` : "/dashboard/sandbox/deposits";
    return html`<section class="card" aria-labelledby="deposit-title"><h2 id="deposit-title">Simulate a deposit</h2>
    <p class="muted">As <code>POST /v1/sandbox/users/{id}/deposits</code>: the user needs an approved KYC status and a ready wallet.</p>
    ${postForm(
      ctx.csrf,
      action,
      html`<div class="row">${
        userId ? "" : html`<div class="field"><label for="d-user">User id</label><input type="text" id="d-user" name="user_id" required></div>`
      }
      <div class="field"><label for="d-amount">Amount (USD)</label><input type="text" inputmode="decimal" id="d-amount" name="amount_usd" required value="100.00"></div>
      <div class="field"><label for="d-fee">Fee (USD)</label><input type="text" inputmode="decimal" id="d-fee" name="fee_usd" value="0"></div>
      <div class="field"><label for="d-currency">Fiat currency</label><input type="text" id="d-currency" name="fiat_currency" value="USD"></div>
      <div class="field"><label for="d-fiat">Fiat amount (other currencies)</label><input type="text" inputmode="decimal" id="d-fiat" name="fiat_amount"></div>
      <div class="field"><label for="d-after">Completes after (seconds, 0 to 3600)</label><input type="number" id="d-after" name="complete_after_seconds" min="0" max="3600" value="2"></div>
      <button type="submit">Simulate deposit</button></div>`,
      { label: "Simulate a deposit" },
    )}</section>`;
  }

  async function simulateDeposit(ctx: ConsoleContext, userId: string) {
    const amount = formDecimal(ctx, "amount_usd");
    if (amount === undefined) throw svcError("validation_error", "amount_usd is required.", { param: "amount_usd" });
    const fee = formDecimal(ctx, "fee_usd");
    const after = formDecimal(ctx, "complete_after_seconds", true);
    const currency = (ctx.form.get("fiat_currency") ?? "").trim();
    const fiatAmount = formDecimal(ctx, "fiat_amount");
    const answer = await ctx.call(SandboxTransactionsService.method.createSandboxDeposit, {
      userId,
      amountUsd: amount,
      ...(fee !== undefined ? { feeUsd: fee } : {}),
      ...(currency !== "" ? { fiatCurrency: currency } : {}),
      ...(fiatAmount !== undefined ? { fiatAmount } : {}),
      ...(after !== undefined ? { completeAfterSeconds: after } : {}),
    });
    const t = transactionJson(answer.transaction!);
    // The answer names the deposit (its row is the target): a second post of the form lands on the same one.
    return { redirect: `/dashboard/users/${seg(userId)}#${t.id}`, notice: `Deposit ${t.id} of ${usd(t.amount_usd)} USD created (${t.status}).` };
  }

  router.action(
    P,
    "/users/:id/deposits",
    (ctx) => `/dashboard/users/${seg(ctx.params.id!)}`,
    (ctx) => simulateDeposit(ctx, ctx.params.id!),
  );
  router.action(
    P,
    "/sandbox/deposits",
    () => "/dashboard/sandbox",
    (ctx) => simulateDeposit(ctx, (ctx.form.get("user_id") ?? "").trim()),
  );

  async function startKycSession(ctx: ConsoleContext, userId: string) {
    const answer = await ctx.call(KycSessionsService.method.createKycSession, { userId });
    const session = answer.kycSession!;
    return { redirect: `/dashboard/kyc/${seg(session.id)}`, notice: "KYC session created: the user's kyc_status is pending." };
  }
  router.action(
    P,
    "/users/:id/kyc-sessions",
    (ctx) => `/dashboard/users/${seg(ctx.params.id!)}`,
    (ctx) => startKycSession(ctx, ctx.params.id!),
  );
  router.action(
    P,
    "/sandbox/kyc-sessions",
    () => "/dashboard/sandbox",
    (ctx) => startKycSession(ctx, (ctx.form.get("user_id") ?? "").trim()),
  );

  /**
   * The simulated verification page a sandbox KYC session's `url` opens: the session, and what the end user
   * and the provider would do, as the sandbox methods do it.
   */
  router.page(P, "/kyc/:id", async (ctx) => {
    const answer = await ctx.call(KycSessionsService.method.getKycSession, { id: ctx.params.id! });
    const k: KycSession = answer.kycSession!;
    const base = `/dashboard/kyc/${seg(k.id)}`;
    const open = k.status === "requires_input" || k.status === "processing";
    return page(
      ctx.shell(`KYC session ${k.id}`, "users"),
      html`<h1>KYC session <code>${k.id}</code></h1>
      <p>${k.livemode ? "A live session: it is completed at the provider." : "The sandbox's simulated verification page."}</p>
      <dl class="facts card">
        <dt>Status</dt><dd class="kyc-status">${statusTag(k.status)}</dd>
        <dt>User</dt><dd><a href="/dashboard/users/${seg(k.userId)}"><code>${k.userId}</code></a></dd>
        <dt>Expires</dt><dd>${time(date(k.expiresAt))}</dd>
        ${k.lastError ? html`<dt>Last error</dt><dd>${k.lastError.code}${k.lastError.reason ? html`: ${k.lastError.reason}` : ""}</dd>` : ""}
        ${k.returnUrl ? html`<dt>Return URL</dt><dd>${k.returnUrl}</dd>` : ""}
      </dl>
      ${
        !k.livemode && open
          ? html`<div class="actions">
        ${k.status === "requires_input" ? actionButton(ctx.csrf, `${base}/submit`, "Submit (as the end user)") : ""}
        ${actionButton(ctx.csrf, `${base}/approve`, "Approve")}
      </div>
      ${postForm(
        ctx.csrf,
        `${base}/reject`,
        html`<div class="row"><div class="field"><label for="k-reason">Reason (optional)</label><input type="text" id="k-reason" name="reason"></div>
        <button type="submit" class="danger">Reject</button></div>`,
        { label: "Reject the KYC session" },
      )}`
          : ""
      }
      ${jsonBlock("KYC session JSON", kycSessionJson(k))}`,
    );
  });
  const kycBack = (ctx: ConsoleContext) => `/dashboard/kyc/${seg(ctx.params.id!)}`;
  router.action(P, "/kyc/:id/submit", kycBack, async (ctx) => {
    await ctx.call(SandboxService.method.submitKycSession, { id: ctx.params.id! });
    return { redirect: kycBack(ctx), notice: "KYC session submitted: processing." };
  });
  router.action(P, "/kyc/:id/approve", kycBack, async (ctx) => {
    await ctx.call(SandboxService.method.approveKycSession, { id: ctx.params.id! });
    return { redirect: kycBack(ctx), notice: "KYC session approved: the user's kyc_status is approved." };
  });
  router.action(P, "/kyc/:id/reject", kycBack, async (ctx) => {
    const reason = (ctx.form.get("reason") ?? "").trim();
    await ctx.call(SandboxService.method.rejectKycSession, { id: ctx.params.id!, ...(reason !== "" ? { reason } : {}) });
    return { redirect: kycBack(ctx), notice: "KYC session rejected: the user's kyc_status is rejected." };
  });

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
            html`<tr><td><a href="/dashboard/events/${seg(e.id)}"><code>${e.id}</code></a></td><td>${e.type}</td><td>${time(date(e.createdAt))}</td></tr>`,
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
      <p>${event.type} · ${time(date(event.createdAt))}</p>
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
      <td>${last ? html`${time(date(last.attemptedAt))} · ${last.responseStatus ?? "no answer"}${last.error ? html` · ${last.error}` : ""} · ${last.durationMs} ms` : "—"}</td>
      <td>${time(date(d.nextAttemptAt))}</td>
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

  // ---- Sandbox tools
  router.page(P, "/sandbox", async (ctx) => {
    const scope = scopeOf(ctx);
    if (scope.livemode) throw svcError("validation_error", SANDBOX_ONLY);
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
      ${depositForm(ctx, null)}
      <section class="card" aria-labelledby="kyc-title"><h2 id="kyc-title">Drive a KYC session</h2>
      <p class="muted">Creates a session (as <code>POST /v1/users/{id}/kyc-sessions</code>) and opens its simulated verification page, where it is submitted, approved or rejected.</p>
      ${postForm(
        ctx.csrf,
        "/dashboard/sandbox/kyc-sessions",
        html`<div class="row"><div class="field"><label for="k-user">User id</label><input type="text" id="k-user" name="user_id" required></div><button type="submit">Start a KYC session</button></div>`,
        { label: "Start a KYC session" },
      )}</section>`,
    );
  });
  router.action(
    P,
    "/sandbox/suspend",
    () => "/dashboard/sandbox",
    async (ctx) => {
      const scope = scopeOf(ctx);
      if (scope.livemode) throw svcError("validation_error", SANDBOX_ONLY);
      const userId = ctx.form.get("user_id") ?? "";
      await ctx.call(AdminService.method.suspendUser, { projectId: scope.projectId, livemode: false, userId });
      return { redirect: `/dashboard/users/${seg(userId)}`, notice: "User suspended." };
    },
  );
}
