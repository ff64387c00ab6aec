// The page shell shared by both consoles, and the small pieces every page uses (forms with their CSRF field,
// tables, times, notices). Markup only through `html`, so everything interpolated is escaped.
import { randomBytes } from "node:crypto";
import { html, type Html } from "./html.ts";

export interface Flash {
  kind: "success" | "error";
  text: string;
}

export interface Shell {
  title: string;
  /** Absent on the sign-in page. */
  /** `smsOutbox`: the simulated SMS provider's outbox exists (its page is in the navigation). */
  console?: { kind: "project"; projectId: string; projectName: string; livemode: boolean; smsOutbox: boolean } | { kind: "operator" };
  csrf?: string;
  flash?: Flash | null;
  /** Which navigation entry is current. */
  section?: string;
}

const PROJECT_NAV = [
  ["overview", "/dashboard", "Overview"],
  ["users", "/dashboard/users", "Users"],
  ["events", "/dashboard/events", "Events"],
  ["live", "/dashboard/live-events", "Live events"],
  ["webhooks", "/dashboard/webhooks", "Webhooks"],
  ["logs", "/dashboard/logs", "Logs"],
  ["sandbox", "/dashboard/sandbox", "Sandbox tools"],
  ["sms", "/dashboard/sms", "SMS outbox"],
] as const;

function navigation(shell: Shell): Html {
  const console = shell.console;
  if (!console) return html``;
  const entries =
    console.kind === "operator"
      ? [["organizations", "/dashboard/operator", "Organizations"] as const]
      : PROJECT_NAV.filter(([name]) => (name !== "sandbox" || !console.livemode) && (name !== "sms" || console.smsOutbox));
  const badge =
    console.kind === "operator"
      ? html`<span class="badge badge-operator">Operator</span>`
      : html`<span class="badge ${console.livemode ? "badge-live" : "badge-sandbox"}">${console.livemode ? "Live" : "Sandbox"}</span>
          <span class="project-name" title="project ${console.projectId}">${console.projectName}</span>`;
  return html`<header class="top">
    <div class="brand"><a href="${console.kind === "operator" ? "/dashboard/operator" : "/dashboard"}">Svc</a> ${badge}</div>
    <nav aria-label="Console">
      <ul>${entries.map(([name, href, label]) => html`<li><a href="${href}"${name === shell.section ? html` aria-current="page"` : ""}>${label}</a></li>`)}</ul>
    </nav>
    <form method="post" action="/dashboard/sign-out" class="sign-out">${csrfField(shell.csrf ?? "")}<button type="submit" class="link">Sign out</button></form>
  </header>`;
}

export function page(shell: Shell, body: Html): string {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${shell.title} · Svc dashboard</title>
<link rel="stylesheet" href="/dashboard/assets/dashboard.css">
<link rel="icon" href="/dashboard/assets/favicon.svg" type="image/svg+xml">
<script src="/dashboard/assets/dashboard.js" defer></script>
</head>
<body>
${navigation(shell)}
<main id="main">
${shell.flash ? html`<div class="flash flash-${shell.flash.kind}" role="${shell.flash.kind === "error" ? "alert" : "status"}">${shell.flash.text}</div>` : ""}
${body}
</main>
</body>
</html>`.markup;
}

export function csrfField(token: string): Html {
  return html`<input type="hidden" name="_csrf" value="${token}">`;
}

/** The form field carrying the Idempotency-Key of a console form's change. */
export const FORM_KEY_FIELD = "_idempotency_key";

/**
 * A form posting to `action` with the session's CSRF token and an Idempotency-Key drawn as the form is rendered:
 * posting the same form again (a double click, back and resubmit, a browser's retry) replays the first result,
 * while a freshly loaded form is a new request. `confirm` asks first (dashboard.js).
 */
export function postForm(csrf: string, action: string, content: Html, options: { confirm?: string; className?: string; label?: string } = {}): Html {
  return html`<form method="post" action="${action}"${options.className ? html` class="${options.className}"` : ""}${
    options.confirm ? html` data-confirm="${options.confirm}"` : ""
  }${options.label ? html` aria-label="${options.label}"` : ""}>${csrfField(csrf)}<input type="hidden" name="${FORM_KEY_FIELD}" value="form_${randomBytes(18).toString("base64url")}">${content}</form>`;
}

/**
 * One button that posts. `danger`: an action that cannot be undone or that hits a user (delete, reject, suspend);
 * `caution`: one that stops something and can be undone (disable an endpoint).
 */
export function actionButton(
  csrf: string,
  action: string,
  label: string,
  options: { confirm?: string; danger?: boolean; caution?: boolean } = {},
): Html {
  const tone = options.danger ? html` class="danger"` : options.caution ? html` class="caution"` : "";
  return postForm(csrf, action, html`<button type="submit"${tone}>${label}</button>`, {
    className: "inline",
    ...(options.confirm ? { confirm: options.confirm } : {}),
  });
}

export function time(value: Date | string | null | undefined): Html {
  if (value === null || value === undefined) return html`<span class="muted">—</span>`;
  const iso = typeof value === "string" ? value : value.toISOString();
  return html`<time datetime="${iso}">${iso.replace("T", " ").replace(/\.\d+Z$/, "Z")}</time>`;
}

export function table(caption: string, headers: readonly string[], rows: readonly Html[], empty = "Nothing yet."): Html {
  if (rows.length === 0) return html`<p class="empty">${empty}</p>`;
  return html`<div class="table-wrap"><table>
    <caption>${caption}</caption>
    <thead><tr>${headers.map((h) => html`<th scope="col">${h}</th>`)}</tr></thead>
    <tbody>${rows}</tbody>
  </table></div>`;
}

export function statusTag(status: string): Html {
  return html`<span class="tag tag-${status.replace(/[^a-z_]/g, "")}">${status}</span>`;
}

export function jsonBlock(label: string, value: unknown): Html {
  return html`<pre class="json" tabindex="0" aria-label="${label}">${JSON.stringify(value, null, 2)}</pre>`;
}

/**
 * The part of a list page its filters change (the list, its pager, status links): the script swaps it for the
 * same part of the filtered page instead of loading the whole page.
 */
export function filteredResults(content: Html): Html {
  return html`<div id="results" data-results tabindex="-1">${content}</div>`;
}

/** A link to the next page of a newest-first list, keeping the filters. */
export function nextPageLink(base: string, query: Record<string, string | undefined>, lastId: string | undefined, hasMore: boolean): Html {
  if (!hasMore || !lastId) return html``;
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) if (value) params.set(name, value);
  params.set("starting_after", lastId);
  return html`<p class="pager"><a href="${`${base}?${params}`}">Older →</a></p>`;
}

/** A shown-once secret with a copy button. */
export function secretOnce(id: string, label: string, secret: string): Html {
  return html`<section class="secret" aria-labelledby="${id}-title">
    <h2 id="${id}-title">${label}</h2>
    <p>Copy it now: it is shown this once and never again.</p>
    <p><code id="${id}" class="secret-value">${secret}</code> <button type="button" data-copy="${id}">Copy</button></p>
  </section>`;
}
