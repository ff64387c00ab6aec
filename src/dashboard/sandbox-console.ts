// The project console's sandbox tools: suspend a user, simulate a deposit (also from a user's page), and the
// entry to a KYC session (its actions are the KYC section's). Sandbox sessions only.
import { AdminService } from "../../gen/svc/admin/v1/admin_pb.ts";
import { SandboxTransactionsService } from "../../gen/svc/v1/transactions_pb.ts";
import { svcError } from "../domain/errors.ts";
import { transactionJson } from "../representations/transactions.ts";
import { seg, type ConsoleContext, type ConsoleRouter } from "./console-router.ts";
import { formDecimal, usd } from "./form-fields.ts";
import { html, type Html } from "./html.ts";
import { page, postForm } from "./layout.ts";
import { scopeOf, userAction } from "./project-console-common.ts";

const SANDBOX_ONLY = "Sandbox tools exist in the sandbox environment only.";

/** The form that simulates a deposit: for the user whose page it is on, or (null) for a user id typed in. */
export function depositForm(ctx: ConsoleContext, userId: string | null): Html {
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

export function registerSandboxConsole(router: ConsoleRouter): void {
  const P = "project" as const;

  userAction(router, "deposits", simulateDeposit);

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
