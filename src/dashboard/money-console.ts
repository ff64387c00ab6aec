// The project console's money pages: a transaction with its timeline (created, each state its events report, where
// each event was delivered) and its moves (cancel a pending withdrawal; in the sandbox, complete or fail one), and
// the withdrawal form of a user's page. Every action is the API's method through the call pipeline.
import { timestampDate } from "@bufbuild/protobuf/wkt";
import { SandboxTransactionsService, TransactionsService, type Transaction } from "../../gen/svc/v1/transactions_pb.ts";
import { svcError } from "../domain/errors.ts";
import { transactionJson } from "../representations/transactions.ts";
import type { EventDocument } from "../store/event-repository.ts";
import type { WebhookDeliveryDocument } from "../store/webhook-delivery-repository.ts";
import { seg, type ConsoleContext, type ConsoleRouter } from "./console-router.ts";
import { html, type Html } from "./html.ts";
import { actionButton, jsonBlock, page, postForm, statusTag, time } from "./layout.ts";
import { formDecimal, formText, usd } from "./form-fields.ts";
import { scopeOf } from "./project-console-common.ts";

/** Where a transaction's page is. */
export function transactionPath(id: string): string {
  return `/dashboard/transactions/${seg(id)}`;
}

/** A user page's form that makes a withdrawal (sandbox and live alike: it is the API's own route). */
export function withdrawalForm(ctx: ConsoleContext, userId: string): Html {
  return html`<section class="card" aria-labelledby="withdraw-title"><h2 id="withdraw-title">Make a withdrawal</h2>
    <p class="muted">As <code>POST /v1/users/{id}/withdrawals</code>: holds the amount and the project's fee until it settles.${
      ctx.scope?.livemode ? "" : " In the sandbox it settles by itself after 2 s (13.13 fails)."
    }</p>
    ${postForm(
      ctx.csrf,
      `/dashboard/users/${seg(userId)}/withdrawals`,
      html`<div class="row">
      <div class="field"><label for="w-amount">Amount (USD)</label><input type="text" inputmode="decimal" id="w-amount" name="amount_usd" required></div>
      <div class="field"><label for="w-currency">Fiat currency</label><input type="text" id="w-currency" name="fiat_currency" value="USD"></div>
      <div class="field"><label for="w-description">Description</label><input type="text" id="w-description" name="description"></div>
      <button type="submit">Withdraw</button></div>`,
      { label: "Make a withdrawal" },
    )}</section>`;
}

/** One step of a transaction's timeline. */
interface TimelineStep {
  at: Date;
  what: Html;
  deliveries: WebhookDeliveryDocument[];
}

function timelineOf(transaction: Transaction, events: EventDocument[], deliveriesByEvent: Map<string, WebhookDeliveryDocument[]>): TimelineStep[] {
  const created = transaction.createdAt ? timestampDate(transaction.createdAt) : new Date(0);
  const steps: TimelineStep[] = [{ at: created, what: html`Created ${statusTag("pending")}`, deliveries: [] }];
  for (const event of events) {
    const status = (event.data as { object?: { status?: string } }).object?.status;
    steps.push({
      at: event.created_at,
      what: html`<a href="/dashboard/events/${seg(event._id)}"><code>${event.type}</code></a>${status ? html` ${statusTag(status)}` : ""}`,
      deliveries: deliveriesByEvent.get(event._id) ?? [],
    });
  }
  const json = transactionJson(transaction);
  const last = steps.at(-1)!;
  // A state no event reports (a deposit that failed, a canceled withdrawal): its time is the transaction's last change.
  if (json.status !== "pending" && !events.some((e) => (e.data as { object?: { status?: string } }).object?.status === json.status)) {
    const at = transaction.updatedAt ? timestampDate(transaction.updatedAt) : last.at;
    steps.push({ at, what: html`${statusTag(json.status)}${json.failure_code ? html` ${json.failure_code}` : ""} (no event)`, deliveries: [] });
  }
  return steps.sort((a, b) => a.at.getTime() - b.at.getTime());
}

export function registerMoneyConsole(router: ConsoleRouter): void {
  const { queries } = router.options;
  const P = "project" as const;

  router.page(P, "/transactions/:id", async (ctx) => {
    const scope = scopeOf(ctx);
    const answer = await ctx.call(TransactionsService.method.getTransaction, { id: ctx.params.id! });
    const transaction = answer.transaction!;
    const json = transactionJson(transaction);
    const events = await queries.eventsAbout(scope, transaction.id);
    const deliveries = await Promise.all(events.map(async (e) => [e._id, await queries.deliveriesOfEvent(scope, e._id)] as const));
    const steps = timelineOf(transaction, events, new Map(deliveries));
    const base = transactionPath(transaction.id);
    const open = json.status === "pending" || json.status === "processing";
    return page(
      ctx.shell(`Transaction ${transaction.id}`, "users"),
      html`<h1>Transaction <code>${transaction.id}</code></h1>
      <dl class="facts">
        <dt>Type</dt><dd>${json.type} (${json.direction})</dd>
        <dt>Status</dt><dd class="transaction-status">${statusTag(json.status)}${json.failure_code ? html` ${json.failure_code}: ${json.failure_message ?? ""}` : ""}</dd>
        <dt>Amount</dt><dd>${usd(json.amount_usd)} USD (fee ${usd(json.fee_usd)}) · ${json.fiat_amount} ${json.fiat_currency}</dd>
        <dt>User</dt><dd><a href="/dashboard/users/${seg(json.user_id)}"><code>${json.user_id}</code></a> · wallet <code>${json.wallet_id}</code></dd>
        ${json.description ? html`<dt>Description</dt><dd>${json.description}</dd>` : ""}
      </dl>
      <h2>Timeline</h2>
      <ol class="timeline">${steps.map(
        (step) =>
          html`<li class="timeline-step"><span class="timeline-time">${time(step.at)}</span> ${step.what}${
            step.deliveries.length > 0
              ? html`<ul>${step.deliveries.map(
                  (d) =>
                    html`<li>delivered to <a href="/dashboard/webhooks/${seg(d.endpoint_id)}"><code>${d.endpoint_id}</code></a>: ${statusTag(d.status)}, ${d.attempt_count} attempt${d.attempt_count === 1 ? "" : "s"}</li>`,
                )}</ul>`
              : ""
          }</li>`,
      )}</ol>
      ${
        json.status === "pending" && json.type === "withdrawal"
          ? html`<h2>Actions</h2><div class="actions">${actionButton(ctx.csrf, `${base}/cancel`, "Cancel withdrawal", { caution: true, confirm: "Cancel this withdrawal?" })}</div>`
          : ""
      }
      ${
        open && !scope.livemode
          ? html`<h2>Sandbox actions <span class="badge badge-sandbox">Sandbox</span></h2>
          <p class="muted">As <code>POST /v1/sandbox/transactions/{id}/complete</code> and <code>/fail</code>: settle it now, as the provider would.</p>
          <div class="actions">${actionButton(ctx.csrf, `${base}/complete`, "Complete (sandbox)")}</div>
          ${postForm(
            ctx.csrf,
            `${base}/fail`,
            html`<div class="row"><div class="field"><label for="t-failure">Failure code</label><input type="text" id="t-failure" name="failure_code" placeholder="simulated_failure"></div>
            <button type="submit" class="danger">Fail (sandbox)</button></div>`,
            { label: "Fail the transaction" },
          )}`
          : ""
      }
      <details><summary>Raw JSON</summary>${jsonBlock("Transaction JSON", json)}</details>`,
    );
  });

  const back = (ctx: ConsoleContext) => transactionPath(ctx.params.id!);
  router.action(P, "/transactions/:id/cancel", back, async (ctx) => {
    const answer = await ctx.call(TransactionsService.method.cancelTransaction, { id: ctx.params.id! });
    return { redirect: back(ctx), notice: `Withdrawal ${answer.transaction!.id} canceled.` };
  });
  router.action(P, "/transactions/:id/complete", back, async (ctx) => {
    const answer = await ctx.call(SandboxTransactionsService.method.completeSandboxTransaction, { id: ctx.params.id! });
    return { redirect: back(ctx), notice: `Transaction ${answer.transaction!.id} completed.` };
  });
  router.action(P, "/transactions/:id/fail", back, async (ctx) => {
    const failureCode = formText(ctx, "failure_code");
    const answer = await ctx.call(SandboxTransactionsService.method.failSandboxTransaction, {
      id: ctx.params.id!,
      ...(failureCode ? { failureCode } : {}),
    });
    return { redirect: back(ctx), notice: `Transaction ${answer.transaction!.id} failed.` };
  });

  router.action(
    P,
    "/users/:id/withdrawals",
    (ctx) => `/dashboard/users/${seg(ctx.params.id!)}`,
    async (ctx) => {
      const amount = formDecimal(ctx, "amount_usd");
      if (amount === undefined) throw svcError("validation_error", "amount_usd is required.", { param: "amount_usd" });
      const currency = formText(ctx, "fiat_currency");
      const description = formText(ctx, "description");
      const answer = await ctx.call(TransactionsService.method.createWithdrawal, {
        userId: ctx.params.id!,
        amountUsd: amount,
        ...(currency ? { fiatCurrency: currency } : {}),
        ...(description ? { description } : {}),
      });
      const t = transactionJson(answer.transaction!);
      return { redirect: transactionPath(t.id), notice: `Withdrawal ${t.id} of ${usd(t.amount_usd)} USD created (${t.status}).` };
    },
  );
}
