// The simulated SMS provider's outbox in the project console: the messages it sent to this project's users in
// this environment, newest first, so a live user can be verified on a development machine without a phone. Only
// the simulated provider has an outbox; with a real one the page says so and shows nothing.
import { seg, type ConsoleRouter } from "./console-router.ts";
import { html } from "./html.ts";
import { page, table, time } from "./layout.ts";
import { scopeOf } from "./project-console-common.ts";

/** Messages shown at most, newest first. */
const SHOWN = 50;

export function registerSmsOutbox(router: ConsoleRouter): void {
  const { queries, smsOutbox } = router.options;
  router.page("project", "/sms", async (ctx) => {
    const scope = scopeOf(ctx);
    if (!smsOutbox) {
      return page(
        ctx.shell("SMS outbox", "sms"),
        html`<h1>SMS outbox</h1><p>The SMS provider of this deployment is a real one: what it sends is not shown here.</p>`,
      );
    }
    const recent = smsOutbox().slice(-SHOWN * 4);
    const owners = await queries.usersByPhone(
      scope,
      recent.map((m) => m.to),
    );
    const mine = recent
      .filter((m) => owners.has(m.to))
      .slice(-SHOWN)
      .reverse();
    return page(
      ctx.shell("SMS outbox", "sms"),
      html`<h1>SMS outbox <span class="badge badge-sandbox">Simulated provider</span></h1>
      <p class="muted">The simulated SMS provider sends nothing: these are the messages it would have sent to this project's
      users in this environment (the latest ${SHOWN}, kept in this process's memory only), so phone verification can be
      finished on a development machine, live mode included.</p>
      ${table(
        "Messages, newest first",
        ["Sent", "To", "User", "Message"],
        mine.map(
          (m) => html`<tr class="sms"><td>${time(m.sentAt)}</td><td>${m.to}</td>
          <td><a href="/dashboard/users/${seg(owners.get(m.to)!)}"><code>${owners.get(m.to)!}</code></a></td><td class="sms-body">${m.body}</td></tr>`,
        ),
        "No message sent to this project's users yet.",
      )}`,
    );
  });
}
