// The project console's users: the filtered list, a user's page (who the user is, then its sections, the
// withdrawal form and, in the sandbox, its tools), and the sandbox's suspend / unsuspend.
import { AdminService } from "../../gen/svc/admin/v1/admin_pb.ts";
import { UsersService } from "../../gen/svc/v1/users_pb.ts";
import { svcError } from "../domain/errors.ts";
import { walletBalanceJson } from "../representations/wallets.ts";
import { profileJson, userJson } from "../representations/users.ts";
import { seg, type ConsoleRouter } from "./console-router.ts";
import { usd } from "./form-fields.ts";
import { html } from "./html.ts";
import { actionButton, filteredResults, jsonBlock, nextPageLink, page, statusTag, table, time } from "./layout.ts";
import { withdrawalForm } from "./money-console.ts";
import { dateOf, PAGE_SIZE, scopeOf } from "./project-console-common.ts";
import { depositForm } from "./sandbox-console.ts";
import { USER_SECTIONS } from "./user-page-sections.ts";

export function registerUsersConsole(router: ConsoleRouter): void {
  const P = "project" as const;

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
      created: dateOf(u.createdAt),
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

  router.page(P, "/users/:id", async (ctx) => {
    const scope = scopeOf(ctx);
    const id = ctx.params.id!;
    const answer = await ctx.call(UsersService.method.getUser, { id });
    const user = answer.user!;
    const sections = (await Promise.all(USER_SECTIONS.map((s) => s(ctx, id)))).filter((s) => s !== null);
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
        <dt>Created</dt><dd>${time(dateOf(user.createdAt))}</dd>
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
}
