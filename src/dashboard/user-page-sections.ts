// The sections of a user's page below who the user is, in order: wallets, transactions, the latest phone
// verification, KYC sessions. Each reads its own public method, as the API answers it.
import { PhoneVerificationService, KycSessionsService } from "../../gen/svc/v1/identity_pb.ts";
import { TransactionsService } from "../../gen/svc/v1/transactions_pb.ts";
import { UsersService } from "../../gen/svc/v1/users_pb.ts";
import { describeError } from "../domain/errors.ts";
import { phoneVerificationJson } from "../representations/phone-verifications.ts";
import { transactionJson } from "../representations/transactions.ts";
import { walletBalanceJson, walletJson } from "../representations/wallets.ts";
import { seg, type ConsoleContext } from "./console-router.ts";
import { usd } from "./form-fields.ts";
import { html, type Html } from "./html.ts";
import { jsonBlock, statusTag, table, time } from "./layout.ts";
import { transactionPath } from "./money-console.ts";
import { dateOf, PAGE_SIZE } from "./project-console-common.ts";

/** One section of the user page: its markup, or null when the user has nothing of its kind. */
type UserSection = (ctx: ConsoleContext, userId: string) => Promise<Html | null>;

/** A section's answer, or null when the method answers 404 (nothing of this kind yet). */
async function orNone<T>(call: Promise<T>, noneCodes: readonly string[]): Promise<T | null> {
  try {
    return await call;
  } catch (error) {
    if (noneCodes.includes(describeError(error).code)) return null;
    throw error;
  }
}

export const USER_SECTIONS: UserSection[] = [
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
          <td>${time(dateOf(k.expiresAt))}</td><td>${time(dateOf(k.createdAt))}</td></tr>`,
      ),
      "No KYC session yet.",
    )}`;
  },
];
