// The project console's overview: the environment's money, counts, recent activity and failing endpoints, read by
// the console's read-only queries (no public method answers these sums).
import { dollars } from "../domain/money.ts";
import { COUNT_CAP } from "../store/console-queries.ts";
import { seg, type ConsoleRouter } from "./console-router.ts";
import { deliveryPath } from "./delivery-console.ts";
import { usd } from "./form-fields.ts";
import { html } from "./html.ts";
import { page, statusTag, table, time } from "./layout.ts";
import { transactionPath } from "./money-console.ts";
import { scopeOf } from "./project-console-common.ts";

function countText(n: number): string {
  return n >= COUNT_CAP ? `${COUNT_CAP.toLocaleString("en-US")}+` : n.toLocaleString("en-US");
}

export function registerOverview(router: ConsoleRouter): void {
  const { queries } = router.options;
  router.page("project", "/", async (ctx) => {
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
}
