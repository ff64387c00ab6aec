// The project console's KYC sessions: starting one (from a user's page or the sandbox tools) and the page a
// sandbox session's `url` opens, the simulated verification page, with what the end user and the provider would do.
import { KycSessionsService, SandboxService, type KycSession } from "../../gen/svc/v1/identity_pb.ts";
import { kycSessionJson } from "../representations/kyc-sessions.ts";
import { seg, type ConsoleContext, type ConsoleRouter } from "./console-router.ts";
import { html } from "./html.ts";
import { actionButton, jsonBlock, page, postForm, statusTag, time } from "./layout.ts";
import { dateOf, userAction } from "./project-console-common.ts";

async function startKycSession(ctx: ConsoleContext, userId: string) {
  const answer = await ctx.call(KycSessionsService.method.createKycSession, { userId });
  const session = answer.kycSession!;
  return { redirect: `/dashboard/kyc/${seg(session.id)}`, notice: "KYC session created: the user's kyc_status is pending." };
}

export function registerKycConsole(router: ConsoleRouter): void {
  const P = "project" as const;

  userAction(router, "kyc-sessions", startKycSession);

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
        <dt>Expires</dt><dd>${time(dateOf(k.expiresAt))}</dd>
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
}
